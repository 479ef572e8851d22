//! `powersave`: the cpufreq governor that holds the policy at its floor (Linux v6.12
//! drivers/cpufreq/cpufreq_powersave.c; unchanged in behaviour since v2.6).
//!
//! 1. It has no state and no utilization hook: only the core's `limits` call, made when the
//!    governor starts and whenever the limits change.
//! 2. `limits` asks the driver for `policy->min` with `CPUFREQ_RELATION_L` (the lowest table
//!    frequency at or above it, which the floor already is); the driver skips the request when
//!    the policy already runs there.

use super::policy::{CpufreqPolicy, FreqChange, Relation};

/// `cpufreq_gov_powersave_limits`.
pub fn limits(policy: &mut CpufreqPolicy) -> Option<FreqChange> {
    policy.driver_target(policy.min_khz(), Relation::L)
}
