//! What teo's three older bin generations (v5.13 .. v6.10) share; each generation's selection
//! is in its own file:
//! - [`super::v5_13`] (`teo@5.13`): v5.13 .. v6.2, bins + recent intercepts.
//! - [`super::v6_3`] (`teo@6.3`, `teo-util`): v6.3 .. v6.5, the same plus util-awareness as merged.
//! - [`super::v6_6`] (`teo@6.6`): v6.6 .. v6.10, the 6.6 LTS teo.
//!
//! The observation teo rests on: timers usually wake an idle CPU, so the time to the next timer
//! (the sleep length) is a good first guess of the idle duration; history is consulted only to
//! decide whether something else ("intercepts") tends to come earlier.
//!
//! Common to the three generations:
//! 1. One bin per idle state, disabled states included: bin i spans measured idle durations in
//!    `[target_residency(i), target_residency(i + 1))`, the last bin is open-ended.
//! 2. After each idle period (at the start of the next `select`, because `reflect` runs with
//!    interrupts off and only notes what happened) every bin's `hits` and `intercepts` decay by
//!    1/8 (`m -= m >> DECAY_SHIFT`), then `PULSE` is added to one metric: `hits` of the sleep
//!    length's bin when the measured duration fell into the same bin, else `intercepts` of the
//!    measured duration's bin. `total` is their sum, recomputed at every update.
//! 3. The measured duration is the residency minus half the entered state's exit latency (a
//!    rough average of the real exit delay), or half the residency when it is shorter than the
//!    latency; it is "infinite" (`U64_MAX`) when the CPU slept at least the whole sleep length,
//!    or when `reflect` saw a safety net fire (poll time limit, or a tick wake-up while a
//!    timer further than a tick away was expected).
//! 4. A ring of the last `NR_RECENT` updates remembers which bin each intercept went to, so
//!    that each bin's `recent` counts the intercepts among the last nine wake-ups.
//!
//! The kernel keeps the metrics in `unsigned int`: every sum and doubling below wraps at 2^32
//! as the C code does (`wrapping_*`), which matters once v6.6's stale ring slot has wrapped a
//! `recent` counter below zero.

use crate::cpuidle::{Device, IdleState, Kernel, Platform, MAX_STATES};

/// What one update adds to the metric it feeds.
pub(super) const PULSE: u32 = 1024;

/// Each update keeps 7/8 of every metric (`m -= m >> DECAY_SHIFT`, truncating).
pub(super) const DECAY_SHIFT: u32 = 3;

/// How many of the latest updates the `recent` intercept counts remember.
pub(super) const NR_RECENT: usize = 9;

/// `struct teo_bin`: the metrics of one idle state's bin (all `unsigned int` in the kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TeoBin {
    pub(super) intercepts: u32,
    pub(super) hits: u32,
    pub(super) recent: u32,
}

/// The part of `struct teo_cpu` the three generations share, with the kernel's field types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TeoCpu {
    /// s64: `local_clock()` at select, turned into the select-to-reflect span by `reflect`.
    pub(super) time_span_ns: i64,
    /// s64: the sleep length seen at select (`KTIME_MAX` in v6.6 when it was not fetched).
    pub(super) sleep_length_ns: i64,
    pub(super) state_bins: [TeoBin; MAX_STATES],
    /// unsigned int.
    pub(super) total: u32,
    /// int: the ring slot the next update uses.
    pub(super) next_recent_idx: i32,
    /// int: the bin each of the last `NR_RECENT` intercepts went to, -1 for a hit.
    pub(super) recent_idx: [i32; NR_RECENT],
}

/// Metric sums over a run of bins, in the kernel's `unsigned int` (wrapping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Sums {
    pub(super) intercepts: u32,
    pub(super) hits: u32,
    pub(super) recent: u32,
}

impl Sums {
    pub(super) fn add(&mut self, bin: &TeoBin) {
        self.intercepts = self.intercepts.wrapping_add(bin.intercepts);
        self.hits = self.hits.wrapping_add(bin.hits);
        self.recent = self.recent.wrapping_add(bin.recent);
    }
}

/// What the walk up the states found.
pub(super) struct Candidate {
    /// The deepest enabled state passing the generation's test (else the first enabled state
    /// met on the way up; `None` when nothing is enabled).
    pub(super) idx: Option<usize>,
    /// The first enabled state of index 1 or more (0 when state 0 is enabled).
    pub(super) idx0: usize,
    /// The deepest walked state meeting the latency limit (0 by default, even if disabled).
    pub(super) constraint_idx: usize,
    /// The sums over the bins below `idx`.
    pub(super) below: Sums,
}

/// What an update found, before it decides which metric gets the pulse.
pub(super) struct Classified {
    /// The adjusted measured idle duration (u64; `U64_MAX` after a timer or safety-net wake-up).
    pub(super) measured_ns: u64,
    /// The deepest bin whose state's target residency fits the sleep length.
    pub(super) idx_timer: usize,
    /// The deepest bin, among those, whose target residency fits the measured duration.
    pub(super) idx_duration: usize,
}

impl TeoCpu {
    /// `teo_enable_device`: everything zero, every ring slot "a hit" (-1).
    pub(super) fn new() -> Self {
        TeoCpu {
            time_span_ns: 0,
            sleep_length_ns: 0,
            state_bins: [TeoBin::default(); MAX_STATES],
            total: 0,
            next_recent_idx: 0,
            recent_idx: [-1; NR_RECENT],
        }
    }

    /// The first half of `teo_update`, identical in every generation here: the measured
    /// duration, the decay of every bin with `total` recomputed, and the two bins.
    pub(super) fn classify(&mut self, platform: &Platform, dev: &Device) -> Classified {
        let measured_ns = if self.time_span_ns >= self.sleep_length_ns {
            u64::MAX
        } else {
            let entered = dev.last_state_idx as usize;
            let lat_ns = platform.states[entered].exit_latency_ns as u64;
            let residency = dev.last_residency_ns;
            if residency >= lat_ns {
                residency - lat_ns / 2
            } else {
                residency / 2
            }
        };
        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, state) in platform.states.iter().enumerate() {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total = self
                .total
                .wrapping_add(bin.hits.wrapping_add(bin.intercepts));
            // The sleep length is s64 (may be negative); the measured duration is u64, so the
            // kernel compares the (non-negative) target residency with it as u64.
            if state.target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if state.target_residency_ns as u64 <= measured_ns {
                    idx_duration = i;
                }
            }
        }
        Classified {
            measured_ns,
            idx_timer,
            idx_duration,
        }
    }

    /// Advances the ring and forgets the intercept its slot remembered; returns the slot.
    pub(super) fn take_recent_slot(&mut self) -> usize {
        let slot = self.next_recent_idx as usize;
        self.next_recent_idx += 1;
        if self.next_recent_idx >= NR_RECENT as i32 {
            self.next_recent_idx = 0;
        }
        if let Ok(bin) = usize::try_from(self.recent_idx[slot]) {
            let b = &mut self.state_bins[bin];
            b.recent = b.recent.wrapping_sub(1);
        }
        slot
    }

    /// Books the pulse as a hit or an intercept and writes the ring slot accordingly (the
    /// caller adds `PULSE` to `total`).
    pub(super) fn record(&mut self, slot: usize, idx_timer: usize, idx_duration: usize) {
        if idx_timer == idx_duration {
            self.state_bins[idx_timer].hits = self.state_bins[idx_timer].hits.wrapping_add(PULSE);
            self.recent_idx[slot] = -1;
        } else {
            let b = &mut self.state_bins[idx_duration];
            b.intercepts = b.intercepts.wrapping_add(PULSE);
            b.recent = b.recent.wrapping_add(1);
            self.recent_idx[slot] = idx_duration as i32;
        }
    }

    /// `teo_reflect`, the same in every generation here.
    ///
    /// A poll time limit or a tick wake-up while the timer was more than a tick away means a
    /// safety net ended the idle period, not the event teo predicts: count it as if the CPU had
    /// slept the whole sleep length. The kernel tests `poll_time_limit` first, so the tick flag
    /// is only consumed when the poll limit did not fire.
    pub(super) fn reflect(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        state: usize,
    ) {
        dev.last_state_idx = state as i32;
        if dev.poll_time_limit
            || (kernel.idle_got_tick() && self.sleep_length_ns > platform.tick_ns)
        {
            dev.poll_time_limit = false;
            self.time_span_ns = self.sleep_length_ns;
        } else {
            // u64 clock minus the s64 start, converted back to s64 as the kernel's
            // assignment does.
            self.time_span_ns = kernel.local_clock().wrapping_sub(self.time_span_ns as u64) as i64;
        }
    }

    /// The walk over states 1.. that finds the candidate, the latency limit's state and the
    /// sums below the candidate. `first` is `Some(0)` when state 0 is enabled. The walk stops
    /// at the first enabled state failing `fits` (v5.13: "fits before the timer"; v6.6 passes
    /// every state, making the deepest enabled state the candidate).
    pub(super) fn find_candidate(
        &self,
        platform: &Platform,
        dev: &Device,
        latency_req: i64,
        first: Option<usize>,
        fits: impl Fn(&IdleState) -> bool,
    ) -> Candidate {
        let mut c = Candidate {
            idx: first,
            idx0: 0,
            constraint_idx: 0,
            below: Sums::default(),
        };
        let mut sums = Sums::default();
        for (i, state) in platform.states.iter().enumerate().skip(1) {
            sums.add(&self.state_bins[i - 1]);
            if dev.is_disabled(i) {
                continue;
            }
            if c.idx.is_none() {
                c.idx = Some(i);
                c.idx0 = i;
            }
            if !fits(state) {
                break;
            }
            c.idx = Some(i);
            if state.exit_latency_ns <= latency_req {
                c.constraint_idx = i;
            }
            c.below = sums;
        }
        c
    }

    /// Whether history argues against the candidate `idx`, and for which shallower state.
    ///
    /// It does when the intercepts below the candidate outweigh everything at and above it,
    /// or when most of the last `NR_RECENT` wake-ups were intercepts below it. Walking down,
    /// the first state whose bins (down to the candidate's) hold more than half of each sum
    /// that argued is chosen if enabled and `suitable` (the generation's stopped-tick test);
    /// otherwise the shallowest suitable state met on the way, which may be the candidate.
    pub(super) fn shallower_alternative(
        &self,
        dev: &Device,
        idx: usize,
        below: &Sums,
        suitable: impl Fn(usize) -> bool,
    ) -> usize {
        let alt_intercepts = below.intercepts.wrapping_mul(2) > self.total.wrapping_sub(below.hits);
        let alt_recent = below.recent > (NR_RECENT / 2) as u32;
        if !alt_recent && !alt_intercepts {
            return idx;
        }
        let mut first_suitable_idx = idx;
        let mut sums = Sums::default();
        for i in (0..idx).rev() {
            sums.add(&self.state_bins[i]);
            if (!alt_recent || sums.recent.wrapping_mul(2) > below.recent)
                && (!alt_intercepts || sums.intercepts.wrapping_mul(2) > below.intercepts)
            {
                return if suitable(i) && !dev.is_disabled(i) {
                    i
                } else {
                    first_suitable_idx
                };
            }
            if dev.is_disabled(i) {
                continue;
            }
            if !suitable(i) {
                // Too shallow for a stopped tick: keep walking only if a suitable state was
                // already found on the way down.
                if first_suitable_idx != idx {
                    continue;
                }
                break;
            }
            first_suitable_idx = i;
        }
        idx
    }

    /// Starts the select-to-reflect span: `local_clock()` stored in the s64 field.
    pub(super) fn start_span(&mut self, kernel: &Kernel) {
        self.time_span_ns = kernel.local_clock() as i64;
    }
}

/// `teo_find_shallower_state`: walking down from `state_idx - 1`, the first enabled state
/// (non-polling with `no_poll`) whose target residency fits `duration_ns`, else the shallowest
/// enabled one visited, else `state_idx` itself. (`no_poll` arrived in v6.3; v5.13 callers
/// pass false.)
pub(super) fn find_shallower_state(
    platform: &Platform,
    dev: &Device,
    mut state_idx: usize,
    duration_ns: i64,
    no_poll: bool,
) -> usize {
    for i in (0..state_idx).rev() {
        if dev.is_disabled(i) || (no_poll && platform.states[i].polling) {
            continue;
        }
        state_idx = i;
        if platform.states[i].target_residency_ns <= duration_ns {
            break;
        }
    }
    state_idx
}
