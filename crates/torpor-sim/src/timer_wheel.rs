//! When a kernel timer on the timer wheel fires: the jiffies clock and the rounding of the
//! wheel's buckets (`calc_wheel_index` and `calc_index` in kernel/time/timer.c; the
//! non-cascading wheel of v4.8, 500462a9de65, whose rounding is unchanged through v6.19: v5.9
//! only made `calc_index` also return the bucket's expiry, and 2020's fix of the last level
//! measured the cut-off from the base's clock).
//!
//! A timer armed with `expires = jiffies + delay` does not fire at `expires`:
//! 1. **Levels.** The wheel has `LVL_DEPTH` levels (9 when HZ > 100, else 8) of 64 buckets
//!    (`LVL_BITS` 6); level n's buckets are 8^n jiffies wide (`LVL_CLK_SHIFT` 3).
//! 2. **Which level.** With the base's clock at `clk`, the timer goes to level 0 when
//!    `delta = expires - clk` is below 63, to level n when it is below 63 x 8^n and not below
//!    63 x 8^(n-1) (`LVL_START(n)` = 63 << 3(n-1)): 0..=62 jiffies level 0, 63..=503 level 1,
//!    504..=4031 level 2, and so on. Past the last level's start it goes to the last level;
//!    a delta at or past the wheel's capacity (`WHEEL_TIMEOUT_CUTOFF` = `LVL_START(LVL_DEPTH)`)
//!    is cut to `clk + WHEEL_TIMEOUT_MAX` (the cut-off less the last level's granularity).
//!    An expiry already past (`delta` negative as a signed long) expires at `clk`.
//! 3. **Round up.** Its bucket expires at the first multiple of the level's granularity
//!    strictly after `expires`: `((expires >> 3n) + 1) << 3n` ("a timer does not fire early";
//!    the "+ 1" covers a timer armed at the edge of a tick). So even at level 0 a timer fires
//!    one jiffy after `expires`, and at level n up to 8^n jiffies after it.
//! 4. **Fire.** The timer softirq collects a bucket when `jiffies` reaches its expiry
//!    (`__run_timers`, `collect_expired_timers`): the timer fires at the tick that starts that
//!    jiffy.
//!
//! Consequence: a delayed work that re-queues itself every `d` jiffies of level 0 (a devfreq
//! monitor: `queue_delayed_work(devfreq_wq, .., msecs_to_jiffies(polling_ms))` at the end of
//! each poll) polls every `d + 1` jiffies, one tick later than `polling_ms` (rounded up to
//! jiffies) says: ufs-qcom's 60 ms at HZ=250 is 15 jiffies, a poll every 16 (64 ms).
//!
//! **The jiffies model** ([`Jiffies`]). ASSUMPTIONS, stated where they are used:
//! - Jiffy `j` starts at `j x TICK_NSEC` from the run's time 0 (jiffies read 0 at t = 0). A
//!   real kernel starts jiffies at `INITIAL_JIFFIES` (5 minutes before its 32-bit wrap) and a
//!   run starts at an arbitrary jiffy, so the coarser levels' buckets (8, 64, 512 jiffies) may
//!   fall anywhere relative to t = 0: one timer of level n lands anywhere within 8^n jiffies
//!   of its rounded time in a real system, wherever this model puts it.
//! - The base's clock reads the current jiffies when a timer is armed (`forward_timer_base`
//!   brings an idle base up to jiffies). A base that ran expired timers in the current jiffy
//!   sits one ahead ("while executing timers, base->clk is 1 offset ahead of jiffies"); that
//!   changes the level only for a delay of exactly 63, 504, 4032, ... jiffies, and is ignored.
//! - The timer's work runs at once when its timer fires (no worker wake-up latency); the tick
//!   and its softirq are at the start of the jiffy.
//!
//! **Which timers.** Every jiffies timer torpor models fires through [`Jiffies::timer_fires`]:
//! the devfreq monitor (torpor-policy's `ufshcd/scaling.rs`), the block layer boost's work
//! (torpor-policy's `blk_freq_boost.rs`), ufshcd's clock-gating work (`queue_delayed_work(..,
//! msecs_to_jiffies(clk_gating.delay_ms))`) and HPB's host-control read-timeout work
//! (`schedule_delayed_work(.., msecs_to_jiffies(POLLING_INTERVAL_MS))`), in
//! `storage/ufs/device.rs`. hrtimers stay exact to the nanosecond: the scheduler tick
//! (`tick_sched_timer`) and the CPU tasks' timed sleeps (with their timer slack) in
//! `cpu/system`. So do the hardware's own timers: the UFS host's auto-hibern8 idle timer and an
//! NVMe drive's APST idle timers.

use crate::time::{msecs_to_jiffies, tick_nsec, Nanos};

/// `LVL_CLK_SHIFT`: each level's buckets are 8 times as wide as the level below.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_SIZE` - 1: the last bucket of a level, `LVL_START`'s factor.
const LVL_LAST: u64 = 63;

/// `LVL_DEPTH` for a kernel built with `hz`.
pub fn depth(hz: u32) -> u32 {
    if hz > 100 {
        9
    } else {
        8
    }
}

/// `LVL_START(n)`, n >= 1: the smallest delta that goes to level `n`.
fn level_start(n: u32) -> u64 {
    LVL_LAST << (LVL_CLK_SHIFT * (n - 1))
}

/// The level a timer `delta` jiffies ahead of the base's clock goes to (step 2).
pub fn level(delta: u64, hz: u32) -> u32 {
    let last = depth(hz) - 1;
    (0..last)
        .find(|&n| delta < level_start(n + 1))
        .unwrap_or(last)
}

/// The jiffy at which a timer expiring at `expires`, enqueued while the base's clock reads
/// `clk`, fires (steps 2 and 3: `calc_wheel_index`'s bucket expiry).
pub fn bucket_expiry(expires: u64, clk: u64, hz: u32) -> u64 {
    let delta = expires.wrapping_sub(clk);
    if (delta as i64) < 0 {
        return clk;
    }
    let lvl = level(delta, hz);
    let cutoff = level_start(depth(hz));
    let expires = if delta >= cutoff {
        // WHEEL_TIMEOUT_MAX: the cut-off less the last level's granularity.
        clk + cutoff - (1 << (LVL_CLK_SHIFT * (depth(hz) - 1)))
    } else {
        expires
    };
    let shift = LVL_CLK_SHIFT * lvl;
    ((expires >> shift) + 1) << shift
}

/// A kernel's jiffies clock (CONFIG_HZ) on the run's time, with its timer wheel (module
/// documentation: jiffy `j` starts at `j x TICK_NSEC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jiffies {
    hz: u32,
    tick_ns: u64,
}

impl Jiffies {
    pub fn new(hz: u32) -> Jiffies {
        Jiffies {
            hz,
            tick_ns: tick_nsec(hz),
        }
    }

    pub fn hz(self) -> u32 {
        self.hz
    }

    /// `jiffies` at `t`.
    pub fn at(self, t: Nanos) -> u64 {
        t.0 / self.tick_ns
    }

    /// When jiffy `j` starts (its tick).
    pub fn start(self, j: u64) -> Nanos {
        Nanos(j.saturating_mul(self.tick_ns))
    }

    /// The next tick after `t` (the start of the next jiffy).
    pub fn next_tick(self, t: Nanos) -> Nanos {
        self.start(self.at(t) + 1)
    }

    /// `msecs_to_jiffies(ms)`: rounded up.
    pub fn from_ms(self, ms: u64) -> u64 {
        msecs_to_jiffies(ms, self.hz)
    }

    /// A timer armed at `now` with `expires = jiffies + delay`: when it fires.
    pub fn timer_fires(self, now: Nanos, delay: u64) -> Nanos {
        let j = self.at(now);
        self.start(bucket_expiry(j.saturating_add(delay), j, self.hz))
    }

    /// `queue_delayed_work(wq, work, delay)` at `now`: when the work runs. A delay of 0 queues
    /// it at once (`__queue_delayed_work` arms no timer); otherwise when its timer fires.
    pub fn delayed_work(self, now: Nanos, delay: u64) -> Nanos {
        if delay == 0 {
            now
        } else {
            self.timer_fires(now, delay)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_levels_start_at_63_times_eight_to_the_level() {
        // LVL_START(1) = 63, LVL_START(2) = 63 << 3 = 504, LVL_START(3) = 63 << 6 = 4032.
        let hz = 250;
        assert_eq!((level(0, hz), level(62, hz), level(63, hz)), (0, 0, 1));
        assert_eq!((level(503, hz), level(504, hz)), (1, 2));
        assert_eq!((level(4031, hz), level(4032, hz)), (2, 3));
        // The last level: 8 at HZ > 100 (from LVL_START(8) = 63 << 21 = 132120576), 7 at
        // HZ = 100 (from LVL_START(7) = 63 << 18 = 16515072).
        assert_eq!((level(132_120_575, hz), level(132_120_576, hz)), (7, 8));
        assert_eq!(level(u64::MAX >> 1, hz), 8);
        assert_eq!((level(16_515_071, 100), level(16_515_072, 100)), (6, 7));
        assert_eq!(level(132_120_576, 100), 7);
    }

    #[test]
    fn level_zero_fires_one_jiffy_after_its_expiry() {
        // calc_index(expires, 0) = (expires >> 0) + 1: a timer 1 jiffy ahead fires 2 jiffies on.
        assert_eq!(bucket_expiry(101, 100, 250), 102);
        assert_eq!(bucket_expiry(100 + 62, 100, 250), 163);
        // Due now (delta 0): the next jiffy. Already past: at the base's clock.
        assert_eq!(bucket_expiry(100, 100, 250), 101);
        assert_eq!(bucket_expiry(90, 100, 250), 100);
    }

    #[test]
    fn coarser_levels_round_up_to_their_granularity() {
        // Level 1 (8 jiffies): 63 ahead of 0 -> expires 63 -> (63 >> 3) + 1 = 8 -> 64; ahead of
        // 1 -> expires 64 -> 9 -> 72 (a whole bucket past an expiry on its boundary).
        assert_eq!(bucket_expiry(63, 0, 250), 64);
        assert_eq!(bucket_expiry(64, 1, 250), 72);
        // Level 2 (64 jiffies): the boost's 5000 ms at HZ = 250 (1250 jiffies) from jiffy 2100:
        // expires 3350 -> (3350 >> 6) + 1 = 53 -> 53 x 64 = 3392.
        assert_eq!(bucket_expiry(3350, 2100, 250), 3392);
        // Level 3 (512 jiffies): 4032 ahead of 0 -> (4032 >> 9) + 1 = 8 -> 4096.
        assert_eq!(bucket_expiry(4032, 0, 250), 4096);
    }

    #[test]
    fn past_the_wheels_capacity_a_timer_is_cut_to_its_last_bucket() {
        // HZ > 100: cut-off 63 << 24 = 1056964608, WHEEL_TIMEOUT_MAX = cut-off - (1 << 24) =
        // 1040187392; at level 8 (granularity 1 << 24) from clk 0: (62 + 1) << 24.
        let cut = 1_056_964_608;
        assert_eq!(bucket_expiry(cut, 0, 250), 63 << 24);
        assert_eq!(bucket_expiry(u64::MAX >> 2, 0, 250), 63 << 24);
        // Just below the cut-off: level 8, rounded: ((cut - 1) >> 24) + 1 = 63 -> 63 << 24.
        assert_eq!(bucket_expiry(cut - 1, 0, 250), 63 << 24);
        // HZ = 100: 8 levels, cut-off 63 << 21, max (63 << 21) - (1 << 21); level 7 from clk 5.
        let cut100 = 63u64 << 21;
        let max100 = cut100 - (1 << 21);
        assert_eq!(
            bucket_expiry(5 + cut100, 5, 100),
            (((5 + max100) >> 21) + 1) << 21
        );
    }

    #[test]
    fn jiffies_map_to_ticks_from_time_zero() {
        // HZ = 250: a jiffy is 4 ms. A 60 ms delayed work (15 jiffies) queued at 0 runs at
        // jiffy 16 = 64 ms; queued at 64 ms (jiffy 16), at jiffy 32 = 128 ms.
        let k = Jiffies::new(250);
        assert_eq!(k.from_ms(60), 15);
        assert_eq!(k.delayed_work(Nanos::ZERO, 15), Nanos::from_ms(64));
        assert_eq!(k.delayed_work(Nanos::from_ms(64), 15), Nanos::from_ms(128));
        // Queued mid-jiffy (65.5 ms is in jiffy 16): the same jiffy's expiry, 128 ms.
        assert_eq!(
            k.delayed_work(Nanos::from_us(65_500), 15),
            Nanos::from_ms(128)
        );
        // A delay of 0 queues the work at once.
        assert_eq!(
            k.delayed_work(Nanos::from_us(65_500), 0),
            Nanos::from_us(65_500)
        );
        assert_eq!(k.next_tick(Nanos::from_us(65_500)), Nanos::from_ms(68));
        // HZ = 300: TICK_NSEC = 3333333 ns; 100 ms = 30 jiffies, fired at jiffy 31.
        let k = Jiffies::new(300);
        assert_eq!(
            k.delayed_work(Nanos::ZERO, k.from_ms(100)),
            Nanos(31 * 3_333_333)
        );
        // HZ = 1000: 100 ms = 100 jiffies, level 1: (100 >> 3) + 1 = 13 -> jiffy 104.
        let k = Jiffies::new(1000);
        assert_eq!(
            k.delayed_work(Nanos::ZERO, k.from_ms(100)),
            Nanos::from_ms(104)
        );
    }
}
