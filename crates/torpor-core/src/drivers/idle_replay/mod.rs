//! `torpor idle replay`: counterfactual replay of a real ftrace through cpuidle governors.
//!
//! Models what each governor would have chosen for the idle periods a real machine had, with
//! the workload held fixed (spec-cpu.md §1, §5, §9). Two stages, both streaming:
//!
//! 1. **Rebuild the periods** ([`PeriodBuilder`]). An idle period of a CPU runs from its
//!    `cpu_idle state=s` to its next `cpu_idle` exit. Its wake-up cause is the first of
//!    `hrtimer_expire_entry` (the tick when the function is `tick_sched_timer`, a timer
//!    otherwise), `timer_expire_entry`, `ipi_entry` and `irq_handler_entry` on that CPU from its
//!    entry until its next entry (mainline traces the exit before it re-enables interrupts, so
//!    the handler follows the exit; older drivers re-enabled them inside `enter`, so it comes
//!    before); an `arch_timer` interrupt counts as a timer unless an hrtimer expiry follows.
//!    Without any of these, a `sched_wakeup` of a task on that CPU issued by another CPU during
//!    the period makes it a remote wake-up; else the cause is unknown.
//!    The sleep length at entry is the earliest timer pending on that CPU (`hrtimer_start`
//!    expiries, `timer_start` jiffies converted with the tick, removed by cancel and expiry);
//!    where the trace shows no pending timer it is RECONSTRUCTED: the wake-up itself when a timer
//!    or the tick woke the CPU, else `max(idle duration, TICK_NSEC)` (the next timer was no
//!    earlier than the wake-up; at least a tick away is assumed). The next tick is the pending
//!    `tick_sched_timer` when traced, else a full tick period away (the phase is unknown). The
//!    utilization is PELT (`pelt::Pelt`) over the trace's `sched_switch` run/idle history,
//!    else 0. A `sched_switch` from the idle task ends an idle trip (the tick restarts).
//!    Every input says in the report how many periods had it observed and how many had it
//!    reconstructed, and how.
//! 2. **Replay** ([`Replayer`]). Each CPU has its own governor instance, `Device` and `Kernel`
//!    per governor. For each period: `select` with the rebuilt inputs (the tick state follows the
//!    governor's own `stop_tick` within a trip, as the idle loop keeps it); the chosen state is
//!    entered for the SAME duration (the wake-up belongs to the workload); the measured residency
//!    is that duration plus the chosen state's exit latency (the model the closed-loop
//!    simulation uses: the kernel measures around `enter`, which includes the exit); the core's
//!    above/below classification (§5, [`crate::cpuidle::classify`]); `reflect`. The trace's own choices
//!    (the "actual" column) are classified the same way.
//!
//! What the fixed-duration model leaves out, and the report counts where it can: a governor
//! that keeps the tick while the period is longer than the time to the tick would have had a
//! tick wake-up first (`tick_before_wakeup`); a polling state would have stopped at its poll
//! limit; a governor's choice does not move the real wake-up.
//!
//! Energy has two parts, which add up to each column's total:
//! * **idle**: each state's power over the period and through the exit latency, plus the
//!   state's entry-and-exit energy; a cluster-level state is charged at the deepest CPU-level
//!   state's power (the cluster powering down needs every CPU of it there at once, which a
//!   per-CPU replay does not track);
//! * **active**: each CPU's traced running time, the same in every column (the workload is held
//!   fixed). Running time is what [`crate::pstates`] counts as P-state residency: from a
//!   `cpu_idle` exit (or, before the CPU's first `cpu_idle` event, from a `cpu_frequency`
//!   event) to the next entry. Time at a frequency a `cpu_frequency` event gave is charged at
//!   that OPP's power (the platform's `[[cluster.opp]]` figures); time at an unknown frequency
//!   (before the CPU's first `cpu_frequency` event, or all of it in a trace without them) and
//!   time at a frequency the platform lists no power for are charged at the OPP the
//!   `performance` governor holds (the policy's maximum), which is how torpor's simulation
//!   charges a running CPU without DVFS. The report counts each kind of time and says which
//!   rule it used.
//!
//! Memory is constant in the trace's length: per CPU one open and one closed period, the timers
//! pending on it (at most [`MAX_PENDING_TIMERS`] in all), a PELT signal; per CPU and governor
//! the governor's own state and fixed-size accumulators.
//!
//! The parts: `periods` (stage 1), `layout` (the clusters' tables), `replayer` (stage 2 and its
//! columns), `summary` (what a column holds), `active` (the running time and its energy); this
//! file reads the trace, drives both stages and writes the report and its notes.

use std::io::BufRead;
use std::path::Path;

use serde::Serialize;

use crate::cpu::platform::CpuPlatform;
use crate::cpuidle::GovernorName;
use crate::error::{shown, InputError};
use crate::pstates::PstateTracker;
use crate::trace::ftrace::{EventKind, FtraceCounts, FtraceFormat, FtraceReader};
use crate::trace::source::EventSource;
use crate::user_file;

mod active;
mod layout;
mod periods;
mod replayer;
mod summary;
#[cfg(test)]
mod tests;

pub use active::{ActiveTime, CpuActive};
pub use layout::{ClusterTable, Layout};
pub use periods::{Cause, Dropped, Period, PeriodBuilder, SleepFrom, MAX_PENDING_TIMERS};
pub use replayer::{InputCounts, Replayer};
pub use summary::{Column, CpuSummary, KernelMisses, StateShare, Summary};

use active::{active_note, active_time};
use replayer::cluster_of;

/// The governors `torpor idle replay` runs unless told otherwise.
pub const DEFAULT_GOVERNORS: &[&str] = &["menu", "teo", "teo-util", "oracle"];

/// How one input of the governors was obtained.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct InputSource {
    pub input: &'static str,
    /// Periods where the trace gave it.
    pub observed: u64,
    /// Periods where it was reconstructed, and how.
    pub reconstructed: u64,
    pub how: String,
}

/// One state of a cluster's table, as shown.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StateRow {
    pub name: String,
    pub exit_latency_ns: i64,
    pub target_residency_ns: i64,
    pub power_mw: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClusterRow {
    pub name: String,
    pub cpus: Vec<u32>,
    pub capacity: u64,
    pub states: Vec<StateRow>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlatformInfo {
    /// `preset`, `platform` (a file) or `trace` (an idlestat header).
    pub from: &'static str,
    pub id: Option<String>,
    pub hz: u32,
    pub hz_from: &'static str,
    pub tick_ns: u64,
    pub exit_latency_from: &'static str,
    pub clusters: Vec<ClusterRow>,
}

/// Wake-up causes over all periods.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct WakeCauses {
    pub timer: u64,
    pub tick: u64,
    pub ipi: u64,
    pub irq: u64,
    pub remote_wakeup: u64,
    /// Remote wake-ups seen only as a `sched_waking` (its `target_cpu`: where the task last
    /// ran; the wake-up may have moved it).
    pub remote_waking: u64,
    pub unknown: u64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayReport {
    pub file: String,
    pub format: FtraceFormat,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub platform: PlatformInfo,
    pub periods: u64,
    pub wake_causes: WakeCauses,
    /// Each governor input: observed or reconstructed, with counts.
    pub inputs: Vec<InputSource>,
    pub dropped: Dropped,
    /// What the traced kernel chose, classified as the replayed governors are.
    pub actual: Column,
    /// The running time behind every column's active energy.
    pub active: ActiveTime,
    /// Each governor's column, by the name it was asked by.
    #[serde(serialize_with = "as_map")]
    pub governors: Vec<(String, Column)>,
    pub trace: FtraceCounts,
    pub notes: Vec<String>,
}

fn as_map<S: serde::Serializer>(v: &[(String, Column)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, c) in v {
        m.serialize_entry(k, c)?;
    }
    m.end()
}

/// How the replay is asked for.
#[derive(Clone, Debug)]
pub struct IdleReplayOptions {
    /// Each governor as the user named it, and the variant.
    pub governors: Vec<(String, GovernorName)>,
    /// `CONFIG_HZ`, when the user gave it.
    pub hz: Option<u32>,
}

/// The `CONFIG_HZ` assumed when none is given: Android's and most distributions'.
pub const DEFAULT_HZ: u32 = 250;

/// Parses `menu,teo,...`.
pub fn parse_governors(list: &str) -> Result<Vec<(String, GovernorName)>, String> {
    let mut out: Vec<(String, GovernorName)> = Vec::new();
    for name in list.split(',').map(str::trim) {
        let g = GovernorName::parse(name)?;
        if out.iter().any(|(_, h)| *h == g) {
            return Err(format!(
                "governor {} is named twice (as another name of the same variant, perhaps)",
                shown(name)
            ));
        }
        out.push((name.to_string(), g));
    }
    Ok(out)
}

/// Resolves `--platform`: a file if one exists at that path, else a preset id.
pub fn load_platform(spec: &str) -> Result<(CpuPlatform, &'static str), InputError> {
    let path = Path::new(spec);
    if path.exists() {
        let text = user_file::read_text(
            path,
            spec,
            "a CPU platform TOML (docs/cpu-platform.md)",
            user_file::MAX_DUMP_BYTES,
            user_file::Decoding::Strict,
        )?;
        if crate::input::lisa_platform::sniff(&text.text) {
            let lisa = crate::input::lisa_platform::LisaPlatform::parse(spec, &text.text)?;
            return Err(InputError::whole(spec, lisa.replay_refusal()));
        }
        return Ok((CpuPlatform::parse(spec, &text.text)?, "platform"));
    }
    match crate::input::cpu_preset::find(spec) {
        Some(p) => Ok((p?, "preset")),
        None => Err(InputError::whole(
            spec,
            format!(
                "no such file and no built-in CPU platform of that id; expected a CPU platform \
                 TOML or a preset id; {}",
                crate::input::cpu_preset::suggestion(spec)
            ),
        )),
    }
}

/// Replays the trace at `path` (`-`: standard input; a pipe or a file, in any format:
/// `trace::source::open`), with `platform` a preset id or a platform TOML.
pub fn replay_file(
    path: &Path,
    platform: Option<&str>,
    options: &IdleReplayOptions,
) -> Result<ReplayReport, InputError> {
    let loaded = platform.map(load_platform).transpose()?;
    let trace = crate::trace::source::open(path)?;
    let platform = loaded.as_ref().map(|(p, from)| (p, *from));
    from_source(trace, &crate::trace::source::label(path), platform, options)
}

/// Replays a trace read from `reader` (`label` names it in errors).
pub fn from_reader<R: BufRead>(
    reader: R,
    label: &str,
    platform: Option<(&CpuPlatform, &'static str)>,
    options: &IdleReplayOptions,
) -> Result<ReplayReport, InputError> {
    from_source(FtraceReader::new(reader, label)?, label, platform, options)
}

/// Replays the events of `trace`, text or trace.dat.
pub fn from_source<S: EventSource>(
    mut trace: S,
    label: &str,
    platform: Option<(&CpuPlatform, &'static str)>,
    options: &IdleReplayOptions,
) -> Result<ReplayReport, InputError> {
    let range = crate::scenario::HZ_RANGE;
    if let Some(hz) = options.hz.filter(|hz| !range.contains(hz)) {
        return Err(InputError::whole(
            "hz",
            format!(
                "expected the traced kernel's CONFIG_HZ, {} to {}, got {hz}",
                range.start(),
                range.end()
            ),
        ));
    }
    replay_events(&mut trace, label, platform, options).map_err(|e| trace.locate(e))
}

fn replay_events<S: EventSource>(
    trace: &mut S,
    label: &str,
    platform: Option<(&CpuPlatform, &'static str)>,
    options: &IdleReplayOptions,
) -> Result<ReplayReport, InputError> {
    let header = trace.header().clone();
    let hz = options.hz.unwrap_or(DEFAULT_HZ);
    let tick_ns = 1_000_000_000 / u64::from(hz.max(1));
    let mut notes = Vec::new();
    let layout = match platform {
        Some((p, from)) => {
            if header.states.is_some() {
                notes.push("the platform replaces the trace's own C-state table".into());
            }
            Layout::from_platform(p, tick_ns as i64, from)
        }
        None => Layout::from_header(&header, tick_ns as i64).ok_or_else(|| {
            InputError::whole(
                label,
                "the trace carries no C-state table (only idlestat trace files do); give \
                 --platform with the traced machine's CPU platform: a preset id (`torpor \
                 devices` lists them) or a platform TOML (`torpor probe` writes one)",
            )
        })?,
    };
    if let Some(n) = header.cpus {
        if let Some(cpu) =
            (0..n).find(|&c| !matches!(layout.cpu_cluster.get(c as usize), Some(Some(_))))
        {
            notes.push(format!(
                "the trace header says {n} CPUs but the platform has no CPU {cpu}: such a CPU's \
                 idle events stop the replay"
            ));
        }
    }
    let cpus = header
        .cpus
        .unwrap_or(0)
        .max(layout.cpu_cluster.len() as u32);
    let platform_info = PlatformInfo {
        from: layout.from,
        id: layout.id.clone(),
        hz,
        hz_from: if options.hz.is_some() {
            "given"
        } else {
            "assumed"
        },
        tick_ns,
        exit_latency_from: layout.exit_latency_from,
        clusters: layout
            .clusters
            .iter()
            .enumerate()
            .map(|(k, c)| ClusterRow {
                name: c.name.clone(),
                cpus: (0..layout.cpu_cluster.len() as u32)
                    .filter(|&cpu| layout.cpu_cluster[cpu as usize] == Some(k))
                    .collect(),
                capacity: c.view.capacity,
                states: c
                    .view
                    .states
                    .iter()
                    .enumerate()
                    .map(|(i, s)| StateRow {
                        name: s.name.clone(),
                        exit_latency_ns: s.exit_latency_ns,
                        target_residency_ns: s.target_residency_ns,
                        power_mw: c.state_mw.as_ref().map(|m| m[i]),
                    })
                    .collect(),
            })
            .collect(),
    };
    let capacities: Vec<u64> = (0..cpus as usize)
        .map(|c| {
            layout
                .cpu_cluster
                .get(c)
                .copied()
                .flatten()
                .map_or(1024, |k| layout.clusters[k].view.capacity)
        })
        .collect();
    let cpu_cluster = layout.cpu_cluster.clone();
    let mut builder = PeriodBuilder::new(tick_ns, |c| capacities[c as usize], cpus);
    // Each CPU's running time and the frequencies it ran at, for the active energy.
    let mut running = PstateTracker::new(0, Vec::new());
    let mut replayer = Replayer::new(layout, options.governors.clone(), label)?;
    let (mut first_ns, mut last_ns) = (None, None);
    let mut periods = 0u64;
    let mut emit = |p: Period, line: usize| {
        periods += 1;
        replayer.replay(p, label, line)
    };
    while let Some(ev) = trace.next_event()? {
        first_ns.get_or_insert(ev.timestamp_ns);
        last_ns = Some(ev.timestamp_ns);
        // CPU numbers a header-less trace names beyond the platform: the reader bounds them by
        // MAX_CPUS, the builder by its table.
        let beyond = |c: u32| c >= cpus;
        let named = match ev.kind {
            EventKind::CpuIdle { cpu_id, .. }
            | EventKind::CpuIdleMiss { cpu_id, .. }
            | EventKind::CpuFrequency { cpu_id, .. } => cpu_id,
            _ => ev.cpu,
        };
        if let EventKind::CpuIdle {
            state: Some(_),
            cpu_id,
        } = ev.kind
        {
            cluster_of(&cpu_cluster, cpu_id, label, ev.line)?;
        }
        if beyond(ev.cpu) || beyond(named) {
            continue;
        }
        match ev.kind {
            EventKind::CpuIdle { state, cpu_id } => {
                running.cpu_idle(ev.timestamp_ns, cpu_id, state.is_some())
            }
            EventKind::CpuFrequency { khz, cpu_id } => {
                running.cpu_frequency(ev.timestamp_ns, cpu_id, khz)
            }
            _ => {}
        }
        builder.on_event(ev.cpu, ev.timestamp_ns, ev.line, &ev.kind, &mut emit)?;
    }
    builder.finish(&mut emit)?;
    let active = active_time(&replayer.layout, &running);
    let (actual, govs) = replayer.columns(&builder.kernel_misses, &active);
    let c = &replayer.counts;
    let inputs = input_sources(c, periods, tick_ns, builder.saw_sched_switch());
    if options.hz.is_none() {
        notes.push(format!(
            "HZ={hz} assumed: the trace does not carry CONFIG_HZ (--hz to change)"
        ));
    }
    if actual.total.idle_energy_mj.is_none() {
        notes.push(
            "idle energy is not available: the platform gives no power for some idle state".into(),
        );
    }
    notes.push(active_note(&active));
    notes.push(
        "residency model: the real idle duration plus the chosen state's exit latency (the \
         wake-up time is the workload's and does not move)"
            .into(),
    );
    notes.push(
        "latency limit: none (PM QoS is not in the trace); nr_iowait: 0; polling states never \
         hit their limit"
            .into(),
    );
    Ok(ReplayReport {
        file: label.to_string(),
        format: header.format,
        first_ns,
        last_ns,
        platform: platform_info,
        periods,
        wake_causes: WakeCauses {
            timer: c.cause_timer,
            tick: c.cause_tick,
            ipi: c.cause_ipi,
            irq: c.cause_irq,
            remote_wakeup: c.cause_remote_wakeup,
            remote_waking: c.cause_remote_waking,
            unknown: c.cause_unknown,
        },
        inputs,
        dropped: builder.dropped.clone(),
        actual,
        active,
        governors: govs,
        trace: trace.counts(),
        notes,
    })
}

fn input_sources(c: &InputCounts, periods: u64, tick_ns: u64, trips: bool) -> Vec<InputSource> {
    let timer_woken = c.cause_timer + c.cause_tick;
    vec![
        InputSource {
            input: "sleep_length",
            observed: c.sleep_pending_timer,
            reconstructed: c.sleep_timer_wakeup + c.sleep_assumed,
            how: format!(
                "observed: the earliest hrtimer/timer pending on the CPU at entry (hrtimer_start, \
                 timer_start; removed by cancel and expiry); reconstructed where none was \
                 pending in the trace: {} from the wake-up itself (a timer or the tick woke the \
                 CPU), {} as max(idle duration, TICK_NSEC = {tick_ns} ns) (woken otherwise or \
                 by an unknown cause: the next timer was no earlier than the wake-up, at least a \
                 tick away assumed)",
                c.sleep_timer_wakeup, c.sleep_assumed
            ),
        },
        InputSource {
            input: "next_tick",
            observed: c.tick_observed,
            reconstructed: periods - c.tick_observed,
            how: "observed: the pending tick_sched_timer; reconstructed: a full tick period after \
                  entry (the tick's phase is not in the trace)"
                .into(),
        },
        InputSource {
            input: "wake_cause",
            observed: periods - c.cause_unknown,
            reconstructed: c.cause_unknown,
            how: format!(
                "observed: the first hrtimer_expire_entry / timer_expire_entry / ipi_entry / \
                 irq_handler_entry on the CPU from the period's entry to its next entry \
                 ({timer_woken} by a timer or the tick), or a sched_wakeup of a task on it from another CPU; unknown: none of \
                 these (counts as not a timer: no tick flag for reflect)"
            ),
        },
        InputSource {
            input: "utilization",
            observed: c.util_observed,
            reconstructed: periods - c.util_observed,
            how: "observed: PELT over the CPU's sched_switch run/idle history; reconstructed: 0 \
                  before a CPU's first switch to idle (or without sched_switch events)"
                .into(),
        },
        InputSource {
            input: "idle_trip",
            observed: if trips { periods } else { 0 },
            reconstructed: if trips { 0 } else { periods },
            how: format!(
                "observed: a sched_switch from the idle task ends a trip (the tick restarts); \
                 reconstructed without sched_switch: each period its own trip; {} periods \
                 started a trip",
                c.new_trips
            ),
        },
    ]
}
