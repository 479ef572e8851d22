//! The `menu` governor (`drivers/cpuidle/governors/menu.c`): what its versions share.
//!
//! menu predicts how long the CPU will stay idle from two sources and takes the smaller: the
//! time to the next timer scaled by a learned correction factor (one factor per order of
//! magnitude of that time, an EWMA of "observed / timer"), and a "typical interval" found in the
//! last eight observed idle durations when they are steady enough. It then walks the states
//! shallow to deep and keeps the deepest whose target residency fits the prediction and whose
//! exit latency fits the latency limit, with a few tick-related corrections.
//!
//! Variants, named as idle-decide.md names them (`v6_6.rs`; `v6_19.rs` holds v6.19 and the
//! two later releases, which change only its stopped-tick handling):
//! - [`v6_6::Menu66`], `menu@6.6`: mainline v6.6 .. v6.12 (12 buckets, iowait multiplier).
//! - [`v6_19::Menu619`], `menu` / `menu@6.19`: mainline v6.19; `menu@7.0` and `menu@7.1`:
//!   mainline v7.0 and v7.1 (they differ from v6.19 only when the tick is already stopped).
//!
//! What every version keeps in common, and is therefore written once here:
//! 1. `enable`: zero the per-CPU data, then set every correction factor to unity (8192).
//! 2. `reflect`: record the entered state in `dev->last_state_idx`, note that the next
//!    `select` must learn (`needs_update`), and whether the tick woke the CPU.
//! 3. The learning step (`menu_update`), run at the start of the next `select`: estimate what
//!    the last idle period really was (45 ms after a tick wake-up with a distant timer, the
//!    timer itself after a poll that hit its time limit, else the residency less the exit
//!    latency, or half the residency if it was too short for that), cap it at the timer,
//!    fold `measured / next_timer` into the bucket's factor (1/8 weight), and push the
//!    measured value in microseconds into the ring of eight recent intervals.
//! 4. The timer-based prediction: `next_timer * factor / 8192`, rounded to whole microseconds
//!    with the kernel's 64-bit wrap-around.
//! 5. The "state 0 anyway" early return and the final "retain the tick" correction.

mod v6_19;
mod v6_6;

#[cfg(test)]
mod tests;

pub use v6_19::Menu619;
pub use v6_6::Menu66;

use crate::cpuidle::{Device, Kernel, Platform};

/// `INTERVALS`: the length of the recent-interval ring (`1 << INTERVAL_SHIFT`).
const INTERVALS: usize = 8;
/// `INTERVAL_SHIFT`: divisions by a full ring are shifts in the kernel.
const INTERVAL_SHIFT: u32 = 3;
/// `RESOLUTION`: fixed-point unit of one correction-factor sample.
const RESOLUTION: u64 = 1024;
/// `DECAY`: the factor's EWMA keeps 7/8 of its old value per update.
const DECAY: u32 = 8;
/// `RESOLUTION * DECAY`: a factor of 1.0, the value `enable` starts every bucket at.
const UNITY_FACTOR: u32 = (RESOLUTION as u32) * DECAY;
/// `NSEC_PER_USEC`.
const NSEC_PER_USEC: u64 = 1000;
/// `MAX_INTERESTING` (50 ms in ns): longer sleeps count as perfectly predicted.
const MAX_INTERESTING_NS: u64 = 50_000 * NSEC_PER_USEC;
/// `RESOLUTION * DECAY * NSEC_PER_USEC`: divides `next_timer_ns * factor` into microseconds.
const PREDICTION_DIVISOR: u64 = RESOLUTION * DECAY as u64 * NSEC_PER_USEC;
/// `RESIDENCY_THRESHOLD_NS` (gov.h, 15 us): below it a typical interval is trusted without
/// asking for the (costly) sleep length, and (v6.19) a real state may replace polling only
/// if its target residency is below it.
const RESIDENCY_THRESHOLD_NS: u64 = 15 * NSEC_PER_USEC;

/// `struct menu_device` with `BUCKETS` correction factors (12 up to v6.12, 6 from v6.13).
///
/// `needs_update` and `tick_wakeup` are `int` flags in the kernel, only ever 0 or 1: bool.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MenuData<const BUCKETS: usize> {
    needs_update: bool,
    tick_wakeup: bool,
    /// The sleep length of the last `select` (KTIME_MAX when it was not asked for): the
    /// learning step divides by the value the prediction was made with.
    next_timer_ns: u64,
    /// The factor bucket the last `select` used; the learning step updates that one.
    bucket: u32,
    correction_factor: [u32; BUCKETS],
    /// Recent idle durations in microseconds (`unsigned int`; UINT_MAX marks no data).
    intervals: [u32; INTERVALS],
    interval_ptr: i32,
}

impl<const BUCKETS: usize> MenuData<BUCKETS> {
    /// `menu_enable_device`.
    fn new() -> Self {
        MenuData {
            needs_update: false,
            tick_wakeup: false,
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [UNITY_FACTOR; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
        }
    }

    /// Writes one sample into the ring (`menu_update_intervals` from v6.17; inline before).
    fn push_interval(&mut self, interval_us: u32) {
        self.intervals[self.interval_ptr as usize] = interval_us;
        self.interval_ptr += 1;
        if self.interval_ptr >= INTERVALS as i32 {
            self.interval_ptr = 0;
        }
    }

    /// `menu_update`: learn from the idle period that `reflect` reported.
    fn update(&mut self, platform: &Platform, dev: &Device) {
        let target = &platform.states[dev.last_state_idx as usize];
        let tick_ns = platform.tick_ns as u64;
        let mut measured_ns: u64 = if self.tick_wakeup && self.next_timer_ns > tick_ns {
            // The tick fired although the timer was more than a tick away: the idle period
            // could have been long; take 9/10 of MAX_INTERESTING rather than the cut-short one.
            9 * MAX_INTERESTING_NS / 10
        } else if target.polling && dev.poll_time_limit {
            // Polling gave up on its time limit: nothing woke the CPU, assume the timer would.
            self.next_timer_ns
        } else {
            let residency = dev.last_residency_ns;
            // `2 * exit_latency_ns` is s64 arithmetic compared as u64: a wrapping u64 product
            // has the same bits.
            let exit = target.exit_latency_ns as u64;
            if residency > exit.wrapping_mul(2) {
                residency.wrapping_sub(exit)
            } else {
                residency / 2
            }
        };
        // Keep every sample's ratio at most 1.
        if measured_ns > self.next_timer_ns {
            measured_ns = self.next_timer_ns;
        }

        let bucket = self.bucket as usize;
        let mut new_factor = self.correction_factor[bucket];
        new_factor -= new_factor / DECAY;
        if self.next_timer_ns > 0 && measured_ns < MAX_INTERESTING_NS {
            // u64 division, truncating; measured <= next_timer so the sample is at most 1024.
            new_factor += (RESOLUTION * measured_ns / self.next_timer_ns) as u32;
        } else {
            new_factor += RESOLUTION as u32;
        }
        self.correction_factor[bucket] = new_factor;

        self.push_interval(ktime_to_us(measured_ns));
    }

    /// `menu_reflect`.
    fn reflect(&mut self, dev: &mut Device, kernel: &mut Kernel, index: usize) {
        dev.last_state_idx = index as i32;
        self.needs_update = true;
        self.tick_wakeup = kernel.idle_got_tick();
    }

    /// The timer-based prediction in microseconds: `next_timer_ns * factor / 8192` rounded
    /// to the nearest microsecond. The product is u64 and wraps for sleep lengths beyond
    /// ~2^64 / factor (about 26 days at unity), and the quotient is truncated to
    /// `unsigned int timer_us`, both as in the kernel.
    fn timer_us(&self) -> u32 {
        let factor = u64::from(self.correction_factor[self.bucket as usize]);
        let scaled = (PREDICTION_DIVISOR / 2).wrapping_add(self.next_timer_ns.wrapping_mul(factor));
        (scaled / PREDICTION_DIVISOR) as u32
    }
}

/// `ktime_to_us()` of a u64 nanosecond value stored into `unsigned int`: the kernel passes
/// it as an s64 (signed division, truncating toward zero) and the result is cut to 32 bits.
fn ktime_to_us(ns: u64) -> u32 {
    ((ns as i64) / NSEC_PER_USEC as i64) as u32
}

/// The order-of-magnitude part of `which_bucket`: 0 below 10 us, then one step per decade
/// up to 5 at 100 ms and beyond.
fn duration_bucket(duration_ns: u64) -> u32 {
    const EDGES_NS: [u64; 5] = [10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
    EDGES_NS
        .iter()
        .take_while(|&&edge| duration_ns >= edge)
        .count() as u32
}

/// The early return every version makes: state 0 will be used anyway when there is only one
/// state, no latency is tolerated, or (state 0 being enabled) the timer comes before state
/// 1's target residency or state 1's exit latency breaks the limit.
fn state0_forced(platform: &Platform, dev: &Device, latency_req: i64, next_timer_ns: u64) -> bool {
    let states = &platform.states;
    if states.len() <= 1 || latency_req == 0 {
        return true;
    }
    // u64 next_timer_ns against the s64 target residency: compared as u64.
    (next_timer_ns < states[1].target_residency_ns as u64
        || latency_req < states[1].exit_latency_ns)
        && !dev.is_disabled(0)
}

/// The end of every version's `select`: with the tick still running and either a polling
/// state or a prediction shorter than the tick, keep the tick; then, if the chosen state's
/// target residency does not fit before the tick (`delta_tick`, signed), step down to the
/// nearest enabled state, stopping at the first that fits (or at the last enabled one).
fn retain_tick(
    platform: &Platform,
    dev: &Device,
    kernel: &Kernel,
    mut idx: usize,
    predicted_ns: u64,
    delta_tick: i64,
    stop_tick: &mut bool,
) -> usize {
    let states = &platform.states;
    if (states[idx].polling || predicted_ns < platform.tick_ns as u64) && !kernel.tick_stopped() {
        *stop_tick = false;
        if idx > 0 && states[idx].target_residency_ns > delta_tick {
            for i in (0..idx).rev() {
                if dev.is_disabled(i) {
                    continue;
                }
                idx = i;
                if states[i].target_residency_ns <= delta_tick {
                    break;
                }
            }
        }
    }
    idx
}
