//! UFS storage: the host's clock scaling through devfreq (`devfreq.rs`, `clk_scaling.rs`,
//! `scaling.rs`), and the device it scales: its service time per host level (`service.rs`) and
//! its power per level and idle state (`power.rs`).

pub mod clk_scaling;
pub mod devfreq;
pub mod device;
pub mod hpb;
pub mod power;
pub mod scaling;
pub mod service;
