//! `menu@6.6`: the menu governor as mainline v6.6 .. v6.12 has it (spec-cpu.md §2.2).
//!
//! First release: v6.6 (the sleep-length skip of 5484e31bbbff, merged for v6.6-rc1); it stayed
//! unchanged until the iowait removal of v6.13. Stable 6.6.y / 6.12.y sublevels from late
//! August 2025 carry later fixes and are not this variant.
//! Checked step by step against that `menu.c` compiled in userspace on twelve random
//! sequences (tests/menu_kernel_sequences.rs); the fidelity set's own answers for them are
//! `menu.c` without the polling swap of step 6, not mainline (docs/research/menu-6.6-fidelity.md).
//!
//! `select`:
//! 1. Read the latency limit; if `reflect` ran since the last `select`, learn from that idle
//!    period first (see the parent module); read the number of I/O waiters on this CPU.
//! 2. Typical interval: the average of the last eight idle durations if they are steady
//!    (stddev at most avg/6 with at least six samples, or at most 20 us); if not, drop the
//!    largest sample(s) and retry while more than six remain. No prediction = UINT_MAX us.
//! 3. If that prediction exceeds 15 us, ask for the sleep length (negative -> 0, and then the
//!    time to the tick is 0 too), pick the factor bucket from its decade, offset by 6 when
//!    I/O waiters exist, and lower the prediction to `sleep_length * factor`. Otherwise skip
//!    the sleep length: assume the timer is infinitely far (KTIME_MAX, last bucket) and the
//!    tick half a period away.
//! 4. Return state 0 at once (tick kept only if state 0 polls) when it will be used anyway.
//! 5. Tick already stopped: a prediction shorter than a tick is distrusted and replaced by
//!    the timer. Tick running: the latency limit is lowered to
//!    `prediction / (1 + 10 * iowaiters)` (the "performance multiplier").
//! 6. Walk the enabled states shallow to deep. A state whose target residency exceeds the
//!    prediction ends the walk: if the pick so far polls and this state meets the latency
//!    limit and fits before the timer, take it instead of polling; else, with a prediction
//!    shorter than the tick, keep the pick; with the tick running, keep the pick and lower
//!    the prediction to its target residency (so the tick is kept); with the tick stopped,
//!    return the pick, or this state if the pick is shorter than a tick and this state fits
//!    before the next event. A state breaking the latency limit also ends the walk.
//! 7. Keep the tick for a polling pick or a prediction shorter than the tick (unless it is
//!    already stopped), stepping down to a state that fits before the tick.

use super::{
    duration_bucket, retain_tick, state0_forced, MenuData, INTERVALS, INTERVAL_SHIFT,
    NSEC_PER_USEC, RESIDENCY_THRESHOLD_NS,
};
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX};

/// `BUCKETS` up to v6.12: six decades without I/O waiters, six with.
const BUCKETS: usize = 12;

pub struct Menu66 {
    data: MenuData<BUCKETS>,
}

impl Menu66 {
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Menu66 {
            data: MenuData::new(),
        }
    }
}

/// `which_bucket(duration_ns, nr_iowaiters)`: I/O pending selects the upper half.
fn which_bucket(duration_ns: u64, nr_iowaiters: u32) -> u32 {
    let base = if nr_iowaiters != 0 {
        BUCKETS as u32 / 2
    } else {
        0
    };
    base + duration_bucket(duration_ns)
}

/// `performance_multiplier(nr_iowaiters)` as the u64 divisor `div64_u64` receives: the kernel
/// computes `1 + 10 * n` in unsigned arithmetic, returns it as `int` and widens that int to
/// u64, so huge counts wrap mod 2^32 and a negative int becomes a huge divisor (never 0:
/// `1 + 10n` is odd).
fn performance_multiplier(nr_iowaiters: u32) -> u64 {
    let m = 1u32.wrapping_add(10u32.wrapping_mul(nr_iowaiters)) as i32;
    m as i64 as u64
}

/// `get_typical_interval()` of v6.6: two passes (mean, then the variance of the deviations
/// from the truncated mean), discarding samples above a threshold that starts at INT_MAX and
/// drops to `max - 1` after each failed round. Returns microseconds, UINT_MAX for none.
pub(super) fn typical_interval(intervals: &[u32; INTERVALS]) -> u32 {
    let mut thresh: u32 = i32::MAX as u32;
    loop {
        let mut max: u32 = 0;
        let mut sum: u64 = 0;
        let mut divisor: u32 = 0;
        for &v in intervals.iter().filter(|&&v| v <= thresh) {
            sum += u64::from(v);
            divisor += 1;
            max = max.max(v);
        }
        // All kept samples are zero: a fresh CPU (or only discarded data).
        if max == 0 {
            return u32::MAX;
        }
        let avg: u32 = if divisor as usize == INTERVALS {
            (sum >> INTERVAL_SHIFT) as u32
        } else {
            (sum / u64::from(divisor)) as u32
        };

        let mut variance: u64 = 0;
        for &v in intervals.iter().filter(|&&v| v <= thresh) {
            let diff = i64::from(v) - i64::from(avg);
            variance = variance.wrapping_add(diff.wrapping_mul(diff) as u64);
        }
        if divisor as usize == INTERVALS {
            variance >>= INTERVAL_SHIFT;
        } else {
            variance /= u64::from(divisor);
        }

        // avg^2 > 36 variance means stddev < avg / 6; the U64_MAX / 36 guard keeps 36 *
        // variance from overflowing.
        if variance <= u64::MAX / 36
            && ((u64::from(avg) * u64::from(avg) > variance * 36 && divisor * 4 >= 24)
                || variance <= 400)
        {
            return avg;
        }
        // Down to six samples or fewer: no confident prediction.
        if divisor * 4 <= 24 {
            return u32::MAX;
        }
        thresh = max - 1;
    }
}

impl Governor for Menu66 {
    fn name(&self) -> &'static str {
        "menu@6.6"
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
        let data = &mut self.data;
        let mut latency_req = kernel.latency_req();

        if data.needs_update {
            data.update(platform, dev);
            data.needs_update = false;
        }

        let nr_iowaiters = kernel.nr_iowait();

        // unsigned int * 1000L: computed in 64 bits, UINT_MAX us -> 4294967295000 ns.
        let mut predicted_ns = u64::from(typical_interval(&data.intervals)) * NSEC_PER_USEC;
        let delta_tick: i64;
        if predicted_ns > RESIDENCY_THRESHOLD_NS {
            let (mut delta, mut next_tick) = kernel.get_sleep_length();
            if delta < 0 {
                delta = 0;
                next_tick = 0;
            }
            delta_tick = next_tick;
            data.next_timer_ns = delta as u64;
            data.bucket = which_bucket(data.next_timer_ns, nr_iowaiters);
            predicted_ns = predicted_ns.min(u64::from(data.timer_us()) * NSEC_PER_USEC);
        } else {
            data.next_timer_ns = KTIME_MAX as u64;
            delta_tick = tick_ns / 2;
            data.bucket = which_bucket(KTIME_MAX as u64, nr_iowaiters);
        }
        let next_timer_ns = data.next_timer_ns;

        if state0_forced(platform, dev, latency_req, next_timer_ns) {
            *stop_tick = !states[0].polling;
            return 0;
        }

        if kernel.tick_stopped() {
            if predicted_ns < tick_ns as u64 {
                predicted_ns = next_timer_ns;
            }
        } else {
            let interactivity_req = predicted_ns / performance_multiplier(nr_iowaiters);
            // s64 latency_req against the u64 interactivity_req: compared as u64.
            if latency_req as u64 > interactivity_req {
                latency_req = interactivity_req as i64;
            }
        }

        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            if dev.is_disabled(i) {
                continue;
            }
            let pick = *idx.get_or_insert(i);
            if s.target_residency_ns as u64 > predicted_ns {
                if states[pick].polling
                    && s.exit_latency_ns <= latency_req
                    && s.target_residency_ns as u64 <= next_timer_ns
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
                if states[pick].target_residency_ns < tick_ns && s.target_residency_ns <= delta_tick
                {
                    return i;
                }
                return pick;
            }
            if s.exit_latency_ns > latency_req {
                break;
            }
            idx = Some(i);
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
