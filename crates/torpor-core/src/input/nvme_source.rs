//! Where a drive description comes from: a built-in preset id, or the user's own
//! `nvme id-ctrl -o json` / `smartctl -a` dump.

use serde::Serialize;

use super::nvme_preset as preset;
use crate::error::InputError;
use crate::input;
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::service::ServiceModel;

/// A drive ready to simulate.
#[derive(Clone, Debug, Serialize)]
pub struct DriveSpec {
    /// Preset id, or the file name the user gave.
    pub label: String,
    pub controller: NvmeController,
    pub service: ServiceModel,
    /// Assumptions made while reading the input, for the user to see.
    pub notes: Vec<String>,
}

/// Loads `spec`: a preset id when one matches, else a device dump at that path.
pub fn load(spec: &str) -> Result<DriveSpec, InputError> {
    if let Some(found) = from_preset(spec) {
        return found;
    }
    let text = std::fs::read_to_string(spec).map_err(|e| {
        let what = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file, and no built-in preset has this id (see `torpor devices`)".to_string()
        } else {
            format!("cannot read: {e}")
        };
        InputError::whole(spec, what)
    })?;
    from_dump(spec, &text)
}

/// The built-in preset `id`, if there is one.
pub fn from_preset(id: &str) -> Option<Result<DriveSpec, InputError>> {
    preset::find(id).map(|found| {
        found.map(|p| DriveSpec {
            label: p.id,
            controller: p.controller,
            service: p.service,
            notes: vec![],
        })
    })
}

/// A drive from the text of the user's `nvme id-ctrl -o json` or `smartctl -a` output
/// (`label` names it in errors). Dumps carry no timing, so the client defaults serve.
pub fn from_dump(label: &str, text: &str) -> Result<DriveSpec, InputError> {
    let parsed = input::parse_controller(label, text)?;
    Ok(DriveSpec {
        label: label.to_string(),
        controller: parsed.controller,
        service: ServiceModel::CLIENT_DEFAULT,
        notes: parsed.notes,
    })
}
