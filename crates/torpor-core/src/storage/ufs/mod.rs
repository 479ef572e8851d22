//! UFS storage: the host's clock scaling through devfreq, and the device it scales: its
//! service time per host level (`service.rs`) and its power per level and idle state
//! (`power.rs`). The block layer's frequency QoS boost builds on them.

pub mod devfreq;
pub mod power;
pub mod service;
