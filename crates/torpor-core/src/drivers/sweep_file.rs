//! Sweep files (`torpor sweep`, docs/sweep.md): a base scenario, the fields to vary (axes),
//! the measures to minimise (objectives) and the bounds to meet (constraints).
//!
//! The whole file is checked before the first point runs, each problem at its line:
//!
//! 1. The TOML itself (syntax, nesting depth: the parser's own limit), then the shape of
//!    `[sweep]`: `[[sweep.axis]]`, `[[sweep.objective]]` and `[[sweep.constraint]]` arrays of
//!    tables, every key known and of its type, numbers finite.
//! 2. Each axis: `values` (not empty), `range = [from, to, step]` (three numbers, `step > 0`,
//!    `from <= to`) or, for random and Latin-hypercube sampling, `low <= high` (both above
//!    zero with `log = true`).
//! 3. The point count (the grid's product, or `samples`) is at most [`MAX_POINTS`], counted
//!    before any list of points is made.
//! 4. The base scenario is read (a regular file: a FIFO or a device is refused, not waited
//!    on) and checked as a run checks it ([`run::check_text`]), once alone and once with each
//!    axis at its first and at its last value (`low` and `high` for a sampled axis): an error
//!    every point would meet is reported once, at the axis' line.
//! 5. Every objective and constraint names a measure the base scenario's platform has
//!    ([`METRICS`]).
//!
//! The points themselves, the runs and the Pareto front are the Python side's
//! (`torpor/sweep.py`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use toml::{Table, Value};

use crate::drivers::run::{self, Limits, PlatformKinds, RunError, Watch};
use crate::error::{self, shown, InputError};
use crate::scenario::Lines;
use crate::user_file::{self, Decoding, MAX_SCENARIO_BYTES};

/// The most points one sweep may run: 10^5 runs are hours even of one-second scenarios, and
/// the rows of every point are kept in memory.
pub const MAX_POINTS: u64 = 100_000;

/// What a sweep's rows measure, by column name, and the platform each needs: a device's IO
/// for the latencies, an NVMe drive for the APST counts, CPUs beside a device for the whole
/// machine's energy and the IO latency its tasks saw. Power and energy are the device's (the
/// NVMe drive's, else the UFS device's), or the CPUs' in a CPU-only scenario; the `system_`
/// ones are the CPUs' and the devices' together.
pub const METRICS: [(&str, Needs); 12] = [
    ("avg_power_mw", Needs::Any),
    ("energy_mj", Needs::Any),
    ("lat_mean_us", Needs::Device),
    ("lat_p99_us", Needs::Device),
    ("lat_p999_us", Needs::Device),
    ("lat_max_us", Needs::Device),
    ("woken_ios", Needs::Nvme),
    ("transitions_per_hour", Needs::Nvme),
    ("system_avg_power_mw", Needs::System),
    ("system_energy_mj", Needs::System),
    ("task_io_mean_us", Needs::System),
    ("task_io_p99_us", Needs::System),
];

/// The platform a measure needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    Any,
    /// A storage device (NVMe or UFS), whose IOs have latencies.
    Device,
    /// An NVMe drive (APST's wake-ups and transitions).
    Nvme,
    /// CPUs beside a storage device: the whole machine's energy, and the latency of the IO
    /// the tasks waited for (device, interrupt, idle exit, scheduler).
    System,
}

/// How the points are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Grid,
    Random,
    Lhs,
}

/// A scenario field and the values a sweep gives it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    /// The field's dotted path in the scenario.
    pub path: String,
    /// The sweep file's line of the axis.
    pub line: usize,
    /// The values of a listed or ranged axis (empty for a sampled one).
    pub values: Vec<Value>,
    /// A sampled axis' bounds (random and lhs modes).
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub log: bool,
}

/// A bound on a measure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Constraint {
    pub metric: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// A sweep file, parsed and checked against its base scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepFile {
    /// The base scenario as written in the file, and as read.
    pub scenario: String,
    pub scenario_label: String,
    pub scenario_text: String,
    /// The folder the base scenario's own paths resolve against.
    pub scenario_base: PathBuf,
    pub mode: Mode,
    pub samples: u64,
    pub seed: u64,
    pub axes: Vec<Axis>,
    pub objectives: Vec<String>,
    pub constraints: Vec<Constraint>,
    /// How many points the sweep runs.
    pub points: u64,
    /// The platforms the base scenario runs.
    pub platforms: PlatformKinds,
}

/// Reads the sweep file at `path` and checks it whole (see the module doc), asking `watch`
/// between the scenario checks.
pub fn load(path: &Path, watch: &mut dyn Watch) -> Result<SweepFile, RunError> {
    let label = path.display().to_string();
    let text = user_file::read_text(
        path,
        &label,
        "a sweep file",
        MAX_SCENARIO_BYTES,
        Decoding::Strict,
    )?
    .text;
    let parsed = parse(&label, &text)?;
    let at = |line: usize, m: String| InputError::at(&label, line, m);
    let scenario_path = path
        .parent()
        .unwrap_or(Path::new(""))
        .join(&parsed.scenario);
    let scenario_label = scenario_path.display().to_string();
    let what = "a scenario file";
    user_file::require_regular(&scenario_path, &scenario_label, what)
        .map_err(|e| at(parsed.scenario_line, format!("the base scenario {e}")))?;
    let scenario_text = user_file::read_text(
        &scenario_path,
        &scenario_label,
        what,
        MAX_SCENARIO_BYTES,
        Decoding::Strict,
    )?
    .text;
    let scenario_base = scenario_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let limits = Limits::default();
    let check = |overrides: &[run::Override], watch: &mut dyn Watch| {
        run::check_text(
            &scenario_text,
            &scenario_label,
            &scenario_base,
            overrides,
            &limits,
            watch,
        )
    };
    // The base alone: its own errors at its own lines.
    let platforms = check(&[], watch)?;
    for axis in &parsed.axes {
        for value in axis.ends() {
            let setting = format!("{} = {}", axis.path, value_shown(&value));
            // How the scenario's check names the override it was given (`with_field`).
            let named = format!("{} = {value}: ", axis.path);
            match check(&[(axis.path.clone(), value)], watch) {
                Ok(_) => {}
                Err(RunError::Input(e)) => {
                    // The override's own error is about the scenario as a whole and names the
                    // setting, said here once; one found at a line of the scenario names it.
                    let message = match e.message.strip_prefix(&named) {
                        Some(rest) if e.line.is_none() && e.file == scenario_label => {
                            rest.to_string()
                        }
                        _ => e.to_string(),
                    };
                    return Err(at(
                        axis.line,
                        format!("axis value {setting}: every point with it fails: {message}"),
                    )
                    .into());
                }
                Err(stop) => return Err(stop),
            }
        }
    }
    for (line, what, metric) in &parsed.measures {
        needs(metric, &platforms).map_err(|m| at(*line, format!("{what} {metric}: {m}")))?;
    }
    Ok(SweepFile {
        scenario: parsed.scenario,
        scenario_label,
        scenario_text,
        scenario_base,
        mode: parsed.mode,
        samples: parsed.samples,
        seed: parsed.seed,
        axes: parsed.axes,
        objectives: parsed.objectives,
        constraints: parsed.constraints,
        points: parsed.points,
        platforms,
    })
}

/// A measure the platforms do not have, in words.
fn needs(metric: &str, p: &PlatformKinds) -> Result<(), String> {
    let need = METRICS
        .iter()
        .find(|(m, _)| *m == metric)
        .map_or(Needs::Any, |(_, n)| *n);
    let runs = match (p.nvme, p.ufs) {
        (true, true) => "an NVMe drive and a UFS device",
        (true, false) => "an NVMe drive",
        (false, true) => "a UFS device",
        (false, false) => "CPUs alone",
    };
    match need {
        Needs::Device if !p.nvme && !p.ufs => Err(format!(
            "IO latency needs a storage device ([platform.nvme] or [platform.ufs]); the base \
             scenario runs {runs}"
        )),
        Needs::Nvme if !p.nvme => Err(format!(
            "APST's counts need an NVMe drive ([platform.nvme]); the base scenario runs {runs}"
        )),
        Needs::System if !p.cpu || (!p.nvme && !p.ufs) => Err(format!(
            "the whole machine's measures need CPUs beside a storage device ([platform.cpu] \
             with [platform.nvme] or [platform.ufs]); the base scenario runs {runs}"
        )),
        _ => Ok(()),
    }
}

impl Axis {
    /// The values the base scenario is checked with: the first and the last (the bounds of a
    /// sampled axis, as integers when both are, as the points draw them).
    fn ends(&self) -> Vec<Value> {
        match (self.values.first(), self.values.last()) {
            (Some(a), Some(b)) if a == b => vec![a.clone()],
            (Some(a), Some(b)) => vec![a.clone(), b.clone()],
            _ => {
                let (low, high) = (self.low.unwrap_or(0.0), self.high.unwrap_or(0.0));
                let integral = low.fract() == 0.0 && high.fract() == 0.0;
                [low, high]
                    .iter()
                    .map(|&x| {
                        if integral && x.abs() < 9.0e15 {
                            Value::Integer(x as i64)
                        } else {
                            Value::Float(x)
                        }
                    })
                    .collect()
            }
        }
    }
}

/// A sweep file's text checked alone (steps 1-3 of the module doc).
#[derive(Debug)]
pub struct Parsed {
    pub scenario: String,
    pub scenario_line: usize,
    pub mode: Mode,
    pub samples: u64,
    pub seed: u64,
    pub axes: Vec<Axis>,
    pub objectives: Vec<String>,
    pub constraints: Vec<Constraint>,
    pub points: u64,
    /// Each measure named, with its line and what named it (for step 5).
    measures: Vec<(usize, &'static str, String)>,
}

/// The keys `[sweep]` may hold.
const SWEEP_KEYS: [&str; 7] = [
    "scenario",
    "mode",
    "samples",
    "seed",
    "axis",
    "objective",
    "constraint",
];

/// Parses and checks sweep-file `text` alone (`label` names it in errors).
pub fn parse(label: &str, text: &str) -> Result<Parsed, InputError> {
    let root: Table = toml::from_str(text).map_err(|e| error::from_toml(label, text, &e))?;
    let lines = Lines::index(text);
    let line = |path: &str| lines.find(None, path).unwrap_or(1);
    let at = |path: &str, m: String| InputError::at(label, line(path), m);
    if let Some(key) = root.keys().find(|k| *k != "sweep") {
        return Err(at(
            key,
            format!(
                "unknown top-level key {}: a sweep file holds one [sweep] table",
                shown(key)
            ),
        ));
    }
    let Some(Value::Table(s)) = root.get("sweep") else {
        return Err(InputError::new(
            label,
            lines.find(None, "sweep"),
            "expected a [sweep] table (with `scenario`, [[sweep.axis]] and [[sweep.objective]])",
        ));
    };
    if let Some(key) = s.keys().find(|k| !SWEEP_KEYS.contains(&k.as_str())) {
        return Err(at(
            &format!("sweep.{key}"),
            format!(
                "[sweep]: unknown key {}; expected {}",
                shown(key),
                SWEEP_KEYS.join(", ")
            ),
        ));
    }
    let scenario = match s.get("scenario") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(other) => {
            return Err(at(
                "sweep.scenario",
                format!(
                    "[sweep] scenario: expected the base scenario's file name (a string), got {}",
                    value_shown(other)
                ),
            ))
        }
        None => {
            return Err(at(
                "sweep",
                "[sweep]: expected `scenario = \"<base scenario file>\"`".into(),
            ))
        }
    };
    let mode = match s.get("mode") {
        None => Mode::Grid,
        Some(Value::String(m)) if m == "grid" => Mode::Grid,
        Some(Value::String(m)) if m == "random" => Mode::Random,
        Some(Value::String(m)) if m == "lhs" => Mode::Lhs,
        Some(other) => {
            return Err(at(
                "sweep.mode",
                format!(
                    "[sweep] mode: expected \"grid\", \"random\" or \"lhs\", got {}",
                    value_shown(other)
                ),
            ))
        }
    };
    let samples =
        match (s.get("samples"), mode) {
            (None, Mode::Grid) => 0,
            (Some(_), Mode::Grid) => return Err(at(
                "sweep.samples",
                "[sweep] samples: a grid runs every combination of its axes' values; `samples` \
                 is for mode = \"random\" or \"lhs\""
                    .into(),
            )),
            (Some(Value::Integer(n)), _) if (1..=MAX_POINTS as i64).contains(n) => *n as u64,
            (v, _) => {
                return Err(at(
                    if v.is_some() {
                        "sweep.samples"
                    } else {
                        "sweep"
                    },
                    format!(
                        "[sweep] samples: expected how many points to draw, an integer in \
                     1..={MAX_POINTS} (the limit of points per sweep), got {}",
                        v.map_or("nothing".into(), value_shown)
                    ),
                ))
            }
        };
    let seed = match s.get("seed") {
        None => 1,
        Some(Value::Integer(n)) if *n >= 0 => *n as u64,
        Some(other) => {
            return Err(at(
                "sweep.seed",
                format!(
                    "[sweep] seed: expected an integer >= 0, got {}",
                    value_shown(other)
                ),
            ))
        }
    };
    let axes_of = tables(s, "axis", &at)?;
    if axes_of.is_empty() {
        return Err(at(
            "sweep",
            "expected at least one [[sweep.axis]] (a scenario field and its values)".into(),
        ));
    }
    let mut axes = Vec::with_capacity(axes_of.len());
    for (i, a) in axes_of.iter().enumerate() {
        axes.push(axis(a, &format!("sweep.axis[{i}]"), mode, &at, &line)?);
    }
    let points = match mode {
        Mode::Grid => {
            let points = axes
                .iter()
                .fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64));
            if points > MAX_POINTS {
                return Err(at(
                    "sweep.axis[0]",
                    format!(
                        "the grid has {points} points ({}), more than the limit of \
                         {MAX_POINTS} per sweep; use fewer values, or mode = \"random\" or \
                         \"lhs\" with `samples`",
                        axes.iter()
                            .map(|a| a.values.len().to_string())
                            .collect::<Vec<_>>()
                            .join(" x ")
                    ),
                ));
            }
            points
        }
        _ => samples,
    };
    let mut measures = Vec::new();
    let mut objectives = Vec::new();
    for (i, o) in tables(s, "objective", &at)?.iter().enumerate() {
        let path = format!("sweep.objective[{i}]");
        only_keys(o, &["minimise"], &path, &at)?;
        let name = metric(
            o.get("minimise"),
            &format!("{path}.minimise"),
            "objective",
            &at,
        )?;
        measures.push((line(&path), "objective", name.clone()));
        objectives.push(name);
    }
    if objectives.is_empty() {
        return Err(at(
            "sweep",
            "expected at least one [[sweep.objective]] with `minimise = \"<measure>\"`".into(),
        ));
    }
    let mut constraints = Vec::new();
    for (i, c) in tables(s, "constraint", &at)?.iter().enumerate() {
        let path = format!("sweep.constraint[{i}]");
        only_keys(c, &["metric", "min", "max"], &path, &at)?;
        let name = metric(
            c.get("metric"),
            &format!("{path}.metric"),
            "constraint",
            &at,
        )?;
        let bound = |key: &str| -> Result<Option<f64>, InputError> {
            match c.get(key) {
                None => Ok(None),
                Some(v) => number(v).map(Some).ok_or_else(|| {
                    at(
                        &format!("{path}.{key}"),
                        format!(
                            "constraint {name}: {key}: expected a finite number, got {}",
                            value_shown(v)
                        ),
                    )
                }),
            }
        };
        let (min, max) = (bound("min")?, bound("max")?);
        match (min, max) {
            (None, None) => {
                return Err(at(
                    &path,
                    format!("constraint {name}: expected `min`, `max` or both"),
                ))
            }
            (Some(lo), Some(hi)) if lo > hi => {
                return Err(at(
                    &path,
                    format!("constraint {name}: min {lo} is above max {hi}: no point can meet it"),
                ))
            }
            _ => {}
        }
        measures.push((line(&path), "constraint", name.clone()));
        constraints.push(Constraint {
            metric: name,
            min,
            max,
        });
    }
    Ok(Parsed {
        scenario,
        scenario_line: line("sweep.scenario"),
        mode,
        samples,
        seed,
        axes,
        objectives,
        constraints,
        points,
        measures,
    })
}

/// The tables of `[[sweep.KEY]]` (none when absent); anything else is refused.
fn tables<'a>(
    s: &'a Table,
    key: &str,
    at: &dyn Fn(&str, String) -> InputError,
) -> Result<Vec<&'a Table>, InputError> {
    let path = format!("sweep.{key}");
    let wrong = |got: &Value| {
        at(
            &path,
            format!(
                "[sweep] {key}: expected an array of tables, each written [[sweep.{key}]], got {}",
                value_shown(got)
            ),
        )
    };
    match s.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Table(t) => Ok(t),
                other => Err(wrong(other)),
            })
            .collect(),
        Some(other) => Err(wrong(other)),
    }
}

/// Refuses a key of the table at `path` that is not in `known`.
fn only_keys(
    t: &Table,
    known: &[&str],
    path: &str,
    at: &dyn Fn(&str, String) -> InputError,
) -> Result<(), InputError> {
    match t.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => Err(at(
            &format!("{path}.{k}"),
            format!(
                "[[{}]]: unknown key {}; expected {}",
                table_name(path),
                shown(k),
                known.join(", ")
            ),
        )),
    }
}

/// `sweep.axis[2]` -> `sweep.axis`.
fn table_name(path: &str) -> &str {
    path.split('[').next().unwrap_or(path)
}

fn metric(
    v: Option<&Value>,
    path: &str,
    what: &str,
    at: &dyn Fn(&str, String) -> InputError,
) -> Result<String, InputError> {
    match v {
        Some(Value::String(name)) if METRICS.iter().any(|(m, _)| m == name) => Ok(name.clone()),
        _ => Err(at(
            path,
            format!(
                "{what}: expected one of {}, got {}",
                METRICS.map(|(m, _)| m).join(", "),
                v.map_or("nothing".into(), value_shown)
            ),
        )),
    }
}

/// A finite number, integer or float (not a boolean).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(x) if x.is_finite() => Some(*x),
        _ => None,
    }
}

/// One `[[sweep.axis]]` at `path`.
fn axis(
    a: &Table,
    path: &str,
    mode: Mode,
    at: &dyn Fn(&str, String) -> InputError,
    line: &dyn Fn(&str) -> usize,
) -> Result<Axis, InputError> {
    only_keys(
        a,
        &["path", "values", "range", "low", "high", "log"],
        path,
        at,
    )?;
    let field = match a.get("path") {
        Some(Value::String(p)) if !p.is_empty() => p.clone(),
        other => {
            return Err(at(
                path,
                format!(
                    "[[sweep.axis]]: expected `path = \"dotted.path\"` (a scenario field), got {}",
                    other.map_or("nothing".into(), value_shown)
                ),
            ))
        }
    };
    let name = shown(&field);
    let given: Vec<&str> = ["values", "range", "low"]
        .into_iter()
        .filter(|k| a.contains_key(*k))
        .collect();
    if given.len() > 1 {
        return Err(at(
            path,
            format!(
                "axis {name}: give one of `values`, `range` or `low`/`high`, got {}",
                given.join(" and ")
            ),
        ));
    }
    let mut out = Axis {
        path: field,
        line: line(path),
        values: Vec::new(),
        low: None,
        high: None,
        log: false,
    };
    let key = |k: &str| format!("{path}.{k}");
    if let Some(v) = a.get("values") {
        let Value::Array(values) = v else {
            return Err(at(
                &key("values"),
                format!(
                    "axis {name}: values: expected an array, got {}",
                    value_shown(v)
                ),
            ));
        };
        if values.is_empty() {
            return Err(at(
                &key("values"),
                format!("axis {name}: values: expected at least one value, got []"),
            ));
        }
        if values.len() as u64 > MAX_POINTS {
            return Err(at(
                &key("values"),
                format!(
                    "axis {name}: {} values, more than the limit of {MAX_POINTS} points per sweep",
                    values.len()
                ),
            ));
        }
        if let Some(bad) = values.iter().find(|v| has_datetime(v)) {
            return Err(at(
                &key("values"),
                format!("axis {name}: values: a date or time ({bad}) is no scenario field's value"),
            ));
        }
        out.values = values.clone();
    } else if let Some(v) = a.get("range") {
        out.values = range(v, &name).map_err(|m| at(&key("range"), m))?;
    } else if a.contains_key("low") || a.contains_key("high") {
        if mode == Mode::Grid {
            return Err(at(
                path,
                format!(
                    "axis {name}: `low`/`high` are drawn from in mode = \"random\" or \"lhs\"; a \
                     grid needs `values` or `range`"
                ),
            ));
        }
        let bound = |k: &str| -> Result<f64, InputError> {
            match a.get(k) {
                Some(v) => number(v).ok_or_else(|| {
                    at(
                        &key(k),
                        format!(
                            "axis {name}: {k}: expected a finite number, got {}",
                            value_shown(v)
                        ),
                    )
                }),
                None => Err(at(
                    path,
                    format!("axis {name}: expected both `low` and `high`, got no `{k}`"),
                )),
            }
        };
        let (low, high) = (bound("low")?, bound("high")?);
        let log = match a.get("log") {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(v) => {
                return Err(at(
                    &key("log"),
                    format!(
                        "axis {name}: log: expected true or false, got {}",
                        value_shown(v)
                    ),
                ))
            }
        };
        if low > high {
            return Err(at(
                &key("low"),
                format!("axis {name}: low {low} is above high {high}; expected low <= high"),
            ));
        }
        if log && low <= 0.0 {
            return Err(at(
                &key("low"),
                format!(
                    "axis {name}: log = true draws on a log scale, which needs low > 0, got {low}"
                ),
            ));
        }
        out.low = Some(low);
        out.high = Some(high);
        out.log = log;
    } else {
        return Err(at(
            path,
            format!(
                "axis {name}: expected `values = [...]`, `range = [from, to, step]` or (random \
                 and lhs modes) `low` and `high`"
            ),
        ));
    }
    if a.contains_key("log") && out.low.is_none() {
        return Err(at(
            &key("log"),
            format!("axis {name}: log: applies to `low`/`high` axes only"),
        ));
    }
    Ok(out)
}

/// `range = [from, to, step]` as its values: integers when all three are, else floats; at
/// most [`MAX_POINTS`] of them, counted before any is made.
fn range(v: &Value, name: &str) -> Result<Vec<Value>, String> {
    let expected =
        format!("axis {name}: range: expected [from, to, step] with step > 0 and from <= to");
    let Value::Array(parts) = v else {
        return Err(format!("{expected}, got {}", value_shown(v)));
    };
    let numbers: Option<Vec<f64>> = parts.iter().map(number).collect();
    let (Some(n), 3) = (numbers, parts.len()) else {
        return Err(format!("{expected}, got {}", value_shown(v)));
    };
    let (from, to, step) = (n[0], n[1], n[2]);
    if step <= 0.0 || from > to {
        return Err(format!("{expected}, got {}", value_shown(v)));
    }
    // The same tolerance as a float step that should land on `to` needs.
    let count = ((to - from) / step + 1e-9).floor() + 1.0;
    if count > MAX_POINTS as f64 {
        return Err(format!(
            "axis {name}: range: {count:.0} values, more than the limit of {MAX_POINTS} points \
             per sweep"
        ));
    }
    let count = count as i64;
    let ints: Option<Vec<i64>> = parts
        .iter()
        .map(|p| match p {
            Value::Integer(i) => Some(*i),
            _ => None,
        })
        .collect();
    Ok(match ints {
        Some(i) => (0..count)
            .map(|k| Value::Integer(i[0].saturating_add(k.saturating_mul(i[2]))))
            .collect(),
        None => (0..count)
            .map(|k| Value::Float(from + k as f64 * step))
            .collect(),
    })
}

fn has_datetime(v: &Value) -> bool {
    match v {
        Value::Datetime(_) => true,
        Value::Array(a) => a.iter().any(has_datetime),
        Value::Table(t) => t.values().any(has_datetime),
        _ => false,
    }
}

/// A value as an error quotes it: its TOML text, cut when long.
fn value_shown(v: &Value) -> String {
    let text = match v {
        Value::Table(_) => "a table".to_string(),
        Value::String(s) => return shown(s),
        other => other.to_string(),
    };
    let cut: String = text.chars().take(error::SHOWN_TOKEN_CHARS).collect();
    if cut.len() < text.len() {
        format!("{cut}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests;
