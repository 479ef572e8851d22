//! `teo@6.12`: the Timer Events Oriented governor as mainline had it from v6.11 to v6.13, after
//! util-awareness was reverted and the "recent intercepts" ring removed (Christian Loehle's
//! series, v6.11), with "Don't count non-existent intercepts" (also v6.11): when the intercepts
//! alone pull the choice down to state 0 the sleep length is fetched anyway, so the next update
//! can tell a hit from an intercept.
//!
//! Learning (`teo_update`, run by the next `select` when `reflect` left `last_state_idx >= 0`):
//! 1. If the time from `select` to `reflect` (`time_span_ns`, or the sleep length itself when a
//!    safety net fired: the poll time limit, or a tick wake-up with more than a tick to the next
//!    timer) reached the sleep length, the CPU woke by or after the timer: the measured idle
//!    duration is "infinite" (U64_MAX). Otherwise it is the residency less half the entered
//!    state's exit latency (or half the residency when that is shorter than the latency).
//! 2. Every bin decays by 1/8; `total` is rebuilt as their sum. The sleep length picks the
//!    timer's bin, the measured duration the wake-up's bin (both as deep as the state table
//!    allows).
//! 3. If even the deepest state's target residency is below a tick, an extra hits-only bin
//!    `tick_hits` covers [TICK_NSEC, inf): it decays, joins `total`, and a wake-up past a tick
//!    with a timer past a tick is booked there; a wake-up before the tick with the timer past it
//!    is then an intercept.
//! 4. Otherwise the same bin for timer and wake-up is a hit there, different bins an intercept in
//!    the wake-up's bin; `total` gains the pulse.
//!
//! Choosing (`teo_select`):
//! 1. Record `local_clock()` for the time span and assume an infinite sleep length until it is
//!    fetched. With one state, or none enabled, use state 0 and keep the tick.
//! 2. The candidate is the deepest enabled state; with only one enabled, take it (tick decided
//!    from its target residency).
//! 3. If the intercepts below the candidate outweigh hits and intercepts from it up, walk down to
//!    the deepest state below which over half of those intercepts fell, staying off states too
//!    shallow for an already stopped tick.
//! 4. If that walk reached state 0, fetch the sleep length (only to learn from it) and return
//!    state 0 with the tick kept.
//! 5. Clamp to the latency limit. State 0, or a state under `RESIDENCY_THRESHOLD_NS` on a
//!    platform whose state 0 polls, is returned at once with the tick kept.
//! 6. Fetch the sleep length; if the candidate's target residency exceeds it, step down to the
//!    deepest state that fits (unless that is too shallow for a stopped tick).
//! 7. If the choice is shorter than a tick and intercepts of any bin exceed 5/8 of `total`, plan
//!    for half a tick so the tick is kept.
//! 8. Stop the tick unless the state polls or the planned duration is under a tick; a kept tick
//!    bounds the idle time, so step down to a state that fits before it.
//!
//! Types as in the kernel's `struct teo_cpu`: `time_span_ns`, `sleep_length_ns` s64; bins,
//! `total`, `tick_hits` unsigned int. The measured duration is u64, so the comparisons of
//! (s64) target residencies and `TICK_NSEC` with it are unsigned: a residency the core
//! recorded as a negative difference wraps to a huge value and counts as a long sleep.

use super::common_v6_12::{
    candidate, find_shallower_state, finish, intercept_lookup, intercepts_dominate, state_ok, Bin,
    Exit, DECAY_SHIFT, PULSE, RESIDENCY_THRESHOLD_NS,
};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX, MAX_STATES};

/// `struct teo_cpu` of v6.11 .. v6.13.
pub struct Teo612 {
    /// `local_clock()` at select, then (at reflect) the time from select to reflect.
    pub(super) time_span_ns: i64,
    /// The sleep length this select fetched, `KTIME_MAX` when it did not.
    pub(super) sleep_length_ns: i64,
    pub(super) state_bins: [Bin; MAX_STATES],
    pub(super) total: u32,
    pub(super) tick_hits: u32,
}

impl Teo612 {
    /// `teo_enable_device`: everything zeroed.
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Teo612 {
            time_span_ns: 0,
            sleep_length_ns: 0,
            state_bins: [Bin::default(); MAX_STATES],
            total: 0,
            tick_hits: 0,
        }
    }

    fn update(&mut self, platform: &Platform, dev: &Device) {
        let n = platform.state_count();
        let tick = platform.tick_ns;
        let measured_ns: u64 = if self.time_span_ns >= self.sleep_length_ns {
            u64::MAX
        } else {
            let lat_ns = platform.states[dev.last_state_idx as usize].exit_latency_ns as u64;
            let m = dev.last_residency_ns;
            if m >= lat_ns {
                m - lat_ns / 2
            } else {
                m / 2
            }
        };

        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for i in 0..n {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total = self
                .total
                .wrapping_add(bin.hits.wrapping_add(bin.intercepts));
            let target_residency_ns = platform.states[i].target_residency_ns;
            if target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                // s64 against u64: compared as u64.
                if target_residency_ns as u64 <= measured_ns {
                    idx_duration = i;
                }
            }
        }

        if platform.states[n - 1].target_residency_ns < tick {
            self.tick_hits -= self.tick_hits >> DECAY_SHIFT;
            self.total = self.total.wrapping_add(self.tick_hits);
            if tick <= self.sleep_length_ns {
                // The virtual bin past the deepest state: never equal to idx_duration.
                idx_timer = n;
                if tick as u64 <= measured_ns {
                    self.tick_hits = self.tick_hits.wrapping_add(PULSE);
                    self.total = self.total.wrapping_add(PULSE);
                    return;
                }
            }
        }

        if idx_timer == idx_duration {
            let bin = &mut self.state_bins[idx_timer];
            bin.hits = bin.hits.wrapping_add(PULSE);
        } else {
            let bin = &mut self.state_bins[idx_duration];
            bin.intercepts = bin.intercepts.wrapping_add(PULSE);
        }
        self.total = self.total.wrapping_add(PULSE);
    }

    fn choose(
        &mut self,
        platform: &Platform,
        dev: &Device,
        kernel: &mut Kernel,
        latency_req: i64,
    ) -> Exit {
        let n = platform.state_count();
        let tick = platform.tick_ns;
        let target = |i: usize| platform.states[i].target_residency_ns;
        let (mut idx, s) = match candidate(platform, dev, &self.state_bins, latency_req) {
            Ok(c) => c,
            Err(exit) => return exit,
        };

        // Intercepts of every bin, for the tick decision of step 7.
        let tick_intercept_sum = s
            .intercept_sum
            .wrapping_add(self.state_bins[n - 1].intercepts);

        let prev_intercept_idx = idx;
        if intercepts_dominate(self.total, &s) {
            idx = intercept_lookup(
                platform,
                dev,
                kernel,
                &self.state_bins,
                idx,
                s.idx_intercept_sum,
            );
        }
        if idx == 0 && prev_intercept_idx != 0 {
            let (duration_ns, _) = kernel.get_sleep_length();
            self.sleep_length_ns = duration_ns;
            return Exit::OutTick(0);
        }

        if idx > s.constraint_idx {
            idx = s.constraint_idx;
        }
        if idx == 0 {
            return Exit::OutTick(0);
        }
        if platform.states[0].polling && target(idx) < RESIDENCY_THRESHOLD_NS {
            return Exit::OutTick(idx);
        }

        let (mut duration_ns, delta_tick) = kernel.get_sleep_length();
        self.sleep_length_ns = duration_ns;
        if target(idx) > duration_ns {
            let i = find_shallower_state(platform, dev, idx, duration_ns);
            if state_ok(platform, kernel, i) {
                idx = i;
            }
        }
        if target(idx) < tick && tick_intercept_sum > self.total / 2 + self.total / 8 {
            duration_ns = tick / 2;
        }
        Exit::End {
            idx,
            duration_ns,
            idx0: s.idx0,
            delta_tick,
        }
    }
}

impl Governor for Teo612 {
    fn name(&self) -> &'static str {
        "teo@6.12"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        let latency_req = kernel.latency_req();
        if dev.last_state_idx >= 0 {
            self.update(platform, dev);
            dev.last_state_idx = -1;
        }
        // local_clock() is u64, the field s64: the kernel stores the bits.
        self.time_span_ns = kernel.local_clock() as i64;
        self.sleep_length_ns = KTIME_MAX;
        let exit = self.choose(platform, dev, kernel, latency_req);
        finish(exit, platform, dev, kernel, stop_tick)
    }

    fn reflect(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        index: usize,
    ) {
        dev.last_state_idx = index as i32;
        // `||` short-circuits: after a poll time-out the tick flag is not read (nor cleared).
        if dev.poll_time_limit
            || (kernel.idle_got_tick() && self.sleep_length_ns > platform.tick_ns)
        {
            dev.poll_time_limit = false;
            self.time_span_ns = self.sleep_length_ns;
        } else {
            // u64 clock minus the s64 field, as u64, stored back as s64.
            self.time_span_ns = kernel.local_clock().wrapping_sub(self.time_span_ns as u64) as i64;
        }
    }
}
