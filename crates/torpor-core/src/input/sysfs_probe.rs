//! `torpor probe`: a running machine's CPU platform, read from sysfs, written as the platform
//! TOML that [`CpuPlatform::parse`] reads.
//!
//! What it reads under the sysfs root (`/sys` on a live system, a copied tree in tests):
//! `devices/system/cpu/cpuN/cpuidle/stateK/{name,desc,latency,residency,power,disable}` and
//! `default_status` where present; `devices/system/cpu/cpuidle/current_governor` (or
//! `current_governor_ro`) and `current_driver`; each CPU's `power/pm_qos_resume_latency_us`,
//! `topology/{physical_package_id,cluster_id,core_id}` and `cpu_capacity` where present;
//! `class/powercap/intel-rapl:0/constraint_0_{name,power_limit_uw}` (the package's long-term
//! limit, PL1) where present.
//!
//! What it must assume, and says so in the file's header: sysfs does not tell a CPU state from a
//! cluster state (every state is written `level = "cpu"`); state 0 polls when the cpuidle core's
//! poll state put it there (its name `POLL` or description); a CPU without `cpu_capacity` has
//! capacity 1024; power where the driver published a plausible one, else on x86 (a state whose
//! description names its MWAIT hint, HLT or an I/O port) the x86 rule's estimate
//! ([`x86_idle_power`]) when PL1 gives the package's TDP; else none, said in the file.
//!
//! Bad input is one [`InputError`] naming the file: a missing state file, a number that does not
//! parse, states not ordered shallow to deep.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use super::x86_idle_power::{self, X86StateKind};
use crate::cpu::platform::MAX_CAPACITY;
use crate::cpu::CpuPlatform;
use crate::error::{shown, InputError};
use crate::trace::ftrace::MAX_CPUS;

/// A `power` above this (mW) is not one CPU's idle power: the largest a real driver publishes
/// is an ACPI `_CST` figure of a few W, and the values seen above it are sentinels, such as
/// the poll state's -1 printed unsigned (4294967295).
pub const MAX_PLAUSIBLE_POWER_MW: u64 = 10_000;

/// The `cluster_id` x86 prints when it knows no L2 cluster (`BAD_APICID`, 0xFFFF, as in a VM);
/// arm64 prints -1 for the same. Either is read as no cluster.
const UNKNOWN_CLUSTER_X86: i64 = 0xFFFF;

/// The description the cpuidle core gives its poll state (drivers/cpuidle/poll_state.c).
const POLL_DESC: &str = "CPUIDLE CORE POLL IDLE";

/// A probed platform: the TOML text (with its header comments) and what it parses to.
#[derive(Clone, Debug, PartialEq)]
pub struct Probed {
    pub toml: String,
    pub platform: CpuPlatform,
}

/// One state as sysfs shows it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    name: String,
    desc: String,
    latency_us: u64,
    residency_us: u64,
    /// The raw `power` value; used only when plausible.
    power: i64,
    disabled: bool,
    default_status: Option<String>,
}

/// One CPU as sysfs shows it.
struct Cpu {
    id: u32,
    states: Vec<State>,
    package: Option<i64>,
    cluster: Option<i64>,
    core: Option<i64>,
    capacity: Option<u64>,
    /// `pm_qos_resume_latency_us` as printed (`0` = no constraint, `n/a` = 0 us required).
    resume_latency: Option<String>,
}

/// Reads the platform under `root` (the sysfs mount point).
pub fn probe(root: &Path) -> Result<Probed, InputError> {
    let cpu_dir = root.join("devices/system/cpu");
    let mut ids = cpu_ids(&cpu_dir)?;
    ids.sort_unstable();
    let governor_dir = cpu_dir.join("cpuidle");
    let governor = match read_optional(&governor_dir.join("current_governor"))? {
        Some(g) => g,
        None => read_required(
            &governor_dir.join("current_governor_ro"),
            "the cpuidle governor's name (no current_governor either)",
        )?,
    };
    let driver = read_optional(&governor_dir.join("current_driver"))?;
    let mut cpus = Vec::new();
    let mut without_cpuidle = Vec::new();
    for id in ids {
        let dir = cpu_dir.join(format!("cpu{id}"));
        if !dir.join("cpuidle").is_dir() {
            without_cpuidle.push(id);
            continue;
        }
        cpus.push(read_cpu(id, &dir)?);
    }
    if cpus.is_empty() {
        return Err(InputError::whole(
            &cpu_dir.join("cpu0/cpuidle").display().to_string(),
            "no CPU has a cpuidle directory; expected cpuN/cpuidle/stateK (is a cpuidle driver \
             loaded?)",
        ));
    }
    let tdp = read_package_limit(root)?;
    let toml = render(
        root,
        &cpus,
        &without_cpuidle,
        &governor,
        driver.as_deref(),
        tdp.as_ref(),
    );
    // The files were each checked as read; what is left is the whole (the platform's rules),
    // named by the folder it was read from, not by a line of text the user never saw.
    let platform = CpuPlatform::parse("<torpor probe output>", &toml).map_err(|e| {
        InputError::whole(
            &cpu_dir.display().to_string(),
            format!(
                "the CPUs read here make no platform torpor can use: {}",
                e.message
            ),
        )
    })?;
    Ok(Probed { toml, platform })
}

/// The package's TDP as the x86 rule takes it: RAPL's long-term package limit (PL1), which is
/// the TDP unless the firmware changed it; `None` where powercap has no such limit.
struct PackageLimit {
    mw: f64,
    /// Where it was read, for the estimates' sources.
    file: String,
}

fn read_package_limit(root: &Path) -> Result<Option<PackageLimit>, InputError> {
    let dir = root.join("class/powercap/intel-rapl:0");
    if read_optional(&dir.join("constraint_0_name"))?.is_some_and(|n| n != "long_term") {
        return Ok(None);
    }
    let file = dir.join("constraint_0_power_limit_uw");
    let Some(text) = read_optional(&file)? else {
        return Ok(None);
    };
    let uw = parse_number(&file, &text, "the package's long-term power limit in uW")?;
    Ok((uw > 0).then(|| PackageLimit {
        mw: uw as f64 / 1000.0,
        file: "class/powercap/intel-rapl:0/constraint_0_power_limit_uw".to_string(),
    }))
}

/// The N of every `cpuN` directory.
fn cpu_ids(cpu_dir: &Path) -> Result<Vec<u32>, InputError> {
    let entries = fs::read_dir(cpu_dir).map_err(|e| {
        InputError::whole(
            &cpu_dir.display().to_string(),
            format!(
                "{}; expected the sysfs CPU directory (is --sysfs-root where sysfs is mounted?)",
                io_reason(&e)
            ),
        )
    })?;
    let mut ids = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(digits) = name.strip_prefix("cpu") else {
            continue;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        match digits.parse::<u32>() {
            Ok(id) if id < MAX_CPUS => ids.push(id),
            _ => {
                return Err(InputError::whole(
                    &cpu_dir.join(&name).display().to_string(),
                    format!(
                        "expected CPU numbers below {MAX_CPUS} (Linux's largest CONFIG_NR_CPUS)"
                    ),
                ))
            }
        }
    }
    Ok(ids)
}

fn read_cpu(id: u32, dir: &Path) -> Result<Cpu, InputError> {
    let idle = dir.join("cpuidle");
    let mut numbers: Vec<usize> = fs::read_dir(&idle)
        .map_err(|e| InputError::whole(&idle.display().to_string(), io_reason(&e)))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let digits = name.strip_prefix("state")?;
            digits.parse().ok()
        })
        .collect();
    numbers.sort_unstable();
    if numbers.is_empty() {
        return Err(InputError::whole(
            &idle.join("state0").display().to_string(),
            "missing; expected at least one cpuidle state directory",
        ));
    }
    let mut states: Vec<State> = Vec::new();
    for (k, &n) in numbers.iter().enumerate() {
        if n != k {
            return Err(InputError::whole(
                &idle.join(format!("state{k}")).display().to_string(),
                format!("missing (state{n} exists); expected states numbered from 0 without gaps"),
            ));
        }
        let s = idle.join(format!("state{k}"));
        let state = State {
            name: read_required(&s.join("name"), "the state's name")?,
            desc: read_required(&s.join("desc"), "the state's description")?,
            latency_us: read_state_us(&s.join("latency"), "the exit latency in us")?,
            residency_us: read_state_us(&s.join("residency"), "the target residency in us")?,
            power: read_signed(&s.join("power"), "the state's power in mW")?,
            disabled: read_number(&s.join("disable"), "0 or 1")? != 0,
            default_status: read_optional(&s.join("default_status"))?,
        };
        if let Some(before) = states.last() {
            if state.residency_us < before.residency_us {
                return Err(InputError::at(
                    &s.join("residency").display().to_string(),
                    1,
                    format!(
                        "{} us is below state{}'s {} us; expected states ordered shallow to deep, \
                         as cpuidle drivers register them",
                        state.residency_us,
                        k - 1,
                        before.residency_us
                    ),
                ));
            }
        }
        if state.name.is_empty() {
            return Err(InputError::at(
                &s.join("name").display().to_string(),
                1,
                "empty; expected the state's name",
            ));
        }
        states.push(state);
    }
    let topology = dir.join("topology");
    let capacity = match read_optional(&dir.join("cpu_capacity"))? {
        Some(text) => {
            let c = parse_number(&dir.join("cpu_capacity"), &text, "a capacity in 0..=1024")?;
            if c > MAX_CAPACITY {
                return Err(InputError::at(
                    &dir.join("cpu_capacity").display().to_string(),
                    1,
                    format!("{c}: expected a capacity in 0..={MAX_CAPACITY}"),
                ));
            }
            Some(c)
        }
        None => None,
    };
    Ok(Cpu {
        id,
        states,
        package: read_optional_signed(&topology.join("physical_package_id"))?,
        cluster: read_optional_signed(&topology.join("cluster_id"))?
            .filter(|&id| id != -1 && id != UNKNOWN_CLUSTER_X86),
        core: read_optional_signed(&topology.join("core_id"))?,
        capacity,
        resume_latency: read_resume_latency(&dir.join("power/pm_qos_resume_latency_us"))?,
    })
}

fn read_resume_latency(path: &Path) -> Result<Option<String>, InputError> {
    let Some(text) = read_optional(path)? else {
        return Ok(None);
    };
    if text != "n/a" {
        parse_number(path, &text, "a latency in us or `n/a`")?;
    }
    Ok(Some(text))
}

fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "missing".to_string(),
        _ => e.to_string(),
    }
}

/// The most a sysfs attribute holds: a `show()` callback writes into one page (`PAGE_SIZE`,
/// 4096 bytes on x86 and on arm64's default 4 KiB pages; `sysfs_emit` refuses to go past it).
/// A tree copied from a 16 KiB- or 64 KiB-page kernel never has longer attribute values.
pub const MAX_ATTRIBUTE_BYTES: u64 = 4096;

/// Reads the attribute at `path` whole: a regular file of at most [`MAX_ATTRIBUTE_BYTES`].
/// Anything else (a FIFO, which would wait for a writer; `/dev/zero`, which never ends; a
/// directory) is refused by name before it is opened, and a longer file after one page and a
/// byte.
fn read_attribute(path: &Path) -> io::Result<Result<Vec<u8>, String>> {
    use std::io::Read;

    let kind = fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Ok(Err(
            "is not a regular file; expected a sysfs attribute (a FIFO, a device or a \
             directory here would block or never end)"
                .to_string(),
        ));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_ATTRIBUTE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ATTRIBUTE_BYTES {
        return Ok(Err(format!(
            "longer than {MAX_ATTRIBUTE_BYTES} bytes; a sysfs attribute holds at most one page"
        )));
    }
    Ok(Ok(bytes))
}

/// A sysfs file's text without its trailing newline; `None` if the file does not exist.
fn read_optional(path: &Path) -> Result<Option<String>, InputError> {
    match read_attribute(path) {
        Ok(Err(why)) => Err(InputError::whole(&path.display().to_string(), why)),
        Ok(Ok(bytes)) => {
            let text = String::from_utf8(bytes).map_err(|_| {
                InputError::at(&path.display().to_string(), 1, "expected UTF-8 text")
            })?;
            Ok(Some(text.trim_end_matches(['\n', '\r', ' ']).to_string()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(InputError::whole(
            &path.display().to_string(),
            io_reason(&e),
        )),
    }
}

fn read_required(path: &Path, what: &str) -> Result<String, InputError> {
    read_optional(path)?.ok_or_else(|| {
        InputError::whole(
            &path.display().to_string(),
            format!("missing; expected {what}"),
        )
    })
}

fn parse_number(path: &Path, text: &str, what: &str) -> Result<u64, InputError> {
    text.trim().parse().map_err(|_| {
        InputError::at(
            &path.display().to_string(),
            1,
            format!("{}: expected {what}", shown(text)),
        )
    })
}

fn read_number(path: &Path, what: &str) -> Result<u64, InputError> {
    let text = read_required(path, what)?;
    parse_number(path, &text, what)
}

/// A state's `latency` or `residency`: a number of us within what the kernel's `unsigned int`
/// fields hold ([`crate::cpuidle::MAX_STATE_US`]), refused at its file otherwise.
fn read_state_us(path: &Path, what: &str) -> Result<u64, InputError> {
    let us = read_number(path, what)?;
    let max = crate::cpuidle::MAX_STATE_US;
    if us > max {
        return Err(InputError::at(
            &path.display().to_string(),
            1,
            format!("{us}: expected {what}, at most {max} (the kernel's `unsigned int`)"),
        ));
    }
    Ok(us)
}

fn parse_signed(path: &Path, text: &str, what: &str) -> Result<i64, InputError> {
    text.trim().parse().map_err(|_| {
        InputError::at(
            &path.display().to_string(),
            1,
            format!("{}: expected {what}", shown(text)),
        )
    })
}

fn read_signed(path: &Path, what: &str) -> Result<i64, InputError> {
    let text = read_required(path, what)?;
    parse_signed(path, &text, what)
}

fn read_optional_signed(path: &Path) -> Result<Option<i64>, InputError> {
    read_optional(path)?
        .map(|text| parse_signed(path, &text, "an integer id"))
        .transpose()
}

/// The power to write for a state's raw sysfs `power`, or why there is none.
fn plausible_power(raw: i64) -> Result<u64, String> {
    match raw {
        0 => Err("none published (sysfs power = 0)".into()),
        r if r < 0 || r == i64::from(u32::MAX) => Err(format!(
            "none published (sysfs power = {r}, the driver's -1 for unknown)"
        )),
        r if r as u64 > MAX_PLAUSIBLE_POWER_MW => Err(format!(
            "sysfs power = {r} mW is not a plausible idle power for one CPU (over \
             {MAX_PLAUSIBLE_POWER_MW} mW), so none is used"
        )),
        r => Ok(r as u64),
    }
}

/// `1-3,5` for [1, 2, 3, 5].
fn cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The platform TOML: a header saying what was read and assumed, then one `[[cluster]]` per
/// group of CPUs with the same package, cluster, capacity and state table.
fn render(
    root: &Path,
    cpus: &[Cpu],
    without_cpuidle: &[u32],
    governor: &str,
    driver: Option<&str>,
    tdp: Option<&PackageLimit>,
) -> String {
    type Key<'a> = (Option<i64>, Option<i64>, Option<u64>, &'a [State]);
    let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
    for c in cpus {
        groups
            .entry((c.package, c.cluster, c.capacity, &c.states))
            .or_default()
            .push(c.id);
    }
    // In the order of their first CPU.
    let mut groups: Vec<(Key, Vec<u32>)> = groups.into_iter().collect();
    groups.sort_by_key(|(_, ids)| ids[0]);

    let all: Vec<u32> = cpus.iter().map(|c| c.id).collect();
    let has = |f: &dyn Fn(&Cpu) -> bool| cpus.iter().filter(|c| f(c)).count();
    let with_package = has(&|c| c.package.is_some());
    let with_cluster = has(&|c| c.cluster.is_some());
    let with_core = has(&|c| c.core.is_some());
    let with_capacity = has(&|c| c.capacity.is_some());
    let with_qos = has(&|c| c.resume_latency.is_some());
    let mut cores: Vec<(Option<i64>, i64)> = cpus
        .iter()
        .filter_map(|c| c.core.map(|core| (c.package, core)))
        .collect();
    cores.sort_unstable();
    cores.dedup();

    let root_shown = root.display().to_string();
    let mut h = vec![
        format!("# CPU platform read by `torpor probe` from sysfs under {root_shown}."),
        "# Read, under devices/system/cpu/:".to_string(),
        format!(
            "#   cpuN/cpuidle/stateK/{{name,desc,latency,residency,power,disable,default_status}} \
             of CPUs {}",
            cpu_list(&all)
        ),
        format!(
            "#   cpuidle/current_governor: {governor}; cpuidle/current_driver: {}",
            driver.unwrap_or("(absent)")
        ),
        format!(
            "#   cpuN/power/pm_qos_resume_latency_us: {with_qos} of {} CPUs",
            cpus.len()
        ),
        format!(
            "#   cpuN/topology/: physical_package_id {with_package}, cluster_id {with_cluster} \
             (-1 or 65535: unknown, not counted), core_id {with_core} of {n} CPUs{}",
            if cores.is_empty() {
                String::new()
            } else {
                format!(" ({} cores)", cores.len())
            },
            n = cpus.len()
        ),
        format!(
            "#   cpuN/cpu_capacity: {with_capacity} of {} CPUs",
            cpus.len()
        ),
        match tdp {
            Some(t) => format!(
                "# Read under class/powercap/: intel-rapl:0 long-term limit (PL1) {} W",
                t.mw / 1000.0
            ),
            None => "# Read under class/powercap/: no intel-rapl:0 long-term limit".to_string(),
        },
        "# Grouped: CPUs with the same package, cluster, capacity and state table form one \
         [[cluster]]."
            .to_string(),
        "# Assumed:".to_string(),
        "#   - every state is a CPU state (level = \"cpu\"): sysfs does not say which states \
         power down a whole cluster; mark those level = \"cluster\" by hand"
            .to_string(),
        "#   - state 0 polls when it is the cpuidle core's poll state (named POLL or described \
         \"CPUIDLE CORE POLL IDLE\")"
            .to_string(),
        format!(
            "#   - power: sysfs `power` (mW, as the driver registered it) where nonzero and at \
             most {MAX_PLAUSIBLE_POWER_MW} mW; else, for an x86 state (MWAIT hint, HLT, I/O \
             port) with PL1 known, the x86 rule's estimate with PL1 as the TDP \
             (docs/cpu-platform.md); else none, and runs show its power as n/a (each such state \
             says why)"
        ),
        "#   - disabled = the current `disable` (1: a user or tool turned the state off); \
         default_status is kept in each state's source"
            .to_string(),
    ];
    if with_capacity < cpus.len() {
        h.push(
            "#   - capacity 1024 where cpu_capacity is absent (x86 without hybrid cores, or a \
             kernel that does not publish it)"
                .to_string(),
        );
    }
    if with_cluster < cpus.len() || with_package < cpus.len() {
        h.push(
            "#   - where a CPU's cluster_id or physical_package_id is absent or unknown, its CPUs \
             are grouped by what is known"
                .to_string(),
        );
    }

    let mut notes = vec![format!("cpuidle governor: {governor} (current_governor)")];
    if let Some(d) = driver {
        notes.push(format!("cpuidle driver: {d}"));
    }
    let mut qos: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for c in cpus {
        if let Some(q) = &c.resume_latency {
            qos.entry(q.as_str()).or_default().push(c.id);
        }
    }
    for (value, ids) in &qos {
        let meaning = match *value {
            "0" => "no constraint".to_string(),
            "n/a" => "0 us required: only a polling state is allowed".to_string(),
            us => format!("at most {us} us exit latency"),
        };
        notes.push(format!(
            "pm_qos_resume_latency_us of CPU(s) {}: {value} ({meaning})",
            cpu_list(ids)
        ));
    }
    if !without_cpuidle.is_empty() {
        notes.push(format!(
            "CPU(s) {} without a cpuidle directory (offline, or no driver) are left out",
            cpu_list(without_cpuidle)
        ));
    }

    let mut out = h.join("\n");
    out.push_str("\n\nid = \"probed\"\n");
    out.push_str(&format!(
        "name = {}\n",
        quoted(&format!(
            "Probed from {root_shown}{}, {} CPUs",
            driver.map(|d| format!(" ({d})")).unwrap_or_default(),
            cpus.len()
        ))
    ));
    out.push_str(&format!(
        "source = {}\n",
        quoted(&format!(
            "sysfs under {root_shown}, read by torpor probe (see the header)"
        ))
    ));
    out.push_str("notes = [\n");
    for n in &notes {
        out.push_str(&format!("  {},\n", quoted(n)));
    }
    out.push_str("]\n");

    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for ((package, cluster, capacity, states), ids) in &groups {
        let mut name = match (package, cluster) {
            (Some(p), Some(c)) => format!("package{p}-cluster{c}"),
            (Some(p), None) => format!("package{p}"),
            (None, Some(c)) => format!("cluster{c}"),
            (None, None) => "cpus".to_string(),
        };
        let seen = names.entry(name.clone()).or_insert(0);
        *seen += 1;
        if *seen > 1 {
            name = format!("{name}-{seen}");
        }
        out.push_str(&format!(
            "\n[[cluster]]\nname = {}\ncpus = [{}]\n",
            quoted(&name),
            ids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        match capacity {
            Some(c) => out.push_str(&format!("capacity = {c}\n")),
            None => out.push_str(&format!(
                "capacity = {MAX_CAPACITY}  # no cpu_capacity file\n"
            )),
        }
        for (k, s) in states.iter().enumerate() {
            out.push_str("[[cluster.state]]\n");
            out.push_str(&format!("name = {}\n", quoted(&s.name)));
            out.push_str(&format!("exit_latency_us = {}\n", s.latency_us));
            out.push_str(&format!("target_residency_us = {}\n", s.residency_us));
            if k == 0 && (s.name == "POLL" || s.desc == POLL_DESC) {
                out.push_str("polling = true\n");
            }
            if s.disabled {
                out.push_str("disabled = true\n");
            }
            let file = format!("cpu{}/cpuidle/state{k}/power", ids[0]);
            match plausible_power(s.power) {
                Ok(mw) => out.push_str(&format!(
                    "power_mw = {{ mw = {mw}.0, source = {} }}\n",
                    quoted(&format!(
                        "sysfs {file}: {mw} mW, as the cpuidle driver registered it"
                    ))
                )),
                Err(why) => {
                    let polling = k == 0 && (s.name == "POLL" || s.desc == POLL_DESC);
                    match (tdp, X86StateKind::from_desc(&s.desc, polling)) {
                        (Some(t), Some(kind)) => {
                            let estimate = x86_idle_power::estimate(
                                kind,
                                t.mw,
                                cpus.len(),
                                &format!(
                                    "sysfs {}: PL1 {} W taken as the TDP",
                                    t.file,
                                    t.mw / 1000.0
                                ),
                            );
                            let crate::cpu::PowerMw::Estimate {
                                low,
                                central,
                                high,
                                source,
                            } = estimate
                            else {
                                unreachable!("the rule gives estimates")
                            };
                            out.push_str(&format!(
                                "# power: {why}; estimated by the x86 rule\npower_mw = {{ low = \
                                 {low:?}, central = {central:?}, high = {high:?}, source = {} }}\n",
                                quoted(&source)
                            ));
                        }
                        (None, Some(_)) => out.push_str(&format!(
                            "# power: {why}; no PL1 under class/powercap for the x86 rule: \
                             unknown (runs show n/a)\n"
                        )),
                        (_, None) => out.push_str(&format!("# power: {why}; unknown\n")),
                    }
                }
            }
            let status = s
                .default_status
                .as_deref()
                .map(|d| format!(", default_status {d}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "source = {}\n",
                quoted(&format!(
                    "sysfs cpu{}/cpuidle/state{k}: desc {}{status}",
                    ids[0],
                    shown(&s.desc)
                ))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plausible_powers_are_kept() {
        assert_eq!(plausible_power(350), Ok(350));
        assert_eq!(plausible_power(10_000), Ok(10_000));
        assert!(plausible_power(0).unwrap_err().contains("sysfs power = 0"));
        // The poll state's power_usage -1, printed with %u.
        assert!(plausible_power(4_294_967_295).unwrap_err().contains("-1"));
        assert!(plausible_power(-1).is_err());
        assert!(plausible_power(10_001)
            .unwrap_err()
            .contains("not a plausible"));
    }

    /// An intel_idle machine with two CPUs (POLL, C1E, C6; no published power) and, when
    /// `pl1_uw` is given, RAPL's long-term package limit.
    fn intel_tree(name: &str, pl1_uw: Option<&str>) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("torpor-probe-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let put = |path: &str, text: &str| {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("{text}\n")).unwrap();
        };
        put("devices/system/cpu/cpuidle/current_governor", "menu");
        put("devices/system/cpu/cpuidle/current_driver", "intel_idle");
        for cpu in 0..2 {
            for (k, (name, desc, latency, residency, power)) in [
                ("POLL", POLL_DESC, 0, 0, "4294967295"),
                ("C1E", "MWAIT 0x01", 10, 20, "0"),
                ("C6", "MWAIT 0x20", 85, 200, "0"),
            ]
            .into_iter()
            .enumerate()
            {
                let s = format!("devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
                put(&format!("{s}/name"), name);
                put(&format!("{s}/desc"), desc);
                put(&format!("{s}/latency"), &latency.to_string());
                put(&format!("{s}/residency"), &residency.to_string());
                put(&format!("{s}/power"), power);
                put(&format!("{s}/disable"), "0");
            }
        }
        if let Some(uw) = pl1_uw {
            put("class/powercap/intel-rapl:0/constraint_0_name", "long_term");
            put(
                "class/powercap/intel-rapl:0/constraint_0_power_limit_uw",
                uw,
            );
        }
        root
    }

    #[test]
    fn a_platform_the_rules_refuse_is_named_by_its_sysfs_folder_not_a_line_of_output() {
        // Every file parses, but 11 states are more than the cpuidle core's
        // CPUIDLE_STATE_MAX (10): a rule of the platform, not of any one file.
        let root = intel_tree("rules", None);
        for k in 3..11 {
            let dir = root.join(format!("devices/system/cpu/cpu0/cpuidle/state{k}"));
            fs::create_dir_all(&dir).unwrap();
            for (file, text) in [
                ("name", format!("C{k}")),
                ("desc", "MWAIT 0x30".to_string()),
                ("latency", (100 * k).to_string()),
                ("residency", (300 * k).to_string()),
                ("power", "0".to_string()),
                ("disable", "0".to_string()),
            ] {
                fs::write(dir.join(file), format!("{text}\n")).unwrap();
            }
        }
        let e = probe(&root).unwrap_err().to_string();
        let cpu_dir = root.join("devices/system/cpu").display().to_string();
        assert!(
            e.starts_with(&format!(
                "{cpu_dir}: the CPUs read here make no platform torpor can use: "
            )),
            "{e}"
        );
        assert!(!e.contains("<torpor probe output>"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn attributes_are_bounded_to_a_page_and_must_be_regular_files() {
        let latency = "devices/system/cpu/cpu0/cpuidle/state1/latency";
        // 4096 bytes (a page, the most sysfs_emit writes) are read; 4097 are refused.
        let root = intel_tree("page", None);
        fs::write(root.join(latency), format!("{:0>4095}\n", 10)).unwrap();
        assert!(probe(&root).is_ok());
        fs::write(root.join(latency), format!("{:0>4096}\n", 10)).unwrap();
        let e = probe(&root).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "state1/latency: longer than 4096 bytes; a sysfs attribute holds at most one page"
            ),
            "{e}"
        );
        // /dev/zero behind a symlink: refused before a byte is read.
        fs::remove_file(root.join(latency)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join(latency)).unwrap();
        let e = probe(&root).unwrap_err().to_string();
        assert!(e.contains("state1/latency: is not a regular file"), "{e}");
        // A FIFO: refused without waiting for a writer.
        fs::remove_file(root.join(latency)).unwrap();
        let c = std::ffi::CString::new(root.join(latency).to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = probe(&root).unwrap_err().to_string();
        assert!(e.contains("state1/latency: is not a regular file"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn x86_states_get_the_rules_power_from_pl1_and_are_unknown_without_it() {
        let root = intel_tree("pl1", Some("15000000"));
        let probed = probe(&root).unwrap();
        let states = &probed.platform.clusters[0].states;
        // By hand, per CPU of 2 with a 15 W PL1: POLL 0.40 x 7.5 W = 3000 mW; C1E (clock
        // gated) 0.15 x 7.5 W = 1125 mW; C6 (power gated) 0.024 x 7.5 W = 180 mW.
        let central: Vec<f64> = states
            .iter()
            .map(|s| s.power_mw.as_ref().unwrap().central())
            .collect();
        assert_eq!(central, [3000.0, 1125.0, 180.0]);
        assert_eq!(states[2].power_mw.as_ref().unwrap().range(), (37.5, 255.0));
        assert!(
            probed.toml.contains("PL1 15 W taken as the TDP"),
            "{}",
            probed.toml
        );
        fs::remove_dir_all(&root).unwrap();

        let root = intel_tree("none", None);
        let probed = probe(&root).unwrap();
        assert!(probed.platform.clusters[0]
            .states
            .iter()
            .all(|s| s.power_mw.is_none()));
        assert!(probed.toml.contains("no PL1 under class/powercap"));
        fs::remove_dir_all(&root).unwrap();

        // A malformed limit is bad input, named by its file.
        let root = intel_tree("bad", Some("15 W"));
        let e = probe(&root).unwrap_err();
        assert!(e.to_string().contains("constraint_0_power_limit_uw"), "{e}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cpu_lists_fold_runs() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_list(&[5]), "5");
    }
}
