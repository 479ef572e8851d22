//! What the CPUs did at the start of a run, for a report to draw (`[run] timeline`): each
//! CPU's lane (an idle state, leaving it, kernel work, running a task) over time, and the path
//! of the slowest IO a task waited for in that window.

use serde::Serialize;

use super::{CpuSystem, WakeStamp};
use crate::metrics::Timeline;
use crate::time::Nanos;

/// What a CPU is doing, as a timeline's state: idle states keep their indices, then these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lane {
    Idle(usize),
    /// Leaving idle state `.0` (entry under way and exit).
    Exit(usize),
    /// Interrupt handlers, the scheduler's switch.
    Kernel,
    Running,
}

/// One CPU's timeline with the names its `state` column indexes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuTimeline {
    pub cpu: u32,
    pub states: Vec<String>,
    pub timeline: Timeline,
}

/// The slowest IO a task waited for in the window, step by step (times in s from the run's
/// start, parts in us).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RequestPath {
    pub task: String,
    pub cpu: u32,
    /// The device that served it, by slot (the report names it: [`crate::report::SlowestIo`]).
    #[serde(skip)]
    pub device: u8,
    pub submitted_s: f64,
    pub device_done_s: f64,
    pub irq_us: f64,
    pub exit_us: f64,
    pub running_s: f64,
}

/// The timelines being recorded, with the window's end.
pub(super) struct Recording {
    pub cpus: Vec<CpuTimeline>,
    pub until: Nanos,
    pub slowest: Option<(u64, RequestPath)>,
}

impl<'t> CpuSystem<'t> {
    /// Records every CPU's lanes, and the slowest task IO, from time 0 to `until` (at most
    /// `limit` changes per CPU, the rest counted as dropped).
    pub fn with_timeline(mut self, until: Nanos, limit: usize) -> Self {
        let cpus = self
            .cpus
            .iter()
            .map(|c| CpuTimeline {
                cpu: c.id,
                states: c
                    .stats
                    .states
                    .iter()
                    .map(|s| s.name.clone())
                    .chain(["exit", "kernel", "running"].map(String::from))
                    .collect(),
                timeline: Timeline::new(until, limit),
            })
            .collect();
        self.recording = Some(Recording {
            cpus,
            until,
            slowest: None,
        });
        self
    }

    /// CPU `c` moves to `lane` at `at` (nothing without a recording: the common case, kept
    /// inline).
    #[inline(always)]
    pub(super) fn mark(&mut self, c: usize, at: Nanos, lane: Lane) {
        if self.recording.is_some() {
            self.record_lane(c, at, lane);
        }
    }

    fn record_lane(&mut self, c: usize, at: Nanos, lane: Lane) {
        let Some(rec) = self.recording.as_mut() else {
            return;
        };
        let cpu = &self.cpus[c];
        let n = cpu.view.states.len();
        let (state, mw) = match lane {
            Lane::Idle(s) => (s, cpu.state_mw[s]),
            Lane::Exit(s) => (n, cpu.state_mw[s]),
            Lane::Kernel => (n + 1, cpu.active_mw),
            Lane::Running => (n + 2, cpu.active_mw),
        };
        let timeline = &mut rec.cpus[c].timeline;
        // The switch after an interrupt's handler is kernel work too: one stretch.
        if timeline.state.last() != Some(&(state as u16)) {
            timeline.change(at, state, mw);
        }
    }

    /// Task `t` ran at `now` after an IO whose path `stamp` describes, its wait `wake_ns`.
    pub(super) fn note_request(&mut self, t: usize, stamp: &WakeStamp, now: Nanos) {
        let Some(rec) = self.recording.as_mut() else {
            return;
        };
        let total = stamp.device_ns + (now - stamp.origin).0;
        let submitted = stamp.origin - Nanos(stamp.device_ns);
        if submitted > rec.until || rec.slowest.as_ref().is_some_and(|(best, _)| *best >= total) {
            return;
        }
        let task = &self.tasks[t];
        rec.slowest = Some((
            total,
            RequestPath {
                task: task.spec.name.clone(),
                cpu: task.spec.cpu,
                device: stamp.device,
                submitted_s: submitted.as_secs_f64(),
                device_done_s: stamp.origin.as_secs_f64(),
                irq_us: stamp.irq_ns as f64 / 1e3,
                exit_us: stamp.exit_ns as f64 / 1e3,
                running_s: now.as_secs_f64(),
            },
        ));
    }
}
