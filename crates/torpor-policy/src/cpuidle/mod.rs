//! CPU idle: the cpuidle core's view of a CPU and the governors that choose its idle states.
//!
//! The kernel splits idle management between the cpuidle core (which keeps the per-CPU device,
//! enters states and measures residency) and a governor (which picks a state at `select` and
//! learns at `reflect` and at its next `select`). torpor keeps the same split so one governor
//! implementation serves three drivers: `idle decide` sequences (recorded inputs, one decision
//! per step, see [`decide`] and torpor-core's `drivers::idle_decide`), the closed-loop simulation, and counterfactual trace replay.
//!
//! - [`Platform`]: the driver's state table as a governor reads it, the tick period and the CPU's
//!   capacity.
//! - [`Device`]: the fields of `struct cpuidle_device` a governor reads and writes.
//! - [`Kernel`]: what the kernel helpers a governor calls return at this moment
//!   (`tick_nohz_get_sleep_length`, `cpuidle_governor_latency_req`, `sched_cpu_util`, ...).
//! - [`Governor`]: `select` and `reflect`; construction is the governor's `enable`.

pub mod decide;
pub mod governors;

pub use governors::{by_name, GovernorName, NAMES};

/// `SCHED_CAPACITY_SCALE`: the biggest CPU's capacity, the most a [`Platform`] may have.
pub const MAX_CAPACITY: u64 = 1024;

/// `KTIME_MAX`: the kernel's "no time" value for an s64 nanosecond quantity.
pub const KTIME_MAX: i64 = i64::MAX;

/// `PM_QOS_RESUME_LATENCY_NO_CONSTRAINT` (S32_MAX us) in ns: what `cpuidle_governor_latency_req`
/// returns when no one asked for a limit (2e12 ns as idle-decide.md writes it; the kernel's
/// value is S32_MAX us converted with `* NSEC_PER_USEC`).
pub const NO_LATENCY_CONSTRAINT_NS: i64 = 2_000_000_000_000;

/// One idle state as registered by the cpuidle driver (`struct cpuidle_state`), shallow to deep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    pub name: String,
    /// Worst-case time from the wake-up event to the first instruction run (s64 in the kernel).
    pub exit_latency_ns: i64,
    /// Break-even time including entry: shorter stays save no energy over a shallower state.
    pub target_residency_ns: i64,
    /// `CPUIDLE_FLAG_POLLING`: a busy-poll state that does not really idle the core.
    pub polling: bool,
}

/// The part of a CPU's idle driver and scheduler setup every governor reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    /// Ordered shallow -> deep, 1 to `CPUIDLE_STATE_MAX` (10) states.
    pub states: Vec<IdleState>,
    /// `TICK_NSEC`: the scheduler tick period (HZ=250 -> 4 ms).
    pub tick_ns: i64,
    /// `arch_scale_cpu_capacity()` of this CPU (0..=1024).
    pub capacity: u64,
}

/// `CPUIDLE_STATE_MAX`.
pub const MAX_STATES: usize = 10;

/// The largest exit latency or target residency, in us, a cpuidle driver can register: `struct
/// cpuidle_state` keeps both as `unsigned int` microseconds (`exit_latency`,
/// `target_residency`), which is what drivers and the DT's u32 `exit-latency-us` and
/// `min-residency-us` fill in, and `__cpuidle_driver_init` derives the s64 nanosecond copies
/// from them (only the polling state sets nanoseconds itself, to 0). About 71.6 minutes: a
/// larger figure (2^64 ns, say) is no state a kernel can hold, so platform files refuse it.
pub const MAX_STATE_US: u64 = u32::MAX as u64;

/// `deserialize_with` for an idle state's `exit_latency_us` or `target_residency_us`: an
/// integer within [`MAX_STATE_US`], refused at its own line otherwise.
pub fn state_us<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let us = <u64 as serde::Deserialize>::deserialize(d)?;
    if us > MAX_STATE_US {
        return Err(serde::de::Error::custom(format!(
            "expected an integer number of microseconds the kernel's `unsigned int` holds \
             (0..={MAX_STATE_US}), got {us}"
        )));
    }
    Ok(us)
}

/// [`state_us`] for an optional field (with `#[serde(default)]`).
pub fn state_us_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    state_us(d).map(Some)
}

impl Platform {
    pub fn state_count(&self) -> usize {
        self.states.len()
    }
}

/// The fields of `struct cpuidle_device` that governors use.
///
/// The kernel starts a device zeroed: `last_state_idx` 0 (not -1) and `last_residency_ns` 0
/// before the governor's `enable`, which matters to teo's first `select`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// The state the last idle period entered, or -1 ("nothing to learn": teo, ladder).
    pub last_state_idx: i32,
    /// Measured time of the last idle period around the driver's `enter`: the kernel's u64
    /// field (a negative clock difference wraps, as there); 0 after a rejected entry.
    pub last_residency_ns: u64,
    /// `poll_idle()` stopped on its time limit (written only by the polling state).
    pub poll_time_limit: bool,
    /// The polling state's time limit cache; the haltpoll governor writes it.
    pub poll_limit_ns: u64,
    /// `states_usage[i].disable != 0`, per state.
    pub disabled: Vec<bool>,
}

impl Device {
    pub fn new(state_count: usize) -> Self {
        Device {
            last_state_idx: 0,
            last_residency_ns: 0,
            poll_time_limit: false,
            poll_limit_ns: 0,
            disabled: vec![false; state_count],
        }
    }

    /// True when state `i` is disabled for this CPU (by the user, the driver or the scenario).
    pub fn is_disabled(&self, i: usize) -> bool {
        self.disabled.get(i).copied().unwrap_or(false)
    }
}

/// What the kernel helpers a governor calls return at this moment.
///
/// A governor must read these only through the methods named after the kernel helper, so that
/// the record of which helpers it called (teo and menu skip the sleep length on some paths) is
/// the kernel's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// `tick_nohz_get_sleep_length()`'s return: time to the next timer with the tick stopped.
    pub sleep_length_ns: i64,
    /// Its `*delta_next`: time to the next tick or earlier hrtimer.
    pub delta_tick_ns: i64,
    /// `cpuidle_governor_latency_req()`.
    pub latency_req_ns: i64,
    /// `tick_nohz_tick_stopped()` during `select`.
    pub tick_stopped: bool,
    /// `sched_cpu_util()` of this CPU (0..=capacity).
    pub util: u64,
    /// `nr_iowait_cpu()`.
    pub nr_iowait: u32,
    /// `local_clock()`: advanced by the driver between `select` and `reflect`.
    pub clock_ns: u64,
    /// The residency the coming idle period will have; only the oracle may read it.
    pub oracle_residency_ns: i64,
    /// The flag `tick_nohz_idle_got_tick()` tests and clears.
    pub got_idle_tick: bool,
    /// How many times the governor asked for the sleep length (statistics).
    pub sleep_length_calls: u64,
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel {
            sleep_length_ns: KTIME_MAX,
            delta_tick_ns: KTIME_MAX,
            latency_req_ns: NO_LATENCY_CONSTRAINT_NS,
            tick_stopped: false,
            util: 0,
            nr_iowait: 0,
            clock_ns: 0,
            oracle_residency_ns: 0,
            got_idle_tick: false,
            sleep_length_calls: 0,
        }
    }
}

impl Kernel {
    /// `tick_nohz_get_sleep_length(&delta_next)`: (sleep length, delta_next).
    pub fn get_sleep_length(&mut self) -> (i64, i64) {
        self.sleep_length_calls += 1;
        (self.sleep_length_ns, self.delta_tick_ns)
    }

    /// `cpuidle_governor_latency_req(cpu)`.
    pub fn latency_req(&self) -> i64 {
        self.latency_req_ns
    }

    /// `tick_nohz_tick_stopped()`.
    pub fn tick_stopped(&self) -> bool {
        self.tick_stopped
    }

    /// `sched_cpu_util(cpu)`.
    pub fn cpu_util(&self) -> u64 {
        self.util
    }

    /// `nr_iowait_cpu(cpu)`.
    pub fn nr_iowait(&self) -> u32 {
        self.nr_iowait
    }

    /// `local_clock()`.
    pub fn local_clock(&self) -> u64 {
        self.clock_ns
    }

    /// `tick_nohz_idle_got_tick()`: true once if the tick ran while this CPU was idle.
    pub fn idle_got_tick(&mut self) -> bool {
        std::mem::take(&mut self.got_idle_tick)
    }
}

/// How the cpuidle core classified one idle period (spec-cpu.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Neither counter moved.
    None,
    /// `above`: the residency fell short of the entered state's target residency, and a
    /// shallower enabled state exists: the state was too deep.
    TooDeep,
    /// `below`: the residency less the entered state's exit latency reached the target
    /// residency of the next enabled deeper state: the state was too shallow.
    TooShallow,
}

/// `cpuidle_enter_state()`'s above/below accounting for a period that entered `state` and
/// measured `residency_ns` (the raw `diff`, exit delay included): the above test uses the raw
/// value, the below test subtracts the entered state's full exit latency, and only the first
/// enabled state on each side is looked at.
pub fn classify(platform: &Platform, dev: &Device, state: usize, residency_ns: u64) -> Miss {
    let states = &platform.states;
    let diff = residency_ns as i64;
    if diff < states[state].target_residency_ns {
        if (0..state).any(|i| !dev.is_disabled(i)) {
            return Miss::TooDeep;
        }
    } else if diff > states[state].exit_latency_ns {
        let deeper = (state + 1..states.len()).find(|&i| !dev.is_disabled(i));
        if let Some(j) = deeper {
            if diff - states[state].exit_latency_ns >= states[j].target_residency_ns {
                return Miss::TooShallow;
            }
        }
    }
    Miss::None
}

/// A cpuidle governor: `select` picks a state (and whether to stop the tick), `reflect` is told
/// which state was entered. The constructor plays the governor's `enable` callback.
pub trait Governor: Send {
    /// The variant's name as torpor spells it (`teo@6.6`, `menu`, ...).
    fn name(&self) -> &'static str;

    /// The governor's `select`: returns a state index; clears `*stop_tick` to keep the tick.
    /// `*stop_tick` is true on entry, as the idle loop sets it.
    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize;

    /// The governor's `reflect` after the driver entered `index` (never called for a rejected
    /// entry). `dev.last_residency_ns` already holds the measured residency.
    fn reflect(&mut self, platform: &Platform, dev: &mut Device, kernel: &mut Kernel, index: usize);
}
