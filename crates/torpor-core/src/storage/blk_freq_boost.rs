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
//! 4. While the constraint stays, the work re-runs at `last_active + timeout`; a delay of 0
//!    jiffies runs it again at the next jiffy (the strict comparison then holds): the hold is
//!    the timeout plus one jiffy after the last qualifying bio.
//!
//! The request sits on the disk's device, so devfreq is not notified: the UFS driver only sees
//! it when devfreq next evaluates (patch 3 forces the maximum then). A merged version would
//! likely notify devfreq when the request changes; the host model offers both.

use crate::time::{msecs_to_jiffies, tick_nsec, Nanos};

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
    tick_ns: u64,
    hz: u32,
    /// `pm_qos_status == PM_QOS_FREQ_SET`.
    pub set: bool,
    last_active_jiffies: u64,
}

impl FreqBoost {
    /// `timeout_ms` 0 turns the boost off; `hz` is the kernel's tick rate (jiffies).
    pub fn new(timeout_ms: u32, hz: u32) -> Self {
        FreqBoost {
            timeout_ms,
            tick_ns: tick_nsec(hz),
            hz,
            set: false,
            last_active_jiffies: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.timeout_ms != 0
    }

    fn jiffies(&self, now: Nanos) -> u64 {
        now.0 / self.tick_ns
    }

    /// `msecs_to_jiffies`: rounded up.
    fn timeout_jiffies(&self) -> u64 {
        msecs_to_jiffies(u64::from(self.timeout_ms), self.hz)
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
                next_run: Some(self.at_jiffy(deadline.saturating_sub(jiffies), jiffies)),
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
            next_run: Some(self.at_jiffy(deadline - jiffies, jiffies)),
        }
    }

    /// The time a delayed work queued with `delay` jiffies at jiffy `now_j` runs: that jiffy's
    /// tick; a delay of 0 runs at the next tick (the work finds the same jiffy otherwise).
    fn at_jiffy(&self, delay: u64, now_j: u64) -> Nanos {
        Nanos((now_j + delay.max(1)) * self.tick_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_30_ms_timeout_holds_36_ms_after_the_last_read_at_hz_250() {
        // HZ=250: a jiffy is 4 ms; 30 ms -> ceil(7.5) = 8 jiffies.
        let mut b = FreqBoost::new(30, 250);
        // A read at 1 ms (jiffy 0): the work runs at once and sets the constraint; it re-runs
        // at jiffy 0 + 8 = 32 ms.
        assert_eq!(b.on_bio(Nanos::from_ms(1), true), Some(Nanos::from_ms(1)));
        let w = b.on_work(Nanos::from_ms(1));
        assert_eq!(w.changed, Some(true));
        assert_eq!(w.next_run, Some(Nanos::from_ms(32)));
        // Async writes do not count; a read while set only refreshes the time (no work).
        assert_eq!(b.on_bio(Nanos::from_ms(2), false), None);
        assert_eq!(b.on_bio(Nanos::from_ms(3), true), None);
        // At 32 ms (jiffy 8): not strictly after 0 + 8: again at the next jiffy, 36 ms.
        let w = b.on_work(Nanos::from_ms(32));
        assert_eq!((w.changed, w.next_run), (None, Some(Nanos::from_ms(36))));
        // At 36 ms (jiffy 9 > 8): removed.
        let w = b.on_work(Nanos::from_ms(36));
        assert_eq!((w.changed, w.next_run), (Some(false), None));
        assert!(!b.set);
    }

    #[test]
    fn a_later_read_pushes_the_removal_and_zero_turns_it_off() {
        let mut b = FreqBoost::new(30, 250);
        b.on_bio(Nanos::from_ms(0), true);
        b.on_work(Nanos::from_ms(0)); // set; next run at 32 ms
        b.on_bio(Nanos::from_ms(20), true); // jiffy 5: deadline 13 (52 ms)
        let w = b.on_work(Nanos::from_ms(32));
        assert_eq!((w.changed, w.next_run), (None, Some(Nanos::from_ms(52))));
        let w = b.on_work(Nanos::from_ms(52));
        assert_eq!(w.next_run, Some(Nanos::from_ms(56)));
        assert_eq!(b.on_work(Nanos::from_ms(56)).changed, Some(false));
        let mut off = FreqBoost::new(0, 250);
        assert_eq!(off.on_bio(Nanos::from_ms(1), true), None);
    }
}
