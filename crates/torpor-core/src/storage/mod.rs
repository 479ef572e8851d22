//! Storage devices and the kernel policies that drive their power management.

pub mod blk_freq_boost;
pub mod io;
pub mod nvme;
pub mod ufs;
