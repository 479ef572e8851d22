//! CPUs running tasks, idling through the cpuidle core and a governor, on the engine.
//!
//! Models the kernel's idle path per CPU (spec-cpu.md §1.2-1.8 and §9.2), one event at a time:
//!
//! 1. A CPU with nothing to run starts an idle trip. Each iteration asks the governor for a
//!    state with what the kernel helpers would return: the sleep length (time to the CPU's next
//!    timer; `delta_next` when the tick cannot be stopped because that timer is within a tick),
//!    the time to the next tick, the latency limit, the tick state and the CPU's utilization
//!    (PELT, as at the last dequeue).
//! 2. The tick is stopped when the governor says so (or it already is, in this trip) and the
//!    next timer is more than a tick away; otherwise it keeps firing every `tick_ns`.
//! 3. The CPU leaves the state at the first of: a task's wake-up (its timer, an interrupt or an
//!    IPI), the tick if it runs, or the polling state's time limit. The measured residency is
//!    the time in the state plus the state's full exit latency (the kernel measures around the
//!    driver's `enter`, which includes the wake-up) — an ASSUMPTION: real exits are often
//!    shorter than the declared worst case. A polling state exits at once.
//! 4. The core classifies the period (§5: above = too deep, below = too shallow), accounts time
//!    and energy, and calls the governor's `reflect`.
//! 5. A woken task runs once the CPU is out of the state (its wake-up latency is that exit
//!    latency, plus any wait behind other tasks); the trip ends and the tick restarts. A wake-up
//!    with nothing to run (the tick, the poll limit) starts the next iteration of the same trip.
//!
//! PM QoS: the run's requests (`CpuRunSpec::qos`, timed actions on the global CPU latency list
//! and the CPUs' resume-latency lists, `qos::cpu_latency`) are applied as engine events, those
//! at time 0 before the first idle entry. Each idle entry reads the CPU's combined limit
//! (`cpuidle_governor_latency_req`). When the global limit changes, every CPU in an idle state
//! is kicked, as `wake_up_all_idle_cpus` does (an IPI, or a polling CPU's loop ends): it leaves
//! its state (paying the exit latency), its idle trip ends (the tick restarts, as `do_idle`
//! returns through `schedule_idle`), and it selects again under the new limit; each such
//! wake-up is counted in `CpuStats::qos_kicks`. A CPU's resume latency changes nothing until
//! its next idle entry, as in the kernel (no notifier wakes a CPU).
//!
//! Tracing: a run may be given a [`CpuTrace`] that is told, as they happen, the moments a
//! kernel would trace (timers armed and fired, wake-ups, switches, idle entries and exits); the
//! ftrace writer (`crate::view::ftrace_writer`) turns them into a kernel-like trace. Without
//! one, each hook is a test of `None`.
//!
//! Frequency: each cluster with OPPs is a cpufreq policy whose governor sets its frequency
//! (`performance` holds the highest, `powersave` the lowest; schedutil and ondemand follow the
//! scheduler's utilization updates: `freq.rs`). A task's burst is work stated as time at the
//! cluster's highest OPP, so at `f` it lasts `run x f_max / f` (ASSUMPTION: work scales with
//! the clock, as the kernel's frequency invariance assumes; memory-bound work scales less).
//! Interrupt handlers and the scheduler's switch keep their stated times. PELT sees the running
//! time scaled by `f / f_max` (and the CPU's capacity), as `update_rq_clock_pelt` scales it.
//!
//! Power: a running CPU draws its cluster's active power at that OPP; an idle one its state's
//! power, through the exit too (the kernel counts the exit in the residency). A cluster-level state saves its power only while every CPU of the cluster is in
//! a cluster-level state; until then a CPU in one is charged its deepest CPU-level state.
//! Entering and leaving a state costs energy no preset states: torpor derives it from the
//! definition of target residency, the stay at which a state starts to save energy over the
//! next shallower one (spec §1.1): `E(s) = E(s-1) + (P(s-1) - P(s)) x target_residency(s)`,
//! `E(0) = 0`, charged at each entry.

use crate::cpuidle::{self, Device, Governor, GovernorName, Kernel, Platform};
use crate::qos::cpu_latency::{CpuLatencyQos, QosAction, QosOp, QosTarget};
use crate::sim::{stream_id, Ctx, Pcg32, Shot, Timer};
use crate::storage::io::{IoRequest, IoTicket};
use crate::time::Nanos;

use super::platform::{CpuPlatform, StateLevel};
use super::task::{Source, TaskSpec, Uclamp, Wake};
use super::wake_path::{CostNs, WakePath};
use crate::pelt::Pelt;

/// Indices into `CpuSystem::costs`.
const TIMER_IRQ: usize = 0;
const IO_IRQ: usize = 1;
const IPI: usize = 2;
const SCHED: usize = 3;

mod freq;
mod io;
mod timeline;
mod wake;

pub use freq::OppStats;
pub use io::{IoPathStats, IrqMap, IrqMapError};
pub use timeline::{CpuTimeline, RequestPath};
pub use wake::WakeStamp;

/// The sleep length with no timer at all: the clocksource's maximum deferment bounds it in the
/// kernel (`timekeeping_max_deferment()`); an ASSUMPTION of a few seconds, machine-dependent.
pub const MAX_DEFERMENT_NS: u64 = 4_000_000_000;

/// `CPUIDLE_POLL_MIN`: states with a shorter target residency do not bound polling.
const POLL_MIN_NS: i64 = 10_000;

/// One run's set-up.
#[derive(Clone, Debug)]
pub struct CpuRunSpec {
    pub platform: CpuPlatform,
    /// The governor on every CPU (`teo@6.6`, `menu`, ...).
    pub governor: GovernorName,
    /// Kernel HZ: the tick period is 1e9 / hz ns.
    pub hz: u32,
    pub tasks: Vec<TaskSpec>,
    /// PM QoS requests over time (any order; equal times apply in the order given).
    pub qos: Vec<QosAction>,
    pub seed: u64,
    /// Per device of the run, by its slot: which CPU takes its interrupts (empty without a
    /// device).
    pub irq: Vec<IrqMap>,
    /// The cpufreq governor of every cluster with OPPs.
    pub cpufreq: crate::cpufreq::GovernorName,
    /// schedutil's `rate_limit_us` (`None`: the policy's transition delay, the kernel's default).
    pub rate_limit_us: Option<u32>,
}

/// Per idle state of one CPU.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StateStats {
    pub name: String,
    pub entries: u64,
    pub time_ns: u64,
    /// Too deep: the residency fell short of the state's target residency.
    pub above: u64,
    /// Too shallow: a deeper enabled state would have fitted.
    pub below: u64,
    /// The energy of the time in the state (its exits included, as `time_ns` counts them)
    /// and of entering it; the CPU's `energy_mj` holds it with the running time's.
    pub energy_mj: f64,
}

/// One CPU's results.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuStats {
    pub cpu: u32,
    pub states: Vec<StateStats>,
    pub busy_ns: u64,
    /// The energy of the running time (`busy_ns`), at the active power; with the states'
    /// `energy_mj`, the CPU's `energy_mj`.
    pub busy_energy_mj: f64,
    pub energy_mj: f64,
    /// Idle iterations that kept the tick running.
    pub tick_kept: u64,
    pub iterations: u64,
    /// Wake-ups from a state by a change of the global latency limit.
    pub qos_kicks: u64,
    /// Busy time and energy per OPP, lowest first (empty without OPPs).
    pub opps: Vec<OppStats>,
    /// Frequency switches of the CPU's cluster (each a `cpu_frequency` event for this CPU).
    pub freq_changes: u64,
}

/// One task's wake-up latencies: from the moment its wake-up's cause happened (its timer
/// expiring, its IO completing on the device, the waking task's call) to the moment it ran.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TaskStats {
    pub name: String,
    pub cpu: u32,
    pub wakeups: u64,
    pub latency_min_ns: u64,
    pub latency_max_ns: u64,
    pub latency_sum_ns: u64,
    pub latency_last_ns: u64,
    /// The mean wake-up latency, us: derived once, when the run's report is made
    /// ([`crate::report::CpuSection::new`]), so that no view recomputes it.
    pub latency_avg_us: f64,
    /// Every wake-up latency: its percentiles and cyclictest's histogram (1 us bins).
    #[serde(serialize_with = "io::latency_and_histogram")]
    pub latency: crate::metrics::LatencyHistogram,
    /// A task doing IO: each request's latency as it saw it, decomposed.
    pub io: Option<IoPathStats>,
    /// The work of the bursts it started, as time at the highest OPP (what a benchmark's
    /// score counts: work done, whatever the clock).
    pub work_ns: u64,
    /// Work per second of the run, ms (derived with the mean latency).
    pub work_ms_per_s: f64,
    /// A periodic task (a frame): grid points its wake-up passed because its burst ran past
    /// them (each a frame that missed its deadline).
    pub periods_missed: u64,
    /// Bursts finished, and their response times: from the cause of the wake-up that began
    /// the burst's chain (its own timer, interrupt or IO; for a task woken by another's
    /// `wakes`, the waker's chain origin) to the burst's end. On a frame's last thread it is
    /// the frame time, vsync to done, as Jankbench measures it.
    pub responses: u64,
    pub response_sum_ns: u64,
    pub response_max_ns: u64,
    /// The mean response time, us (derived with the mean latency).
    pub response_avg_us: f64,
}

impl TaskStats {
    pub fn latency_avg_ns(&self) -> f64 {
        if self.wakeups == 0 {
            0.0
        } else {
            self.latency_sum_ns as f64 / self.wakeups as f64
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuReport {
    pub duration_ns: u64,
    pub cpus: Vec<CpuStats>,
    pub tasks: Vec<TaskStats>,
    /// The IO of every task together.
    pub io: Option<IoPathStats>,
    /// With two devices, the tasks' IO per device (by slot); empty otherwise.
    pub io_by_device: Vec<IoPathStats>,
    /// Changes the device's host driver made to its CPU latency request.
    pub host_latency_votes: u64,
    /// `[run] timeline`: each CPU's lanes in the window.
    pub timelines: Vec<CpuTimeline>,
    /// `[run] timeline`: the slowest task IO submitted in the window, step by step.
    pub slowest_io: Option<RequestPath>,
}

impl CpuReport {
    pub fn energy_mj(&self) -> f64 {
        self.cpus.iter().map(|c| c.energy_mj).sum()
    }

    /// Average power of the whole platform.
    pub fn avg_power_mw(&self) -> f64 {
        if self.duration_ns == 0 {
            0.0
        } else {
            self.energy_mj() / (self.duration_ns as f64 / 1e9)
        }
    }

    fn misses(&self) -> (u64, u64, u64) {
        let mut entries = 0;
        let mut above = 0;
        let mut below = 0;
        for s in self.cpus.iter().flat_map(|c| &c.states) {
            entries += s.entries;
            above += s.above;
            below += s.below;
        }
        (entries, above, below)
    }

    /// The geometric mean over tasks of each task's mean wake-up latency, in us (a task that
    /// never woke is left out; a mean below 1 ns counts as 1 ns, so that a polling CPU's zero
    /// latency does not zero the product).
    pub fn wakeup_latency_gmean_us(&self) -> f64 {
        let logs: Vec<f64> = self
            .tasks
            .iter()
            .filter(|t| t.wakeups > 0)
            .map(|t| (t.latency_avg_ns().max(1.0) / 1000.0).ln())
            .collect();
        if logs.is_empty() {
            0.0
        } else {
            (logs.iter().sum::<f64>() / logs.len() as f64).exp()
        }
    }

    /// Percent of idle periods whose state was too deep.
    pub fn too_deep_pct(&self) -> f64 {
        let (n, above, _) = self.misses();
        if n == 0 {
            0.0
        } else {
            100.0 * above as f64 / n as f64
        }
    }

    /// Percent of idle periods whose state was too shallow.
    pub fn too_shallow_pct(&self) -> f64 {
        let (n, _, below) = self.misses();
        if n == 0 {
            0.0
        } else {
            100.0 * below as f64 / n as f64
        }
    }
}

/// What a traced run reports, at the simulated time it happens. CPUs are named by id, tasks
/// by their index in [`CpuRunSpec::tasks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traced {
    /// A task going to sleep armed its timer on its CPU (`absolute`: a periodic task's
    /// `clock_nanosleep(TIMER_ABSTIME)`, else a relative sleep).
    TimerArmed {
        task: usize,
        cpu: u32,
        expires: Nanos,
        absolute: bool,
    },
    /// A task's wake-up source fired on its CPU: its timer or its device's interrupt.
    WakeSource {
        task: usize,
        cpu: u32,
        source: Source,
    },
    /// The periodic tick fired on `cpu`.
    Tick { cpu: u32 },
    /// `task` became runnable on `cpu`: woken by the task running on CPU `by`, or by its own
    /// wake-up source (`None`).
    Woken {
        task: usize,
        cpu: u32,
        by: Option<u32>,
    },
    /// `cpu` enters idle `state`; `stops_tick`: the tick was stopped for this entry (it ran
    /// until now).
    IdleEnter {
        cpu: u32,
        state: usize,
        stops_tick: bool,
    },
    /// `cpu`'s wake-up from `state` begins; it is out at `ready`. `miss`: the cpuidle core
    /// counted the period as too deep (`Some(false)`, "above") or too shallow (`Some(true)`,
    /// "below").
    IdleExit {
        cpu: u32,
        state: usize,
        ready: Nanos,
        miss: Option<bool>,
    },
    /// `cpu` is out of its idle state (its exit latency has elapsed).
    Ready { cpu: u32 },
    /// `cpu` switches from `prev` to `next` (`None`: the idle task).
    Switch {
        cpu: u32,
        prev: Option<usize>,
        next: Option<usize>,
    },
    /// `cpu` runs at `khz` from now (its cluster's frequency switch completed).
    Frequency { cpu: u32, khz: u64 },
}

/// Told what a run does as it happens (see [`Traced`]).
pub trait CpuTrace {
    fn on(&mut self, at: Nanos, event: Traced);
}

/// What the CPU system hands the rest of the world while it handles an event (drained by the
/// world after each one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Signal {
    /// A task submits a request to the device.
    Submit(IoTicket, IoRequest),
    /// `cpu` entered (`idle`) or left an idle state (sent only when asked for:
    /// [`CpuSystem::with_idle_signals`]).
    Idle { cpu: u32, idle: bool },
}

/// The CPU system's events.
#[derive(Clone, Copy, Debug)]
pub enum CpuEvent {
    /// A task's timer or interrupt.
    TaskWake(usize, Shot),
    Tick(usize, Shot),
    /// The polling state's time limit.
    PollLimit(usize, Shot),
    /// The CPU is out of its idle state (exit latency elapsed).
    Ready(usize, Shot),
    /// The running task's burst is over.
    BurstEnd(usize, Shot),
    /// The next PM QoS requests are due.
    Qos(Shot),
    /// An IPI reaches task `.0`'s CPU: the task is to be woken there.
    Ipi(usize),
    /// A traced run only: CPU `.0` is out of its idle state (the kernel's `cpu_idle` exit
    /// event, before the interrupt handlers run).
    ExitDone(usize),
    /// Cluster `.0`'s frequency switch reaches the hardware.
    FreqSwitch(usize, Shot),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Running {
        task: usize,
    },
    Idle {
        state: usize,
        entered: Nanos,
    },
    /// Leaving idle state `from` until `Cpu::out_at` (still idle power), then running kernel
    /// work (interrupt handlers) until `Cpu::kernel_until`; or about to pick the next step
    /// (`None`: no time passes there).
    Exiting {
        from: Option<usize>,
    },
    /// Switching to `task` (the scheduler's wake-up and context switch); it runs when the
    /// CPU's burst timer fires.
    Switching {
        task: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    Task,
    Tick,
    PollLimit,
    /// `wake_up_all_idle_cpus` after a change of the global latency limit.
    QosKick,
}

struct Task {
    spec: TaskSpec,
    rng: Pcg32,
    timer: Timer,
    /// When the pending wake-up fires and what it is (for the CPU's sleep length).
    pending: Option<(Nanos, Source)>,
    /// The next periodic wake-up, on the task's grid.
    next_periodic: Nanos,
    woken_at: Nanos,
    /// The origin of the chain of wake-ups the coming or current burst belongs to (its
    /// response time runs from there), and the one a waking task hands over with `wakes`.
    chain_origin: Nanos,
    handed_origin: Option<Nanos>,
    runnable: bool,
    stats: TaskStats,
    /// How the pending wake-up travelled (for the IO decomposition).
    stamp: WakeStamp,
    /// With a governor that reads utilization: the task's own PELT signal and its
    /// `util_est` (`freq.rs`, step 5).
    pelt: Pelt,
    util_est: u32,
    /// Its clamps count in its CPU's run queue (`uclamp_se.active`).
    uclamp_active: bool,
    /// The burst now running follows the task's IO (so its end arms the wake-up source, not
    /// another IO).
    after_io: bool,
    /// The next sequential offset of its IO, and its stream of random offsets.
    io_cursor: u64,
    /// The IPI the task's next burst end sends to the task it wakes on another CPU, drawn at
    /// the burst's start (so the oracle there knows when it arrives).
    ipi_ns: u64,
    /// An IPI in flight to this task's CPU, to wake it: when it arrives.
    ipi_at: Option<Nanos>,
    /// When its pending timer or interrupt was meant to wake it (before the timer's slack).
    intended: Nanos,
    /// A fio job's thread: the completions waiting for it to run.
    deliveries: std::collections::VecDeque<IoTicket>,
    /// Its next burst's length, drawn one burst ahead from a stream of its own (so that a
    /// chain of wake-ups is determined as far as it can be: the oracle reads it).
    next_run: Nanos,
    run_rng: Pcg32,
}

impl Cpu {
    /// How long `work` (time at the highest OPP) takes at the CPU's frequency (rounded up).
    fn at_speed(&self, work: Nanos) -> Nanos {
        if self.khz == self.max_khz {
            return work;
        }
        Nanos(freq::rescale(work.0, self.max_khz, self.khz))
    }

    /// The CPU's busy time until `now` (what it has settled, and the part since).
    fn busy_until(&self, now: Nanos) -> u64 {
        let since = self.settled_at.0;
        self.stats.busy_ns
            + match self.mode {
                Mode::Running { .. } | Mode::Switching { .. } | Mode::Exiting { from: None } => {
                    now.0 - since
                }
                Mode::Exiting { from: Some(_) } => now.0.saturating_sub(self.out_at.0.max(since)),
                Mode::Idle { .. } => 0,
            }
    }

    /// Charges `dt` ns of busy time at the CPU's OPP.
    fn charge_busy(&mut self, dt: u64) {
        self.stats.busy_ns += dt;
        let mj = self.active_mw * dt as f64 * 1e-9;
        self.stats.energy_mj += mj;
        self.stats.busy_energy_mj += mj;
        if let Some(o) = self.stats.opps.get_mut(self.opp) {
            o.time_ns += dt;
            o.energy_mj += mj;
        }
    }
}

struct Cpu {
    id: u32,
    cluster: usize,
    view: Platform,
    governor: Box<dyn Governor>,
    dev: Device,
    kernel: Kernel,
    latency_req_ns: i64,
    /// Kicked out of idle: the trip ends when the exit does, with nothing to run.
    kicked: bool,
    mode: Mode,
    queue: std::collections::VecDeque<usize>,
    /// The tasks pinned here (indices), in the order of the scenario.
    own_tasks: Vec<usize>,
    tick: Timer,
    tick_grid: TickGrid,
    tick_stopped: bool,
    poll: Timer,
    ready: Timer,
    burst: Timer,
    pelt: Pelt,
    /// PELT sees the CPU running (from picking a task until it has none).
    pelt_running: bool,
    /// Since when running time has not reached PELT, and the invariant time banked before
    /// that (a frequency switch in between).
    pelt_mark: Nanos,
    pelt_banked: u64,
    /// `tick_nohz_get_idle_calls_cpu`: idle entries that asked to stop the tick.
    idle_calls: u64,
    /// `cfs_rq->avg.util_est`: the estimates of its runnable tasks.
    util_est: u64,
    /// Its run queue's utilization clamps (`crate::cpu::uclamp`).
    clamps: crate::cpu::uclamp::RqClamps,
    /// The cluster's OPP now (index into `CpuStats::opps`).
    opp: usize,
    settled_at: Nanos,
    stats: CpuStats,
    /// Power (mW) per state when its cluster is not wholly down, and active power at `khz`.
    state_mw: Vec<f64>,
    cluster_state_mw: Vec<f64>,
    active_mw: f64,
    /// The cluster's frequency and its highest OPP's (kHz; both 1 on a platform without
    /// OPPs: the stated times as they are).
    khz: u64,
    max_khz: u64,
    is_cluster_state: Vec<bool>,
    /// Energy (mJ) of entering and leaving each state (see the module doc).
    transition_mj: Vec<f64>,
    /// When the exit under way ends, and when the kernel work queued behind it does.
    out_at: Nanos,
    kernel_until: Nanos,
    /// Each state's real entry and exit (ns), where the platform gives them.
    entry_ns: Vec<u64>,
    exit_ns: Vec<Option<u64>>,
    /// The wake-up path's draws on this CPU.
    rng: Pcg32,
}

/// The CPUs and their tasks: one component of the engine.
pub struct CpuSystem<'t> {
    cpus: Vec<Cpu>,
    tasks: Vec<Task>,
    /// Per cluster: its CPUs (indices) and how many sit in a cluster-level state.
    clusters: Vec<(Vec<usize>, usize)>,
    tick_ns: u64,
    qos: CpuLatencyQos,
    /// The run's requests by time, and the index of the next one due.
    qos_actions: Vec<QosAction>,
    qos_next: usize,
    qos_timer: Timer,
    trace: Option<&'t mut dyn CpuTrace>,
    path: WakePath,
    /// The path's costs in whole ns: timer interrupt, device interrupt, IPI, scheduler.
    costs: [CostNs; 4],
    /// Per device slot, its interrupt mapping and round robin's next CPU (index into the
    /// map's list).
    irq: Vec<(IrqMap, usize)>,
    /// What the world is to pass on, oldest first.
    signals: std::collections::VecDeque<Signal>,
    idle_signals: bool,
    /// Every task's IO together.
    io: Option<IoPathStats>,
    /// With two devices, every task's IO per device (by slot).
    io_by_device: Vec<IoPathStats>,
    /// Changes the host driver made to its CPU latency request.
    host_votes: u64,
    /// Per workload of the world, the task that is its thread (a fio job on a CPU).
    threads: Vec<Option<usize>>,
    /// Completions that reached their job's thread, for the world to hand to the workload.
    delivered: std::collections::VecDeque<IoTicket>,
    /// `[run] timeline`: each CPU's lanes and the slowest task IO in the window.
    recording: Option<timeline::Recording>,
    /// The governor is the oracle (which alone reads the next determined wake-up).
    oracle: bool,
    /// Each CPU id's index in `cpus` (`usize::MAX`: none), for ids below 4096; larger ids
    /// are searched.
    index_of: Vec<usize>,
    /// Per cluster: its cpufreq policy (`None` without OPPs).
    domains: Vec<Option<freq::Domain>>,
    /// A cluster's governor hears the scheduler's utilization updates.
    listens: bool,
    /// Some task sets a utilization clamp (`sched_uclamp_used`): the run queues count them.
    uclamp_used: bool,
    /// What a governor reads of a cluster's CPUs at an update (reused).
    util_buf: Vec<crate::cpufreq::CpuUtil>,
    /// The run's time limit (events after it are never handled).
    until: Nanos,
    /// Switches whose end was handled at once, without an event ([`Self::switch_to`]).
    folded: u64,
}

/// Why a run's CPUs cannot be set up as its scenario describes them (the caller names the
/// scenario line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("hz: expected a positive tick rate (e.g. 250)")]
    NoTickRate,
    #[error("{governor} needs at least {needs} idle states; cluster {cluster:?} has {has}")]
    TooFewStates {
        governor: &'static str,
        needs: usize,
        cluster: String,
        has: usize,
    },
    #[error("task {task:?}: no CPU {cpu} on this platform")]
    NoSuchCpu { task: String, cpu: u32 },
    #[error("task {task:?}: wakes an unknown task")]
    UnknownWakee { task: String },
    #[error(transparent)]
    Irq(#[from] IrqMapError),
}

fn state_power(s: &super::platform::IdleStateSpec) -> f64 {
    s.power_mw.as_ref().map_or(0.0, |p| p.central())
}

impl<'t> CpuSystem<'t> {
    pub fn new(spec: &CpuRunSpec) -> Result<CpuSystem<'t>, SetupError> {
        if spec.hz == 0 {
            return Err(SetupError::NoTickRate);
        }
        let tick_ns = 1_000_000_000 / u64::from(spec.hz);
        let order = spec.platform.cpus();
        let params = crate::cpufreq::GovernorParams {
            // TICK_NSEC: (1e9 + HZ/2) / HZ.
            tick_ns: (1_000_000_000 + u64::from(spec.hz) / 2) / u64::from(spec.hz),
            schedutil: crate::cpufreq::SchedutilTunables {
                rate_limit_us: spec.rate_limit_us,
                ..Default::default()
            },
            ondemand: Default::default(),
        };
        let domains: Vec<Option<freq::Domain>> = spec
            .platform
            .clusters
            .iter()
            .map(|c| freq::Domain::start(c, spec.cpufreq, &params))
            .collect();
        let mut cpus = Vec::with_capacity(order.len());
        let mut clusters: Vec<(Vec<usize>, usize)> =
            vec![(Vec::new(), 0); spec.platform.clusters.len()];
        for (i, &id) in order.iter().enumerate() {
            let (k, c) = spec
                .platform
                .clusters
                .iter()
                .enumerate()
                .find(|(_, c)| c.cpus.contains(&id))
                .expect("every listed CPU has a cluster");
            clusters[k].0.push(i);
            let view = c.governor_view(tick_ns as i64);
            if view.state_count() < spec.governor.min_states() {
                return Err(SetupError::TooFewStates {
                    governor: spec.governor.canonical(),
                    needs: spec.governor.min_states(),
                    cluster: c.name.clone(),
                    has: view.state_count(),
                });
            }
            let mut dev = Device::new(view.state_count());
            for (j, s) in c.states.iter().enumerate() {
                dev.disabled[j] = s.disabled;
            }
            let governor = spec.governor.build(&view, &mut dev);
            let is_cluster_state: Vec<bool> = c
                .states
                .iter()
                .map(|s| s.level == StateLevel::Cluster)
                .collect();
            let deepest_cpu_mw = c
                .states
                .iter()
                .rev()
                .find(|s| s.level == StateLevel::Cpu)
                .map_or(0.0, state_power);
            let state_mw = c
                .states
                .iter()
                .map(|s| match s.level {
                    StateLevel::Cpu => state_power(s),
                    StateLevel::Cluster => deepest_cpu_mw,
                })
                .collect();
            let cluster_state_mw: Vec<f64> = c.states.iter().map(state_power).collect();
            let transition_mj = c.transition_mj();
            // Without OPPs: the stated times as they are, and no active power.
            let (khz, max_khz, opp, active_mw, opps) = match &domains[k] {
                Some(d) => {
                    let khz = d.khz();
                    let opp = d.index_of(khz);
                    let max = d.opps.last().map_or(khz, |o| o.0);
                    let opps = d
                        .opps
                        .iter()
                        .map(|&(khz, _)| OppStats {
                            khz,
                            ..OppStats::default()
                        })
                        .collect();
                    (khz, max, opp, d.opps[opp].1, opps)
                }
                None => (1, 1, 0, 0.0, Vec::new()),
            };
            let mut rng = Pcg32::new(spec.seed, stream_id(&format!("tick-phase/cpu{id}")));
            let us = |v: f64| (v * 1000.0).round() as u64;
            let entry_ns = c.states.iter().map(|s| s.entry_us.map_or(0, us)).collect();
            let exit_ns = c.states.iter().map(|s| s.exit_us.map(us)).collect();
            cpus.push(Cpu {
                id,
                cluster: k,
                stats: CpuStats {
                    cpu: id,
                    states: view
                        .states
                        .iter()
                        .map(|s| StateStats {
                            name: s.name.clone(),
                            ..StateStats::default()
                        })
                        .collect(),
                    opps,
                    ..CpuStats::default()
                },
                view,
                governor,
                dev,
                kernel: Kernel::default(),
                latency_req_ns: cpuidle::NO_LATENCY_CONSTRAINT_NS,
                kicked: false,
                mode: Mode::Exiting { from: None },
                queue: std::collections::VecDeque::new(),
                own_tasks: Vec::new(),
                tick: Timer::new(),
                // Each CPU's tick fires on its own phase of the grid.
                tick_grid: TickGrid::new(tick_ns, rng.below(tick_ns)),
                tick_stopped: false,
                poll: Timer::new(),
                ready: Timer::new(),
                burst: Timer::new(),
                pelt: Pelt::default(),
                pelt_running: false,
                pelt_mark: Nanos::ZERO,
                pelt_banked: 0,
                idle_calls: 0,
                util_est: 0,
                clamps: crate::cpu::uclamp::RqClamps::default(),
                opp,
                settled_at: Nanos::ZERO,
                state_mw,
                cluster_state_mw,
                active_mw,
                khz,
                max_khz,
                is_cluster_state,
                transition_mj,
                out_at: Nanos::ZERO,
                kernel_until: Nanos::ZERO,
                entry_ns,
                exit_ns,
                rng: Pcg32::new(spec.seed, stream_id(&format!("wake-path/cpu{id}"))),
            });
        }
        let mut tasks = Vec::with_capacity(spec.tasks.len());
        for (i, t) in spec.tasks.iter().enumerate() {
            let mut run_rng = Pcg32::new(spec.seed, stream_id(&format!("task-run/{i}/{}", t.name)));
            if !order.contains(&t.cpu) {
                return Err(SetupError::NoSuchCpu {
                    task: t.name.clone(),
                    cpu: t.cpu,
                });
            }
            if let Some(w) = t.wakes {
                if w >= spec.tasks.len() || w == i {
                    return Err(SetupError::UnknownWakee {
                        task: t.name.clone(),
                    });
                }
            }
            tasks.push(Task {
                rng: Pcg32::new(spec.seed, stream_id(&format!("task/{}/{}", i, t.name))),
                next_run: t.run.sample(&mut run_rng),
                run_rng,
                timer: Timer::new(),
                pending: None,
                next_periodic: Nanos::ZERO,
                woken_at: Nanos::ZERO,
                chain_origin: Nanos::ZERO,
                handed_origin: None,
                runnable: false,
                stats: TaskStats {
                    name: t.name.clone(),
                    cpu: t.cpu,
                    latency_min_ns: u64::MAX,
                    io: (t.io.is_some() || t.job.is_some()).then(IoPathStats::default),
                    ..TaskStats::default()
                },
                stamp: WakeStamp::default(),
                pelt: Pelt::default(),
                util_est: 0,
                uclamp_active: false,
                after_io: false,
                io_cursor: 0,
                ipi_ns: 0,
                ipi_at: None,
                intended: Nanos::ZERO,
                deliveries: std::collections::VecDeque::new(),
                spec: t.clone(),
            });
        }
        let mut qos_actions = spec.qos.clone();
        qos_actions.sort_by_key(|a| a.at);
        let path = spec
            .platform
            .wakeup
            .clone()
            .unwrap_or_else(WakePath::declared);
        for map in &spec.irq {
            map.check(&order)?;
        }
        let any_io = spec.tasks.iter().any(|t| t.io.is_some() || t.job.is_some());
        let mut index_of = Vec::new();
        for (i, &id) in order.iter().enumerate() {
            if id < 4096 {
                if index_of.len() <= id as usize {
                    index_of.resize(id as usize + 1, usize::MAX);
                }
                index_of[id as usize] = i;
            }
        }
        for (i, t) in tasks.iter().enumerate() {
            let on = cpus.iter().position(|cpu| cpu.id == t.spec.cpu);
            cpus[on.expect("a task's CPU was checked")]
                .own_tasks
                .push(i);
        }
        let mut threads: Vec<Option<usize>> = Vec::new();
        for (i, t) in spec.tasks.iter().enumerate() {
            if let Some(w) = t.job {
                let w = w as usize;
                if threads.len() <= w {
                    threads.resize(w + 1, None);
                }
                threads[w] = Some(i);
            }
        }
        Ok(CpuSystem {
            cpus,
            tasks,
            clusters,
            tick_ns,
            qos: CpuLatencyQos::new(&order),
            qos_actions,
            qos_next: 0,
            qos_timer: Timer::new(),
            trace: None,
            costs: [&path.timer_irq, &path.io_irq, &path.ipi, &path.sched].map(|c| c.ns()),
            path,
            irq: spec.irq.iter().map(|m| (m.clone(), 0)).collect(),
            signals: std::collections::VecDeque::with_capacity(16),
            idle_signals: false,
            io: any_io.then(IoPathStats::default),
            io_by_device: match spec.irq.len() {
                n if n > 1 && any_io => vec![IoPathStats::default(); n],
                _ => vec![],
            },
            host_votes: 0,
            threads,
            delivered: std::collections::VecDeque::with_capacity(16),
            recording: None,
            oracle: spec.governor == GovernorName::Oracle,
            index_of,
            listens: domains.iter().flatten().any(freq::Domain::listens),
            uclamp_used: spec.tasks.iter().any(|t| t.uclamp != Uclamp::NONE),
            domains,
            util_buf: Vec::new(),
            until: Nanos::MAX,
            folded: 0,
        })
    }

    /// Reports the run's moments to `trace` from now on.
    pub fn traced(mut self, trace: &'t mut dyn CpuTrace) -> Self {
        self.trace = Some(trace);
        self
    }

    /// Reports a moment to the trace, if the run is traced: `event` is built only then (the
    /// untraced run is the common one, and these sit on its hottest paths).
    #[inline(always)]
    fn emit(&mut self, at: Nanos, event: impl FnOnce() -> Traced) {
        if let Some(t) = self.trace.as_mut() {
            t.on(at, event());
        }
    }

    #[inline]
    fn cpu_index(&self, id: u32) -> usize {
        match self.index_of.get(id as usize) {
            Some(&i) if i != usize::MAX => i,
            _ => self
                .cpus
                .iter()
                .position(|c| c.id == id)
                .expect("validated CPU"),
        }
    }

    /// Applies the requests at time 0, starts every CPU idle, arms every task's first
    /// wake-up and sends the first request of each task that only does IO; the run handles
    /// no event after `until`.
    pub fn start<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, until: Nanos) {
        self.until = until;
        self.apply_due_qos(ctx);
        for t in 0..self.tasks.len() {
            if let Wake::Periodic { phase, .. } = self.tasks[t].spec.wake {
                self.tasks[t].next_periodic = phase;
            }
            if self.tasks[t].spec.wake == Wake::Io {
                // A task woken only by its IO is in its loop when the run starts: its first
                // request goes out at time zero.
                self.submit_io(ctx.now(), t);
            } else {
                self.arm_next_wake(ctx, t);
            }
        }
        for c in 0..self.cpus.len() {
            if self.trace.is_some() && self.domains[self.cpus[c].cluster].is_some() {
                // Where each CPU starts, so that a trace's reader need not guess (a recording
                // would start with none).
                let (cpu, khz) = (self.cpus[c].id, self.cpus[c].khz);
                self.emit(ctx.now(), || Traced::Frequency { cpu, khz });
            }
            self.arm_tick(ctx, c);
            self.idle_iteration(ctx, c);
        }
    }

    /// Handles one of the system's events (completions that reach a job's thread meanwhile
    /// wait in [`Self::next_delivered`]).
    pub fn on_event<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, event: CpuEvent) {
        match event {
            CpuEvent::TaskWake(t, shot) => {
                if self.tasks[t].timer.fire(shot) {
                    let fired = self.tasks[t].pending.take();
                    if let Some((_, source)) = fired {
                        let cpu = self.tasks[t].spec.cpu;
                        self.emit(ctx.now(), || Traced::WakeSource {
                            task: t,
                            cpu,
                            source,
                        });
                    }
                    let source = fired.map_or(Source::Timer, |(_, s)| s);
                    self.source_fired(ctx, t, source);
                }
            }
            CpuEvent::Tick(c, shot) => {
                if !self.cpus[c].tick.fire(shot) {
                    return;
                }
                self.arm_tick(ctx, c);
                let cpu = self.cpus[c].id;
                self.emit(ctx.now(), || Traced::Tick { cpu });
                if self.listens && self.cpus[c].pelt_running && self.pelt_update(c, ctx.now()) {
                    // The running task's tick (`task_tick_fair`) updates PELT.
                    self.util_changed(ctx, c, false);
                }
                if matches!(self.cpus[c].mode, Mode::Idle { .. }) {
                    // The tick's interrupt wakes the CPU and its handler runs before the idle
                    // loop goes round again.
                    let cost = self.costs[TIMER_IRQ].draw(&mut self.cpus[c].rng);
                    self.kernel_work(ctx, c, cost, Cause::Tick);
                }
            }
            CpuEvent::PollLimit(c, shot) => {
                if self.cpus[c].poll.fire(shot) {
                    self.end_idle(ctx, c, Cause::PollLimit);
                    self.arm_ready(ctx, c);
                }
            }
            CpuEvent::Ready(c, shot) => {
                if self.cpus[c].ready.fire(shot) {
                    let (out, kernel) = (self.cpus[c].out_at, self.cpus[c].kernel_until);
                    if kernel > out {
                        self.mark(c, out, timeline::Lane::Kernel);
                    }
                    self.run_next(ctx, c);
                }
            }
            CpuEvent::BurstEnd(c, shot) => {
                if self.cpus[c].burst.fire(shot) {
                    match self.cpus[c].mode {
                        Mode::Switching { task } => {
                            let now = ctx.now();
                            self.start_task(ctx, c, task, now)
                        }
                        _ => self.end_burst(ctx, c),
                    }
                }
            }
            CpuEvent::Qos(shot) => {
                if self.qos_timer.fire(shot) {
                    self.apply_due_qos(ctx);
                }
            }
            CpuEvent::Ipi(t) => self.ipi_arrived(ctx, t),
            CpuEvent::ExitDone(c) => {
                let cpu = self.cpus[c].id;
                self.emit(ctx.now(), || Traced::Ready { cpu });
            }
            CpuEvent::FreqSwitch(k, shot) => self.switch_done(ctx, k, shot),
        }
    }

    /// Applies every request due by now, kicks the idle CPUs if the global limit moved, and
    /// arms the timer for the next request.
    fn apply_due_qos<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>) {
        let now = ctx.now();
        let mut global_changed = false;
        while let Some(action) = self.qos_actions.get(self.qos_next) {
            if action.at > now {
                break;
            }
            let action = *action;
            self.qos_next += 1;
            match (action.target, action.op) {
                (
                    target
                    @ (QosTarget::ScalingMinFreq { cpu } | QosTarget::ScalingMaxFreq { cpu }),
                    QosOp::Set(khz),
                ) => {
                    let floor = matches!(target, QosTarget::ScalingMinFreq { .. });
                    self.scaling_write(ctx, cpu, floor, khz.max(0) as u32);
                }
                _ => global_changed |= self.qos.apply(&action),
            }
        }
        self.limits_changed(ctx, global_changed);
        if let Some(next) = self.qos_actions.get(self.qos_next) {
            self.qos_timer.arm(ctx, next.at, CpuEvent::Qos);
        }
    }

    /// Reads every CPU's limit again after a change to the lists; kicks the idle CPUs if the
    /// global limit moved.
    fn limits_changed<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, global_changed: bool) {
        for cpu in &mut self.cpus {
            cpu.latency_req_ns = self.qos.governor_latency_req_ns(cpu.id);
        }
        if global_changed {
            for c in 0..self.cpus.len() {
                match self.cpus[c].mode {
                    Mode::Idle { .. } => {
                        self.cpus[c].stats.qos_kicks += 1;
                        self.end_idle(ctx, c, Cause::QosKick);
                        self.arm_ready(ctx, c);
                    }
                    // Still in the idle task, on its way out of a state: need_resched is set
                    // and the trip ends when the exit does.
                    Mode::Exiting { from: Some(_) } => self.cpus[c].kicked = true,
                    Mode::Running { .. }
                    | Mode::Exiting { from: None }
                    | Mode::Switching { .. } => {}
                }
            }
        }
    }

    fn arm_tick<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize) {
        let now = ctx.now().0;
        let cpu = &mut self.cpus[c];
        let next = cpu.tick_grid.after(now);
        cpu.tick.arm(ctx, Nanos(next), |s| CpuEvent::Tick(c, s));
    }

    fn arm_next_wake<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, t: usize) {
        let now = ctx.now();
        let task = &mut self.tasks[t];
        let (at, source) = match task.spec.wake {
            Wake::Periodic {
                period,
                jitter,
                source,
                ..
            } => {
                // The next point of the grid not yet passed (a burst longer than the period
                // skips a beat, as a frame that missed its vsync waits for the next).
                while task.next_periodic < now {
                    task.next_periodic += period;
                    task.stats.periods_missed += 1;
                }
                let at = task.next_periodic;
                task.next_periodic += period;
                let delay = if jitter.0 > 0 {
                    task.rng.below(jitter.0)
                } else {
                    0
                };
                (at + Nanos(delay), source)
            }
            Wake::Sleep { sleep, source } => (now + sleep.sample(&mut task.rng), source),
            Wake::ByTask | Wake::Io => return,
        };
        // A timer fires at the end of its slack window (the hrtimer's hard expiry: nothing else
        // expires it sooner on a CPU with no other timer); the task meant to wake at `at`.
        let fires = match source {
            Source::Timer => at + task.spec.timer_slack,
            Source::Interrupt => at,
        };
        task.intended = at;
        task.pending = Some((fires, source));
        task.timer.arm(ctx, fires, |s| CpuEvent::TaskWake(t, s));
    }

    /// Step 1: one iteration of the idle loop at `ctx.now()`.
    fn idle_iteration<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize) {
        let now = ctx.now().0;
        // One pass over this CPU's pending wake-ups: the next timer (the sleep length), and
        // the next wake-up of any kind already determined (what the oracle knows).
        let mut next_timer = None::<u64>;
        for &t in &self.cpus[c].own_tasks {
            if let Some((at, Source::Timer)) = self.tasks[t].pending {
                next_timer = Some(next_timer.map_or(at.0, |w| w.min(at.0)));
            }
        }
        // Only the oracle reads it; the walk over chains of wake-ups is not free.
        let next_wake = if self.oracle {
            self.next_determined_wake(c)
        } else {
            None
        };
        let none_before = now.saturating_add(MAX_DEFERMENT_NS);
        let (next_timer, next_wake) = (
            next_timer.unwrap_or(none_before),
            next_wake.unwrap_or(none_before),
        );
        let tick_ns = self.tick_ns;
        self.settle(c, ctx.now());
        let cpu_ref = &mut self.cpus[c];
        let next_tick = cpu_ref.tick_grid.after(now);
        let to_timer = next_timer.saturating_sub(now);
        let can_stop = to_timer > tick_ns;
        let delta_next = if cpu_ref.tick_stopped {
            to_timer
        } else {
            to_timer.min(next_tick - now)
        };
        let k = &mut cpu_ref.kernel;
        k.delta_tick_ns = delta_next as i64;
        k.sleep_length_ns = if can_stop { to_timer } else { delta_next } as i64;
        k.latency_req_ns = cpu_ref.latency_req_ns;
        k.tick_stopped = cpu_ref.tick_stopped;
        k.util = cpu_ref.pelt.util_avg().min(cpu_ref.view.capacity);
        k.clock_ns = now;
        k.oracle_residency_ns = next_wake.saturating_sub(now) as i64;
        let mut stop_tick = true;
        let idx = cpu_ref
            .governor
            .select(&cpu_ref.view, &mut cpu_ref.dev, k, &mut stop_tick);
        cpu_ref.stats.iterations += 1;
        if stop_tick || cpu_ref.tick_stopped {
            // `tick_nohz_idle_stop_tick` counts the call, whether or not the tick stops.
            cpu_ref.idle_calls += 1;
        }
        let mut stops_tick = false;
        if (stop_tick || cpu_ref.tick_stopped) && can_stop {
            stops_tick = !cpu_ref.tick_stopped;
            cpu_ref.tick_stopped = true;
            cpu_ref.tick.cancel();
        } else {
            cpu_ref.stats.tick_kept += 1;
            if cpu_ref.tick.due().is_none() {
                cpu_ref
                    .tick
                    .arm(ctx, Nanos(next_tick), |s| CpuEvent::Tick(c, s));
            }
        }
        cpu_ref.mode = Mode::Idle {
            state: idx,
            entered: ctx.now(),
        };
        if self.idle_signals {
            self.signals.push_back(Signal::Idle {
                cpu: cpu_ref.id,
                idle: true,
            });
        }
        self.mark(c, ctx.now(), timeline::Lane::Idle(idx));
        let cpu_ref = &mut self.cpus[c];
        cpu_ref.stats.states[idx].entries += 1;
        cpu_ref.stats.energy_mj += cpu_ref.transition_mj[idx];
        cpu_ref.stats.states[idx].energy_mj += cpu_ref.transition_mj[idx];
        if cpu_ref.view.states[idx].polling {
            let limit = poll_limit_ns(cpu_ref, tick_ns);
            cpu_ref
                .poll
                .arm(ctx, Nanos(now + limit), |s| CpuEvent::PollLimit(c, s));
        }
        let cpu = cpu_ref.id;
        if cpu_ref.is_cluster_state[idx] {
            self.cluster_enter(ctx.now(), c);
        }
        self.emit(ctx.now(), || Traced::IdleEnter {
            cpu,
            state: idx,
            stops_tick,
        });
    }

    /// CPU `c`, leaving its idle state, is ready to pick its next step when its exit and any
    /// kernel work queued behind it are done.
    fn arm_ready<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize) {
        let at = self.cpus[c].kernel_until;
        self.cpus[c].ready.arm(ctx, at, |s| CpuEvent::Ready(c, s));
    }

    /// Steps 3-5: the idle period of CPU `c` ends now; the caller arms its readiness
    /// ([`Self::arm_ready`]) once it has queued any kernel work behind the exit.
    fn end_idle<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize, cause: Cause) {
        let now = ctx.now();
        let Mode::Idle { state, entered } = self.cpus[c].mode else {
            return;
        };
        if self.cpus[c].is_cluster_state[state] {
            self.cluster_leave(now, c);
        }
        self.settle(c, now);
        let cpu = &mut self.cpus[c];
        cpu.poll.cancel();
        let polling = cpu.view.states[state].polling;
        let exit = if polling {
            0
        } else {
            let declared = cpu.view.states[state].exit_latency_ns as u64;
            cpu.exit_ns[state].unwrap_or_else(|| self.path.exit_ns(declared, &mut cpu.rng))
        };
        // An interrupt during the entry: the entry completes, then the exit follows at once
        // (WFI and MWAIT return at once with an interrupt pending; a PSCI power-down is
        // entered and left).
        let exit_starts = now.max(entered + Nanos(cpu.entry_ns[state]));
        let exit = (exit_starts - now).0 + exit;
        let residency = (now - entered).0 + exit;
        cpu.stats.states[state].time_ns += (now - entered).0;
        let miss = classify(cpu, state, residency);
        cpu.dev.last_residency_ns = residency;
        if polling {
            cpu.dev.poll_time_limit = cause == Cause::PollLimit;
        }
        if cause == Cause::Tick {
            cpu.kernel.got_idle_tick = true;
        }
        if cause == Cause::QosKick {
            cpu.kicked = true;
        }
        cpu.kernel.clock_ns = now.0 + exit;
        cpu.governor
            .reflect(&cpu.view, &mut cpu.dev, &mut cpu.kernel, state);
        cpu.mode = Mode::Exiting { from: Some(state) };
        cpu.out_at = now + Nanos(exit);
        cpu.kernel_until = cpu.out_at;
        if self.trace.is_some() {
            // Posted before the CPU's own wake-up, so that it comes first at the same time.
            ctx.schedule(cpu.out_at, CpuEvent::ExitDone(c));
        }
        if self.idle_signals {
            let cpu = cpu.id;
            self.signals.push_back(Signal::Idle { cpu, idle: false });
        }
        self.mark(c, now, timeline::Lane::Exit(state));
        let cpu = self.cpus[c].id;
        self.emit(now, || Traced::IdleExit {
            cpu,
            state,
            ready: now + Nanos(exit),
            miss,
        });
    }

    /// The CPU is out of its idle state: run the first queued task (the trip ends), or idle
    /// again (the same trip).
    fn run_next<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize) {
        let now = ctx.now();
        let next = self.cpus[c].queue.pop_front();
        let kicked = std::mem::take(&mut self.cpus[c].kicked);
        if next.is_some() || kicked {
            // The trip ends: the tick restarts if it was stopped.
            let cpu = &mut self.cpus[c];
            cpu.tick_stopped = false;
            if cpu.tick.due().is_none() {
                let at = cpu.tick_grid.after(now.0);
                cpu.tick.arm(ctx, Nanos(at), |s| CpuEvent::Tick(c, s));
            }
        }
        let Some(t) = next else {
            self.idle_iteration(ctx, c);
            return;
        };
        let cpu = &mut self.cpus[c];
        cpu.pelt.start_running(now.0);
        cpu.pelt_running = true;
        cpu.pelt_mark = now;
        cpu.pelt_banked = 0;
        let cpu = cpu.id;
        self.emit(now, || Traced::Switch {
            cpu,
            prev: None,
            next: Some(t),
        });
        self.switch_to(ctx, c, t);
    }

    /// Task `t` starts its burst on CPU `c` at `now` (the event's time, or the end of a switch
    /// folded into it: [`Self::switch_to`]).
    fn start_task<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize, t: usize, now: Nanos) {
        self.settle(c, now);
        self.cpus[c].mode = Mode::Running { task: t };
        self.mark(c, now, timeline::Lane::Running);
        let task = &mut self.tasks[t];
        let latency = (now - task.woken_at).0;
        let s = &mut task.stats;
        s.wakeups += 1;
        s.latency_sum_ns += latency;
        s.latency_min_ns = s.latency_min_ns.min(latency);
        s.latency_max_ns = s.latency_max_ns.max(latency);
        s.latency_last_ns = latency;
        s.latency.record(Nanos(latency));
        if !task.deliveries.is_empty() {
            self.delivered.extend(task.deliveries.drain(..));
        }
        let after_io = task.after_io.then_some(task.stamp);
        if let Some(stamp) = after_io {
            if let Some(io) = s.io.as_mut() {
                io.record(&stamp, latency);
            }
            if let Some(all) = self.io.as_mut() {
                all.record(&stamp, latency);
            }
            if let Some(device) = self.io_by_device.get_mut(usize::from(stamp.device)) {
                device.record(&stamp, latency);
            }
        }
        let work = std::mem::replace(&mut task.next_run, task.spec.run.sample(&mut task.run_rng));
        task.stats.work_ns += work.0;
        let burst = self.cpus[c].at_speed(work);
        self.cpus[c]
            .burst
            .arm(ctx, now + burst, |s| CpuEvent::BurstEnd(c, s));
        if let Some(stamp) = after_io {
            self.note_request(t, &stamp, now);
        }
        self.draw_ipi(t);
    }

    fn end_burst<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize) {
        let now = ctx.now();
        let Mode::Running { task: t } = self.cpus[c].mode else {
            return;
        };
        self.settle(c, now);
        let task = &mut self.tasks[t];
        task.runnable = false;
        let response = (now - task.chain_origin).0;
        let s = &mut task.stats;
        s.responses += 1;
        s.response_sum_ns += response;
        s.response_max_ns = s.response_max_ns.max(response);
        if !self.tasks[t].deliveries.is_empty() {
            // A job's thread whose IO completed while it ran: it reaps again at once.
            self.tasks[t].stamp = WakeStamp {
                origin: now,
                ..WakeStamp::default()
            };
            self.tasks[t].after_io = false;
            self.make_runnable(ctx, t);
        }
        let task = &mut self.tasks[t];
        if task.spec.io.is_some() && (!task.after_io || task.spec.wake == Wake::Io) {
            self.submit_io(now, t);
        } else {
            self.tasks[t].after_io = false;
            self.arm_next_wake(ctx, t);
        }
        let cpu_id = self.cpus[c].id;
        if let Some(w) = self.tasks[t].spec.wakes {
            self.wake_other(ctx, t, w);
        }
        if self.trace.is_some() {
            if let Some((at, Source::Timer)) = self.tasks[t].pending {
                let absolute = matches!(self.tasks[t].spec.wake, Wake::Periodic { .. });
                self.emit(now, || Traced::TimerArmed {
                    task: t,
                    cpu: cpu_id,
                    expires: at,
                    absolute,
                });
            }
        }
        let next = self.cpus[c].queue.pop_front();
        self.emit(now, || Traced::Switch {
            cpu: cpu_id,
            prev: Some(t),
            next,
        });
        if next.is_none() {
            self.cpus[c].mode = Mode::Exiting { from: None };
        }
        if self.listens {
            // The dequeue: the task's estimate and PELT, heard by the governor.
            self.util_dequeue(ctx, c, t, next.is_none());
        }
        match next {
            // The next task runs after the switch: the CPU never idles.
            Some(next) => self.switch_to(ctx, c, next),
            None => {
                let cpu = &mut self.cpus[c];
                if cpu.pelt_running {
                    // No governor reads PELT before the CPU stops running: one update.
                    let ran = freq::invariant((now - cpu.pelt_mark).0, cpu.khz, cpu.max_khz);
                    cpu.pelt_running = false;
                    cpu.pelt.stop_running(now.0, ran, cpu.view.capacity);
                }
                self.idle_iteration(ctx, c);
            }
        }
    }

    /// Charges CPU `c` its power from its last settlement until `now` (nothing when that was
    /// now: adding nothing to a sum leaves it as it was).
    fn settle(&mut self, c: usize, now: Nanos) {
        if self.cpus[c].settled_at == now {
            return;
        }
        let clusters = &self.clusters;
        let cpu = &mut self.cpus[c];
        let dt = (now - cpu.settled_at).0;
        cpu.settled_at = now;
        match cpu.mode {
            Mode::Running { .. } | Mode::Exiting { from: None } | Mode::Switching { .. } => {
                cpu.charge_busy(dt);
            }
            Mode::Exiting { from: Some(state) } => {
                // The exit until `out_at` (counted in the state, as the kernel counts it), then
                // the handlers at active power (a part of no time adds nothing).
                let before = now.0.min(cpu.out_at.0);
                let exiting = before.saturating_sub(now.0 - dt);
                let handling = dt - exiting;
                if handling > 0 {
                    cpu.charge_busy(handling);
                }
                if exiting > 0 {
                    let mj = cpu.state_mw[state] * exiting as f64 * 1e-9;
                    cpu.stats.energy_mj += mj;
                    let s = &mut cpu.stats.states[state];
                    s.time_ns += exiting;
                    s.energy_mj += mj;
                }
            }
            Mode::Idle { state, .. } => {
                let whole_cluster_down = || {
                    let (members, down) = &clusters[cpu.cluster];
                    *down == members.len()
                };
                let mw = if cpu.is_cluster_state[state] && whole_cluster_down() {
                    cpu.cluster_state_mw[state]
                } else {
                    cpu.state_mw[state]
                };
                // mW x ns = 1e-12 J = 1e-9 mJ.
                let mj = mw * dt as f64 * 1e-9;
                cpu.stats.energy_mj += mj;
                cpu.stats.states[state].energy_mj += mj;
            }
        }
    }

    fn settle_cluster(&mut self, now: Nanos, k: usize) {
        for i in 0..self.clusters[k].0.len() {
            let c = self.clusters[k].0[i];
            self.settle(c, now);
        }
    }

    fn cluster_enter(&mut self, now: Nanos, c: usize) {
        let k = self.cpus[c].cluster;
        self.settle_cluster(now, k);
        self.clusters[k].1 += 1;
    }

    fn cluster_leave(&mut self, now: Nanos, c: usize) {
        let k = self.cpus[c].cluster;
        self.settle_cluster(now, k);
        self.clusters[k].1 -= 1;
    }

    /// The switches handled without an event (events all the same: what the run counts).
    pub fn folded_switches(&self) -> u64 {
        self.folded
    }

    /// Ends the run at `end`: settles every CPU and returns the measurements. (A run stopped
    /// by its watcher may end inside a switch folded into its burst: that CPU was settled to
    /// the switch's end, a few microseconds on, and stays so.)
    pub fn finish(mut self, end: Nanos) -> CpuReport {
        for c in 0..self.cpus.len() {
            if let Mode::Idle { state, entered } = self.cpus[c].mode {
                self.cpus[c].stats.states[state].time_ns += (end - entered).0;
            }
            if self.cpus[c].settled_at <= end {
                self.settle(c, end);
            }
        }
        let (timelines, slowest_io) = match self.recording.take() {
            Some(rec) => (rec.cpus, rec.slowest.map(|(_, path)| path)),
            None => (vec![], None),
        };
        CpuReport {
            duration_ns: end.0,
            timelines,
            slowest_io,
            io: self.io,
            io_by_device: self.io_by_device,
            host_latency_votes: self.host_votes,
            cpus: self.cpus.into_iter().map(|c| c.stats).collect(),
            tasks: self
                .tasks
                .into_iter()
                .map(|t| {
                    let mut s = t.stats;
                    if s.wakeups == 0 {
                        s.latency_min_ns = 0;
                    }
                    s
                })
                .collect(),
        }
    }
}

/// A CPU's tick grid, `phase + k * period`, and the grid instant last asked for: the idle loop
/// asks at every iteration, mostly within the same period, so the division is rarely needed.
#[derive(Clone, Copy, Debug)]
struct TickGrid {
    period: u64,
    phase: u64,
    next: u64,
}

impl TickGrid {
    fn new(period: u64, phase: u64) -> TickGrid {
        debug_assert!(phase < period, "a phase within the period");
        TickGrid {
            period,
            phase,
            next: phase,
        }
    }

    /// The first instant after `now` on the grid.
    #[inline]
    fn after(&mut self, now: u64) -> u64 {
        // `next` is on the grid: it is the answer when the instant before it is not after now.
        if now < self.next && self.next.saturating_sub(self.period) <= now {
            return self.next;
        }
        let since = (now + self.period - self.phase) % self.period;
        self.next = now + (self.period - since);
        self.next
    }
}

/// `cpuidle_poll_time()`: the governor's window if it set one (haltpoll), else the first
/// enabled state with a target residency of at least 10 us, at most TICK_NSEC / 16.
fn poll_limit_ns(cpu: &Cpu, tick_ns: u64) -> u64 {
    if cpu.dev.poll_limit_ns != 0 {
        return cpu.dev.poll_limit_ns;
    }
    let max = tick_ns / 16;
    cpu.view
        .states
        .iter()
        .enumerate()
        .skip(1)
        .find(|(i, s)| !cpu.dev.is_disabled(*i) && s.target_residency_ns >= POLL_MIN_NS)
        .map_or(max, |(_, s)| (s.target_residency_ns as u64).min(max))
}

/// §5: the core's above/below accounting for a period in `state` that measured `residency`;
/// returns what it counted (`Some(false)` above, `Some(true)` below), as `cpu_idle_miss` says.
fn classify(cpu: &mut Cpu, state: usize, residency: u64) -> Option<bool> {
    match cpuidle::classify(&cpu.view, &cpu.dev, state, residency) {
        cpuidle::Miss::TooDeep => {
            cpu.stats.states[state].above += 1;
            Some(false)
        }
        cpuidle::Miss::TooShallow => {
            cpu.stats.states[state].below += 1;
            Some(true)
        }
        cpuidle::Miss::None => None,
    }
}

#[cfg(test)]
mod tests;
