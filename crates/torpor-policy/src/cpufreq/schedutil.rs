//! `schedutil@6.12`: the scheduler-driven cpufreq governor of Linux v6.12
//! (kernel/sched/cpufreq_schedutil.c; `effective_cpu_util` and `cpu_util` of kernel/sched/fair.c;
//! `map_util_perf`/`map_util_freq` of include/linux/sched/cpufreq.h).
//!
//! The scheduler calls the governor (`cpufreq_update_util`) on a CPU's utilization updates, with
//! `SCHED_CPUFREQ_IOWAIT` when a task wakes from IO wait; the governor may ask the driver for a
//! new frequency of the whole policy. Here the caller passes what the kernel reads at that
//! moment ([`UtilUpdate`]) and gets back the driver's change, if any.
//!
//! One update (`sugov_update_single_freq` for a one-CPU policy, `sugov_update_shared` otherwise):
//! 1. IO-wait boost bookkeeping on the updating CPU (`sugov_iowait_boost`): if it holds a boost
//!    and more than a tick passed since its last update, the boost restarts at
//!    `IOWAIT_BOOST_MIN` (128) when this update is an IO wake-up, else drops to 0, and nothing
//!    else happens. Otherwise an IO wake-up that has not yet counted since the last frequency
//!    evaluation (not `pending`) doubles the boost (from 0 to 128, then up to 1024) and marks it
//!    pending. The CPU's `last_update` becomes now.
//! 2. Rate limit (`sugov_should_update_freq`): if the limits changed since the last evaluation,
//!    go on with `need_freq_update` set; else go on only if at least `rate_limit_us` passed since
//!    the last frequency *change*.
//! 3. Per CPU considered (the updating one; every CPU of a shared policy), the boost is applied
//!    (`sugov_iowait_apply`): none held, or more than a tick since that CPU's last update (then
//!    cleared): no boost. Not pending: halve it, and below 128 clear it. Then it is no longer
//!    pending and counts as `boost x capacity / 1024`.
//! 4. The CPU's utilization (`sugov_get_util`): `util = min(cpu_util_cfs_boost, capacity)`,
//!    then `util = max(util, boost)`; the floor is the run queue's clamp floor (`uclamp_min`),
//!    raised to the capacity while an RT task is runnable; the ceiling is its clamp cap
//!    (`uclamp_max`) within the capacity. The DVFS headroom gives `util + util / 4`
//!    (`map_util_perf`); `perf` is that, lowered to the ceiling, and at least the floor
//!    (`sugov_effective_cpu_perf`). A shared policy takes the largest `perf` of its CPUs.
//! 5. `get_next_freq`: `raw = ref x perf / capacity` with `ref` = `cpuinfo.max_freq` (frequency
//!    invariant platforms; else `cur + cur / 4`). If `raw` equals the last one and no limits
//!    update is due, keep the last choice; else resolve `raw` to a table frequency
//!    (`cpufreq_driver_resolve_freq`: the lowest efficient OPP at or above it, within the
//!    limits).
//! 6. Busy hold (one-CPU policies only, `sugov_hold_freq`): unless the CPU's clamp cap is below
//!    1024 and its CFS utilization reaches it (`uclamp_rq_is_capped`: no hold, and the idle
//!    count is not sampled), if the CPU has not entered idle with the tick stopped since the
//!    last evaluation (its `idle_calls` count did not move), a lower frequency than the current
//!    choice is not taken, unless a limits update is due.
//! 7. `sugov_update_next_freq`: with a limits update due it is consumed and the choice is
//!    committed even if unchanged; else an unchanged choice ends the update. Committing records
//!    the choice and its time (the rate limit's reference).
//! 8. The driver: a fast switch (clamped to the limits, the driver called even for the same
//!    frequency), or the slow path's kthread (`__cpufreq_driver_target`, `CPUFREQ_RELATION_L`,
//!    which skips the current frequency). The kthread is taken to run at once.
//!
//! Starting (`sugov_start` then the core's `limits` call): no choice yet (0), no cached raw
//! frequency, every CPU's state zeroed, `rate_limit_us` from `cpufreq_policy_transition_delay_us`
//! unless set; `limits` (`sugov_limits`) marks the limits changed, and on the slow path first
//! moves the current frequency into the limits.
//!
//! Version notes: v6.12 sets `need_freq_update` to true on a limits change and, after a commit,
//! to the driver's `CPUFREQ_NEED_UPDATE_LIMITS` flag; the drivers modelled (cpufreq-dt,
//! scmi-cpufreq, qcom-cpufreq-hw) do not set it, so it is false. Stable 6.12.13 and later
//! backported a v6.14 change that moves that flag test to the limits change (a limits change
//! then no longer bypasses the cached raw frequency); mainline v6.15 reworked it again. Not
//! modelled: RT/DL/IRQ utilization (only a runnable RT task's floor), `util_est` and
//! `runnable_avg` (the caller's `util` stands for `cpu_util_cfs_boost`), sched_ext, the
//! `adjust_perf` path of intel_pstate/amd-pstate, and remote updates a policy cannot act on.

use super::policy::{CpufreqPolicy, FreqChange, Relation};

/// `IOWAIT_BOOST_MIN`: `SCHED_CAPACITY_SCALE / 8`.
pub const IOWAIT_BOOST_MIN: u32 = 128;
/// `SCHED_CAPACITY_SCALE`.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

/// The governor's tunable and the platform fact it reads besides the tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedutilTunables {
    /// The `rate_limit_us` tunable; `None`: `cpufreq_policy_transition_delay_us()`.
    pub rate_limit_us: Option<u32>,
    /// `arch_scale_freq_invariant()`: true on arm64 with a cpufreq driver that sets frequencies
    /// (and on x86 with APERF/MPERF).
    pub freq_invariant: bool,
}

impl Default for SchedutilTunables {
    /// The kernel's default rate limit on a frequency-invariant platform.
    fn default() -> Self {
        SchedutilTunables {
            rate_limit_us: None,
            freq_invariant: true,
        }
    }
}

/// What the kernel reads of one CPU of the policy at an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuUtil {
    /// `cpu_util_cfs_boost()`: the CFS utilization (capacity units, frequency and capacity
    /// invariant); the caller's PELT `util_avg`.
    pub util: u64,
    /// An RT task is runnable on the CPU (`rt_rq_is_runnable`): the floor is the capacity.
    pub rt_runnable: bool,
    /// `tick_nohz_get_idle_calls_cpu()`: how many times the CPU entered idle with the tick
    /// stopped (`tick_nohz_idle_stop_tick` counts it).
    pub idle_calls: u64,
    /// Cumulative idle time up to now with no task waiting on IO, ns (tick-sched's
    /// `idle_sleeptime`, an idle period under way included); ondemand reads it.
    pub idle_ns: u64,
    /// Cumulative idle time with a task waiting on IO, ns (`iowait_sleeptime`); ondemand reads
    /// it.
    pub iowait_ns: u64,
    /// The run queue's utilization clamps, `uclamp_rq_get(rq, UCLAMP_MIN / UCLAMP_MAX)`
    /// (torpor-core's `cpu::uclamp`): 0 and 1024 while nothing sets a clamp.
    pub uclamp_min: u64,
    pub uclamp_max: u64,
}

impl CpuUtil {
    /// An idle CPU with no clamps.
    pub const IDLE: CpuUtil = CpuUtil {
        util: 0,
        rt_runnable: false,
        idle_calls: 0,
        idle_ns: 0,
        iowait_ns: 0,
        uclamp_min: 0,
        uclamp_max: SCHED_CAPACITY_SCALE as u64,
    };
}

impl Default for CpuUtil {
    fn default() -> CpuUtil {
        CpuUtil::IDLE
    }
}

/// One `cpufreq_update_util` call.
#[derive(Clone, Copy, Debug)]
pub struct UtilUpdate<'a> {
    /// `rq_clock`, ns.
    pub now_ns: u64,
    /// The updating CPU, as an index into `cpus`.
    pub cpu: usize,
    /// `SCHED_CPUFREQ_IOWAIT`: a task woke up from IO wait.
    pub iowait: bool,
    /// Every CPU of the policy, in the policy's order.
    pub cpus: &'a [CpuUtil],
}

/// `struct sugov_cpu`, the fields this model uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SugovCpu {
    iowait_boost_pending: bool,
    iowait_boost: u32,
    last_update: u64,
    saved_idle_calls: u64,
}

/// `struct sugov_policy` and its CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedutil {
    tunables: SchedutilTunables,
    /// `TICK_NSEC`: `(1e9 + HZ/2) / HZ`.
    tick_ns: u64,
    last_freq_update_time: u64,
    freq_update_delay_ns: i64,
    next_freq: u32,
    cached_raw_freq: u32,
    limits_changed: bool,
    need_freq_update: bool,
    cpus: Vec<SugovCpu>,
}

impl Schedutil {
    /// `sugov_start` for `policy`; call [`Schedutil::limits`] next, as the core does.
    pub fn new(policy: &CpufreqPolicy, tick_ns: u64, tunables: SchedutilTunables) -> Schedutil {
        let rate_limit_us = tunables
            .rate_limit_us
            .unwrap_or_else(|| policy.transition_delay_us());
        Schedutil {
            tunables,
            tick_ns,
            last_freq_update_time: 0,
            freq_update_delay_ns: i64::from(rate_limit_us) * 1000,
            next_freq: 0,
            cached_raw_freq: 0,
            limits_changed: false,
            need_freq_update: false,
            cpus: vec![SugovCpu::default(); policy.cpus()],
        }
    }

    /// The rate limit in force, ns.
    pub fn rate_limit_ns(&self) -> u64 {
        self.freq_update_delay_ns as u64
    }

    /// The last committed choice (`next_freq`), kHz; 0 before the first.
    pub fn next_freq_khz(&self) -> u32 {
        self.next_freq
    }

    /// A CPU's IO-wait boost (0..=1024) and whether a request is pending.
    pub fn boost_of(&self, cpu: usize) -> (u32, bool) {
        let c = &self.cpus[cpu];
        (c.iowait_boost, c.iowait_boost_pending)
    }

    /// `sugov_limits`: the policy's limits changed (or the governor just started).
    pub fn limits(&mut self, policy: &mut CpufreqPolicy) -> Option<FreqChange> {
        let change = if policy.fast_switch() {
            None
        } else {
            policy.apply_limits()
        };
        self.limits_changed = true;
        change
    }

    /// `cpufreq_update_util` on the policy: the driver's change, if the governor made one.
    pub fn update(&mut self, policy: &mut CpufreqPolicy, u: &UtilUpdate) -> Option<FreqChange> {
        assert_eq!(u.cpus.len(), self.cpus.len(), "one CpuUtil per CPU");
        self.iowait_boost(u.cpu, u.now_ns, u.iowait);
        self.cpus[u.cpu].last_update = u.now_ns;
        if !self.should_update_freq(u.now_ns) {
            return None;
        }
        let max_cap = policy.capacity();
        let next = if policy.is_shared() {
            let mut util = 0;
            for j in 0..self.cpus.len() {
                let boost = self.iowait_apply(j, u.now_ns, max_cap);
                util = util.max(effective_perf(&u.cpus[j], boost, max_cap));
            }
            self.get_next_freq(policy, util, max_cap)
        } else {
            let cached = self.cached_raw_freq;
            let boost = self.iowait_apply(u.cpu, u.now_ns, max_cap);
            let perf = effective_perf(&u.cpus[u.cpu], boost, max_cap);
            let mut next = self.get_next_freq(policy, perf, max_cap);
            if self.hold_freq(u.cpu, &u.cpus[u.cpu])
                && next < self.next_freq
                && !self.need_freq_update
            {
                next = self.next_freq;
                self.cached_raw_freq = cached;
            }
            next
        };
        if !self.update_next_freq(u.now_ns, next) {
            return None;
        }
        if policy.fast_switch() {
            Some(policy.fast_switch_to(next))
        } else {
            policy.driver_target(self.next_freq, Relation::L)
        }
    }

    fn should_update_freq(&mut self, now: u64) -> bool {
        if self.limits_changed {
            self.limits_changed = false;
            self.need_freq_update = true;
            return true;
        }
        let delta = now.wrapping_sub(self.last_freq_update_time) as i64;
        delta >= self.freq_update_delay_ns
    }

    fn update_next_freq(&mut self, now: u64, next: u32) -> bool {
        if self.need_freq_update {
            // CPUFREQ_NEED_UPDATE_LIMITS is not set by the drivers modelled.
            self.need_freq_update = false;
        } else if self.next_freq == next {
            return false;
        }
        self.next_freq = next;
        self.last_freq_update_time = now;
        true
    }

    fn get_next_freq(&mut self, policy: &CpufreqPolicy, util: u64, max: u64) -> u32 {
        let reference = if self.tunables.freq_invariant {
            u64::from(policy.cpuinfo_max_khz())
        } else {
            let cur = u64::from(policy.cur_khz());
            cur + (cur >> 2)
        };
        // map_util_freq in unsigned long, stored into an unsigned int.
        let raw = (reference * util / max) as u32;
        if raw == self.cached_raw_freq && !self.need_freq_update {
            return self.next_freq;
        }
        self.cached_raw_freq = raw;
        policy.resolve_freq(raw, Relation::Le)
    }

    /// `sugov_iowait_reset`: more than a tick since the CPU's last update clears the boost (or
    /// restarts it at the minimum for an IO wake-up). True when it did.
    fn iowait_reset(&mut self, cpu: usize, now: u64, set: bool) -> bool {
        let c = &mut self.cpus[cpu];
        let delta = now.wrapping_sub(c.last_update) as i64;
        if delta <= self.tick_ns as i64 {
            return false;
        }
        c.iowait_boost = if set { IOWAIT_BOOST_MIN } else { 0 };
        c.iowait_boost_pending = set;
        true
    }

    fn iowait_boost(&mut self, cpu: usize, now: u64, iowait: bool) {
        if self.cpus[cpu].iowait_boost != 0 && self.iowait_reset(cpu, now, iowait) {
            return;
        }
        let c = &mut self.cpus[cpu];
        if !iowait || c.iowait_boost_pending {
            return;
        }
        c.iowait_boost_pending = true;
        c.iowait_boost = if c.iowait_boost != 0 {
            (c.iowait_boost << 1).min(SCHED_CAPACITY_SCALE)
        } else {
            IOWAIT_BOOST_MIN
        };
    }

    fn iowait_apply(&mut self, cpu: usize, now: u64, max_cap: u64) -> u64 {
        if self.cpus[cpu].iowait_boost == 0 || self.iowait_reset(cpu, now, false) {
            return 0;
        }
        let c = &mut self.cpus[cpu];
        if !c.iowait_boost_pending {
            c.iowait_boost >>= 1;
            if c.iowait_boost < IOWAIT_BOOST_MIN {
                c.iowait_boost = 0;
                return 0;
            }
        }
        c.iowait_boost_pending = false;
        (u64::from(c.iowait_boost) * max_cap) >> 10
    }

    /// `sugov_hold_freq`: the CPU has not stopped its tick in idle since the last evaluation,
    /// and is not held down by its cap (`uclamp_rq_is_capped`: a cap below 1024 that the CFS
    /// utilization reaches; then the idle count is not even sampled).
    fn hold_freq(&mut self, cpu: usize, u: &CpuUtil) -> bool {
        if u.uclamp_max != u64::from(SCHED_CAPACITY_SCALE) && u.util >= u.uclamp_max {
            return false;
        }
        let c = &mut self.cpus[cpu];
        let busy = u.idle_calls == c.saved_idle_calls;
        c.saved_idle_calls = u.idle_calls;
        busy
    }
}

/// `sugov_get_util` then `sugov_effective_cpu_perf` for one CPU, with `boost` already scaled to
/// capacity: the floor is the larger of the clamp floor and (a runnable RT task) the capacity;
/// the ceiling is the clamp cap within the capacity, lowered to the utilization with its
/// headroom when that is below it; the answer is the larger of floor and ceiling.
fn effective_perf(cpu: &CpuUtil, boost: u64, scale: u64) -> u64 {
    let rt_floor = if cpu.rt_runnable { scale } else { 0 };
    let min = cpu.uclamp_min.max(rt_floor);
    let max = scale.min(cpu.uclamp_max);
    let util = cpu.util.min(scale).max(boost);
    let actual = util + (util >> 2);
    actual.min(max).max(min)
}

#[cfg(test)]
mod tests;
