//! `[policy.hpb]`: UFS HPB on the host (`storage::ufs::hpb`, the Linux driver as of v6.5, a
//! what-if since its removal in v6.6). The table turns HPB on; its keys choose the control mode,
//! the driver's handling of writes to a sub-region whose map is being loaded, and the host
//! control mode's `hpb_params` (sysfs names).
//!
//! What can be checked without the device is checked when the scenario is parsed (types, the
//! relations between the parameters, host-control parameters under `mode = "device"`); the two
//! bounds that depend on the device, `normalization_factor <= log2(entries per sub-region)` and
//! `inflight_map_req < queue depth`, when the run knows its preset ([`HpbPolicy::resolve`]).

use serde::{Deserialize, Deserializer};

use crate::input::ufs_preset::HpbControl;
use crate::storage::ufs::hpb::{ControlMode, Geometry, HcmParams, HpbDescriptors, IssuedWrites};

/// `[policy.hpb]`, as written; absent keys take the driver's defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpbPolicy {
    /// HPB on (the default when the table is present; a variant turns it off with `false`).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `bHPBControl` as the run takes it; absent: the preset's `control`.
    pub mode: Option<HpbControl>,
    /// A write to a sub-region whose READ BUFFER is in flight: `"kept"` (torpor) or
    /// `"dropped"` (the driver, which can then send a stale entry).
    #[serde(default, deserialize_with = "de_issued_writes")]
    pub issued_writes: IssuedWrites,
    pub activation_thld: Option<u32>,
    pub normalization_factor: Option<u32>,
    pub eviction_thld_enter: Option<u32>,
    pub eviction_thld_exit: Option<u32>,
    pub read_timeout_ms: Option<u64>,
    pub read_timeout_expiries: Option<u32>,
    pub timeout_polling_interval_ms: Option<u64>,
    pub inflight_map_req: Option<u32>,
}

fn yes() -> bool {
    true
}

/// `issued_writes` as written.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum IssuedWritesName {
    Kept,
    Dropped,
}

fn de_issued_writes<'de, D: Deserializer<'de>>(d: D) -> Result<IssuedWrites, D::Error> {
    Ok(match IssuedWritesName::deserialize(d)? {
        IssuedWritesName::Kept => IssuedWrites::Kept,
        IssuedWritesName::Dropped => IssuedWrites::Dropped,
    })
}

/// HPB as a run uses it: the LU's geometry (the preset's descriptors under the scenario's
/// mode), the host-control parameters and the issued-write rule.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedHpb {
    pub descriptors: HpbDescriptors,
    pub geometry: Geometry,
    pub params: HcmParams,
    pub issued_writes: IssuedWrites,
}

/// The largest entry count of a sub-region (`Geometry`'s largest region, 512 B x 2^34, over
/// 4 KiB): the loosest bound on `normalization_factor` before the device is known.
const MOST_ENTRIES_PER_SRGN: u32 = 1 << 31;

impl HpbPolicy {
    /// The host-control keys, with the values written.
    fn hcm_keys(&self) -> [(&'static str, Option<u64>); 8] {
        let w = |v: Option<u32>| v.map(u64::from);
        [
            ("activation_thld", w(self.activation_thld)),
            ("normalization_factor", w(self.normalization_factor)),
            ("eviction_thld_enter", w(self.eviction_thld_enter)),
            ("eviction_thld_exit", w(self.eviction_thld_exit)),
            ("read_timeout_ms", self.read_timeout_ms),
            ("read_timeout_expiries", w(self.read_timeout_expiries)),
            (
                "timeout_polling_interval_ms",
                self.timeout_polling_interval_ms,
            ),
            ("inflight_map_req", w(self.inflight_map_req)),
        ]
    }

    /// The driver's defaults (`ufshpb_hcm_param_init`) with the keys written.
    pub fn hcm_params(&self) -> HcmParams {
        let d = HcmParams::default();
        HcmParams {
            activation_thld: self.activation_thld.unwrap_or(d.activation_thld),
            normalization_factor: self.normalization_factor.unwrap_or(d.normalization_factor),
            eviction_thld_enter: self.eviction_thld_enter.unwrap_or(d.eviction_thld_enter),
            eviction_thld_exit: self.eviction_thld_exit.unwrap_or(d.eviction_thld_exit),
            read_timeout_ms: self.read_timeout_ms.unwrap_or(d.read_timeout_ms),
            read_timeout_expiries: self
                .read_timeout_expiries
                .unwrap_or(d.read_timeout_expiries),
            timeout_polling_interval_ms: self
                .timeout_polling_interval_ms
                .unwrap_or(d.timeout_polling_interval_ms),
            inflight_map_req: self.inflight_map_req.unwrap_or(d.inflight_map_req),
        }
    }

    /// The checks that need no device; returns the path at fault and the message.
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        self.check_mode(self.mode.map(HpbControl::mode))?;
        self.check_params(MOST_ENTRIES_PER_SRGN, u32::MAX)
    }

    /// HPB for a device whose preset has `descriptors` (`None`: no `[hpb]`) and whose LU takes
    /// `queue_depth` commands; `Ok(None)` when `enabled = false`. Errors carry the path at
    /// fault (`policy.hpb` or `policy.hpb.<key>`) and the message.
    pub fn resolve(
        &self,
        descriptors: Option<HpbDescriptors>,
        queue_depth: u32,
    ) -> Result<Option<ResolvedHpb>, (String, String)> {
        if !self.enabled {
            return Ok(None);
        }
        let Some(mut d) = descriptors else {
            return Err((
                "policy.hpb".into(),
                "[policy.hpb]: the UFS preset has no [hpb] section (its HPB descriptors are not \
                 known; `ufs21-64gb-class` has them): remove the table or change the preset"
                    .into(),
            ));
        };
        if let Some(mode) = self.mode {
            d.hpb_control = mode.byte();
        }
        let geometry = Geometry::new(&d).map_err(|e| {
            (
                "policy.hpb".to_string(),
                format!("[policy.hpb]: expected {e}"),
            )
        })?;
        self.check_mode(Some(geometry.mode))?;
        self.check_params(geometry.entries_per_srgn, queue_depth)?;
        Ok(Some(ResolvedHpb {
            descriptors: d,
            geometry,
            params: self.hcm_params(),
            issued_writes: self.issued_writes,
        }))
    }

    /// Host-control parameters under device control would be ignored: refused.
    fn check_mode(&self, mode: Option<ControlMode>) -> Result<(), (String, String)> {
        if mode != Some(ControlMode::Device) {
            return Ok(());
        }
        match self.hcm_keys().into_iter().find(|(_, v)| v.is_some()) {
            Some((key, _)) => Err((
                format!("policy.hpb.{key}"),
                format!(
                    "[policy.hpb] {key}: a host control mode parameter, ignored in device \
                     control mode: remove it or set `mode = \"host\"`"
                ),
            )),
            None => Ok(()),
        }
    }

    /// [`HcmParams::validate`], reported at the first key its complaint names that the
    /// scenario wrote (the defaults alone pass whenever the device allows them).
    fn check_params(
        &self,
        entries_per_srgn: u32,
        queue_depth: u32,
    ) -> Result<(), (String, String)> {
        let Err(what) = self.hcm_params().validate(entries_per_srgn, queue_depth) else {
            return Ok(());
        };
        let named = |key: &str| {
            what.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == key)
        };
        let written = self
            .hcm_keys()
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .filter(|(k, _)| named(k))
            .min_by_key(|(k, _)| what.find(k));
        Err(match written {
            Some((key, v)) => (
                format!("policy.hpb.{key}"),
                format!("[policy.hpb] {key} = {v}: expected {what}"),
            ),
            None => (
                "policy.hpb".into(),
                format!("[policy.hpb]: expected {what}"),
            ),
        })
    }
}
