//! Frequency on the engine: each cluster with OPPs is a cpufreq policy (`crate::cpufreq`) whose
//! governor the scheduler's utilization updates drive, and whose frequency the CPUs' work, PELT
//! and power follow.
//!
//! 1. Start: a cluster's policy starts at its highest OPP within the platform's scaling limits
//!    and its governor starts on it (`performance` moves to the cap, `powersave` to the floor;
//!    schedutil and ondemand keep the start until their first update).
//! 2. Updates reach only the governors that listen (schedutil, ondemand), where v6.12's CFS
//!    makes them (`cpufreq_update_util`): a task woken from IO wait is enqueued with
//!    `SCHED_CPUFREQ_IOWAIT` before its CPU's PELT is brought up to date; then, at that enqueue,
//!    at each tick of a running CPU and at the dequeue of a task whose burst ended, PELT is
//!    brought to now and, when that crossed a PELT period (`decayed`), an update without flags
//!    follows (`cfs_rq_util_change`). Every task woken by its own IO's completion counts as in
//!    IO wait (ASSUMPTION: it blocked in `io_schedule`, as a synchronous read such as fio's
//!    default psync does; libaio's `io_getevents` does not). Not modelled: the idle load
//!    balancer's updates of blocked load (an idle CPU's utilization stays as its last update
//!    left it), RT and deadline tasks, `util_est`.
//! 3. A change the governor asks for reaches the hardware after the policy's transition latency
//!    (the platform's worst case: an ASSUMPTION, real switches are often faster; with no latency
//!    known, `CPUFREQ_ETERNAL`, at once); a later request replaces one in flight. The slow
//!    path's kthread and a fast switch take no CPU time here.
//! 4. At the switch each CPU of the cluster is charged its power until then; a burst under way
//!    has its remaining time scaled by old / new frequency (interrupt time queued inside it
//!    with it); the running time PELT has not yet seen is banked at the old frequency's scale.
//! 5. What a governor reads of a CPU is `cpu_util_cfs_boost`: the larger of the CPU's PELT
//!    `util_avg` and its `util_est`, the sum of its runnable tasks' estimates (UTIL_EST, on by
//!    default). A task's estimate (`util_est_update`, v6.8 form) is taken at each dequeue for
//!    sleep from its own PELT signal (`dequeued`, on the CPU's PELT clock, accruing only while
//!    the task is the CPU's current one), unless that signal has not crossed a period since
//!    the last estimate: at or above the estimate, the estimate becomes it; within 1 % of
//!    capacity below (`UTIL_EST_MARGIN`, 10), the estimate stays; above the CPU's capacity,
//!    nothing changes; else the estimate moves a quarter of the way down
//!    (`ewma = (4 ewma - (ewma - dequeued)) / 4`). The sum gains the task's estimate at its
//!    enqueue (before the governor hears of it) and loses it at its dequeue (before the
//!    governor hears of that). Not modelled: `runnable_avg` (the boost's other term).
//!    With a task that sets a clamp (`uclamp_min`/`uclamp_max`), every task's clamps count in
//!    its CPU's run queue (`crate::cpu::uclamp`) from just after the enqueue's update to just
//!    before the dequeue's, as in v6.12: a waking task's floor first reaches the governor at
//!    the next update (the running CPU's tick or a PELT period crossed).
//! 6. A `[[qos.request]]` writing `cpuN/cpufreq/scaling_min_freq` or `scaling_max_freq`
//!    changes that policy's QoS floor or cap at its time; if the aggregate moved, the limits are
//!    resolved again and the governor's `limits` runs (`cpufreq_set_policy` from the QoS
//!    notifier's work item, taken to run at once), which may move the frequency.
//! 7. Each CPU counts its busy time and energy per OPP (idle time has no OPP, as idlestat's
//!    P-state report counts it) and the switches it saw.

use super::{CpuEvent, CpuSystem, Mode, Traced};
use crate::cpufreq::{self, CpuUtil, CpufreqPolicy, FreqChange, GovernorName, UtilUpdate};
use crate::sim::{Ctx, Timer};
use crate::time::Nanos;

/// One CPU's time and energy at one OPP while it was busy.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct OppStats {
    pub khz: u64,
    pub time_ns: u64,
    pub energy_mj: f64,
}

/// One cluster's cpufreq policy, its governor and the hardware's frequency.
pub(super) struct Domain {
    policy: CpufreqPolicy,
    governor: cpufreq::Governor,
    /// The table's frequencies (kHz) and each one's active power (mW; 0 where the platform
    /// gives none: the report then says the power is unknown).
    pub(super) opps: Vec<(u64, f64)>,
    /// When a request reaches the hardware after it is made.
    latency_ns: u64,
    /// The switch in flight and the frequency it sets.
    switch: Timer,
    target_khz: u64,
}

impl Domain {
    /// The policy of `cluster` with `governor` started on it at time 0; `None` without OPPs.
    pub(super) fn start(
        cluster: &crate::cpu::ClusterSpec,
        governor: GovernorName,
        params: &cpufreq::GovernorParams,
    ) -> Option<Domain> {
        let mut policy = crate::cpu::freq_domain::policy(cluster)?;
        let idle = vec![CpuUtil::default(); policy.cpus()];
        let (governor, _) = cpufreq::Governor::start(governor, &mut policy, params, 0, &idle);
        let latency = policy.transition_latency_ns();
        Some(Domain {
            opps: cluster
                .opps
                .iter()
                .map(|o| (o.freq_khz, o.power_mw.as_ref().map_or(0.0, |p| p.central())))
                .collect(),
            latency_ns: match latency {
                cpufreq::policy::CPUFREQ_ETERNAL_NS => 0,
                ns => u64::from(ns),
            },
            switch: Timer::new(),
            target_khz: 0,
            governor,
            policy,
        })
    }

    /// The frequency the policy runs at now (kHz).
    pub(super) fn khz(&self) -> u64 {
        u64::from(self.policy.cur_khz())
    }

    /// Whether the governor hears the scheduler's updates.
    pub(super) fn listens(&self) -> bool {
        matches!(
            self.governor,
            cpufreq::Governor::Schedutil(_) | cpufreq::Governor::Ondemand(_)
        )
    }

    /// The index of `khz` in the table.
    pub(super) fn index_of(&self, khz: u64) -> usize {
        self.opps.iter().position(|o| o.0 == khz).unwrap_or(0)
    }
}

/// `work` ns at `from_khz` as time at `to_khz` (rounded up).
pub(super) fn rescale(work: u64, from_khz: u64, to_khz: u64) -> u64 {
    let t = u128::from(work) * u128::from(from_khz);
    t.div_ceil(u128::from(to_khz)).min(u128::from(u64::MAX)) as u64
}

/// `UTIL_AVG_UNCHANGED`: a task's estimate carries it until its PELT signal crosses a period.
pub(super) const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// `UTIL_EST_MARGIN`: `SCHED_CAPACITY_SCALE / 100`.
const UTIL_EST_MARGIN: u32 = 10;
/// `UTIL_EST_WEIGHT_SHIFT`: new samples weigh a quarter.
const UTIL_EST_WEIGHT_SHIFT: u32 = 2;

/// `util_est_update` for a task dequeued to sleep: its estimate (with the unchanged flag)
/// after a last activation that left its PELT `util_avg` at `dequeued`, on a CPU of
/// `capacity`.
pub(super) fn util_est_update(est: u32, dequeued: u64, capacity: u64) -> u32 {
    if est & UTIL_AVG_UNCHANGED != 0 {
        return est;
    }
    let dequeued = dequeued.min(u64::from(u32::MAX >> 1)) as u32;
    let ewma = if est <= dequeued {
        dequeued
    } else if est - dequeued < UTIL_EST_MARGIN {
        est
    } else if u64::from(dequeued) > capacity {
        return est;
    } else {
        ((est << UTIL_EST_WEIGHT_SHIFT) - (est - dequeued)) >> UTIL_EST_WEIGHT_SHIFT
    };
    ewma | UTIL_AVG_UNCHANGED
}

/// Running time `ran` at `khz` as PELT's frequency-invariant time (`f / f_max` of it).
pub(super) fn invariant(ran: u64, khz: u64, max_khz: u64) -> u64 {
    if khz == max_khz {
        return ran;
    }
    (u128::from(ran) * u128::from(khz) / u128::from(max_khz)) as u64
}

impl super::Task {
    /// The task's PELT signal brought to its CPU's PELT clock (`running`: it was the current
    /// task since its last update); crossing a period clears its estimate's unchanged flag
    /// (`cfs_se_util_change`).
    fn pelt_to(&mut self, clock_ns: u64, running: bool) {
        if self.pelt.update_at(clock_ns, running) {
            self.util_est &= !UTIL_AVG_UNCHANGED;
        }
    }
}

impl<'t> CpuSystem<'t> {
    /// Brings CPU `c`'s PELT signal to now (running or idle since its last update); true when
    /// it crossed a period.
    pub(super) fn pelt_update(&mut self, c: usize, now: Nanos) -> bool {
        let cpu = &mut self.cpus[c];
        if !cpu.pelt_running {
            return cpu.pelt.idle_until(now.0);
        }
        let ran = cpu.pelt_banked + invariant((now - cpu.pelt_mark).0, cpu.khz, cpu.max_khz);
        cpu.pelt_banked = 0;
        cpu.pelt_mark = now;
        cpu.pelt.run_for(ran, cpu.view.capacity)
    }

    /// Step 5, enqueue: task `t` joins CPU `c`'s run queue (its estimate into the CPU's sum,
    /// then the governor hears of it: an IO-wait wake-up first, then PELT's update).
    pub(super) fn util_enqueue<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize, t: usize) {
        let now = ctx.now();
        let task = &mut self.tasks[t];
        self.cpus[c].util_est += u64::from(task.util_est & !UTIL_AVG_UNCHANGED);
        let iowait = task.after_io;
        if iowait {
            self.util_changed(ctx, c, true);
        }
        let decayed = self.pelt_update(c, now);
        self.tasks[t].pelt_to(self.cpus[c].pelt.clock_ns(), false);
        if decayed {
            self.util_changed(ctx, c, false);
        }
        // v6.12 counts the task's clamps after the class's enqueue (and its update).
        let task = &mut self.tasks[t];
        if self.uclamp_used && !task.uclamp_active {
            task.uclamp_active = true;
            self.cpus[c].clamps.inc(task.spec.uclamp);
        }
    }

    /// Task `t` becomes CPU `c`'s current task: its signal, waiting until now, is brought up to
    /// date, so that from here it accrues running time.
    pub(super) fn util_pick(&mut self, c: usize, t: usize) {
        self.tasks[t].pelt_to(self.cpus[c].pelt.clock_ns(), false);
    }

    /// Step 5, dequeue for sleep: task `t`'s burst on CPU `c` ended now (`idle`: the CPU has
    /// nothing else to run). The CPU's sum loses the task's estimate; PELT runs to now (the
    /// governor hears of it if it crossed a period); then the task's estimate is updated.
    pub(super) fn util_dequeue<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        c: usize,
        t: usize,
        idle: bool,
    ) {
        let now = ctx.now();
        // Its clamps leave before the class's dequeue (and its update).
        let task = &mut self.tasks[t];
        if task.uclamp_active {
            task.uclamp_active = false;
            self.cpus[c].clamps.dec(task.spec.uclamp);
        }
        let est = u64::from(self.tasks[t].util_est & !UTIL_AVG_UNCHANGED);
        self.cpus[c].util_est = self.cpus[c].util_est.saturating_sub(est);
        let decayed = self.pelt_update(c, now);
        let cpu = &mut self.cpus[c];
        self.tasks[t].pelt_to(cpu.pelt.clock_ns(), true);
        if idle {
            cpu.pelt_running = false;
            cpu.pelt.resync(now.0);
        }
        if decayed {
            self.util_changed(ctx, c, false);
        }
        let task = &mut self.tasks[t];
        task.util_est = util_est_update(
            task.util_est,
            task.pelt.util_avg(),
            self.cpus[c].view.capacity,
        );
    }

    /// Step 2: CPU `c`'s utilization changed (`iowait`: a task woke from IO wait); its
    /// cluster's governor, if it listens, may ask for a frequency.
    pub(super) fn util_changed<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        c: usize,
        iowait: bool,
    ) {
        let k = self.cpus[c].cluster;
        let now = ctx.now();
        let mut cpus = std::mem::take(&mut self.util_buf);
        cpus.clear();
        let mut slot = 0;
        for (j, &i) in self.clusters[k].0.iter().enumerate() {
            let cpu = &self.cpus[i];
            if i == c {
                slot = j;
            }
            cpus.push(CpuUtil {
                util: cpu.pelt.util_avg().max(cpu.util_est),
                rt_runnable: false,
                idle_calls: cpu.idle_calls,
                idle_ns: now.0 - cpu.busy_until(now),
                iowait_ns: 0,
                uclamp_min: u64::from(cpu.clamps.floor()),
                uclamp_max: u64::from(cpu.clamps.cap()),
            });
        }
        let change = self.domains[k].as_mut().and_then(|d| {
            let u = UtilUpdate {
                now_ns: now.0,
                cpu: slot,
                iowait,
                cpus: &cpus,
            };
            d.governor.update(&mut d.policy, &u)
        });
        self.util_buf = cpus;
        if let Some(change) = change {
            self.request(ctx, k, change);
        }
    }

    /// A write of `khz` to CPU `cpu`'s `scaling_min_freq` (`floor`) or `scaling_max_freq` now:
    /// when it moves the policy's QoS floor or cap, the policy's limits are resolved again and
    /// its governor's `limits` runs (`cpufreq_set_policy`, reached through the QoS notifier's
    /// work item, here at once), which may ask for a frequency.
    pub(super) fn scaling_write<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        cpu: u32,
        floor: bool,
        khz: u32,
    ) {
        let k = self.cpus[self.cpu_index(cpu)].cluster;
        let Some(d) = self.domains[k].as_mut() else {
            return;
        };
        let moved = if floor {
            d.policy.store_scaling_min_freq(khz)
        } else {
            d.policy.store_scaling_max_freq(khz)
        };
        if !moved {
            return;
        }
        d.policy.update_limits();
        if let Some(change) = d.governor.limits(&mut d.policy) {
            self.request(ctx, k, change);
        }
    }

    /// Step 3: the driver was asked for `change` on cluster `k`.
    fn request<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, k: usize, change: FreqChange) {
        let Some(d) = self.domains[k].as_mut() else {
            return;
        };
        let to = u64::from(change.to_khz);
        if d.latency_ns == 0 {
            d.switch.cancel();
            self.switch_frequency(ctx, k, to);
            return;
        }
        d.target_khz = to;
        let at = ctx.now() + Nanos(d.latency_ns);
        d.switch.arm(ctx, at, |s| CpuEvent::FreqSwitch(k, s));
    }

    /// The switch in flight on cluster `k` is done.
    pub(super) fn switch_done<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        k: usize,
        shot: crate::sim::Shot,
    ) {
        let Some(d) = self.domains[k].as_mut() else {
            return;
        };
        if d.switch.fire(shot) {
            let khz = d.target_khz;
            self.switch_frequency(ctx, k, khz);
        }
    }

    /// Step 4: cluster `k`'s CPUs run at `khz` from now.
    fn switch_frequency<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, k: usize, khz: u64) {
        let now = ctx.now();
        let Some(d) = self.domains[k].as_ref() else {
            return;
        };
        let opp = d.index_of(khz);
        let mw = d.opps[opp].1;
        self.settle_cluster(now, k);
        for j in 0..self.clusters[k].0.len() {
            let c = self.clusters[k].0[j];
            let cpu = &mut self.cpus[c];
            let old = cpu.khz;
            if old == khz {
                continue;
            }
            if cpu.pelt_running {
                cpu.pelt_banked += invariant((now - cpu.pelt_mark).0, old, cpu.max_khz);
                cpu.pelt_mark = now;
            }
            if let (Mode::Running { .. }, Some(due)) = (cpu.mode, cpu.burst.due()) {
                let left = rescale(due.0.saturating_sub(now.0), old, khz);
                cpu.burst
                    .arm(ctx, now + Nanos(left), |s| CpuEvent::BurstEnd(c, s));
            }
            cpu.khz = khz;
            cpu.opp = opp;
            cpu.active_mw = mw;
            cpu.stats.freq_changes += 1;
            let id = cpu.id;
            self.emit(now, || Traced::Frequency { cpu: id, khz });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn util_est_follows_rises_and_decays_a_quarter_at_a_time() {
        let flag = UTIL_AVG_UNCHANGED;
        // Unchanged since the last estimate: kept as it is.
        assert_eq!(util_est_update(400 | flag, 0, 1024), 400 | flag);
        // A rise (or an equal value) is taken whole.
        assert_eq!(util_est_update(0, 300, 1024), 300 | flag);
        assert_eq!(util_est_update(300, 300, 1024), 300 | flag);
        // Within 10 below: kept.
        assert_eq!(util_est_update(400, 391, 1024), 400 | flag);
        // 400 -> 200: (4 x 400 - 200) / 4 = 350.
        assert_eq!(util_est_update(400, 200, 1024), 350 | flag);
        // 400 -> 390 (a diff of exactly 10): (1600 - 10) / 4 = 397 (397.5 truncated).
        assert_eq!(util_est_update(400, 390, 1024), 397 | flag);
        // Above the CPU's capacity (no idle time to grant): nothing changes, flag included.
        assert_eq!(util_est_update(1200, 1100, 1024), 1200);
    }
}
