//! Where a drive description comes from: a built-in preset id, or the user's own
//! `nvme id-ctrl -o json` / `smartctl -a` dump.

use std::path::Path;

use serde::Serialize;

use super::preset;
use super::psd::NvmeController;
use super::service::ServiceModel;
use crate::error::InputError;
use crate::trace;

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

/// Loads `spec`: a preset id when one matches, else a file path (resolved against `base`).
pub fn load(spec: &str, base: Option<&Path>) -> Result<DriveSpec, InputError> {
    if let Some(found) = preset::find(spec) {
        let p = found?;
        return Ok(DriveSpec {
            label: p.id,
            controller: p.controller,
            service: p.service,
            notes: vec![],
        });
    }
    let path = match base {
        Some(b) => b.join(spec),
        None => Path::new(spec).to_path_buf(),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let what = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file, and no built-in preset has this id (see `torpor devices`)".to_string()
        } else {
            format!("cannot read: {e}")
        };
        InputError::whole(spec, what)
    })?;
    let parsed = trace::parse_controller(spec, &text)?;
    Ok(DriveSpec {
        label: spec.to_string(),
        controller: parsed.controller,
        service: ServiceModel::CLIENT_DEFAULT,
        notes: parsed.notes,
    })
}
