//! CPU frequency: the cpufreq policy of each frequency domain, its governors, and the energy
//! model that prices each operating point (Linux v6.12).
//!
//! Pure policy: nothing here knows the CPU system, the engine, parsers or views. The caller
//! keeps one [`CpufreqPolicy`] and one [`Governor`] per frequency domain (a platform cluster:
//! `cpu::freq_domain` builds the policy's facts from it) and drives them as the kernel does:
//! - `Governor::start` when the governor takes over the policy (the core's `start` then
//!   `limits`), with the CPUs' state at that time;
//! - after changing the policy's frequency QoS requests (`scaling_min_freq`, `scaling_max_freq`
//!   or any other holder), `CpufreqPolicy::update_limits` and, when it reports a change,
//!   `Governor::limits`;
//! - at each scheduler utilization update of one of the domain's CPUs (`cpufreq_update_util`:
//!   enqueue, dequeue, tick, IO wake-up), `Governor::update` with what the kernel would read.
//!
//! Each returns the frequency change the driver was asked for, if any; the hardware completes it
//! within the policy's transition latency.
//!
//! `NAME@VERSION` names the mainline release a governor variant follows; the bare name is the
//! newest variant torpor has.

pub mod energy_model;
pub mod ondemand;
pub mod performance;
pub mod policy;
pub mod powersave;
pub mod schedutil;

pub use ondemand::{Ondemand, OndemandTunables};
pub use policy::{CpufreqPolicy, FreqChange, PolicySpec, Relation};
pub use schedutil::{CpuUtil, Schedutil, SchedutilTunables, UtilUpdate};

/// Every cpufreq governor variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GovernorName {
    Schedutil612,
    Ondemand612,
    Performance,
    Powersave,
}

/// Accepted spellings, canonical name first for each variant.
pub const NAMES: &[(&str, GovernorName)] = &[
    ("schedutil", GovernorName::Schedutil612),
    ("schedutil@6.12", GovernorName::Schedutil612),
    ("ondemand", GovernorName::Ondemand612),
    ("ondemand@6.12", GovernorName::Ondemand612),
    ("performance", GovernorName::Performance),
    ("powersave", GovernorName::Powersave),
];

impl GovernorName {
    /// Parses a name as a user writes it (`schedutil`, `ondemand@6.12`, `performance`, ...).
    pub fn parse(name: &str) -> Result<GovernorName, crate::variant_names::UnknownName> {
        crate::variant_names::parse(NAMES, name, "cpufreq governor")
    }

    /// The name torpor prints for the variant.
    pub fn canonical(self) -> &'static str {
        crate::variant_names::canonical(NAMES, self)
    }
}

/// What the governors read of the platform, and their tunables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GovernorParams {
    /// `TICK_NSEC`: `(1e9 + HZ/2) / HZ`.
    pub tick_ns: u64,
    pub schedutil: SchedutilTunables,
    pub ondemand: OndemandTunables,
}

/// A running governor of one policy (`policy->governor` with its data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Governor {
    Schedutil(Schedutil),
    Ondemand(Ondemand),
    Performance,
    Powersave,
}

impl Governor {
    /// Starts governor `name` on `policy` at `now_ns` (`cpufreq_start_governor`: its `start`,
    /// then `limits`); `cpus` are the policy's CPUs as the kernel reads them then (ondemand
    /// takes their idle counters as its reference). Returns the governor and the change its
    /// first `limits` made.
    pub fn start(
        name: GovernorName,
        policy: &mut CpufreqPolicy,
        params: &GovernorParams,
        now_ns: u64,
        cpus: &[CpuUtil],
    ) -> (Governor, Option<FreqChange>) {
        let mut g = match name {
            GovernorName::Schedutil612 => {
                Governor::Schedutil(Schedutil::new(policy, params.tick_ns, params.schedutil))
            }
            GovernorName::Ondemand612 => Governor::Ondemand(Ondemand::new(
                policy,
                params.tick_ns,
                params.ondemand,
                now_ns,
                cpus,
            )),
            GovernorName::Performance => Governor::Performance,
            GovernorName::Powersave => Governor::Powersave,
        };
        let change = g.limits(policy);
        (g, change)
    }

    /// The variant running.
    pub fn name(&self) -> GovernorName {
        match self {
            Governor::Schedutil(_) => GovernorName::Schedutil612,
            Governor::Ondemand(_) => GovernorName::Ondemand612,
            Governor::Performance => GovernorName::Performance,
            Governor::Powersave => GovernorName::Powersave,
        }
    }

    /// The governor's `limits` callback, after the policy's limits changed.
    pub fn limits(&mut self, policy: &mut CpufreqPolicy) -> Option<FreqChange> {
        match self {
            Governor::Schedutil(s) => s.limits(policy),
            Governor::Ondemand(o) => o.limits(policy),
            Governor::Performance => performance::limits(policy),
            Governor::Powersave => powersave::limits(policy),
        }
    }

    /// A scheduler utilization update (`cpufreq_update_util`); performance and powersave do not
    /// listen.
    pub fn update(&mut self, policy: &mut CpufreqPolicy, u: &UtilUpdate) -> Option<FreqChange> {
        match self {
            Governor::Schedutil(s) => s.update(policy, u),
            Governor::Ondemand(o) => o.update(policy, u),
            Governor::Performance | Governor::Powersave => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> CpufreqPolicy {
        CpufreqPolicy::new(&PolicySpec {
            freqs_khz: vec![500_000, 1_000_000, 1_500_000, 2_000_000],
            inefficient: vec![],
            transition_latency_ns: 500_000,
            transition_delay_us: None,
            capacity: 1024,
            cpus: 2,
            fast_switch: false,
            initial_khz: 1_000_000,
        })
    }

    const CPUS: [CpuUtil; 2] = [CpuUtil::IDLE; 2];

    fn start(name: GovernorName, p: &mut CpufreqPolicy) -> (Governor, Option<FreqChange>) {
        let params = GovernorParams {
            tick_ns: 4_000_000,
            schedutil: SchedutilTunables::default(),
            ondemand: OndemandTunables::default(),
        };
        Governor::start(name, p, &params, 0, &CPUS)
    }

    #[test]
    fn performance_and_powersave_follow_the_limits() {
        // performance: starts at the cap (2 000 000), follows a lower cap (RELATION_H of
        // 1 700 000 -> 1 500 000), and ignores utilization.
        let mut p = policy();
        let (mut g, change) = start(GovernorName::Performance, &mut p);
        assert_eq!(
            change.map(|c| (c.from_khz, c.to_khz)),
            Some((1_000_000, 2_000_000))
        );
        p.store_scaling_max_freq(1_700_000);
        assert!(p.update_limits());
        assert_eq!(g.limits(&mut p).map(|c| c.to_khz), Some(1_500_000));
        let u = UtilUpdate {
            now_ns: 1,
            cpu: 0,
            iowait: true,
            cpus: &CPUS,
        };
        assert_eq!(g.update(&mut p, &u), None);
        // powersave: starts at the floor; a floor of 700 000 resolves to 1 000 000 (RELATION_L).
        let mut p = policy();
        let (mut g, change) = start(GovernorName::Powersave, &mut p);
        assert_eq!(change.map(|c| c.to_khz), Some(500_000));
        p.store_scaling_min_freq(700_000);
        p.update_limits();
        assert_eq!(g.limits(&mut p).map(|c| c.to_khz), Some(1_000_000));
        // Limits that do not move the floor ask for nothing.
        assert_eq!(g.limits(&mut p), None);
    }

    #[test]
    fn names_parse_to_their_variants() {
        assert_eq!(
            GovernorName::parse("schedutil@6.12"),
            Ok(GovernorName::Schedutil612)
        );
        assert_eq!(GovernorName::Schedutil612.canonical(), "schedutil");
        assert_eq!(
            GovernorName::parse("ondemand"),
            Ok(GovernorName::Ondemand612)
        );
        assert!(GovernorName::parse("conservative")
            .unwrap_err()
            .to_string()
            .contains(
                "expected one of schedutil, schedutil@6.12, ondemand, ondemand@6.12, performance, \
             powersave"
            ));
    }
}
