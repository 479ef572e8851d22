//! UFS storage: the host's clock scaling through devfreq (the device model and the block
//! layer's frequency QoS boost build on it).

pub mod clk_scaling;
pub mod devfreq;
pub mod scaling;
