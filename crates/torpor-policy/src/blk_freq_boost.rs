//! The block layer's device-frequency PM QoS boost: an unmerged RFC (Wang Jianzheng,
//! "[PATCH 0/3] block: device frequency PM QoS tuning", 2025-09-14), modelled exactly as the
//! patches do it, for users to weigh what it would buy.
//!
//! Per disk, with `/sys/block/<disk>/dev_freq_timeout_ms` not 0:
//! 1. Every READ bio and every bio with REQ_SYNC records the time (`last_active`, jiffies);
//!    if no constraint is set, the boost work is scheduled at once.
//! 2. The work, when no constraint is set, sets one: a minimum-frequency request of S32_MAX kHz
//!    ("as fast as possible") on the disk's device.
//! 3. Otherwise, when the time is strictly after `last_active + timeout` (timeout in jiffies,
//!    `msecs_to_jiffies` rounding up), it removes the request.
//! 4. While the constraint stays, the work re-queues itself `last_active + timeout - jiffies`
//!    jiffies later (`schedule_delayed_work`). Its timer fires on the timer wheel
//!    (`sim::timer_wheel`): one jiffy after that expiry below 63 jiffies, at the next multiple
//!    of the level's granularity beyond (64 jiffies for 504..=4031), so the removal comes at
//!    least one jiffy after `last_active + timeout`, where the strict comparison holds. A delay
//!    of 0 (a bio moved the deadline to the very jiffy the work runs in) queues the work at
//!    once: it runs again and again within that jiffy, finding the same comparison, until the
//!    next tick; the model runs it once, at that tick.
//!
//! The request sits on the disk's device, so devfreq is not notified: the UFS driver only sees
//! it when devfreq next evaluates (patch 3 forces the maximum then). A merged version would
//! likely notify devfreq when the request changes; the host model offers both.

use crate::sim::Jiffies;
use crate::time::Nanos;

/// What a run of the boost work did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkOutcome {
    /// `Some(true)`: the constraint was set; `Some(false)`: removed.
    pub changed: Option<bool>,
    /// When the work runs next, if it re-armed itself.
    pub next_run: Option<Nanos>,
}

/// One disk's boost state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreqBoost {
    timeout_ms: u32,
    clock: Jiffies,
    /// `pm_qos_status == PM_QOS_FREQ_SET`.
    pub set: bool,
    last_active_jiffies: u64,
}

impl FreqBoost {
    /// `timeout_ms` 0 turns the boost off; `hz` is the kernel's tick rate (jiffies).
    pub fn new(timeout_ms: u32, hz: u32) -> Self {
        FreqBoost {
            timeout_ms,
            clock: Jiffies::new(hz),
            set: false,
            last_active_jiffies: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.timeout_ms != 0
    }

    fn jiffies(&self, now: Nanos) -> u64 {
        self.clock.at(now)
    }

    /// `msecs_to_jiffies`: rounded up.
    fn timeout_jiffies(&self) -> u64 {
        self.clock.from_ms(u64::from(self.timeout_ms))
    }

    /// A bio is submitted at `now`; `qualifies` = READ or REQ_SYNC. Returns when the boost
    /// work must run (now), if it must.
    pub fn on_bio(&mut self, now: Nanos, qualifies: bool) -> Option<Nanos> {
        if !self.enabled() || !qualifies {
            return None;
        }
        self.last_active_jiffies = self.jiffies(now);
        (!self.set).then_some(now)
    }

    /// The boost work runs at `now`.
    pub fn on_work(&mut self, now: Nanos) -> WorkOutcome {
        let timeout = self.timeout_jiffies();
        let jiffies = self.jiffies(now);
        let deadline = self.last_active_jiffies + timeout;
        if !self.set {
            self.set = true;
            return WorkOutcome {
                changed: Some(true),
                next_run: Some(self.rerun(now, deadline.saturating_sub(jiffies))),
            };
        }
        if jiffies > deadline {
            self.set = false;
            return WorkOutcome {
                changed: Some(false),
                next_run: None,
            };
        }
        WorkOutcome {
            changed: None,
            next_run: Some(self.rerun(now, deadline - jiffies)),
        }
    }

    /// When the work queued at `now` with `delay` jiffies next acts (step 4): when its timer
    /// fires on the wheel; for a delay of 0, at the next tick.
    fn rerun(&self, now: Nanos, delay: u64) -> Nanos {
        if delay == 0 {
            self.clock.next_tick(now)
        } else {
            self.clock.timer_fires(now, delay)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_30_ms_timeout_holds_36_ms_after_the_last_read_at_hz_250() {
        // HZ=250: a jiffy is 4 ms; 30 ms -> ceil(7.5) = 8 jiffies.
        let mut b = FreqBoost::new(30, 250);
        // A read at 1 ms (jiffy 0): the work runs at once and sets the constraint; it re-queues
        // itself 0 + 8 - 0 = 8 jiffies on: expires 8, level 0 of the wheel, so its timer fires
        // at jiffy 8 + 1 = 9, 36 ms.
        assert_eq!(b.on_bio(Nanos::from_ms(1), true), Some(Nanos::from_ms(1)));
        let w = b.on_work(Nanos::from_ms(1));
        assert_eq!(w.changed, Some(true));
        assert_eq!(w.next_run, Some(Nanos::from_ms(36)));
        // Async writes do not count; a read while set only refreshes the time (no work).
        assert_eq!(b.on_bio(Nanos::from_ms(2), false), None);
        assert_eq!(b.on_bio(Nanos::from_ms(3), true), None);
        // At 36 ms (jiffy 9 > 0 + 8): removed.
        let w = b.on_work(Nanos::from_ms(36));
        assert_eq!((w.changed, w.next_run), (Some(false), None));
        assert!(!b.set);
    }

    #[test]
    fn a_later_read_pushes_the_removal_and_zero_turns_it_off() {
        let mut b = FreqBoost::new(30, 250);
        b.on_bio(Nanos::from_ms(0), true);
        b.on_work(Nanos::from_ms(0)); // set; its timer fires at jiffy 9, 36 ms
        b.on_bio(Nanos::from_ms(20), true); // jiffy 5: deadline 13
                                            // At 36 ms (jiffy 9, not after 13): re-queued 4 jiffies on, expires 13, fires at 14.
        let w = b.on_work(Nanos::from_ms(36));
        assert_eq!((w.changed, w.next_run), (None, Some(Nanos::from_ms(56))));
        assert_eq!(b.on_work(Nanos::from_ms(56)).changed, Some(false));
        let mut off = FreqBoost::new(0, 250);
        assert_eq!(off.on_bio(Nanos::from_ms(1), true), None);
    }

    #[test]
    fn a_deadline_on_the_jiffy_the_work_runs_in_removes_at_the_next_tick() {
        // Set at 0 (timer at jiffy 9); a read at 4 ms (jiffy 1) moves the deadline to 9, the
        // very jiffy the work runs in: 9 is not after 9, delay 0: the work re-runs at once
        // until jiffies moves, and removes the floor at the tick of jiffy 10, 40 ms.
        let mut b = FreqBoost::new(30, 250);
        b.on_bio(Nanos::ZERO, true);
        b.on_work(Nanos::ZERO);
        b.on_bio(Nanos::from_ms(4), true);
        let w = b.on_work(Nanos::from_ms(36));
        assert_eq!((w.changed, w.next_run), (None, Some(Nanos::from_ms(40))));
        assert_eq!(b.on_work(Nanos::from_ms(40)).changed, Some(false));
    }

    #[test]
    fn long_timeouts_round_up_to_the_wheels_coarser_buckets() {
        // 5000 ms at HZ=250: 1250 jiffies. A single read at 8.4 s (jiffy 2100) sets the floor;
        // the work's timer expires at 2100 + 1250 = 3350, 1250 jiffies ahead: level 2 (504 to
        // 4031), 64-jiffy buckets: (3350 >> 6) + 1 = 53, bucket 53 x 64 = 3392, 13.568 s.
        // Exactly at the expiry, a tick later, as a timer that fired on time would have it:
        // 13.400 and 13.404 s.
        let mut b = FreqBoost::new(5000, 250);
        b.on_bio(Nanos::from_ms(8400), true);
        let w = b.on_work(Nanos::from_ms(8400));
        assert_eq!(w.next_run, Some(Nanos::from_ms(13_568)));
        assert_eq!(b.on_work(Nanos::from_ms(13_568)).changed, Some(false));
        // 1000 ms: 250 jiffies, level 1 (8-jiffy buckets). A read at 10 ms (jiffy 2): expires
        // 252, (252 >> 3) + 1 = 32, jiffy 256, 1.024 s.
        let mut b = FreqBoost::new(1000, 250);
        b.on_bio(Nanos::from_ms(10), true);
        assert_eq!(
            b.on_work(Nanos::from_ms(10)).next_run,
            Some(Nanos::from_ms(1024))
        );
    }
}
