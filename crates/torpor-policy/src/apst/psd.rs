//! Power-state descriptors (NVMe base spec, Identify Controller bytes 2079:2048 + 32·n) and the
//! identify fields APST needs, in engine units. Parsers (`input::nvme_cli`, `input::smartctl`)
//! and presets produce an [`NvmeController`]; the table builders and the drive model consume it.

use serde::{Deserialize, Serialize};

/// Why a table whose PS0 is non-operational is refused, whatever format it came in: the NVMe
/// base specification requires power state 0 to be operational (the controller starts in it
/// and returns to it to serve IO).
pub const PS0_MUST_BE_OPERATIONAL: &str = "PS0 is marked non-operational, but the NVMe base \
    specification requires power state 0 to be operational";

/// One power state as the drive describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PowerState {
    /// Maximum power (MP × scale), mW.
    pub max_power_mw: f64,
    /// NOPS: the controller processes no I/O in this state.
    pub non_operational: bool,
    /// ENLAT, µs (0 = not reported).
    pub entry_lat_us: u32,
    /// EXLAT, µs (0 = not reported).
    pub exit_lat_us: u32,
    /// ACTP × APS, mW, when the drive reports it.
    pub active_power_mw: Option<f64>,
    /// IDLP × IPS, mW, when the drive reports it.
    pub idle_power_mw: Option<f64>,
}

/// The Identify Controller fields APST depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvmeController {
    /// Model number string (trimmed), or the preset's name.
    pub model: String,
    /// NPSS: 0-based index of the deepest power state. Kept as read, even when > 31, so the
    /// table builders can refuse it exactly as the kernel does.
    pub npss: u8,
    /// APSTA: the controller supports APST. True when the APSTA byte is non-zero, as the kernel
    /// tests it (`if (!ctrl->apsta)`), even if only reserved bits are set.
    pub apsta: bool,
    /// Descriptors PS0..=PSmin(npss,31).
    pub power_states: Vec<PowerState>,
}

impl NvmeController {
    /// Descriptors the kernel would walk: PS0..=NPSS (clamped to the 32 that exist).
    pub fn states(&self) -> &[PowerState] {
        let n = (self.npss as usize + 1).min(self.power_states.len());
        &self.power_states[..n]
    }
}
