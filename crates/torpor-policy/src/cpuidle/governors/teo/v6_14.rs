//! `teo@6.14`: the Timer Events Oriented governor after Rafael Wysocki's January 2025 rework
//! (11 commits merged for v6.14), unchanged in behaviour through v6.18.
//!
//! What the rework changed against v6.11 .. v6.13 (`teo@6.12`): the time span became a flag
//! (`artificial_wakeup`, set by a safety net); `total` decays on its own instead of being rebuilt
//! from the bins; `tick_hits` gave way to `tick_intercepts`; the early return of state 0 no
//! longer fetches the sleep length; and the sleep length is skipped for shallow choices when
//! most idle periods are short (`short_idles`) or the latency limit is tight, on every platform
//! (no longer only where state 0 polls).
//!
//! Learning (`teo_update`, run by the next `select` when `reflect` left `last_state_idx >= 0`):
//! 1. `short_idles` decays by 1/8.
//! 2. After a safety-net wake-up (poll time limit, or a tick with more than a tick to the next
//!    timer) the measured duration is "infinite" (U64_MAX). Otherwise it is the residency less
//!    half the entered state's exit latency, or half the residency when that is shorter than the
//!    latency; a result under `RESIDENCY_THRESHOLD_NS`, and every halved one, counts a short idle.
//! 3. Every bin decays by 1/8; the sleep length picks the timer's bin, the measured duration the
//!    wake-up's bin.
//! 4. `tick_intercepts` decays. Same bin: a hit there. Different bins: an intercept in the
//!    wake-up's bin, and a tick intercept when the measured duration is at least a tick (sic:
//!    the comparison is the wrong way round, which v6.19 fixed).
//! 5. `total` decays by 1/8 and gains the pulse.
//!
//! Choosing (`teo_select`):
//! 1. Assume an infinite sleep length until it is fetched. With one state, or none enabled, use
//!    state 0 and keep the tick.
//! 2. The candidate is the deepest enabled state; with only one enabled, take it (tick decided
//!    from its target residency).
//! 3. If the intercepts below the candidate outweigh `total` less the hits below it, walk down to
//!    the deepest state below which over half of those intercepts fell, staying off states too
//!    shallow for an already stopped tick. Then clamp to the latency limit.
//! 4. If the choice is state 0 or under `RESIDENCY_THRESHOLD_NS`, and either half the events were
//!    short idles or the latency limit is under `LATENCY_THRESHOLD_NS`, return it with the tick
//!    kept and without the sleep length.
//! 5. Fetch the sleep length; state 0 is returned with the tick kept. If the candidate's target
//!    residency exceeds the sleep length, step down to the deepest state that fits (unless that
//!    is too shallow for a stopped tick).
//! 6. If the choice is shorter than a tick and tick intercepts exceed 5/8 of `total`, plan for
//!    half a tick so the tick is kept.
//! 7. Stop the tick unless the state polls or the planned duration is under a tick; a kept tick
//!    bounds the idle time, so step down to a state that fits before it.
//!
//! Types as in the kernel's `struct teo_cpu`: `sleep_length_ns` s64; bins, `total`,
//! `tick_intercepts`, `short_idles` unsigned int. The measured duration is u64, so it is compared
//! with (s64) target residencies, `RESIDENCY_THRESHOLD_NS` and `TICK_NSEC` as u64.
//!
//! ASSUMPTION: the v6.15 .. v6.18 files were not read one by one. The v6.14 file read here and
//! the v6.19 file differ exactly by the seven commits of the 6.19 merge window (listed in
//! `teo_6_19`), and the one later teo rework posted in between (April 2025, "Refine handling of
//! short idle intervals", a `teo_get_candidate()` helper) is absent from v6.19, so v6.14 .. v6.18
//! are taken to behave the same.

use super::common_v6_12::{
    candidate, find_shallower_state, finish, intercept_lookup, intercepts_dominate, state_ok, Bin,
    Exit, DECAY_SHIFT, LATENCY_THRESHOLD_NS, PULSE, RESIDENCY_THRESHOLD_NS,
};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX, MAX_STATES};

/// `struct teo_cpu` of v6.14 .. v6.18.
pub struct Teo614 {
    /// The sleep length this select fetched, `KTIME_MAX` when it did not.
    pub(super) sleep_length_ns: i64,
    pub(super) state_bins: [Bin; MAX_STATES],
    pub(super) total: u32,
    /// Intercepts "before" the tick (as counted: see step 4 of the learning).
    pub(super) tick_intercepts: u32,
    /// Idle periods measured under `RESIDENCY_THRESHOLD_NS`.
    pub(super) short_idles: u32,
    /// The last wake-up came from a safety net, not from the event that ended the idle period.
    pub(super) artificial_wakeup: bool,
}

pub(super) fn decay(m: &mut u32) {
    *m -= *m >> DECAY_SHIFT;
}

impl Teo614 {
    /// `teo_enable_device`: everything zeroed.
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Teo614 {
            sleep_length_ns: 0,
            state_bins: [Bin::default(); MAX_STATES],
            total: 0,
            tick_intercepts: 0,
            short_idles: 0,
            artificial_wakeup: false,
        }
    }

    fn update(&mut self, platform: &Platform, dev: &Device) {
        decay(&mut self.short_idles);
        let measured_ns: u64 = if self.artificial_wakeup {
            u64::MAX
        } else {
            let lat_ns = platform.states[dev.last_state_idx as usize].exit_latency_ns as u64;
            let m = dev.last_residency_ns;
            if m >= lat_ns {
                let m = m - lat_ns / 2;
                if m < RESIDENCY_THRESHOLD_NS as u64 {
                    self.short_idles = self.short_idles.wrapping_add(PULSE);
                }
                m
            } else {
                self.short_idles = self.short_idles.wrapping_add(PULSE);
                m / 2
            }
        };

        let (mut idx_timer, mut idx_duration) = (0, 0);
        for i in 0..platform.state_count() {
            let bin = &mut self.state_bins[i];
            decay(&mut bin.hits);
            decay(&mut bin.intercepts);
            let target_residency_ns = platform.states[i].target_residency_ns;
            if target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                // s64 against u64: compared as u64.
                if target_residency_ns as u64 <= measured_ns {
                    idx_duration = i;
                }
            }
        }

        decay(&mut self.tick_intercepts);
        if idx_timer == idx_duration {
            let bin = &mut self.state_bins[idx_timer];
            bin.hits = bin.hits.wrapping_add(PULSE);
        } else {
            let bin = &mut self.state_bins[idx_duration];
            bin.intercepts = bin.intercepts.wrapping_add(PULSE);
            if platform.tick_ns as u64 <= measured_ns {
                self.tick_intercepts = self.tick_intercepts.wrapping_add(PULSE);
            }
        }

        decay(&mut self.total);
        self.total = self.total.wrapping_add(PULSE);
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
            idx = intercept_lookup(
                platform,
                dev,
                kernel,
                &self.state_bins,
                idx,
                s.idx_intercept_sum,
            );
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
            let i = find_shallower_state(platform, dev, idx, duration_ns);
            if state_ok(platform, kernel, i) {
                idx = i;
            }
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

impl Governor for Teo614 {
    fn name(&self) -> &'static str {
        "teo@6.14"
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
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        index: usize,
    ) {
        dev.last_state_idx = index as i32;
        // `||` short-circuits: after a poll time-out the tick flag is not read (nor cleared).
        self.artificial_wakeup = dev.poll_time_limit
            || (kernel.idle_got_tick() && self.sleep_length_ns > platform.tick_ns);
        if self.artificial_wakeup {
            dev.poll_time_limit = false;
        }
    }
}
