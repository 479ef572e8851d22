//! UFS storage: the device the host's clock scaling scales (the policies, devfreq and ufshcd's
//! scaling, are [`crate::devfreq`] and [`crate::ufshcd`]): its service time per host level (`service.rs`),
//! its power per level and idle state (`power.rs`), both on the engine (`device.rs`), with the
//! host's ties to the CPUs of a run (`cpu_link.rs`: the deferrable monitor's CPU, ufshcd's CPU
//! latency request); and the device's own flash map cache and NAND timing (`ftl/`), and HPB
//! between host and device (`hpb_exchange.rs`, driving the host's HPB driver, [`crate::hpb`]).

pub mod cpu_link;
pub mod device;
pub mod ftl;
pub mod hpb_exchange;
pub mod power;
pub mod service;

#[cfg(test)]
mod hpb_on_device_tests;
