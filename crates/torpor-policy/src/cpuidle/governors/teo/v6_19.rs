//! `teo` (`teo@6.19`): the Timer Events Oriented governor as merged for v6.19, the newest
//! mainline teo whose complete file was read (the v7.0 changes are `teo@7.0`; v7.1's are not
//! modelled).
//!
//! What v6.19 changed against v6.14 .. v6.18 (`teo@6.14`): metrics below 8 decay to 0 instead
//! of sticking (`teo_decay`); the measured duration is s64 and compared signed; tick wake-ups are
//! no longer safety nets that pretend a long sleep: they are counted (`total_tick`) and, when
//! they make up over 2/3 of all events, booked as hits of the deepest state so the tick gets
//! stopped; a poll time-out is read at update time instead of at reflect; `tick_intercepts`
//! counts intercepts at or below a tick (the v6.14 comparison was inverted); `total` is again
//! rebuilt from the bins; the intercept lookup is simpler (it ends at the first enabled state
//! whose bin gathers over half the intercepts, and with a stopped tick starts no lower than the
//! first state of at least a tick); and the stepped-down state for a short sleep length is no
//! longer vetoed by a stopped tick.
//!
//! Learning (`teo_update`, run by the next `select` when `reflect` left `last_state_idx >= 0`):
//! 1. `short_idles` decays.
//! 2. After a poll time-out (cleared here) the measured duration is "infinite" (S64_MAX).
//!    Otherwise it is the residency less half the entered state's exit latency, or half the
//!    residency when that is shorter than the latency; a result under `RESIDENCY_THRESHOLD_NS`,
//!    and every halved one, counts a short idle.
//! 3. Every bin decays; `total` becomes their sum plus the coming pulse. The sleep length picks
//!    the timer's bin, the measured duration the wake-up's bin.
//! 4. `tick_intercepts` and `total_tick` decay. A tick wake-up adds to `total_tick`, and if those
//!    exceed 2/3 of `total` it is a hit of the deepest state and nothing else is booked.
//! 5. Same bin: a hit there. Different bins: an intercept in the wake-up's bin, and a tick
//!    intercept when the measured duration is at most a tick.
//!
//! Choosing (`teo_select`):
//! 1. Assume an infinite sleep length until it is fetched. With one state, or none enabled, use
//!    state 0 and keep the tick.
//! 2. The candidate is the deepest enabled state; with only one enabled, take it (tick decided
//!    from its target residency).
//! 3. If the intercepts below the candidate outweigh `total` less the hits below it, walk down
//!    (with a stopped tick, no lower than the first state of at least a tick, or the candidate)
//!    summing intercepts, to the first enabled state at which they exceed half of those below the
//!    candidate (or the last enabled state walked). Then clamp to the latency limit.
//! 4. If the choice is state 0 or under `RESIDENCY_THRESHOLD_NS`, and either half the events were
//!    short idles or the latency limit is under `LATENCY_THRESHOLD_NS`, return it with the tick
//!    kept and without the sleep length.
//! 5. Fetch the sleep length; state 0 is returned with the tick kept. If the candidate's target
//!    residency exceeds the sleep length, step down to the deepest state that fits.
//! 6. If the choice is shorter than a tick and tick intercepts exceed 5/8 of `total`, plan for
//!    half a tick so the tick is kept.
//! 7. Stop the tick unless the state polls or the planned duration is under a tick; a kept tick
//!    bounds the idle time, so step down to a state that fits before it.
//!
//! Types as in the kernel's `struct teo_cpu`: `sleep_length_ns` s64; bins, `total`,
//! `total_tick`, `tick_intercepts`, `short_idles` unsigned int; the measured duration s64 (the
//! u64 `last_residency_ns` reinterpreted, so a wrapped negative residency stays negative and
//! halves toward zero).

use super::common_v6_12::{
    candidate, find_shallower_state, finish, intercepts_dominate, Bin, Exit, DECAY_SHIFT,
    LATENCY_THRESHOLD_NS, PULSE, RESIDENCY_THRESHOLD_NS,
};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX, MAX_STATES};

/// `struct teo_cpu` of v6.19.
pub struct Teo619 {
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

/// `teo_decay()`: 1/8 off, and a metric too small to lose anything (< 8) drops to 0, so stale
/// events do not linger forever.
pub(super) fn teo_decay(m: &mut u32) {
    let delta = *m >> DECAY_SHIFT;
    if delta != 0 {
        *m -= delta;
    } else {
        *m = 0;
    }
}

/// Steps 1-2 of the update from v6.19 on: `short_idles` decays; the measured idle duration
/// (s64) is infinite after a poll time-out (read and cleared here), else the residency less
/// half the exit latency, or half the residency when it is shorter than the exit latency; an
/// idle period that short, or under `RESIDENCY_THRESHOLD_NS`, counts in `short_idles`.
pub(super) fn measured_ns(platform: &Platform, dev: &mut Device, short_idles: &mut u32) -> i64 {
    teo_decay(short_idles);
    if dev.poll_time_limit {
        dev.poll_time_limit = false;
        return i64::MAX;
    }
    let lat_ns = platform.states[dev.last_state_idx as usize].exit_latency_ns;
    // u64 into s64: the bits are kept.
    let m = dev.last_residency_ns as i64;
    if m >= lat_ns {
        let m = m - lat_ns / 2;
        if m < RESIDENCY_THRESHOLD_NS {
            *short_idles = short_idles.wrapping_add(PULSE);
        }
        m
    } else {
        *short_idles = short_idles.wrapping_add(PULSE);
        // Signed division: truncates toward zero, as C does.
        m / 2
    }
}

/// Step 3 of the update from v6.19 on: every bin decays and is summed (the new `total` before
/// this event's pulse); the timer bin is the deepest state whose target residency fits the
/// sleep length, the duration bin the deepest of those that also fits the measured duration.
/// Returns `(sum, idx_timer, idx_duration)`.
pub(super) fn decay_bins(
    platform: &Platform,
    bins: &mut [Bin],
    sleep_length_ns: i64,
    measured_ns: i64,
) -> (u32, usize, usize) {
    let mut total: u32 = 0;
    let (mut idx_timer, mut idx_duration) = (0, 0);
    for (i, bin) in bins.iter_mut().enumerate() {
        teo_decay(&mut bin.hits);
        total = total.wrapping_add(bin.hits);
        teo_decay(&mut bin.intercepts);
        total = total.wrapping_add(bin.intercepts);
        let target_residency_ns = platform.states[i].target_residency_ns;
        if target_residency_ns <= sleep_length_ns {
            idx_timer = i;
            if target_residency_ns <= measured_ns {
                idx_duration = i;
            }
        }
    }
    (total, idx_timer, idx_duration)
}

impl Teo619 {
    /// `teo_enable_device`: everything zeroed.
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Teo619 {
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
        }

        if idx_timer == idx_duration {
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
            let mut min_idx = s.idx0;
            if kernel.tick_stopped() {
                while min_idx < idx && target(min_idx) < tick {
                    min_idx += 1;
                }
            }
            let mut intercept_sum: u32 = 0;
            for i in (min_idx..idx).rev() {
                intercept_sum = intercept_sum.wrapping_add(self.state_bins[i].intercepts);
                if dev.is_disabled(i) {
                    continue;
                }
                idx = i;
                if intercept_sum.wrapping_mul(2) > s.idx_intercept_sum {
                    break;
                }
            }
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
        if target(idx) < tick && self.tick_intercepts > self.total / 2 + self.total / 8 {
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

impl Governor for Teo619 {
    fn name(&self) -> &'static str {
        "teo"
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
