//! NVMe: the drive's autonomous power-state machine and its service times. The kernel's side
//! (power-state descriptors, the APST table builders, latency tolerance) is the policy crate's
//! [`crate::apst`]: `device.rs` executes a table and knows nothing about where it came from.

pub mod device;
pub mod idle_schedule;
pub mod service;
