//! `torpor qos SCENARIO`: the effective PM QoS constraints of each variant over its run, and
//! what each still lets the hardware do. No simulation: the constraints are a function of the
//! scenario's requests alone, applied in time order (ties in file order, as the engine does).
//!
//! CPUs. At the start and after each request: the global CPU latency limit, each CPU's resume
//! latency, the governor's `latency_req` (`cpuidle_governor_latency_req`) and the idle states
//! a governor may still choose. The admission test is the governors' own (spec-cpu.md §6.4;
//! menu's `exit_latency_ns > latency_req` break, teo's `exit_latency_ns <= latency_req` for
//! `constraint_idx`, `cpuidle_find_deepest_state` skipping `exit_latency_ns > max_latency_ns`,
//! all in ns): a state is admitted when its exit latency is at most the limit, so a limit equal
//! to a state's exit latency still admits it. Disabled states are skipped, as every governor
//! skips them. State 0 is always usable: with `latency_req == 0`, or nothing admitted, the
//! governors return it (menu's early return and `idx = 0`, teo's `constraint_idx` starting at
//! 0). A cluster-level state powers the cluster down only when every CPU of the cluster is in
//! it (cpu/platform.rs), so the cluster may use it only when each of its CPUs admits it.
//!
//! NVMe. At the controller's init (the user request from `default_ps_max_latency_us`) and after
//! each write to `power/pm_qos_latency_tolerance_us`: the tolerance, the controller's
//! `ps_max_latency_us`, and the non-operational states the table in force uses as targets
//! (the policy crate's apst/tolerance.rs rebuilds it when the limit moves, with the builder of
//! apst/mod.rs), or that APST is off.

use serde::Serialize;

use crate::apst::psd::NvmeController;
use crate::apst::tolerance::{self, ToleranceDriver};
use crate::apst::{self, ApstConfig, ApstParams};
use crate::cpu::platform::{CpuPlatform, StateLevel};
use crate::qos::cpu_latency::{
    CpuLatencyQos, CPU_LATENCY_DEFAULT_US, RESUME_LATENCY_NO_CONSTRAINT_US,
};
use crate::qos::latency_tolerance::{RefusedTolerance, NO_CONSTRAINT};
use crate::scenario::qos::{NamedAction, ToleranceWrite};

/// Every variant's timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QosView {
    pub scenario: String,
    pub variants: Vec<VariantQos>,
}

/// One variant: what it runs and its steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantQos {
    pub name: String,
    /// The CPU platform or drive, as the run report names it.
    pub device: String,
    #[serde(flatten)]
    pub timeline: Timeline,
}

/// The steps of one platform kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "platform", rename_all = "lowercase")]
pub enum Timeline {
    Cpu { steps: Vec<CpuStep> },
    Nvme { steps: Vec<NvmeStep> },
}

/// What a step's request was; all `None` for the state before any request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Request {
    pub holder: Option<String>,
    /// The file, as the user knows it.
    pub target: Option<String>,
    /// What was written, as written (`remove` for a close).
    pub written: Option<String>,
}

/// The CPUs' constraints after one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpuStep {
    pub at_ns: u64,
    #[serde(flatten)]
    pub request: Request,
    /// `cpu_latency_qos_limit()`, us; `None` at its no-request default (2e9 us).
    pub global_limit_us: Option<i32>,
    pub cpus: Vec<CpuLimit>,
    pub clusters: Vec<ClusterLimit>,
}

/// One CPU's constraint and the states its governor may choose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpuLimit {
    pub cpu: u32,
    /// The CPU's resume-latency aggregate, us; `None`: no constraint (S32_MAX).
    pub resume_latency_us: Option<i32>,
    /// `cpuidle_governor_latency_req(cpu)` / 1000, us.
    pub latency_req_us: i64,
    /// Names of the states admitted, shallowest first (cluster-level ones included).
    pub states: Vec<String>,
}

/// The cluster-level states a cluster may still enter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterLimit {
    pub name: String,
    pub states: Vec<String>,
}

/// The CPUs' constraints at the start and after each of `actions` (stably sorted by time).
pub fn cpu_timeline(platform: &CpuPlatform, actions: &[NamedAction]) -> Vec<CpuStep> {
    let mut qos = CpuLatencyQos::new(&platform.cpus());
    let mut ordered: Vec<&NamedAction> = actions.iter().collect();
    ordered.sort_by_key(|a| a.action.at);
    let mut steps = vec![cpu_step(platform, &qos, 0, Request::default())];
    for a in ordered {
        qos.apply(&a.action);
        let request = Request {
            holder: Some(a.holder.clone()),
            target: Some(a.target.clone()),
            written: Some(a.written.clone()),
        };
        steps.push(cpu_step(platform, &qos, a.action.at.0, request));
    }
    steps
}

fn cpu_step(platform: &CpuPlatform, qos: &CpuLatencyQos, at_ns: u64, request: Request) -> CpuStep {
    let mut cpus = Vec::new();
    let mut clusters = Vec::new();
    for cluster in &platform.clusters {
        // Per state: does every CPU of the cluster admit it?
        let mut all_admit = vec![true; cluster.states.len()];
        for &cpu in &cluster.cpus {
            let req_ns = qos.governor_latency_req_ns(cpu);
            let mut states = Vec::new();
            for (i, s) in cluster.states.iter().enumerate() {
                let admitted = i == 0
                    || (!s.disabled && (s.exit_latency_us as i64).saturating_mul(1000) <= req_ns);
                all_admit[i] &= admitted;
                if admitted {
                    states.push(s.name.clone());
                }
            }
            let resume = qos.resume_latency_us(cpu);
            cpus.push(CpuLimit {
                cpu,
                resume_latency_us: (resume != RESUME_LATENCY_NO_CONSTRAINT_US).then_some(resume),
                latency_req_us: req_ns / 1000,
                states,
            });
        }
        clusters.push(ClusterLimit {
            name: cluster.name.clone(),
            states: cluster
                .states
                .iter()
                .zip(&all_admit)
                .filter(|(s, ok)| **ok && s.level == StateLevel::Cluster)
                .map(|(s, _)| s.name.clone())
                .collect(),
        });
    }
    cpus.sort_by_key(|c| c.cpu);
    let limit = qos.limit_us();
    CpuStep {
        at_ns,
        request,
        global_limit_us: (limit != CPU_LATENCY_DEFAULT_US).then_some(limit),
        cpus,
        clusters,
    }
}

/// The controller's constraint after one write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NvmeStep {
    pub at_ns: u64,
    #[serde(flatten)]
    pub request: Request,
    /// The latency-tolerance aggregate, us; `None`: no constraint (`auto`).
    pub tolerance_us: Option<i64>,
    /// The controller's `ps_max_latency_us`; `None`: no limit.
    pub ps_max_latency_us: Option<u64>,
    /// Whether this step sent a table (the init, or a write that moved the limit).
    pub sent: bool,
    /// The non-operational states the table in force targets, ascending; empty when APST is
    /// off.
    pub targets: Vec<u8>,
    /// Why APST is off (APSTE = 0, or no table sent), when it is.
    pub apst_off: Option<String>,
}

/// The controller's constraints at init and after each of `writes` (in time order); an error
/// names the write the kernel refuses (its index and why).
pub fn nvme_timeline(
    ctrl: &NvmeController,
    params: &ApstParams,
    writes: &[ToleranceWrite],
) -> Result<Vec<NvmeStep>, (usize, RefusedTolerance)> {
    let mut driver = ToleranceDriver::new(params);
    let mut config = apst::build(ctrl, params);
    let mut steps = vec![nvme_step(&driver, &config, true, 0, Request::default())];
    for (i, w) in writes.iter().enumerate() {
        let moved = driver.write(w.value).map_err(|e| (i, e))?;
        if let Some(limit) = moved {
            config = tolerance::rebuilt(ctrl, params, limit);
        }
        let request = Request {
            holder: Some(w.holder.clone()),
            target: Some("power/pm_qos_latency_tolerance_us".into()),
            written: Some(w.written.clone()),
        };
        steps.push(nvme_step(
            &driver,
            &config,
            moved.is_some(),
            w.at.0,
            request,
        ));
    }
    Ok(steps)
}

fn nvme_step(
    driver: &ToleranceDriver,
    config: &ApstConfig,
    sent: bool,
    at_ns: u64,
    request: Request,
) -> NvmeStep {
    let (targets, apst_off) = match config {
        ApstConfig::NotSent { reason } => (Vec::new(), Some(reason.clone())),
        ApstConfig::Sent(t) if !t.apste => (
            Vec::new(),
            Some("APSTE = 0 (ps_max_latency_us is 0)".to_string()),
        ),
        ApstConfig::Sent(t) => {
            let mut targets: Vec<u8> = (0..t.entries.len())
                .filter(|&ps| t.itpt_ms(ps) != 0)
                .map(|ps| t.itps(ps))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            (targets, None)
        }
    };
    let tolerance = driver.tolerance_us();
    let limit = driver.limit_us();
    NvmeStep {
        at_ns,
        request,
        tolerance_us: (tolerance != NO_CONSTRAINT).then_some(tolerance),
        ps_max_latency_us: (limit != u64::MAX).then_some(limit),
        sent: sent && !matches!(config, ApstConfig::NotSent { .. }),
        targets,
        apst_off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apst::psd::PowerState;
    use crate::qos::cpu_latency::{QosAction, QosOp, QosTarget, SYSFS_HOLDER};
    use crate::qos::Holder;
    use crate::time::Nanos;

    /// Cluster "pair" (CPUs 0, 1): WFI 1 us, C1 100 us, C2 200 us but disabled, cluster state
    /// CL 500 us. Cluster "solo" (CPU 2): WFI 2 us only.
    const PLATFORM: &str = r#"
id = "test-qos"
name = "QoS view test"
source = "written for this test"
[[cluster]]
name = "pair"
cpus = [1, 0]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[cluster.state]]
name = "C1"
exit_latency_us = 100
target_residency_us = 300
[[cluster.state]]
name = "C2"
exit_latency_us = 200
target_residency_us = 600
disabled = true
[[cluster.state]]
name = "CL"
level = "cluster"
exit_latency_us = 500
target_residency_us = 2000
[[cluster]]
name = "solo"
cpus = [2]
capacity = 512
[[cluster.state]]
name = "WFI"
exit_latency_us = 2
target_residency_us = 2
"#;

    fn act(at_us: u64, holder: Holder, target: QosTarget, op: QosOp) -> NamedAction {
        NamedAction {
            action: QosAction {
                at: Nanos(at_us * 1000),
                holder,
                target,
                op,
            },
            holder: format!("h{holder}"),
            target: "t".into(),
            written: "w".into(),
        }
    }

    /// (global limit, per CPU (latency_req us, states), the pair's cluster states).
    type Seen = (Option<i32>, Vec<(i64, Vec<String>)>, Vec<String>);

    fn seen(step: &CpuStep) -> Seen {
        (
            step.global_limit_us,
            step.cpus
                .iter()
                .map(|c| (c.latency_req_us, c.states.clone()))
                .collect(),
            step.clusters[0].states.clone(),
        )
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cpu_steps_admit_states_by_exit_latency_at_most_the_limit() {
        let platform = CpuPlatform::parse("test", PLATFORM).unwrap();
        let dma = QosTarget::CpuDmaLatency;
        let cpu1 = QosTarget::ResumeLatency { cpu: 1 };
        // Listed out of time order on purpose: the 3 ms write comes first in the file, and the
        // two 2 ms actions keep their file order.
        let actions = [
            act(3000, 2, dma, QosOp::Set(0)),
            act(0, 1, dma, QosOp::Set(500)),
            act(1000, SYSFS_HOLDER, cpu1, QosOp::Set(100)),
            act(2000, 2, dma, QosOp::Set(99)),
            act(2000, 1, dma, QosOp::Remove),
            act(4000, 2, dma, QosOp::Remove),
        ];
        let steps = cpu_timeline(&platform, &actions);
        let at: Vec<u64> = steps.iter().map(|s| s.at_ns).collect();
        assert_eq!(
            at,
            [0, 0, 1_000_000, 2_000_000, 2_000_000, 3_000_000, 4_000_000]
        );
        assert_eq!(steps[0].request, Request::default());
        assert_eq!(steps[1].request.holder.as_deref(), Some("h1"));
        assert_eq!(steps[4].request.holder.as_deref(), Some("h1"));

        let all = names(&["WFI", "C1", "CL"]); // C2 is disabled
        let wfi = names(&["WFI"]);
        let none = 2_000_000_000i64; // PM_QOS_CPU_LATENCY_DEFAULT_VALUE: nothing asked
                                     // Start: no request.
        assert_eq!(
            seen(&steps[0]),
            (
                None,
                vec![
                    (none, all.clone()),
                    (none, all.clone()),
                    (none, wfi.clone())
                ],
                names(&["CL"])
            )
        );
        // h1 asks 500 us: CL's 500 us exit latency equals the limit and is admitted.
        assert_eq!(
            seen(&steps[1]),
            (
                Some(500),
                vec![(500, all.clone()), (500, all.clone()), (500, wfi.clone())],
                names(&["CL"])
            )
        );
        // cpu1's file at 100 us: C1 (100 us) still admitted there, CL not; the cluster needs
        // both CPUs in CL, so it has none left.
        assert_eq!(
            seen(&steps[2]),
            (
                Some(500),
                vec![
                    (500, all.clone()),
                    (100, names(&["WFI", "C1"])),
                    (500, wfi.clone())
                ],
                vec![]
            )
        );
        assert_eq!(steps[2].cpus[1].resume_latency_us, Some(100));
        assert_eq!(steps[2].cpus[0].resume_latency_us, None);
        // h2 asks 99 us: C1 (100 us) is now over on every CPU.
        let wfi_only = vec![(99, wfi.clone()), (99, wfi.clone()), (99, wfi.clone())];
        assert_eq!(seen(&steps[3]), (Some(99), wfi_only.clone(), vec![]));
        // h1 closes its file: h2's 99 us remains.
        assert_eq!(seen(&steps[4]), (Some(99), wfi_only, vec![]));
        // h2 writes 0: WFI stays usable (state 0, the governors' floor) though 1 us > 0.
        assert_eq!(
            seen(&steps[5]),
            (
                Some(0),
                vec![(0, wfi.clone()), (0, wfi.clone()), (0, wfi.clone())],
                vec![]
            )
        );
        // h2 closes: no global limit; cpu1 keeps its own 100 us.
        assert_eq!(
            seen(&steps[6]),
            (
                None,
                vec![(none, all), (100, names(&["WFI", "C1"])), (none, wfi)],
                vec![]
            )
        );
    }

    fn ps(non_operational: bool, entry_lat_us: u32, exit_lat_us: u32) -> PowerState {
        PowerState {
            max_power_mw: 1000.0,
            non_operational,
            entry_lat_us,
            exit_lat_us,
            active_power_mw: None,
            idle_power_mw: None,
        }
    }

    fn write(at_s: u64, value: i64) -> ToleranceWrite {
        ToleranceWrite {
            at: Nanos(at_s * 1_000_000_000),
            value,
            holder: "user".into(),
            written: value.to_string(),
        }
    }

    #[test]
    fn nvme_steps_follow_the_tolerance_and_rebuilt_table() {
        // PS2: ENLAT 1000 + EXLAT 2000 = 3000 us; PS3: 5000 + 20000 = 25000 us.
        let ctrl = NvmeController {
            model: "test".into(),
            npss: 3,
            apsta: true,
            power_states: vec![
                ps(false, 0, 0),
                ps(false, 0, 0),
                ps(true, 1000, 2000),
                ps(true, 5000, 20_000),
            ],
        };
        // v5.14 defaults: limit 100 000 us; primary tolerance 15 000, secondary 100 000.
        let params = ApstParams::default();
        let writes = [
            write(1, 15_000),        // PS3's EXLAT 20 000 > 15 000: PS2 alone (primary)
            write(2, 15_000),        // the same value: nothing moves, nothing sent
            write(3, 1999),          // PS2's EXLAT 2000 > 1999: a table with no target
            write(4, 0),             // 0: APSTE = 0
            write(5, NO_CONSTRAINT), // auto: no limit, PS2 primary and PS3 secondary
        ];
        let steps = nvme_timeline(&ctrl, &params, &writes).unwrap();
        let got: Vec<_> = steps
            .iter()
            .map(|s| {
                (
                    s.at_ns / 1_000_000_000,
                    s.tolerance_us,
                    s.ps_max_latency_us,
                    s.sent,
                    s.targets.clone(),
                    s.apst_off.is_some(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, Some(100_000), Some(100_000), true, vec![2, 3], false),
                (1, Some(15_000), Some(15_000), true, vec![2], false),
                (2, Some(15_000), Some(15_000), false, vec![2], false),
                (3, Some(1999), Some(1999), true, vec![], false),
                (4, Some(0), Some(0), true, vec![], true),
                (5, None, None, true, vec![2, 3], false),
            ]
        );
        // A negative value is what the kernel refuses; its index is reported.
        let bad = [write(1, 500), write(2, -5)];
        assert_eq!(nvme_timeline(&ctrl, &params, &bad).unwrap_err().0, 1);
    }

    #[test]
    fn an_apst_less_controller_is_off_at_every_step() {
        let ctrl = NvmeController {
            model: "no apst".into(),
            npss: 1,
            apsta: false,
            power_states: vec![ps(false, 0, 0), ps(true, 10, 10)],
        };
        let steps = nvme_timeline(&ctrl, &ApstParams::default(), &[write(1, 50)]).unwrap();
        assert!(steps
            .iter()
            .all(|s| !s.sent && s.targets.is_empty() && s.apst_off.is_some()));
    }
}
