//! What a column of the replay reports: per CPU and in total, the periods, the states
//! chosen, the above/below misses, the latency the choices add and the energy.

use serde::Serialize;

/// One state's share of a column.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StateShare {
    pub index: usize,
    pub name: String,
    pub entries: u64,
    pub time_ns: u64,
    pub entries_pct: f64,
}

/// One column (a governor, or the traced kernel) for one CPU or in total.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub periods: u64,
    pub too_deep: u64,
    pub too_shallow: u64,
    pub too_deep_pct: f64,
    pub too_shallow_pct: f64,
    pub states: Vec<StateShare>,
    /// The chosen states' exit latencies: the wake-up latency the choice adds.
    pub added_latency_ns: u64,
    pub added_latency_mean_ns: f64,
    /// Idle energy over the periods (state power x (duration + exit latency) + entry-and-exit
    /// energy); `None` where the platform has no power for some idle state.
    pub idle_energy_mj: Option<f64>,
    /// Active energy over the traced running time (the same in every column); `None` where the
    /// platform has no power for the OPP it needs.
    pub active_energy_mj: Option<f64>,
    /// `idle_energy_mj + active_energy_mj`, when both are known.
    pub energy_mj: Option<f64>,
    /// Periods in which the governor kept the tick running (not for the traced kernel).
    pub tick_kept: Option<u64>,
    /// Of those, periods longer than the time to the next tick: the counterfactual CPU would
    /// have had a tick wake-up first, which the fixed-duration replay does not play.
    pub tick_before_wakeup: Option<u64>,
    /// `cpu_idle_miss` events of the traced kernel: (above = too deep, below = too shallow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_reported: Option<KernelMisses>,
}

impl Summary {
    /// Sets the active part of the energy and the total.
    pub(super) fn add_active(&mut self, active_mj: Option<f64>) {
        self.active_energy_mj = active_mj;
        self.energy_mj = self.idle_energy_mj.zip(active_mj).map(|(i, a)| i + a);
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct KernelMisses {
    pub too_deep: u64,
    pub too_shallow: u64,
}

/// A CPU's summary.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct CpuSummary {
    pub cpu: u32,
    pub cluster: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// A column: the total, then per CPU.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Column {
    #[serde(flatten)]
    pub total: Summary,
    pub per_cpu: Vec<CpuSummary>,
}
