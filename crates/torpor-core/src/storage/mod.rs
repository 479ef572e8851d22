//! Storage devices and the kernel policies that drive their power management.

pub mod io;
pub mod nvme;
pub mod ufs;
