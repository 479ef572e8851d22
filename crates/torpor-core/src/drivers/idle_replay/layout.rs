//! The C-state tables a replay runs on ([`Layout`]): one [`ClusterTable`] per cluster, from a
//! CPU platform or from an idlestat trace's header, and which CPU uses which.

use crate::cpu::platform::{CpuPlatform, StateLevel};
use crate::cpuidle::{Platform, MAX_STATES};
use crate::trace::ftrace::FtraceHeader;

/// One cluster's state table as the replay uses it.
#[derive(Clone, Debug)]
pub struct ClusterTable {
    pub name: String,
    pub view: Platform,
    pub disabled: Vec<bool>,
    /// Power per state (mW) as charged per CPU, when every state has a figure.
    pub state_mw: Option<Vec<f64>>,
    /// The energy (mJ) of entering and leaving each state (`ClusterSpec::transition_mj`).
    pub transition_mj: Vec<f64>,
    /// Each OPP's frequency (kHz) and active power (mW), where the platform gives one.
    pub opp_mw: Vec<(u64, Option<f64>)>,
    /// The OPP the `performance` governor holds (the policy's maximum), kHz.
    pub held_khz: Option<u64>,
}

impl ClusterTable {
    /// The active power (mW) at `khz`, if the platform lists that OPP with a power.
    pub(super) fn active_mw(&self, khz: u64) -> Option<f64> {
        self.opp_mw.iter().find(|o| o.0 == khz).and_then(|o| o.1)
    }
}

/// The C-state tables and which CPU uses which.
#[derive(Clone, Debug)]
pub struct Layout {
    pub clusters: Vec<ClusterTable>,
    /// Per CPU number: its cluster, if the platform has the CPU.
    pub cpu_cluster: Vec<Option<usize>>,
    /// `platform`, `preset` or `trace`.
    pub from: &'static str,
    pub id: Option<String>,
    pub exit_latency_from: &'static str,
}

impl Layout {
    /// From a CPU platform (a preset or a user's file).
    pub fn from_platform(p: &CpuPlatform, tick_ns: i64, from: &'static str) -> Layout {
        let mut cpu_cluster = Vec::new();
        let clusters = p
            .clusters
            .iter()
            .enumerate()
            .map(|(k, c)| {
                for &cpu in &c.cpus {
                    if cpu_cluster.len() <= cpu as usize {
                        cpu_cluster.resize(cpu as usize + 1, None);
                    }
                    cpu_cluster[cpu as usize] = Some(k);
                }
                let mw = |s: &crate::cpu::platform::IdleStateSpec| {
                    s.power_mw.as_ref().map(|p| p.central())
                };
                let deepest_cpu = c
                    .states
                    .iter()
                    .rev()
                    .find(|s| s.level == StateLevel::Cpu)
                    .and_then(mw);
                let state_mw: Option<Vec<f64>> = c
                    .states
                    .iter()
                    .map(|s| match s.level {
                        StateLevel::Cpu => mw(s),
                        StateLevel::Cluster => mw(s).and(deepest_cpu),
                    })
                    .collect();
                ClusterTable {
                    name: c.name.clone(),
                    view: c.governor_view(tick_ns),
                    disabled: c.states.iter().map(|s| s.disabled).collect(),
                    state_mw,
                    transition_mj: c.transition_mj(),
                    opp_mw: c
                        .opps
                        .iter()
                        .map(|o| (o.freq_khz, o.power_mw.as_ref().map(|p| p.central())))
                        .collect(),
                    held_khz: crate::cpu::freq_domain::policy(c).map(|p| u64::from(p.max_khz())),
                }
            })
            .collect();
        Layout {
            clusters,
            cpu_cluster,
            from,
            id: Some(p.id.clone()),
            exit_latency_from: "platform",
        }
    }

    /// From an idlestat trace's header: its topology and each cluster's table (of its first
    /// CPU). The table has no exit latencies: each is taken as the state's target residency,
    /// the most the cpuidle core allows; capacities are taken as 1024; no power.
    pub fn from_header(h: &FtraceHeader, tick_ns: i64) -> Option<Layout> {
        let (topo, tables) = (h.topology.as_ref()?, h.states.as_ref()?);
        let mut ids: Vec<u32> = topo.iter().map(|p| p.cluster).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut cpu_cluster = vec![None; topo.len()];
        let mut clusters = Vec::new();
        for (k, id) in ids.iter().enumerate() {
            let first = topo
                .iter()
                .filter(|p| p.cluster == *id)
                .map(|p| p.cpu)
                .min()?;
            let states: Vec<crate::cpuidle::IdleState> = tables
                .get(first as usize)?
                .iter()
                .map_while(|s| Some((s.name.clone()?, s.target_residency_us?)))
                .take(MAX_STATES)
                .map(|(name, us)| {
                    let ns = (us as i64).saturating_mul(1000);
                    crate::cpuidle::IdleState {
                        name,
                        exit_latency_ns: ns,
                        target_residency_ns: ns,
                        polling: false,
                    }
                })
                .collect();
            if states.is_empty() {
                return None;
            }
            for p in topo.iter().filter(|p| p.cluster == *id) {
                cpu_cluster[p.cpu as usize] = Some(k);
            }
            clusters.push(ClusterTable {
                name: format!("cluster{}", char::from(b'A' + (*id % 26) as u8)),
                disabled: vec![false; states.len()],
                view: Platform {
                    states,
                    tick_ns,
                    capacity: 1024,
                },
                state_mw: None,
                transition_mj: Vec::new(),
                opp_mw: Vec::new(),
                held_khz: None,
            });
        }
        Some(Layout {
            clusters,
            cpu_cluster,
            from: "trace",
            id: None,
            exit_latency_from: "target residency (the trace's table has none)",
        })
    }
}
