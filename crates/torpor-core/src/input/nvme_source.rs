//! Where a drive description comes from: a built-in preset id, or the user's own
//! `nvme id-ctrl -o json` / `smartctl -a` dump.

use std::path::Path;

use serde::Serialize;

use super::nvme_preset as preset;
use crate::error::InputError;
use crate::input;
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::service::ServiceModel;
use crate::user_file::{self, Decoding, MAX_DUMP_BYTES};

/// A drive ready to simulate.
#[derive(Clone, Debug, Serialize)]
pub struct DriveSpec {
    /// Preset id, or the file name the user gave.
    pub label: String,
    /// What the input was read as: `preset`, or the tool whose output a dump was recognised as.
    pub format: &'static str,
    pub controller: NvmeController,
    pub service: ServiceModel,
    /// PS0's idle power when the drive reports none (a preset's sourced figure or estimate).
    pub ps0_idle: Option<preset::Estimate>,
    /// PS0's active power when the drive reports no ACTP, likewise.
    pub ps0_active: Option<preset::Estimate>,
    /// Assumptions made while reading the input, for the user to see.
    pub notes: Vec<String>,
}

/// Loads `spec`: a preset id when one matches, else a device dump at that path.
pub fn load(spec: &Path) -> Result<DriveSpec, InputError> {
    if let Some(found) = spec.to_str().and_then(from_preset) {
        return found;
    }
    if spec == Path::new("-") {
        let file = user_file::read_stdin("<stdin>", DUMP, MAX_DUMP_BYTES, Decoding::Lenient)?;
        return from_text_file("<stdin>", file);
    }
    let label = spec.display().to_string();
    if !spec.exists() {
        return Err(InputError::whole(
            &label,
            format!(
                "no such file, and no built-in preset has this id; {}",
                preset::suggestion(&label)
            ),
        ));
    }
    read_dump(spec, &label)
}

/// Reads the device dump at `path` (`label` names it in errors), within
/// [`MAX_DUMP_BYTES`], decoding UTF-16, byte-order marks and stray bytes that are not UTF-8
/// (each noted).
pub fn read_dump(path: &Path, label: &str) -> Result<DriveSpec, InputError> {
    let file = user_file::read_text(path, label, DUMP, MAX_DUMP_BYTES, Decoding::Lenient)?;
    from_text_file(label, file)
}

/// What a dump should be, for errors about the file as a whole.
const DUMP: &str = "a device dump (`nvme id-ctrl -o json` or `smartctl -a` output)";

/// A drive from a dump already read, its decoding noted.
fn from_text_file(label: &str, file: user_file::TextFile) -> Result<DriveSpec, InputError> {
    let mut drive = from_dump(label, &file.text)?;
    let decoded = file.notes.iter().map(|n| format!("{label}: {n}"));
    drive.notes.splice(0..0, decoded);
    Ok(drive)
}

/// The built-in preset `id`, if there is one.
pub fn from_preset(id: &str) -> Option<Result<DriveSpec, InputError>> {
    preset::find(id).map(|found| {
        found.map(|p| DriveSpec {
            label: p.id,
            format: "preset",
            controller: p.controller,
            service: p.service,
            ps0_idle: p.ps0_idle,
            ps0_active: p.ps0_active,
            notes: vec![],
        })
    })
}

/// A drive from the text of the user's `nvme id-ctrl -o json` or `smartctl -a` output
/// (`label` names it in errors). Dumps carry no timing, so the client defaults serve.
pub fn from_dump(label: &str, text: &str) -> Result<DriveSpec, InputError> {
    let mut parsed = input::parse_controller(label, text)?;
    for (i, ps) in parsed.controller.power_states.iter().enumerate() {
        if ps.max_power_mw == 0.0 {
            let active = match ps.active_power_mw {
                Some(mw) if mw > 0.0 => format!(" (beside an active power of {mw} mW)"),
                _ => String::new(),
            };
            parsed.notes.push(format!(
                "PS{i} declares a maximum power of 0 W{active}: its power is unknown, and \
                 torpor counts it as 0 mW wherever MP is used; set `idle_power_mw` / \
                 `active_power_mw` in a scenario if you know better"
            ));
        }
    }
    Ok(DriveSpec {
        label: label.to_string(),
        format: parsed.format,
        controller: parsed.controller,
        service: ServiceModel::CLIENT_DEFAULT,
        ps0_idle: None,
        ps0_active: None,
        notes: parsed.notes,
    })
}
