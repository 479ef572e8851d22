//! Host-control-mode tunables (`hpb_params` in sysfs; `ufshpb_hcm_param_init` and the
//! `*_store` checks in v6.5 `ufshpb.c`, spec-storage §4.8). Device control mode ignores them.

/// `ACTIVATION_THRESHOLD`: reads of a sub-region that queue its activation.
pub const ACTIVATION_THRESHOLD: u32 = 8;
/// `READ_TO_MS`: a region's read timeout after its last read.
pub const READ_TO_MS: u64 = 1000;
/// `READ_TO_EXPIRIES`: timeouts a clean region survives before inactivation.
pub const READ_TO_EXPIRIES: u32 = 100;
/// `POLLING_INTERVAL_MS`: period of the read-timeout work, which also kicks the map work.
pub const POLLING_INTERVAL_MS: u64 = 200;
/// `THROTTLE_MAP_REQ_DEFAULT`: READ BUFFERs in flight at once.
pub const THROTTLE_MAP_REQ_DEFAULT: u32 = 1;

/// The HCM parameters, named as in sysfs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HcmParams {
    /// A sub-region is queued for activation when its read count becomes exactly this.
    pub activation_thld: u32,
    /// Normalization shifts every read counter right by this.
    pub normalization_factor: u32,
    /// A region entering a full LRU needs at least this many reads.
    pub eviction_thld_enter: u32,
    /// A victim may have at most this many reads.
    pub eviction_thld_exit: u32,
    pub read_timeout_ms: u64,
    pub read_timeout_expiries: u32,
    pub timeout_polling_interval_ms: u64,
    pub inflight_map_req: u32,
}

impl Default for HcmParams {
    /// `ufshpb_hcm_param_init`: enter = 8 << 5 = 256, exit = 8 << 4 = 128, factor 1.
    fn default() -> Self {
        HcmParams {
            activation_thld: ACTIVATION_THRESHOLD,
            normalization_factor: 1,
            eviction_thld_enter: ACTIVATION_THRESHOLD << 5,
            eviction_thld_exit: ACTIVATION_THRESHOLD << 4,
            read_timeout_ms: READ_TO_MS,
            read_timeout_expiries: READ_TO_EXPIRIES,
            timeout_polling_interval_ms: POLLING_INTERVAL_MS,
            inflight_map_req: THROTTLE_MAP_REQ_DEFAULT,
        }
    }
}

/// A violated HCM constraint: the parameters it relates, in the order its words name them
/// (so that a scenario error can point at the first one the user wrote), and what it expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HcmParamError {
    pub keys: &'static [&'static str],
    pub expected: String,
}

impl std::fmt::Display for HcmParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.expected)
    }
}

impl std::error::Error for HcmParamError {}

impl HcmParams {
    /// The constraints the sysfs stores enforce, checked on the whole set: `queue_depth` is the
    /// LU's SCSI queue depth (`inflight_map_req <= queue_depth - 1`; `u32::MAX` before the
    /// device is known), `entries_per_srgn` bounds the normalization shift
    /// (`<= log2(entries_per_srgn)`).
    pub fn validate(&self, entries_per_srgn: u32, queue_depth: u32) -> Result<(), HcmParamError> {
        let p = self;
        let max_shift = entries_per_srgn.trailing_zeros();
        let checks: [(bool, &'static [&'static str], String); 7] = [
            (
                p.activation_thld > 0,
                &["activation_thld"],
                "activation_thld > 0".into(),
            ),
            (
                (1..=max_shift).contains(&p.normalization_factor),
                &["normalization_factor"],
                format!("normalization_factor in 1..={max_shift}"),
            ),
            (
                p.eviction_thld_exit > p.activation_thld,
                &["eviction_thld_exit", "activation_thld"],
                format!(
                    "eviction_thld_exit > activation_thld ({})",
                    p.activation_thld
                ),
            ),
            (
                p.eviction_thld_enter > p.eviction_thld_exit,
                &["eviction_thld_enter", "eviction_thld_exit"],
                format!(
                    "eviction_thld_enter > eviction_thld_exit ({})",
                    p.eviction_thld_exit
                ),
            ),
            (
                p.timeout_polling_interval_ms > 0
                    && p.read_timeout_ms >= 2 * p.timeout_polling_interval_ms,
                &["timeout_polling_interval_ms", "read_timeout_ms"],
                "timeout_polling_interval_ms > 0 and read_timeout_ms >= 2 × it".into(),
            ),
            (
                p.read_timeout_expiries > 0,
                &["read_timeout_expiries"],
                "read_timeout_expiries > 0".into(),
            ),
            (
                p.inflight_map_req > 0 && p.inflight_map_req < queue_depth,
                &["inflight_map_req"],
                if queue_depth == u32::MAX {
                    "inflight_map_req of at least 1 (and below the LU's queue depth)".into()
                } else {
                    format!("inflight_map_req in 1..={}", queue_depth.saturating_sub(1))
                },
            ),
        ];
        match checks.into_iter().find(|(ok, _, _)| !ok) {
            Some((_, keys, expected)) => Err(HcmParamError { keys, expected }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_drivers_and_valid() {
        let p = HcmParams::default();
        assert_eq!(
            (
                p.activation_thld,
                p.eviction_thld_enter,
                p.eviction_thld_exit
            ),
            (8, 256, 128)
        );
        assert_eq!((p.read_timeout_ms, p.read_timeout_expiries), (1000, 100));
        assert_eq!(
            (p.timeout_polling_interval_ms, p.inflight_map_req),
            (200, 1)
        );
        assert_eq!(p.validate(1024, 32), Ok(()));
    }

    #[test]
    fn each_constraint_is_enforced() {
        let d = HcmParams::default();
        let v = |p: HcmParams| p.validate(1024, 32).unwrap_err().expected;
        assert_eq!(
            v(HcmParams {
                activation_thld: 0,
                ..d
            }),
            "activation_thld > 0"
        );
        assert_eq!(
            v(HcmParams {
                normalization_factor: 11,
                ..d
            }),
            "normalization_factor in 1..=10"
        );
        assert!(v(HcmParams {
            eviction_thld_exit: 8,
            ..d
        })
        .starts_with("eviction_thld_exit"));
        assert!(v(HcmParams {
            eviction_thld_enter: 128,
            ..d
        })
        .starts_with("eviction_thld_enter"));
        assert!(v(HcmParams {
            read_timeout_ms: 399,
            ..d
        })
        .starts_with("timeout_polling"));
        assert_eq!(
            v(HcmParams {
                read_timeout_expiries: 0,
                ..d
            }),
            "read_timeout_expiries > 0"
        );
        assert_eq!(
            v(HcmParams {
                inflight_map_req: 32,
                ..d
            }),
            "inflight_map_req in 1..=31"
        );
    }
}
