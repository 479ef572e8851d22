//! The UFS host's load measurement for devfreq (drivers/ufs/core/ufshcd.c, `hba->clk_scaling`;
//! unchanged in substance from v5.x to v6.19).
//!
//! The host reports, at each devfreq poll, how long it had at least one command outstanding
//! (busy) within the window since the previous poll (total), in microseconds:
//! 1. A SCSI command sent to the controller counts `active_reqs` up; the first one after idle
//!    asks for clock scaling to resume if it was suspended. If no window is open, one opens now
//!    (its busy total reset); if the host was not busy, busy time starts now.
//! 2. A completion counts `active_reqs` down; at zero, the busy stretch ends and its length (in
//!    whole microseconds, `ktime_us_delta`) is added.
//! 3. `get_dev_status` at a poll: with no window open it reports total 0 (the governor then
//!    asks for the maximum); else the current frequency, busy including a stretch still
//!    running, and the window's length. Either way a new window opens now, busy from now if
//!    commands are outstanding.
//! 4. Suspending clock scaling (the host went idle after scaling down) closes the window; the
//!    first command after it resumes scaling (devfreq's next sample comes a polling period
//!    later).
//!
//! Busy time is thus the union of intervals with a command outstanding: queue depth does not
//! count.

use crate::devfreq::DevStatus;
use crate::time::Nanos;

/// `ktime_us_delta(later, earlier)`: whole microseconds (the ns difference divided by 1000).
fn us_delta(later: Nanos, earlier: Nanos) -> u64 {
    (later.0.saturating_sub(earlier.0)) / 1000
}

/// `hba->clk_scaling`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClkScaling {
    pub active_reqs: u32,
    /// `window_start_t`; `None` where the kernel has 0 (no window).
    window_start: Option<Nanos>,
    busy_start: Option<Nanos>,
    tot_busy_us: u64,
    pub is_suspended: bool,
}

impl ClkScaling {
    /// A command goes to the controller at `now`. Returns true when clock scaling must resume
    /// (the first command after idle, with scaling suspended: `ufshcd_clk_scaling_resume_work`).
    pub fn on_send(&mut self, now: Nanos) -> bool {
        let first = self.active_reqs == 0;
        self.active_reqs += 1;
        if self.window_start.is_none() {
            self.window_start = Some(now);
            self.tot_busy_us = 0;
            self.busy_start = None;
        }
        if self.busy_start.is_none() {
            self.busy_start = Some(now);
        }
        first && self.is_suspended
    }

    /// A command completes at `now`.
    pub fn on_complete(&mut self, now: Nanos) {
        self.active_reqs = self.active_reqs.saturating_sub(1);
        if self.active_reqs == 0 {
            if let Some(start) = self.busy_start.take() {
                self.tot_busy_us += us_delta(now, start);
            }
        }
    }

    /// `ufshcd_devfreq_get_dev_status` at a poll at `now`, the host's clock at `current_hz`.
    pub fn get_dev_status(&mut self, now: Nanos, current_hz: u64) -> DevStatus {
        let mut stat = DevStatus::default();
        if let Some(start) = self.window_start {
            stat.current_frequency = current_hz;
            if let Some(busy) = self.busy_start {
                self.tot_busy_us += us_delta(now, busy);
            }
            stat.total_time = us_delta(now, start);
            stat.busy_time = self.tot_busy_us;
        }
        self.window_start = Some(now);
        self.tot_busy_us = 0;
        self.busy_start = (self.active_reqs > 0).then_some(now);
        stat
    }

    /// `ufshcd_clk_scaling_suspend_work`: only with nothing outstanding. Returns true when it
    /// suspended (devfreq stops polling).
    pub fn suspend(&mut self) -> bool {
        if self.active_reqs > 0 || self.is_suspended {
            return false;
        }
        self.is_suspended = true;
        self.window_start = None;
        true
    }

    /// `ufshcd_clk_scaling_resume_work`: true when it resumed (devfreq polls again, its first
    /// sample a polling period later).
    pub fn resume(&mut self) -> bool {
        if !self.is_suspended {
            return false;
        }
        self.is_suspended = false;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Nanos {
        Nanos::from_us(n)
    }

    #[test]
    fn busy_is_the_union_of_outstanding_stretches_in_whole_microseconds() {
        let mut c = ClkScaling::default();
        // No window yet: total 0 (the governor then asks for the maximum); a window opens.
        assert_eq!(c.get_dev_status(us(0), 300), DevStatus::default());
        // Two overlapping commands 10..40 and 20..50 us, then one 60.5..70.9 us.
        c.on_send(us(10));
        c.on_send(us(20));
        c.on_complete(us(40));
        c.on_complete(us(50)); // busy 10..50 = 40 us, not 30 + 30
        c.on_send(Nanos(60_500));
        c.on_complete(Nanos(70_900)); // 10.4 us -> 10 (ktime_us_delta truncates)
        let s = c.get_dev_status(us(100), 300);
        assert_eq!(
            (s.busy_time, s.total_time, s.current_frequency),
            (50, 100, 300)
        );
        // A command outstanding across the poll: counted to the poll, then from it.
        c.on_send(us(150));
        let s = c.get_dev_status(us(200), 300);
        assert_eq!((s.busy_time, s.total_time), (50, 100));
        c.on_complete(us(230));
        let s = c.get_dev_status(us(300), 300);
        assert_eq!((s.busy_time, s.total_time), (30, 100));
    }

    #[test]
    fn suspension_closes_the_window_and_the_first_command_resumes() {
        let mut c = ClkScaling::default();
        c.on_send(us(0));
        assert!(!c.suspend(), "not with a command outstanding");
        c.on_complete(us(5));
        assert!(c.suspend());
        assert!(!c.suspend(), "already suspended");
        // The first command after idle asks to resume; the next one does not.
        assert!(c.on_send(us(1000)));
        assert!(c.resume());
        assert!(!c.on_send(us(1001)));
        // The window opened at that first command (not at the suspension).
        c.on_complete(us(1010));
        c.on_complete(us(1020));
        let s = c.get_dev_status(us(1100), 300);
        assert_eq!((s.busy_time, s.total_time), (20, 100));
    }
}
