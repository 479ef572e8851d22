//! `torpor idle stats`: idlestat's C-state report from an ftrace text trace.
//!
//! Read for this module: idlestat 0.8 (`idlestat.c`: `store_data`, `record_cstate_event`,
//! `cstate_begin`, `cstate_end`; `topology.c`: `core_get_least_cstate`,
//! `cluster_get_least_cstate`, `create_states`, `dump_cpu_topo_info`). Its definitions, which
//! torpor follows so that the numbers agree with `idlestat --import` on the same file:
//!
//! * A CPU is in state *s* from its `cpu_idle state=s` event to its next `cpu_idle` event
//!   (an exit, or another state, which ends *s* and starts the new one). Re-entering the current
//!   state is ignored; an exit before the CPU's first entry is ignored (counted here).
//! * A **core** and a **cluster** are in the shallowest state of their CPUs, and running while
//!   any of their CPUs runs (a CPU with no event yet counts as running). So the cluster's time in
//!   state *s* is the time all its CPUs were idle with the shallowest in *s*.
//! * **over**: the interval was shorter than the state's target residency (the state was too
//!   deep). **under**: otherwise, when the next deeper state has been entered at least once by
//!   this CPU, core or cluster so far, has a target residency above 0 and the interval lasted at
//!   least that long (a deeper state would have paid off).
//! * Intervals of zero or negative length (a timestamp going backwards) are not recorded; an
//!   interval still open when the trace ends is not either. Both are counted here.
//! * Cores are reported only when they hold more than one CPU (SMT); a section (and a state
//!   row) is reported only if it has at least one interval.
//!
//! Where torpor differs from idlestat, on purpose: durations are integer nanoseconds, so an
//! interval exactly as long as a target residency is not "over" (idlestat subtracts `double`
//! seconds and may see it a hair shorter); the C-state table and the topology come from the
//! trace (idlestat files) or from a platform file, never from the analysing host (idlestat
//! reads the host's sysfs for `trace`/`trace-cmd` files); `cpu_idle` is matched as an event
//! name, not as a substring of any line (idlestat also reads `cpu_idle_miss` and marker text
//! containing `cpu_idle` as idle events).
//!
//! The P-state report (`-p`, idlestat's `--frequency`) comes from the same pass:
//! [`crate::pstates`] says how `cpu_frequency` and `cpu_idle` events make it.
//!
//! Memory is constant: per CPU, core and cluster a current state and ten accumulators, and the
//! P-state rows [`crate::pstates`] bounds.

use std::io::BufRead;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{self, InputError};
use crate::pstates::{PstateDropped, PstateTracker, UnknownFrequency};
use crate::trace::ftrace::{
    CpuPlace, EventKind, FtraceCounts, FtraceFormat, FtraceHeader, FtraceReader, CPUIDLE_STATE_MAX,
    MAX_CPUS,
};
use crate::trace::source::EventSource;
use crate::user_file::{self, Decoding, MAX_DUMP_BYTES};

const STATES: usize = CPUIDLE_STATE_MAX as usize;

/// The events the report reads. Other events are checked up to their name only: a trace is
/// not refused for the fields of an event the report does not use (docs/idle-stats.md).
const READ_EVENTS: [&str; 2] = ["cpu_idle", "cpu_frequency"];

/// A platform file (docs/idle-stats.md): the topology and the C-state table of the machine
/// the trace was taken on, as idle stats reads it (not a CPU's states as a governor sees them,
/// `cpuidle::Platform`, nor the simulated hardware, `cpu::CpuPlatform`). A torpor CPU platform
/// (a preset id or a file of docs/cpu-platform.md) is read into the same shape
/// ([`StatsPlatform::from_cpu_platform`]), and so is a LISA plat_info.yml.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StatsPlatform {
    pub cluster: Vec<StatsCluster>,
    /// The table of every cluster that has none of its own.
    #[serde(default)]
    pub state: Vec<StatsState>,
    /// What the file lacked, shown with the report (a LISA plat_info.yml's).
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// One cluster: its CPUs (each its own core) or its cores (lists of SMT sibling CPUs), and
/// optionally its own C-state table (big.LITTLE clusters differ).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, expecting = "a [[cluster]] table")]
pub struct StatsCluster {
    pub cpus: Option<Vec<u32>>,
    pub cores: Option<Vec<Vec<u32>>>,
    pub state: Option<Vec<StatsState>>,
}

/// One C-state, shallow to deep.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(
    deny_unknown_fields,
    expecting = "a state table (`name`, `target_residency_us`, `exit_latency_us`)"
)]
pub struct StatsState {
    pub name: String,
    /// Shown in the report's state list; idlestat's over/under do not use it. Both figures
    /// are at most the kernel's `unsigned int` ([`crate::cpuidle::MAX_STATE_US`]).
    #[serde(default, deserialize_with = "crate::cpuidle::state_us_opt")]
    pub exit_latency_us: Option<u64>,
    #[serde(deserialize_with = "crate::cpuidle::state_us")]
    pub target_residency_us: u64,
}

impl StatsPlatform {
    /// Reads and checks a platform: a file of this module's form or a torpor CPU platform
    /// file, or (when no such file exists) a built-in CPU preset id.
    pub fn load(path: &Path) -> Result<StatsPlatform, InputError> {
        let label = path.to_string_lossy().into_owned();
        if !path.exists() {
            return match crate::input::cpu_preset::find(&label) {
                Some(preset) => Ok(StatsPlatform::from_cpu_platform(&preset?)),
                None => Err(InputError::whole(
                    &label,
                    format!(
                        "no such file, and no built-in CPU platform of that name{}",
                        crate::input::cpu_preset::suggestion(&label)
                    ),
                )),
            };
        }
        let file = user_file::read_text(
            path,
            &label,
            "a platform file (TOML) or a CPU preset id",
            MAX_DUMP_BYTES,
            Decoding::Strict,
        )?;
        if crate::input::lisa_platform::sniff(&file.text) {
            let lisa = crate::input::lisa_platform::LisaPlatform::parse(&label, &file.text)?;
            return Ok(lisa::platform(&lisa));
        }
        // A torpor CPU platform names itself with a top-level `id`.
        let is_cpu_platform =
            toml::from_str::<toml::Table>(&file.text).is_ok_and(|t| t.contains_key("id"));
        if is_cpu_platform {
            let cpu = crate::cpu::CpuPlatform::parse(&label, &file.text)?;
            return Ok(StatsPlatform::from_cpu_platform(&cpu));
        }
        StatsPlatform::parse(&file.text, &label)
    }

    /// A torpor CPU platform as idle stats reads it: each CPU its own core, each cluster its
    /// own table (names and target residencies as the cpuidle driver registers them).
    pub fn from_cpu_platform(cpu: &crate::cpu::CpuPlatform) -> StatsPlatform {
        StatsPlatform {
            cluster: cpu
                .clusters
                .iter()
                .map(|c| StatsCluster {
                    cpus: Some(c.cpus.clone()),
                    cores: None,
                    state: Some(
                        c.states
                            .iter()
                            .map(|s| StatsState {
                                name: s.name.split_whitespace().collect::<Vec<_>>().join("_"),
                                exit_latency_us: Some(s.exit_latency_us),
                                target_residency_us: s.target_residency_us,
                            })
                            .collect(),
                    ),
                })
                .collect(),
            state: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The C-state table of cluster `i`: its own, else the platform's.
    fn table(&self, i: usize) -> &[StatsState] {
        self.cluster[i].state.as_deref().unwrap_or(&self.state)
    }

    /// Parses and checks platform TOML (`file` names it in errors).
    pub fn parse(text: &str, file: &str) -> Result<StatsPlatform, InputError> {
        let p: StatsPlatform =
            toml::from_str(text).map_err(|e| error::from_toml(file, text, &e))?;
        let at = |key: &str| error::line_of_toml_key(text, key).unwrap_or(1);
        for i in 0..p.cluster.len() {
            let table = p.table(i);
            if table.is_empty() || table.len() > STATES {
                return Err(InputError::at(
                    file,
                    at("[[state]]"),
                    format!(
                        "expected 1 to {STATES} `[[state]]` tables (the kernel's \
                         CPUIDLE_STATE_MAX) for every cluster, at the top level or under its \
                         `[[cluster]]`"
                    ),
                ));
            }
        }
        for s in p
            .state
            .iter()
            .chain(p.cluster.iter().flat_map(|c| c.state.iter().flatten()))
        {
            if s.name.is_empty() || s.name.contains(char::is_whitespace) {
                return Err(InputError::at(
                    file,
                    at("name"),
                    format!(
                        "expected a state name without spaces, got {}",
                        error::shown(&s.name)
                    ),
                ));
            }
        }
        let places = p
            .places()
            .map_err(|m| InputError::at(file, at("[[cluster]]"), m))?;
        if places.is_empty() {
            return Err(InputError::at(
                file,
                at("[[cluster]]"),
                "expected at least one `[[cluster]]` with `cpus` or `cores`",
            ));
        }
        Ok(p)
    }

    /// Each CPU's place, indexed by CPU: clusters lettered in file order, core ids numbered
    /// across the whole platform (a `cpus` list makes each CPU a core numbered as the CPU).
    fn places(&self) -> Result<Vec<CpuPlace>, String> {
        if self.cluster.len() > 26 {
            return Err("expected at most 26 clusters (idlestat letters them A to Z)".into());
        }
        let mut places: Vec<Option<CpuPlace>> = Vec::new();
        let mut next_core = 0u32;
        for (ci, c) in self.cluster.iter().enumerate() {
            let cores: Vec<(u32, Vec<u32>)> = match (&c.cpus, &c.cores) {
                (Some(cpus), None) => cpus.iter().map(|&cpu| (cpu, vec![cpu])).collect(),
                (None, Some(cores)) => cores
                    .iter()
                    .map(|cpus| {
                        next_core += 1;
                        (next_core - 1, cpus.clone())
                    })
                    .collect(),
                _ => {
                    return Err(format!(
                        "cluster {} needs exactly one of `cpus = [...]` or `cores = [[...], ...]`",
                        ci + 1
                    ))
                }
            };
            if cores.is_empty() || cores.iter().any(|(_, c)| c.is_empty()) {
                return Err(format!("cluster {} has an empty CPU list", ci + 1));
            }
            for (core, cpus) in cores {
                for cpu in cpus {
                    if cpu >= MAX_CPUS {
                        return Err(format!(
                            "CPU {cpu}: expected CPU numbers below {MAX_CPUS} (Linux's largest \
                             CONFIG_NR_CPUS)"
                        ));
                    }
                    let i = cpu as usize;
                    if places.len() <= i {
                        places.resize(i + 1, None);
                    }
                    if places[i].is_some() {
                        return Err(format!("CPU {cpu} is listed twice"));
                    }
                    places[i] = Some(CpuPlace {
                        cluster: ci as u32,
                        core,
                        cpu,
                    });
                }
            }
        }
        places
            .into_iter()
            .enumerate()
            .map(|(cpu, p)| {
                p.ok_or_else(|| {
                    format!("CPU {cpu} is in no cluster; expected every CPU from 0 to the highest")
                })
            })
            .collect()
    }
}

/// One state of the table the report used.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct StateInfo {
    pub index: usize,
    pub name: Option<String>,
    pub exit_latency_us: Option<u64>,
    pub target_residency_us: Option<u64>,
}

/// One row of a section: a state with at least one interval. Times in microseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    pub state: String,
    pub min_us: f64,
    pub max_us: f64,
    pub avg_us: f64,
    pub total_us: f64,
    pub hits: u64,
    /// `None` when no C-state table was given.
    pub over: Option<u64>,
    pub under: Option<u64>,
}

/// What idle intervals were left out, and why.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct IdleDropped {
    /// `cpu_idle` exits of a CPU before its first entry.
    pub exits_before_entry: u64,
    /// Intervals (of CPUs, cores and clusters) whose end is not after their start.
    pub non_positive_intervals: u64,
    /// CPU intervals still open when the trace ends.
    pub open_at_end: u64,
}

/// The P-state report (idlestat's `-p`): sections in the C-state report's order.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Pstates {
    /// Per section, its [`crate::pstates::PstateRow`]s.
    pub sections: serde_json::Map<String, serde_json::Value>,
    pub cpu_frequency_events: u64,
    /// CPUs that ran at an unknown frequency (before their first `cpu_frequency` event): that
    /// time is in no row.
    pub unknown_frequency: Vec<UnknownFrequency>,
    pub dropped: PstateDropped,
}

/// The report: sections in idlestat's order (each cluster, its SMT cores, their CPUs).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IdleStats {
    pub sections: serde_json::Map<String, serde_json::Value>,
    pub pstates: Pstates,
    pub format: FtraceFormat,
    pub cpus: Option<u32>,
    /// `trace`, `platform`, `assumed` (one cluster, one core per CPU) or `None` (CPU rows only).
    pub topology_from: Option<&'static str>,
    /// `trace`, `platform` or `None` (states named by index, over and under left out).
    pub states_from: Option<&'static str>,
    /// The table of CPU 0, for the report's legend.
    pub states: Vec<StateInfo>,
    pub cpu_idle_events: u64,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub dropped: IdleDropped,
    pub trace: FtraceCounts,
    pub notes: Vec<String>,
}

#[derive(Clone, Copy, Debug)]
struct Acc {
    hits: u64,
    total_ns: u64,
    min_ns: u64,
    max_ns: u64,
    over: u64,
    under: u64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            hits: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            over: 0,
            under: 0,
        }
    }
}

/// A CPU, core or cluster: idlestat's `struct cpuidle_cstates`.
#[derive(Clone, Debug)]
struct Tracker {
    /// The state it is in, -1 while running.
    current: i32,
    begin_ns: u64,
    /// The deepest state entered so far, -1 before any.
    deepest: i32,
    /// Target residencies in ns, from the table of the first CPU (idlestat copies it).
    residency_ns: [Option<u64>; STATES],
    acc: [Acc; STATES],
    /// Cores and clusters: how many member CPUs are running (index 0) or in each state.
    members: [u32; STATES + 1],
}

impl Tracker {
    fn new(residency_ns: [Option<u64>; STATES], members: u32) -> Self {
        let mut m = [0; STATES + 1];
        m[0] = members;
        Tracker {
            current: -1,
            begin_ns: 0,
            deepest: -1,
            residency_ns,
            acc: [Acc::default(); STATES],
            members: m,
        }
    }

    /// The shallowest state of the members, -1 if any runs.
    fn least(&self) -> i32 {
        self.members
            .iter()
            .position(|&n| n > 0)
            .map_or(-1, |i| i as i32 - 1)
    }

    fn moved(&mut self, from: i32, to: i32) {
        self.members[(from + 1) as usize] -= 1;
        self.members[(to + 1) as usize] += 1;
    }

    /// idlestat's `record_cstate_event`.
    fn record(&mut self, ts: u64, state: i32, dropped: &mut IdleDropped) {
        if state == self.current {
            return;
        }
        if self.current != -1 {
            self.end(ts, dropped);
        }
        if state != -1 {
            self.begin_ns = ts;
            self.deepest = self.deepest.max(state);
            self.current = state;
        }
    }

    /// idlestat's `cstate_end`.
    fn end(&mut self, ts: u64, dropped: &mut IdleDropped) {
        let s = self.current as usize;
        self.current = -1;
        if ts <= self.begin_ns {
            dropped.non_positive_intervals += 1;
            return;
        }
        let d = ts - self.begin_ns;
        let a = &mut self.acc[s];
        if self.residency_ns[s].is_some_and(|r| d < r) {
            a.over += 1;
        } else if (s as i32) < self.deepest
            && self.residency_ns[s + 1].is_some_and(|r| r > 0 && d >= r)
        {
            a.under += 1;
        }
        a.hits += 1;
        a.total_ns += d;
        a.min_ns = a.min_ns.min(d);
        a.max_ns = a.max_ns.max(d);
    }

    fn rows(&self, names: &[Option<String>], table: bool) -> Vec<Row> {
        let us = |ns: u64| ns as f64 / 1000.0;
        self.acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.hits > 0)
            .map(|(i, a)| Row {
                state: names
                    .get(i)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| format!("state{i}")),
                min_us: us(a.min_ns),
                max_us: us(a.max_ns),
                avg_us: a.total_ns as f64 / a.hits as f64 / 1000.0,
                total_us: us(a.total_ns),
                hits: a.hits,
                over: table.then_some(a.over),
                under: table.then_some(a.under),
            })
            .collect()
    }
}

/// A cluster's tracker and its cores in report order: each core's tracker (SMT cores only, the
/// ones reported) and its CPUs.
type ClusterOrder = (usize, Vec<(Option<usize>, Vec<u32>)>);

/// The layout the analysis runs on.
struct Layout {
    places: Vec<CpuPlace>,
    /// Per CPU: state names and target residencies (us).
    tables: Vec<Vec<(Option<String>, Option<u64>)>>,
    states: Vec<StateInfo>,
    topology_from: &'static str,
    states_from: Option<&'static str>,
}

/// Runs the report on the trace at `path`, with the platform file at `platform` if given.
///
/// A regular file of plain text is scanned in blocks on every core (`parallel`); a file that
/// scan hands back (anything it does not read exactly as the streaming reader would: bad
/// input, a cut-short last line, very many event names) is read by the streaming reader, from
/// the start. `-` (standard input) and pipes are read once, as they stream, in any format
/// (`trace::source::open`).
pub fn idle_stats(path: &Path, platform: Option<&Path>) -> Result<IdleStats, InputError> {
    let loaded = platform.map(StatsPlatform::load).transpose()?;
    let platform_label = platform.map(|p| p.to_string_lossy().into_owned());
    let label = crate::trace::source::label(path);
    let regular = path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if !regular {
        let trace = crate::trace::source::open(path)?;
        return from_source(trace, &label, loaded.as_ref(), platform_label.as_deref());
    }
    let file = user_file::open(path, &label, crate::trace::source::WHAT)?;
    if let Some(dat) = crate::trace::source::open_binary(&file, &label)? {
        return from_source(dat, &label, loaded.as_ref(), platform_label.as_deref());
    }
    if let Some(packing) = crate::trace::packed_text::sniff(&file) {
        let text = crate::trace::packed_text::open(file, packing, &label)?;
        let mut stats = from_reader(text, &label, loaded.as_ref(), platform_label.as_deref())?;
        stats.trace.packed = Some(packing.name());
        return Ok(stats);
    }
    if let Some(stats) = parallel::run(
        &file,
        &label,
        loaded.as_ref(),
        platform_label.as_deref(),
        parallel::BLOCK_BYTES,
    )? {
        return Ok(stats);
    }
    let mut file = file;
    std::io::Seek::rewind(&mut file).map_err(|e| user_file::io_error(&label, &e))?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    from_reader(reader, &label, loaded.as_ref(), platform_label.as_deref())
}

/// Runs the report on a trace read from `reader` (`label` names it in errors; `platform_label`
/// names the platform in errors about it).
pub fn from_reader<R: BufRead>(
    reader: R,
    label: &str,
    platform: Option<&StatsPlatform>,
    platform_label: Option<&str>,
) -> Result<IdleStats, InputError> {
    from_source(
        FtraceReader::new(reader, label)?,
        label,
        platform,
        platform_label,
    )
}

/// Runs the report on the events of `trace`, text or trace.dat.
pub fn from_source<S: EventSource>(
    mut trace: S,
    label: &str,
    platform: Option<&StatsPlatform>,
    platform_label: Option<&str>,
) -> Result<IdleStats, InputError> {
    let mut analysis = Analysis::new(trace.header(), label, platform, platform_label)?;
    trace.fields_only_of(&READ_EVENTS);
    while let Some(ev) = trace.next_event()? {
        let cpu_id = match ev.kind {
            EventKind::CpuIdle { cpu_id, .. } | EventKind::CpuFrequency { cpu_id, .. } => cpu_id,
            _ => continue,
        };
        if !analysis.knows_cpu(cpu_id) {
            let e = InputError::at(label, ev.line, analysis.cpu_beyond(cpu_id));
            return Err(trace.locate(e));
        }
        match ev.kind {
            EventKind::CpuIdle { state, .. } => analysis.cpu_idle(ev.timestamp_ns, state, cpu_id),
            EventKind::CpuFrequency { khz, .. } => {
                analysis.cpu_frequency(ev.timestamp_ns, khz, cpu_id)
            }
            _ => {}
        }
    }
    Ok(analysis.finish(trace.counts()))
}

/// The report being built: the layout, a [`Tracker`] per CPU, core and cluster, the P-state
/// residency, and what was dropped. Fed `cpu_idle` and `cpu_frequency` events in trace order by
/// the streaming reader or the parallel scan.
struct Analysis {
    header: FtraceHeader,
    layout: Option<Layout>,
    notes: Vec<String>,
    cpus: Vec<Tracker>,
    groups: Vec<Tracker>,
    group_names: Vec<String>,
    /// Per CPU: its core's and its cluster's index in `groups`, the core's only where it has
    /// more than one CPU: a core of one CPU gets the same entries and exits as its CPU, so
    /// its tracker would be the CPU's (and it is not reported); only its dropped intervals
    /// count, as the CPU's again.
    cpu_groups: Vec<(Option<usize>, usize)>,
    order: Vec<ClusterOrder>,
    dropped: IdleDropped,
    events: u64,
    first_ns: Option<u64>,
    last_ns: Option<u64>,
    pstates: PstateTracker,
}

impl Analysis {
    fn new(
        header: &FtraceHeader,
        label: &str,
        platform: Option<&StatsPlatform>,
        platform_label: Option<&str>,
    ) -> Result<Analysis, InputError> {
        let header = header.clone();
        let mut notes = Vec::new();
        let layout = match (platform, &header.topology, &header.states) {
            (Some(p), _, _) => {
                let places = p.places().map_err(|m| InputError::whole(label, m))?;
                if let Some(n) = header.cpus {
                    if n as usize != places.len() {
                        return Err(InputError::whole(
                            platform_label.unwrap_or("platform"),
                            format!(
                                "the platform lists {} CPUs but the trace header says {n}",
                                places.len()
                            ),
                        ));
                    }
                }
                if header.topology.is_some() {
                    notes.push(
                        "the platform file replaces the trace's topology and C-state table".into(),
                    );
                }
                notes.extend(p.notes.iter().cloned());
                let has_table = (0..p.cluster.len()).all(|i| !p.table(i).is_empty());
                let tables = places
                    .iter()
                    .map(|place| {
                        p.table(place.cluster as usize)
                            .iter()
                            .map(|s| (Some(s.name.clone()), Some(s.target_residency_us)))
                            .collect()
                    })
                    .collect();
                Some(Layout {
                    tables,
                    places,
                    // The legend shows cluster A's table, as idlestat shows CPU 0's.
                    states: p
                        .table(0)
                        .iter()
                        .enumerate()
                        .map(|(index, s)| StateInfo {
                            index,
                            name: Some(s.name.clone()),
                            exit_latency_us: s.exit_latency_us,
                            target_residency_us: Some(s.target_residency_us),
                        })
                        .collect(),
                    topology_from: "platform",
                    states_from: has_table.then_some("platform"),
                })
            }
            (None, Some(topo), Some(tables)) => Some(Layout {
                places: topo.clone(),
                tables: tables
                    .iter()
                    .map(|t| {
                        t.iter()
                            .map(|s| (s.name.clone(), s.target_residency_us))
                            .collect()
                    })
                    .collect(),
                states: tables[0]
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.name.is_some() || s.target_residency_us.is_some())
                    .map(|(index, s)| StateInfo {
                        index,
                        name: s.name.clone(),
                        exit_latency_us: None,
                        target_residency_us: s.target_residency_us,
                    })
                    .collect(),
                topology_from: "trace",
                states_from: Some("trace"),
            }),
            (None, _, _) => header.cpus.map(|n| {
                notes.push(format!(
                "no topology in the trace and no --platform: all {n} CPUs taken as one cluster, \
                 one core each"
            ));
                Layout {
                    places: (0..n)
                        .map(|cpu| CpuPlace {
                            cluster: 0,
                            core: cpu,
                            cpu,
                        })
                        .collect(),
                    tables: vec![Vec::new(); n as usize],
                    states: Vec::new(),
                    topology_from: "assumed",
                    states_from: None,
                }
            }),
        };
        if layout.is_none() {
            notes.push(
                "the trace gives no CPU count and no --platform was given: CPU sections only"
                    .into(),
            );
        }
        if layout.as_ref().is_none_or(|l| l.states_from.is_none()) {
            notes.push(
            "no C-state table (the trace has none; give --platform): states are named by index, \
             over and under are left out"
                .into(),
        );
        }
        let residencies = |table: &[(Option<String>, Option<u64>)]| {
            let mut r = [None; STATES];
            for (slot, (_, us)) in r.iter_mut().zip(table) {
                *slot = us.map(|us| us.saturating_mul(1000));
            }
            r
        };
        // Trackers: CPUs, then cores, then clusters, with each CPU's core and cluster.
        let cpus: Vec<Tracker> = layout
            .as_ref()
            .map(|l| {
                l.tables
                    .iter()
                    .map(|t| Tracker::new(residencies(t), 0))
                    .collect()
            })
            .unwrap_or_default();
        let mut groups: Vec<Tracker> = Vec::new();
        let mut group_names: Vec<String> = Vec::new();
        let mut cpu_groups: Vec<(Option<usize>, usize)> = Vec::new();
        let mut pstate_groups: Vec<Vec<usize>> = Vec::new();
        let mut order: Vec<ClusterOrder> = Vec::new();
        if let Some(l) = &layout {
            let mut clusters: Vec<u32> = l.places.iter().map(|p| p.cluster).collect();
            clusters.sort_unstable();
            clusters.dedup();
            cpu_groups = vec![(None, 0); l.places.len()];
            pstate_groups = vec![Vec::new(); l.places.len()];
            let mut core_keys: Vec<String> = Vec::new();
            for &cl in &clusters {
                let mut members: Vec<&CpuPlace> =
                    l.places.iter().filter(|p| p.cluster == cl).collect();
                members.sort_by_key(|p| (p.core, p.cpu));
                let first = members[0].cpu as usize;
                let cl_index = groups.len();
                groups.push(Tracker::new(
                    residencies(&l.tables[first]),
                    members.len() as u32,
                ));
                let cl_name = format!("cluster{}", char::from(b'A' + cl as u8));
                group_names.push(cl_name.clone());
                let mut cores: Vec<u32> = members.iter().map(|p| p.core).collect();
                cores.dedup();
                let mut core_list = Vec::new();
                for core in cores {
                    let cpus_of: Vec<u32> = members
                        .iter()
                        .filter(|p| p.core == core)
                        .map(|p| p.cpu)
                        .collect();
                    let co_index = groups.len();
                    groups.push(Tracker::new(
                        residencies(&l.tables[cpus_of[0] as usize]),
                        cpus_of.len() as u32,
                    ));
                    let key = format!("core{core}");
                    let key = if core_keys.contains(&key) {
                        format!("{cl_name}/core{core}")
                    } else {
                        key
                    };
                    core_keys.push(key.clone());
                    group_names.push(key);
                    let smt = cpus_of.len() > 1;
                    for &c in &cpus_of {
                        cpu_groups[c as usize] = (smt.then_some(co_index), cl_index);
                        pstate_groups[c as usize] = vec![co_index, cl_index];
                    }
                    core_list.push((smt.then_some(co_index), cpus_of));
                }
                order.push((cl_index, core_list));
            }
        }
        let pstates = PstateTracker::new(groups.len(), pstate_groups);
        Ok(Analysis {
            header,
            layout,
            notes,
            cpus,
            groups,
            group_names,
            cpu_groups,
            order,
            dropped: IdleDropped::default(),
            events: 0,
            first_ns: None,
            last_ns: None,
            pstates,
        })
    }

    /// Whether a `cpu_idle` event may name `cpu_id`: the reader checked it against the
    /// header's count, but a platform may list fewer CPUs.
    fn knows_cpu(&self, cpu_id: u32) -> bool {
        self.layout.is_none() || (cpu_id as usize) < self.cpus.len()
    }

    /// One `cpu_frequency` event, of a CPU [`Self::knows_cpu`] accepts.
    fn cpu_frequency(&mut self, ts: u64, khz: u32, cpu_id: u32) {
        self.pstates.cpu_frequency(ts, cpu_id, khz);
    }

    /// The error for a `cpu_id` that fails [`Self::knows_cpu`].
    fn cpu_beyond(&self, cpu_id: u32) -> String {
        format!(
            "cpu_id={cpu_id}, but the platform lists {} CPUs",
            self.cpus.len()
        )
    }

    /// One `cpu_idle` event (`state` `None` for an exit), of a CPU [`Self::knows_cpu`] accepts.
    fn cpu_idle(&mut self, ts: u64, state: Option<u32>, cpu_id: u32) {
        self.events += 1;
        self.first_ns.get_or_insert(ts);
        self.last_ns = Some(ts);
        self.pstates.cpu_idle(ts, cpu_id, state.is_some());
        let state = state.map_or(-1, |s| s as i32);
        let c = cpu_id as usize;
        if c >= self.cpus.len() {
            self.cpus
                .resize_with(c + 1, || Tracker::new([None; STATES], 0));
        }
        let cpu = &mut self.cpus[c];
        if state == -1 && cpu.deepest == -1 {
            self.dropped.exits_before_entry += 1;
            return;
        }
        let before = cpu.current;
        let dropped_before = self.dropped.non_positive_intervals;
        cpu.record(ts, state, &mut self.dropped);
        let after = cpu.current;
        if let Some(&(core, cluster)) = self.cpu_groups.get(c) {
            if core.is_none() {
                self.dropped.non_positive_intervals +=
                    self.dropped.non_positive_intervals - dropped_before;
            }
            for g in core.into_iter().chain([cluster]) {
                let t = &mut self.groups[g];
                if before != after {
                    t.moved(before, after);
                }
                let least = t.least();
                t.record(ts, least, &mut self.dropped);
            }
        }
    }

    /// The report, with the reader's counts.
    fn finish(self, counts: FtraceCounts) -> IdleStats {
        let Analysis {
            header,
            layout,
            notes,
            cpus,
            groups,
            group_names,
            order,
            mut dropped,
            events,
            first_ns,
            last_ns,
            pstates,
            ..
        } = self;
        dropped.open_at_end = cpus.iter().filter(|t| t.current != -1).count() as u64;
        let table = layout.as_ref().is_some_and(|l| l.states_from.is_some());
        let names_of = |cpu: usize| -> Vec<Option<String>> {
            layout
                .as_ref()
                .and_then(|l| l.tables.get(cpu))
                .map(|t| t.iter().map(|(n, _)| n.clone()).collect())
                .unwrap_or_default()
        };
        // Sections in idlestat's order; a section is shown when it has a row.
        let mut sections = serde_json::Map::new();
        let mut pstate_sections = serde_json::Map::new();
        let mut put = |name: String, rows: Vec<Row>, prows: Vec<crate::pstates::PstateRow>| {
            if !prows.is_empty() {
                pstate_sections.insert(
                    name.clone(),
                    serde_json::to_value(prows).unwrap_or_default(),
                );
            }
            if !rows.is_empty() {
                sections.insert(name, serde_json::to_value(rows).unwrap_or_default());
            }
        };
        if layout.is_some() {
            for (cl_index, cores) in &order {
                let first = cores[0].1[0] as usize;
                put(
                    group_names[*cl_index].clone(),
                    groups[*cl_index].rows(&names_of(first), table),
                    pstates.group_rows(*cl_index),
                );
                for (core, members) in cores {
                    if let Some(co) = core {
                        put(
                            group_names[*co].clone(),
                            groups[*co].rows(&names_of(members[0] as usize), table),
                            pstates.group_rows(*co),
                        );
                    }
                    for &c in members {
                        put(
                            format!("cpu{c}"),
                            cpus[c as usize].rows(&names_of(c as usize), table),
                            pstates.cpu_rows(c),
                        );
                    }
                }
            }
        } else {
            let n = cpus.len().max(pstates.cpu_count());
            for c in 0..n {
                let rows = cpus.get(c).map(|t| t.rows(&[], false)).unwrap_or_default();
                put(format!("cpu{c}"), rows, pstates.cpu_rows(c as u32));
            }
        }
        let pstates = Pstates {
            sections: pstate_sections,
            cpu_frequency_events: pstates.events(),
            unknown_frequency: (0..pstates.cpu_count() as u32)
                .map(|c| pstates.cpu_unknown(c))
                .filter(|u| u.intervals > 0)
                .collect(),
            dropped: pstates.dropped(),
        };
        IdleStats {
            sections,
            pstates,
            format: header.format,
            cpus: header
                .cpus
                .or(layout.as_ref().map(|l| l.places.len() as u32)),
            topology_from: layout.as_ref().map(|l| l.topology_from),
            states_from: layout.as_ref().and_then(|l| l.states_from),
            states: layout.map(|l| l.states).unwrap_or_default(),
            cpu_idle_events: events,
            first_ns,
            last_ns,
            dropped,
            trace: counts,
            notes,
        }
    }
}

mod lisa;
mod parallel;
#[cfg(test)]
mod tests;
