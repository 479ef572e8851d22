//! torpor-policy: what the kernel decides. Each module re-implements one Linux policy from the
//! kernel sources it names (the version it follows and the algorithm in numbered steps open each
//! file), as a pure function of what the kernel would see: a state table, a device's counters,
//! the requests on a PM QoS list, the time.
//!
//! The crate sits between the engine (`torpor-sim`: time, the timer wheel's rounding, random
//! streams) and the models that call it (`torpor-core`'s CPUs and drives). The compiler keeps it
//! there: a policy cannot import a hardware model, a parser, the world or a view.

pub mod apst;
pub mod blk_freq_boost;
pub mod cpufreq;
pub mod cpuidle;
pub mod devfreq;
pub mod hpb;
pub mod pelt;
pub mod qos;
pub mod ufshcd;
pub mod variant_names;

/// The engine's primitives the policies use, under the names torpor-core gives them.
pub(crate) use torpor_sim as sim;
pub(crate) use torpor_sim::time;
