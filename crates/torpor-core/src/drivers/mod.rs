//! The drivers: what runs a model for a command, reading inputs and handing results to the
//! report (the top of the core; nothing below imports it).
//! - [`idle_decide`]: `torpor idle decide`, a governor alone fed an idle-decide/1 sequence,
//!   step by step (the contract governors are checked by).
//! - [`idle_replay`]: `torpor idle replay`, a trace's idle periods rebuilt and replayed through
//!   governors.

pub mod idle_decide;
pub mod idle_replay;
