//! The drivers: what runs a model for a command, reading inputs and handing results to the
//! report (the top of the core; nothing below imports it).
//! - [`run`]: `torpor run`, a scenario's variants built, run and reported; the work limit and
//!   the progress watcher.
//! - [`sweep_file`]: a sweep file read and checked whole before any point runs.
//! - [`bench`](mod@bench): `torpor bench`, the core's speed on fixed workloads.
//! - [`idle_decide`]: `torpor idle decide`, a governor alone fed an idle-decide/1 sequence,
//!   step by step (the contract governors are checked by).
//! - [`idle_replay`]: `torpor idle replay`, a trace's idle periods rebuilt and replayed through
//!   governors.
//! - [`idle_stats`]: `torpor idle stats`, idlestat's report from a parsed trace.

pub mod bench;
pub mod idle_decide;
pub mod idle_replay;
pub mod idle_stats;
pub mod run;
pub mod sweep_file;
