//! Python bindings of torpor-core, imported as `torpor._native`. Type conversion only: each
//! function takes plain strings, calls the core, and returns JSON text (or raises
//! `InputError` carrying the core's `FILE:LINE: message`). Long runs release the GIL so the
//! Python side can run several in threads.

use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Serialize;

use torpor_core::input::{nvme_preset as preset, nvme_source as source};
use torpor_core::storage::nvme::apst::{ApstAlgorithm, ApstParams};
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

/// A preset id or a device dump path, as JSON.
#[pyfunction]
fn load_device(spec: &str) -> PyResult<String> {
    to_json(&source::load(spec).map_err(to_py)?)
}

/// The APST table for `spec` under the JSON `params` (any subset of the APST settings).
#[pyfunction]
fn apst(spec: &str, params_json: &str, data_file: &str, nvme_device: &str) -> PyResult<String> {
    let params: ApstParams = serde_json::from_str(params_json)
        .map_err(|e| InputError::new_err(format!("<apst parameters>: {e}")))?;
    let drive = source::load(spec).map_err(to_py)?;
    to_json(&apst_view::view(drive, params, data_file, nvme_device))
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

/// Runs a scenario file; returns the report as JSON.
#[pyfunction]
fn run_scenario_file(py: Python<'_>, path: &str) -> PyResult<String> {
    let report = py
        .allow_threads(|| torpor_core::run::run_file(Path::new(path)))
        .map_err(to_py)?;
    to_json(&report)
}

/// Runs scenario text (`label` names it in errors); relative paths resolve from the cwd.
#[pyfunction]
fn run_scenario_text(py: Python<'_>, text: &str, label: &str) -> PyResult<String> {
    let report = py
        .allow_threads(|| torpor_core::run::run_text(text, label, Path::new(".")))
        .map_err(to_py)?;
    to_json(&report)
}

/// Times the engine's hot loops, about `seconds` each.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, seconds: f64) -> PyResult<String> {
    to_json(&py.allow_threads(|| torpor_core::bench::run_all(seconds)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(load_device, m)?)?;
    m.add_function(wrap_pyfunction!(apst, m)?)?;
    m.add_function(wrap_pyfunction!(apst_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(apst_workflow_titles, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_text, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    Ok(())
}
