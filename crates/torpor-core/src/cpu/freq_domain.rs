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

use super::ClusterSpec;
use crate::cpufreq::energy_model::{dt_power_uw, EnergyModel};
use crate::cpufreq::policy::{CpufreqPolicy, PolicySpec, CPUFREQ_ETERNAL_NS};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::cpu_preset;

    fn cluster(id: &str, name: &str) -> ClusterSpec {
        let p = cpu_preset::find(id).unwrap().unwrap();
        p.clusters.into_iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn each_presets_default_rate_limit_is_its_transition_latency_and_a_half() {
        // 500 us -> 750; 300 us -> 450; 1450 us -> 2175; CPUFREQ_ETERNAL -> 6 442 450.
        for (id, name, us) in [
            ("google-gs101", "big", 750),
            ("hisilicon-hi3660-hikey960", "cluster0", 450),
            ("arm-juno-r0", "big", 2175),
            ("qcom-msm8916", "cpu0-3", 6_442_450),
        ] {
            let p = policy(&cluster(id, name)).unwrap();
            assert_eq!(p.transition_delay_us(), us, "{id}");
            assert_eq!(p.cur_khz(), p.cpuinfo_max_khz());
        }
        // gs101 little: 4 CPUs share the policy, capacity 160.
        let p = policy(&cluster("google-gs101", "little")).unwrap();
        assert_eq!((p.cpus(), p.is_shared(), p.capacity()), (4, true, 160));
    }

    #[test]
    fn the_energy_model_of_hi3660s_a53s_by_hand() {
        // dev_pm_opp_calc_power with C = 110, then performance = 462 x f / 1 844 000 and
        // cost = 10 x uW / performance:
        //   533 MHz, 700 mV: 110 x 700^2 x 533 / 1e6 = 28 728 uW; perf 133; cost 2160
        //   999 MHz, 800 mV: 70 329 uW; perf 250; cost 2813
        //   1402 MHz, 900 mV: 110 x 810 000 x 1402 / 1e6 = 124 918 uW; perf 351; cost 3558
        //   1709 MHz, 1000 mV: 187 990 uW; perf 428; cost 4392
        //   1844 MHz, 1100 mV: 245 436 uW; perf 462; cost 5312
        // Costs rise with voltage: no state is inefficient.
        let em = energy_model(&cluster("hisilicon-hi3660-hikey960", "cluster0")).unwrap();
        let got: Vec<(u64, u64, u64, bool)> = em
            .states()
            .iter()
            .map(|s| (s.power_uw, s.performance, s.cost, s.inefficient))
            .collect();
        assert_eq!(
            got,
            [
                (28_728, 133, 2160, false),
                (70_329, 250, 2813, false),
                (124_918, 351, 3558, false),
                (187_990, 428, 4392, false),
                (245_436, 462, 5312, false),
            ]
        );
        // MSM8916's DT has no coefficient: no energy model, so no inefficiencies either.
        assert!(energy_model(&cluster("qcom-msm8916", "cpu0-3")).is_none());
    }

    #[test]
    fn platform_scaling_limits_become_the_users_requests() {
        let mut c = cluster("hisilicon-hi3660-hikey960", "cluster1");
        let f = c.cpufreq.as_mut().unwrap();
        f.scaling_min_khz = Some(1_000_000);
        f.scaling_max_khz = Some(2_000_000);
        // Floor 1 000 000 -> 1 421 000 (RELATION_L); cap 2 000 000 -> 1 805 000 (RELATION_H).
        let p = policy(&c).unwrap();
        assert_eq!((p.min_khz(), p.max_khz()), (1_421_000, 1_805_000));
    }
}
