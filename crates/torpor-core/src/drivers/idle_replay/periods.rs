//! Stage 1 of the replay: a trace's events rebuilt into idle periods ([`PeriodBuilder`]),
//! each with its wake-up cause, sleep length, next tick, utilization and whether it starts an
//! idle trip, and what was dropped.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::InputError;
use crate::pelt::Pelt;
use crate::trace::ftrace::EventKind;

/// The most timers tracked as pending at once, over all CPUs; more are counted and ignored
/// (a trace that lost the expiry events of many timers would otherwise grow without bound).
pub const MAX_PENDING_TIMERS: usize = 65_536;

/// An hrtimer expiry further than this from the trace clock is on another clock base
/// (`CLOCK_REALTIME`): it cannot be placed on the trace's time line and is ignored.
const CLOCK_BASE_SPAN_NS: u64 = 3_600_000_000_000;

/// The hrtimer function that is the scheduler tick.
const TICK_FUNCTION: &str = "tick_sched_timer";

/// The per-CPU timer interrupt of Arm's architected timer.
const ARCH_TIMER_IRQ: &str = "arch_timer";

/// What woke a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Timer,
    Tick,
    Ipi,
    Irq,
    /// A task on this CPU woken by another CPU (`sched_wakeup`), no interrupt event traced.
    RemoteWakeup,
    /// As `RemoteWakeup`, but seen only as a `sched_waking`: its `target_cpu` is the CPU the
    /// task last ran on, which the wake-up may have moved it from.
    RemoteWaking,
    Unknown,
}

/// Where a period's sleep length came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepFrom {
    /// The earliest timer the trace shows pending on the CPU at entry.
    PendingTimer,
    /// Reconstructed: a timer or the tick woke the CPU, so the wake-up is the next timer.
    TimerWakeup,
    /// Reconstructed: `max(duration, TICK_NSEC)`.
    Assumed,
}

/// One idle period rebuilt from the trace: the governor-independent inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub cpu: u32,
    pub entry_ns: u64,
    pub duration_ns: u64,
    /// The state the traced kernel entered.
    pub actual_state: usize,
    /// Time from entry to the next timer other than the tick (the tick-stopped sleep length).
    pub to_timer_ns: u64,
    pub sleep_from: SleepFrom,
    /// Time from entry to the next tick, if it keeps running.
    pub to_tick_ns: u64,
    pub tick_observed: bool,
    pub cause: Cause,
    /// `sched_cpu_util()` at entry (PELT, 0 without `sched_switch` history).
    pub util: u64,
    pub util_observed: bool,
    /// The period starts an idle trip (the tick is running again).
    pub new_trip: bool,
}

/// Periods the builder could not rebuild.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Dropped {
    /// `cpu_idle` exits of a CPU that was not idle (before its first entry, or twice).
    pub exits_without_entry: u64,
    /// An entry while the CPU was already idle: the earlier period has no exit and is dropped.
    pub entries_without_exit: u64,
    /// Periods whose exit is not after their entry (a timestamp going backwards).
    pub non_positive: u64,
    /// Periods still open when the trace ends.
    pub open_at_end: u64,
    /// Timer starts ignored: on another clock base, a timer-wheel timer before the first
    /// `timer_expire_entry` gave the jiffies clock, or beyond [`MAX_PENDING_TIMERS`].
    pub timers_ignored: u64,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    entry_ns: u64,
    state: u32,
    line: usize,
    to_timer_ns: Option<u64>,
    to_tick_ns: Option<u64>,
    util: u64,
    util_observed: bool,
    new_trip: bool,
    remote_wakeup: bool,
    remote_waking: bool,
    cause: Option<Cause>,
    /// The cause is an `arch_timer` interrupt: an hrtimer expiry that follows names it better.
    cause_from_timer_irq: bool,
}

#[derive(Clone, Copy, Debug)]
struct Closed {
    open: Open,
    wake_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u64,
    expires_ns: u64,
    tick: bool,
}

#[derive(Clone, Debug, Default)]
struct Track {
    open: Option<Open>,
    closed: Option<Closed>,
    /// An idle trip ended (a task was switched in) since the last exit, or none began yet.
    trip_over: bool,
    pelt: Pelt,
    running_since: Option<u64>,
    pelt_history: bool,
    timers: Vec<Pending>,
    capacity: u64,
}

/// Rebuilds idle periods from trace events, one CPU at a time.
pub struct PeriodBuilder {
    tick_ns: u64,
    tracks: Vec<Track>,
    /// Timer id -> the CPU it is pending on.
    where_pending: HashMap<u64, u32>,
    /// `hrtimer_expire_entry`'s `now` minus the trace timestamp: the hrtimer clock's offset.
    hrtimer_offset_ns: i64,
    /// (jiffies, trace ns) at the last `timer_expire_entry`.
    jiffies_at: Option<(u64, u64)>,
    any_switch: bool,
    pub dropped: Dropped,
    /// Kernel-reported `cpu_idle_miss` events per CPU: (above, below).
    pub kernel_misses: Vec<(u64, u64)>,
}

impl PeriodBuilder {
    /// `capacity(cpu)` gives each CPU's capacity for PELT's invariance.
    pub fn new(tick_ns: u64, capacity: impl Fn(u32) -> u64, cpus: u32) -> Self {
        let tracks = (0..cpus)
            .map(|c| Track {
                trip_over: true,
                capacity: capacity(c),
                ..Track::default()
            })
            .collect();
        PeriodBuilder {
            tick_ns,
            tracks,
            where_pending: HashMap::new(),
            hrtimer_offset_ns: 0,
            jiffies_at: None,
            any_switch: false,
            dropped: Dropped::default(),
            kernel_misses: vec![(0, 0); cpus as usize],
        }
    }

    /// The trace had `sched_switch` events: idle trips are observed.
    pub fn saw_sched_switch(&self) -> bool {
        self.any_switch
    }

    fn track(&mut self, cpu: u32) -> &mut Track {
        &mut self.tracks[cpu as usize]
    }

    /// Feeds one event; `emit` receives each finished period (with its line of entry).
    /// The caller has checked every CPU number against the builder's count.
    pub fn on_event(
        &mut self,
        cpu: u32,
        ts: u64,
        line: usize,
        kind: &EventKind<'_>,
        emit: &mut impl FnMut(Period, usize) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        match *kind {
            EventKind::CpuIdle {
                state: Some(s),
                cpu_id,
            } => {
                self.finish_closed(cpu_id, emit)?;
                if self.track(cpu_id).open.take().is_some() {
                    self.dropped.entries_without_exit += 1;
                }
                let open = self.open_at(cpu_id, ts, s, line);
                let t = self.track(cpu_id);
                t.open = Some(open);
                t.trip_over = false;
            }
            EventKind::CpuIdle {
                state: None,
                cpu_id,
            } => {
                let t = self.track(cpu_id);
                match t.open.take() {
                    Some(open) => t.closed = Some(Closed { open, wake_ns: ts }),
                    None => self.dropped.exits_without_entry += 1,
                }
            }
            EventKind::CpuIdleMiss { cpu_id, below, .. } => {
                let m = &mut self.kernel_misses[cpu_id as usize];
                if below {
                    m.1 += 1;
                } else {
                    m.0 += 1;
                }
            }
            EventKind::HrtimerStart {
                hrtimer,
                function,
                expires_ns,
                ..
            } => {
                let at = expires_ns as i128 - i128::from(self.hrtimer_offset_ns);
                if (at - i128::from(ts)).unsigned_abs() > u128::from(CLOCK_BASE_SPAN_NS) {
                    self.dropped.timers_ignored += 1;
                } else {
                    self.start_timer(cpu, hrtimer, at.max(0) as u64, function == TICK_FUNCTION);
                }
            }
            EventKind::HrtimerExpireEntry {
                hrtimer,
                function,
                now_ns,
            } => {
                if now_ns.abs_diff(ts) <= CLOCK_BASE_SPAN_NS {
                    self.hrtimer_offset_ns = now_ns as i64 - ts as i64;
                }
                let tick = function == TICK_FUNCTION;
                if tick {
                    // The tick re-arms itself with `hrtimer_forward`, which traces no start.
                    let next = self
                        .pending_expiry(hrtimer)
                        .unwrap_or(ts)
                        .saturating_add(self.tick_ns)
                        .max(ts.saturating_add(1));
                    self.start_timer(cpu, hrtimer, next, true);
                } else {
                    self.stop_timer(hrtimer);
                }
                self.set_cause(cpu, if tick { Cause::Tick } else { Cause::Timer }, true);
            }
            EventKind::HrtimerCancel { hrtimer } | EventKind::TimerCancel { timer: hrtimer } => {
                self.stop_timer(hrtimer)
            }
            EventKind::TimerStart { timer, expires, .. } => match self.jiffies_at {
                Some((j, at)) => {
                    let d = (expires as i128 - i128::from(j)) * i128::from(self.tick_ns);
                    let when = (i128::from(at) + d).clamp(0, i128::from(u64::MAX)) as u64;
                    self.start_timer(cpu, timer, when, false);
                }
                None => self.dropped.timers_ignored += 1,
            },
            EventKind::TimerExpireEntry { timer, now, .. } => {
                self.jiffies_at = Some((now, ts));
                self.stop_timer(timer);
                self.set_cause(cpu, Cause::Timer, false);
            }
            EventKind::IpiEntry { .. } => self.set_cause(cpu, Cause::Ipi, false),
            EventKind::IrqHandlerEntry { name, .. } => {
                if name == ARCH_TIMER_IRQ {
                    self.set_cause(cpu, Cause::Timer, false);
                    if let Some(o) = self.waking(cpu) {
                        o.cause_from_timer_irq = o.cause == Some(Cause::Timer);
                    }
                } else {
                    self.set_cause(cpu, Cause::Irq, false);
                }
            }
            EventKind::SchedWakeup { target_cpu, .. } if target_cpu != cpu => {
                if let Some(o) = self
                    .tracks
                    .get_mut(target_cpu as usize)
                    .and_then(|t| t.open.as_mut())
                {
                    o.remote_wakeup = true;
                }
            }
            EventKind::SchedWaking { target_cpu, .. } if target_cpu != cpu => {
                if let Some(o) = self
                    .tracks
                    .get_mut(target_cpu as usize)
                    .and_then(|t| t.open.as_mut())
                {
                    o.remote_waking = true;
                }
            }
            EventKind::SchedSwitch {
                prev_pid, next_pid, ..
            } => {
                self.any_switch = true;
                let t = self.track(cpu);
                if next_pid == 0 && prev_pid != 0 {
                    if let Some(since) = t.running_since.take() {
                        t.pelt
                            .stop_running(ts, ts.saturating_sub(since), t.capacity);
                        t.pelt_history = true;
                    }
                } else if prev_pid == 0 && next_pid != 0 {
                    t.pelt.start_running(ts);
                    t.running_since = Some(ts);
                    t.trip_over = true;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Emits every period still waiting for its cause; counts those never closed.
    pub fn finish(
        &mut self,
        emit: &mut impl FnMut(Period, usize) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        for cpu in 0..self.tracks.len() as u32 {
            self.finish_closed(cpu, emit)?;
            if self.track(cpu).open.take().is_some() {
                self.dropped.open_at_end += 1;
            }
        }
        Ok(())
    }

    fn open_at(&mut self, cpu: u32, ts: u64, state: u32, line: usize) -> Open {
        let any_switch = self.any_switch;
        let t = &self.tracks[cpu as usize];
        let mut to_timer: Option<u64> = None;
        let mut to_tick: Option<u64> = None;
        for p in &t.timers {
            let d = p.expires_ns.saturating_sub(ts);
            let slot = if p.tick { &mut to_tick } else { &mut to_timer };
            *slot = Some(slot.map_or(d, |v| v.min(d)));
        }
        Open {
            entry_ns: ts,
            state,
            line,
            to_timer_ns: to_timer,
            to_tick_ns: to_tick,
            util: t.pelt.util_avg().min(t.capacity),
            util_observed: t.pelt_history,
            // Without any sched_switch the trips are unknown: each period is its own.
            new_trip: !any_switch || t.trip_over,
            remote_wakeup: false,
            remote_waking: false,
            cause: None,
            cause_from_timer_irq: false,
        }
    }

    /// The period an interrupt on `cpu` now belongs to: the one it is idle in (kernels whose
    /// driver re-enables interrupts inside `enter` trace the handler before the exit), else
    /// the one that ended last and awaits its cause.
    fn waking(&mut self, cpu: u32) -> Option<&mut Open> {
        let t = &mut self.tracks[cpu as usize];
        match (&mut t.open, &mut t.closed) {
            (Some(o), _) => Some(o),
            (None, Some(c)) => Some(&mut c.open),
            (None, None) => None,
        }
    }

    fn set_cause(&mut self, cpu: u32, cause: Cause, hrtimer: bool) {
        if let Some(o) = self.waking(cpu) {
            if o.cause.is_none() || (hrtimer && o.cause_from_timer_irq) {
                o.cause = Some(cause);
                o.cause_from_timer_irq = false;
            }
        }
    }

    fn finish_closed(
        &mut self,
        cpu: u32,
        emit: &mut impl FnMut(Period, usize) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let Some(c) = self.track(cpu).closed.take() else {
            return Ok(());
        };
        let o = c.open;
        if c.wake_ns <= o.entry_ns {
            self.dropped.non_positive += 1;
            return Ok(());
        }
        let duration = c.wake_ns - o.entry_ns;
        let cause = o.cause.unwrap_or(if o.remote_wakeup {
            Cause::RemoteWakeup
        } else if o.remote_waking {
            Cause::RemoteWaking
        } else {
            Cause::Unknown
        });
        let (to_timer, sleep_from) = match o.to_timer_ns {
            Some(t) => (t, SleepFrom::PendingTimer),
            None if matches!(cause, Cause::Timer | Cause::Tick) => {
                (duration, SleepFrom::TimerWakeup)
            }
            None => (duration.max(self.tick_ns), SleepFrom::Assumed),
        };
        let period = Period {
            cpu,
            entry_ns: o.entry_ns,
            duration_ns: duration,
            actual_state: o.state as usize,
            to_timer_ns: to_timer,
            sleep_from,
            to_tick_ns: o.to_tick_ns.unwrap_or(self.tick_ns),
            tick_observed: o.to_tick_ns.is_some(),
            cause,
            util: o.util,
            util_observed: o.util_observed,
            new_trip: o.new_trip,
        };
        emit(period, o.line)
    }

    fn pending_expiry(&self, id: u64) -> Option<u64> {
        let cpu = *self.where_pending.get(&id)?;
        self.tracks[cpu as usize]
            .timers
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.expires_ns)
    }

    fn start_timer(&mut self, cpu: u32, id: u64, expires_ns: u64, tick: bool) {
        self.stop_timer(id);
        if self.where_pending.len() >= MAX_PENDING_TIMERS {
            self.dropped.timers_ignored += 1;
            return;
        }
        self.where_pending.insert(id, cpu);
        self.tracks[cpu as usize].timers.push(Pending {
            id,
            expires_ns,
            tick,
        });
    }

    fn stop_timer(&mut self, id: u64) {
        if let Some(cpu) = self.where_pending.remove(&id) {
            let timers = &mut self.tracks[cpu as usize].timers;
            if let Some(i) = timers.iter().position(|p| p.id == id) {
                timers.swap_remove(i);
            }
        }
    }
}
