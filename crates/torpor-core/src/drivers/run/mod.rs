//! Runs a scenario: for each variant, builds its world (the drive with the policy's table,
//! the workloads), runs it, and fills one section of the [`Report`] per component. Every
//! variant sees identical input unless it changes the input itself (same workload, same seed),
//! so differences between variants are the settings' doing.
//!
//! Before anything runs, the work the scenario asks for is bounded from above
//! ([`crate::workload::estimate`]); above [`Limits::max_ios`] the scenario is refused with the
//! figure, so a mistyped duration costs an error, not a day. While it runs, a [`Watch`] sees
//! its progress every few thousand events and can stop it (Ctrl-C).
//!
//! The parts, in the order a run meets them:
//! - `scenario_file`: the file read, parsed with its overrides, and checked without running
//!   ([`check_text`]);
//! - `variant`: one variant being run, the files it names and its workloads;
//! - `limits`: the work bound ([`Limits`]) and its refusal;
//! - `cpu_platform`, `nvme_rig`, `ufs_rig`: the platform builders, one per kind of hardware;
//! - `simulate`: each variant's world run on the engine and its report filled;
//! - `watch`: what a watcher sees and why a run stops without a report ([`RunError`]);
//! - `qos_view`: `torpor qos` ([`qos_file`]), the same variants read, nothing simulated.

use std::path::Path;

use crate::error::shown;
use crate::report::Report;
use crate::scenario::ScenarioFile;

use limits::check_work;
use scenario_file::{parse_watched, read_scenario};
use variant::variant_runs;

mod cpu_platform;
mod limits;
mod nvme_rig;
mod qos_view;
mod scenario_file;
mod simulate;
#[cfg(test)]
mod tests;
mod ufs_rig;
mod variant;
mod watch;

pub use limits::Limits;
pub use qos_view::qos_file;
pub use scenario_file::{check_text, PlatformKinds};
pub use watch::{Progress, RunError, Watch};

/// A field of the scenario set from outside the file (a sweep's point, an API keyword): its
/// dotted path (`policy.apst.primary_timeout_ms`) and value.
pub type Override = (String, toml::Value);

/// Runs the scenario file at `path` with `overrides` applied; relative paths inside it
/// resolve against its directory.
pub fn run_file(
    path: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    let (text, label, base) = read_scenario(path)?;
    run_text(&text, &label, &base, overrides, limits, watch)
}

/// [`run_file`] writing, for each variant of a CPU scenario, its idle trace as idlestat's
/// trace file `ftrace_dir/<variant>.trace` (the variant's name with characters other than
/// letters, digits, `.`, `-` and `_` made `_`); an NVMe scenario is refused.
pub fn run_file_traced(
    path: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
    ftrace_dir: &Path,
) -> Result<Report, RunError> {
    let (text, label, base) = read_scenario(path)?;
    let file = parse_watched(&label, &text, overrides, watch)?;
    run_variants(&file, &base, limits, watch, Some(ftrace_dir))
}

/// Runs scenario `text` with `overrides` applied; `label` names it in errors, `base`
/// resolves its relative paths.
pub fn run_text(
    text: &str,
    label: &str,
    base: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    let file = parse_watched(label, text, overrides, watch)?;
    run_parsed(&file, base, limits, watch)
}

/// Runs every variant of a parsed scenario (e.g. one point of a sweep).
pub fn run_parsed(
    file: &ScenarioFile,
    base: &Path,
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    run_variants(file, base, limits, watch, None)
}

/// Runs each variant of `file` in turn, after checking the whole scenario's work (and, with
/// `ftrace_dir`, that every variant can write its idle trace).
fn run_variants(
    file: &ScenarioFile,
    base: &Path,
    limits: &Limits,
    watch: &mut dyn Watch,
    ftrace_dir: Option<&Path>,
) -> Result<Report, RunError> {
    let inputs = variant_runs(file, base, ftrace_dir)?;
    if ftrace_dir.is_some() {
        for (i, input) in inputs.iter().enumerate() {
            if input.scenario().platform.cpu.is_none() {
                return Err(input
                    .at(
                        "platform",
                        "--ftrace writes the idle traces of CPU runs; this scenario runs a \
                         storage device, which has no cpu_idle events"
                            .into(),
                    )
                    .into());
            }
            if inputs[..i].iter().any(|o| o.ftrace == input.ftrace) {
                return Err(input
                    .at(
                        "variant",
                        format!(
                            "--ftrace: variant {} would write the same file as an earlier one; \
                             give the variants names that differ in letters or digits",
                            shown(&file.variants()[i].name)
                        ),
                    )
                    .into());
            }
            crate::view::ftrace_writer::check_trace_size(input.max_ios()?)
                .map_err(|m| input.at(input.duration_key(), m))?;
        }
    }
    check_work(&inputs, limits)?;
    let mut variants = Vec::with_capacity(inputs.len());
    for input in &inputs {
        variants.push(input.run(watch)?);
    }
    Ok(Report {
        scenario: file.label().to_string(),
        variants,
    })
}
