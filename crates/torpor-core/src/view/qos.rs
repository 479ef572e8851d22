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
//! (storage/nvme/tolerance.rs rebuilds it when the limit moves, with the builder of
//! storage/nvme/apst.rs), or that APST is off.

use serde::Serialize;

use crate::cpu::platform::{CpuPlatform, StateLevel};
use crate::qos::cpu_latency::{
    CpuLatencyQos, CPU_LATENCY_DEFAULT_US, RESUME_LATENCY_NO_CONSTRAINT_US,
};
use crate::qos::latency_tolerance::NO_CONSTRAINT;
use crate::scenario::qos::{NamedAction, ToleranceWrite};
use crate::storage::nvme::apst::{self, ApstConfig, ApstParams};
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::tolerance::{self, ToleranceDriver};

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
) -> Result<Vec<NvmeStep>, (usize, String)> {
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
        steps.push(nvme_step(&driver, &config, moved.is_some(), w.at.0, request));
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
