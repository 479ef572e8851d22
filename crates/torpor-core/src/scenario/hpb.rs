//! `[policy.hpb]`: UFS HPB on the host (`hpb`, the policy crate's, the Linux driver as of v6.5, a
//! what-if since its removal in v6.6). The table turns HPB on; its keys choose the control mode,
//! the driver's handling of writes to a sub-region whose map is being loaded, the host control
//! mode's `hpb_params` (sysfs names), and what sets the pace of warm-up (docs/hpb.md,
//! "Warm-up"): the device's recommendation threshold, the HPB workqueue's latency and the
//! LU's active-region budget as the host runs it.
//!
//! What can be checked without the device is checked when the scenario is parsed (types, the
//! relations between the parameters, host-control parameters under `mode = "device"`); the two
//! bounds that depend on the device, `normalization_factor <= log2(entries per sub-region)` and
//! `inflight_map_req < queue depth`, when the run knows its preset ([`HpbPolicy::resolve`]).

use serde::{Deserialize, Deserializer};

use crate::hpb::{ControlMode, Geometry, HcmParams, HpbDescriptors, IssuedWrites};
use crate::input::ufs_preset::HpbControl;
use crate::storage::ufs::hpb_exchange::HpbDynamics;
use crate::time::Nanos;

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
    /// Device control mode: device map-cache misses in a region before the device recommends
    /// it (ESTIMATE; absent: [`HpbDynamics::default`]).
    pub device_miss_threshold: Option<u32>,
    /// The HPB workqueue's latency, µs (ESTIMATE; absent: [`HpbDynamics::default`]).
    pub map_work_delay_us: Option<u64>,
    /// The LU's active-region budget as the host runs it (`wLUMaxActiveHPBRegions`), at most the
    /// preset's: a host short of memory holding fewer maps. ASSUMPTION: the device recommends
    /// within the same budget. Absent: the preset's.
    pub max_active_regions: Option<u16>,
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
    pub dynamics: HpbDynamics,
}

/// The longest HPB workqueue latency a scenario may ask for, µs (1 s: far beyond any
/// scheduling delay, and short of stalling a run).
const MAX_MAP_WORK_DELAY_US: u64 = 1_000_000;

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
        self.check_params(MOST_ENTRIES_PER_SRGN, u32::MAX)?;
        self.check_dynamics()
    }

    /// The warm-up keys' own bounds.
    fn check_dynamics(&self) -> Result<(), (String, String)> {
        let at = |key: &str, msg: String| Err((format!("policy.hpb.{key}"), msg));
        if let Some(0) = self.device_miss_threshold {
            return at(
                "device_miss_threshold",
                "[policy.hpb] device_miss_threshold = 0: expected at least 1 (1: the device \
                 recommends at a region's first miss)"
                    .into(),
            );
        }
        if let Some(us) = self
            .map_work_delay_us
            .filter(|&us| us > MAX_MAP_WORK_DELAY_US)
        {
            return at(
                "map_work_delay_us",
                format!(
                    "[policy.hpb] map_work_delay_us = {us}: expected at most \
                     {MAX_MAP_WORK_DELAY_US} (1 s)"
                ),
            );
        }
        if let Some(0) = self.max_active_regions {
            return at(
                "max_active_regions",
                "[policy.hpb] max_active_regions = 0: expected at least 1".into(),
            );
        }
        Ok(())
    }

    /// The warm-up keys with their defaults.
    pub fn dynamics(&self) -> HpbDynamics {
        let d = HpbDynamics::default();
        HpbDynamics {
            device_miss_threshold: self
                .device_miss_threshold
                .unwrap_or(d.device_miss_threshold),
            map_work_delay: self
                .map_work_delay_us
                .map_or(d.map_work_delay, Nanos::from_us),
        }
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
        if let Some(n) = self.max_active_regions {
            if n > d.lu_max_active_regions {
                return Err((
                    "policy.hpb.max_active_regions".into(),
                    format!(
                        "[policy.hpb] max_active_regions = {n}: expected at most the preset's \
                         wLUMaxActiveHPBRegions ({})",
                        d.lu_max_active_regions
                    ),
                ));
            }
            d.lu_max_active_regions = n;
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
            dynamics: self.dynamics(),
        }))
    }

    /// Host-control parameters under device control would be ignored, as would the device's
    /// recommendation threshold under host control: refused.
    fn check_mode(&self, mode: Option<ControlMode>) -> Result<(), (String, String)> {
        if mode == Some(ControlMode::Host) && self.device_miss_threshold.is_some() {
            return Err((
                "policy.hpb.device_miss_threshold".into(),
                "[policy.hpb] device_miss_threshold: the device's recommendation rule, ignored \
                 in host control mode: remove it or set `mode = \"device\"`"
                    .into(),
            ));
        }
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
        let Err(err) = self.hcm_params().validate(entries_per_srgn, queue_depth) else {
            return Ok(());
        };
        let keys = self.hcm_keys();
        let written = err.keys.iter().find_map(|key| {
            keys.iter()
                .find(|(k, _)| k == key)
                .and_then(|&(k, v)| v.map(|v| (k, v)))
        });
        let what = err.expected;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> HpbPolicy {
        toml::from_str(text).unwrap()
    }

    fn preset_descriptors() -> Option<HpbDescriptors> {
        crate::input::ufs_preset::find("ufs21-64gb-class")
            .unwrap()
            .unwrap()
            .hpb_descriptors()
    }

    #[test]
    fn warm_up_keys_reach_the_exchange() {
        let r = policy(
            "device_miss_threshold = 4\nmap_work_delay_us = 250\nmax_active_regions = 1000\n",
        )
        .resolve(preset_descriptors(), 32)
        .unwrap()
        .unwrap();
        assert_eq!(
            r.dynamics,
            HpbDynamics {
                device_miss_threshold: 4,
                map_work_delay: Nanos(250_000),
            }
        );
        // No pinned region: the LRU holds the whole budget.
        assert_eq!(
            (
                r.descriptors.lu_max_active_regions,
                r.geometry.max_lru_active
            ),
            (1000, 1000)
        );
        let r = policy("")
            .resolve(preset_descriptors(), 32)
            .unwrap()
            .unwrap();
        assert_eq!(r.dynamics, HpbDynamics::default());
        assert_eq!(r.geometry.max_lru_active, 2016);
    }

    #[test]
    fn warm_up_keys_out_of_range_are_refused_at_their_key() {
        let key = |text: &str| policy(text).check().unwrap_err().0;
        assert_eq!(
            key("device_miss_threshold = 0\n"),
            "policy.hpb.device_miss_threshold"
        );
        assert_eq!(
            key("map_work_delay_us = 1000001\n"),
            "policy.hpb.map_work_delay_us"
        );
        assert_eq!(
            key("max_active_regions = 0\n"),
            "policy.hpb.max_active_regions"
        );
        assert_eq!(
            key("mode = \"host\"\ndevice_miss_threshold = 2\n"),
            "policy.hpb.device_miss_threshold"
        );
        assert!(policy("map_work_delay_us = 1000000\n").check().is_ok());
        // Past the preset's own budget (2016 regions).
        let e = policy("max_active_regions = 2017\n")
            .resolve(preset_descriptors(), 32)
            .unwrap_err();
        assert_eq!(
            e,
            (
                "policy.hpb.max_active_regions".to_string(),
                "[policy.hpb] max_active_regions = 2017: expected at most the preset's \
                 wLUMaxActiveHPBRegions (2016)"
                    .to_string()
            )
        );
    }
}
