//! The simulated CPUs: the platform (clusters, idle states, capacities, power), and what runs on
//! them. The governors that choose idle states live in [`crate::cpuidle`] (the policy crate).

pub mod freq_domain;
pub mod platform;
pub mod system;
pub mod task;
pub mod uclamp;
pub mod wake_path;

pub use platform::{
    ClusterSpec, CpuPlatform, CpufreqSpec, Fault, IdleStateSpec, LatencyNs, Opp, PowerMw,
    StateLevel, MAX_CPUS,
};
