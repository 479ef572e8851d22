//! Streaming parsers for what users already have: nvme-cli and smartctl dumps, fio iologs.
//! Each parser reports bad input as an [`crate::error::InputError`] naming file and line.

pub mod fio_iolog;
pub mod nvme_cli;
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
