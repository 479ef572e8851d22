//! torpor-core: the simulation core of torpor.
//!
//! Linux's latency-versus-power policies re-implemented from the kernel sources, run on
//! simulated hardware and workloads. Pure Rust; the Python front end binds to it through
//! `torpor-py` and holds no simulation logic. See DESIGN.md for the map.

pub mod cpu;
pub mod cpufreq;
pub mod cpuidle;
pub mod drivers;
pub mod error;
pub mod input;
pub mod metrics;
pub mod output_file;
pub mod pstates;
pub mod qos;
pub mod report;
pub mod scenario;
pub mod storage;
pub mod trace;
pub mod user_file;
pub mod variant_names;
pub mod view;
pub mod workload;
pub mod world;

/// The engine (its own crate, below every other part): `sim` for the queue, timers and
/// random streams, `time` for [`Nanos`].
pub use torpor_sim as sim;
pub use torpor_sim::time;

pub use error::InputError;
pub use time::Nanos;
