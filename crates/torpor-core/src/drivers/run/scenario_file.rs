//! A scenario file read ([`read_scenario`]), parsed with its overrides while a watcher is asked
//! ([`parse_watched`]), and checked as a run checks it before the first event
//! ([`check_text`]).

use std::path::{Path, PathBuf};

use crate::error::InputError;
use crate::scenario::ScenarioFile;
use crate::user_file::{self, Decoding, MAX_SCENARIO_BYTES};

use super::limits::{check_work, Limits};
use super::variant::variant_runs;
use super::watch::{RunError, Watch};
use super::Override;

/// A scenario file's text, its label for errors, and the folder its paths resolve against.
pub(super) fn read_scenario(path: &Path) -> Result<(String, String, PathBuf), InputError> {
    let label = path.display().to_string();
    let file = user_file::read_text(
        path,
        &label,
        "a scenario file",
        MAX_SCENARIO_BYTES,
        Decoding::Strict,
    )?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok((file.text, label, base))
}

/// Scenario `text` parsed, then each of `overrides` set, asking `watch` as it goes.
pub(super) fn parse_watched(
    label: &str,
    text: &str,
    overrides: &[Override],
    watch: &mut dyn Watch,
) -> Result<ScenarioFile, RunError> {
    let mut file = ScenarioFile::parse_watched(label, text, &mut || watch.go_on())?;
    for (path, value) in overrides {
        file = file.with_field_watched(path, value.clone(), &mut || watch.go_on())?;
    }
    Ok(file)
}

/// Which kinds of platform a checked scenario's variants run, over all its variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlatformKinds {
    pub nvme: bool,
    pub ufs: bool,
    pub cpu: bool,
}

/// Checks scenario `text` with `overrides` applied as [`run_text`](super::run_text) does
/// before the first event: parsed, each variant's job file read, its drive, UFS device and
/// CPUs built, and the work bound; nothing is simulated (a replayed trace is read only when it
/// runs). Returns the kinds of platform it runs.
pub fn check_text(
    text: &str,
    label: &str,
    base: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<PlatformKinds, RunError> {
    let file = parse_watched(label, text, overrides, watch)?;
    let inputs = variant_runs(&file, base, None)?;
    check_work(&inputs, limits)?;
    let mut kinds = PlatformKinds::default();
    for input in &inputs {
        if !watch.go_on() {
            return Err(RunError::Interrupted);
        }
        let s = input.scenario();
        if let Some(nvme) = &s.platform.nvme {
            input.nvme_rig(nvme)?;
            kinds.nvme = true;
        }
        if let Some(ufs) = &s.platform.ufs {
            input.ufs_rig(ufs)?;
            kinds.ufs = true;
        }
        if let Some(cpu) = &s.platform.cpu {
            input.cpu_spec(cpu)?;
            kinds.cpu = true;
        }
    }
    Ok(kinds)
}
