//! What a run measures: latency distributions, energy per component and state, counters.
//! Metrics only accumulate; formatting them is the front end's job.

mod energy;
mod histogram;
mod timeline;

pub use energy::{EnergyMeter, StateEnergy};
pub use histogram::{LatencyHistogram, LatencySummary};
pub use timeline::Timeline;
