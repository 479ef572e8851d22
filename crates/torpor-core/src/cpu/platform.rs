//! A CPU platform: clusters of CPUs, each CPU's idle states as its cpuidle driver registers
//! them, its capacity, and the power of each state and operating point.
//!
//! One type serves the built-in presets (`presets/cpu/*.toml`), platform files a user writes or
//! `torpor probe` reads from sysfs, and the `[platform.cpu]` table of a scenario.
//!
//! Cluster states: on PSCI platforms a cluster state is listed in every CPU's table (deeper than
//! the CPU's own states); a CPU's governor may choose it, but the cluster only powers down when
//! every CPU of the cluster is in it (or deeper). `level` records which kind a state is, so the
//! simulation can charge a cluster state's power only while the whole cluster sits in it.
//!
//! Power figures rarely have a public source for idle states: each is a [`PowerMw`], either a
//! sourced number or an estimate with its range.

use serde::{Deserialize, Serialize};

use crate::cpuidle::{IdleState, Platform, MAX_STATES};
use crate::error::InputError;

use super::wake_path::{WakePath, MAX_COST_US};

/// The most CPUs Linux numbers (its largest `CONFIG_NR_CPUS`): CPU numbers stay below it.
pub const MAX_CPUS: u32 = 8192;

pub use crate::cpuidle::MAX_CAPACITY;

/// A power in mW: a figure with its source, or an estimate with the range it may lie in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PowerMw {
    Sourced {
        mw: f64,
        source: String,
    },
    Estimate {
        low: f64,
        central: f64,
        high: f64,
        source: String,
    },
}

impl PowerMw {
    /// The value runs use.
    pub fn central(&self) -> f64 {
        match self {
            PowerMw::Sourced { mw, .. } => *mw,
            PowerMw::Estimate { central, .. } => *central,
        }
    }

    /// (low, high): equal to the value for a sourced figure.
    pub fn range(&self) -> (f64, f64) {
        match self {
            PowerMw::Sourced { mw, .. } => (*mw, *mw),
            PowerMw::Estimate { low, high, .. } => (*low, *high),
        }
    }

    pub fn is_estimate(&self) -> bool {
        matches!(self, PowerMw::Estimate { .. })
    }

    fn check(&self, what: &str) -> Result<(), String> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        match self {
            PowerMw::Sourced { mw, .. } if !ok(*mw) => {
                Err(format!("{what}: expected a power in mW >= 0, got {mw}"))
            }
            PowerMw::Estimate {
                low, central, high, ..
            } if !(ok(*low) && ok(*high) && low <= central && central <= high) => Err(format!(
                "{what}: expected an estimate with 0 <= low <= central <= high, got {low} / \
                 {central} / {high}"
            )),
            _ => Ok(()),
        }
    }
}

/// Whether a state powers down one CPU or its whole cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateLevel {
    Cpu,
    Cluster,
}

/// One idle state as a CPU's cpuidle driver registers it (sysfs `cpuidle/stateN`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleStateSpec {
    pub name: String,
    /// sysfs `latency`: the exit latency the kernel uses (for PSCI: DT entry + exit latency);
    /// at most the kernel's `unsigned int` ([`crate::cpuidle::MAX_STATE_US`]).
    #[serde(deserialize_with = "crate::cpuidle::state_us")]
    pub exit_latency_us: u64,
    /// sysfs `residency`, bounded as `exit_latency_us` is.
    #[serde(deserialize_with = "crate::cpuidle::state_us")]
    pub target_residency_us: u64,
    #[serde(default)]
    pub polling: bool,
    #[serde(default = "cpu_level")]
    pub level: StateLevel,
    /// Disabled by default (`CPUIDLE_FLAG_OFF`, or sysfs `disable` = 1 when probed).
    #[serde(default)]
    pub disabled: bool,
    /// The hardware's real time to enter the state, where a source gives it (a DT's
    /// `entry-latency-us`); otherwise entry takes no time. An interrupt during the entry waits
    /// for it to complete, then the exit follows at once (`cpu::wake_path`).
    #[serde(default)]
    pub entry_us: Option<f64>,
    /// The hardware's real exit time, where a source gives it (a DT's `exit-latency-us`, of
    /// which `exit_latency_us` is the sum with the entry); otherwise the platform's
    /// `[wakeup.exit]` fraction of `exit_latency_us`.
    #[serde(default)]
    pub exit_us: Option<f64>,
    /// Power while in the state (for a cluster state: the cluster's, see the module doc).
    pub power_mw: Option<PowerMw>,
    #[serde(default)]
    pub source: String,
}

fn cpu_level() -> StateLevel {
    StateLevel::Cpu
}

/// An operating point: frequency, voltage where known, and the CPU's active power there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opp {
    pub freq_khz: u64,
    /// The OPP's supply voltage (a DT's `opp-microvolt`, firmware's table), where a source gives
    /// it: with the cluster's `dynamic_power_coefficient` it fixes the kernel's energy model.
    #[serde(default)]
    pub microvolt: Option<u32>,
    /// `None` where no source gives the power in mW (a DT OPP table without voltages, an energy
    /// model in relative units): the frequencies still fix the capacities and the DVFS steps.
    pub power_mw: Option<PowerMw>,
}

/// A time in ns: a figure with its source, or an estimate with the range it may lie in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LatencyNs {
    Sourced {
        ns: u64,
        source: String,
    },
    Estimate {
        low: u64,
        central: u64,
        high: u64,
        source: String,
    },
}

impl LatencyNs {
    /// The value runs use.
    pub fn central(&self) -> u64 {
        match self {
            LatencyNs::Sourced { ns, .. } => *ns,
            LatencyNs::Estimate { central, .. } => *central,
        }
    }

    fn check(&self, what: &str) -> Result<(), String> {
        let max = u64::from(u32::MAX);
        match self {
            LatencyNs::Sourced { ns, .. } if *ns > max => Err(format!(
                "{what}: expected at most {max} ns (an unsigned int), got {ns}"
            )),
            LatencyNs::Estimate {
                low, central, high, ..
            } if !(low <= central && central <= high && *high <= max) => Err(format!(
                "{what}: expected an estimate with low <= central <= high <= {max} ns, got {low} / \
                 {central} / {high}"
            )),
            _ => Ok(()),
        }
    }
}

/// A cluster's frequency domain as its cpufreq driver sets it up (`[cluster.cpufreq]`); the
/// frequencies themselves are the cluster's OPPs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpufreqSpec {
    /// `cpuinfo.transition_latency`: the slowest OPP switch (cpufreq-dt: the largest OPP
    /// `clock-latency-ns`); none: `CPUFREQ_ETERNAL`, what cpufreq-dt sets without one.
    #[serde(default)]
    pub transition_latency: Option<LatencyNs>,
    /// The CPU node's `dynamic-power-coefficient`, uW/MHz/V^2.
    #[serde(default)]
    pub dynamic_power_coefficient: Option<u32>,
    /// A `scaling_min_freq` the platform starts with, kHz, within the OPPs' range.
    #[serde(default)]
    pub scaling_min_khz: Option<u64>,
    /// A `scaling_max_freq` the platform starts with, kHz, within the OPPs' range.
    #[serde(default)]
    pub scaling_max_khz: Option<u64>,
    /// The driver switches frequency in the scheduler's context (`fast_switch_possible`).
    #[serde(default)]
    pub fast_switch: bool,
    /// The driver, and where the figures above come from.
    #[serde(default)]
    pub source: String,
}

/// CPUs that share an idle-state table, a capacity and (where the platform has them) cluster
/// states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub name: String,
    pub cpus: Vec<u32>,
    #[serde(default)]
    pub core: String,
    /// `arch_scale_cpu_capacity()` of each CPU (0..=1024).
    pub capacity: u64,
    #[serde(rename = "state")]
    pub states: Vec<IdleStateSpec>,
    #[serde(default, rename = "opp")]
    pub opps: Vec<Opp>,
    #[serde(default)]
    pub cpufreq: Option<CpufreqSpec>,
}

/// A whole platform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuPlatform {
    pub id: String,
    pub name: String,
    pub source: String,
    #[serde(rename = "cluster")]
    pub clusters: Vec<ClusterSpec>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// The wake-up path's costs and the states' real exits (`[wakeup]`); none: a free path
    /// and the declared exits.
    #[serde(default)]
    pub wakeup: Option<WakePath>,
}

impl CpuPlatform {
    /// Parses and checks a platform TOML (`file` names it in errors).
    pub fn parse(file: &str, text: &str) -> Result<CpuPlatform, InputError> {
        let de = toml::Deserializer::new(text);
        let platform: CpuPlatform = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let mut err = crate::error::from_toml(file, text, &inner);
            if path != "." && !err.message.contains(&path) {
                err.message = format!("{path}: {}", err.message);
            }
            err
        })?;
        platform.check().map_err(|(fault, m)| {
            let line = match fault {
                Fault::Platform => wakeup_line(text, &m),
                Fault::Cluster(k) => cluster_line(text, k),
                Fault::Opp(k, j, key) => {
                    key_line(text, k, Some(("opp", j)), key).or_else(|| cluster_line(text, k))
                }
                Fault::Cpufreq(k, key) => {
                    key_line(text, k, None, key).or_else(|| cluster_line(text, k))
                }
            };
            InputError::new(file, line, m)
        })?;
        Ok(platform)
    }

    /// The rules a cpuidle driver, cpufreq and the scheduler keep; on failure, what is at fault
    /// and the message.
    pub fn check(&self) -> Result<(), (Fault, String)> {
        if let Some(w) = &self.wakeup {
            w.check().map_err(|m| (Fault::Platform, m))?;
        }
        if self.clusters.is_empty() {
            return Err((Fault::Platform, "expected at least one [[cluster]]".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (k, c) in self.clusters.iter().enumerate() {
            let at = |m: String| (Fault::Cluster(k), format!("cluster {:?}: {m}", c.name));
            if c.cpus.is_empty() {
                return Err(at("expected at least one CPU in `cpus`".into()));
            }
            for &cpu in &c.cpus {
                // Per-CPU tables are indexed by CPU number: an id past Linux's largest
                // CONFIG_NR_CPUS would size them by the id, not by the CPUs there are.
                if cpu >= MAX_CPUS {
                    return Err(at(format!(
                        "CPU {cpu}: expected CPU numbers below {} (Linux's largest \
                         CONFIG_NR_CPUS)",
                        MAX_CPUS
                    )));
                }
                if !seen.insert(cpu) {
                    return Err(at(format!("CPU {cpu} is in two clusters")));
                }
            }
            if c.capacity > MAX_CAPACITY {
                return Err(at(format!(
                    "expected a capacity in 0..={MAX_CAPACITY}, got {}",
                    c.capacity
                )));
            }
            if c.states.is_empty() || c.states.len() > MAX_STATES {
                return Err(at(format!(
                    "expected 1 to {MAX_STATES} idle states (CPUIDLE_STATE_MAX), got {}",
                    c.states.len()
                )));
            }
            for (i, s) in c.states.iter().enumerate() {
                if i > 0 && s.target_residency_us < c.states[i - 1].target_residency_us {
                    return Err(at(format!(
                        "state {i} ({:?}): expected states ordered by target residency, shallow \
                         to deep",
                        s.name
                    )));
                }
                if s.polling && i > 0 {
                    return Err(at(format!(
                        "state {i} ({:?}): only state 0 may poll",
                        s.name
                    )));
                }
                if let Some(p) = &s.power_mw {
                    p.check(&format!("state {:?} power_mw", s.name))
                        .map_err(at)?;
                }
                for (key, v) in [("entry_us", s.entry_us), ("exit_us", s.exit_us)] {
                    if let Some(v) = v {
                        if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
                            return Err(at(format!(
                                "state {:?} {key}: expected 0 to {MAX_COST_US} us, got {v}",
                                s.name
                            )));
                        }
                    }
                }
                if s.exit_us.is_some_and(|v| v > s.exit_latency_us as f64) {
                    return Err(at(format!(
                        "state {:?} exit_us: expected at most the declared exit_latency_us ({}), \
                         the worst case it is part of",
                        s.name, s.exit_latency_us
                    )));
                }
            }
            c.check_opps().map_err(|(j, key, m)| {
                (Fault::Opp(k, j, key), format!("cluster {:?}: {m}", c.name))
            })?;
            if let Some(f) = &c.cpufreq {
                c.check_cpufreq(f).map_err(|(key, m)| {
                    (Fault::Cpufreq(k, key), format!("cluster {:?}: {m}", c.name))
                })?;
            }
        }
        Ok(())
    }

    /// The cluster holding `cpu`.
    pub fn cluster_of(&self, cpu: u32) -> Option<&ClusterSpec> {
        self.clusters.iter().find(|c| c.cpus.contains(&cpu))
    }

    /// Every CPU, in ascending order.
    pub fn cpus(&self) -> Vec<u32> {
        let mut all: Vec<u32> = self.clusters.iter().flat_map(|c| c.cpus.clone()).collect();
        all.sort_unstable();
        all
    }
}

/// What a failed check is about, so that its error points at the line that says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The platform as a whole, or the `[wakeup]` figure its message names.
    Platform,
    /// The k-th `[[cluster]]`.
    Cluster(usize),
    /// A key of the k-th cluster's j-th `[[cluster.opp]]`.
    Opp(usize, usize, &'static str),
    /// A key of the k-th cluster's `[cluster.cpufreq]`.
    Cpufreq(usize, &'static str),
}

/// The line of the k-th `[[cluster]]` header.
fn cluster_line(text: &str, k: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[cluster]]"))
        .nth(k)
        .map(|(i, _)| i + 1)
}

/// The line of `key` in the k-th `[[cluster]]`: with `inner`, in the j-th entry of its array
/// `inner.0`; without it, in its table `cpufreq`. Read from the document's spans; `None` when
/// the layout is not one this walks (the caller falls back to the cluster's header).
fn key_line(text: &str, k: usize, inner: Option<(&str, usize)>, key: &str) -> Option<usize> {
    use toml_edit::{ImDocument, Item, TableLike};
    fn nth(item: &Item, n: usize) -> Option<&dyn TableLike> {
        match item {
            Item::ArrayOfTables(a) => a.get(n).map(|t| t as &dyn TableLike),
            Item::Value(v) => v
                .as_array()?
                .get(n)?
                .as_inline_table()
                .map(|t| t as &dyn TableLike),
            _ => None,
        }
    }
    let doc = ImDocument::parse(text).ok()?;
    let cluster = nth(doc.as_table().get("cluster")?, k)?;
    let table = match inner {
        Some((name, j)) => nth(cluster.get(name)?, j)?,
        None => cluster.get("cpufreq")?.as_table_like()?,
    };
    let span = table.key(key)?.span().or_else(|| table.get(key)?.span())?;
    Some(InputError::line_of_offset(text, span.start))
}

/// The line of the `[wakeup]` figure a check message names (`[wakeup.KEY]: ...`): its own
/// table header, or its key inside `[wakeup]`.
fn wakeup_line(text: &str, message: &str) -> Option<usize> {
    let key = message.strip_prefix("[wakeup.")?.split(']').next()?;
    let header = format!("[wakeup.{key}]");
    let mut in_wakeup = false;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim_start();
        if l.starts_with('[') {
            if l.starts_with(&header) {
                return Some(i + 1);
            }
            in_wakeup = l.starts_with("[wakeup]");
        } else if in_wakeup && l.split('=').next().is_some_and(|k| k.trim() == key) {
            return Some(i + 1);
        }
    }
    None
}

impl ClusterSpec {
    /// The OPP table's rules: frequencies rising, within what cpufreq holds (an unsigned kHz
    /// that frequency QoS, an s32, can cap), voltages above 0, powers valid and, once one OPP
    /// has a power above 0, none higher at 0 (an energy model refuses a state without power).
    /// On failure, the OPP's index, the key at fault and the message.
    fn check_opps(&self) -> Result<(), (usize, &'static str, String)> {
        let max_khz = i32::MAX as u64;
        let mut powered: Option<(u64, f64)> = None;
        for (j, o) in self.opps.iter().enumerate() {
            let f = o.freq_khz;
            if f == 0 || f > max_khz {
                return Err((
                    j,
                    "freq_khz",
                    format!("OPP {f} kHz: expected a frequency in 1..={max_khz} kHz"),
                ));
            }
            if j > 0 && f <= self.opps[j - 1].freq_khz {
                return Err((
                    j,
                    "freq_khz",
                    format!(
                        "OPP {f} kHz: expected OPPs in rising frequency order (after {} kHz)",
                        self.opps[j - 1].freq_khz
                    ),
                ));
            }
            if o.microvolt == Some(0) {
                return Err((
                    j,
                    "microvolt",
                    format!("OPP {f} kHz: expected a voltage above 0 uV"),
                ));
            }
            if let Some(p) = &o.power_mw {
                p.check(&format!("OPP {f} kHz power_mw"))
                    .map_err(|m| (j, "power_mw", m))?;
                match powered {
                    Some((at, mw)) if p.central() == 0.0 => {
                        return Err((
                            j,
                            "power_mw",
                            format!(
                                "OPP {f} kHz power_mw: expected a power above 0 mW, as the lower \
                                 OPP {at} kHz has {mw} mW"
                            ),
                        ))
                    }
                    None if p.central() > 0.0 => powered = Some((f, p.central())),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// `[cluster.cpufreq]`'s rules: it needs OPPs; its limits lie within their range, the floor
    /// not above the cap. On failure, the key at fault and the message.
    fn check_cpufreq(&self, f: &CpufreqSpec) -> Result<(), (&'static str, String)> {
        let (Some(lo), Some(hi)) = (self.opps.first(), self.opps.last()) else {
            return Err((
                "source",
                "[cluster.cpufreq]: expected the cluster's OPPs ([[cluster.opp]])".into(),
            ));
        };
        let (lo, hi) = (lo.freq_khz, hi.freq_khz);
        for (key, v) in [
            ("scaling_min_khz", f.scaling_min_khz),
            ("scaling_max_khz", f.scaling_max_khz),
        ] {
            if let Some(v) = v.filter(|v| !(lo..=hi).contains(v)) {
                return Err((
                    key,
                    format!("cpufreq {key}: expected a frequency within the OPP table, {lo}..={hi} kHz, got {v}"),
                ));
            }
        }
        if let (Some(min), Some(max)) = (f.scaling_min_khz, f.scaling_max_khz) {
            if min > max {
                return Err((
                    "scaling_min_khz",
                    format!("cpufreq scaling_min_khz: expected at most scaling_max_khz ({max}), got {min}"),
                ));
            }
        }
        if let Some(t) = &f.transition_latency {
            t.check("cpufreq transition_latency")
                .map_err(|m| ("transition_latency", m))?;
        }
        if f.dynamic_power_coefficient == Some(0) {
            return Err((
                "dynamic_power_coefficient",
                "cpufreq dynamic_power_coefficient: expected a coefficient above 0 uW/MHz/V^2 (the kernel registers no energy model with 0)".into(),
            ));
        }
        Ok(())
    }

    /// The energy (mJ) of entering and leaving each state, which no datasheet states: derived
    /// from the definition of target residency, the stay at which a state starts to save
    /// energy over the next shallower one (spec-cpu.md §1.1):
    /// `E(s) = E(s-1) + max(0, P(s-1) - P(s)) x target_residency(s)`, `E(0) = 0`, with each
    /// state's own power figure (0 where it has none).
    pub fn transition_mj(&self) -> Vec<f64> {
        let mw = |s: &IdleStateSpec| s.power_mw.as_ref().map_or(0.0, PowerMw::central);
        let mut out = vec![0.0; self.states.len()];
        for j in 1..self.states.len() {
            let saved = (mw(&self.states[j - 1]) - mw(&self.states[j])).max(0.0);
            // mW x us = 1e-6 mJ.
            out[j] = out[j - 1] + saved * self.states[j].target_residency_us as f64 * 1e-6;
        }
        out
    }

    /// What a governor on one of these CPUs sees, with the tick period `tick_ns`.
    pub fn governor_view(&self, tick_ns: i64) -> Platform {
        Platform {
            states: self
                .states
                .iter()
                .map(|s| IdleState {
                    name: s.name.clone(),
                    exit_latency_ns: (s.exit_latency_us as i64).saturating_mul(1000),
                    target_residency_ns: (s.target_residency_us as i64).saturating_mul(1000),
                    polling: s.polling,
                })
                .collect(),
            tick_ns,
            capacity: self.capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_CLUSTERS: &str = r#"
id = "test-2x2"
name = "Two clusters of two"
source = "written for this test"

[[cluster]]
name = "little"
cpus = [0, 1]
capacity = 446
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 15.0, source = "a datasheet" }
[[cluster.state]]
name = "CLUSTER_SLEEP"
level = "cluster"
exit_latency_us = 2100
target_residency_us = 3500
power_mw = { low = 1.0, central = 5.0, high = 10.0, source = "estimate" }
[[cluster.opp]]
freq_khz = 533000
power_mw = { mw = 40.0, source = "EM" }

[[cluster]]
name = "big"
cpus = [2, 3]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
"#;

    #[test]
    fn a_platform_parses_with_sourced_and_estimated_power() {
        let p = CpuPlatform::parse("p.toml", TWO_CLUSTERS).unwrap();
        assert_eq!(p.cpus(), vec![0, 1, 2, 3]);
        let little = p.cluster_of(1).unwrap();
        assert_eq!(little.states[1].level, StateLevel::Cluster);
        let sleep = little.states[1].power_mw.as_ref().unwrap();
        assert!(sleep.is_estimate());
        assert_eq!((sleep.central(), sleep.range()), (5.0, (1.0, 10.0)));
        let view = little.governor_view(4_000_000);
        assert_eq!(view.states[1].exit_latency_ns, 2_100_000);
        assert_eq!(view.states[1].target_residency_ns, 3_500_000);
        assert_eq!(view.capacity, 446);
        assert!(p.cluster_of(2).unwrap().states[0].power_mw.is_none());
    }

    #[test]
    fn an_opp_may_give_its_frequency_alone() {
        let text = TWO_CLUSTERS.replace(
            "power_mw = { mw = 40.0, source = \"EM\" }",
            "[[cluster.opp]]\nfreq_khz = 998400",
        );
        let p = CpuPlatform::parse("p.toml", &text).unwrap();
        let freqs: Vec<(u64, bool)> = p.clusters[0]
            .opps
            .iter()
            .map(|o| (o.freq_khz, o.power_mw.is_some()))
            .collect();
        assert_eq!(freqs, [(533000, false), (998400, false)]);
    }

    #[test]
    fn broken_platforms_are_refused_at_their_line() {
        let cases = [
            (
                TWO_CLUSTERS.replace("cpus = [2, 3]", "cpus = [1, 3]"),
                "p.toml:25: cluster \"big\": CPU 1 is in two clusters",
            ),
            (
                TWO_CLUSTERS.replace("cpus = [2, 3]", "cpus = [2, 4294967295]"),
                "p.toml:25: cluster \"big\": CPU 4294967295: expected CPU numbers below 8192 \
                 (Linux's largest CONFIG_NR_CPUS)",
            ),
            (
                TWO_CLUSTERS.replace("capacity = 446", "capacity = 2048"),
                "cluster \"little\": expected a capacity in 0..=1024, got 2048",
            ),
            (
                TWO_CLUSTERS.replace("target_residency_us = 3500", "target_residency_us = 0"),
                "state 1 (\"CLUSTER_SLEEP\"): expected states ordered by target residency",
            ),
            (
                TWO_CLUSTERS.replace("central = 5.0", "central = 50.0"),
                "expected an estimate with 0 <= low <= central <= high",
            ),
            (
                TWO_CLUSTERS.replace("level = \"cluster\"", "level = \"package\""),
                "unknown variant `package`",
            ),
            (
                TWO_CLUSTERS.replace("capacity = 1024", "capacity = 1024\nhz = 250"),
                "unknown field `hz`",
            ),
            (
                TWO_CLUSTERS.replace(
                    "power_mw = { mw = 40.0, source = \"EM\" }",
                    "[[cluster.opp]]\nfreq_khz = 200000",
                ),
                "p.toml:24: cluster \"little\": OPP 200000 kHz: expected OPPs in rising \
                 frequency order (after 533000 kHz)",
            ),
            (
                TWO_CLUSTERS.replace("freq_khz = 533000", "freq_khz = 0"),
                "p.toml:22: cluster \"little\": OPP 0 kHz: expected a frequency in \
                 1..=2147483647 kHz",
            ),
            (
                TWO_CLUSTERS.replace(
                    "power_mw = { mw = 40.0, source = \"EM\" }",
                    "power_mw = { mw = 40.0, source = \"EM\" }\n[[cluster.opp]]\n\
                     freq_khz = 998400\npower_mw = { mw = 0.0, source = \"EM\" }",
                ),
                "p.toml:26: cluster \"little\": OPP 998400 kHz power_mw: expected a power above 0 \
                 mW, as the lower OPP 533000 kHz has 40 mW",
            ),
            (
                TWO_CLUSTERS.replace(
                    "power_mw = { mw = 40.0, source = \"EM\" }",
                    "power_mw = { mw = 40.0, source = \"EM\" }\n[cluster.cpufreq]\n\
                     transition_latency = { ns = 300000, source = \"DT\" }\n\
                     scaling_max_khz = 998400",
                ),
                "p.toml:26: cluster \"little\": cpufreq scaling_max_khz: expected a frequency \
                 within the OPP table, 533000..=533000 kHz, got 998400",
            ),
            (
                TWO_CLUSTERS.replace(
                    "power_mw = { mw = 40.0, source = \"EM\" }",
                    "power_mw = { mw = 40.0, source = \"EM\" }\n[cluster.cpufreq]\n\
                     transition_latency = { ns = 5000000000, source = \"DT\" }",
                ),
                "p.toml:25: cluster \"little\": cpufreq transition_latency: expected at most \
                 4294967295 ns",
            ),
            (
                format!("{TWO_CLUSTERS}[cluster.cpufreq]\nscaling_max_khz = 1\n"),
                "p.toml:25: cluster \"big\": [cluster.cpufreq]: expected the cluster's OPPs",
            ),
        ];
        for (text, want) in cases {
            let got = CpuPlatform::parse("p.toml", &text).unwrap_err().to_string();
            assert!(got.contains(want), "got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn state_times_stop_at_the_kernels_unsigned_int_of_microseconds() {
        // struct cpuidle_state holds exit_latency and target_residency as `unsigned int` us:
        // 2^32 - 1 = 4294967295 is the largest either can be. 2^64 ns is 18446744073709551.616
        // us, written rounded up; 2^32 us is one past the bound.
        let set = |key: &str, v: &str| {
            TWO_CLUSTERS.replace(&format!("{key} = 2100"), &format!("{key} = {v}"))
        };
        let residency = TWO_CLUSTERS.replace(
            "target_residency_us = 3500",
            "target_residency_us = 4294967296",
        );
        for (text, line, got) in [
            (
                set("exit_latency_us", "18446744073709552"),
                18,
                "18446744073709552",
            ),
            (set("exit_latency_us", "4294967296"), 18, "4294967296"),
            (residency, 19, "4294967296"),
        ] {
            let e = CpuPlatform::parse("p.toml", &text).unwrap_err();
            assert_eq!(e.line, Some(line), "{e}");
            assert!(
                e.message.contains(&format!("(0..=4294967295), got {got}")),
                "{e}"
            );
        }
        // At the bound itself (with a residency to match, states stay ordered) it loads, and
        // the governors see it in ns without overflow: 4294967295000 ns.
        let at_bound = set("exit_latency_us", "4294967295").replace(
            "target_residency_us = 3500",
            "target_residency_us = 4294967295",
        );
        let p = CpuPlatform::parse("p.toml", &at_bound).unwrap();
        let view = p.clusters[0].governor_view(4_000_000);
        assert_eq!(view.states[1].exit_latency_ns, 4_294_967_295_000);
        assert_eq!(view.states[1].target_residency_ns, 4_294_967_295_000);
    }
}
