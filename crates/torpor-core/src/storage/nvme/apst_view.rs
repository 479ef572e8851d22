//! Everything `torpor apst` shows about one drive under one policy, gathered in one value so
//! the front end only renders it.

use serde::Serialize;

use super::apst::{self, ApstConfig, ApstParams, ApstTable};
use super::idle_schedule::{idle_schedule, Reached};
use super::source::DriveSpec;

/// The table the kernel would program, and its readings.
#[derive(Debug, Serialize)]
pub struct ApstView {
    pub device: DriveSpec,
    pub params: ApstParams,
    /// False when the kernel sends no Set Features at all (APSTA = 0, NPSS > 31).
    pub sent: bool,
    pub reason: Option<String>,
    /// `{"apste", "entries": [{"ps", "itps", "itpt_ms", "raw"} x 32]}` (all zero when not sent).
    pub table: serde_json::Value,
    /// The Set Features data buffer.
    pub table_bytes: Vec<u8>,
    /// As `nvme get-feature -f 0x0c -H` prints it.
    pub get_feature_text: String,
    /// One line per state with a transition.
    pub transitions: Vec<String>,
    pub idle_schedule: Vec<Reached>,
    pub nvme_cli_command: String,
    pub kernel_params: String,
}

/// Builds the table for `drive` under `params` and all its readings. `data_file` and
/// `nvme_device` only shape the printed `nvme set-feature` command.
pub fn view(drive: DriveSpec, params: ApstParams, data_file: &str, nvme_device: &str) -> ApstView {
    let config = apst::build(&drive.controller, &params);
    let (table, sent, reason) = match config {
        ApstConfig::Sent(t) => (t, true, None),
        ApstConfig::NotSent { reason } => (
            ApstTable {
                apste: false,
                entries: [0; apst::APST_ENTRIES],
            },
            false,
            Some(reason),
        ),
    };
    ApstView {
        sent,
        reason,
        table: table.to_json_value(),
        table_bytes: table.to_bytes().to_vec(),
        get_feature_text: table.format_get_feature(),
        transitions: table.describe_transitions(&drive.controller),
        idle_schedule: idle_schedule(&table, &drive.controller),
        nvme_cli_command: apst::emit_nvme_cli(&table, data_file, nvme_device),
        kernel_params: apst::emit_kernel_params(&params),
        params,
        device: drive,
    }
}
