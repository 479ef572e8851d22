//! The UFS host's two ties to the CPUs beside it, in runs with CPUs: the CPU the devfreq
//! monitor's deferrable timer sits on, and ufshcd's CPU latency PM QoS request. Follows
//! devfreq.c, workqueue.c and timer.c of v6.9–v6.19, and ufshcd.c from v6.9 (the request was
//! added by 2777e73fc154, "scsi: ufs: core: Add CPU latency QoS support for UFS driver";
//! 79dde5f7dc7c, v6.18, only added a mutex around it). `device.rs` drives both.
//!
//! # The deferrable monitor
//!
//! 1. **Whose timer.** `devfreq_monitor_start` initialises the monitor as deferrable work
//!    (`INIT_DEFERRABLE_WORK`) when the profile asks for `DEVFREQ_TIMER_DEFERRABLE`, and queues
//!    it with `queue_delayed_work(devfreq_wq, ...)`; each poll re-queues it the same way, and so
//!    does `devfreq_monitor_resume`. `devfreq_wq` is `create_freezable_workqueue`: unbound
//!    (`WQ_UNBOUND`), freezable, one active item. `queue_delayed_work` passes
//!    `WORK_CPU_UNBOUND`, so `__queue_delayed_work` arms the timer with `add_timer_global`
//!    (v6.9+; `add_timer` before): not pinned, enqueued on the CPU that queues it, and a
//!    deferrable timer goes to that CPU's deferrable base (`BASE_DEF`).
//! 2. **Expiry.** That base is not looked at when the CPU goes idle (no next event is
//!    programmed for it): "a deferrable timer ... will not cause a CPU to come out of idle just
//!    to service it; instead, the timer will be serviced when the CPU eventually wakes up"
//!    (timer.h). An awake CPU runs it on time, from its tick's timer softirq
//!    (`run_timer_softirq` runs `BASE_DEF` too).
//! 3. **Model.** The timer belongs to one CPU ([`CpuLink::monitor_cpu`]). The device follows
//!    that CPU's idle entries and exits (`BlockDevice::on_cpu_idle`; every other CPU's are
//!    ignored) and takes it as awake until it first hears otherwise (a CPU that never idles is
//!    busy; the world reports each CPU's first idle entry at time 0). An expiry while the CPU
//!    is idle waits; it runs when the CPU next leaves an idle state. ASSUMPTIONS: the work
//!    re-arms its timer on the CPU its timer fired on, so the timer stays on one CPU (the
//!    kernel queues the work on an unbound worker near that CPU, and a resumed monitor is
//!    armed where the resume work ran); the waiting expiry runs at the idle exit itself,
//!    where the kernel runs it at that CPU's next timer softirq (its next tick while awake,
//!    at most one tick later, or later still if the CPU idles again first with its tick
//!    stopped); and the devfreq work runs at once when its timer fires.
//! 4. **Without CPUs** (`monitor_cpu` `None`) an expiry waits while the device has nothing
//!    outstanding and runs just before the next submission (module `device`, step 5).
//! 5. **Counted**: the expiries that waited, and how long (to when the poll ran, scaling
//!    suspended and cancelled it, or the run ended).
//!
//! # ufshcd's CPU latency request (`ufshcd_pm_qos_*`)
//!
//! 1. **Init.** `ufshcd_pm_qos_init`, at the end of `ufshcd_init`, adds a request on the
//!    global CPU latency list at `PM_QOS_DEFAULT_VALUE` (no constraint); it is on by default
//!    and the sysfs attribute `pm_qos_enable` removes or re-adds it. The model starts released
//!    ([`CpuLink::cpu_latency_qos`] is the attribute).
//! 2. **Update.** `ufshcd_pm_qos_update(hba, on)` sets the request to 0 us when `on`, back to
//!    `PM_QOS_DEFAULT_VALUE` when not. `cpu_latency_qos_update_request` returns early when the
//!    value is unchanged, so only changes are votes here ([`CpuLatencyVote::Hold`]`(0)`,
//!    [`CpuLatencyVote::Release`]).
//! 3. **With clock scaling** (`UFSHCD_CAP_CLK_SCALING`): `ufshcd_scale_clks` calls it with
//!    the direction after the clocks have changed (after the vendor's POST_CHANGE
//!    notification; not on a failure). `ufshcd_devfreq_scale` scales up clocks first, then the
//!    gear, so the hold comes after the drain and the clock switch, before the gear switch; it
//!    scales down the gear first, then the clocks, so the release comes at the end of the
//!    scale. A scale refused (-EBUSY) votes nothing; suspending clock scaling votes nothing (a
//!    host that suspends at max keeps its hold).
//! 4. **Without clock scaling**: `ufshcd_setup_clocks(hba, on)` calls it, so the request
//!    follows clock gating: released when the gate work turns the clocks off
//!    (`clk_gating.delay_ms` after the host went idle), held at 0 when a command ungates them.
//!    `UfsConfig::scaling` `None` is read as a host without the capability (with the
//!    capability and `clkscale_enable` written 0, ufshcd scales up and holds 0 for good; not
//!    modelled).
//! 5. **Suspend.** `ufshcd_suspend` releases it; torpor's host never runtime-suspends (the
//!    2000 ms `RPM_AUTOSUSPEND_DELAY_MS` path is not modelled), so it does not either.

use std::collections::VecDeque;

use crate::storage::io::CpuLatencyVote;
use crate::time::Nanos;

/// How a UFS host is tied to the run's CPUs; the default ties nothing (a device alone, or a
/// host whose driver predates the latency request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuLink {
    /// The CPU the devfreq monitor's deferrable timer sits on (its id, as the CPU system names
    /// it); `None`: the timer waits for the device's next submission instead (no CPUs).
    pub monitor_cpu: Option<u32>,
    /// ufshcd's CPU latency request (`pm_qos_enable`, v6.9+): 0 us while the clocks are up.
    pub cpu_latency_qos: bool,
}

/// The monitor timer's expiry that waits for its CPU (steps 3-5 of the first list).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Deferral {
    cpu: Option<u32>,
    /// The timer's CPU is in an idle state.
    cpu_idle: bool,
    /// An expiry waits, since then.
    since: Option<Nanos>,
}

impl Deferral {
    pub(crate) fn new(cpu: Option<u32>) -> Self {
        Deferral {
            cpu,
            cpu_idle: false,
            since: None,
        }
    }

    /// Whether an expiry now must wait: its CPU is idle, or without CPUs the device is
    /// (`device_idle`).
    pub(crate) fn must_wait(&self, device_idle: bool) -> bool {
        match self.cpu {
            Some(_) => self.cpu_idle,
            None => device_idle,
        }
    }

    /// An expiry starts waiting at `now`.
    pub(crate) fn wait(&mut self, now: Nanos) {
        self.since = Some(now);
    }

    /// Ends the waiting expiry, if any, at `now`: how long it waited.
    pub(crate) fn end(&mut self, now: Nanos) -> Option<Nanos> {
        self.since.take().map(|since| now - since)
    }

    /// How long the waiting expiry has waited by `now`, if one waits.
    pub(crate) fn pending(&self, now: Nanos) -> Option<Nanos> {
        self.since.map(|since| now - since)
    }

    /// Without CPUs the next submission is the CPU's wake-up.
    pub(crate) fn ends_at_submission(&self) -> bool {
        self.cpu.is_none()
    }

    /// CPU `cpu` entered (`idle`) or left an idle state: true when it is the timer's CPU
    /// waking with an expiry waiting (the poll runs now).
    pub(crate) fn on_cpu_idle(&mut self, cpu: u32, idle: bool) -> bool {
        if self.cpu != Some(cpu) {
            return false;
        }
        self.cpu_idle = idle;
        !idle && self.since.is_some()
    }
}

/// ufshcd's request on the CPU latency list and the votes not yet applied (the second list).
#[derive(Debug)]
pub(crate) struct LatencyVotes {
    enabled: bool,
    held: bool,
    queue: VecDeque<CpuLatencyVote>,
}

impl LatencyVotes {
    pub(crate) fn new(enabled: bool) -> Self {
        LatencyVotes {
            enabled,
            held: false,
            // Votes alternate and an undrained pair cancels out: never more than one waits.
            queue: VecDeque::with_capacity(2),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// `ufshcd_pm_qos_update(hba, on)`: the vote it makes, if the request changes.
    pub(crate) fn update(&mut self, on: bool) -> Option<CpuLatencyVote> {
        if !self.enabled || on == self.held {
            return None;
        }
        self.held = on;
        let vote = if on {
            CpuLatencyVote::Hold(0)
        } else {
            CpuLatencyVote::Release
        };
        // A vote not yet applied is the opposite one: together they change nothing (only a
        // run without CPUs, which never drains, gets here).
        if self.queue.pop_back().is_none() {
            self.queue.push_back(vote);
        }
        Some(vote)
    }

    /// The next vote for the CPUs' latency list.
    pub(crate) fn next(&mut self) -> Option<CpuLatencyVote> {
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferral_follows_only_its_cpu_and_measures_the_wait() {
        let mut d = Deferral::new(Some(2));
        assert!(!d.must_wait(true), "awake until told otherwise");
        assert!(!d.on_cpu_idle(1, true));
        assert!(!d.must_wait(true), "another CPU's idle is not the timer's");
        assert!(!d.on_cpu_idle(2, true));
        assert!(d.must_wait(false), "the device's state does not matter");
        d.wait(Nanos::from_ms(100));
        assert_eq!(d.pending(Nanos::from_ms(110)), Some(Nanos::from_ms(10)));
        assert!(!d.on_cpu_idle(1, false), "another CPU waking runs nothing");
        assert!(d.on_cpu_idle(2, false));
        assert_eq!(d.end(Nanos::from_ms(130)), Some(Nanos::from_ms(30)));
        assert_eq!(d.end(Nanos::from_ms(131)), None);
        assert!(!d.ends_at_submission());
        // Without CPUs: the device's idleness decides, and a submission ends the wait.
        let alone = Deferral::new(None);
        assert!(alone.must_wait(true) && !alone.must_wait(false));
        assert!(alone.ends_at_submission());
    }

    #[test]
    fn votes_are_changes_of_the_request_and_an_undrained_pair_cancels() {
        let mut off = LatencyVotes::new(false);
        assert_eq!(off.update(true), None);
        assert_eq!(off.next(), None);
        let mut v = LatencyVotes::new(true);
        // Starts released: a release changes nothing.
        assert_eq!(v.update(false), None);
        assert_eq!(v.update(true), Some(CpuLatencyVote::Hold(0)));
        assert_eq!(v.update(true), None);
        assert_eq!(v.next(), Some(CpuLatencyVote::Hold(0)));
        assert_eq!(v.next(), None);
        assert_eq!(v.update(false), Some(CpuLatencyVote::Release));
        assert_eq!(v.update(true), Some(CpuLatencyVote::Hold(0)));
        assert_eq!(
            v.next(),
            None,
            "release then hold, undrained: nothing changed"
        );
        assert_eq!(v.update(false), Some(CpuLatencyVote::Release));
        assert_eq!(v.next(), Some(CpuLatencyVote::Release));
    }
}
