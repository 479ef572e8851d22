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

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Serialize;

use crate::cpu::platform::{CpuPlatform, StateLevel};
use crate::cpuidle::{Device, Governor, GovernorName, Kernel, Platform, MAX_STATES};
use crate::error::{shown, InputError};
use crate::pelt::Pelt;
use crate::pstates::PstateTracker;
use crate::trace::ftrace::{EventKind, FtraceCounts, FtraceFormat, FtraceHeader, FtraceReader};
use crate::trace::source::EventSource;
use crate::user_file;

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

/// The governors `torpor idle replay` runs unless told otherwise.
pub const DEFAULT_GOVERNORS: &[&str] = &["menu", "teo", "teo-util", "oracle"];

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
    fn active_mw(&self, khz: u64) -> Option<f64> {
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

/// One state's share of a column.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StateShare {
    pub index: usize,
    pub name: String,
    pub entries: u64,
    pub time_ns: u64,
    pub entries_pct: f64,
}

/// One column (a governor, or the traced kernel) for one CPU or in total.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub periods: u64,
    pub too_deep: u64,
    pub too_shallow: u64,
    pub too_deep_pct: f64,
    pub too_shallow_pct: f64,
    pub states: Vec<StateShare>,
    /// The chosen states' exit latencies: the wake-up latency the choice adds.
    pub added_latency_ns: u64,
    pub added_latency_mean_ns: f64,
    /// Idle energy over the periods (state power x (duration + exit latency) + entry-and-exit
    /// energy); `None` where the platform has no power for some idle state.
    pub idle_energy_mj: Option<f64>,
    /// Active energy over the traced running time (the same in every column); `None` where the
    /// platform has no power for the OPP it needs.
    pub active_energy_mj: Option<f64>,
    /// `idle_energy_mj + active_energy_mj`, when both are known.
    pub energy_mj: Option<f64>,
    /// Periods in which the governor kept the tick running (not for the traced kernel).
    pub tick_kept: Option<u64>,
    /// Of those, periods longer than the time to the next tick: the counterfactual CPU would
    /// have had a tick wake-up first, which the fixed-duration replay does not play.
    pub tick_before_wakeup: Option<u64>,
    /// `cpu_idle_miss` events of the traced kernel: (above = too deep, below = too shallow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_reported: Option<KernelMisses>,
}

impl Summary {
    /// Sets the active part of the energy and the total.
    fn add_active(&mut self, active_mj: Option<f64>) {
        self.active_energy_mj = active_mj;
        self.energy_mj = self.idle_energy_mj.zip(active_mj).map(|(i, a)| i + a);
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelMisses {
    pub too_deep: u64,
    pub too_shallow: u64,
}

/// A CPU's summary.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct CpuSummary {
    pub cpu: u32,
    pub cluster: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// A column: the total, then per CPU.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Column {
    #[serde(flatten)]
    pub total: Summary,
    pub per_cpu: Vec<CpuSummary>,
}

/// One state of a cluster as booking a period in it needs it, worked out once per cluster so
/// that the per-period path reads one small record instead of the state table, the disabled
/// states and the power table.
#[derive(Clone, Copy, Debug, Default)]
struct StateCost {
    /// The exit latency (a negative one as 0): the latency the choice adds, the part of the
    /// residency the energy charges beyond the duration, and of the traced kernel's measured
    /// residency.
    exit_ns: u64,
    /// What a replayed governor's measured residency adds to the duration: the exit latency,
    /// none for a polling state (it stops when the wake-up comes).
    measured_exit_ns: u64,
    polling: bool,
    /// `classify` in this state as two bounds on the measured residency (compared as the
    /// `i64` it compares): below `too_deep_below` too deep, above `too_shallow_above` too
    /// shallow. Both hold for every device of the replay: each starts from the cluster's
    /// disabled states and no governor changes them.
    too_deep_below: i64,
    too_shallow_above: i64,
    /// Power (mW) and entry-and-exit energy (mJ), when the cluster has power figures.
    mw: f64,
    transition_mj: f64,
}

impl StateCost {
    fn new(table: &ClusterTable, i: usize) -> StateCost {
        let states = &table.view.states;
        let enabled = |j: &usize| !table.disabled.get(*j).copied().unwrap_or(false);
        let (exit, target) = (states[i].exit_latency_ns, states[i].target_residency_ns);
        // Too deep: residency < target, with an enabled shallower state.
        let too_deep_below = if (0..i).any(|j| enabled(&j)) {
            target
        } else {
            i64::MIN
        };
        // Too shallow: residency >= target, residency > exit and residency - exit >= the next
        // enabled deeper state's target, i.e. residency >= max(target, exit + max(1, that)).
        let too_shallow_above = (i + 1..states.len()).find(enabled).map_or(i64::MAX, |j| {
            let from = i128::from(target)
                .max(i128::from(exit) + i128::from(states[j].target_residency_ns.max(1)));
            i64::try_from(from - 1).unwrap_or(i64::MAX)
        });
        let exit_ns = exit.max(0) as u64;
        StateCost {
            exit_ns,
            measured_exit_ns: if states[i].polling { 0 } else { exit_ns },
            polling: states[i].polling,
            too_deep_below,
            too_shallow_above,
            mw: table.state_mw.as_ref().map_or(0.0, |m| m[i]),
            transition_mj: table.transition_mj.get(i).copied().unwrap_or(0.0),
        }
    }
}

/// A cluster's per-state costs and what the replay reads of its table per period.
#[derive(Clone, Debug)]
struct ClusterCosts {
    states: [StateCost; MAX_STATES],
    tick_ns: u64,
    capacity: u64,
}

impl ClusterCosts {
    fn new(table: &ClusterTable) -> ClusterCosts {
        let mut states = [StateCost::default(); MAX_STATES];
        for (i, s) in states.iter_mut().enumerate().take(table.view.state_count()) {
            *s = StateCost::new(table, i);
        }
        ClusterCosts {
            states,
            tick_ns: table.view.tick_ns.max(0) as u64,
            capacity: table.view.capacity,
        }
    }
}

/// Fixed-size per-CPU accumulators of one column (its period count is the sum of `entries`).
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    too_deep: u64,
    too_shallow: u64,
    entries: [u64; MAX_STATES],
    time_ns: [u64; MAX_STATES],
    latency_ns: u64,
    energy_mj: f64,
    tick_kept: u64,
    tick_before_wakeup: u64,
}

impl Acc {
    fn add(&mut self, o: &Acc) {
        self.too_deep += o.too_deep;
        self.too_shallow += o.too_shallow;
        for i in 0..MAX_STATES {
            self.entries[i] += o.entries[i];
            self.time_ns[i] += o.time_ns[i];
        }
        self.latency_ns += o.latency_ns;
        self.energy_mj += o.energy_mj;
        self.tick_kept += o.tick_kept;
        self.tick_before_wakeup += o.tick_before_wakeup;
    }

    /// Books one period in state `idx` (`s`) with its measured residency, classified as the
    /// cpuidle core does (spec-cpu.md §5, [`crate::cpuidle::classify`]). Counts add 0 or 1 rather than
    /// branch: the misses follow the workload, which no predictor learns. `energy`: the report
    /// shows energy (every cluster has power figures); otherwise it is not summed.
    #[inline]
    fn book(&mut self, idx: usize, s: &StateCost, duration: u64, residency: u64, energy: bool) {
        let diff = residency as i64;
        self.entries[idx] += 1;
        self.time_ns[idx] += duration;
        self.latency_ns += s.exit_ns;
        self.too_deep += u64::from(diff < s.too_deep_below);
        self.too_shallow += u64::from(diff > s.too_shallow_above);
        if energy {
            // The simulator's model: the state's power through the exit too (the residency
            // includes it), plus the state's entry-and-exit energy. mW x ns = 1e-9 mJ.
            self.energy_mj += s.mw * (duration + s.exit_ns) as f64 * 1e-9 + s.transition_mj;
        }
    }

    fn summary(&self, names: &[String], energy: bool, governor: bool) -> Summary {
        let periods: u64 = self.entries.iter().sum();
        let pct = |n: u64| {
            if periods == 0 {
                0.0
            } else {
                100.0 * n as f64 / periods as f64
            }
        };
        Summary {
            periods,
            too_deep: self.too_deep,
            too_shallow: self.too_shallow,
            too_deep_pct: pct(self.too_deep),
            too_shallow_pct: pct(self.too_shallow),
            states: names
                .iter()
                .enumerate()
                .map(|(i, name)| StateShare {
                    index: i,
                    name: name.clone(),
                    entries: self.entries[i],
                    time_ns: self.time_ns[i],
                    entries_pct: pct(self.entries[i]),
                })
                .collect(),
            added_latency_ns: self.latency_ns,
            added_latency_mean_ns: if periods == 0 {
                0.0
            } else {
                self.latency_ns as f64 / periods as f64
            },
            idle_energy_mj: energy.then_some(self.energy_mj),
            active_energy_mj: None,
            energy_mj: None,
            tick_kept: governor.then_some(self.tick_kept),
            tick_before_wakeup: governor.then_some(self.tick_before_wakeup),
            kernel_reported: None,
        }
    }
}

/// One governor on one CPU.
struct GovCpu {
    governor: Box<dyn Governor>,
    dev: Device,
    kernel: Kernel,
    tick_stopped: bool,
    acc: Acc,
}

struct CpuSlot {
    cluster: usize,
    govs: Vec<GovCpu>,
    actual: Acc,
    seen: bool,
}

/// Counts of how each input was obtained.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct InputCounts {
    pub sleep_pending_timer: u64,
    pub sleep_timer_wakeup: u64,
    pub sleep_assumed: u64,
    pub tick_observed: u64,
    pub util_observed: u64,
    pub new_trips: u64,
    pub cause_timer: u64,
    pub cause_tick: u64,
    pub cause_ipi: u64,
    pub cause_irq: u64,
    pub cause_remote_wakeup: u64,
    pub cause_remote_waking: u64,
    pub cause_unknown: u64,
}

/// Replays periods through governors, per CPU.
pub struct Replayer {
    layout: Layout,
    /// Per cluster of the layout, what booking a period there needs.
    costs: Vec<ClusterCosts>,
    /// Every cluster has power figures: the report shows energy.
    energy: bool,
    names: Vec<(String, GovernorName)>,
    slots: Vec<Option<CpuSlot>>,
    pub counts: InputCounts,
}

impl Replayer {
    /// Checks every governor against every cluster's table (ladder and haltpoll need two
    /// states); `label` names the platform in errors.
    pub fn new(
        layout: Layout,
        names: Vec<(String, GovernorName)>,
        label: &str,
    ) -> Result<Self, InputError> {
        for c in &layout.clusters {
            for (_, g) in &names {
                if c.view.state_count() < g.min_states() {
                    return Err(InputError::whole(
                        label,
                        format!(
                            "{} needs at least {} idle states; cluster {} has {}",
                            g.canonical(),
                            g.min_states(),
                            shown(&c.name),
                            c.view.state_count()
                        ),
                    ));
                }
            }
        }
        let slots = (0..layout.cpu_cluster.len()).map(|_| None).collect();
        Ok(Replayer {
            costs: layout.clusters.iter().map(ClusterCosts::new).collect(),
            energy: layout.clusters.iter().all(|c| c.state_mw.is_some()),
            layout,
            names,
            slots,
            counts: InputCounts::default(),
        })
    }

    /// Replays one period (`line` is its entry's line, for errors about the traced state).
    pub fn replay(&mut self, p: Period, file: &str, line: usize) -> Result<(), InputError> {
        let c = &mut self.counts;
        match p.sleep_from {
            SleepFrom::PendingTimer => c.sleep_pending_timer += 1,
            SleepFrom::TimerWakeup => c.sleep_timer_wakeup += 1,
            SleepFrom::Assumed => c.sleep_assumed += 1,
        }
        c.tick_observed += u64::from(p.tick_observed);
        c.util_observed += u64::from(p.util_observed);
        c.new_trips += u64::from(p.new_trip);
        match p.cause {
            Cause::Timer => c.cause_timer += 1,
            Cause::Tick => c.cause_tick += 1,
            Cause::Ipi => c.cause_ipi += 1,
            Cause::Irq => c.cause_irq += 1,
            Cause::RemoteWakeup => c.cause_remote_wakeup += 1,
            Cause::RemoteWaking => c.cause_remote_waking += 1,
            Cause::Unknown => c.cause_unknown += 1,
        }
        let k = cluster_of(&self.layout.cpu_cluster, p.cpu, file, line)?;
        let layout = &self.layout;
        let table = &layout.clusters[k];
        let count = table.view.state_count();
        if p.actual_state >= count {
            return Err(InputError::at(
                file,
                line,
                format!(
                    "cpu_idle state={} on CPU {}, but the platform's cluster {} has {} states \
                     (0 to {}); expected the platform of the traced machine",
                    p.actual_state,
                    p.cpu,
                    shown(&table.name),
                    count,
                    count - 1
                ),
            ));
        }
        let costs = &self.costs[k];
        let energy = self.energy;
        let slot =
            self.slots[p.cpu as usize].get_or_insert_with(|| new_slot(table, k, &self.names));
        slot.seen = true;
        let view = &table.view;
        let d = p.duration_ns;
        // The traced kernel's own choice, classified as the replayed ones are.
        let actual = &costs.states[p.actual_state];
        slot.actual
            .book(p.actual_state, actual, d, d + actual.exit_ns, energy);
        let to_timer = p.to_timer_ns;
        let can_stop = to_timer > costs.tick_ns;
        for g in &mut slot.govs {
            g.tick_stopped &= !p.new_trip;
            let delta_next = if g.tick_stopped {
                to_timer
            } else {
                to_timer.min(p.to_tick_ns)
            };
            let k = &mut g.kernel;
            k.sleep_length_ns = clamp_i64(if can_stop { to_timer } else { delta_next });
            k.delta_tick_ns = clamp_i64(delta_next);
            k.tick_stopped = g.tick_stopped;
            k.util = p.util.min(costs.capacity);
            k.clock_ns = p.entry_ns;
            k.oracle_residency_ns = clamp_i64(d);
            let mut stop_tick = true;
            let idx = g.governor.select(view, &mut g.dev, k, &mut stop_tick);
            // Whether the tick stops follows the governor, which the workload drives: flags
            // combined and added, not branched on.
            let stops = (stop_tick | g.tick_stopped) & can_stop;
            g.tick_stopped |= stops;
            g.acc.tick_kept += u64::from(!stops);
            g.acc.tick_before_wakeup += u64::from(!stops & (d > delta_next));
            let s = &costs.states[idx];
            let residency = d + s.measured_exit_ns;
            g.acc.book(idx, s, d, residency, energy);
            g.dev.last_residency_ns = residency;
            // The polling state clears its time-limit flag (it never hits its limit here).
            g.dev.poll_time_limit &= !s.polling;
            g.kernel.got_idle_tick = p.cause == Cause::Tick;
            g.kernel.clock_ns = p.entry_ns + residency;
            g.governor.reflect(view, &mut g.dev, &mut g.kernel, idx);
        }
        Ok(())
    }

    /// The columns: the traced kernel's, then each governor's, in the order asked, each with
    /// the same `active` energy.
    fn columns(
        &self,
        kernel_misses: &[(u64, u64)],
        active: &ActiveTime,
    ) -> (Column, Vec<(String, Column)>) {
        let energy = self.energy;
        let mut total_names: Vec<Vec<String>> = vec![Vec::new(); MAX_STATES];
        for c in &self.layout.clusters {
            for (i, s) in c.view.states.iter().enumerate() {
                if !total_names[i].contains(&s.name) {
                    total_names[i].push(s.name.clone());
                }
            }
        }
        let total_names: Vec<String> = total_names
            .into_iter()
            .take_while(|n| !n.is_empty())
            .map(|n| n.join("/"))
            .collect();
        let column = |pick: &dyn Fn(&CpuSlot) -> Acc, governor: bool| {
            let mut total = Acc::default();
            let mut per_cpu = Vec::new();
            let mut reported = KernelMisses::default();
            for (cpu, slot) in self.slots.iter().enumerate() {
                let Some(slot) = slot.as_ref().filter(|s| s.seen) else {
                    continue;
                };
                let acc = pick(slot);
                total.add(&acc);
                let table = &self.layout.clusters[slot.cluster];
                let names: Vec<String> = table.view.states.iter().map(|s| s.name.clone()).collect();
                let mut summary = acc.summary(&names, energy, governor);
                let cpu_active = active.per_cpu.iter().find(|a| a.cpu as usize == cpu);
                summary.add_active(cpu_active.map_or(Some(0.0), |a| a.energy_mj));
                if !governor {
                    let (above, below) = kernel_misses.get(cpu).copied().unwrap_or((0, 0));
                    let m = KernelMisses {
                        too_deep: above,
                        too_shallow: below,
                    };
                    reported.too_deep += above;
                    reported.too_shallow += below;
                    summary.kernel_reported = Some(m);
                }
                per_cpu.push(CpuSummary {
                    cpu: cpu as u32,
                    cluster: table.name.clone(),
                    summary,
                });
            }
            let mut total = total.summary(&total_names, energy, governor);
            total.add_active(active.energy_mj);
            if !governor {
                total.kernel_reported = Some(reported);
            }
            Column { total, per_cpu }
        };
        let actual = column(&|s: &CpuSlot| s.actual, false);
        let govs = self
            .names
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), column(&|s: &CpuSlot| s.govs[i].acc, true)))
            .collect();
        (actual, govs)
    }
}

/// A CPU's running time as the active energy charges it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CpuActive {
    pub cpu: u32,
    /// At a traced frequency the platform lists with a power, charged at that power.
    pub traced_ns: u64,
    /// At an unknown frequency (before the CPU's first `cpu_frequency` event).
    pub unknown_frequency_ns: u64,
    /// At a traced frequency the platform lists no power for.
    pub unlisted_frequency_ns: u64,
    /// The OPP the unknown and unlisted time is charged at (the policy's maximum), kHz.
    pub fallback_khz: Option<u64>,
    /// `None` when the fallback OPP has no power and some time needs it.
    pub energy_mj: Option<f64>,
}

/// The running time of every CPU and how it was charged (the module doc gives the rule).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ActiveTime {
    /// `traced frequency`, `highest OPP` (no `cpu_frequency` events) or `traced frequency,
    /// else highest OPP`.
    pub rule: &'static str,
    pub cpu_frequency_events: u64,
    pub traced_ns: u64,
    pub unknown_frequency_ns: u64,
    pub unlisted_frequency_ns: u64,
    /// Over all CPUs; `None` when some CPU's is.
    pub energy_mj: Option<f64>,
    /// CPUs with running time, by number.
    pub per_cpu: Vec<CpuActive>,
}

/// Charges each CPU's running time in `tracker` (its P-state residency and its time at an
/// unknown frequency) at the power of its cluster's OPPs in `layout`.
fn active_time(layout: &Layout, tracker: &PstateTracker) -> ActiveTime {
    let mut per_cpu = Vec::new();
    for cpu in 0..tracker.cpu_count() as u32 {
        let Some(table) = layout
            .cpu_cluster
            .get(cpu as usize)
            .copied()
            .flatten()
            .map(|k| &layout.clusters[k])
        else {
            continue;
        };
        let mut a = CpuActive {
            cpu,
            traced_ns: 0,
            unknown_frequency_ns: tracker.cpu_unknown(cpu).total_ns,
            unlisted_frequency_ns: 0,
            fallback_khz: table.held_khz,
            energy_mj: None,
        };
        // mW x ns = 1e-9 mJ.
        let mut mj = 0.0;
        for (khz, ns) in tracker.cpu_time_ns(cpu) {
            match table.active_mw(u64::from(khz)) {
                Some(mw) => {
                    a.traced_ns += ns;
                    mj += mw * ns as f64 * 1e-9;
                }
                None => a.unlisted_frequency_ns += ns,
            }
        }
        let fallback_ns = a.unknown_frequency_ns + a.unlisted_frequency_ns;
        let fallback_mw = table.held_khz.and_then(|khz| table.active_mw(khz));
        a.energy_mj = match fallback_mw {
            Some(mw) => Some(mj + mw * fallback_ns as f64 * 1e-9),
            None if fallback_ns == 0 => Some(mj),
            None => None,
        };
        if a.traced_ns + fallback_ns > 0 {
            per_cpu.push(a);
        }
    }
    let sum = |f: fn(&CpuActive) -> u64| per_cpu.iter().map(f).sum::<u64>();
    let (traced_ns, unknown_frequency_ns, unlisted_frequency_ns) = (
        sum(|a| a.traced_ns),
        sum(|a| a.unknown_frequency_ns),
        sum(|a| a.unlisted_frequency_ns),
    );
    let events = tracker.events();
    let rule = if events == 0 {
        "highest OPP"
    } else if unknown_frequency_ns + unlisted_frequency_ns == 0 {
        "traced frequency"
    } else {
        "traced frequency, else highest OPP"
    };
    // Without any running time there is nothing to charge, whatever the platform has.
    let energy_mj = per_cpu
        .iter()
        .try_fold(0.0, |total, a| a.energy_mj.map(|mj| total + mj));
    ActiveTime {
        rule,
        cpu_frequency_events: events,
        traced_ns,
        unknown_frequency_ns,
        unlisted_frequency_ns,
        energy_mj,
        per_cpu,
    }
}

/// The cluster of `cpu`; a CPU the platform does not have is refused (`line`: the event naming
/// it).
fn cluster_of(
    cpu_cluster: &[Option<usize>],
    cpu: u32,
    file: &str,
    line: usize,
) -> Result<usize, InputError> {
    cpu_cluster
        .get(cpu as usize)
        .copied()
        .flatten()
        .ok_or_else(|| {
            InputError::at(
                file,
                line,
                format!(
                "CPU {cpu} is in no cluster of the platform; expected the platform of the traced \
                 machine"
            ),
            )
        })
}

/// A CPU's governors, each built (its `enable`) on its own device.
fn new_slot(table: &ClusterTable, cluster: usize, names: &[(String, GovernorName)]) -> CpuSlot {
    let govs = names
        .iter()
        .map(|(_, g)| {
            let mut dev = Device::new(table.view.state_count());
            dev.disabled.clone_from(&table.disabled);
            let governor = g.build(&table.view, &mut dev);
            GovCpu {
                governor,
                dev,
                kernel: Kernel::default(),
                tick_stopped: false,
                acc: Acc::default(),
            }
        })
        .collect();
    CpuSlot {
        cluster,
        govs,
        actual: Acc::default(),
        seen: false,
    }
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

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

/// What the active energy charged, and by which rule.
fn active_note(a: &ActiveTime) -> String {
    let ms = |ns: u64| ns as f64 / 1e6;
    let fallback = "the OPP the performance governor holds (the policy's maximum), as torpor's \
                    simulation charges a running CPU without DVFS";
    let mut note = if a.cpu_frequency_events == 0 {
        format!(
            "active energy: the trace has no cpu_frequency events; the CPUs' running time \
             ({:.3} ms, each cpu_idle exit to the next entry) is charged at {fallback}",
            ms(a.unknown_frequency_ns + a.unlisted_frequency_ns + a.traced_ns)
        )
    } else {
        format!(
            "active energy: running time at the traced frequency's OPP power ({} cpu_frequency \
             events) for {:.3} ms; at {fallback} for {:.3} ms before a CPU's first \
             cpu_frequency event and {:.3} ms at frequencies the platform lists no power for",
            a.cpu_frequency_events,
            ms(a.traced_ns),
            ms(a.unknown_frequency_ns),
            ms(a.unlisted_frequency_ns)
        )
    };
    if a.energy_mj.is_none() {
        note += "; not available: the platform gives no power for the OPP needed";
    }
    note
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

#[cfg(test)]
mod tests;
