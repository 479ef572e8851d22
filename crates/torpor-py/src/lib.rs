//! Python bindings of torpor-core, imported as `torpor._native`. Type conversion only: each
//! function takes plain strings and paths, calls the core, and returns JSON text (or raises
//! `InputError` carrying the core's `FILE:LINE: message`). Paths arrive as `PathBuf`, so a
//! file name that is not UTF-8 reaches the core as the bytes the user typed.
//!
//! Long runs release the GIL so the Python side can run several in threads. While one runs,
//! its watcher takes the GIL about ten times a second: to let Python's signal handlers run
//! (Ctrl-C then raises `KeyboardInterrupt` out of the run within a fraction of a second) and
//! to call the caller's progress function. [`cancel`] stops every run in progress, e.g. the
//! other threads of a reproduction after Ctrl-C.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;

use torpor_core::apst::{ApstAlgorithm, ApstParams};
use torpor_core::drivers::run::{Limits, Override, Progress, RunError, Watch};
use torpor_core::experiments;
use torpor_core::experiments::claim::VerdictCounts;
use torpor_core::input::{nvme_preset as preset, nvme_source as source};
use torpor_core::report::Report;
use torpor_core::view::apst as apst_view;
use torpor_core::InputError as CoreInputError;

create_exception!(
    _native,
    InputError,
    PyException,
    "Bad input: FILE:LINE: what was expected."
);

fn to_py(e: CoreInputError) -> PyErr {
    InputError::new_err(e.to_string())
}

fn to_json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyException::new_err(e.to_string()))
}

/// The package version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Built-in presets as a JSON list.
#[pyfunction]
fn presets() -> PyResult<String> {
    let rows = preset::builtin()
        .collect::<Result<Vec<_>, _>>()
        .map_err(to_py)?;
    to_json(&rows)
}

/// Built-in CPU platform presets as a JSON list.
#[pyfunction]
fn cpu_presets() -> PyResult<String> {
    let rows = torpor_core::input::cpu_preset::builtin()
        .collect::<Result<Vec<_>, _>>()
        .map_err(to_py)?;
    to_json(&rows)
}

/// Built-in UFS device presets as a JSON list, each with what its calibrated model gives at
/// the host's two levels (`levels`: QD1 4 KiB read latency, saturated 512 KiB sequential read).
#[pyfunction]
fn ufs_presets() -> PyResult<String> {
    use torpor_core::storage::io::IoOp;
    use torpor_core::storage::ufs::service::SEQ_REFERENCE_BYTES;
    let rows = torpor_core::input::ufs_preset::builtin()
        .map(|p| {
            let p = p.map_err(to_py)?;
            let at = |level| {
                serde_json::json!({
                    "level": level,
                    "qd1_read_4k_us": p.qd1_read_4k(level).0 as f64 / 1e3,
                    "seq_read_mb_s": p.service.saturated_rate(IoOp::Read, SEQ_REFERENCE_BYTES, level)
                        * SEQ_REFERENCE_BYTES as f64 / 1e6,
                })
            };
            let mut row = serde_json::to_value(&p).map_err(|e| PyException::new_err(e.to_string()))?;
            row["levels"] = serde_json::json!({"min": at(p.min_level), "max": at(p.max_level)});
            Ok(row)
        })
        .collect::<PyResult<Vec<_>>>()?;
    to_json(&rows)
}

/// The platform TOML `torpor probe` writes for the sysfs tree under `root`.
#[pyfunction]
fn probe_sysfs(root: PathBuf) -> PyResult<String> {
    Ok(torpor_core::input::sysfs_probe::probe(&root)
        .map_err(to_py)?
        .toml)
}

/// A preset id or a device dump path, as JSON.
#[pyfunction]
fn load_device(spec: PathBuf) -> PyResult<String> {
    to_json(&source::load(&spec).map_err(to_py)?)
}

/// The APST table for `spec` under the JSON `params` (any subset of the APST settings).
#[pyfunction]
fn apst(spec: PathBuf, params_json: &str, data_file: &str, nvme_device: &str) -> PyResult<String> {
    let params: ApstParams = serde_json::from_str(params_json)
        .map_err(|e| InputError::new_err(format!("<apst parameters>: {e}")))?;
    let drive = source::load(&spec).map_err(to_py)?;
    to_json(&apst_view::view(drive, params, data_file, nvme_device))
}

/// `torpor qos`: each variant's PM QoS constraints over its run, as JSON (nothing is run).
/// Read without the GIL and watched, so that Ctrl-C stops a large file.
#[pyfunction]
fn qos_view(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let mut watch = PyWatch::new(None);
    let result = py.allow_threads(|| torpor_core::drivers::run::qos_file(&path, &mut watch));
    to_json(&watch.finish(result)?)
}

/// How each of the settings `{"dotted.path": value, ...}` (JSON) is applied on a running
/// system (`view::knobs`): JSON `{path: [line, ...] or null}` (null: no form known), in the
/// object's order.
#[pyfunction]
fn applied_settings(settings_json: &str) -> PyResult<String> {
    let fields = overrides(Some(settings_json))?;
    let out: serde_json::Map<String, serde_json::Value> = fields
        .into_iter()
        .map(|(path, value)| {
            let lines = torpor_core::view::knobs::applied(&path, &value);
            (path, serde_json::json!(lines))
        })
        .collect();
    to_json(&out)
}

/// The kernel's APST defaults and the builders' names (default first): the CLI's option
/// defaults and choices, defined once, here in the core.
#[pyfunction]
fn apst_defaults() -> PyResult<String> {
    to_json(&serde_json::json!({
        "params": ApstParams::default(),
        "algorithms": ApstAlgorithm::ALL,
    }))
}

/// The seven workflows of the APST commit message, one line each.
#[pyfunction]
fn apst_workflow_titles() -> PyResult<String> {
    to_json(&torpor_core::workload::APST_WORKFLOW_TITLES)
}

/// The measures of a timeline window (`view::timeline_window`): the columns as Python
/// holds them, the window `[from_s, to_s)`; JSON `{ios, lat_avg_us, lat_max_us, avg_power_mw}`.
#[pyfunction]
fn timeline_window(
    t_s: Vec<f64>,
    power_mw: Vec<f64>,
    request_t_s: Vec<f64>,
    request_latency_us: Vec<f64>,
    from_s: f64,
    to_s: f64,
) -> PyResult<String> {
    use torpor_core::view::timeline_window::{window, Columns};
    let columns = Columns {
        t_s: &t_s,
        power_mw: &power_mw,
        request_t_s: &request_t_s,
        request_latency_us: &request_latency_us,
    };
    to_json(&window(columns, from_s, to_s))
}

/// Idle-state residency shares (`view::residency_share`) of a CPU report's `cpus` (JSON)
/// over a run of `duration_s`.
#[pyfunction]
fn residency_shares(cpus_json: &str, duration_s: f64) -> PyResult<String> {
    use torpor_core::view::residency_share::{shares, CpuStates};
    let cpus: Vec<CpuStates> =
        serde_json::from_str(cpus_json).map_err(|e| InputError::new_err(format!("<cpus>: {e}")))?;
    to_json(&shares(&cpus, duration_s))
}

/// idlestat's comparison report (`view::idlestat_comparison`) of a CPU report's `cpus`
/// (JSON) against `baseline_json`'s (none: the baseline's own table), as its lines.
#[pyfunction]
#[pyo3(signature = (cpus_json, baseline_json=None))]
fn idlestat_comparison(cpus_json: &str, baseline_json: Option<&str>) -> PyResult<Vec<String>> {
    use torpor_core::view::idlestat_comparison::{lines, CpuCounts};
    let read = |json: &str| -> PyResult<Vec<CpuCounts>> {
        serde_json::from_str(json).map_err(|e| InputError::new_err(format!("<cpus>: {e}")))
    };
    let cpus = read(cpus_json)?;
    let baseline = baseline_json.map(read).transpose()?;
    lines(&cpus, baseline.as_deref())
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// How long `bytes` cross the link of the built-in UFS preset `id` at the host's min and max
/// levels (`view::ufs_link`), as JSON.
#[pyfunction]
fn ufs_link_times(id: &str, bytes: u32) -> PyResult<String> {
    let preset = torpor_core::input::ufs_preset::find(id)
        .ok_or_else(|| InputError::new_err(format!("<ufs preset>: no built-in preset {id}")))?
        .map_err(to_py)?;
    to_json(&torpor_core::view::ufs_link::link_times(&preset, bytes))
}

/// The row tables (`view::rows`) of a report given as Python objects (a report read back,
/// or a part of one), as [`row_tables`] gives them for a run.
#[pyfunction]
fn report_rows(report: &Bound<'_, PyAny>) -> PyResult<String> {
    to_json(&row_tables(&json_value(report)?))
}

/// `torpor run --fio`'s text (`view::fio_text`) of a report given as Python objects, or
/// `None` when no variant ran a fio job.
#[pyfunction]
fn fio_text(report: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let report = serde_json::from_value(json_value(report)?)
        .map_err(|e| InputError::new_err(format!("<report>: {e}")))?;
    Ok(torpor_core::view::fio_text::fio_text(&report))
}

/// A JSON-like Python object (dicts, lists, strings, numbers, booleans, None) as a JSON
/// value, each float taken bit for bit (parsing its text back could change its last digit).
fn json_value(obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    use serde_json::Value;
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.downcast::<PyInt>() {
        return Ok(match i.extract::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::from(i.extract::<u64>()?),
        });
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Value::from(f.value()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            map.insert(k.extract::<String>()?, json_value(&v)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        return l.iter().map(|v| json_value(&v)).collect();
    }
    Err(InputError::new_err(format!(
        "<report>: expected JSON-like values, got {}",
        obj.get_type().name()?
    )))
}

/// How many of `claims_json`'s claims (a JSON list of objects with `ok`: true, false or null)
/// hold, fail and cannot be checked, as JSON.
#[pyfunction]
fn verdict_counts(claims_json: &str) -> PyResult<String> {
    #[derive(serde::Deserialize)]
    struct Verdict {
        ok: Option<bool>,
    }
    let verdicts: Vec<Verdict> = serde_json::from_str(claims_json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    to_json(&VerdictCounts::of(verdicts.into_iter().map(|v| v.ok)))
}

/// Seed 000's verdicts: `inputs_json` is what `torpor reproduce apst` collected (the core's
/// `ApstInputs`); returns the judgement (claims with robustness, figures) as JSON. Malformed
/// inputs, a programming error of the caller, raise ValueError.
#[pyfunction]
fn judge_apst(inputs_json: &str) -> PyResult<String> {
    judge(inputs_json, experiments::apst::judge)
}

/// Seed 002's verdicts (and the v6.11 revert's), as [`judge_apst`] for `TeoInputs`.
#[pyfunction]
fn judge_teo(inputs_json: &str) -> PyResult<String> {
    judge(inputs_json, experiments::teo::judge)
}

/// Seed 004's verdicts (`torpor_core::experiments::qos`) from `inputs_json`, the rows the
/// Python side collected; malformed inputs or a missing row raise `ValueError`.
#[pyfunction]
fn judge_qos(inputs_json: &str) -> PyResult<String> {
    judge(inputs_json, experiments::qos::judge)
}

/// Seed 001's verdicts and figures (`torpor_core::experiments::devfreq`), as [`judge_qos`].
#[pyfunction]
fn judge_devfreq(inputs_json: &str) -> PyResult<String> {
    judge(inputs_json, experiments::devfreq::judge)
}

/// Seed 003's verdicts and figures (`torpor_core::experiments::hpb`), as [`judge_qos`].
#[pyfunction]
fn judge_hpb(inputs_json: &str) -> PyResult<String> {
    judge(inputs_json, experiments::hpb::judge)
}

/// An experiment's judgement of the inputs in `inputs_json`, as JSON. The inputs are the
/// Python side's own data: a serde error or a row the rules need that is missing is a
/// programming error there, raised as `ValueError`.
fn judge<I, J, E>(inputs_json: &str, judge: impl FnOnce(I) -> Result<J, E>) -> PyResult<String>
where
    I: serde::de::DeserializeOwned,
    J: Serialize,
    E: std::fmt::Display,
{
    let value_error = |e: String| pyo3::exceptions::PyValueError::new_err(e);
    let inputs: I = serde_json::from_str(inputs_json).map_err(|e| value_error(e.to_string()))?;
    to_json(&judge(inputs).map_err(|e| value_error(e.to_string()))?)
}

/// Bumped by [`cancel`]: a run stops when the count differs from the one it started with.
static CANCELS: AtomicU64 = AtomicU64::new(0);

/// Stops every run in progress (each raises `KeyboardInterrupt`).
#[pyfunction]
fn cancel() {
    CANCELS.fetch_add(1, Ordering::SeqCst);
}

/// How often a run takes the GIL to check for signals and report progress.
const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// The watcher of one run: see the module doc.
struct PyWatch {
    cancels_at_start: u64,
    progress: Option<PyObject>,
    next_check: Instant,
    /// The Python error that stopped the run (a `KeyboardInterrupt` from the signal handler,
    /// or whatever the progress function raised).
    error: Option<PyErr>,
}

impl PyWatch {
    fn new(progress: Option<PyObject>) -> Self {
        PyWatch {
            cancels_at_start: CANCELS.load(Ordering::SeqCst),
            progress,
            next_check: Instant::now(),
            error: None,
        }
    }

    /// The run's outcome as Python sees it.
    fn finish<T>(self, result: Result<T, RunError>) -> PyResult<T> {
        match result {
            Ok(v) => Ok(v),
            Err(RunError::Input(e)) => Err(to_py(e)),
            Err(RunError::Interrupted) => Err(self
                .error
                .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("cancelled"))),
        }
    }
}

impl PyWatch {
    /// Checks for a cancel and, at most every [`WATCH_PERIOD`], Python's signals and then
    /// `report` (with the GIL); `false` stops the run.
    fn check(&mut self, report: impl FnOnce(Python<'_>, &Self) -> PyResult<()>) -> bool {
        if CANCELS.load(Ordering::Relaxed) != self.cancels_at_start {
            return false;
        }
        let now = Instant::now();
        if now < self.next_check {
            return true;
        }
        self.next_check = now + WATCH_PERIOD;
        let outcome = Python::with_gil(|py| -> PyResult<()> {
            py.check_signals()?;
            report(py, self)
        });
        match outcome {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }
}

impl Watch for PyWatch {
    fn go_on(&mut self) -> bool {
        self.check(|_, _| Ok(()))
    }

    fn tick(&mut self, p: &Progress<'_>) -> bool {
        self.check(|py, watch| {
            if let Some(f) = &watch.progress {
                f.call1(
                    py,
                    (
                        p.variant,
                        p.variants,
                        p.name,
                        p.now.as_secs_f64(),
                        p.until.map(|u| u.as_secs_f64()),
                    ),
                )?;
            }
            Ok(())
        })
    }
}

/// `{"dotted.path": value, ...}` (JSON) as scenario overrides, in the object's order.
fn overrides(json: Option<&str>) -> PyResult<Vec<Override>> {
    let Some(json) = json else {
        return Ok(Vec::new());
    };
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| InputError::new_err(format!("<overrides>: {e}")))?;
    fields
        .into_iter()
        .map(|(path, value)| {
            toml::Value::try_from(&value)
                .map(|v| (path.clone(), v))
                .map_err(|_| {
                    InputError::new_err(format!(
                        "<overrides>: `{path}`: {value} has no TOML form (null?)"
                    ))
                })
        })
        .collect()
}

/// One variant's timeline columns, taken out of the report before it is encoded.
struct TimelineColumns {
    t_s: Vec<f64>,
    state: Vec<u16>,
    power_mw: Vec<f32>,
    request_t_s: Vec<f64>,
    request_latency_us: Vec<f32>,
    request_write: Vec<u8>,
}

/// A finished run, ready for Python: the report as JSON text, with `columns` each variant's
/// timeline columns moved out of it, and with `rows` its row tables as JSON
/// ([`row_tables`]). Built without the GIL, so that threads running many small runs encode
/// their reports in parallel.
struct Encoded {
    json: String,
    timelines: Option<Vec<Option<TimelineColumns>>>,
    rows: Option<String>,
}

/// What a run's report gives as rows (`view::rows`, docs/rows.md): `{"summary": {section:
/// [row, ...]}, "residency": [row, ...], "sweep": [row per variant], "jobs": [row per
/// variant, job and direction], "hpb": [row per variant with a UFS device],
/// "clock_at_job_starts": [...], "poll_windows": [...]}`, from the report's JSON form `value`.
fn row_tables(value: &serde_json::Value) -> serde_json::Value {
    use torpor_core::view::rows;
    let variants = value["variants"].as_array().into_iter().flatten();
    serde_json::json!({
        "summary": rows::summary(value),
        "residency": rows::residency(value),
        "sweep": variants.map(rows::sweep_measures).collect::<Vec<_>>(),
        "jobs": rows::jobs(value),
        "hpb": rows::hpb(value),
        "clock_at_job_starts": rows::clock_at_job_starts(value),
        "poll_windows": rows::poll_windows(value),
    })
}

fn encode(mut report: Report, columns: bool, rows: bool) -> Result<Encoded, serde_json::Error> {
    // From the typed report, before its timelines move out (rows read none of them).
    let rows = if rows {
        let value = serde_json::to_value(&report)?;
        Some(serde_json::to_string(&row_tables(&value))?)
    } else {
        None
    };
    let timelines = columns.then(|| {
        report
            .variants
            .iter_mut()
            .map(|v| {
                let t = &mut v.nvme.as_mut()?.timeline.as_mut()?.timeline;
                Some(TimelineColumns {
                    t_s: std::mem::take(&mut t.t_s),
                    state: std::mem::take(&mut t.state),
                    power_mw: std::mem::take(&mut t.power_mw),
                    request_t_s: std::mem::take(&mut t.request_t_s),
                    request_latency_us: std::mem::take(&mut t.request_latency_us),
                    request_write: std::mem::take(&mut t.request_write),
                })
            })
            .collect()
    });
    Ok(Encoded {
        json: serde_json::to_string(&report)?,
        timelines,
        rows,
    })
}

/// The report as JSON, or, with columns, `(json, timelines)`: one dict per variant (None
/// without a timeline) of NumPy arrays that take over the core's vectors without a copy
/// (`t_s` and `request_t_s` float64, `state` uint16, `power_mw` and `request_latency_us`
/// float32, `request_write` uint8), so that millions
/// of rows reach pandas with no text in between and no second copy in memory. With rows,
/// `(json, timelines or None, rows_json)`.
fn to_python(py: Python<'_>, encoded: Encoded) -> PyResult<PyObject> {
    if let Some(rows) = encoded.rows {
        let timelines = match encoded.timelines {
            Some(t) => timeline_list(py, t)?.into_any().unbind(),
            None => py.None(),
        };
        return Ok((encoded.json, timelines, rows)
            .into_pyobject(py)?
            .into_any()
            .unbind());
    }
    let Some(timelines) = encoded.timelines else {
        return Ok(encoded.json.into_pyobject(py)?.into_any().unbind());
    };
    let list = timeline_list(py, timelines)?;
    Ok((encoded.json, list).into_pyobject(py)?.into_any().unbind())
}

/// Each variant's timeline columns as a dict of NumPy arrays (None without a timeline).
fn timeline_list(
    py: Python<'_>,
    timelines: Vec<Option<TimelineColumns>>,
) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for t in timelines {
        match t {
            None => list.append(py.None())?,
            Some(t) => {
                let cols = PyDict::new(py);
                cols.set_item("t_s", t.t_s.into_pyarray(py))?;
                cols.set_item("state", t.state.into_pyarray(py))?;
                cols.set_item("power_mw", t.power_mw.into_pyarray(py))?;
                cols.set_item("request_t_s", t.request_t_s.into_pyarray(py))?;
                cols.set_item("request_latency_us", t.request_latency_us.into_pyarray(py))?;
                cols.set_item("request_write", t.request_write.into_pyarray(py))?;
                list.append(cols)?;
            }
        }
    }
    Ok(list)
}

/// The run's outcome encoded (see [`encode`]), or why there is none.
type RunOutcome = Result<Encoded, RunError>;

fn encoded(result: Result<Report, RunError>, columns: bool, rows: bool) -> RunOutcome {
    let report = result?;
    encode(report, columns, rows).map_err(|e| {
        RunError::Input(CoreInputError::whole(
            "<report>",
            format!("cannot encode: {e}"),
        ))
    })
}

/// What both run functions share: overrides parsed, a watcher made, `run` called without the
/// GIL with the overrides, limits and watcher, its report encoded there too.
fn run_with(
    py: Python<'_>,
    max_ios: u64,
    progress: Option<PyObject>,
    overrides_json: Option<&str>,
    (columns, rows): (bool, bool),
    run: impl FnOnce(&[Override], &Limits, &mut dyn Watch) -> Result<Report, RunError> + Send,
) -> PyResult<PyObject> {
    let fields = overrides(overrides_json)?;
    let mut watch = PyWatch::new(progress);
    let limits = Limits { max_ios };
    let result = py.allow_threads(|| encoded(run(&fields, &limits, &mut watch), columns, rows));
    to_python(py, watch.finish(result)?)
}

/// Runs a scenario file with `overrides_json` (`{"dotted.path": value}`) applied; returns the
/// report as JSON. `progress(variant, variants, name, now_s, until_s)` is called about ten
/// times a second while it runs. With `ftrace_dir` (an existing folder), each variant of a CPU
/// scenario also writes its idle trace there (`<variant>.trace`, idlestat's trace file). With
/// `rows`, the run's row tables come beside the report (see [`to_python`]).
#[pyfunction]
#[pyo3(signature = (path, max_ios = Limits::DEFAULT_MAX_IOS, progress = None, overrides_json = None, columns = false, ftrace_dir = None, rows = false))]
#[allow(clippy::too_many_arguments)]
fn run_scenario_file(
    py: Python<'_>,
    path: PathBuf,
    max_ios: u64,
    progress: Option<PyObject>,
    overrides_json: Option<&str>,
    columns: bool,
    ftrace_dir: Option<PathBuf>,
    rows: bool,
) -> PyResult<PyObject> {
    run_with(
        py,
        max_ios,
        progress,
        overrides_json,
        (columns, rows),
        |fields, limits, watch| match &ftrace_dir {
            None => torpor_core::drivers::run::run_file(&path, fields, limits, watch),
            Some(dir) => {
                torpor_core::drivers::run::run_file_traced(&path, fields, limits, watch, dir)
            }
        },
    )
}

/// Runs scenario text (`label` names it in errors) like [`run_scenario_file`]; relative
/// paths resolve from `base` (default: the cwd) and are named in errors as written.
#[pyfunction]
#[pyo3(signature = (text, label, max_ios = Limits::DEFAULT_MAX_IOS, progress = None, overrides_json = None, columns = false, base = None, rows = false))]
#[allow(clippy::too_many_arguments)]
fn run_scenario_text(
    py: Python<'_>,
    text: &str,
    label: &str,
    max_ios: u64,
    progress: Option<PyObject>,
    overrides_json: Option<&str>,
    columns: bool,
    base: Option<PathBuf>,
    rows: bool,
) -> PyResult<PyObject> {
    let base = base.unwrap_or_default();
    run_with(
        py,
        max_ios,
        progress,
        overrides_json,
        (columns, rows),
        |fields, limits, watch| {
            torpor_core::drivers::run::run_text(text, label, &base, fields, limits, watch)
        },
    )
}

/// Reads and checks the sweep file at `path` whole (`torpor_core::drivers::sweep_file::load`): its
/// parts at their lines, the point count, the base scenario alone and with each axis' ends.
/// Returns the sweep as JSON (the base scenario's text among it). Ctrl-C raises
/// `KeyboardInterrupt`.
#[pyfunction]
fn load_sweep(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let mut watch = PyWatch::new(None);
    let result = py.allow_threads(|| torpor_core::drivers::sweep_file::load(&path, &mut watch));
    to_json(&watch.finish(result)?)
}

/// `torpor idle decide`: runs an idle-decide sequence through a governor and writes the
/// decisions to standard output (the caller flushes Python's own buffer first). Returns the
/// number of steps.
#[pyfunction]
fn idle_decide(py: Python<'_>, path: PathBuf, governor: &str, json: bool) -> PyResult<u64> {
    use torpor_core::drivers::idle_decide::{write_decisions, DecideError};
    let label = path.to_string_lossy().into_owned();
    let result = py.allow_threads(|| {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        if path.as_os_str() == "-" {
            let stdin = std::io::stdin();
            write_decisions(stdin.lock(), "<stdin>", governor, json, &mut out)
        } else {
            let file = torpor_core::user_file::open(
                &path,
                &label,
                "an idle-decide sequence (JSON lines)",
            )?;
            let reader = std::io::BufReader::with_capacity(1 << 16, file);
            write_decisions(reader, &label, governor, json, &mut out)
        }
    });
    match result {
        Ok(steps) => Ok(steps),
        Err(DecideError::Input(e)) => Err(to_py(e)),
        Err(DecideError::Output(e)) => Err(e.into()),
    }
}

/// The cpuidle governor variants and their aliases, canonical names first.
#[pyfunction]
fn idle_governors() -> Vec<&'static str> {
    torpor_core::cpuidle::NAMES
        .iter()
        .map(|(n, _)| *n)
        .collect()
}

/// `torpor idle stats`: idlestat's C-state report of an ftrace text trace, as JSON.
#[pyfunction]
#[pyo3(signature = (trace, platform=None))]
fn idle_stats(py: Python<'_>, trace: PathBuf, platform: Option<PathBuf>) -> PyResult<String> {
    to_json(
        &py.allow_threads(|| {
            torpor_core::drivers::idle_stats::idle_stats(&trace, platform.as_deref())
        })
        .map_err(to_py)?,
    )
}

/// `torpor.trace`: every event of a trace (any format, told by content) as one table per
/// event, as JSON: `{"format", "events": {name: {"time_ns", "cpu", "fields": [[field,
/// values], ...]}}, "trace": counts}`.
#[pyfunction]
fn trace_tables(py: Python<'_>, trace: PathBuf) -> PyResult<String> {
    to_json(
        &py.allow_threads(|| torpor_core::trace::tables::read(&trace))
            .map_err(to_py)?,
    )
}

/// `torpor idle replay`: a trace replayed through governors (a comma-separated list), as
/// JSON. `platform` is a preset id or a platform TOML; a bad governor list raises ValueError.
#[pyfunction]
#[pyo3(signature = (trace, governors, platform=None, hz=None))]
fn idle_replay(
    py: Python<'_>,
    trace: PathBuf,
    governors: &str,
    platform: Option<String>,
    hz: Option<u32>,
) -> PyResult<String> {
    use torpor_core::drivers::idle_replay;
    let governors =
        idle_replay::parse_governors(governors).map_err(pyo3::exceptions::PyValueError::new_err)?;
    let options = idle_replay::IdleReplayOptions { governors, hz };
    to_json(
        &py.allow_threads(|| idle_replay::replay_file(&trace, platform.as_deref(), &options))
            .map_err(to_py)?,
    )
}

/// Times the engine's hot loops, about `seconds` each.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, seconds: f64) -> PyResult<String> {
    to_json(
        &py.allow_threads(|| torpor_core::drivers::bench::run_all(seconds))
            .map_err(to_py)?,
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("DEFAULT_MAX_IOS", Limits::DEFAULT_MAX_IOS)?;
    m.add("BETWEEN_STATES", torpor_core::view::rows::BETWEEN_STATES)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_presets, m)?)?;
    m.add_function(wrap_pyfunction!(ufs_presets, m)?)?;
    m.add_function(wrap_pyfunction!(probe_sysfs, m)?)?;
    m.add_function(wrap_pyfunction!(qos_view, m)?)?;
    m.add_function(wrap_pyfunction!(load_device, m)?)?;
    m.add_function(wrap_pyfunction!(apst, m)?)?;
    m.add_function(wrap_pyfunction!(apst_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(applied_settings, m)?)?;
    m.add_function(wrap_pyfunction!(apst_workflow_titles, m)?)?;
    m.add_function(wrap_pyfunction!(timeline_window, m)?)?;
    m.add_function(wrap_pyfunction!(residency_shares, m)?)?;
    m.add_function(wrap_pyfunction!(idlestat_comparison, m)?)?;
    m.add_function(wrap_pyfunction!(ufs_link_times, m)?)?;
    m.add_function(wrap_pyfunction!(report_rows, m)?)?;
    m.add_function(wrap_pyfunction!(fio_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_text, m)?)?;
    m.add_function(wrap_pyfunction!(load_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(cancel, m)?)?;
    m.add_function(wrap_pyfunction!(verdict_counts, m)?)?;
    m.add_function(wrap_pyfunction!(judge_apst, m)?)?;
    m.add_function(wrap_pyfunction!(judge_teo, m)?)?;
    m.add_function(wrap_pyfunction!(judge_qos, m)?)?;
    m.add_function(wrap_pyfunction!(judge_devfreq, m)?)?;
    m.add_function(wrap_pyfunction!(judge_hpb, m)?)?;
    m.add_function(wrap_pyfunction!(idle_decide, m)?)?;
    m.add_function(wrap_pyfunction!(idle_governors, m)?)?;
    m.add_function(wrap_pyfunction!(idle_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_tables, m)?)?;
    m.add_function(wrap_pyfunction!(idle_replay, m)?)?;
    Ok(())
}
