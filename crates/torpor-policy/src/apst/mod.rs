//! APST tables (NVMe Feature 0Ch, Autonomous Power State Transition): the two table builders of
//! Linux's `nvme_configure_apst()` (`drivers/nvme/host/core.c`) and the table's wire form. The
//! ways a user sees or sets a table (`nvme get-feature -H` text, JSON, `nvme set-feature`,
//! module parameters) are torpor-core's `view::apst`.
//!
//! What it models. An NVMe drive with APST enabled leaves its current power state on its own
//! after it has been idle for ITPT ms and moves to state ITPS; the host only programs the
//! 32-entry table (entry `i` describes power state `i`). Linux builds that table from the
//! drive's power-state descriptors each time the controller is (re)initialised and whenever the
//! PM QoS latency tolerance (`ps_max_latency_us`) changes. Three builders exist, each named
//! by the first release that has it:
//!
//! * **v4.11** (commit c5552fde102f, "nvme: Enable autonomous power state transitions"):
//!   every non-operational state whose *total* latency (ENLAT + EXLAT) is within
//!   `ps_max_latency_us` is a target, and the idle time before entering it is 50 × that total,
//!   so at most ~2 % of time is spent transitioning: ITPT = ceil((ENLAT + EXLAT) µs / 20) ms,
//!   capped at 2^24 − 1. `default_ps_max_latency_us` is 25 000 µs.
//! * **Legacy** (v4.12 … v5.13, and what v5.14 falls back to; "nvme: only consider exit
//!   latency when choosing useful non-operational power states" and "nvme: relax APST default
//!   max latency to 100ms", both first in v4.12): the same, but a state qualifies by its *exit*
//!   latency alone, and the default limit is 100 000 µs. Also accepted as `v4.12`.
//! * **v5.14** (commit ebd8a93aa4f5, "nvme: extend and modify the APST configuration
//!   algorithm"): at most two targets, like the Windows drivers: a *primary* state (ENLAT + EXLAT
//!   ≤ `apst_primary_latency_tol_us`) entered after `apst_primary_timeout_ms`, and a deeper
//!   *secondary* state (ENLAT + EXLAT ≤ `apst_secondary_latency_tol_us`) entered after
//!   `apst_secondary_timeout_ms`. With a zero primary timeout or zero primary tolerance it falls
//!   back to the legacy formula for every state.
//!
//! The walk, common to both (numbered as [`build`] performs it):
//!
//! 1. APSTA = 0: send nothing at all. NPSS > 31: warn "NPSS is invalid; not using APST" and
//!    send nothing.
//! 2. `ps_max_latency_us == 0`: send APSTE = 0 with an all-zero table (the documented way to
//!    turn APST off). A value at or above `S32_MAX` means no limit: the module parameter
//!    reaches the controller through the PM QoS latency tolerance, capped at `S32_MAX`, which
//!    is `PM_QOS_LATENCY_ANY`, and `nvme_set_latency_tolerance` turns that into `U64_MAX`.
//! 3. Walk the states from NPSS (deepest) down to PS0, carrying `target`, the entry chosen so
//!    far from deeper states. At each state, first store `target` (if any) as that state's
//!    entry, then decide whether the state itself becomes the new target:
//!    * not the deepest state when the device has the `NO_DEEPEST_PS` quirk;
//!    * non-operational (NOPS) only;
//!    * EXLAT ≤ `ps_max_latency_us` (v4.11: ENLAT + EXLAT ≤ `ps_max_latency_us`);
//!    * an ITPT from the algorithm: the 50 × formula, or the v5.14 primary/secondary rule
//!      (the state is skipped, `target` unchanged, when the rule rejects it).
//!
//!    Then `target = (state << 3) | (itpt_ms << 8)`.
//! 4. Send APSTE = 1, even when no state qualified (the table is then all zero).
//!
//! The v5.14 module-parameter timeouts are not clamped to 24 bits: a value ≥ 2^24 ms spills
//! into the entry's reserved upper bits exactly as the kernel's u64 arithmetic does (see
//! [`entry`]). Where the kernel applies quirks (`NO_APST`) or `force_apst` before calling the
//! builder, torpor's caller decides; only `NO_DEEPEST_PS` changes the walk and is a parameter
//! here.

pub mod psd;
pub mod tolerance;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::apst::psd::NvmeController;

/// Number of entries of the APST data structure (one per possible power state).
pub const APST_ENTRIES: usize = 32;

/// Feature identifier of Autonomous Power State Transition.
pub const NVME_FEAT_AUTO_PST: u8 = 0x0c;

/// Size of the Feature 0Ch data buffer, bytes (32 entries × 8).
pub const APST_DATA_LEN: usize = APST_ENTRIES * 8;

/// Kernel default of the `nvme_core.default_ps_max_latency_us` module parameter since v4.12, µs.
pub const DEFAULT_PS_MAX_LATENCY_US: u64 = 100_000;
/// Its default in v4.11, µs.
pub const V4_11_PS_MAX_LATENCY_US: u64 = 25_000;
/// Kernel default of `nvme_core.apst_primary_timeout_ms` (v5.14+).
pub const APST_PRIMARY_TIMEOUT_MS: u64 = 100;
/// Kernel default of `nvme_core.apst_secondary_timeout_ms` (v5.14+); 0 disables the secondary.
pub const APST_SECONDARY_TIMEOUT_MS: u64 = 2000;
/// Kernel default of `nvme_core.apst_primary_latency_tol_us` (v5.14+).
pub const APST_PRIMARY_LATENCY_TOL_US: u64 = 15_000;
/// Kernel default of `nvme_core.apst_secondary_latency_tol_us` (v5.14+).
pub const APST_SECONDARY_LATENCY_TOL_US: u64 = 100_000;

/// Largest ITPT the legacy formula programs: the field is 24 bits wide.
pub const ITPT_MAX_MS: u64 = (1 << 24) - 1;

/// The kernel's `S32_MAX`: the module parameter's value is capped at this when it seeds the
/// controller's `ps_max_latency_us` through the PM QoS latency tolerance.
pub const S32_MAX: u64 = i32::MAX as u64;

/// The Feature 0Ch payload: APSTE (CDW11 bit 0) and 32 little-endian 64-bit entries, entry `i`
/// describing power state `i` as `(itps << 3) | (itpt_ms << 8)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApstTable {
    pub apste: bool,
    pub entries: [u64; APST_ENTRIES],
}

impl ApstTable {
    /// ITPS of entry `ps`: the state to move to after the idle time.
    pub fn itps(&self, ps: usize) -> u8 {
        ((self.entries[ps] >> 3) & 0x1f) as u8
    }

    /// ITPT of entry `ps`, ms; 0 disables the transition.
    pub fn itpt_ms(&self, ps: usize) -> u32 {
        ((self.entries[ps] >> 8) & 0xff_ffff) as u32
    }
}

/// Which of the kernel's table builders to run (the module doc describes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ApstAlgorithm {
    /// v4.11: states chosen by ENLAT + EXLAT, ITPT = 50 × (ENLAT + EXLAT).
    #[serde(rename = "v4.11")]
    V4_11,
    /// v4.12 … v5.13 and v5.14's fallback: states chosen by EXLAT, ITPT = 50 × (ENLAT + EXLAT).
    #[serde(rename = "legacy", alias = "v4.12")]
    Legacy,
    /// v5.14+ (commit ebd8a93aa4f5): a primary and an optional secondary target.
    #[serde(rename = "v5.14")]
    V5_14,
}

impl ApstAlgorithm {
    /// Every builder, the kernel's current default first.
    pub const ALL: [ApstAlgorithm; 3] = [
        ApstAlgorithm::V5_14,
        ApstAlgorithm::Legacy,
        ApstAlgorithm::V4_11,
    ];

    /// The name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ApstAlgorithm::V4_11 => "v4.11",
            ApstAlgorithm::Legacy => "legacy",
            ApstAlgorithm::V5_14 => "v5.14",
        }
    }

    /// `default_ps_max_latency_us` in the releases that run this builder.
    pub fn default_ps_max_latency_us(self) -> u64 {
        match self {
            ApstAlgorithm::V4_11 => V4_11_PS_MAX_LATENCY_US,
            ApstAlgorithm::Legacy | ApstAlgorithm::V5_14 => DEFAULT_PS_MAX_LATENCY_US,
        }
    }
}

impl fmt::Display for ApstAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is neither `legacy` nor `v5.14`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown APST algorithm `{0}`; expected `v5.14`, `legacy` (or `v4.12`) or `v4.11`")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for ApstAlgorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "legacy" | "v4.12" => Ok(ApstAlgorithm::Legacy),
            "v4.11" => Ok(ApstAlgorithm::V4_11),
            "v5.14" => Ok(ApstAlgorithm::V5_14),
            other => Err(UnknownAlgorithm(other.to_string())),
        }
    }
}

/// Everything besides the drive that decides the table: the controller's latency limit, the
/// `nvme_core` module parameters and the one quirk that changes the walk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApstParams {
    pub algorithm: ApstAlgorithm,
    /// The controller's `ps_max_latency_us`, µs: states whose EXLAT (v4.11: ENLAT + EXLAT)
    /// exceeds it are never targets; 0 disables APST. Set by the PM QoS latency tolerance; its
    /// initial value is the module parameter `default_ps_max_latency_us`. `S32_MAX` or more =
    /// no constraint. Unset: the default of the releases that run `algorithm`
    /// ([`Self::max_latency_us`]).
    pub ps_max_latency_us: Option<u64>,
    /// `apst_primary_timeout_ms` (v5.14 only; 0 selects the legacy formula).
    pub primary_timeout_ms: u64,
    /// `apst_secondary_timeout_ms` (v5.14 only; 0 disables the secondary target).
    pub secondary_timeout_ms: u64,
    /// `apst_primary_latency_tol_us` (v5.14 only; 0 selects the legacy formula).
    pub primary_latency_tol_us: u64,
    /// `apst_secondary_latency_tol_us` (v5.14 only).
    pub secondary_latency_tol_us: u64,
    /// `NVME_QUIRK_NO_DEEPEST_PS`: the deepest state (NPSS) is never a target.
    pub no_deepest_ps: bool,
}

impl Default for ApstParams {
    /// The kernel's defaults on a v5.14+ kernel.
    fn default() -> Self {
        ApstParams {
            algorithm: ApstAlgorithm::V5_14,
            ps_max_latency_us: None,
            primary_timeout_ms: APST_PRIMARY_TIMEOUT_MS,
            secondary_timeout_ms: APST_SECONDARY_TIMEOUT_MS,
            primary_latency_tol_us: APST_PRIMARY_LATENCY_TOL_US,
            secondary_latency_tol_us: APST_SECONDARY_LATENCY_TOL_US,
            no_deepest_ps: false,
        }
    }
}

/// What `nvme_configure_apst()` does with the controller.
// Built once per reconfiguration, never in the event loop: the unboxed 264-byte table is fine.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ApstConfig {
    /// No Set Features command is sent; the drive keeps whatever it had.
    NotSent { reason: String },
    /// Set Features 0Ch is sent with this APSTE and table.
    Sent(ApstTable),
}

impl ApstParams {
    /// The controller's latency limit: as given, or the default of `algorithm`'s releases.
    pub fn max_latency_us(&self) -> u64 {
        self.ps_max_latency_us
            .unwrap_or(self.algorithm.default_ps_max_latency_us())
    }

    /// The same settings with the latency limit spelled out, as reports show them.
    pub fn resolved(&self) -> ApstParams {
        ApstParams {
            ps_max_latency_us: Some(self.max_latency_us()),
            ..self.clone()
        }
    }
}

/// Builds the APST table the kernel would send to `ctrl` (steps 1–4 of the module comment).
pub fn build(ctrl: &NvmeController, params: &ApstParams) -> ApstConfig {
    if !ctrl.apsta {
        return ApstConfig::NotSent {
            reason: "the controller does not support APST (APSTA = 0)".to_string(),
        };
    }
    if ctrl.npss > 31 {
        return ApstConfig::NotSent {
            reason: "NPSS is invalid; not using APST".to_string(),
        };
    }
    let mut table = ApstTable {
        apste: false,
        entries: [0; APST_ENTRIES],
    };
    let max_latency_us = match params.max_latency_us() {
        0 => return ApstConfig::Sent(table),
        limit if limit >= S32_MAX => u64::MAX,
        limit => limit,
    };
    let npss = ctrl.npss as usize;
    let states = ctrl.states();
    let mut target = 0u64;
    let mut choice = Choice::default();
    for state in (0..=npss).rev() {
        if target != 0 {
            table.entries[state] = target;
        }
        if state == npss && params.no_deepest_ps {
            continue;
        }
        // A descriptor the drive did not provide reads as zero: operational, never a target.
        let Some(psd) = states.get(state).filter(|p| p.non_operational) else {
            continue;
        };
        let exit_lat_us = u64::from(psd.exit_lat_us);
        let total_lat_us = exit_lat_us + u64::from(psd.entry_lat_us);
        let limited = match params.algorithm {
            ApstAlgorithm::V4_11 => total_lat_us,
            ApstAlgorithm::Legacy | ApstAlgorithm::V5_14 => exit_lat_us,
        };
        if limited > max_latency_us {
            continue;
        }
        let itpt_ms = match params.algorithm {
            ApstAlgorithm::V4_11 | ApstAlgorithm::Legacy => Some(legacy_itpt_ms(total_lat_us)),
            ApstAlgorithm::V5_14 => choice.transition_time(total_lat_us, params),
        };
        if let Some(itpt_ms) = itpt_ms {
            target = entry(state as u8, itpt_ms);
        }
    }
    table.apste = true;
    ApstConfig::Sent(table)
}

/// One APST entry as the kernel computes it: `(itps << 3) | (itpt_ms << 8)` in u64. An
/// `itpt_ms` of 2^24 or more is not masked: its high bits land in the reserved bits 63:32 (and
/// bits beyond 63 are lost), as in the kernel, which clamps only the legacy formula.
pub fn entry(itps: u8, itpt_ms: u64) -> u64 {
    (u64::from(itps) << 3) | (itpt_ms << 8)
}

/// Legacy idle time: 50 × (ENLAT + EXLAT) µs = (ENLAT + EXLAT) / 20 ms, rounded up, capped at
/// 24 bits. A total of 0 gives 0, which disables the transition.
pub fn legacy_itpt_ms(total_lat_us: u64) -> u64 {
    // The kernel writes (total + 19) / 20; identical for totals that fit (ENLAT + EXLAT < 2^33).
    total_lat_us.div_ceil(20).min(ITPT_MAX_MS)
}

/// The v5.14 rule's memory across the walk (`last_index` in the kernel: 1 once a primary was
/// chosen, 2 once a secondary was, `UINT_MAX` before either).
struct Choice {
    last_index: u32,
}

impl Default for Choice {
    fn default() -> Self {
        Choice {
            last_index: u32::MAX,
        }
    }
}

impl Choice {
    /// ITPT for a state of transition cost `total_lat_us`, or `None` when the state must be
    /// skipped. Falls back to the legacy formula when the primary timeout or tolerance is 0.
    fn transition_time(&mut self, total_lat_us: u64, params: &ApstParams) -> Option<u64> {
        if params.primary_timeout_ms == 0 || params.primary_latency_tol_us == 0 {
            return Some(legacy_itpt_ms(total_lat_us));
        }
        if total_lat_us <= params.primary_latency_tol_us {
            // The deepest state within the primary tolerance wins; shallower ones are skipped.
            if self.last_index == 1 {
                return None;
            }
            self.last_index = 1;
            return Some(params.primary_timeout_ms);
        }
        if params.secondary_timeout_ms != 0 && total_lat_us <= params.secondary_latency_tol_us {
            // Only before any target: a secondary must be deeper than the primary.
            if self.last_index <= 2 {
                return None;
            }
            self.last_index = 2;
            return Some(params.secondary_timeout_ms);
        }
        None
    }
}

impl ApstTable {
    /// The Set Features data buffer: 32 entries, each 8 bytes little endian.
    pub fn to_bytes(&self) -> [u8; APST_DATA_LEN] {
        let mut buf = [0u8; APST_DATA_LEN];
        for (chunk, e) in buf.chunks_exact_mut(8).zip(self.entries.iter()) {
            chunk.copy_from_slice(&e.to_le_bytes());
        }
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apst::psd::PowerState;

    fn op() -> PowerState {
        PowerState {
            max_power_mw: 3000.0,
            non_operational: false,
            entry_lat_us: 0,
            exit_lat_us: 0,
            active_power_mw: None,
            idle_power_mw: None,
        }
    }

    fn nonop(entry_lat_us: u32, exit_lat_us: u32) -> PowerState {
        PowerState {
            max_power_mw: 5.0,
            non_operational: true,
            entry_lat_us,
            exit_lat_us,
            ..op()
        }
    }

    #[test]
    fn entry_packs_itps_at_bit_3_and_itpt_at_bit_8() {
        // 4 << 3 = 0x20; 100 << 8 = 0x6400.
        assert_eq!(entry(4, 100), 0x6420);
        let t = ApstTable {
            apste: true,
            entries: [0x6420; APST_ENTRIES],
        };
        assert_eq!((t.itps(0), t.itpt_ms(0)), (4, 100));
    }

    #[test]
    fn legacy_formula_rounds_up_and_caps_at_24_bits() {
        // ceil(1410 / 20) = ceil(70.5) = 71; ceil(10000 / 20) = 500 exactly.
        assert_eq!(legacy_itpt_ms(1410), 71);
        assert_eq!(legacy_itpt_ms(10_000), 500);
        assert_eq!(legacy_itpt_ms(0), 0);
        // 20 · 2^24 µs → 2^24 ms, one more than the field holds.
        assert_eq!(legacy_itpt_ms(20 << 24), (1 << 24) - 1);
    }

    #[test]
    fn algorithm_names_round_trip_and_unknown_names_are_errors() {
        assert_eq!("legacy".parse::<ApstAlgorithm>(), Ok(ApstAlgorithm::Legacy));
        assert_eq!("v5.14".parse::<ApstAlgorithm>(), Ok(ApstAlgorithm::V5_14));
        assert_eq!("v4.11".parse::<ApstAlgorithm>(), Ok(ApstAlgorithm::V4_11));
        // v4.12 is the first release of what `legacy` computes.
        assert_eq!("v4.12".parse::<ApstAlgorithm>(), Ok(ApstAlgorithm::Legacy));
        assert_eq!(ApstAlgorithm::V5_14.to_string(), "v5.14");
        assert_eq!(ApstAlgorithm::V4_11.to_string(), "v4.11");
        let e = "v6".parse::<ApstAlgorithm>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown APST algorithm `v6`; expected `v5.14`, `legacy` (or `v4.12`) or `v4.11`"
        );
    }

    #[test]
    fn missing_descriptor_below_npss_is_treated_as_operational() {
        // NPSS says 3 but only PS0..PS2 were given; PS2 is the only non-op state: legacy
        // ITPT = ceil(2000 / 20) = 100 ms for PS0 and PS1.
        let ctrl = NvmeController {
            model: "short".into(),
            npss: 3,
            apsta: true,
            power_states: vec![op(), op(), nonop(1000, 1000)],
        };
        let params = ApstParams {
            algorithm: ApstAlgorithm::Legacy,
            ..ApstParams::default()
        };
        let ApstConfig::Sent(t) = build(&ctrl, &params) else {
            panic!("expected a table")
        };
        assert_eq!(&t.entries[..4], &[entry(2, 100), entry(2, 100), 0, 0]);
    }
}
