//! Idle-state residency as shares of a run: each CPU's time in each state as a percentage of
//! the run's length, and the platform's (every CPU's time in a state over all CPUs' time),
//! as idlestat's tables and the seed documents compare them. Computed from a CPU report's
//! per-state `time_ns`:
//!
//! 1. a CPU's share of a state: 100 x `time_ns` / the run's length in ns;
//! 2. the platform's: 100 x the state's `time_ns` summed over the CPUs / (the run's length x
//!    the number of CPUs), for each state the first CPU lists, in its order.

use serde::{Deserialize, Serialize};

/// One state of a CPU as the report gives it (its other fields are not read).
#[derive(Clone, Debug, Deserialize)]
pub struct StateTime {
    pub name: String,
    pub time_ns: u64,
}

/// One CPU of the report's `cpu.cpus`.
#[derive(Clone, Debug, Deserialize)]
pub struct CpuStates {
    pub cpu: u32,
    pub states: Vec<StateTime>,
}

/// A state's share, percent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Share {
    pub state: String,
    pub pct: f64,
}

/// Each CPU's shares, and the platform's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shares {
    pub per_cpu: Vec<(u32, Vec<Share>)>,
    pub all: Vec<Share>,
}

/// `time_ns` as a percentage of `span_ns` (100 x time in integers, then one division: every
/// residency share torpor shows is this one computation).
pub fn percent_of(time_ns: u64, span_ns: f64) -> f64 {
    (100 * time_ns) as f64 / span_ns
}

/// The shares of `cpus` over a run of `duration_s`.
pub fn shares(cpus: &[CpuStates], duration_s: f64) -> Shares {
    let run_ns = duration_s * 1e9;
    let per_cpu = cpus
        .iter()
        .map(|c| {
            let states = c
                .states
                .iter()
                .map(|s| Share {
                    state: s.name.clone(),
                    pct: percent_of(s.time_ns, run_ns),
                })
                .collect();
            (c.cpu, states)
        })
        .collect();
    let names = cpus.first().map_or(&[][..], |c| &c.states[..]);
    let all = names
        .iter()
        .map(|n| {
            let total: u64 = cpus
                .iter()
                .flat_map(|c| &c.states)
                .filter(|s| s.name == n.name)
                .map(|s| s.time_ns)
                .sum();
            Share {
                state: n.name.clone(),
                pct: percent_of(total, run_ns * cpus.len() as f64),
            }
        })
        .collect();
    Shares { per_cpu, all }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: u32, wfi_ns: u64, spc_ns: u64) -> CpuStates {
        let state = |name: &str, time_ns| StateTime {
            name: name.into(),
            time_ns,
        };
        CpuStates {
            cpu,
            states: vec![state("WFI", wfi_ns), state("spc", spc_ns)],
        }
    }

    #[test]
    fn a_cpu_s_share_is_its_time_over_the_run_and_the_platform_s_over_all_cpus() {
        // A 2 s run: cpu0 0.5 s in WFI and 1 s in spc; cpu1 1.5 s in spc. By hand: cpu0 25 %
        // and 50 %; the platform 0.5 / 4 = 12.5 % WFI, 2.5 / 4 = 62.5 % spc.
        let s = shares(
            &[cpu(0, 500_000_000, 1_000_000_000), cpu(1, 0, 1_500_000_000)],
            2.0,
        );
        let pct = |v: &[Share]| v.iter().map(|x| x.pct).collect::<Vec<_>>();
        assert_eq!(pct(&s.per_cpu[0].1), vec![25.0, 50.0]);
        assert_eq!(pct(&s.per_cpu[1].1), vec![0.0, 75.0]);
        assert_eq!(pct(&s.all), vec![12.5, 62.5]);
        assert_eq!(s.all[1].state, "spc");
    }
}
