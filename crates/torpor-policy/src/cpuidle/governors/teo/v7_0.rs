//! `teo@7.0`: the Timer Events Oriented governor as merged for v7.0 (five commits by Rafael
//! Wysocki on top of v6.19, `teo`). Not the bare `teo`: v6.19 is the newest release whose whole
//! file was read; v7.0 is rebuilt from the applied patches (see ASSUMPTION below).
//!
//! What v7.0 changed against v6.19:
//! - A hit now also needs the wake-up to come after the timer would have fired: the sleep
//!   length less the measured duration must be under half the entered state's exit latency
//!   (for a measurement already reduced by that half, "the sleep length is below the raw
//!   residency"). Anything else is an intercept in the wake-up's bin, even in the timer's bin.
//! - A tick wake-up that does not dominate counts as a hit in the timer's bin unless intercepts
//!   within a tick make up at least 2/3 of the (pre-pulse) bin total: the tick most likely fired
//!   because an expected intercept did not come.
//! - The tick test at select becomes `3 * tick_intercepts >= 2 * total` (was > 5/8 of total).
//! - The intercept lookup starts from the bin with the most intercepts below the candidate (the
//!   deepest such bin on ties): a walk may stop only at or below it, and if the lower bound of
//!   the walk is already at or past it (and enabled), that bound is taken at once.
//! - With the tick stopped, a lower bound with the candidate's own target residency (an empty
//!   bin between them) keeps the candidate.
//!
//! Learning (`teo_update`, run by the next `select` when `reflect` left `last_state_idx >= 0`):
//! 1. `short_idles` decays.
//! 2. After a poll time-out (cleared here) the measured duration is S64_MAX. Otherwise it is the
//!    residency less half the entered state's exit latency, or half the residency when that is
//!    shorter than the latency; a result under `RESIDENCY_THRESHOLD_NS`, and every halved one,
//!    counts a short idle.
//! 3. Every bin decays; `total` becomes their sum plus the coming pulse. The sleep length picks
//!    the timer's bin, the measured duration the wake-up's bin.
//! 4. `tick_intercepts` and `total_tick` decay. A tick wake-up adds to `total_tick`; if those
//!    exceed 2/3 of `total` it is a hit of the deepest state; else, if tick intercepts are under
//!    2/3 of the bin sum, a hit in the timer's bin; either way nothing else is booked.
//! 5. Same bin and woken no earlier than the timer (within half the exit latency): a hit.
//!    Otherwise an intercept in the wake-up's bin, and a tick intercept when the measured
//!    duration is at most a tick.
//!
//! Choosing (`teo_select`):
//! 1. Assume an infinite sleep length until it is fetched. With one state, or none enabled, use
//!    state 0 and keep the tick.
//! 2. The candidate is the deepest enabled state (with only one enabled, take it); note the bin
//!    below the candidate's table end with the most intercepts.
//! 3. If the intercepts below the candidate outweigh `total` less the hits below it: the walk's
//!    lower bound is the first enabled state, or with a stopped tick the first state of at least
//!    a tick (if that has the candidate's target residency, keep the candidate). A lower bound at
//!    or past the busiest bin, if enabled, is the choice. Otherwise walk down summing intercepts
//!    and stop at the first enabled state, at or below the busiest bin, where they exceed half of
//!    those below the candidate (or at the last enabled state walked). Clamp to the latency
//!    limit.
//! 4. If the choice is state 0 or under `RESIDENCY_THRESHOLD_NS`, and either half the events were
//!    short idles or the latency limit is under `LATENCY_THRESHOLD_NS`, return it with the tick
//!    kept and without the sleep length.
//! 5. Fetch the sleep length; state 0 is returned with the tick kept. If the candidate's target
//!    residency exceeds the sleep length, step down to the deepest state that fits.
//! 6. If the choice is shorter than a tick and tick intercepts are at least 2/3 of `total`, plan
//!    for half a tick so the tick is kept.
//! 7. Stop the tick unless the state polls or the planned duration is under a tick; a kept tick
//!    bounds the idle time, so step down to a state that fits before it.
//!
//! ASSUMPTION: no complete v7.0 teo.c was available. The code follows the five commits listed in
//! the 7.0-rc1 PM pull (4bd2221f231d, 60836533b4c7, 475ca3470b37, f36de72673ad, a971f984b845) as
//! posted in their final revisions (v3 for the last two), and the v7.1 "Modify the handling of
//! stopped tick" diff, whose removed lines show the v7.0 lookup block exactly as modelled here.
//! `sleep_length_ns - measured_ns` is s64 arithmetic that can overflow in C for a wrapped
//! (negative) residency with no sleep length; the kernel builds with wrapping signed overflow,
//! so it wraps here too.

use super::common_v6_12::{
    candidate, find_shallower_state, finish, intercepts_dominate, Bin, Exit, LATENCY_THRESHOLD_NS,
    PULSE, RESIDENCY_THRESHOLD_NS,
};
use super::v6_19::{decay_bins, measured_ns, teo_decay};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX, MAX_STATES};

/// `struct teo_cpu` of v7.0 (unchanged from v6.19).
pub struct Teo70 {
    /// The sleep length this select fetched, `KTIME_MAX` when it did not.
    pub(super) sleep_length_ns: i64,
    pub(super) state_bins: [Bin; MAX_STATES],
    pub(super) total: u32,
    /// Wake-ups by the scheduler tick.
    pub(super) total_tick: u32,
    /// Intercepts at or below a tick.
    pub(super) tick_intercepts: u32,
    /// Idle periods measured under `RESIDENCY_THRESHOLD_NS`.
    pub(super) short_idles: u32,
    /// The last wake-up was the tick (`tick_nohz_idle_got_tick()` at reflect).
    pub(super) tick_wakeup: bool,
}

/// The bin below the table's last state with the most intercepts, the deepest one on ties (the
/// scan over bins 0 .. N-2 that v7.0 adds to the candidate scan, enabled or not).
fn intercept_max_idx(n: usize, bins: &[Bin]) -> usize {
    let mut max = 0;
    let mut max_idx = 0;
    for (i, bin) in bins.iter().enumerate().take(n - 1) {
        if bin.intercepts >= max {
            max = bin.intercepts;
            max_idx = i;
        }
    }
    max_idx
}

impl Teo70 {
    /// `teo_enable_device`: everything zeroed.
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Teo70 {
            sleep_length_ns: 0,
            state_bins: [Bin::default(); MAX_STATES],
            total: 0,
            total_tick: 0,
            tick_intercepts: 0,
            short_idles: 0,
            tick_wakeup: false,
        }
    }

    fn update(&mut self, platform: &Platform, dev: &mut Device) {
        let n = platform.state_count();
        let lat_ns = platform.states[dev.last_state_idx as usize].exit_latency_ns;
        let measured_ns = measured_ns(platform, dev, &mut self.short_idles);
        let (total, idx_timer, idx_duration) = decay_bins(
            platform,
            &mut self.state_bins[..n],
            self.sleep_length_ns,
            measured_ns,
        );
        self.total = total.wrapping_add(PULSE);

        teo_decay(&mut self.tick_intercepts);
        teo_decay(&mut self.total_tick);
        if self.tick_wakeup {
            self.total_tick = self.total_tick.wrapping_add(PULSE);
            if self.total_tick.wrapping_mul(3) > self.total.wrapping_mul(2) {
                let bin = &mut self.state_bins[n - 1];
                bin.hits = bin.hits.wrapping_add(PULSE);
                return;
            }
            // Against the bin sum before this event's pulse.
            if self.tick_intercepts.wrapping_mul(3) < total.wrapping_mul(2) {
                let bin = &mut self.state_bins[idx_timer];
                bin.hits = bin.hits.wrapping_add(PULSE);
                return;
            }
        }

        if idx_timer == idx_duration && self.sleep_length_ns.wrapping_sub(measured_ns) < lat_ns / 2
        {
            let bin = &mut self.state_bins[idx_timer];
            bin.hits = bin.hits.wrapping_add(PULSE);
        } else {
            let bin = &mut self.state_bins[idx_duration];
            bin.intercepts = bin.intercepts.wrapping_add(PULSE);
            if measured_ns <= platform.tick_ns {
                self.tick_intercepts = self.tick_intercepts.wrapping_add(PULSE);
            }
        }
    }

    /// Step 3's lookup: the new candidate, or the old one when the stopped tick leaves no
    /// shallower state with a bin of its own.
    fn intercept_lookup(
        &self,
        platform: &Platform,
        dev: &Device,
        kernel: &Kernel,
        idx: usize,
        idx0: usize,
        idx_intercept_sum: u32,
    ) -> usize {
        let target = |i: usize| platform.states[i].target_residency_ns;
        let max_idx = intercept_max_idx(platform.state_count(), &self.state_bins);
        let mut min_idx = idx0;
        if kernel.tick_stopped() {
            while min_idx < idx && target(min_idx) < platform.tick_ns {
                min_idx += 1;
            }
            if target(min_idx) == target(idx) {
                return idx;
            }
        }
        if min_idx >= max_idx && !dev.is_disabled(min_idx) {
            return min_idx;
        }
        let mut new_idx = idx;
        let mut intercept_sum: u32 = 0;
        for i in (min_idx..idx).rev() {
            intercept_sum = intercept_sum.wrapping_add(self.state_bins[i].intercepts);
            if dev.is_disabled(i) {
                continue;
            }
            new_idx = i;
            if intercept_sum.wrapping_mul(2) > idx_intercept_sum && i <= max_idx {
                break;
            }
        }
        new_idx
    }

    fn choose(
        &mut self,
        platform: &Platform,
        dev: &Device,
        kernel: &mut Kernel,
        latency_req: i64,
    ) -> Exit {
        let tick = platform.tick_ns;
        let target = |i: usize| platform.states[i].target_residency_ns;
        let (mut idx, s) = match candidate(platform, dev, &self.state_bins, latency_req) {
            Ok(c) => c,
            Err(exit) => return exit,
        };

        if intercepts_dominate(self.total, &s) {
            idx = self.intercept_lookup(platform, dev, kernel, idx, s.idx0, s.idx_intercept_sum);
        }
        if idx > s.constraint_idx {
            idx = s.constraint_idx;
        }

        if (idx == 0 || target(idx) < RESIDENCY_THRESHOLD_NS)
            && (self.short_idles.wrapping_mul(2) >= self.total
                || latency_req < LATENCY_THRESHOLD_NS)
        {
            return Exit::OutTick(idx);
        }

        let (mut duration_ns, delta_tick) = kernel.get_sleep_length();
        self.sleep_length_ns = duration_ns;
        if idx == 0 {
            return Exit::OutTick(0);
        }
        if target(idx) > duration_ns {
            idx = find_shallower_state(platform, dev, idx, duration_ns);
        }
        if target(idx) < tick && self.tick_intercepts.wrapping_mul(3) >= self.total.wrapping_mul(2)
        {
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

impl Governor for Teo70 {
    fn name(&self) -> &'static str {
        "teo@7.0"
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
        self.sleep_length_ns = KTIME_MAX;
        let exit = self.choose(platform, dev, kernel, latency_req);
        finish(exit, platform, dev, kernel, stop_tick)
    }

    fn reflect(
        &mut self,
        _platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        index: usize,
    ) {
        self.tick_wakeup = kernel.idle_got_tick();
        dev.last_state_idx = index as i32;
    }
}
