//! NVMe: power-state descriptors, the kernel's APST table builders, and the drive's autonomous
//! power-state machine. Each file is one mechanism: `apst.rs` builds tables and nothing else;
//! `device.rs` executes a table and knows nothing about where it came from.

pub mod apst;
pub mod device;
pub mod idle_schedule;
pub mod psd;
pub mod service;
pub mod tolerance;
