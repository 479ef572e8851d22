//! Storage devices: the NVMe drive and the UFS device on the engine, and the block IO they serve
//! (the kernel policies that drive their power management are the policy crate's).

pub mod io;
pub mod nvme;
pub mod ufs;
