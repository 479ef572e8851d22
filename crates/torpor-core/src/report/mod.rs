//! What a scenario run reports: per variant, one section per component present (the IO
//! issued by the workloads, the NVMe drive, the CPUs, the UFS device), each serialised once,
//! here.
//!
//! Sections say what they measured with units in their names (`_us`, `_mw`, `_mj`, `_ns`,
//! `_s`), and what was assumed or dropped (drive notes, iolog lines not sent) travels with
//! the section it concerns.

pub mod apst_table;
pub mod fio;

use serde::Serialize;

use crate::apst::ApstParams;
use crate::metrics::LatencySummary;
use crate::storage::nvme::device::{NvmeStats, Reached};
use crate::time::Nanos;
use crate::trace::block::BlockCounts;
use crate::trace::fio_iolog::IologCounts;
use crate::workload::IoReport;

/// Everything measured in one scenario run.
#[derive(Debug, Serialize)]
pub struct Report {
    pub scenario: String,
    pub variants: Vec<VariantReport>,
}

/// One variant's results: a section per component.
#[derive(Debug, Serialize)]
pub struct VariantReport {
    pub name: String,
    /// Simulated time the results cover.
    pub duration_s: f64,
    pub seed: u64,
    pub io: IoSection,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvme: Option<NvmeSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuSection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ufs: Option<UfsSection>,
    /// CPUs with a device: the whole platform's energy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemSection>,
    /// Events the engine handled (what `torpor bench` rates the whole engine by).
    pub events: u64,
}

/// The whole platform of a run with CPUs and a device: their energies side by side and summed.
#[derive(Debug, Serialize)]
pub struct SystemSection {
    /// Every figure the CPUs' energy needs is known ([`CpuSection::power_known`]); else the
    /// energies and power here leave the unknown part out, and views show them as n/a.
    pub power_known: bool,
    pub cpu_energy_mj: f64,
    pub device_energy_mj: f64,
    pub energy_mj: f64,
    pub avg_power_mw: f64,
}

impl VariantReport {
    /// Fills [`Self::system`] when the variant had CPUs and a device (or two: their energy
    /// adds up), and the UFS device's energy per IO, which needs the workloads' IO count.
    pub fn with_system(mut self) -> Self {
        if let Some(ufs) = &mut self.ufs {
            let ios = self.io.ios;
            ufs.energy_per_io_uj = (ios > 0).then(|| ufs.stats.energy_mj * 1000.0 / ios as f64);
        }
        let device = match (&self.nvme, &self.ufs) {
            (Some(n), Some(u)) => Some(n.stats.energy_mj + u.stats.energy_mj),
            (Some(n), None) => Some(n.stats.energy_mj),
            (None, Some(u)) => Some(u.stats.energy_mj),
            (None, None) => None,
        };
        if let (Some(cpu), Some(device_energy_mj)) = (&self.cpu, device) {
            let energy_mj = cpu.energy_mj + device_energy_mj;
            self.system = Some(SystemSection {
                power_known: cpu.power_known,
                cpu_energy_mj: cpu.energy_mj,
                device_energy_mj,
                energy_mj,
                avg_power_mw: if self.duration_s > 0.0 {
                    energy_mj / self.duration_s
                } else {
                    0.0
                },
            });
        }
        self
    }
}

/// The UFS device and host: the clock-scaling policy it ran, and what it measured.
#[derive(Debug, Serialize)]
pub struct UfsSection {
    /// Preset id.
    pub device: String,
    /// The first clock's frequency at the two levels, Hz, and their gears.
    pub min_hz: u64,
    pub max_hz: u64,
    pub min_gear: u8,
    pub max_gear: u8,
    /// The devfreq parameters, `None` with clock scaling off.
    pub devfreq: Option<DevfreqParams>,
    /// `dev_freq_timeout_ms` (0: off) and when devfreq learns of the boost.
    pub boost_timeout_ms: u32,
    pub boost_notify: crate::storage::ufs::device::BoostNotify,
    /// What the figures rest on (estimates, assumptions).
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub stats: crate::storage::ufs::device::UfsStats,
    /// Energy per IO the workloads completed (`io.ios`, fio's count; a task's own IO is not
    /// in it), uJ; `None` without any. Derived once, when the variant's report is complete
    /// ([`VariantReport::with_system`]).
    pub energy_per_io_uj: Option<f64>,
}

/// The devfreq parameters a UFS run used.
#[derive(Debug, Serialize)]
pub struct DevfreqParams {
    pub profile: crate::ufshcd::scaling::VendorProfile,
    pub polling_ms: u32,
    /// When the first poll comes after a start at time 0, ns: whole jiffies, fired on the
    /// timer wheel (for periods below 63 jiffies, the interval between polls on time).
    pub polling_period_ns: u64,
    pub timer: crate::ufshcd::scaling::TimerKind,
    pub upthreshold: u64,
    pub downdifferential: u64,
    pub rounding: crate::ufshcd::scaling::Rounding,
    pub suspend_on_no_request: bool,
    pub hz: u32,
    /// The form of `devfreq_get_freq_range`, by kernel release.
    pub freq_range: crate::devfreq::RangeVersion,
    /// The highest whole-percent load at which a poll at the max level goes down, and the
    /// lowest at which one at the min level goes up (no QoS limit, no boost; `null`: none).
    pub down_at_or_below_pct: Option<u8>,
    pub up_from_pct: Option<u8>,
}

/// The CPUs of a run: the governor's decisions, residency, misses, energy, and each task's
/// wake-up latency.
#[derive(Debug, Serialize)]
pub struct CpuSection {
    pub platform: String,
    pub governor: String,
    /// The cpufreq governor (`performance`, `powersave`).
    pub cpufreq: String,
    pub hz: u32,
    /// Every idle state and the OPP each cluster runs at has a power figure. When not,
    /// `avg_power_mw` and `energy_mj` leave the unknown part out (a note names it), and views
    /// show them as n/a, never as a number.
    pub power_known: bool,
    pub avg_power_mw: f64,
    pub energy_mj: f64,
    /// Idle periods whose state was too deep (`above`), percent of all.
    pub too_deep_pct: f64,
    /// Idle periods whose state was too shallow (`below`), percent of all.
    pub too_shallow_pct: f64,
    pub wakeup_latency_gmean_us: f64,
    pub notes: Vec<String>,
    pub cpus: Vec<crate::cpu::system::CpuStats>,
    pub tasks: Vec<crate::cpu::system::TaskStats>,
    /// Every task's IO, as the tasks saw it, decomposed (device, irq, exit, sched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<crate::cpu::system::IoPathStats>,
    /// With two devices, the tasks' IO per device.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub io_by_device: Vec<DeviceIoPath>,
    /// The wake-up path the run used (the platform's `[wakeup]`, with its sources).
    pub wakeup: Option<crate::cpu::wake_path::WakePath>,
    /// Changes the device's host driver made to its CPU latency request (ufshcd's vote).
    pub host_latency_votes: u64,
    /// `[run] timeline`: each CPU's lanes (idle states, exit, kernel, running) in the window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timelines: Vec<crate::cpu::system::CpuTimeline>,
    /// `[run] timeline`: the slowest IO a task waited for in the window, step by step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest_io: Option<SlowestIo>,
}

/// The slowest IO a task waited for, with the device that served it named (a figure draws
/// its path from that device's lane).
#[derive(Debug, Serialize)]
pub struct SlowestIo {
    /// `"nvme"` or `"ufs"`: the device's section of the report.
    pub device: String,
    #[serde(flatten)]
    pub path: crate::cpu::system::RequestPath,
}

/// One device's share of the tasks' IO, decomposed.
#[derive(Debug, Serialize)]
pub struct DeviceIoPath {
    /// `"nvme"` or `"ufs"`.
    pub device: String,
    pub path: crate::cpu::system::IoPathStats,
}

impl CpuSection {
    /// The section of CPUs that ran `spec` and measured `r`; `devices`: the run's devices by
    /// slot (their names label the per-device IO).
    pub fn new(
        spec: &crate::cpu::system::CpuRunSpec,
        platform: String,
        mut r: crate::cpu::system::CpuReport,
        devices: &[&str],
    ) -> CpuSection {
        for t in &mut r.tasks {
            t.latency_avg_us = t.latency_avg_ns() / 1000.0;
            if t.responses > 0 {
                t.response_avg_us = t.response_sum_ns as f64 / t.responses as f64 / 1000.0;
            }
            if r.duration_ns > 0 {
                t.work_ms_per_s = t.work_ns as f64 / 1e6 / (r.duration_ns as f64 / 1e9);
            }
        }
        let wakeup = spec.platform.wakeup.clone();
        let path_note = match &wakeup {
            None => "no [wakeup] table: a wake-up costs its state's declared exit latency and \
                     nothing else (no interrupt, IPI or scheduler time), and the residency \
                     counts that full exit"
                .to_string(),
            Some(_) => "wake-ups pay the platform's [wakeup] path (interrupt, IPI, scheduler) \
                        and each state's real entry and exit; the governors see the declared \
                        exit latency, as in the kernel"
                .to_string(),
        };
        let mut notes = vec![
            path_note,
            "entering a state costs the energy its target residency implies (the break-even \
             over the next shallower state)"
                .to_string(),
            format!(
                "cpufreq {}: {}; a burst's stated time is its work at the highest OPP \
                 (ASSUMPTION: work scales with the clock)",
                spec.cpufreq.canonical(),
                match spec.cpufreq {
                    crate::cpufreq::GovernorName::Performance
                    | crate::cpufreq::GovernorName::Powersave => {
                        "each cluster holds the OPP the governor sets at its start for the whole \
                         run"
                    }
                    _ => {
                        "the governor hears the scheduler's utilization (PELT and util_est) at \
                         each enqueue, tick and dequeue, and a switch lands after the cluster's \
                         transition latency (its worst case: an ASSUMPTION)"
                    }
                }
            ),
        ];
        if spec.platform.clusters.iter().any(|c| {
            c.opps.len() > 1
                && c.cpufreq
                    .as_ref()
                    .and_then(|f| f.transition_latency.as_ref())
                    .is_none()
        }) && !matches!(
            spec.cpufreq,
            crate::cpufreq::GovernorName::Performance | crate::cpufreq::GovernorName::Powersave
        ) {
            notes.push(
                "a cluster gives no transition latency (CPUFREQ_ETERNAL): its frequency switches \
                 land at once, and schedutil's default rate limit is the kernel's for an \
                 eternal latency (6.4 s: set rate_limit_us)"
                    .into(),
            );
        }
        let missing: Vec<String> = spec
            .platform
            .clusters
            .iter()
            .flat_map(|c| c.states.iter().map(move |s| (c, s)))
            .filter(|(_, s)| s.power_mw.is_none())
            .map(|(c, s)| format!("{}/{}", c.name, s.name))
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "no power figure for {}: its power is unknown, so the CPUs' power and energy \
                 are shown as n/a (the JSON's figures leave it out)",
                missing.join(", ")
            ));
        }
        // A cluster without OPPs, or an OPP a CPU was busy at, with no power figure.
        let unpowered = |c: &crate::cpu::ClusterSpec| {
            c.opps.is_empty()
                || r.cpus.iter().filter(|s| c.cpus.contains(&s.cpu)).any(|s| {
                    let at = |o: &crate::cpu::system::OppStats| {
                        c.opps.iter().find(|p| p.freq_khz == o.khz)
                    };
                    s.opps
                        .iter()
                        .any(|o| o.time_ns > 0 && at(o).is_none_or(|p| p.power_mw.is_none()))
                })
        };
        let running_unknown = spec.platform.clusters.iter().any(unpowered);
        if running_unknown {
            notes.push(
                "no active power for an OPP a cluster ran at: running power is unknown, so \
                 the CPUs' power and energy are shown as n/a (the JSON's figures leave it out)"
                    .into(),
            );
        }
        let power_known = missing.is_empty() && !running_unknown;
        CpuSection {
            platform,
            governor: spec.governor.canonical().to_string(),
            cpufreq: spec.cpufreq.canonical().to_string(),
            hz: spec.hz,
            power_known,
            avg_power_mw: r.avg_power_mw(),
            energy_mj: r.energy_mj(),
            too_deep_pct: r.too_deep_pct(),
            too_shallow_pct: r.too_shallow_pct(),
            wakeup_latency_gmean_us: r.wakeup_latency_gmean_us(),
            notes,
            cpus: r.cpus,
            tasks: r.tasks,
            io: r.io,
            io_by_device: devices
                .iter()
                .zip(r.io_by_device)
                .map(|(d, path)| DeviceIoPath {
                    device: d.to_string(),
                    path,
                })
                .collect(),
            wakeup,
            host_latency_votes: r.host_latency_votes,
            timelines: r.timelines,
            slowest_io: r.slowest_io.map(|path| SlowestIo {
                device: devices
                    .get(usize::from(path.device))
                    .map_or_else(String::new, |d| d.to_string()),
                path,
            }),
        }
    }
}

/// The IO the workloads issued, fio-style: completion latency (clat) of every IO completed
/// within the run.
#[derive(Debug, Serialize)]
pub struct IoSection {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    /// The completed reads' and writes' counts over the run's duration (0 for a run of no
    /// time).
    pub read_iops: f64,
    pub write_iops: f64,
    pub all: LatencySummary,
    pub read: LatencySummary,
    pub write: LatencySummary,
    /// The latency CDF of every IO: `[latency_us, share at or below]` per non-empty bucket.
    pub cdf: Vec<(f64, f64)>,
    pub workloads: Vec<WorkloadSection>,
    /// What was accepted without effect or assumed while reading the workloads (a fio job
    /// file's `ioengine`, a missing `direct=1`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One workload's share.
#[derive(Debug, Serialize)]
pub struct WorkloadSection {
    pub name: String,
    /// IOs submitted; those still in flight at the end are not in `ios`.
    pub issued: u64,
    pub ios: u64,
    pub bytes: u64,
    /// When its last IO completed, if it finished within the run.
    pub finished_s: Option<f64>,
    /// For an iolog replay: the log's lines by kind, including syncs and trims, which are not
    /// sent.
    pub iolog: Option<IologCounts>,
    /// For a block-trace replay: its requests by kind, including discards and flushes, which
    /// are not sent, and the lines it skipped.
    pub block_trace: Option<BlockCounts>,
    /// For a replay the run's end cut short: the trace's lines it did not reach.
    pub lines_not_reached: Option<u64>,
    /// For a job: what fio would print for it (`torpor run --fio`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<fio::FioJobStats>,
}

impl IoSection {
    /// The section for `io`, measured over `duration`.
    pub fn new(io: &IoReport, duration: Nanos) -> IoSection {
        let mut all = io.read.clone();
        all.merge(&io.write);
        let secs = duration.as_secs_f64();
        let per_second = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        IoSection {
            ios: io.ios,
            bytes: io.bytes,
            iops: per_second(io.ios),
            read_iops: per_second(io.read.count()),
            write_iops: per_second(io.write.count()),
            all: all.summary(),
            cdf: all.cdf(),
            read: io.read.summary(),
            write: io.write.summary(),
            workloads: io
                .per_workload
                .iter()
                .map(|w| WorkloadSection {
                    name: w.name.clone(),
                    issued: w.issued,
                    ios: w.ios,
                    bytes: w.bytes,
                    finished_s: w.finished.map(Nanos::as_secs_f64),
                    iolog: w.iolog,
                    block_trace: w.block_trace,
                    lines_not_reached: None,
                    fio: None,
                })
                .collect(),
            notes: Vec::new(),
        }
    }
}

/// The NVMe drive: what it is, the APST table it ran, and what it measured.
#[derive(Debug, Serialize)]
pub struct NvmeSection {
    /// Preset id, or the dump's file name.
    pub device: String,
    /// What was assumed while reading the device (e.g. APSTA taken as supported).
    pub notes: Vec<String>,
    /// The drive's real entry/exit latencies against its declared ones.
    pub latency_scale: f64,
    /// Transition power as a share of the way from idle to maximum power.
    pub transition_power_share: f64,
    /// The drive's states and requests at the start of the run, when `[run] timeline` asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineSection>,
    pub apst: ApstSection,
    #[serde(flatten)]
    pub stats: NvmeStats,
    /// Energy per request the drive was sent (fio jobs' and tasks' alike), uJ; `None`
    /// without any. Derived here once: views and the Python API read it.
    pub energy_per_io_uj: Option<f64>,
    /// Autonomous transitions into non-operational states per hour of the run (the
    /// endurance proxy), derived once likewise.
    pub transitions_per_hour: f64,
}

impl NvmeSection {
    /// `(energy_per_io_uj, transitions_per_hour)` of a drive that measured `stats`.
    pub fn derived(stats: &NvmeStats) -> (Option<f64>, f64) {
        let hours = stats.duration_ns as f64 / 3.6e12;
        (
            (stats.ios > 0).then(|| stats.energy_mj * 1000.0 / stats.ios as f64),
            if hours > 0.0 {
                stats.transitions as f64 / hours
            } else {
                0.0
            },
        )
    }
}

/// A component's timeline with the names of the states its `state` column indexes.
#[derive(Debug, Serialize)]
pub struct TimelineSection {
    pub states: Vec<String>,
    #[serde(flatten)]
    pub timeline: crate::metrics::Timeline,
}

/// The APST policy as the kernel applied it.
#[derive(Debug, Serialize)]
pub struct ApstSection {
    #[serde(flatten)]
    pub params: ApstParams,
    /// False when the kernel sends no Set Features at all (APSTA = 0, NPSS > 31, ...).
    pub sent: bool,
    /// Why no table was sent.
    pub not_sent_reason: Option<String>,
    /// `{"apste", "entries": [{"ps", "itps", "itpt_ms", "raw"} x 32]}` when sent.
    pub table: Option<serde_json::Value>,
    /// The chain the simulated drive follows from PS0 when idle (its real latencies).
    pub idle_schedule: Vec<Reached>,
    /// Each later reprogramming by a latency-tolerance change (`[[qos.request]]`).
    pub latency_tolerance: Vec<ToleranceChange>,
}

/// A latency-tolerance change as the report shows it: when, the aggregate and the limit it
/// became, and the table sent (as `table` above), or why none was.
#[derive(Debug, Serialize)]
pub struct ToleranceChange {
    pub at_s: f64,
    /// The aggregate the driver's callback received, µs (-1: no constraint).
    pub tolerance_us: i64,
    /// The new `ps_max_latency_us`; `None`: no limit.
    pub ps_max_latency_us: Option<u64>,
    pub sent: bool,
    pub not_sent_reason: Option<String>,
    pub table: Option<serde_json::Value>,
}

impl From<&crate::apst::tolerance::TableChange> for ToleranceChange {
    fn from(c: &crate::apst::tolerance::TableChange) -> Self {
        use crate::apst::ApstConfig;
        let (table, not_sent_reason) = match &c.config {
            ApstConfig::Sent(t) => (Some(apst_table::table_json(t)), None),
            ApstConfig::NotSent { reason } => (None, Some(reason.clone())),
        };
        ToleranceChange {
            at_s: c.at_ns as f64 / 1e9,
            tolerance_us: c.tolerance_us,
            ps_max_latency_us: (c.ps_max_latency_us != u64::MAX).then_some(c.ps_max_latency_us),
            sent: table.is_some(),
            not_sent_reason,
            table,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_s_iops_is_its_completed_ios_over_the_run() {
        // Three reads and one write completed in a 2 s run: by hand 1.5 and 0.5 IOPS, 2 in
        // all; a run of no time has 0, not a division by zero.
        let mut io = IoReport::empty(Nanos::from_secs(2));
        for _ in 0..3 {
            io.read.record(Nanos::from_us(75));
        }
        io.write.record(Nanos::from_us(30));
        io.ios = 4;
        let s = IoSection::new(&io, Nanos::from_secs(2));
        assert_eq!((s.read_iops, s.write_iops, s.iops), (1.5, 0.5, 2.0));
        let none = IoSection::new(&io, Nanos::ZERO);
        assert_eq!((none.read_iops, none.write_iops), (0.0, 0.0));
    }
}
