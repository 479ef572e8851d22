//! The scenario schema: the one definition of what a scenario file may say.
//!
//! A scenario names the platform (`[platform.nvme]`: a preset or the user's own device dump),
//! the policies (`[policy.<mechanism>]`), the workload and the run. Each `[[variant]]` is a
//! `name` plus any subset of those tables, deep-merged over the base and validated by the same
//! schema, so one file compares settings on identical input. Every table denies unknown keys,
//! durations carry units, and errors name the file and the line of the key at fault. The
//! reference for users is `docs/scenario.md`; Python passes scenario text through and never
//! restates this schema.

mod hpb;
mod layers;
pub mod qos;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use toml::{Table, Value};

pub use hpb::{HpbPolicy, ResolvedHpb};
use layers::{deep_merge, join};
pub use layers::{set_field, Lines};

use crate::apst::ApstParams;
use crate::cpu::task::TaskFile;
use crate::cpuidle::GovernorName;
use crate::devfreq::{RangeVersion, DEFAULT_DOWNDIFFERENTIAL, DEFAULT_UPTHRESHOLD};
use crate::error::{self, InputError};
use crate::storage::ufs::device::BoostNotify;
use crate::time::{parse_duration, Nanos};
use crate::trace::blkparse::ReplayedAction;
use crate::trace::block::TraceFormat;
use crate::ufshcd::scaling::{Rounding, ScalingParams, TimerKind, VendorProfile};
use crate::workload::{FioJob, IozoneSpec, ReplayOptions};

/// Simulated time when `[run] duration` is absent and nothing is replayed.
pub const DEFAULT_DURATION: Nanos = Nanos::from_secs(60);

/// One fully resolved scenario: the base with one variant's tables merged in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub platform: PlatformSection,
    #[serde(default)]
    pub policy: Policy,
    pub workload: WorkloadSpec,
    /// PM QoS requests over time (CPU platforms).
    #[serde(default)]
    pub qos: qos::QosSpec,
    #[serde(default)]
    pub run: RunSpec,
}

impl Scenario {
    /// The scenario's devices, in their run slots: `"nvme"` (slot 0 when both), `"ufs"`.
    pub fn devices(&self) -> Vec<&'static str> {
        let p = &self.platform;
        [("nvme", p.nvme.is_some()), ("ufs", p.ufs.is_some())]
            .into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect()
    }

    /// The run slot of device `name` ("nvme" or "ufs").
    pub fn device_slot(&self, name: &str) -> u8 {
        self.devices().iter().position(|d| *d == name).unwrap_or(0) as u8
    }
}

/// The simulated hardware: an NVMe drive, a UFS device, CPUs, or CPUs with a device (the
/// whole system: a completion interrupts a CPU, which wakes the task waiting for it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSection {
    pub nvme: Option<NvmePlatform>,
    pub cpu: Option<CpuPlatformSpec>,
    pub ufs: Option<UfsPlatformSpec>,
    /// Which CPU takes the device's completion interrupt (CPUs with a device only).
    pub irq: Option<IrqSpec>,
}

/// `[platform.irq]`: where the devices' completion interrupts go: `mode` (and `cpus`) for the
/// scenario's one device, or a table per device (`[platform.irq.nvme]`, `[platform.irq.ufs]`),
/// which a scenario with two devices must use.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrqSpec {
    pub mode: Option<String>,
    #[serde(default)]
    pub cpus: Vec<u32>,
    pub nvme: Option<IrqMapSpec>,
    pub ufs: Option<IrqMapSpec>,
}

/// One device's interrupt mapping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrqMapSpec {
    /// `"managed"` (blk-mq: the submitting CPU's own queue; NVMe's default), `"fixed"` (the
    /// first CPU of `cpus`; UFS's default, on the platform's first CPU) or `"round-robin"`
    /// (over `cpus`).
    pub mode: String,
    #[serde(default)]
    pub cpus: Vec<u32>,
}

impl IrqSpec {
    /// The mapping of `device` ("nvme" or "ufs") the table asks for, `None` for the device's
    /// default; `devices`: the scenario's devices (CPUs are checked against the platform when
    /// it is loaded).
    pub fn map_for(
        &self,
        device: &str,
        devices: &[&str],
    ) -> Result<Option<crate::cpu::system::IrqMap>, (String, String)> {
        for (name, table) in [("nvme", &self.nvme), ("ufs", &self.ufs)] {
            if table.is_some() && !devices.contains(&name) {
                return Err((
                    format!("platform.irq.{name}"),
                    format!(
                        "[platform.irq.{name}]: this scenario has no `[platform.{name}]`: remove \
                         the table"
                    ),
                ));
            }
        }
        let per_device = self.nvme.is_some() || self.ufs.is_some();
        let own = match device {
            "nvme" => &self.nvme,
            _ => &self.ufs,
        };
        match (&self.mode, own) {
            (Some(_), _) if per_device => Err((
                "platform.irq.mode".into(),
                "[platform.irq]: give `mode` for the one device, or a table per device \
                 (`[platform.irq.nvme]`, `[platform.irq.ufs]`), not both"
                    .into(),
            )),
            (Some(_), _) if devices.len() > 1 => Err((
                "platform.irq.mode".into(),
                format!(
                    "[platform.irq] mode: this scenario has two devices: say whose interrupts \
                     go where, in `[platform.irq.{}]` and `[platform.irq.{}]`",
                    devices[0], devices[1]
                ),
            )),
            (Some(mode), _) => resolve_irq("platform.irq", mode, &self.cpus).map(Some),
            (None, _) if !self.cpus.is_empty() && !per_device => Err((
                "platform.irq.cpus".into(),
                "[platform.irq]: `cpus` needs `mode` (\"fixed\" or \"round-robin\")".into(),
            )),
            (None, Some(t)) => {
                resolve_irq(&format!("platform.irq.{device}"), &t.mode, &t.cpus).map(Some)
            }
            (None, None) => Ok(None),
        }
    }
}

/// The mapping `mode` over `cpus` asks for, errors at `path` (`platform.irq` or a device's
/// table).
fn resolve_irq(
    path: &str,
    mode: &str,
    cpus: &[u32],
) -> Result<crate::cpu::system::IrqMap, (String, String)> {
    use crate::cpu::system::IrqMap;
    let table = format!("[{path}]");
    let need_cpus = |mode: &str| {
        (
            format!("{path}.cpus"),
            format!("{table} mode {mode:?}: expected `cpus = [...]`, the CPUs to use"),
        )
    };
    match mode {
        "managed" if cpus.is_empty() => Ok(IrqMap::Managed),
        "managed" => Err((
            format!("{path}.cpus"),
            format!(
                "{table} mode \"managed\": the submitting CPU takes its own queue's interrupt; \
                 `cpus` has no meaning there: remove it"
            ),
        )),
        "fixed" => cpus
            .first()
            .map(|&c| IrqMap::Fixed(c))
            .ok_or_else(|| need_cpus("fixed")),
        "round-robin" if cpus.is_empty() => Err(need_cpus("round-robin")),
        "round-robin" => Ok(IrqMap::RoundRobin(cpus.to_vec())),
        other => Err((
            format!("{path}.mode"),
            format!(
                "{table} mode: expected \"managed\", \"fixed\" or \"round-robin\", got {}",
                crate::error::shown(other)
            ),
        )),
    }
}

/// `[platform.ufs]`: which UFS device and host, and the kernel's tick rate (the devfreq
/// monitor's and the boost's delays are in jiffies).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UfsPlatformSpec {
    /// Built-in UFS preset id (`torpor devices`).
    pub preset: String,
    #[serde(default = "default_hz", deserialize_with = "hz_value")]
    pub hz: u32,
}

/// `[platform.cpu]`: which CPUs, and the kernel's tick rate.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuPlatformSpec {
    /// Built-in preset id (`torpor devices`).
    pub preset: Option<String>,
    /// A platform TOML (docs/cpu-platform.md; `torpor probe` writes one), relative to the
    /// scenario.
    pub file: Option<String>,
    /// `CONFIG_HZ`: the tick period is 1e9 / hz ns.
    #[serde(default = "default_hz", deserialize_with = "hz_value")]
    pub hz: u32,
}

/// `hz` as any integer: one beyond 32 bits gets the range check's own words (a value within
/// them is checked where the platform is resolved).
fn hz_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = i64::deserialize(d)?;
    u32::try_from(v).map_err(|_| {
        serde::de::Error::custom(format!(
            "expected CONFIG_HZ in {}..={} (100, 250, 300 and 1000 are the kernel's choices), \
             got {v}",
            HZ_RANGE.start(),
            HZ_RANGE.end()
        ))
    })
}

/// Android and most distributions build with HZ=250: kernel/Kconfig.hz's default, which
/// arm64's defconfig keeps.
fn default_hz() -> u32 {
    250
}

/// The `CONFIG_HZ` range torpor accepts (the kernel offers 100 to 1000).
pub const HZ_RANGE: std::ops::RangeInclusive<u32> = 24..=10_000;

/// `[platform.nvme]`: which drive, and how the simulated one departs from its descriptors.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmePlatform {
    /// Built-in preset id (`torpor devices`).
    pub preset: Option<String>,
    /// The user's `nvme id-ctrl -o json` or `smartctl -a` output, relative to the scenario.
    pub file: Option<String>,
    /// The drive's real entry and exit latencies over the declared (maximum) ones: 1.0 takes
    /// the descriptors at their word, 0.5 wakes twice as fast. The kernel builds its table
    /// from the declared values either way; only the simulated drive changes.
    #[serde(default = "one")]
    pub latency_scale: f64,
    /// Idle power per state (`PS0 = 350.0`), mW, where the descriptors report none (IDLP) or
    /// a measurement says otherwise.
    #[serde(default)]
    pub idle_power_mw: BTreeMap<String, f64>,
    /// Active power per state, mW (ACTP).
    #[serde(default)]
    pub active_power_mw: BTreeMap<String, f64>,
    /// Power while entering or leaving a non-operational state, as a share of the way from the
    /// last operational state's idle power (0) to its maximum power (1). No drive documents
    /// it: 0.5 is torpor's central estimate, 0 and 1 the ends of its range.
    #[serde(default = "half")]
    pub transition_power_share: f64,
}

fn one() -> f64 {
    1.0
}

fn half() -> f64 {
    0.5
}

/// `[policy.<mechanism>]`: every field defaults to the kernel's default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub apst: ApstParams,
    #[serde(default)]
    pub cpuidle: CpuidlePolicy,
    #[serde(default)]
    pub cpufreq: CpufreqPolicy,
    #[serde(default)]
    pub devfreq: DevfreqPolicy,
    #[serde(default)]
    pub boost: BoostPolicy,
    /// `[policy.hpb]`: UFS HPB, on when the table is present.
    pub hpb: Option<HpbPolicy>,
}

/// `[policy.devfreq]`: the UFS host's clock scaling. A driver's profile, then any field of it
/// overridden (as its sysfs files and module code would).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevfreqPolicy {
    #[serde(default = "default_profile")]
    pub profile: VendorProfile,
    /// `clkscale_enable`: false keeps the max level (no monitor).
    #[serde(default = "yes")]
    pub enabled: bool,
    pub polling_ms: Option<u32>,
    pub timer: Option<TimerKind>,
    pub upthreshold: Option<u64>,
    pub downdifferential: Option<u64>,
    /// The clock driver's `clk_round_rate`: `up` (Qualcomm RCG, OPP ceil) or `exact`.
    pub rounding: Option<Rounding>,
    pub suspend_on_no_request: Option<bool>,
    /// `clk_scaling.min_gear`: the HS gear kept at the min level (the profile's, else the
    /// preset's, usually HS-G1).
    pub min_gear: Option<u8>,
    /// devfreq's sysfs `min_freq` and `max_freq`, Hz: the user's frequency QoS floor and cap
    /// (0: none).
    pub min_freq: Option<u64>,
    pub max_freq: Option<u64>,
    /// The kernel release whose `devfreq_get_freq_range` clamps the range: `v5.5` (through
    /// v6.16) or `v6.17` (the default).
    #[serde(default)]
    pub freq_range: RangeVersion,
    /// ufshcd's `pm_qos_enable` (v6.9+, on by default): the host holds the CPUs' global
    /// latency at 0 while its clocks are scaled up (beside `[platform.cpu]`; alone, the UFS
    /// device has no CPUs to hold).
    #[serde(default = "yes")]
    pub pm_qos_enable: bool,
}

fn default_profile() -> VendorProfile {
    VendorProfile::Ufshcd
}

fn yes() -> bool {
    true
}

impl Default for DevfreqPolicy {
    fn default() -> Self {
        DevfreqPolicy {
            profile: default_profile(),
            enabled: true,
            polling_ms: None,
            timer: None,
            upthreshold: None,
            downdifferential: None,
            rounding: None,
            suspend_on_no_request: None,
            min_gear: None,
            min_freq: None,
            max_freq: None,
            freq_range: RangeVersion::default(),
            pm_qos_enable: true,
        }
    }
}

impl DevfreqPolicy {
    /// The parameters for a host whose clock scales between `min_hz` and `max_hz`; `None`
    /// when scaling is off.
    pub fn resolved(&self, min_hz: u64, max_hz: u64, hz: u32) -> Option<ScalingParams> {
        if !self.enabled {
            return None;
        }
        let mut p = ScalingParams::of(self.profile, min_hz, max_hz);
        p.hz = hz;
        p.range = self.freq_range;
        p.polling_ms = self.polling_ms.unwrap_or(p.polling_ms);
        p.timer = self.timer.unwrap_or(p.timer);
        // 0 takes the governor's default, as simple_ondemand reads its data (DFSO_*).
        let or_default = |v: u64, default| if v == 0 { default } else { v };
        p.ondemand.upthreshold = or_default(
            self.upthreshold.unwrap_or(p.ondemand.upthreshold),
            DEFAULT_UPTHRESHOLD,
        );
        p.ondemand.downdifferential = or_default(
            self.downdifferential.unwrap_or(p.ondemand.downdifferential),
            DEFAULT_DOWNDIFFERENTIAL,
        );
        p.rounding = self.rounding.unwrap_or(p.rounding);
        p.suspend_on_no_request = self
            .suspend_on_no_request
            .unwrap_or(p.suspend_on_no_request);
        Some(p)
    }
}

/// `[policy.boost]`: the block layer's device-frequency boost (an unmerged RFC, 2025).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoostPolicy {
    /// `/sys/block/<disk>/dev_freq_timeout_ms`; 0 (the default) is off.
    #[serde(default)]
    pub dev_freq_timeout_ms: u32,
    /// When devfreq learns of it: `next-poll` (the patch) or `at-once` (a likely merged form).
    #[serde(default = "default_notify")]
    pub notify: BoostNotify,
}

fn default_notify() -> BoostNotify {
    BoostNotify::NextPoll
}

impl Default for BoostPolicy {
    fn default() -> Self {
        BoostPolicy {
            dev_freq_timeout_ms: 0,
            notify: default_notify(),
        }
    }
}

/// `[policy.cpuidle]`: the governor on every CPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuidlePolicy {
    /// A variant name (`torpor idle governors`): `menu`, `teo@6.6`, `teo-util`, ...
    #[serde(default = "default_governor")]
    pub governor: String,
}

/// `[policy.cpufreq]`: the CPUs' frequency, per cluster (frequency domain).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpufreqPolicy {
    /// `"performance"` (each cluster at its highest OPP: the default, and torpor's behaviour
    /// before frequencies were modelled), `"powersave"` (its lowest), both within the
    /// platform's scaling limits, or `"schedutil"` / `"ondemand"` (docs/cpufreq.md), which
    /// follow the CPUs' utilization.
    #[serde(default = "default_cpufreq_governor")]
    pub governor: String,
    /// schedutil's `rate_limit_us` tunable (default: the policy's transition delay, as the
    /// kernel sets it).
    pub rate_limit_us: Option<u32>,
}

impl Default for CpufreqPolicy {
    fn default() -> Self {
        CpufreqPolicy {
            governor: default_cpufreq_governor(),
            rate_limit_us: None,
        }
    }
}

fn default_cpufreq_governor() -> String {
    "performance".into()
}

impl CpufreqPolicy {
    /// The governor it names; a tunable of another governor is refused.
    pub fn resolved(&self) -> Result<crate::cpufreq::GovernorName, (String, String)> {
        use crate::cpufreq::GovernorName;
        let governor = GovernorName::parse(&self.governor).map_err(|m| {
            (
                "policy.cpufreq.governor".to_string(),
                format!("[policy.cpufreq] {m}"),
            )
        })?;
        if self.rate_limit_us.is_some() && governor != GovernorName::Schedutil612 {
            return Err((
                "policy.cpufreq.rate_limit_us".to_string(),
                format!(
                    "[policy.cpufreq] rate_limit_us: a tunable of schedutil, not of {}; expected \
                     governor = \"schedutil\" or no rate_limit_us",
                    governor.canonical()
                ),
            ));
        }
        Ok(governor)
    }
}

/// menu is the kernel's default governor (rating 20, above teo's 19).
fn default_governor() -> String {
    "menu".into()
}

impl Default for CpuidlePolicy {
    fn default() -> Self {
        CpuidlePolicy {
            governor: default_governor(),
        }
    }
}

/// `[workload]`: what issues IO.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// One of the seven workflows of the APST commit message (1-7).
    pub apst_workflow: Option<u8>,
    /// fio-like jobs, with fio's option names.
    #[serde(default, rename = "job")]
    pub jobs: Vec<FioJob>,
    /// A fio job file (relative to the scenario) whose jobs run beside `jobs`; read when the
    /// variant runs, and checked there with errors pointing into it.
    pub fio: Option<String>,
    /// A trace to replay: a fio iolog or a block trace.
    pub replay: Option<ReplaySpec>,
    /// iozone's random-read phase: one job per thread, beside the other jobs.
    pub iozone: Option<IozoneSpec>,
    /// Tasks pinned to CPUs.
    #[serde(default, rename = "task")]
    pub tasks: Vec<TaskFile>,
    /// The device the jobs, the job file, the replay, iozone and the workflow read and write:
    /// `"nvme"` or `"ufs"`. Needed with two devices; a task's IO names its own.
    pub device: Option<String>,
}

impl WorkloadSpec {
    /// Whether any IO besides the tasks' goes to a device.
    pub fn has_device_io(&self) -> bool {
        self.apst_workflow.is_some()
            || !self.jobs.is_empty()
            || self.fio.is_some()
            || self.replay.is_some()
            || self.iozone.is_some()
    }
}

/// `[workload.replay]`: the trace (relative to the scenario), its format (absent: told from
/// its first line), blkparse's replayed action, and fio's replay options.
#[derive(Debug, Clone)]
pub struct ReplaySpec {
    pub file: String,
    pub format: Option<TraceFormat>,
    pub action: Option<ReplayedAction>,
    pub options: ReplayOptions,
}

impl<'de> Deserialize<'de> for ReplaySpec {
    /// `file` beside the options of [`ReplayOptions`], which stay defined in one place.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut t = Table::deserialize(d)?;
        let file = match t.remove("file") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(D::Error::custom("`file`: expected the trace's path")),
            None => {
                return Err(D::Error::custom(
                    "missing field `file` (the trace to replay)",
                ))
            }
        };
        let format = match t.remove("format") {
            None => None,
            Some(v) => Some(TraceFormat::deserialize(v).map_err(|_| {
                D::Error::custom(
                    "`format`: expected \"fio-iolog\", \"blkparse\", \"disksim\", \"mqsim\" \
                     or \"mobile-csv\"",
                )
            })?),
        };
        let action = match t.remove("action") {
            None => None,
            Some(v) => Some(ReplayedAction::deserialize(v).map_err(|_| {
                D::Error::custom(
                    "`action`: expected \"Q\" (blkparse's queued bios) or \"D\" (requests \
                     issued to the driver)",
                )
            })?),
        };
        let options = ReplayOptions::deserialize(Value::Table(t)).map_err(D::Error::custom)?;
        Ok(ReplaySpec {
            file,
            format,
            action,
            options,
        })
    }
}

/// `[run]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Simulated time, with a unit (`"60s"`). Absent: until a replayed trace ends, or
    /// [`DEFAULT_DURATION`] when nothing is replayed.
    #[serde(default, deserialize_with = "de_duration")]
    pub duration: Option<Nanos>,
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// Record every component's state changes and requests from time 0 for this long (the
    /// report's `timeline`; at most `timeline_limit` entries each).
    #[serde(default, deserialize_with = "de_duration")]
    pub timeline: Option<Nanos>,
    /// The most entries the timeline keeps of each kind (changes, requests).
    #[serde(default = "timeline_limit")]
    pub timeline_limit: usize,
}

/// The default of `[run] timeline_limit`: 16 bytes an entry, so 16 MB.
pub const TIMELINE_LIMIT: usize = 1_000_000;

/// The largest `[run] timeline_limit`: 50 M entries, under 1 GB.
pub const MAX_TIMELINE_LIMIT: usize = 50_000_000;

fn timeline_limit() -> usize {
    TIMELINE_LIMIT
}

fn one_u64() -> u64 {
    1
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            duration: None,
            seed: 1,
            timeline: None,
            timeline_limit: TIMELINE_LIMIT,
        }
    }
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Nanos>, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// One named variant, resolved.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub scenario: Scenario,
}

/// A parsed scenario file: its variants, resolved, and the lines its keys came from.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    label: String,
    base: Table,
    overlays: Vec<(String, Table)>,
    lines: Lines,
    variants: Vec<Variant>,
}

/// The most `[[variant]]`s one file may hold: each is built and kept in memory before the
/// first runs, so an unbounded count would be unbounded memory.
pub const MAX_VARIANTS: usize = 4096;

/// The most keys the variants may hold in all once each is merged over the base (the base's
/// keys count once per variant): each is checked and kept in memory before the first runs,
/// about a second per 300,000. One variant of the most `[[qos.request]]`s fits three times.
pub const MAX_RESOLVED_KEYS: usize = 1 << 20;

/// Why a watched parse gave no scenario: bad input, or the watcher said stop (Ctrl-C).
#[derive(Debug)]
pub enum Stopped {
    Input(InputError),
    Interrupted,
}

impl From<InputError> for Stopped {
    fn from(e: InputError) -> Self {
        Stopped::Input(e)
    }
}

use crate::workload::MAX_JOBS;

/// The keys a `[[variant]]` may hold.
const VARIANT_KEYS: [&str; 6] = ["name", "platform", "policy", "workload", "qos", "run"];

impl ScenarioFile {
    /// Parses scenario `text`; `label` names it in errors.
    pub fn parse(label: &str, text: &str) -> Result<ScenarioFile, InputError> {
        Self::parse_watched(label, text, &mut || true).map_err(|stop| match stop {
            Stopped::Input(e) => e,
            Stopped::Interrupted => unreachable!("an unwatched parse goes on"),
        })
    }

    /// [`ScenarioFile::parse`], asking `go_on` once the text is read and before each variant
    /// is resolved, so that Ctrl-C stops a large file.
    pub fn parse_watched(
        label: &str,
        text: &str,
        go_on: &mut dyn FnMut() -> bool,
    ) -> Result<ScenarioFile, Stopped> {
        let mut file = Self::unresolved(label, text)?;
        file.check_size()
            .map_err(|m| InputError::new(label, file.lines.find(None, "variant"), m))?;
        file.resolve(go_on)?;
        Ok(file)
    }

    /// Refuses a file whose variants, each merged over the base, hold more than
    /// [`MAX_RESOLVED_KEYS`] keys in all.
    fn check_size(&self) -> Result<(), String> {
        let base = layers::key_count(&self.base);
        let keys = match self.overlays.len() {
            0 => base,
            n => self
                .overlays
                .iter()
                .fold(n.saturating_mul(base), |sum, (_, t)| {
                    sum.saturating_add(layers::key_count(t))
                }),
        };
        if keys <= MAX_RESOLVED_KEYS {
            return Ok(());
        }
        Err(match self.overlays.len() {
            0 => format!(
                "the file holds {keys} keys and array elements, more than the limit of \
                 {MAX_RESOLVED_KEYS}; split the file"
            ),
            n => format!(
                "[[variant]]: {n} variants over a base of {base} keys and array elements make \
                 {keys} to check, more than the limit of {MAX_RESOLVED_KEYS}; split the file"
            ),
        })
    }

    /// The file's base and variants as written, checked for what needs no merging.
    fn unresolved(label: &str, text: &str) -> Result<ScenarioFile, InputError> {
        let first = text.trim_start().chars().next();
        if matches!(first, Some('{') | Some('<')) {
            return Err(InputError::at(
                label,
                1,
                "expected a scenario TOML file (tables such as [platform.nvme] and [workload]; \
                 see docs/scenario.md), got JSON or XML",
            ));
        }
        let mut root: Table =
            toml::from_str(text).map_err(|e| error::from_toml(label, text, &e))?;
        let lines = Lines::index(text);
        // Before merging, every key is where the file wrote it: no variant lookup.
        let at = |path: &str, msg: String| InputError::new(label, lines.find(None, path), msg);
        let raw_variants = match root.remove("variant") {
            None => vec![],
            Some(Value::Array(a)) => a,
            Some(_) => {
                return Err(at(
                    "variant",
                    "`variant`: expected [[variant]] tables".into(),
                ))
            }
        };
        old_spelling(&root, "").map_err(|(p, m)| at(&p, m))?;
        if raw_variants.len() > MAX_VARIANTS {
            return Err(at(
                &format!("variant[{MAX_VARIANTS}]"),
                format!(
                    "[[variant]]: at most {MAX_VARIANTS} variants in one scenario, got {}",
                    raw_variants.len()
                ),
            ));
        }
        let mut overlays = Vec::with_capacity(raw_variants.len());
        let mut names = std::collections::HashMap::new();
        for (i, v) in raw_variants.into_iter().enumerate() {
            let here = format!("variant[{i}]");
            let Value::Table(mut t) = v else {
                return Err(at(&here, "`variant`: expected [[variant]] tables".into()));
            };
            if t.contains_key("apst") {
                return Err(at(
                    &format!("{here}.apst"),
                    "[[variant]] `apst = {...}` is the old spelling: put the fields under \
                     `[variant.policy.apst]` after this variant's `name`"
                        .into(),
                ));
            }
            old_spelling(&t, &format!("{here}.")).map_err(|(p, m)| at(&p, m))?;
            if let Some(k) = t.keys().find(|k| !VARIANT_KEYS.contains(&k.as_str())) {
                return Err(at(
                    &format!("{here}.{k}"),
                    format!(
                        "[[variant]]: unknown key `{k}`; expected `name` and any of the tables \
                         `platform`, `policy`, `workload`, `run`"
                    ),
                ));
            }
            let name = match t.remove("name") {
                Some(Value::String(s)) if !s.trim().is_empty() => s,
                _ => {
                    return Err(at(
                        &format!("{here}.name"),
                        "[[variant]]: expected `name = \"...\"` (a non-empty string)".into(),
                    ))
                }
            };
            if let Some(j) = names.insert(name.clone(), i) {
                return Err(at(
                    &format!("{here}.name"),
                    format!(
                        "[[variant]]: the name {} is already used by variant {}",
                        error::shown(&name),
                        j + 1
                    ),
                ));
            }
            overlays.push((name, t));
        }
        Ok(ScenarioFile {
            label: label.to_string(),
            base: root,
            overlays,
            lines,
            variants: vec![],
        })
    }

    /// The same file with the field at dotted `path` set to `value`, re-resolved and
    /// re-validated: one point of a sweep, or a keyword of `torpor.run`. The rule: an override
    /// applies to every variant. It is set in the base and in each variant that sets the field
    /// itself (a variant's own value would otherwise win the merge, and the override would be
    /// silently ignored), so every variant runs with it and checks it.
    pub fn with_field(&self, path: &str, value: Value) -> Result<ScenarioFile, InputError> {
        self.with_field_watched(path, value, &mut || true)
            .map_err(|stop| match stop {
                Stopped::Input(e) => e,
                Stopped::Interrupted => unreachable!("an unwatched parse goes on"),
            })
    }

    /// [`ScenarioFile::with_field`], asking `go_on` before each variant is resolved.
    pub fn with_field_watched(
        &self,
        path: &str,
        value: Value,
        go_on: &mut dyn FnMut() -> bool,
    ) -> Result<ScenarioFile, Stopped> {
        let mut file = self.clone();
        let shown = value.to_string();
        for (_, overlay) in &mut file.overlays {
            if sets_field(overlay, path) {
                set_field(overlay, path, value.clone())
                    .map_err(|m| InputError::whole(&self.label, m))?;
            }
        }
        set_field(&mut file.base, path, value).map_err(|m| InputError::whole(&self.label, m))?;
        // The value comes from the sweep, not from a line of the file.
        let whole = |m: &str| InputError::whole(&self.label, format!("{path} = {shown}: {m}"));
        file.check_size().map_err(|m| whole(&m))?;
        match file.resolve(go_on) {
            Err(Stopped::Input(e)) => Err(whole(&e.message).into()),
            other => other.map(|()| file),
        }
    }

    /// Each variant in order; one named "base" when the file has none.
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// The file's label, as errors print it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// An error at the line that supplied `path` (e.g. `platform.nvme.preset`) to variant
    /// `variant`, for problems found after parsing (an unknown preset, an unreadable file).
    pub fn error_at(&self, variant: usize, path: &str, message: impl Into<String>) -> InputError {
        let v = if self.overlays.is_empty() {
            None
        } else {
            Some(variant)
        };
        InputError::new(&self.label, self.lines.find(v, path), message)
    }

    fn resolve(&mut self, go_on: &mut dyn FnMut() -> bool) -> Result<(), Stopped> {
        let mut out = Vec::with_capacity(self.overlays.len().max(1));
        if !go_on() {
            return Err(Stopped::Interrupted);
        }
        if self.overlays.is_empty() {
            out.push(Variant {
                name: "base".into(),
                scenario: self.typed(None, self.base.clone())?,
            });
        }
        for (i, (name, overlay)) in self.overlays.iter().enumerate() {
            if i > 0 && !go_on() {
                return Err(Stopped::Interrupted);
            }
            let mut merged = self.base.clone();
            deep_merge(&mut merged, overlay);
            out.push(Variant {
                name: name.clone(),
                scenario: self.typed(Some(i), merged)?,
            });
        }
        self.variants = out;
        Ok(())
    }

    /// Deserializes and validates one merged tree; errors point at the line that supplied
    /// the key at fault.
    fn typed(&self, variant: Option<usize>, tree: Table) -> Result<Scenario, InputError> {
        let at = |path: &str, msg: String| {
            InputError::new(&self.label, self.lines.find(variant, path), msg)
        };
        misplaced(&tree).map_err(|(path, msg)| at(&path, msg))?;
        let scenario: Scenario =
            serde_path_to_error::deserialize(Value::Table(tree)).map_err(|e| {
                let path = e.path().to_string();
                let path = if path == "." { String::new() } else { path };
                let inner = e.into_inner().to_string();
                let message = inner.trim().replace('\n', "; ");
                let message = match message.rsplit_once("; in `") {
                    Some((m, _)) => m.to_string(),
                    None => message,
                };
                // An unknown key is reported at its table; point at the key itself.
                let key_path = match message.split('`').nth(1) {
                    Some(k) if message.starts_with("unknown field") => join(&path, k),
                    _ => path.clone(),
                };
                at(&key_path, describe(&path, &message))
            })?;
        validate(&scenario).map_err(|(path, msg)| at(&path, msg))?;
        Ok(scenario)
    }
}

/// Rust's names for integer types, as serde prints them, in words a user reads.
const INTEGER_WORDS: [(&str, &str); 5] = [
    ("expected u8", "expected a whole number from 0 to 255"),
    ("expected u16", "expected a whole number from 0 to 65535"),
    (
        "expected u32",
        "expected a whole number from 0 to 4294967295",
    ),
    (
        "expected u64",
        "expected a whole number from 0 to 18446744073709551615",
    ),
    ("expected f64", "expected a number"),
];

/// A serde message with the table it concerns, named as the user writes it.
fn describe(path: &str, message: &str) -> String {
    let mut message = message.to_string();
    for (rust, words) in INTEGER_WORDS {
        if message.ends_with(rust) {
            message = format!("{}{words}", &message[..message.len() - rust.len()]);
        }
    }
    let message = message.as_str();
    if let Some(field) = message.strip_prefix("missing field ") {
        return if path.is_empty() {
            format!(
                "missing top-level table {}: expected `[{}]`",
                field,
                field.trim_matches('`')
            )
        } else {
            format!("[{}]: missing field {field}", table_name(path))
        };
    }
    if path.is_empty() {
        message.to_string()
    } else {
        format!("`{path}`: {message}")
    }
}

/// `workload.job[1]` -> `workload.job` (as in the `[[workload.job]]` header).
fn table_name(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Keys of the spelling before `[platform.nvme]`, `[workload.replay]` and
/// `[variant.policy.apst]`: refused with the new spelling. `prefix` locates `table` in the
/// file (`""`, or `variant[i].`).
fn old_spelling(table: &Table, prefix: &str) -> Result<(), (String, String)> {
    let get = |t: &str, k: &str| table.get(t).and_then(|v| v.get(k));
    if let Some(v) = get("platform", "nvme").filter(|v| !v.is_table()) {
        let id = v.as_str().unwrap_or("<preset id>");
        return Err((
            format!("{prefix}platform.nvme"),
            format!(
                "`nvme = ...` under [platform] is the old spelling: write `[platform.nvme]` \
                 then `preset = {id:?}`"
            ),
        ));
    }
    if let Some(v) = get("platform", "nvme_file") {
        let f = v.as_str().unwrap_or("<path>");
        return Err((
            format!("{prefix}platform.nvme_file"),
            format!("`nvme_file` is the old spelling: write `[platform.nvme]` then `file = {f:?}`"),
        ));
    }
    if get("platform", "latency_scale").is_some() {
        return Err((
            format!("{prefix}platform.latency_scale"),
            "`latency_scale` now belongs to the drive: move it under `[platform.nvme]`".into(),
        ));
    }
    if let Some(v) = get("workload", "iolog") {
        let f = v.as_str().unwrap_or("<path>");
        return Err((
            format!("{prefix}workload.iolog"),
            format!(
                "`iolog = ...` is the old spelling: write `[workload.replay]` then `file = {f:?}` \
                 (with the replay options beside it)"
            ),
        ));
    }
    Ok(())
}

/// The platform each policy table (and `[run] timeline`) acts on. A table given for another
/// platform would be read and ignored, silently: refused instead.
const POLICY_PLATFORMS: [(&str, &str); 7] = [
    ("policy.apst", "nvme"),
    ("policy.cpuidle", "cpu"),
    ("policy.cpufreq", "cpu"),
    ("policy.devfreq", "ufs"),
    ("policy.boost", "ufs"),
    ("policy.hpb", "ufs"),
    ("run.timeline", "nvme|cpu"),
];

/// Refuses a policy table (or key) that the scenario's platform does not use.
fn misplaced(tree: &Table) -> Result<(), (String, String)> {
    let get = |path: &str| {
        let (table, key) = path.split_once('.').expect("dotted");
        tree.get(table)
            .and_then(Value::as_table)
            .and_then(|t| t.get(key))
    };
    let Some(platform) = tree.get("platform").and_then(Value::as_table) else {
        return Ok(());
    };
    let here = platform
        .keys()
        .filter(|k| *k != "irq")
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("]` and `[platform.");
    if here.is_empty() {
        return Ok(()); // `validate` asks for a platform.
    }
    for (path, wants) in POLICY_PLATFORMS {
        if get(path).is_some() && !wants.split('|').any(|w| platform.contains_key(w)) {
            let wants = wants.replace('|', "]` or `[platform.");
            let what = if path.starts_with("policy.") {
                format!("[{path}]")
            } else {
                format!("`{path}`")
            };
            return Err((
                path.to_string(),
                format!(
                    "{what} acts on `[platform.{wants}]`; this scenario runs \
                     `[platform.{here}]`, where it would be ignored: remove it"
                ),
            ));
        }
    }
    Ok(())
}

/// What serde cannot check: ranges, and which keys go together. Returns the path at fault.
fn validate(s: &Scenario) -> Result<(), (String, String)> {
    let p = &s.platform;
    let devices = s.devices();
    if let Some(d) = &s.workload.device {
        if !devices.contains(&d.as_str()) {
            let has = match devices.as_slice() {
                [] => "it has no device".to_string(),
                list => format!("it has `[platform.{}]`", list.join("]` and `[platform.")),
            };
            return Err((
                "workload.device".into(),
                format!(
                    "[workload] device: expected \"nvme\" or \"ufs\", a device of this \
                     scenario, got {} ({has})",
                    crate::error::shown(d)
                ),
            ));
        }
    } else if devices.len() > 1 && s.workload.has_device_io() {
        return Err((
            "workload".into(),
            "[workload] device: this scenario has two devices: say where the jobs, job file, \
             replay, iozone or workflow go: `device = \"nvme\"` or `device = \"ufs\"`"
                .into(),
        ));
    }
    if p.irq.is_some() && !(p.cpu.is_some() && (p.nvme.is_some() || p.ufs.is_some())) {
        return Err((
            "platform.irq".into(),
            "[platform.irq] maps a device's interrupts to CPUs: it needs `[platform.cpu]` beside \
             `[platform.nvme]` or `[platform.ufs]`"
                .into(),
        ));
    }
    match (&p.nvme, &p.cpu, &p.ufs) {
        (Some(nvme), None, None) => validate_nvme(s, nvme)?,
        (None, Some(cpu), None) => validate_cpu(s, cpu)?,
        (None, None, Some(ufs)) => validate_ufs(s, ufs)?,
        (Some(nvme), Some(cpu), None) => {
            validate_cpu_platform(s, cpu)?;
            validate_nvme(s, nvme)?;
            validate_system(s)?;
        }
        (None, Some(cpu), Some(ufs)) => {
            validate_cpu_platform(s, cpu)?;
            validate_ufs(s, ufs)?;
            validate_system(s)?;
        }
        (Some(nvme), cpu, Some(ufs)) => {
            if let Some(cpu) = cpu {
                validate_cpu_platform(s, cpu)?;
            }
            validate_nvme(s, nvme)?;
            validate_ufs(s, ufs)?;
            if cpu.is_some() {
                validate_system(s)?;
            }
        }
        (None, None, None) => {
            return Err((
                "platform".into(),
                "[platform]: expected `[platform.nvme]` (a drive), `[platform.ufs]` (a UFS \
                 device) or `[platform.cpu]` (CPUs)"
                    .into(),
            ))
        }
    }
    if s.run.timeline_limit > MAX_TIMELINE_LIMIT {
        return Err((
            "run.timeline_limit".into(),
            format!(
                "[run] timeline_limit: at most {MAX_TIMELINE_LIMIT} entries, got {}",
                s.run.timeline_limit
            ),
        ));
    }
    if s.run.duration == Some(Nanos::ZERO) {
        return Err((
            "run.duration".into(),
            "[run] duration: expected a positive duration such as \"60s\"".into(),
        ));
    }
    Ok(())
}

/// The most `[[workload.task]]`s one variant may run.
pub const MAX_TASKS: usize = 4096;

/// A CPU-only scenario: the CPUs, and tasks as its only workload.
fn validate_cpu(s: &Scenario, cpu: &CpuPlatformSpec) -> Result<(), (String, String)> {
    validate_cpu_platform(s, cpu)?;
    let w = &s.workload;
    if w.apst_workflow.is_some() || !w.jobs.is_empty() || w.replay.is_some() || w.fio.is_some() {
        return Err((
            "workload".into(),
            "[workload]: IO (`apst_workflow`, `[[workload.job]]`, `fio`, `[workload.replay]`) \
             needs a device: `[platform.nvme]` or `[platform.ufs]`; CPUs alone run \
             `[[workload.task]]`s"
                .into(),
        ));
    }
    if w.iozone.is_some() {
        return Err((
            "workload.iozone".into(),
            "[workload.iozone]: iozone reads a storage device: it needs `[platform.nvme]` or \
             `[platform.ufs]`; CPUs run `[[workload.task]]`s"
                .into(),
        ));
    }
    if w.tasks.is_empty() {
        return Err((
            "workload".into(),
            "[workload]: expected `[[workload.task]]` tables (tasks pinned to CPUs)".into(),
        ));
    }
    task_devices(s, &[])
}

/// CPUs with one or two devices: the interrupt maps fit the devices, and every task's IO goes
/// to one of them.
fn validate_system(s: &Scenario) -> Result<(), (String, String)> {
    let devices = s.devices();
    if let Some(irq) = &s.platform.irq {
        for device in &devices {
            let map = irq.map_for(device, &devices)?;
            if *device == "ufs" && map == Some(crate::cpu::system::IrqMap::Managed) {
                let path = match irq.ufs {
                    Some(_) => "platform.irq.ufs.mode",
                    None => "platform.irq.mode",
                };
                return Err((
                    path.into(),
                    "[platform.irq] mode \"managed\": torpor's UFS host has one transfer \
                     request list and one interrupt (no MCQ): use \"fixed\" or \"round-robin\""
                        .into(),
                ));
            }
        }
    }
    task_devices(s, &devices)
}

/// Every task's `[workload.task.io]` names one of the scenario's `devices`.
fn task_devices(s: &Scenario, devices: &[&str]) -> Result<(), (String, String)> {
    for (i, t) in s.workload.tasks.iter().enumerate() {
        let Some(io) = &t.io else { continue };
        if !devices.contains(&io.device.as_str()) {
            let has = match devices {
                [] => "it has no device".to_string(),
                [d] => format!("its device is `[platform.{d}]`"),
                list => format!(
                    "its devices are `[platform.{}]`",
                    list.join("]` and `[platform.")
                ),
            };
            return Err((
                format!("workload.task[{i}].io.device"),
                format!(
                    "[[workload.task]] {}: `io.device`: this scenario has no device {}: {has}",
                    t.name,
                    crate::error::shown(&io.device)
                ),
            ));
        }
    }
    Ok(())
}

/// `[platform.cpu]` itself, the governor, the tasks and their PM QoS requests.
fn validate_cpu_platform(s: &Scenario, cpu: &CpuPlatformSpec) -> Result<(), (String, String)> {
    match (&cpu.preset, &cpu.file) {
        (Some(_), Some(_)) => {
            return Err((
                "platform.cpu.file".into(),
                "[platform.cpu]: give either `preset` or `file`, not both".into(),
            ))
        }
        (None, None) => {
            return Err((
                "platform.cpu".into(),
                "[platform.cpu]: expected `preset = \"<id>\"` (see `torpor devices`) or \
                 `file = \"<platform TOML>\"` (see `torpor probe`)"
                    .into(),
            ))
        }
        _ => {}
    }
    if !HZ_RANGE.contains(&cpu.hz) {
        return Err((
            "platform.cpu.hz".into(),
            format!(
                "[platform.cpu] hz: expected CONFIG_HZ in {}..={} (100, 250, 300 and 1000 are \
                 the kernel's choices), got {}",
                HZ_RANGE.start(),
                HZ_RANGE.end(),
                cpu.hz
            ),
        ));
    }
    s.policy.cpufreq.resolved()?;
    GovernorName::parse(&s.policy.cpuidle.governor).map_err(|m| {
        (
            "policy.cpuidle.governor".into(),
            format!("[policy.cpuidle] {m}"),
        )
    })?;
    let w = &s.workload;
    if w.tasks.len() > MAX_TASKS {
        return Err((
            format!("workload.task[{MAX_TASKS}]"),
            format!(
                "[[workload.task]]: at most {MAX_TASKS} tasks in one variant, got {}",
                w.tasks.len()
            ),
        ));
    }
    crate::cpu::task::resolve(&w.tasks).map_err(|e| {
        (
            format!("workload.task[{}].{}", e.task, e.key),
            format!(
                "[[workload.task]] {}: `{}`: {}",
                w.tasks[e.task].name, e.key, e.message
            ),
        )
    })?;
    qos::resolve(&s.qos, &w.tasks)?;
    qos::check_before_end(&s.qos, s.run.duration.unwrap_or(DEFAULT_DURATION))?;
    Ok(())
}

fn validate_ufs(s: &Scenario, ufs: &UfsPlatformSpec) -> Result<(), (String, String)> {
    let cpus = s.platform.cpu.is_some();
    // Beside a drive, the requests act on it (checked with it).
    let drive = s.platform.nvme.is_some();
    if !s.qos.requests.is_empty() && !cpus && !drive {
        return Err((
            "qos.request".into(),
            "[[qos.request]] acts on `[platform.cpu]` (CPU latency) or `[platform.nvme]` (the \
             controller's latency tolerance); this scenario runs `[platform.ufs]`, where it \
             would be ignored: remove it"
                .into(),
        ));
    }
    if !HZ_RANGE.contains(&ufs.hz) {
        return Err((
            "platform.ufs.hz".into(),
            format!(
                "[platform.ufs] hz: expected CONFIG_HZ in {}..={} (100, 250, 300 and 1000 are \
                 the kernel's choices), got {}",
                HZ_RANGE.start(),
                HZ_RANGE.end(),
                ufs.hz
            ),
        ));
    }
    let d = &s.policy.devfreq;
    if let Some(ms) = d.polling_ms {
        if !(1..=60_000).contains(&ms) {
            return Err((
                "policy.devfreq.polling_ms".into(),
                format!("[policy.devfreq] polling_ms: expected 1..=60000 ms, got {ms}"),
            ));
        }
    }
    // Checked on the resolved pair (0 is the governor's default, as simple_ondemand reads
    // it): simple_ondemand refuses a bad pair at every poll (-EINVAL) and the frequency would
    // never move, silently.
    let p = d
        .resolved(1, 2, 250)
        .unwrap_or_else(|| ScalingParams::of(d.profile, 1, 2));
    let (up, down) = (p.ondemand.upthreshold, p.ondemand.downdifferential);
    if up > 100 || up < down {
        let key = if d.upthreshold.is_some() {
            "upthreshold"
        } else {
            "downdifferential"
        };
        return Err((
            format!("policy.devfreq.{key}"),
            format!(
                "[policy.devfreq] {key}: expected downdifferential <= upthreshold <= 100 (0 \
                 is simple_ondemand's default, 90 and 5; it refuses anything else at every poll), \
                 got upthreshold {up}, downdifferential {down}"
            ),
        ));
    }
    if let Some(g) = d.min_gear {
        if !(1..=crate::storage::ufs::service::MAX_GEAR).contains(&g) {
            return Err((
                "policy.devfreq.min_gear".into(),
                format!(
                    "[policy.devfreq] min_gear: expected an HS gear 1..={}, got {g}",
                    crate::storage::ufs::service::MAX_GEAR
                ),
            ));
        }
    }
    if let Some(hpb) = &s.policy.hpb {
        hpb.check()?;
    }
    let w = &s.workload;
    if !w.tasks.is_empty() && !cpus {
        return Err((
            "workload".into(),
            "[workload]: `[[workload.task]]` runs on `[platform.cpu]`; a UFS device takes IO \
             (`[[workload.job]]`, `fio`, `[workload.replay]`, `[workload.iozone]`)"
                .into(),
        ));
    }
    if w.apst_workflow.is_some() && (!drive || w.device.as_deref() == Some("ufs")) {
        return Err((
            "workload.apst_workflow".into(),
            "[workload] apst_workflow: seed 000's workflows are NVMe APST experiments; on UFS \
             write the jobs (`[[workload.job]]` or `fio`)"
                .into(),
        ));
    }
    // Beside a drive, the workload as a whole is checked with the drive.
    if !drive
        && w.jobs.is_empty()
        && w.replay.is_none()
        && w.fio.is_none()
        && w.iozone.is_none()
        && w.tasks.is_empty()
    {
        return Err((
            "workload".into(),
            "[workload]: expected `[[workload.job]]`, `fio = \"<job file>\"`, \
             `[workload.replay]` or `[workload.iozone]` (or, beside `[platform.cpu]`, \
             `[[workload.task]]`s)"
                .into(),
        ));
    }
    validate_io(w)
}

fn validate_nvme(s: &Scenario, nvme: &NvmePlatform) -> Result<(), (String, String)> {
    let cpus = s.platform.cpu.is_some();
    // Beside CPUs, `[[qos.request]]` acts on the CPUs (checked with them).
    if !cpus {
        qos::resolve_nvme(&s.qos)?;
        if let Some(until) = s.run.duration {
            qos::check_before_end(&s.qos, until)?;
        }
    }
    match (&nvme.preset, &nvme.file) {
        (Some(_), Some(_)) => {
            return Err((
                "platform.nvme.file".into(),
                "[platform.nvme]: give either `preset` or `file`, not both".into(),
            ))
        }
        (None, None) => {
            return Err((
                "platform.nvme".into(),
                "[platform.nvme]: expected `preset = \"<id>\"` (see `torpor devices`) or \
                 `file = \"<nvme id-ctrl JSON or smartctl -a text>\"`"
                    .into(),
            ))
        }
        _ => {}
    }
    let scale = nvme.latency_scale;
    if !(scale.is_finite() && scale > 0.0 && scale <= 1000.0) {
        return Err((
            "platform.nvme.latency_scale".into(),
            format!("[platform.nvme] latency_scale: expected a factor in (0, 1000], got {scale}"),
        ));
    }
    let share = nvme.transition_power_share;
    if !(0.0..=1.0).contains(&share) {
        return Err((
            "platform.nvme.transition_power_share".into(),
            format!(
                "[platform.nvme] transition_power_share: expected a share in [0, 1] (0: idle \
                 power, 1: maximum power), got {share}"
            ),
        ));
    }
    for (table, map) in [
        ("idle_power_mw", &nvme.idle_power_mw),
        ("active_power_mw", &nvme.active_power_mw),
    ] {
        for (k, &mw) in map {
            let path = format!("platform.nvme.{table}.{k}");
            if power_state_index(k).is_none() {
                return Err((
                    path,
                    format!("[platform.nvme] {table}: expected keys PS0, PS1, ..., got `{k}`"),
                ));
            }
            if !(mw.is_finite() && mw >= 0.0) {
                return Err((
                    path,
                    format!("[platform.nvme] {table}.{k}: expected a power >= 0 mW, got {mw}"),
                ));
            }
        }
    }
    let w = &s.workload;
    if let Some(n) = w.apst_workflow {
        if !(1..=7).contains(&n) {
            return Err((
                "workload.apst_workflow".into(),
                format!("[workload] apst_workflow: expected 1..=7, got {n}"),
            ));
        }
    }
    if w.apst_workflow.is_none()
        && w.jobs.is_empty()
        && w.replay.is_none()
        && w.fio.is_none()
        && w.iozone.is_none()
        && w.tasks.is_empty()
    {
        return Err((
            "workload".into(),
            "[workload]: expected `apst_workflow`, `[[workload.job]]` tables, `fio` (a job \
             file), `[workload.replay]` or `[workload.iozone]` (or, beside `[platform.cpu]`, \
             `[[workload.task]]`s)"
                .into(),
        ));
    }
    if !w.tasks.is_empty() && !cpus {
        return Err((
            "workload.task".into(),
            "[[workload.task]]: tasks run on CPUs: they need `[platform.cpu]`".into(),
        ));
    }
    validate_io(w)
}

/// The IO workloads' own checks, for a drive or a UFS device: the jobs (at most [`MAX_JOBS`],
/// counting iozone's threads), the replay's options, iozone's shape.
fn validate_io(w: &WorkloadSpec) -> Result<(), (String, String)> {
    if w.jobs.len() > MAX_JOBS {
        return Err((
            format!("workload.job[{MAX_JOBS}]"),
            format!(
                "[[workload.job]]: at most {MAX_JOBS} jobs in one variant, got {}",
                w.jobs.len()
            ),
        ));
    }
    for (i, job) in w.jobs.iter().enumerate() {
        // Reports and notes name jobs: each needs a name of its own.
        if job.name.trim().is_empty() || w.jobs[..i].iter().any(|o| o.name == job.name) {
            return Err((
                format!("workload.job[{i}].name"),
                format!(
                    "[[workload.job]]: expected a name of its own, got {}{}",
                    error::shown(&job.name),
                    if job.name.trim().is_empty() {
                        ""
                    } else {
                        ", already used"
                    }
                ),
            ));
        }
        job.validate().map_err(|e| {
            (
                format!("workload.job[{i}].{}", e.key),
                format!("[[workload.job]] {}: `{}`: {}", job.name, e.key, e.message),
            )
        })?;
    }
    if let Some(r) = &w.replay {
        r.options.validate().map_err(|e| {
            (
                format!("workload.replay.{}", e.key),
                format!("[workload.replay] `{}`: {}", e.key, e.message),
            )
        })?;
    }
    if let Some(io) = &w.iozone {
        io.validate().map_err(|e| {
            (
                format!("workload.iozone.{}", e.key),
                format!("[workload.iozone] `{}`: {}", e.key, e.message),
            )
        })?;
        let threads = io.threads as usize;
        if w.jobs.len() + threads > MAX_JOBS {
            return Err((
                "workload.iozone.threads".into(),
                format!(
                    "[workload.iozone] `threads`: at most {MAX_JOBS} jobs in one variant, \
                     counting each thread; got {threads} beside {} [[workload.job]]s",
                    w.jobs.len()
                ),
            ));
        }
    }
    Ok(())
}

/// `PS3` -> 3.
pub fn power_state_index(key: &str) -> Option<usize> {
    key.strip_prefix("PS")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
}

/// Whether the table `root` holds a value at dotted `path` (a variant setting the field).
fn sets_field(root: &Table, path: &str) -> bool {
    let mut table = root;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        match (table.get(key), keys.peek()) {
            (Some(_), None) => return true,
            (Some(Value::Table(t)), Some(_)) => table = t,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests;
