//! `menu` / `menu@6.19`, `menu@7.0`, `menu@7.1`: the menu governor as mainline v6.19, v7.0
//! and v7.1 have it (spec-cpu.md §2.3-§2.4). The three differ only in how a stopped tick is
//! handled, so they share this file.
//!
//! v6.19 is v6.6 (see `v6_6.rs`) plus every behavioural change merged up to v6.19, by first
//! release:
//! - v6.13 (38f83090f515): I/O waiters no longer matter: 6 buckets, no multiplier.
//! - v6.15 (13982929fb08, 60256e458e1c, 8de7606f0fe2): the typical interval is computed in
//!   one pass (variance = mean of squares - square of the truncated mean) and outliers are
//!   dropped at whichever end lies farther from the mean. (85975daeaa4d of v6.15, "return the
//!   maximum when 4..6 samples remain", was reverted by 10fad4012234 in v6.18-rc3.)
//! - v6.17-rc2 (fa3fa55de0d6): after an entry the driver rejected (no `reflect`,
//!   `last_residency_ns == 0`), UINT_MAX goes into the interval ring.
//! - v6.17-rc3 (779b1a1cb13a): the exit latency is checked before the target residency, and
//!   the latency limit is no longer lowered to the prediction.
//! - v6.18-rc (17224c1d2574, no functional change; db86f55bf81a): a real state replaces
//!   polling only if its exit latency does not exceed the prediction.
//! - v6.19 (07d815701274, "Applied as 6.19 material"; AUTOSEL'ed for 6.18.y after v6.18):
//!   ... and only if its target residency is below 15 us.
//!
//! v7.0 (80606f4eb8d7): the sleep length is also fetched whenever the tick is stopped, and
//! the stopped-tick fix-up (step 5) only runs on a fetched sleep length: v6.19 turned a
//! skipped one (KTIME_MAX) into "sleep forever" and chose the deepest state.
//! v7.1 (SAFE_TIMER_RANGE, "cpuidle: governors: menu: Refine stopped tick handling"): the
//! fix-up is skipped when the timer is at most two ticks away, as that timer will end a too
//! shallow state soon enough.
//!
//! `select`:
//! 1. Read the latency limit. If `reflect` ran since the last `select`, learn from that idle
//!    period (see the parent module); else, if `last_residency_ns` is 0 (a rejected entry, or
//!    the very first `select` on a zeroed device), push UINT_MAX ("no data") into the ring.
//! 2. Typical interval: mean and variance of the ring's samples in (min_thresh, max_thresh),
//!    starting from (-1, UINT_MAX). Steady (stddev at most avg/6 with at least six samples, or
//!    at most 20 us) -> the mean. Otherwise, with more than six samples, drop the extreme
//!    farther from the mean (the maximum on a tie) and retry; else UINT_MAX (none).
//! 3. If that prediction exceeds 15 us (v7.0+: or the tick is stopped), ask for the sleep
//!    length (negative -> 0, and then the time to the tick is 0 too), pick the factor bucket
//!    from its decade and lower the prediction to `sleep_length * factor`. Otherwise skip the
//!    sleep length: the timer is taken as infinitely far (KTIME_MAX, last bucket), the tick
//!    as half a period away.
//! 4. Return state 0 at once (tick kept only if state 0 polls) when it will be used anyway.
//!    (v7.0+ run step 5 before this one, inside step 3.)
//! 5. With the tick already stopped, a prediction shorter than a tick is distrusted and
//!    replaced by the timer: v6.19 even by a KTIME_MAX one; v7.1 not when the timer is
//!    within two ticks.
//! 6. Walk the enabled states shallow to deep; stop at the first that breaks the latency
//!    limit; take every state whose target residency fits the prediction. At the first that
//!    does not fit: if the pick so far polls and this state's target residency is below
//!    15 us, fits before the timer, and its exit latency fits the prediction, take it instead
//!    of polling; else, with a prediction shorter than the tick, keep the pick; with the tick
//!    running, keep the pick and lower the prediction to its target residency; with the tick
//!    stopped, return the pick, or this state if the pick is shorter than a tick and this
//!    state fits before the next event.
//! 7. Keep the tick for a polling pick or a prediction shorter than the tick (unless it is
//!    already stopped), stepping down to a state that fits before the tick.
//!
//! ASSUMPTION (v7.0+): v7.0's cpuidle core no longer calls the governor when the driver has
//! a single state (d557640e4ce5); menu's own `state_count <= 1` test is kept here (it decides
//! what an idle-decide sequence, which always calls `select`, gets on such a platform).

use super::{
    duration_bucket, retain_tick, state0_forced, MenuData, INTERVALS, INTERVAL_SHIFT,
    NSEC_PER_USEC, RESIDENCY_THRESHOLD_NS,
};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX};

/// `BUCKETS` from v6.13: one per decade of the sleep length.
const BUCKETS: usize = 6;

/// How a release treats a prediction shorter than a tick once the tick is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StoppedTick {
    /// Up to v6.19: use the timer instead, even when it was not fetched (KTIME_MAX).
    UseTimer,
    /// v7.0: fetch the timer whenever the tick is stopped, and use it.
    FetchTimer,
    /// v7.1: fetch it, and use it unless it is within `SAFE_TIMER_RANGE_NS` (two ticks).
    FetchTimerBeyondSafeRange,
}

/// The menu governor of v6.19 and later; the releases differ only in [`StoppedTick`].
pub struct Menu619 {
    data: MenuData<BUCKETS>,
    stopped_tick: StoppedTick,
    name: &'static str,
}

impl Menu619 {
    /// `menu` / `menu@6.19`.
    pub fn v6_19(_platform: &Platform, _dev: &mut Device) -> Self {
        Menu619::new(StoppedTick::UseTimer, "menu")
    }

    /// `menu@7.0`.
    pub fn v7_0(_platform: &Platform, _dev: &mut Device) -> Self {
        Menu619::new(StoppedTick::FetchTimer, "menu@7.0")
    }

    /// `menu@7.1`.
    pub fn v7_1(_platform: &Platform, _dev: &mut Device) -> Self {
        Menu619::new(StoppedTick::FetchTimerBeyondSafeRange, "menu@7.1")
    }

    fn new(stopped_tick: StoppedTick, name: &'static str) -> Self {
        Menu619 {
            data: MenuData::new(),
            stopped_tick,
            name,
        }
    }
}

/// `get_typical_interval()` of v6.15 .. v6.19. The kernel keeps sums in u64 and squares the
/// samples as s64; squares of samples near UINT_MAX and their sum wrap, which u64 wrapping
/// arithmetic reproduces bit for bit. Returns microseconds, UINT_MAX for none.
pub(super) fn typical_interval(intervals: &[u32; INTERVALS]) -> u32 {
    let mut min_thresh: i64 = -1;
    let mut max_thresh: i64 = i64::from(u32::MAX);
    loop {
        let mut max: u32 = 0;
        let mut min: u32 = u32::MAX;
        let mut avg: u64 = 0;
        let mut variance: u64 = 0;
        let mut divisor: u32 = 0;
        for &v in intervals {
            let value = i64::from(v);
            if value <= min_thresh || value >= max_thresh {
                continue;
            }
            divisor += 1;
            avg = avg.wrapping_add(u64::from(v));
            variance = variance.wrapping_add(u64::from(v).wrapping_mul(u64::from(v)));
            max = max.max(v);
            min = min.min(v);
        }
        if max == 0 {
            return u32::MAX;
        }
        if divisor as usize == INTERVALS {
            avg >>= INTERVAL_SHIFT;
            variance >>= INTERVAL_SHIFT;
        } else {
            avg /= u64::from(divisor);
            variance /= u64::from(divisor);
        }
        let avg_sq = avg.wrapping_mul(avg);
        variance = variance.wrapping_sub(avg_sq);

        if variance <= u64::MAX / 36
            && ((avg_sq > variance * 36 && divisor * 4 >= 24) || variance <= 400)
        {
            return avg as u32;
        }
        if divisor * 4 <= 24 {
            return u32::MAX;
        }
        // Drop the extreme farther from the mean; on a tie, the maximum.
        if avg.wrapping_sub(u64::from(min)) > u64::from(max).wrapping_sub(avg) {
            min_thresh = i64::from(min);
        } else {
            max_thresh = i64::from(max);
        }
    }
}

impl Governor for Menu619 {
    fn name(&self) -> &'static str {
        self.name
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        let states = &platform.states;
        let tick_ns = platform.tick_ns;
        let stopped_tick = self.stopped_tick;
        let data = &mut self.data;
        let latency_req = kernel.latency_req();

        if data.needs_update {
            data.update(platform, dev);
            data.needs_update = false;
        } else if dev.last_residency_ns == 0 {
            // No reflect since the last select: the entry was rejected, so the short
            // intervals seen so far must not be taken as the whole story.
            data.push_interval(u32::MAX);
        }

        let mut predicted_ns = u64::from(typical_interval(&data.intervals)) * NSEC_PER_USEC;
        let delta_tick: i64;
        let fetch_when_stopped = stopped_tick != StoppedTick::UseTimer && kernel.tick_stopped();
        if predicted_ns > RESIDENCY_THRESHOLD_NS || fetch_when_stopped {
            let (mut delta, mut next_tick) = kernel.get_sleep_length();
            if delta < 0 {
                delta = 0;
                next_tick = 0;
            }
            delta_tick = next_tick;
            data.next_timer_ns = delta as u64;
            data.bucket = duration_bucket(data.next_timer_ns);
            predicted_ns = predicted_ns.min(u64::from(data.timer_us()) * NSEC_PER_USEC);
            let distrust = match stopped_tick {
                StoppedTick::UseTimer => false,
                StoppedTick::FetchTimer => true,
                // SAFE_TIMER_RANGE_NS = 2 * TICK_NSEC, against the u64 next_timer_ns.
                StoppedTick::FetchTimerBeyondSafeRange => data.next_timer_ns > 2 * tick_ns as u64,
            };
            if distrust && kernel.tick_stopped() && predicted_ns < tick_ns as u64 {
                predicted_ns = data.next_timer_ns;
            }
        } else {
            data.next_timer_ns = KTIME_MAX as u64;
            delta_tick = tick_ns / 2;
            data.bucket = BUCKETS as u32 - 1;
        }
        let next_timer_ns = data.next_timer_ns;

        if state0_forced(platform, dev, latency_req, next_timer_ns) {
            *stop_tick = !states[0].polling;
            return 0;
        }

        if stopped_tick == StoppedTick::UseTimer
            && kernel.tick_stopped()
            && predicted_ns < tick_ns as u64
        {
            predicted_ns = next_timer_ns;
        }

        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            if dev.is_disabled(i) {
                continue;
            }
            let pick = *idx.get_or_insert(i);
            if s.exit_latency_ns > latency_req {
                break;
            }
            // s64 residencies and latencies against the u64 prediction: compared as u64.
            if s.target_residency_ns as u64 <= predicted_ns {
                idx = Some(i);
                continue;
            }
            if states[pick].polling
                && s.target_residency_ns < RESIDENCY_THRESHOLD_NS as i64
                && s.target_residency_ns as u64 <= next_timer_ns
                && s.exit_latency_ns as u64 <= predicted_ns
            {
                predicted_ns = s.target_residency_ns as u64;
                idx = Some(i);
                break;
            }
            if predicted_ns < tick_ns as u64 {
                break;
            }
            if !kernel.tick_stopped() {
                predicted_ns = states[pick].target_residency_ns as u64;
                break;
            }
            if states[pick].target_residency_ns < tick_ns && s.target_residency_ns <= delta_tick {
                return i;
            }
            return pick;
        }
        // No state enabled: the kernel falls back to state 0.
        let idx = idx.unwrap_or(0);

        retain_tick(
            platform,
            dev,
            kernel,
            idx,
            predicted_ns,
            delta_tick,
            stop_tick,
        )
    }

    fn reflect(&mut self, _: &Platform, dev: &mut Device, kernel: &mut Kernel, index: usize) {
        self.data.reflect(dev, kernel, index);
    }
}
