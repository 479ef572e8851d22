//! Device inputs: what a drive is, from a built-in preset or from the user's own dump
//! (`nvme id-ctrl -o json`, `smartctl -a`). Models never import this module; it builds their
//! descriptions. Event streams (iologs, later ftrace and blkparse) are in [`crate::trace`].
//! Each parser reports bad input as an [`InputError`] naming file and line.

pub mod nvme_cli;
pub mod nvme_preset;
pub mod nvme_source;
pub mod smartctl;

use crate::error::InputError;
use crate::storage::nvme::psd::NvmeController;

/// Reads a power-state table from `nvme id-ctrl -o json` output or `smartctl -a` text,
/// choosing the parser by content (JSON starts with `{`).
pub fn parse_controller(file: &str, text: &str) -> Result<Parsed, InputError> {
    if text.trim_start().starts_with('{') {
        nvme_cli::parse(file, text).map(|c| Parsed {
            controller: c,
            notes: vec![],
        })
    } else {
        smartctl::parse(file, text)
    }
}

/// A parsed controller and what the parser had to assume (printed to the user).
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub controller: NvmeController,
    pub notes: Vec<String>,
}
