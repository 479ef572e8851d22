//! `ondemand@6.12`: the sampling cpufreq governor of Linux v6.12
//! (drivers/cpufreq/cpufreq_ondemand.c on the common code of drivers/cpufreq/cpufreq_governor.c;
//! idle time from kernel/time/tick-sched.c through `get_cpu_idle_time`).
//!
//! It rides the same scheduler hook as schedutil, but only as a timer: an update samples when
//! at least the sample delay passed since the last sample. A sample (`dbs_work_handler`, taken
//! to run at once):
//! 1. Per CPU of the policy (`dbs_update`), from its cumulative idle time (idle plus IO-wait
//!    idle, unless `io_is_busy`) and the time, both in whole us: `elapsed` and `idle` since the
//!    previous sample (unsigned int). No time elapsed: the previous load. Idle for more than two
//!    sampling periods (the CPU slept and a task just woke) with a previous load: that previous
//!    load, once, then forgotten. Otherwise `load = 100 x (elapsed - idle) / elapsed`
//!    (0 if idle exceeds elapsed), remembered. The policy's load is the largest.
//! 2. `od_update`: a load above `up_threshold` (95 where the kernel has NO_HZ idle accounting,
//!    else 80) asks for `policy->max` (`CPUFREQ_RELATION_HE`) unless already there, and, when
//!    below the cap, stretches the next sampling period by `sampling_down_factor`. Otherwise the
//!    target is `cpuinfo.min + load x (cpuinfo.max - cpuinfo.min) / 100`, resolved to the closest
//!    efficient OPP (`CPUFREQ_RELATION_CE`), and the period returns to the sampling rate.
//! 3. The next sample is due `sampling_rate x rate_mult` us later.
//!
//! Start (`cpufreq_dbs_governor_start`, then the core's `limits`): each CPU's counters are read
//! as the reference, no previous load, `rate_mult` 1; `sampling_rate` = the larger of two ticks
//! and `cpufreq_policy_transition_delay_us()` unless set. `limits`
//! (`cpufreq_dbs_governor_limits`) moves the frequency into the limits at once and makes the next
//! update sample (delay 0).
//!
//! Not modelled: `powersave_bias` (0 by default; its sub-sampling between two OPPs),
//! `ignore_nice_load` (nice time counts as busy, the default), and the work queue's delay.

use super::policy::{CpufreqPolicy, FreqChange, Relation};
use super::schedutil::{CpuUtil, UtilUpdate};

/// ondemand's tunables (`/sys/devices/system/cpu/cpufreq/ondemand/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OndemandTunables {
    /// `sampling_rate`, us; `None`: the kernel's default for the policy.
    pub sampling_rate_us: Option<u32>,
    /// `up_threshold`, percent: `MICRO_FREQUENCY_UP_THRESHOLD` (95) with NO_HZ idle accounting,
    /// `DEF_FREQUENCY_UP_THRESHOLD` (80) without.
    pub up_threshold: u32,
    /// `sampling_down_factor` (default 1).
    pub sampling_down_factor: u32,
    /// `io_is_busy`: IO-wait idle counts as busy (default: only on Intel Core 2 and later).
    pub io_is_busy: bool,
}

impl Default for OndemandTunables {
    /// The defaults on an Arm platform with NO_HZ idle accounting.
    fn default() -> Self {
        OndemandTunables {
            sampling_rate_us: None,
            up_threshold: 95,
            sampling_down_factor: 1,
            io_is_busy: false,
        }
    }
}

/// `struct cpu_dbs_info`, the fields the load needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct DbsCpu {
    prev_cpu_idle_us: u64,
    prev_update_time_us: u64,
    prev_load: u32,
}

/// `struct policy_dbs_info` with ondemand's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ondemand {
    tunables: OndemandTunables,
    sampling_rate_us: u32,
    rate_mult: u32,
    last_sample_time: u64,
    sample_delay_ns: i64,
    cpus: Vec<DbsCpu>,
}

impl Ondemand {
    /// `cpufreq_dbs_governor_init` and `_start` at `now_ns`, reading the CPUs' counters in
    /// `cpus`; call [`Ondemand::limits`] next, as the core does.
    pub fn new(
        policy: &CpufreqPolicy,
        tick_ns: u64,
        tunables: OndemandTunables,
        now_ns: u64,
        cpus: &[CpuUtil],
    ) -> Ondemand {
        assert_eq!(cpus.len(), policy.cpus(), "one CpuUtil per CPU");
        let min_sampling_us = (2 * tick_ns / 1000) as u32;
        let sampling_rate_us = tunables
            .sampling_rate_us
            .unwrap_or_else(|| policy.transition_delay_us().max(min_sampling_us));
        let io_is_busy = tunables.io_is_busy;
        Ondemand {
            tunables,
            sampling_rate_us,
            rate_mult: 1,
            last_sample_time: 0,
            sample_delay_ns: i64::from(sampling_rate_us) * 1000,
            cpus: cpus
                .iter()
                .map(|c| DbsCpu {
                    prev_cpu_idle_us: idle_us(c, io_is_busy),
                    prev_update_time_us: now_ns / 1000,
                    prev_load: 0,
                })
                .collect(),
        }
    }

    /// The sampling rate in force, us.
    pub fn sampling_rate_us(&self) -> u32 {
        self.sampling_rate_us
    }

    /// `cpufreq_dbs_governor_limits`.
    pub fn limits(&mut self, policy: &mut CpufreqPolicy) -> Option<FreqChange> {
        let change = policy.apply_limits();
        self.sample_delay_ns = 0;
        change
    }

    /// `dbs_update_util_handler`, and the sample it may start.
    pub fn update(&mut self, policy: &mut CpufreqPolicy, u: &UtilUpdate) -> Option<FreqChange> {
        assert_eq!(u.cpus.len(), self.cpus.len(), "one CpuUtil per CPU");
        let delta = u.now_ns.wrapping_sub(self.last_sample_time) as i64;
        if delta < self.sample_delay_ns {
            return None;
        }
        self.last_sample_time = u.now_ns;
        let load = self.load(u.now_ns, u.cpus);
        let change = self.od_update(policy, load);
        self.sample_delay_ns = i64::from(self.sampling_rate_us * self.rate_mult) * 1000;
        change
    }

    /// `dbs_update`: the largest load of the policy's CPUs, percent.
    fn load(&mut self, now_ns: u64, cpus: &[CpuUtil]) -> u32 {
        let sampling_rate = self.sampling_rate_us * self.rate_mult;
        let mut max_load = 0;
        for (j, c) in self.cpus.iter_mut().zip(cpus) {
            let cur_idle = idle_us(c, self.tunables.io_is_busy);
            let update_time = now_ns / 1000;
            let elapsed = update_time.wrapping_sub(j.prev_update_time_us) as u32;
            j.prev_update_time_us = update_time;
            let idle = cur_idle.wrapping_sub(j.prev_cpu_idle_us) as u32;
            j.prev_cpu_idle_us = cur_idle;
            let load = if elapsed == 0 {
                j.prev_load
            } else if idle as i32 > (2 * sampling_rate) as i32 && j.prev_load != 0 {
                let load = j.prev_load;
                j.prev_load = 0;
                load
            } else {
                let load = if elapsed >= idle {
                    (100 * u64::from(elapsed - idle) / u64::from(elapsed)) as u32
                } else if (idle as i32) < 0 {
                    100
                } else {
                    0
                };
                j.prev_load = load;
                load
            };
            max_load = max_load.max(load);
        }
        max_load
    }

    /// `od_update` without `powersave_bias`.
    fn od_update(&mut self, policy: &mut CpufreqPolicy, load: u32) -> Option<FreqChange> {
        if load > self.tunables.up_threshold {
            if policy.cur_khz() < policy.max_khz() {
                self.rate_mult = self.tunables.sampling_down_factor;
            }
            if policy.cur_khz() == policy.max_khz() {
                return None;
            }
            return policy.driver_target(policy.max_khz(), Relation::He);
        }
        let (min_f, max_f) = (policy.cpuinfo_min_khz(), policy.cpuinfo_max_khz());
        let next = min_f + load * (max_f - min_f) / 100;
        self.rate_mult = 1;
        policy.driver_target(next, Relation::Ce)
    }
}

/// `get_cpu_idle_time` in us: idle time, plus IO-wait idle unless IO counts as busy.
fn idle_us(c: &CpuUtil, io_is_busy: bool) -> u64 {
    let ns = if io_is_busy {
        c.idle_ns
    } else {
        c.idle_ns + c.iowait_ns
    };
    ns / 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpufreq::policy::PolicySpec;

    const MS: u64 = 1_000_000;

    /// OPPs 500 / 1000 / 1500 / 2000 MHz, one CPU, transition latency 500 us (delay 750 us),
    /// HZ = 250: sampling_rate = max(750, 2 x 4000) = 8000 us.
    fn setup(tunables: OndemandTunables) -> (CpufreqPolicy, Ondemand) {
        let mut p = CpufreqPolicy::new(&PolicySpec {
            freqs_khz: vec![500_000, 1_000_000, 1_500_000, 2_000_000],
            inefficient: vec![],
            transition_latency_ns: 500_000,
            transition_delay_us: None,
            capacity: 1024,
            cpus: 1,
            fast_switch: false,
            initial_khz: 500_000,
        });
        let mut g = Ondemand::new(&p, 4 * MS, tunables, 0, &[CpuUtil::default()]);
        g.limits(&mut p);
        (p, g)
    }

    fn sample(g: &mut Ondemand, p: &mut CpufreqPolicy, t: u64, idle: u64, iowait: u64) -> u32 {
        let c = CpuUtil {
            idle_ns: idle,
            iowait_ns: iowait,
            ..CpuUtil::default()
        };
        g.update(
            p,
            &UtilUpdate {
                now_ns: t,
                cpu: 0,
                iowait: false,
                cpus: &[c],
            },
        );
        p.cur_khz()
    }

    #[test]
    fn load_maps_linearly_onto_the_closest_opp_and_a_busy_cpu_goes_to_the_cap() {
        let (mut p, mut g) = setup(OndemandTunables::default());
        assert_eq!(g.sampling_rate_us(), 8000);
        // t = 8 ms (the first update samples at once after limits): 6 ms idle of 8 -> load 25:
        // 500 000 + 25 x 1 500 000 / 100 = 875 000 -> closest 1 000 000 (125 000 vs 375 000).
        assert_eq!(sample(&mut g, &mut p, 8 * MS, 6 * MS, 0), 1_000_000);
        // 4 ms later: before the 8 ms sampling period, nothing.
        assert_eq!(sample(&mut g, &mut p, 12 * MS, 6 * MS, 0), 1_000_000);
        // t = 16 ms: 8 ms elapsed, 4 ms idle -> 50: 1 250 000, 250 000 from both 1 000 000 and
        // 1 500 000: the lower, 1 000 000.
        assert_eq!(sample(&mut g, &mut p, 16 * MS, 10 * MS, 0), 1_000_000);
        // t = 24 ms: 0.3 ms idle of 8 -> 100 x 7700 / 8000 = 96 > 95: the cap.
        assert_eq!(sample(&mut g, &mut p, 24 * MS, 10_300_000, 0), 2_000_000);
        // t = 32 ms: 8 ms idle (the whole period) -> 0: the lowest OPP.
        assert_eq!(sample(&mut g, &mut p, 32 * MS, 18_300_000, 0), 500_000);
    }

    #[test]
    fn iowait_counts_as_idle_unless_io_is_busy_and_a_long_sleep_reuses_the_last_load() {
        // 8 ms: 1 ms idle + 4 ms IO-wait idle. io_is_busy off: idle 5 ms -> load 37:
        // 500 000 + 37 x 15 000 = 1 055 000 -> 1 000 000.
        let (mut p, mut g) = setup(OndemandTunables::default());
        assert_eq!(sample(&mut g, &mut p, 8 * MS, MS, 4 * MS), 1_000_000);
        // io_is_busy: idle 1 ms -> 87: 1 805 000 -> 2 000 000 (195 000 vs 305 000).
        let (mut p, mut g) = setup(OndemandTunables {
            io_is_busy: true,
            ..OndemandTunables::default()
        });
        assert_eq!(sample(&mut g, &mut p, 8 * MS, MS, 4 * MS), 2_000_000);
        // Then the CPU sleeps 40 ms (more than 2 x 8 ms idle) and a task wakes: the previous
        // load (87) is reused once -> stays at 2 000 000.
        assert_eq!(sample(&mut g, &mut p, 48 * MS, 41 * MS, 4 * MS), 2_000_000);
        // Another 48 ms asleep: the previous load was forgotten, so this one is computed: 0.
        assert_eq!(sample(&mut g, &mut p, 96 * MS, 89 * MS, 4 * MS), 500_000);
    }

    #[test]
    fn sampling_down_factor_stretches_the_period_at_the_cap() {
        // factor 3: after jumping to the cap, the next sample is due 24 ms later.
        let (mut p, mut g) = setup(OndemandTunables {
            sampling_down_factor: 3,
            ..OndemandTunables::default()
        });
        assert_eq!(sample(&mut g, &mut p, 8 * MS, 0, 0), 2_000_000);
        // 16 ms later, idle the whole time: not yet sampled.
        assert_eq!(sample(&mut g, &mut p, 24 * MS, 16 * MS, 0), 2_000_000);
        // 32 ms: 24 ms elapsed, 24 ms idle -> load 0 -> the lowest OPP.
        assert_eq!(sample(&mut g, &mut p, 32 * MS, 24 * MS, 0), 500_000);
    }
}
