//! A platform cluster as a cpufreq frequency domain: the policy facts and the energy model the
//! kernel would build from what its platform file says (OPPs, `[cluster.cpufreq]`).
//!
//! 1. The policy's table is the cluster's OPP frequencies; its transition latency is
//!    `[cluster.cpufreq] transition_latency` (central value), else `CPUFREQ_ETERNAL` as cpufreq-dt
//!    sets it when no OPP gives a `clock-latency-ns`.
//! 2. An energy model registers as `dev_pm_opp_of_register_em` does: only when the cluster has a
//!    `dynamic_power_coefficient` and every OPP a voltage; each state's power is then
//!    `dev_pm_opp_calc_power`'s integer `C x V^2 x f`. Its inefficient states mark the policy's
//!    table (`em_cpufreq_update_efficiencies`). The presets' `power_mw` figures (which a run
//!    charges) are not what the kernel's model reads.
//! 3. The policy starts at the highest OPP, the platform's `scaling_min_khz`/`scaling_max_khz`
//!    stored as the user's requests.

use super::energy_model::{dt_power_uw, EnergyModel};
use super::policy::{CpufreqPolicy, PolicySpec, CPUFREQ_ETERNAL_NS};
use crate::cpu::ClusterSpec;

/// The energy model the kernel registers for `cluster`, if it registers one.
pub fn energy_model(cluster: &ClusterSpec) -> Option<EnergyModel> {
    let dpc = cluster.cpufreq.as_ref()?.dynamic_power_coefficient?;
    let table = cluster
        .opps
        .iter()
        .map(|o| {
            let khz = u32::try_from(o.freq_khz).ok()?;
            Some((khz, dt_power_uw(dpc, o.microvolt?, khz)))
        })
        .collect::<Option<Vec<_>>>()?;
    EnergyModel::new(&table, cluster.capacity).ok()
}

/// The policy facts of `cluster`; `None` without OPPs (no cpufreq driver).
pub fn policy_spec(cluster: &ClusterSpec) -> Option<PolicySpec> {
    let freqs_khz = cluster
        .opps
        .iter()
        .map(|o| u32::try_from(o.freq_khz).ok())
        .collect::<Option<Vec<u32>>>()?;
    let initial_khz = *freqs_khz.last()?;
    let cpufreq = cluster.cpufreq.as_ref();
    let transition_latency_ns = cpufreq
        .and_then(|c| c.transition_latency.as_ref())
        .map_or(CPUFREQ_ETERNAL_NS, |t| {
            u32::try_from(t.central()).unwrap_or(CPUFREQ_ETERNAL_NS)
        });
    Some(PolicySpec {
        inefficient: energy_model(cluster).map_or_else(Vec::new, |em| em.inefficient()),
        freqs_khz,
        transition_latency_ns,
        transition_delay_us: None,
        capacity: cluster.capacity,
        cpus: cluster.cpus.len(),
        fast_switch: cpufreq.is_some_and(|c| c.fast_switch),
        initial_khz,
    })
}

/// The started policy of `cluster` with the platform's scaling limits; `None` without OPPs.
pub fn policy(cluster: &ClusterSpec) -> Option<CpufreqPolicy> {
    let mut p = CpufreqPolicy::new(&policy_spec(cluster)?);
    if let Some(c) = &cluster.cpufreq {
        let khz = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        if let Some(v) = c.scaling_min_khz {
            p.store_scaling_min_freq(khz(v));
        }
        if let Some(v) = c.scaling_max_khz {
            p.store_scaling_max_freq(khz(v));
        }
        p.update_limits();
    }
    Some(p)
}
