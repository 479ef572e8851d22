//! The work a run may ask for ([`Limits`]): an upper bound on each variant's IOs and CPU
//! events, computed before anything runs, and the refusal of a scenario above it at its
//! duration's line.

use crate::error::{shown, InputError};
use crate::input::nvme_source as source;
use crate::input::ufs_preset;
use crate::scenario::{Scenario, DEFAULT_DURATION};
use crate::storage::nvme::service::ServiceModel;
use crate::time::Nanos;
use crate::workload::{self, estimate};

use super::variant::VariantRun;

/// How much work a run may ask for before it is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most IOs a scenario's jobs may issue, all variants together (an upper bound
    /// computed before the run; replayed traces are bounded by their length instead).
    pub max_ios: u64,
}

impl Limits {
    /// 5 x 10^9 IOs: a few minutes on one core at the 30-40 M IOs/s `torpor bench` measures.
    pub const DEFAULT_MAX_IOS: u64 = 5_000_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ios: Self::DEFAULT_MAX_IOS,
        }
    }
}

/// Refuses a scenario whose jobs could issue more than `limits.max_ios` IOs in all.
pub(super) fn check_work(inputs: &[VariantRun], limits: &Limits) -> Result<(), InputError> {
    let mut total: u64 = 0;
    let mut largest = (0, 0); // (IOs, variant)
    for input in inputs {
        let ios = input.max_ios()?;
        total = total.saturating_add(ios);
        largest = largest.max((ios, input.variant));
    }
    if total <= limits.max_ios {
        return Ok(());
    }
    let input = &inputs[largest.1];
    let s = input.scenario();
    let path = input.duration_key();
    let span = input.until(s)?.unwrap_or(DEFAULT_DURATION);
    // What the count is of: CPU tasks' events, a device's IOs, or both.
    let (cpu, device) = inputs.iter().fold((false, false), |(c, d), i| {
        let p = &i.scenario().platform;
        (
            c || p.cpu.is_some(),
            d || p.nvme.is_some() || p.ufs.is_some(),
        )
    });
    let (units, verb) = match (cpu, device) {
        (true, false) => ("CPU events", "take"),
        (true, true) => ("IOs and CPU events", "take"),
        _ => ("IOs", "issue"),
    };
    Err(input.at(
        path,
        format!(
            "this scenario could {verb} up to {:.1e} {units} ({} variant(s); variant {} runs \
             {} and could {verb} {:.1e}), more than the limit of {:.1e} (minutes of wall time); \
             shorten `[run] duration` or raise the limit (`torpor run --max-ios N`)",
            total as f64,
            inputs.len(),
            shown(&input.file.variants()[input.variant].name),
            span,
            largest.0 as f64,
            limits.max_ios as f64,
        ),
    ))
}

impl VariantRun<'_> {
    /// An upper bound on the IOs this variant's jobs issue (its replay is not counted).
    pub(super) fn max_ios(&self) -> Result<u64, InputError> {
        let s = self.scenario();
        let span = self.until(s)?.unwrap_or(Nanos::ZERO);
        // A preset that does not load is reported with its line when the variant runs.
        // With two devices, the workloads' device's.
        let nvme = match s.workload.device.as_deref() {
            Some("ufs") => None,
            _ => s.platform.nvme.as_ref(),
        };
        let service = match (nvme, &s.platform.ufs) {
            (Some(nvme), _) => match nvme.preset.as_deref().map(source::from_preset) {
                Some(Some(Ok(d))) => d.service,
                _ => ServiceModel::CLIENT_DEFAULT,
            },
            // The device stage alone: faster than the whole UFS path, so still a bound.
            (None, Some(ufs)) => match ufs_preset::find(&ufs.preset) {
                Some(Ok(p)) => ServiceModel {
                    read_4k_us: p.service.read_4k_ns as f64 / 1e3,
                    write_4k_us: p.service.write_4k_ns as f64 / 1e3,
                    read_mb_s: p.service.read_stream_bytes_per_s as f64 / 1e6,
                    write_mb_s: p.service.write_stream_bytes_per_s as f64 / 1e6,
                    parallelism: p.service.slots,
                },
                _ => ServiceModel::CLIENT_DEFAULT,
            },
            (None, None) => return Ok(cpu_events(s, span, Nanos::ZERO)),
        };
        let workflow = s.workload.apst_workflow.and_then(workload::apst_workflow);
        let jobs = workflow
            .iter()
            .chain(&s.workload.jobs)
            .chain(self.file_jobs())
            .map(|job| estimate::max_ios(job, span, &service))
            .fold(0, u64::saturating_add);
        // Beside CPUs, the tasks' wake-ups (their IO among them) over the run's duration.
        let tasks = match s.platform.cpu {
            Some(_) => cpu_events(
                s,
                self.until(s)?.unwrap_or(DEFAULT_DURATION),
                estimate::completion_gap(&service),
            ),
            None => 0,
        };
        Ok(jobs.saturating_add(tasks))
    }
}

/// The estimated events of a CPU variant's tasks over `span` ([`estimate::cpu_events`]),
/// counted as IOs are against `--max-ios`.
pub(super) fn cpu_events(s: &Scenario, span: Nanos, completion_gap: Nanos) -> u64 {
    let Ok(tasks) = crate::cpu::task::resolve(&s.workload.tasks) else {
        return 0;
    };
    let hz = s.platform.cpu.as_ref().map_or(250, |c| c.hz);
    estimate::cpu_events(&tasks, hz, span, completion_gap)
}
