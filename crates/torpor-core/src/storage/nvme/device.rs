//! The drive's side of APST: an NVMe controller executing an Autonomous Power State Transition
//! table while it services block IO.
//!
//! Linux only *writes* the table (`nvme_configure_apst` in `drivers/nvme/host/core.c`: the
//! v4.11 builder, the legacy one of v4.12–v5.13 and the v5.14+ one, both in `apst.rs`); the drive runs it. This
//! module models that drive as the NVMe base specification describes it (Feature 0Ch and the
//! power-state descriptors, NVMe 2.0 §8.1.19, Figs. 475 and 477), following the state machine of
//! spec-storage §1.6. It executes whatever table it is given and knows nothing of its origin.
//!
//! # What the drive does
//!
//! Each APST entry `p` says: after the controller has been idle in power state `p` for longer
//! than ITPT\[p\] ms, move to the non-operational state ITPS\[p\]. Entering a state takes at most
//! its ENLAT, leaving it at most its EXLAT. The idle timer restarts in every state the drive
//! reaches, so a chain PS0 → PS3 → PS4 measures PS3's timer from the end of the entry into PS3.
//! A non-operational state processes no IO: an IO doorbell sends the drive back to the last
//! operational state it left, and the IO waits for the exit.
//!
//! # The algorithm (lazy: no timer events in the engine's queue)
//!
//! The device computes every completion time at submission, so it always knows when it last
//! became idle; the idle chain is replayed only when the next IO (or [`NvmeDevice::finish`])
//! arrives. Submissions arrive in non-decreasing time.
//!
//! 1. A request arrives at `now`. If an earlier request completes after `now`, the drive is
//!    busy (servicing, or waking for an earlier request): go to 4 with the busy period's ready
//!    time. Otherwise the drive has been idle since its last completion (time 0 at start, in
//!    PS0).
//! 2. Walk the idle chain from the idle start `t` in state `p`: if entry `p` is enabled and
//!    `t + ITPT[p] < now` (idle for *longer* than ITPT), the drive begins an autonomous
//!    transition into `q = ITPS[p]` at `t + ITPT[p]` (counted in `transitions`); the entry ends
//!    ENLAT(q) later, and `q`'s idle timer starts then. Repeat from `q`. The walk stops at the
//!    first state whose timer has not expired by `now`, or in the middle of an entry.
//! 3. Wake (spec-storage §1.6): in an operational state the drive is ready at `now`; settled in
//!    a non-operational `q` it is ready at `now + EXLAT(q)`; still entering `q` (entry ends at
//!    `t_end`) it is ready at `t_end + EXLAT(q)`, the spec's worst-case bound (old state's exit
//!    plus new state's entry). Both wakes count in `wakeups`, and the drive returns to the last
//!    operational state.
//! 4. A request that finds a wake in progress waits for the same ready time (no second wake).
//! 5. Service: the request takes `ServiceModel::service_time` on the earliest free of
//!    `parallelism` slots (FIFO), starting no earlier than the ready time. Its completion time
//!    is returned; the extra latency of 3–4 is its wake penalty.
//! 6. [`NvmeDevice::finish`] runs step 2 up to the end of the run (stopping inside an entry if
//!    the run ends there) and reads the meter.
//! 7. A new table mid-run ([`NvmeDevice::set_table`], as `nvme_set_latency_tolerance`
//!    reprograms it): step 2 runs up to `now` under the old table, then the new one applies.
//!    Set Features is an admin command: it does not wake a non-operational drive (the NVMe
//!    base specification lets a non-operational state process admin commands without leaving
//!    it), but it is activity, so a settled drive's idle timer restarts at `now` (an
//!    ASSUMPTION: the specification does not say; the alternative, keeping the old start,
//!    would make a shorter new ITPT fire in the past). A drive still entering a state keeps
//!    entering it, and its timer there starts when the entry ends. A busy drive finishes its
//!    busy period and idles under the new table.
//!
//! Boundaries: an IO arriving exactly when ITPT expires finds the drive still in the old state
//! (the spec's "longer than"). An IO arriving exactly when an entry ends is ready at the same
//! time whether it is counted as "entering" or "in" the state, so the choice only decides
//! metering: the entry is complete.
//!
//! # Power model (spec-storage §1.1, §1.6)
//!
//! - **active power**: while at least one request is in service in operational state `p` (the
//!   drive counts as active once, however many requests overlap): ACTP\[p\] if reported, else
//!   MP\[p\].
//! - **idle power**: idle in any state `p`: IDLP\[p\] if reported; else the smaller of MP\[p\]
//!   (the spec's upper bound) and ACTP\[p\] when the drive reports ACTP, since an idle drive
//!   draws no more than a busy one (the SN530 reports ACTP 1.8 W but no IDLP for its 3.5 W PS0;
//!   MP alone would make its idle PS0 cost more than its active PS0). Still an upper bound.
//! - **transition power**: entering or exiting a non-operational state, from the last
//!   operational state `p`: idle\[p\] + share × (MP\[p\] − idle\[p\]). No drive documents it;
//!   `share` = 1 is MP, the spec's bound on non-operational activity and the default here;
//!   scenarios run torpor's central estimate, 0.5, with 0 and 1 as the ends of its range
//!   ([`NvmeDevice::with_transition_share`]).
//!
//! Time and energy are metered per power state (`PS0`..`PSn`, active and idle charged to the
//! same state at their own power) plus one `transition` bucket for entries and exits.
//!
//! # Tables the model refuses
//!
//! ITPT = 0 disables an entry (spec), and so does an all-zero entry. APSTE = 0 or no table means
//! no autonomous transition at all. An enabled entry is *ignored* (disabled, and counted in
//! `ignored_entries`) when
//! - its ITPS is beyond the drive's descriptors or names an operational state: the spec defines
//!   ITPS as a non-operational state and leaves any other value's effect to the vendor, so the
//!   model does not guess;
//! - it belongs to a non-operational state and points at a state that is not deeper (a higher
//!   index): Linux never writes one, and allowing it would let the chain cycle. With this rule a
//!   chain visits each state at most once, so one walk takes at most 32 steps;
//! - it belongs to a state the drive does not report (the spec wants those entries zero).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::Serialize;

use crate::apst::psd::{NvmeController, PowerState};
use crate::apst::{ApstTable, APST_ENTRIES};
use crate::metrics::{EnergyMeter, StateEnergy, Timeline};
use crate::storage::io::{IoOp, IoRequest, TimedDevice};
use crate::storage::nvme::service::ServiceModel;
use crate::time::Nanos;

/// Name of the meter bucket that collects entry and exit time.
const TRANSITION: &str = "transition";

/// Stand-in for a controller that reports no descriptor at all (NVMe requires PS0, so only a
/// broken parser produces one): a single operational state that draws nothing.
const NO_DESCRIPTOR: PowerState = PowerState {
    max_power_mw: 0.0,
    non_operational: false,
    entry_lat_us: 0,
    exit_lat_us: 0,
    active_power_mw: None,
    idle_power_mw: None,
};

/// Everything the machine needs about one power state, precomputed in engine units.
#[derive(Clone, Copy, Debug)]
struct StateParams {
    non_operational: bool,
    /// ITPT; zero when the entry is disabled.
    itpt: Nanos,
    /// ITPS; meaningful only when `itpt` is non-zero.
    itps: usize,
    enlat: Nanos,
    exlat: Nanos,
    active_mw: f64,
    idle_mw: f64,
    max_mw: f64,
    /// Power while entering or leaving a non-operational state from this one.
    transition_mw: f64,
}

impl StateParams {
    fn from_descriptor(ps: &PowerState) -> StateParams {
        StateParams {
            non_operational: ps.non_operational,
            itpt: Nanos::ZERO,
            itps: 0,
            enlat: Nanos::from_us(ps.entry_lat_us as u64),
            exlat: Nanos::from_us(ps.exit_lat_us as u64),
            active_mw: ps.active_power_mw.unwrap_or(ps.max_power_mw),
            idle_mw: idle_power_mw(ps),
            max_mw: ps.max_power_mw,
            transition_mw: ps.max_power_mw,
        }
    }
}

/// Idle power of a state: IDLP, else min(MP, ACTP) — see the module comment.
fn idle_power_mw(ps: &PowerState) -> f64 {
    match (ps.idle_power_mw, ps.active_power_mw) {
        (Some(idle), _) => idle,
        (None, Some(active)) => active.min(ps.max_power_mw),
        (None, None) => ps.max_power_mw,
    }
}

/// Where the idle drive is in its chain (meaningful only while no request is outstanding).
#[derive(Clone, Copy, Debug)]
enum IdlePhase {
    /// Settled in the current state; its idle timer started at `since`.
    Settled { since: Nanos },
    /// Autonomously entering the current state; the entry ends at `until`.
    Entering { until: Nanos },
}

/// A busy period: from the wake (or the first submission) to the last known completion.
#[derive(Clone, Copy, Debug)]
struct Busy {
    /// When the drive is operational and can start servicing.
    ready: Nanos,
    /// Latest completion of any request submitted so far.
    until: Nanos,
}

/// Counters accumulated as the run goes.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    ios: u64,
    transitions: u64,
    wakeups: u64,
    wake_delayed_ios: u64,
    wake_latency_total_ns: u64,
    busy_ns: u64,
}

/// What one run of the drive measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvmeStats {
    /// Length of the metered run (from time 0 to `finish`'s end).
    pub duration_ns: u64,
    /// Total energy, all states and transitions, mJ.
    pub energy_mj: f64,
    /// `energy_mj / duration`, mW.
    pub avg_power_mw: f64,
    /// Per power state `PS0`..`PSn`: residency (active + idle), energy, and how many times the
    /// drive settled into it (an entry interrupted by a wake does not count here).
    pub power_states: Vec<StateEnergy>,
    /// Time spent entering and exiting non-operational states (at **transition power**).
    pub transition_ns: u64,
    /// Energy of those entries and exits, mJ.
    pub transition_energy_mj: f64,
    /// Time with at least one request in service (at **active power**).
    pub busy_ns: u64,
    /// Requests submitted.
    pub ios: u64,
    /// Autonomous transitions begun into non-operational states, including those a wake cut
    /// short: the endurance proxy.
    pub transitions: u64,
    /// Requests that found the drive in a non-operational state or entering one.
    pub wakeups: u64,
    /// Requests delayed by a wake: the `wakeups` plus those arriving while a wake was in
    /// progress.
    pub wake_delayed_ios: u64,
    /// Sum over requests of the latency the wakes added (ready time − submission).
    pub wake_latency_total_ns: u64,
    /// Enabled APST entries the drive refused in its current table (see the module
    /// documentation).
    pub ignored_entries: u32,
    /// Tables programmed after the first ([`NvmeDevice::set_table`]).
    pub table_changes: u32,
}

/// An NVMe drive running an APST table. See the module documentation.
#[derive(Clone, Debug)]
pub struct NvmeDevice {
    states: Vec<StateParams>,
    service: ServiceModel,
    /// Service times of the last request size seen, per operation: nearly every workload
    /// uses one size, and the formula's float arithmetic is most of a submission's cost.
    service_cache: [(u32, Nanos); 2],
    /// Completion times of the slots still servicing, a min-heap. A slot that is free at a
    /// submission is as good as any other free slot, so only the busy ones are kept.
    busy_slots: BinaryHeap<Reverse<Nanos>>,
    parallelism: usize,
    /// Current power state (while entering: the target).
    ps: usize,
    /// The operational state a wake returns to.
    last_op: usize,
    idle: IdlePhase,
    busy: Option<Busy>,
    last_now: Nanos,
    last_wake_penalty: Nanos,
    meter: EnergyMeter,
    counters: Counters,
    ignored_entries: u32,
    table_changes: u32,
    /// Tables the host sends later, in time order (step 7), applied when the drive's clock
    /// reaches them.
    scheduled_tables: VecDeque<(Nanos, Option<ApstTable>)>,
}

impl NvmeDevice {
    /// A drive with `ctrl`'s power states, executing `table` (`None`, or APSTE = 0: no
    /// autonomous transition), idle in PS0 at time 0. A `parallelism` of 0 is taken as 1.
    pub fn new(
        ctrl: &NvmeController,
        table: Option<&ApstTable>,
        service: ServiceModel,
    ) -> NvmeDevice {
        let descriptors = match ctrl.states() {
            [] => std::slice::from_ref(&NO_DESCRIPTOR),
            all => &all[..all.len().min(APST_ENTRIES)],
        };
        let mut states: Vec<StateParams> = descriptors
            .iter()
            .map(StateParams::from_descriptor)
            .collect();
        let ignored_entries = install_table(&mut states, table);
        let mut names: Vec<String> = (0..states.len()).map(|p| format!("PS{p}")).collect();
        names.push(TRANSITION.to_string());
        let meter = EnergyMeter::new(names, 0, states[0].idle_mw);
        let parallelism = service.parallelism.max(1) as usize;
        let service_cache = [
            (4096, service.service_time(IoOp::Read, 4096)),
            (4096, service.service_time(IoOp::Write, 4096)),
        ];
        NvmeDevice {
            states,
            service,
            service_cache,
            busy_slots: BinaryHeap::with_capacity(parallelism.min(4096)),
            parallelism,
            ps: 0,
            last_op: 0,
            idle: IdlePhase::Settled { since: Nanos::ZERO },
            busy: None,
            last_now: Nanos::ZERO,
            last_wake_penalty: Nanos::ZERO,
            meter,
            counters: Counters::default(),
            ignored_entries,
            table_changes: 0,
            scheduled_tables: VecDeque::new(),
        }
    }

    /// The tables the host will send, each at its time (in non-decreasing order; as
    /// `nvme_set_latency_tolerance` does when a latency-tolerance request changes,
    /// `apst::tolerance`). Each is adopted as [`NvmeDevice::set_table`] adopts one,
    /// when the first submission at or after its time, or the run's end, reaches it: a table
    /// and an IO at the same instant, the table first.
    pub fn with_scheduled_tables(mut self, tables: Vec<(Nanos, Option<ApstTable>)>) -> NvmeDevice {
        debug_assert!(tables.windows(2).all(|w| w[0].0 <= w[1].0));
        self.scheduled_tables = tables.into();
        self
    }

    /// Adopts every scheduled table due by `now`.
    fn adopt_due_tables(&mut self, now: Nanos) {
        while self
            .scheduled_tables
            .front()
            .is_some_and(|(at, _)| *at <= now)
        {
            let (at, table) = self.scheduled_tables.pop_front().expect("checked");
            self.set_table(at, table.as_ref());
        }
    }

    /// Latency the wake added to the most recent request (zero if it found the drive
    /// operational).
    pub fn last_wake_penalty(&self) -> Nanos {
        self.last_wake_penalty
    }

    /// Ends the run at `end`: replays the idle chain up to `end` (stopping inside an entry if
    /// the run ends there) and returns what was measured. Requests still in service at `end` are
    /// metered up to `end` only. An `end` before the last submission is taken as that
    /// submission's time. The drive stays usable for submissions at or after `end`.
    pub fn finish(&mut self, end: Nanos) -> NvmeStats {
        self.adopt_due_tables(end);
        let end = end.max(self.last_now);
        self.catch_up(end);
        match self.busy {
            None => {
                self.meter.charge(end);
                self.stats(&self.meter, end, self.counters.busy_ns)
            }
            Some(busy) => {
                let (meter, busy_ns) = self.in_flight_snapshot(busy, end);
                self.stats(&meter, end, busy_ns)
            }
        }
    }

    /// The meter and busy time as they stand at `end` while requests are still in service:
    /// metered on a copy, so the busy period can still be closed properly by a later submission.
    fn in_flight_snapshot(&self, busy: Busy, end: Nanos) -> (EnergyMeter, u64) {
        let mut meter = self.meter.snapshot();
        let mut busy_ns = self.counters.busy_ns;
        if busy.ready < end {
            meter.set(
                busy.ready,
                self.last_op,
                self.states[self.last_op].active_mw,
            );
            busy_ns += (end - busy.ready).0;
        }
        meter.charge(end);
        (meter, busy_ns)
    }

    fn stats(&self, meter: &EnergyMeter, end: Nanos, busy_ns: u64) -> NvmeStats {
        let mut power_states = meter.states();
        let transition = power_states.pop().unwrap_or_default();
        let c = self.counters;
        NvmeStats {
            duration_ns: end.0,
            energy_mj: meter.total_energy_mj(),
            avg_power_mw: meter.avg_power_mw(),
            power_states,
            transition_ns: transition.time_ns,
            transition_energy_mj: transition.energy_mj,
            busy_ns,
            ios: c.ios,
            transitions: c.transitions,
            wakeups: c.wakeups,
            wake_delayed_ios: c.wake_delayed_ios,
            wake_latency_total_ns: c.wake_latency_total_ns,
            ignored_entries: self.ignored_entries,
            table_changes: self.table_changes,
        }
    }

    /// Steps 1–4: when the drive can start servicing a request submitted at `now`.
    #[inline]
    fn ready_for_io(&mut self, now: Nanos) -> Nanos {
        if let Some(busy) = self.busy {
            if now < busy.until {
                return busy.ready.max(now);
            }
            self.end_busy(busy);
        }
        self.walk_idle(now);
        let ready = self.wake(now);
        self.busy = Some(Busy {
            ready,
            until: ready,
        });
        ready
    }

    /// Brings the drive up to `now` without a request: closes a busy period that has ended,
    /// then, if the drive is idle, replays its idle chain (step 2).
    fn catch_up(&mut self, now: Nanos) {
        if let Some(busy) = self.busy.filter(|b| now >= b.until) {
            self.end_busy(busy);
        }
        if self.busy.is_none() {
            self.walk_idle(now);
        }
    }

    /// Closes a busy period that is over: active power from its ready time to its last
    /// completion, then idle in the operational state, whose idle timer starts.
    #[inline]
    fn end_busy(&mut self, busy: Busy) {
        let op = &self.states[self.last_op];
        self.meter.set(busy.ready, self.last_op, op.active_mw);
        self.meter.set(busy.until, self.last_op, op.idle_mw);
        self.counters.busy_ns += (busy.until - busy.ready).0;
        self.ps = self.last_op;
        self.idle = IdlePhase::Settled { since: busy.until };
        self.busy = None;
    }

    /// The same drive drawing idle + `share` × (MP − idle) of its last operational state while
    /// entering or leaving a non-operational state (`share` in [0, 1]; `new` uses 1, MP).
    pub fn with_transition_share(mut self, share: f64) -> NvmeDevice {
        let share = share.clamp(0.0, 1.0);
        for s in &mut self.states {
            s.transition_mw = s.idle_mw + share * (s.max_mw - s.idle_mw).max(0.0);
        }
        self
    }

    /// The same drive recording its power states and requests from time 0 to `until`, at
    /// most `limit` of each ([`NvmeDevice::take_timeline`] after the run).
    pub fn with_timeline(mut self, until: Nanos, limit: usize) -> NvmeDevice {
        self.meter.record(Timeline::new(until, limit));
        self
    }

    /// The recorded timeline (states are indexed as `PS0`..`PSn`, then `transition`).
    pub fn take_timeline(&mut self) -> Option<Timeline> {
        self.meter.take_timeline()
    }

    /// Step 2: replays the autonomous transitions of an idle drive up to `now`.
    #[inline]
    fn walk_idle(&mut self, now: Nanos) {
        loop {
            let since = match self.idle {
                IdlePhase::Entering { until } if until > now => return,
                IdlePhase::Entering { until } => {
                    self.meter.set(until, self.ps, self.states[self.ps].idle_mw);
                    self.idle = IdlePhase::Settled { since: until };
                    until
                }
                IdlePhase::Settled { since } => since,
            };
            let state = self.states[self.ps];
            if state.itpt == Nanos::ZERO || since + state.itpt >= now {
                return;
            }
            self.begin_entry(since + state.itpt, state.itps);
        }
    }

    /// The idle timer of the current state expired at `at`: start entering `target`.
    #[inline]
    fn begin_entry(&mut self, at: Nanos, target: usize) {
        if !self.states[self.ps].non_operational {
            self.last_op = self.ps;
        }
        let transition = self.states.len();
        self.meter
            .set(at, transition, self.states[self.last_op].transition_mw);
        self.counters.transitions += 1;
        self.ps = target;
        self.idle = IdlePhase::Entering {
            until: at + self.states[target].enlat,
        };
    }

    /// Step 3: a doorbell at `now` on an idle drive; returns when it is operational again.
    #[inline]
    fn wake(&mut self, now: Nanos) -> Nanos {
        let state = &self.states[self.ps];
        if !state.non_operational {
            return now;
        }
        let ready = match self.idle {
            IdlePhase::Settled { .. } => {
                let transition = self.states.len();
                self.meter
                    .set(now, transition, self.states[self.last_op].transition_mw);
                now + state.exlat
            }
            // Already metering the entry at transition power, which the exit continues.
            IdlePhase::Entering { until } => until + state.exlat,
        };
        self.counters.wakeups += 1;
        self.ps = self.last_op;
        ready
    }

    /// Step 5: when a request ready to start at `ready` (submitted at `now`) begins service:
    /// at `ready` if a slot is free, else when the earliest busy slot frees up (FIFO).
    #[inline]
    fn claim_slot(&mut self, now: Nanos, ready: Nanos, done_after: Nanos) -> Nanos {
        while let Some(&Reverse(free)) = self.busy_slots.peek() {
            if free > now {
                break;
            }
            self.busy_slots.pop();
        }
        let start = if self.busy_slots.len() < self.parallelism {
            ready
        } else {
            let Reverse(free) = self.busy_slots.pop().expect("all slots busy");
            ready.max(free)
        };
        let done = start + done_after;
        self.busy_slots.push(Reverse(done));
        done
    }

    /// The service time of `req`, from the cache when its size matches the last one.
    #[inline]
    fn service_time(&mut self, req: &IoRequest) -> Nanos {
        let cached = &mut self.service_cache[req.op as usize];
        if cached.0 != req.bytes {
            *cached = (req.bytes, self.service.service_time(req.op, req.bytes));
        }
        cached.1
    }

    /// Step 7: adopts `table` at `now` (`None`, or APSTE = 0: no more autonomous
    /// transitions). `now` is taken as the last submission's time if earlier.
    pub fn set_table(&mut self, now: Nanos, table: Option<&ApstTable>) {
        let now = now.max(self.last_now);
        self.last_now = now;
        self.catch_up(now);
        if self.busy.is_none() {
            if let IdlePhase::Settled { .. } = self.idle {
                self.idle = IdlePhase::Settled { since: now };
            }
        }
        self.ignored_entries = install_table(&mut self.states, table);
        self.table_changes += 1;
    }

    /// The chain an idle drive follows from PS0 under its table, as the drive itself walks
    /// it (its real entry latencies, the entries it accepted): each state it settles in and
    /// after how much continuous idle time.
    pub fn idle_schedule(&self) -> Vec<Reached> {
        let mut out = Vec::new();
        let (mut ps, mut t) = (0usize, Nanos::ZERO);
        // A valid chain only goes deeper, so it has at most one step per state.
        for _ in 0..self.states.len() {
            let state = self.states[ps];
            if state.itpt == Nanos::ZERO {
                break;
            }
            let next = state.itps;
            t = t + state.itpt + self.states[next].enlat;
            out.push(Reached {
                ps: next,
                reached_after_ms: t.0 as f64 / 1e6,
            });
            ps = next;
        }
        out
    }
}

/// One step of an idle drive's chain: the table read as a timeline ("PS3 after 103.9 ms"),
/// which is how the APST commit message compares tables. A state is reached when its entry
/// completes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reached {
    pub ps: usize,
    /// Continuous idle time, ms, after which the drive is in `ps`.
    pub reached_after_ms: f64,
}

impl TimedDevice for NvmeDevice {
    /// Accepts `req` at `now` (taken as the previous submission time if earlier) and returns
    /// its completion time.
    #[inline]
    fn accept(&mut self, now: Nanos, req: &IoRequest) -> Nanos {
        if !self.scheduled_tables.is_empty() {
            self.adopt_due_tables(now);
        }
        let now = now.max(self.last_now);
        self.last_now = now;
        let ready = self.ready_for_io(now);
        let penalty = ready - now;
        self.last_wake_penalty = penalty;
        self.counters.ios += 1;
        if penalty > Nanos::ZERO {
            self.counters.wake_delayed_ios += 1;
            self.counters.wake_latency_total_ns += penalty.0;
        }
        let service = self.service_time(req);
        let done = self.claim_slot(now, ready, service);
        if let Some(busy) = self.busy.as_mut() {
            busy.until = busy.until.max(done);
        }
        if let Some(t) = self.meter.timeline() {
            t.request(now, done - now, req.op == IoOp::Write);
        }
        done
    }
}

/// Makes `table` the one `states` execute (`None`, or APSTE = 0: none): clears every entry,
/// then loads the table's; returns how many enabled entries were ignored.
fn install_table(states: &mut [StateParams], table: Option<&ApstTable>) -> u32 {
    for s in states.iter_mut() {
        s.itpt = Nanos::ZERO;
        s.itps = 0;
    }
    match table.filter(|t| t.apste) {
        Some(t) => load_table(states, t),
        None => 0,
    }
}

/// Copies the enabled, valid entries of `table` into `states`; returns how many enabled
/// entries were ignored (see the module documentation for why).
fn load_table(states: &mut [StateParams], table: &ApstTable) -> u32 {
    let mut ignored = 0;
    for p in 0..APST_ENTRIES {
        if table.entries[p] == 0 {
            continue;
        }
        if p >= states.len() {
            ignored += 1;
            continue;
        }
        let itpt_ms = table.itpt_ms(p);
        if itpt_ms == 0 {
            continue;
        }
        let target = table.itps(p) as usize;
        if !valid_target(states, p, target) {
            ignored += 1;
            continue;
        }
        states[p].itpt = Nanos::from_ms(itpt_ms as u64);
        states[p].itps = target;
    }
    ignored
}

/// A target must be a reported non-operational state, deeper than `from` when `from` is itself
/// non-operational (so chains cannot cycle).
fn valid_target(states: &[StateParams], from: usize, target: usize) -> bool {
    match states.get(target) {
        Some(t) if t.non_operational => !states[from].non_operational || target > from,
        _ => false,
    }
}
