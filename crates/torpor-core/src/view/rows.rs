//! A run's results as row tables: what a data frame, a CSV or a sweep's ranking reads, each
//! column named with its unit, defined once here for every front end (docs/rows.md lists
//! them). Built from the report's JSON form (`serde_json::to_value` of a
//! [`crate::report::Report`], or a report read back), so that every value is the report's
//! own, unconverted.
//!
//! Two tables:
//!
//! 1. [`summary`]: per section (`cpu`, `io`, `nvme`, `ufs`, `system`), one row per variant
//!    that has it, `variant` and `duration_s` first; sections in the order they first
//!    appear over the variants (a variant's own order: cpu, io, nvme, ufs, system).
//!    A measure the run could not give (power where a state or OPP has no figure, HPB's
//!    hit ratio without HPB) is null.
//! 2. [`residency`]: one row per variant, component and state: of CPUs (each CPU's `running`
//!    time, then its idle states), of an NVMe drive (its power states, then the time between
//!    states), of a UFS device (its states); a whole machine has its CPUs' rows and its
//!    device's.
//! 3. [`sweep_measures`]: one row per variant, the measures a sweep constrains and ranks:
//!    the device's power (the NVMe drive, else the UFS device, else the CPUs'), IO latency,
//!    APST's counts, and with CPUs beside a device the whole machine's power and the latency
//!    of every request its tasks waited for. What the run did not measure is null.
//! 4. [`jobs`]: one row per variant, fio job and direction, what fio prints for it
//!    (`io.workloads[].fio`, report/fio.rs): runtime, bandwidth, clat and its percentiles.
//! 5. [`hpb`]: one row per variant with a UFS device, HPB's counters (the driver's
//!    `hpb_stats`, the device's map-cache misses, the host memory HPB held).
//! 6. [`clock_at_job_starts`]: one row per variant with a UFS device and fio job, the clock
//!    when the job started and how long it stayed below the max level from there.
//! 7. [`poll_windows`]: one row per variant with clock scaling and level (max, min), the
//!    loads devfreq's polls saw there.

use serde_json::{Map, Value};

use super::residency_share::percent_of;

/// One row: column name to value, in the table's column order.
pub type Row = Map<String, Value>;

/// `value[key]`, null when absent (a section or field the run did not have).
fn at<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or(&Value::Null)
}

/// `value`, or null when `known` is false.
fn known_or_null(value: &Value, known: bool) -> Value {
    if known {
        value.clone()
    } else {
        Value::Null
    }
}

/// A row starting with `variant` and `duration_s`, then `columns`.
fn row(v: &Value, columns: impl IntoIterator<Item = (String, Value)>) -> Row {
    let mut r = Row::new();
    r.insert("variant".into(), at(v, "name").clone());
    r.insert("duration_s".into(), at(v, "duration_s").clone());
    r.extend(columns);
    r
}

/// Columns named as written, each copied from `section[field]`.
fn copied(section: &Value, fields: &[(&str, &str)]) -> Vec<(String, Value)> {
    fields
        .iter()
        .map(|(name, field)| (name.to_string(), at(section, field).clone()))
        .collect()
}

/// The CPUs' row: the platform by its id (a preset's label is `preset <id>`), the governor,
/// power and energy (null unless every figure is known), the idle misses.
fn cpu_row(v: &Value, cpu: &Value) -> Row {
    let known = at(cpu, "power_known").as_bool().unwrap_or(false);
    let platform = at(cpu, "platform").as_str().unwrap_or_default();
    let mut cols = vec![
        (
            "device".to_string(),
            Value::from(platform.strip_prefix("preset ").unwrap_or(platform)),
        ),
        ("governor".to_string(), at(cpu, "governor").clone()),
        (
            "avg_power_mw".to_string(),
            known_or_null(at(cpu, "avg_power_mw"), known),
        ),
        (
            "energy_mj".to_string(),
            known_or_null(at(cpu, "energy_mj"), known),
        ),
    ];
    cols.extend(copied(
        cpu,
        &[
            ("too_deep_pct", "too_deep_pct"),
            ("too_shallow_pct", "too_shallow_pct"),
            ("wakeup_latency_gmean_us", "wakeup_latency_gmean_us"),
        ],
    ));
    row(v, cols)
}

/// The jobs' IO on a device: counts, rates, and the latency of all requests. `bw_mbs` is
/// the bytes over the run's duration (10^6 B/s; null for a run of no time), computed here.
fn io_row(v: &Value) -> Row {
    let io = at(v, "io");
    let all = at(io, "all");
    let mut cols = copied(io, &[("ios", "ios"), ("iops", "iops"), ("bytes", "bytes")]);
    let bw = match (at(io, "bytes").as_u64(), at(v, "duration_s").as_f64()) {
        (Some(bytes), Some(s)) if s > 0.0 => Value::from(bytes as f64 / s / 1e6),
        _ => Value::Null,
    };
    cols.push(("bw_mbs".into(), bw));
    cols.extend(copied(
        all,
        &[
            ("lat_min_us", "min_us"),
            ("lat_mean_us", "mean_us"),
            ("lat_p99_us", "p99_us"),
            ("lat_p999_us", "p99_9_us"),
            ("lat_max_us", "max_us"),
        ],
    ));
    row(v, cols)
}

fn nvme_row(v: &Value, nvme: &Value) -> Row {
    let mut cols = copied(nvme, &[("device", "device")]);
    cols.push((
        "algorithm".into(),
        at(at(nvme, "apst"), "algorithm").clone(),
    ));
    cols.extend(copied(
        nvme,
        &[
            ("avg_power_mw", "avg_power_mw"),
            ("energy_mj", "energy_mj"),
            ("energy_per_io_uj", "energy_per_io_uj"),
            ("transitions", "transitions"),
            ("woken_ios", "wake_delayed_ios"),
        ],
    ));
    row(v, cols)
}

/// The UFS device's row; `hpb_hit_ratio`: reads sent as HPB READ over eligible ones, null
/// without `[policy.hpb]`.
fn ufs_row(v: &Value, ufs: &Value) -> Row {
    let mut cols = copied(
        ufs,
        &[
            ("device", "device"),
            ("avg_power_mw", "avg_power_mw"),
            ("energy_mj", "energy_mj"),
            ("energy_per_io_uj", "energy_per_io_uj"),
            ("low_clock_pct", "low_clock_pct"),
        ],
    );
    let counters = at(ufs, "counters");
    cols.extend(copied(
        counters,
        &[("scale_ups", "scale_ups"), ("scale_downs", "scale_downs")],
    ));
    cols.push((
        "hpb_hit_ratio".into(),
        at(at(ufs, "hpb"), "hit_ratio").clone(),
    ));
    row(v, cols)
}

/// CPUs with a device: every field of the `system` section (its energies and power null
/// when the CPUs' power is not known: a partial sum would mislead), then the tasks' IO as
/// they saw it, `io_<part>_<stat>` from `cpu.io` (e.g. `io_total_p99_us`).
fn system_row(v: &Value, system: &Value) -> Row {
    let mut r = row(v, []);
    let known = at(system, "power_known").as_bool().unwrap_or(false);
    for (key, value) in system.as_object().into_iter().flatten() {
        let partial = matches!(key.as_str(), "cpu_energy_mj" | "energy_mj" | "avg_power_mw");
        let value = known_or_null(value, known || !partial);
        let name = if r.contains_key(key) {
            format!("system_{key}")
        } else {
            key.clone()
        };
        r.insert(name, value);
    }
    let io = at(at(v, "cpu"), "io");
    for (part, stats) in io.as_object().into_iter().flatten() {
        for (stat, value) in stats.as_object().into_iter().flatten() {
            r.insert(format!("io_{part}_{stat}"), value.clone());
        }
    }
    r
}

/// The summary tables of `report` (its JSON form), by section.
pub fn summary(report: &Value) -> Map<String, Value> {
    let mut tables: Map<String, Value> = Map::new();
    let mut add = |section: &str, r: Row| {
        let table = tables
            .entry(section.to_string())
            .or_insert_with(|| Value::Array(vec![]));
        if let Value::Array(rows) = table {
            rows.push(Value::Object(r));
        }
    };
    for v in at(report, "variants").as_array().into_iter().flatten() {
        let present = |key| !at(v, key).is_null();
        if present("cpu") {
            add("cpu", cpu_row(v, at(v, "cpu")));
        }
        if present("nvme") || present("ufs") {
            add("io", io_row(v));
        }
        if present("nvme") {
            add("nvme", nvme_row(v, at(v, "nvme")));
        }
        if present("ufs") {
            add("ufs", ufs_row(v, at(v, "ufs")));
        }
        if present("system") {
            add("system", system_row(v, at(v, "system")));
        }
    }
    tables
}

/// The name of an NVMe drive's time between power states in the residency table.
pub const BETWEEN_STATES: &str = "entry/exit";

/// A state's row: `time_s`, `time_pct` (of `span_ns`) and `energy_mj`, then `extra`.
fn state_row(
    head: Row,
    state: &str,
    time_ns: u64,
    span_ns: f64,
    energy_mj: Value,
    extra: Vec<(String, Value)>,
) -> Row {
    let mut r = head;
    r.insert("state".into(), Value::from(state));
    r.insert("time_s".into(), Value::from(time_ns as f64 / 1e9));
    r.insert("time_pct".into(), Value::from(percent_of(time_ns, span_ns)));
    r.insert("energy_mj".into(), energy_mj);
    r.extend(extra);
    r
}

/// Each CPU's running time and idle states, shares of the run; energies null unless every
/// power figure is known.
fn cpu_residency(v: &Value, cpu: &Value, out: &mut Vec<Row>) {
    let duration_ns = at(v, "duration_s").as_f64().unwrap_or(0.0) * 1e9;
    let span_ns = if duration_ns == 0.0 { 1.0 } else { duration_ns };
    let known = at(cpu, "power_known").as_bool().unwrap_or(false);
    for c in at(cpu, "cpus").as_array().into_iter().flatten() {
        let head = || {
            let mut r = component_head(v, "cpu");
            r.insert("cpu".into(), at(c, "cpu").clone());
            r
        };
        let busy = at(c, "busy_ns").as_u64().unwrap_or(0);
        let energy = known_or_null(at(c, "busy_energy_mj"), known);
        out.push(state_row(head(), "running", busy, span_ns, energy, vec![]));
        for s in at(c, "states").as_array().into_iter().flatten() {
            let name = at(s, "name").as_str().unwrap_or_default();
            let time = at(s, "time_ns").as_u64().unwrap_or(0);
            let energy = known_or_null(at(s, "energy_mj"), known);
            let counts = copied(
                s,
                &[
                    ("entries", "entries"),
                    ("above", "above"),
                    ("below", "below"),
                ],
            );
            out.push(state_row(head(), name, time, span_ns, energy, counts));
        }
    }
}

/// An NVMe drive's power states and the time between them, shares of its run.
fn nvme_residency(v: &Value, nvme: &Value, out: &mut Vec<Row>) {
    let total = at(nvme, "duration_ns").as_u64().unwrap_or(0).max(1) as f64;
    let head = || component_head(v, "nvme");
    for s in at(nvme, "power_states").as_array().into_iter().flatten() {
        let name = at(s, "name").as_str().unwrap_or_default();
        let time = at(s, "time_ns").as_u64().unwrap_or(0);
        let entries = copied(s, &[("entries", "entries")]);
        out.push(state_row(
            head(),
            name,
            time,
            total,
            at(s, "energy_mj").clone(),
            entries,
        ));
    }
    let between = at(nvme, "transition_ns").as_u64().unwrap_or(0);
    let energy = at(nvme, "transition_energy_mj").clone();
    let entries = copied(nvme, &[("entries", "transitions")]);
    out.push(state_row(
        head(),
        BETWEEN_STATES,
        between,
        total,
        energy,
        entries,
    ));
}

/// A UFS device's states (busy, idle, hibern8, clock-gated, scaling), shares of the time they
/// account for together (the device's whole run).
fn ufs_residency(v: &Value, ufs: &Value, out: &mut Vec<Row>) {
    let states = at(ufs, "states")
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let accounted: u64 = states
        .iter()
        .map(|s| at(s, "time_ns").as_u64().unwrap_or(0))
        .sum();
    let total = accounted.max(1) as f64;
    for s in states {
        let name = at(s, "name").as_str().unwrap_or_default();
        let time = at(s, "time_ns").as_u64().unwrap_or(0);
        let entries = copied(s, &[("entries", "entries")]);
        out.push(state_row(
            component_head(v, "ufs"),
            name,
            time,
            total,
            at(s, "energy_mj").clone(),
            entries,
        ));
    }
}

/// A residency row's start: the variant and the component (`cpu`, `nvme` or `ufs`).
fn component_head(v: &Value, component: &str) -> Row {
    let mut r = Row::new();
    r.insert("variant".into(), at(v, "name").clone());
    r.insert("component".into(), Value::from(component));
    r
}

/// The residency table of `report` (its JSON form): per variant, its CPUs' rows, then its
/// drive's or UFS device's.
pub fn residency(report: &Value) -> Vec<Row> {
    let mut out = vec![];
    for v in at(report, "variants").as_array().into_iter().flatten() {
        if !at(v, "cpu").is_null() {
            cpu_residency(v, at(v, "cpu"), &mut out);
        }
        if !at(v, "nvme").is_null() {
            nvme_residency(v, at(v, "nvme"), &mut out);
        }
        if !at(v, "ufs").is_null() {
            ufs_residency(v, at(v, "ufs"), &mut out);
        }
    }
    out
}

/// One variant's (`v`, its JSON form) sweep measures.
pub fn sweep_measures(v: &Value) -> Row {
    let ran_ios = at(at(v, "io"), "ios").as_u64().unwrap_or(0) > 0;
    let lat = if ran_ios {
        at(at(v, "io"), "all")
    } else {
        &Value::Null
    };
    let nvme = at(v, "nvme");
    let power = [nvme, at(v, "ufs"), at(v, "cpu")]
        .into_iter()
        .find(|s| !s.is_null())
        .unwrap_or(&Value::Null);
    let system = at(v, "system");
    let task_io = if system.is_null() {
        &Value::Null
    } else {
        at(at(at(v, "cpu"), "io"), "total")
    };
    let counted = at(task_io, "count").as_u64().unwrap_or(0) > 0;
    let task_io = if counted { task_io } else { &Value::Null };
    let mut r = Row::new();
    r.insert("variant".into(), at(v, "name").clone());
    r.insert("error".into(), Value::Null);
    r.extend(copied(
        power,
        &[("avg_power_mw", "avg_power_mw"), ("energy_mj", "energy_mj")],
    ));
    r.extend(copied(
        lat,
        &[
            ("lat_mean_us", "mean_us"),
            ("lat_p99_us", "p99_us"),
            ("lat_p999_us", "p99_9_us"),
            ("lat_max_us", "max_us"),
        ],
    ));
    r.extend(copied(
        nvme,
        &[
            ("woken_ios", "wake_delayed_ios"),
            ("transitions_per_hour", "transitions_per_hour"),
        ],
    ));
    r.extend(copied(
        system,
        &[
            ("system_avg_power_mw", "avg_power_mw"),
            ("system_energy_mj", "energy_mj"),
        ],
    ));
    r.extend(copied(
        task_io,
        &[("task_io_mean_us", "mean_us"), ("task_io_p99_us", "p99_us")],
    ));
    r
}

/// A percentile's column: `p` percent as `clat_p<p>_us`, its point as `_` (99.9: `clat_p99_9_us`).
fn percentile_column(p: &Value) -> String {
    let pct = p.as_f64().unwrap_or(f64::NAN).to_string().replace('.', "_");
    format!("clat_p{pct}_us")
}

/// A nanosecond figure in microseconds (null stays null).
fn us(ns: &Value) -> Value {
    ns.as_f64().map_or(Value::Null, |n| Value::from(n / 1e3))
}

/// One direction of a job as fio prints it: its IOs and bytes, bandwidth over fio's runtime
/// (MB/s, 10^6 B/s, computed here as fio does: bytes over `runtime_ms`), clat's min, mean,
/// max and standard deviation, then each percentile of fio's default list.
fn job_dir_row(head: Row, dir: &str, runtime_ms: &Value, d: &Value) -> Row {
    let mut r = head;
    r.insert("dir".into(), Value::from(dir));
    r.insert("runtime_ms".into(), runtime_ms.clone());
    r.extend(copied(d, &[("ios", "ios"), ("bytes", "bytes")]));
    let bw = match (at(d, "bytes").as_u64(), runtime_ms.as_u64()) {
        (Some(bytes), Some(ms)) if ms > 0 => Value::from(bytes as f64 / ms as f64 / 1e3),
        _ => Value::Null,
    };
    r.insert("bw_mbs".into(), bw);
    for (name, field) in [
        ("clat_min_us", "clat_min_ns"),
        ("clat_mean_us", "clat_mean_ns"),
        ("clat_max_us", "clat_max_ns"),
        ("clat_stdev_us", "clat_stdev_ns"),
    ] {
        r.insert(name.into(), us(at(d, field)));
    }
    for pair in at(d, "clat_percentiles_ns")
        .as_array()
        .into_iter()
        .flatten()
    {
        r.insert(percentile_column(&pair[0]), us(&pair[1]));
    }
    r
}

/// The jobs table of `report` (its JSON form): per variant, each workload fio would report
/// (a job; a replay has no `fio` figures), a row per direction it completed IO in, with when
/// the job started (`started_s`, its `startdelay`), its last completion (`finished_s`, null
/// when the run ended first) and the time between them (`start_to_finish_s`: a job's whole
/// time on the storage, where fio's runtime is whole milliseconds and waits out `runtime`).
pub fn jobs(report: &Value) -> Vec<Row> {
    let mut out = vec![];
    for v in at(report, "variants").as_array().into_iter().flatten() {
        for w in at(at(v, "io"), "workloads")
            .as_array()
            .into_iter()
            .flatten()
        {
            let fio = at(w, "fio");
            for dir in ["read", "write"] {
                let d = at(fio, dir);
                if d.is_null() {
                    continue;
                }
                let started_s = at(fio, "start_ns").as_u64().map(|ns| ns as f64 / 1e9);
                let finished_s = at(w, "finished_s");
                let busy = match (started_s, finished_s.as_f64()) {
                    (Some(start), Some(end)) => Value::from(end - start),
                    _ => Value::Null,
                };
                let mut head = Row::new();
                head.insert("variant".into(), at(v, "name").clone());
                head.insert("job".into(), at(w, "name").clone());
                head.insert(
                    "started_s".into(),
                    started_s.map_or(Value::Null, Value::from),
                );
                head.insert("finished_s".into(), finished_s.clone());
                head.insert("start_to_finish_s".into(), busy);
                out.push(job_dir_row(head, dir, at(fio, "runtime_ms"), d));
            }
        }
    }
    out
}

/// The driver's `hpb_stats` counters, by their kernel names.
const HPB_STATS: [&str; 7] = [
    "hit_cnt",
    "miss_cnt",
    "rcmd_noti_cnt",
    "rcmd_active_cnt",
    "rcmd_inactive_cnt",
    "map_req_cnt",
    "umap_req_cnt",
];

/// The HPB table of `report` (its JSON form): one row per variant with a UFS device,
/// `variant`, `hpb` (whether `[policy.hpb]` ran), the device's map-cache misses
/// (`device_map_misses`, from `ufs.ftl`, null without an FTL model), the driver's counters
/// (`hpb_stats`, kernel names; 0 without HPB, which sends no HPB READ and no READ BUFFER),
/// `outside_lu` (requests past the HPB LU, served without it), then `hit_ratio` and
/// `host_map_peak_bytes` (null without HPB: there is no ratio of nothing, no memory held).
pub fn hpb(report: &Value) -> Vec<Row> {
    let mut out = vec![];
    for v in at(report, "variants").as_array().into_iter().flatten() {
        let ufs = at(v, "ufs");
        if ufs.is_null() {
            continue;
        }
        let hpb = at(ufs, "hpb");
        let on = !hpb.is_null();
        let count = |section: &Value, key: &str| {
            if on {
                at(section, key).clone()
            } else {
                Value::from(0)
            }
        };
        let mut r = Row::new();
        r.insert("variant".into(), at(v, "name").clone());
        r.insert("hpb".into(), Value::from(on));
        r.insert(
            "device_map_misses".into(),
            at(at(ufs, "ftl"), "map_misses").clone(),
        );
        for key in HPB_STATS {
            r.insert(key.into(), count(at(hpb, "stats"), key));
        }
        r.insert(
            "outside_lu".into(),
            count(at(hpb, "counters"), "outside_lu"),
        );
        r.insert("hit_ratio".into(), at(hpb, "hit_ratio").clone());
        r.insert(
            "host_map_peak_bytes".into(),
            at(at(hpb, "host_memory"), "peak_map_bytes").clone(),
        );
        out.push(r);
    }
    out
}

/// The clock at each job's start (JSON form of `report`): per variant with a UFS device and
/// fio job, `variant`, `job`, `started_s`, `hz_at_start` (the first clock's level then, from
/// `ufs.freq_timeline`), and `below_max_ms`: from the start until the clock first reached the
/// max level (0 when it started there; to the run's end when it never did).
pub fn clock_at_job_starts(report: &Value) -> Vec<Row> {
    let mut out = vec![];
    for v in at(report, "variants").as_array().into_iter().flatten() {
        let ufs = at(v, "ufs");
        if ufs.is_null() {
            continue;
        }
        let max_hz = at(ufs, "max_hz").as_u64();
        let timeline: Vec<(u64, u64)> = at(ufs, "freq_timeline")
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| Some((e[0].as_u64()?, e[1].as_u64()?)))
            .collect();
        let run_end = (at(v, "duration_s").as_f64().unwrap_or(0.0) * 1e9).round() as u64;
        for w in at(at(v, "io"), "workloads")
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(t0) = at(at(w, "fio"), "start_ns").as_u64() else {
                continue;
            };
            let hz = timeline.iter().rev().find(|(t, _)| *t <= t0).map(|e| e.1);
            let below_ms = if hz.is_some() && hz == max_hz {
                0.0
            } else {
                let up = timeline.iter().find(|(t, h)| *t > t0 && Some(*h) == max_hz);
                let end = up.map_or(run_end, |e| e.0);
                end.saturating_sub(t0) as f64 / 1e6
            };
            let mut r = Row::new();
            r.insert("variant".into(), at(v, "name").clone());
            r.insert("job".into(), at(w, "name").clone());
            r.insert("started_s".into(), Value::from(t0 as f64 / 1e9));
            r.insert("hz_at_start".into(), hz.map_or(Value::Null, Value::from));
            r.insert("below_max_ms".into(), Value::from(below_ms));
            out.push(r);
        }
    }
    out
}

/// One level's windows (`bins[pct]`: how many polls saw a load of `pct` %): their count,
/// mean load and lowest load (null without windows), and how many were at or below `down`.
fn windows_row(head: Row, level: &str, bins: &[u64], down: Option<u64>) -> Row {
    let n: u64 = bins.iter().sum();
    let weighted: u64 = bins.iter().enumerate().map(|(pct, c)| pct as u64 * c).sum();
    let mut r = head;
    r.insert("level".into(), Value::from(level));
    r.insert("windows".into(), Value::from(n));
    let mean = (n > 0).then(|| weighted as f64 / n as f64);
    r.insert(
        "mean_load_pct".into(),
        mean.map_or(Value::Null, Value::from),
    );
    let lowest = bins.iter().position(|c| *c > 0);
    r.insert(
        "lowest_load_pct".into(),
        lowest.map_or(Value::Null, Value::from),
    );
    let below = down.map_or(0, |d| bins.iter().take(d as usize + 1).sum());
    r.insert("at_or_below_down".into(), Value::from(below));
    r
}

/// The loads devfreq's polls saw (JSON form of `report`): per variant with clock scaling
/// (`ufs.poll_loads`), a row for the max level then the min level: `variant`, `level`,
/// `windows`, `mean_load_pct`, `lowest_load_pct` (null without windows), `at_or_below_down`
/// (windows whose load was at or below `devfreq.down_at_or_below_pct`, where a poll leaves
/// the level; 0 without that threshold), then the thresholds themselves (`down_at_or_below_pct`,
/// `up_from_pct`, copied) and devfreq's `polling_period_ms`.
pub fn poll_windows(report: &Value) -> Vec<Row> {
    let mut out = vec![];
    for v in at(report, "variants").as_array().into_iter().flatten() {
        let ufs = at(v, "ufs");
        let loads = at(ufs, "poll_loads");
        if loads.is_null() {
            continue;
        }
        let dev = at(ufs, "devfreq");
        let down = at(dev, "down_at_or_below_pct").as_u64();
        for (level, key) in [("max", "at_max"), ("min", "at_min")] {
            let bins: Vec<u64> = at(loads, key)
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c.as_u64().unwrap_or(0))
                .collect();
            let mut head = Row::new();
            head.insert("variant".into(), at(v, "name").clone());
            let mut r = windows_row(head, level, &bins, down);
            r.extend(copied(
                dev,
                &[
                    ("down_at_or_below_pct", "down_at_or_below_pct"),
                    ("up_from_pct", "up_from_pct"),
                ],
            ));
            let period = at(dev, "polling_period_ns").as_u64();
            r.insert(
                "polling_period_ms".into(),
                period.map_or(Value::Null, |ns| Value::from(ns as f64 / 1e6)),
            );
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cpu_and_ufs(power_known: bool) -> Value {
        json!({"variants": [{
            "name": "base", "duration_s": 2.0,
            "io": {"ios": 3, "iops": 1.5, "bytes": 12288,
                   "all": {"count": 3, "min_us": 90.0, "mean_us": 100.0, "p99_us": 150.0, "p99_9_us": 151.0,
                           "max_us": 152.0}},
            "cpu": {"platform": "preset google-gs101", "governor": "teo", "power_known": power_known,
                    "avg_power_mw": 185.0, "energy_mj": 370.0, "too_deep_pct": 1.0,
                    "too_shallow_pct": 2.0, "wakeup_latency_gmean_us": 30.0,
                    "io": {"total": {"count": 3, "mean_us": 400.0, "p99_us": 900.0}}},
            "ufs": {"device": "samsung-ufs40-class", "avg_power_mw": 110.0, "energy_mj": 220.0,
                    "energy_per_io_uj": 73.3, "low_clock_pct": 40.0,
                    "counters": {"scale_ups": 2, "scale_downs": 1}},
            "system": {"power_known": power_known, "cpu_energy_mj": 370.0,
                       "device_energy_mj": 220.0, "energy_mj": 590.0, "avg_power_mw": 295.0}
        }]})
    }

    fn names(r: &Value) -> Vec<&str> {
        r.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn a_variant_gives_one_row_per_section_it_has_in_a_fixed_order() {
        let t = summary(&cpu_and_ufs(true));
        assert_eq!(t.keys().collect::<Vec<_>>(), ["cpu", "io", "ufs", "system"]);
        let cpu = &t["cpu"][0];
        assert_eq!(
            names(cpu),
            [
                "variant",
                "duration_s",
                "device",
                "governor",
                "avg_power_mw",
                "energy_mj",
                "too_deep_pct",
                "too_shallow_pct",
                "wakeup_latency_gmean_us"
            ]
        );
        // A preset is named by its id.
        assert_eq!(cpu["device"], "google-gs101");
        assert_eq!(t["io"][0]["lat_p999_us"], 151.0);
        // 12 288 B in 2 s: 6 144 B/s, 0.006 144 MB/s.
        assert_eq!(t["io"][0]["bw_mbs"], 0.006144);
        assert_eq!(t["ufs"][0]["scale_ups"], 2);
        assert_eq!(t["ufs"][0]["hpb_hit_ratio"], Value::Null);
        // The system's fields, `duration_s`-style collisions prefixed, then the tasks' IO.
        let system = &t["system"][0];
        assert_eq!(system["energy_mj"], 590.0);
        assert_eq!(system["io_total_p99_us"], 900.0);
    }

    #[test]
    fn power_the_run_could_not_price_is_null_not_a_partial_sum() {
        let t = summary(&cpu_and_ufs(false));
        assert_eq!(t["cpu"][0]["avg_power_mw"], Value::Null);
        assert_eq!(t["cpu"][0]["too_deep_pct"], 1.0);
        let system = &t["system"][0];
        assert_eq!(system["energy_mj"], Value::Null);
        assert_eq!(system["cpu_energy_mj"], Value::Null);
        // The device's part is known either way.
        assert_eq!(system["device_energy_mj"], 220.0);
    }

    #[test]
    fn residency_is_each_state_s_share_of_the_run() {
        // A 2 s run on one CPU: 0.5 s running, 1.5 s in WFI; by hand 25 % and 75 %.
        let report = json!({"variants": [{
            "name": "base", "duration_s": 2.0,
            "cpu": {"power_known": false, "cpus": [{
                "cpu": 0, "busy_ns": 500_000_000u64, "busy_energy_mj": 9.0,
                "states": [{"name": "WFI", "time_ns": 1_500_000_000u64, "energy_mj": 1.0,
                            "entries": 7, "above": 1, "below": 2}]}]}
        }]});
        let r = residency(&report);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0]["state"].clone(), r[0]["time_pct"].clone()),
            (json!("running"), json!(25.0))
        );
        assert_eq!(
            (r[1]["time_s"].clone(), r[1]["time_pct"].clone()),
            (json!(1.5), json!(75.0))
        );
        // Power not known: no energy, but the counts stay.
        assert_eq!(
            (r[1]["energy_mj"].clone(), r[1]["below"].clone()),
            (Value::Null, json!(2))
        );
        // A drive: its states over its own duration, then the time between them.
        let drive = json!({"variants": [{"name": "d", "nvme": {
            "duration_ns": 4000u64, "transition_ns": 1000u64, "transition_energy_mj": 0.5,
            "transitions": 3,
            "power_states": [{"name": "PS0", "time_ns": 3000u64, "energy_mj": 2.0, "entries": 2}]
        }}]});
        let r = residency(&drive);
        assert_eq!(r[0]["time_pct"], 75.0);
        assert_eq!(
            (r[1]["state"].clone(), r[1]["entries"].clone()),
            (json!(BETWEEN_STATES), json!(3))
        );
    }

    #[test]
    fn a_whole_machine_has_its_cpus_rows_then_its_device_s() {
        // One CPU busy 1 s of a 4 s run; a UFS device 3 s busy and 1 s in hibern8: by hand
        // 25 % running, 75 % busy (of the device's 4 s), 25 % hibern8.
        let report = json!({"variants": [{
            "name": "m", "duration_s": 4.0,
            "cpu": {"power_known": true, "cpus": [{
                "cpu": 0, "busy_ns": 1_000_000_000u64, "busy_energy_mj": 1.0, "states": []}]},
            "ufs": {"states": [
                {"name": "busy", "time_ns": 3_000_000_000u64, "energy_mj": 6.0, "entries": 5},
                {"name": "hibern8", "time_ns": 1_000_000_000u64, "energy_mj": 0.1, "entries": 4}]}
        }]});
        let r = residency(&report);
        let got: Vec<(Value, Value, Value)> = r
            .iter()
            .map(|r| {
                (
                    r["component"].clone(),
                    r["state"].clone(),
                    r["time_pct"].clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (json!("cpu"), json!("running"), json!(25.0)),
                (json!("ufs"), json!("busy"), json!(75.0)),
                (json!("ufs"), json!("hibern8"), json!(25.0)),
            ]
        );
        assert_eq!(r[2]["entries"], 4);
    }

    #[test]
    fn a_sweep_row_takes_the_device_s_power_and_the_whole_machine_s_beside_it() {
        let report = cpu_and_ufs(true);
        let r = sweep_measures(&report["variants"][0]);
        // The UFS device's power, not the CPUs' (185) or the system's (295).
        assert_eq!(r["avg_power_mw"], 110.0);
        assert_eq!(r["system_avg_power_mw"], 295.0);
        assert_eq!(r["task_io_p99_us"], 900.0);
        assert_eq!(r["lat_p99_us"], 150.0);
        assert_eq!(r["woken_ios"], Value::Null);
        // Without IOs no latency; a CPU-only run is priced by its CPUs.
        let cpu_only = json!({"name": "c", "io": {"ios": 0, "all": {"mean_us": 0.0}},
                              "cpu": {"avg_power_mw": 185.0, "energy_mj": 370.0}});
        let r = sweep_measures(&cpu_only);
        assert_eq!(
            (r["avg_power_mw"].clone(), r["lat_mean_us"].clone()),
            (json!(185.0), Value::Null)
        );
        assert_eq!(r["system_energy_mj"], Value::Null);
    }

    #[test]
    fn a_job_s_row_is_what_fio_prints_for_each_direction_it_read_or_wrote() {
        // 100 reads of 64 KiB (6 553 600 B) in fio's 10 001 ms: by hand 0.655 3... MB/s.
        let report = json!({"variants": [{"name": "b", "io": {"workloads": [
            {"name": "job1", "finished_s": 30.5, "fio": {"start_ns": 20_000_000_000u64,
                "runtime_ms": 10001,
                "read": {"ios": 100, "bytes": 6_553_600u64, "clat_min_ns": 141_000u64,
                         "clat_max_ns": 872_500u64, "clat_mean_ns": 550_250.0,
                         "clat_stdev_ns": 1500.0,
                         "clat_percentiles_ns": [[1.0, 150_000u64], [99.9, 870_000u64]]},
                "write": null}},
            {"name": "replay", "finished_s": 1.0}
        ]}}]});
        let r = jobs(&report);
        assert_eq!(r.len(), 1, "no write row, no row for a replay");
        assert_eq!(
            names(&Value::Object(r[0].clone())),
            [
                "variant",
                "job",
                "started_s",
                "finished_s",
                "start_to_finish_s",
                "dir",
                "runtime_ms",
                "ios",
                "bytes",
                "bw_mbs",
                "clat_min_us",
                "clat_mean_us",
                "clat_max_us",
                "clat_stdev_us",
                "clat_p1_us",
                "clat_p99_9_us"
            ]
        );
        assert_eq!(r[0]["bw_mbs"], 6_553_600.0 / 10_001.0 / 1000.0);
        // Started at 20 s, last completion at 30.5 s.
        assert_eq!(
            (r[0]["started_s"].clone(), r[0]["start_to_finish_s"].clone()),
            (json!(20.0), json!(10.5))
        );
        assert_eq!(r[0]["clat_min_us"], 141.0);
        assert_eq!(r[0]["clat_mean_us"], 550.25);
        assert_eq!(r[0]["clat_max_us"], 872.5);
        assert_eq!(r[0]["clat_p99_9_us"], 870.0);
    }

    #[test]
    fn hpb_s_counters_are_zero_without_hpb_and_its_ratio_null() {
        let report = json!({"variants": [
            {"name": "off", "ufs": {"ftl": {"map_misses": 7}}},
            {"name": "on", "ufs": {"ftl": {"map_misses": 2}, "hpb": {
                "stats": {"hit_cnt": 3, "miss_cnt": 1, "rcmd_noti_cnt": 4, "rcmd_active_cnt": 5,
                          "rcmd_inactive_cnt": 6, "map_req_cnt": 8, "umap_req_cnt": 0},
                "counters": {"outside_lu": 9}, "hit_ratio": 0.75,
                "host_memory": {"peak_map_bytes": 4096}}}},
            {"name": "cpu only", "cpu": {}}
        ]});
        let r = hpb(&report);
        assert_eq!(r.len(), 2, "a variant without a UFS device has no row");
        assert_eq!(
            (r[0]["hpb"].clone(), r[0]["device_map_misses"].clone()),
            (json!(false), json!(7))
        );
        assert_eq!(
            (r[0]["hit_cnt"].clone(), r[0]["map_req_cnt"].clone()),
            (json!(0), json!(0))
        );
        assert_eq!(r[0]["hit_ratio"], Value::Null);
        assert_eq!(r[0]["host_map_peak_bytes"], Value::Null);
        assert_eq!(
            (
                r[1]["hit_cnt"].clone(),
                r[1]["rcmd_inactive_cnt"].clone(),
                r[1]["outside_lu"].clone()
            ),
            (json!(3), json!(6), json!(9))
        );
        assert_eq!(r[1]["hit_ratio"], 0.75);
        assert_eq!(r[1]["host_map_peak_bytes"], 4096);
    }

    #[test]
    fn a_job_s_start_finds_the_clock_then_and_the_wait_for_the_max_level() {
        // Levels: min from 0, max at 3 s, min at 5 s, max at 7.5 s; run of 10 s.
        let report = json!({"variants": [{"name": "v", "duration_s": 10.0,
            "ufs": {"max_hz": 300, "freq_timeline": [[0, 100], [3_000_000_000u64, 300],
                     [5_000_000_000u64, 100], [7_500_000_000u64, 300]]},
            "io": {"workloads": [
                {"name": "a", "fio": {"start_ns": 1_000_000_000u64}},
                {"name": "b", "fio": {"start_ns": 4_000_000_000u64}},
                {"name": "c", "fio": {"start_ns": 6_000_000_000u64}},
                {"name": "replay"}]}}]});
        let r = clock_at_job_starts(&report);
        assert_eq!(r.len(), 3, "a replay has no start");
        // a: at min from 1 s until 3 s: 2000 ms; b: at max: 0; c: min from 6 s to 7.5 s.
        let waits: Vec<_> = r.iter().map(|r| r["below_max_ms"].clone()).collect();
        assert_eq!(waits, [json!(2000.0), json!(0.0), json!(1500.0)]);
        assert_eq!(r[1]["hz_at_start"], 300);
    }

    #[test]
    fn poll_windows_count_mean_and_lowest_load_per_level() {
        // At max: 2 windows at 3 %, 1 at 6 %: mean 12 / 3 = 4 %, lowest 3 %, two at or below
        // a down threshold of 5 %. At min: none.
        let mut at_max = vec![0u64; 101];
        at_max[3] = 2;
        at_max[6] = 1;
        let report = json!({"variants": [{"name": "v", "ufs": {
            "poll_loads": {"at_max": at_max, "at_min": vec![0u64; 101]},
            "devfreq": {"down_at_or_below_pct": 5, "up_from_pct": 70,
                        "polling_period_ns": 60_000_000u64}}}]});
        let r = poll_windows(&report);
        assert_eq!(
            (
                r[0]["level"].clone(),
                r[0]["windows"].clone(),
                r[0]["mean_load_pct"].clone()
            ),
            (json!("max"), json!(3), json!(4.0))
        );
        assert_eq!(
            (
                r[0]["lowest_load_pct"].clone(),
                r[0]["at_or_below_down"].clone()
            ),
            (json!(3), json!(2))
        );
        assert_eq!(
            (r[1]["windows"].clone(), r[1]["mean_load_pct"].clone()),
            (json!(0), Value::Null)
        );
        assert_eq!(r[1]["up_from_pct"], 70);
        assert_eq!(r[1]["polling_period_ms"], 60.0);
    }
}
