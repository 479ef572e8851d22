//! `performance`: the cpufreq governor that holds the policy at its cap (Linux v6.12
//! drivers/cpufreq/cpufreq_performance.c; unchanged in behaviour since v2.6).
//!
//! 1. It has no state and no utilization hook: only the core's `limits` call, made when the
//!    governor starts and whenever the limits change.
//! 2. `limits` asks the driver for `policy->max` with `CPUFREQ_RELATION_H` (the highest table
//!    frequency at or below it, which the cap already is); the driver skips the request when the
//!    policy already runs there.

use super::policy::{CpufreqPolicy, FreqChange, Relation};

/// `cpufreq_gov_performance_limits`.
pub fn limits(policy: &mut CpufreqPolicy) -> Option<FreqChange> {
    policy.driver_target(policy.max_khz(), Relation::H)
}
