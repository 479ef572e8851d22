//! UFS storage: the host's clock scaling through devfreq (`devfreq.rs`, `clk_scaling.rs`,
//! `scaling.rs`), and the device it scales: its service time per host level (`service.rs`),
//! its power per level and idle state (`power.rs`), both on the engine (`device.rs`), with the
//! host's ties to the CPUs of a run (`cpu_link.rs`: the deferrable monitor's CPU, ufshcd's CPU
//! latency request); and the device's own flash map cache and NAND timing (`ftl/`) and the
//! host's HPB driver (`hpb/`), not yet on the engine.

pub mod clk_scaling;
pub mod cpu_link;
pub mod devfreq;
pub mod device;
pub mod ftl;
pub mod hpb;
pub mod hpb_exchange;
pub mod power;
pub mod scaling;
pub mod service;

#[cfg(test)]
mod hpb_on_device_tests;
