//! Stage 2 of the replay ([`Replayer`]): each period through every governor on its CPU's own
//! device, the choices booked with their classification and energy, and the columns.

use serde::Serialize;

use crate::cpuidle::{classify, Device, Governor, GovernorName, Kernel, Miss, MAX_STATES};
use crate::error::{shown, InputError};

use super::active::ActiveTime;
use super::layout::{ClusterTable, Layout};
use super::periods::{Cause, Period, SleepFrom};
use super::summary::{Column, CpuSummary, KernelMisses, StateShare, Summary};

/// One state of a cluster as booking a period in it needs it, worked out once per cluster so
/// that the per-period path reads one small record instead of the state table, the disabled
/// states and the power table.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StateCost {
    /// The exit latency (a negative one as 0): the latency the choice adds, the part of the
    /// residency the energy charges beyond the duration, and of the traced kernel's measured
    /// residency.
    exit_ns: u64,
    /// What a replayed governor's measured residency adds to the duration: the exit latency,
    /// none for a polling state (it stops when the wake-up comes).
    measured_exit_ns: u64,
    polling: bool,
    /// `classify` in this state as two bounds on the measured residency (compared as the
    /// `i64` it compares): below `too_deep_below` too deep, above `too_shallow_above` too
    /// shallow. Both hold for every device of the replay: each starts from the cluster's
    /// disabled states and no governor changes them.
    pub(super) too_deep_below: i64,
    pub(super) too_shallow_above: i64,
    /// Power (mW) and entry-and-exit energy (mJ), when the cluster has power figures.
    mw: f64,
    transition_mj: f64,
}

impl StateCost {
    /// State `i` of `table`, on `dev`: a device with the cluster's disabled states.
    pub(super) fn new(table: &ClusterTable, dev: &Device, i: usize) -> StateCost {
        let states = &table.view.states;
        // The bounds are `classify`'s own answers, found by bisection, so the rule lives once
        // (in the cpuidle core's `classify`): it counts a period too deep below one residency and
        // too shallow from another on (each of its tests holds on a range closed downwards or
        // upwards), over the `i64` it compares.
        let miss = |r: i64| classify(&table.view, dev, i, r as u64);
        let too_deep_below = first_where(|r| miss(r) != Miss::TooDeep).unwrap_or(i64::MAX);
        let too_shallow_above =
            first_where(|r| miss(r) == Miss::TooShallow).map_or(i64::MAX, |r| r.saturating_sub(1));
        let exit_ns = states[i].exit_latency_ns.max(0) as u64;
        StateCost {
            exit_ns,
            measured_exit_ns: if states[i].polling { 0 } else { exit_ns },
            polling: states[i].polling,
            too_deep_below,
            too_shallow_above,
            mw: table.state_mw.as_ref().map_or(0.0, |m| m[i]),
            transition_mj: table.transition_mj.get(i).copied().unwrap_or(0.0),
        }
    }
}

/// The least `i64` at which `holds` is true, if any, for a `holds` false up to some value and
/// true from there on (64 steps of bisection).
fn first_where(holds: impl Fn(i64) -> bool) -> Option<i64> {
    if !holds(i64::MAX) {
        return None;
    }
    // `holds(hi)`, and the answer lies in `lo..=hi`.
    let (mut lo, mut hi) = (i64::MIN, i64::MAX);
    while lo < hi {
        let mid = ((i128::from(lo) + i128::from(hi)) >> 1) as i64;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// A cluster's per-state costs and what the replay reads of its table per period.
#[derive(Clone, Debug)]
struct ClusterCosts {
    states: [StateCost; MAX_STATES],
    tick_ns: u64,
    capacity: u64,
}

impl ClusterCosts {
    fn new(table: &ClusterTable) -> ClusterCosts {
        let mut dev = Device::new(table.view.state_count());
        dev.disabled.clone_from(&table.disabled);
        let mut states = [StateCost::default(); MAX_STATES];
        for (i, s) in states.iter_mut().enumerate().take(table.view.state_count()) {
            *s = StateCost::new(table, &dev, i);
        }
        ClusterCosts {
            states,
            tick_ns: table.view.tick_ns.max(0) as u64,
            capacity: table.view.capacity,
        }
    }
}

/// Fixed-size per-CPU accumulators of one column (its period count is the sum of `entries`).
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    too_deep: u64,
    too_shallow: u64,
    entries: [u64; MAX_STATES],
    time_ns: [u64; MAX_STATES],
    latency_ns: u64,
    energy_mj: f64,
    tick_kept: u64,
    tick_before_wakeup: u64,
}

impl Acc {
    fn add(&mut self, o: &Acc) {
        self.too_deep += o.too_deep;
        self.too_shallow += o.too_shallow;
        for i in 0..MAX_STATES {
            self.entries[i] += o.entries[i];
            self.time_ns[i] += o.time_ns[i];
        }
        self.latency_ns += o.latency_ns;
        self.energy_mj += o.energy_mj;
        self.tick_kept += o.tick_kept;
        self.tick_before_wakeup += o.tick_before_wakeup;
    }

    /// Books one period in state `idx` (`s`) with its measured residency, classified as the
    /// cpuidle core does (spec-cpu.md §5, [`crate::cpuidle::classify`]). Counts add 0 or 1 rather than
    /// branch: the misses follow the workload, which no predictor learns. `energy`: the report
    /// shows energy (every cluster has power figures); otherwise it is not summed.
    #[inline]
    fn book(&mut self, idx: usize, s: &StateCost, duration: u64, residency: u64, energy: bool) {
        let diff = residency as i64;
        self.entries[idx] += 1;
        self.time_ns[idx] += duration;
        self.latency_ns += s.exit_ns;
        self.too_deep += u64::from(diff < s.too_deep_below);
        self.too_shallow += u64::from(diff > s.too_shallow_above);
        if energy {
            // The simulator's model: the state's power through the exit too (the residency
            // includes it), plus the state's entry-and-exit energy. mW x ns = 1e-9 mJ.
            // Not `metrics::EnergyMeter` on purpose: the meter integrates one component's
            // power over a continuous clock (per state, in pJ, converted at the end), while a
            // replay has disjoint periods and no clock between them (the running time there is
            // the active part, charged apart); `cpu::system` likewise sums a CPU's idle energy
            // in mJ as it goes. The same figures summed the meter's way would round otherwise.
            self.energy_mj += s.mw * (duration + s.exit_ns) as f64 * 1e-9 + s.transition_mj;
        }
    }

    fn summary(&self, names: &[String], energy: bool, governor: bool) -> Summary {
        let periods: u64 = self.entries.iter().sum();
        let pct = |n: u64| {
            if periods == 0 {
                0.0
            } else {
                100.0 * n as f64 / periods as f64
            }
        };
        Summary {
            periods,
            too_deep: self.too_deep,
            too_shallow: self.too_shallow,
            too_deep_pct: pct(self.too_deep),
            too_shallow_pct: pct(self.too_shallow),
            states: names
                .iter()
                .enumerate()
                .map(|(i, name)| StateShare {
                    index: i,
                    name: name.clone(),
                    entries: self.entries[i],
                    time_ns: self.time_ns[i],
                    entries_pct: pct(self.entries[i]),
                })
                .collect(),
            added_latency_ns: self.latency_ns,
            added_latency_mean_ns: if periods == 0 {
                0.0
            } else {
                self.latency_ns as f64 / periods as f64
            },
            idle_energy_mj: energy.then_some(self.energy_mj),
            active_energy_mj: None,
            energy_mj: None,
            tick_kept: governor.then_some(self.tick_kept),
            tick_before_wakeup: governor.then_some(self.tick_before_wakeup),
            kernel_reported: None,
        }
    }
}

/// One governor on one CPU.
struct GovCpu {
    governor: Box<dyn Governor>,
    dev: Device,
    kernel: Kernel,
    tick_stopped: bool,
    acc: Acc,
}

struct CpuSlot {
    cluster: usize,
    govs: Vec<GovCpu>,
    actual: Acc,
    seen: bool,
}

/// Counts of how each input was obtained.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct InputCounts {
    pub sleep_pending_timer: u64,
    pub sleep_timer_wakeup: u64,
    pub sleep_assumed: u64,
    pub tick_observed: u64,
    pub util_observed: u64,
    pub new_trips: u64,
    pub cause_timer: u64,
    pub cause_tick: u64,
    pub cause_ipi: u64,
    pub cause_irq: u64,
    pub cause_remote_wakeup: u64,
    pub cause_remote_waking: u64,
    pub cause_unknown: u64,
}

/// Replays periods through governors, per CPU.
pub struct Replayer {
    pub(super) layout: Layout,
    /// Per cluster of the layout, what booking a period there needs.
    costs: Vec<ClusterCosts>,
    /// Every cluster has power figures: the report shows energy.
    energy: bool,
    names: Vec<(String, GovernorName)>,
    slots: Vec<Option<CpuSlot>>,
    pub counts: InputCounts,
}

impl Replayer {
    /// Checks every governor against every cluster's table (ladder and haltpoll need two
    /// states); `label` names the platform in errors.
    pub fn new(
        layout: Layout,
        names: Vec<(String, GovernorName)>,
        label: &str,
    ) -> Result<Self, InputError> {
        for c in &layout.clusters {
            for (_, g) in &names {
                if c.view.state_count() < g.min_states() {
                    return Err(InputError::whole(
                        label,
                        format!(
                            "{} needs at least {} idle states; cluster {} has {}",
                            g.canonical(),
                            g.min_states(),
                            shown(&c.name),
                            c.view.state_count()
                        ),
                    ));
                }
            }
        }
        let slots = (0..layout.cpu_cluster.len()).map(|_| None).collect();
        Ok(Replayer {
            costs: layout.clusters.iter().map(ClusterCosts::new).collect(),
            energy: layout.clusters.iter().all(|c| c.state_mw.is_some()),
            layout,
            names,
            slots,
            counts: InputCounts::default(),
        })
    }

    /// Replays one period (`line` is its entry's line, for errors about the traced state).
    pub fn replay(&mut self, p: Period, file: &str, line: usize) -> Result<(), InputError> {
        let c = &mut self.counts;
        match p.sleep_from {
            SleepFrom::PendingTimer => c.sleep_pending_timer += 1,
            SleepFrom::TimerWakeup => c.sleep_timer_wakeup += 1,
            SleepFrom::Assumed => c.sleep_assumed += 1,
        }
        c.tick_observed += u64::from(p.tick_observed);
        c.util_observed += u64::from(p.util_observed);
        c.new_trips += u64::from(p.new_trip);
        match p.cause {
            Cause::Timer => c.cause_timer += 1,
            Cause::Tick => c.cause_tick += 1,
            Cause::Ipi => c.cause_ipi += 1,
            Cause::Irq => c.cause_irq += 1,
            Cause::RemoteWakeup => c.cause_remote_wakeup += 1,
            Cause::RemoteWaking => c.cause_remote_waking += 1,
            Cause::Unknown => c.cause_unknown += 1,
        }
        let k = cluster_of(&self.layout.cpu_cluster, p.cpu, file, line)?;
        let layout = &self.layout;
        let table = &layout.clusters[k];
        let count = table.view.state_count();
        if p.actual_state >= count {
            return Err(InputError::at(
                file,
                line,
                format!(
                    "cpu_idle state={} on CPU {}, but the platform's cluster {} has {} states \
                     (0 to {}); expected the platform of the traced machine",
                    p.actual_state,
                    p.cpu,
                    shown(&table.name),
                    count,
                    count - 1
                ),
            ));
        }
        let costs = &self.costs[k];
        let energy = self.energy;
        let slot =
            self.slots[p.cpu as usize].get_or_insert_with(|| new_slot(table, k, &self.names));
        slot.seen = true;
        let view = &table.view;
        let d = p.duration_ns;
        // The traced kernel's own choice, classified as the replayed ones are.
        let actual = &costs.states[p.actual_state];
        slot.actual
            .book(p.actual_state, actual, d, d + actual.exit_ns, energy);
        let to_timer = p.to_timer_ns;
        let can_stop = to_timer > costs.tick_ns;
        for g in &mut slot.govs {
            g.tick_stopped &= !p.new_trip;
            let delta_next = if g.tick_stopped {
                to_timer
            } else {
                to_timer.min(p.to_tick_ns)
            };
            let k = &mut g.kernel;
            k.sleep_length_ns = clamp_i64(if can_stop { to_timer } else { delta_next });
            k.delta_tick_ns = clamp_i64(delta_next);
            k.tick_stopped = g.tick_stopped;
            k.util = p.util.min(costs.capacity);
            k.clock_ns = p.entry_ns;
            k.oracle_residency_ns = clamp_i64(d);
            let mut stop_tick = true;
            let idx = g.governor.select(view, &mut g.dev, k, &mut stop_tick);
            // Whether the tick stops follows the governor, which the workload drives: flags
            // combined and added, not branched on.
            let stops = (stop_tick | g.tick_stopped) & can_stop;
            g.tick_stopped |= stops;
            g.acc.tick_kept += u64::from(!stops);
            g.acc.tick_before_wakeup += u64::from(!stops & (d > delta_next));
            let s = &costs.states[idx];
            let residency = d + s.measured_exit_ns;
            g.acc.book(idx, s, d, residency, energy);
            g.dev.last_residency_ns = residency;
            // The polling state clears its time-limit flag (it never hits its limit here).
            g.dev.poll_time_limit &= !s.polling;
            g.kernel.got_idle_tick = p.cause == Cause::Tick;
            g.kernel.clock_ns = p.entry_ns + residency;
            g.governor.reflect(view, &mut g.dev, &mut g.kernel, idx);
        }
        Ok(())
    }

    /// The columns: the traced kernel's, then each governor's, in the order asked, each with
    /// the same `active` energy.
    pub(super) fn columns(
        &self,
        kernel_misses: &[(u64, u64)],
        active: &ActiveTime,
    ) -> (Column, Vec<(String, Column)>) {
        let energy = self.energy;
        let mut total_names: Vec<Vec<String>> = vec![Vec::new(); MAX_STATES];
        for c in &self.layout.clusters {
            for (i, s) in c.view.states.iter().enumerate() {
                if !total_names[i].contains(&s.name) {
                    total_names[i].push(s.name.clone());
                }
            }
        }
        let total_names: Vec<String> = total_names
            .into_iter()
            .take_while(|n| !n.is_empty())
            .map(|n| n.join("/"))
            .collect();
        let column = |pick: &dyn Fn(&CpuSlot) -> Acc, governor: bool| {
            let mut total = Acc::default();
            let mut per_cpu = Vec::new();
            let mut reported = KernelMisses::default();
            for (cpu, slot) in self.slots.iter().enumerate() {
                let Some(slot) = slot.as_ref().filter(|s| s.seen) else {
                    continue;
                };
                let acc = pick(slot);
                total.add(&acc);
                let table = &self.layout.clusters[slot.cluster];
                let names: Vec<String> = table.view.states.iter().map(|s| s.name.clone()).collect();
                let mut summary = acc.summary(&names, energy, governor);
                let cpu_active = active.per_cpu.iter().find(|a| a.cpu as usize == cpu);
                summary.add_active(cpu_active.map_or(Some(0.0), |a| a.energy_mj));
                if !governor {
                    let (above, below) = kernel_misses.get(cpu).copied().unwrap_or((0, 0));
                    let m = KernelMisses {
                        too_deep: above,
                        too_shallow: below,
                    };
                    reported.too_deep += above;
                    reported.too_shallow += below;
                    summary.kernel_reported = Some(m);
                }
                per_cpu.push(CpuSummary {
                    cpu: cpu as u32,
                    cluster: table.name.clone(),
                    summary,
                });
            }
            let mut total = total.summary(&total_names, energy, governor);
            total.add_active(active.energy_mj);
            if !governor {
                total.kernel_reported = Some(reported);
            }
            Column { total, per_cpu }
        };
        let actual = column(&|s: &CpuSlot| s.actual, false);
        let govs = self
            .names
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), column(&|s: &CpuSlot| s.govs[i].acc, true)))
            .collect();
        (actual, govs)
    }
}

/// The cluster of `cpu`; a CPU the platform does not have is refused (`line`: the event naming
/// it).
pub(super) fn cluster_of(
    cpu_cluster: &[Option<usize>],
    cpu: u32,
    file: &str,
    line: usize,
) -> Result<usize, InputError> {
    cpu_cluster
        .get(cpu as usize)
        .copied()
        .flatten()
        .ok_or_else(|| {
            InputError::at(
                file,
                line,
                format!(
                "CPU {cpu} is in no cluster of the platform; expected the platform of the traced \
                 machine"
            ),
            )
        })
}

/// A CPU's governors, each built (its `enable`) on its own device.
fn new_slot(table: &ClusterTable, cluster: usize, names: &[(String, GovernorName)]) -> CpuSlot {
    let govs = names
        .iter()
        .map(|(_, g)| {
            let mut dev = Device::new(table.view.state_count());
            dev.disabled.clone_from(&table.disabled);
            let governor = g.build(&table.view, &mut dev);
            GovCpu {
                governor,
                dev,
                kernel: Kernel::default(),
                tick_stopped: false,
                acc: Acc::default(),
            }
        })
        .collect();
    CpuSlot {
        cluster,
        govs,
        actual: Acc::default(),
        seen: false,
    }
}

fn clamp_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
