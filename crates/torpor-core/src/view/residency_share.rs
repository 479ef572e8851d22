//! Idle-state residency as shares of a run: each CPU's time in each state as a percentage of
//! the run's length, and the platform's (every CPU's time in a state over all CPUs' time),
//! as idlestat's tables and the seed documents compare them. Computed from a CPU report's
//! per-state `time_ns` and per-CPU `busy_ns`:
//!
//! 1. a CPU's share of a state: 100 x `time_ns` / the run's length in ns;
//! 2. the platform's: 100 x the state's `time_ns` summed over the CPUs / (the run's length x
//!    the number of CPUs), for each state the first CPU lists, in its order;
//! 3. where all CPUs' time went (a run page's chart): the same share of all CPUs' time for
//!    `running` (the CPUs' `busy_ns`) first, then for every state any CPU names, in the
//!    order they first appear over the CPUs (clusters can name their states differently);
//!    0 for a run of no time.

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
    /// Time not idle.
    pub busy_ns: u64,
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
    /// The first CPU's states (module doc, step 2).
    pub all: Vec<Share>,
    /// `running`, then every state any CPU names (module doc, step 3).
    pub cpu_time: Vec<Share>,
}

/// The name of the share of time the CPUs were not idle.
pub const RUNNING: &str = "running";

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
    Shares {
        per_cpu,
        all,
        cpu_time: cpu_time(cpus, run_ns),
    }
}

/// Each share of all CPUs' time over a run of `run_ns` (module doc, step 3).
fn cpu_time(cpus: &[CpuStates], run_ns: f64) -> Vec<Share> {
    let mut totals: Vec<(&str, u64)> = vec![(RUNNING, cpus.iter().map(|c| c.busy_ns).sum())];
    for s in cpus.iter().flat_map(|c| &c.states) {
        match totals.iter_mut().find(|(name, _)| *name == s.name) {
            Some((_, total)) => *total += s.time_ns,
            None => totals.push((&s.name, s.time_ns)),
        }
    }
    let span_ns = run_ns * cpus.len() as f64;
    totals
        .into_iter()
        .map(|(name, total)| Share {
            state: name.to_string(),
            pct: if span_ns > 0.0 {
                percent_of(total, span_ns)
            } else {
                0.0
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, time_ns: u64) -> StateTime {
        StateTime {
            name: name.into(),
            time_ns,
        }
    }

    fn cpu(cpu: u32, wfi_ns: u64, spc_ns: u64) -> CpuStates {
        CpuStates {
            cpu,
            busy_ns: 0,
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

    #[test]
    fn all_cpus_time_has_running_and_every_clusters_state_in_first_seen_order() {
        // A 1 s run of two CPUs (2 s of CPU time): a little core busy 0.5 s, 0.5 s in WFI; a
        // big core busy 0.25 s, 0.25 s in WFI and 0.5 s in its own "C2". By hand: running 0.75 / 2 = 37.5 %, WFI 0.75 / 2 = 37.5 %, C2 0.5 / 2 = 25 %; C2 is
        // named by the second CPU only, so it comes last, and the first CPU's table misses it.
        let little = CpuStates {
            cpu: 0,
            busy_ns: 500_000_000,
            states: vec![state("WFI", 500_000_000)],
        };
        let big = CpuStates {
            cpu: 4,
            busy_ns: 250_000_000,
            states: vec![state("WFI", 250_000_000), state("C2", 500_000_000)],
        };
        let s = shares(&[little, big], 1.0);
        let got: Vec<(&str, f64)> = s.cpu_time.iter().map(|x| (&x.state[..], x.pct)).collect();
        assert_eq!(got, [("running", 37.5), ("WFI", 37.5), ("C2", 25.0)]);
        assert_eq!(s.all.len(), 1);
        // A run of no time has shares of 0, not of NaN.
        let idle = CpuStates {
            cpu: 0,
            busy_ns: 0,
            states: vec![state("WFI", 0)],
        };
        let none = shares(&[idle], 0.0);
        assert!(none.cpu_time.iter().all(|x| x.pct == 0.0));
    }
}
