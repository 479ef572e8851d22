//! torpor-core: the simulation core of torpor.
//!
//! Linux's latency-versus-power policies re-implemented from the kernel sources, run on
//! simulated hardware and workloads. Pure Rust; the Python front end binds to it through
//! `torpor-py` and holds no simulation logic. See DESIGN.md for the map.

pub mod cpu;
pub mod drivers;
pub mod error;
pub mod experiments;
pub mod input;
pub mod metrics;
pub mod output_file;
pub mod pstates;
pub mod report;
pub mod scenario;
pub mod storage;
pub mod trace;
pub mod user_file;
pub mod view;
pub mod workload;
pub mod world;

/// The engine (its own crate, below every other part): `sim` for the queue, timers and
/// random streams, `time` for [`Nanos`].
pub use torpor_sim as sim;
pub use torpor_sim::time;

/// The policies (their own crate, between the engine and the models): what the kernel decides.
pub use torpor_policy::{
    apst, blk_freq_boost, cpufreq, cpuidle, devfreq, hpb, pelt, qos, ufshcd, variant_names,
};

pub use error::InputError;
pub use time::Nanos;
