//! devfreq's decision for one device: the `simple_ondemand` governor, the frequency range
//! PM QoS allows and the user's sysfs limits, as drivers/devfreq/devfreq.c and
//! governor_simpleondemand.c compute them from v5.5 (when devfreq took its limits from device
//! PM QoS) through v6.19. The range has two forms ([`RangeVersion`]): v5.5 to v6.16, and
//! v6.17's ("PM / devfreq: Limit max_freq with scaling_min_freq", Lifeng Zheng, merged for
//! v6.17-rc1 in 2025), which differ when the QoS cap is below the lowest available OPP.
//!
//! `simple_ondemand`, on the busy and total time the driver reports for the window since the
//! last poll (UFS reports microseconds):
//! 1. Thresholds: `upthreshold` (default 90) and `downdifferential` (default 5), 0 meaning the
//!    default; `up > 100` or `up < down` is an error.
//! 2. No time measured: the maximum frequency.
//! 3. Either count at 2^24 or more: both shifted right by 7 (overflow guard).
//! 4. `busy * 100 > total * up`: the maximum frequency.
//! 5. Current frequency unknown (0): the maximum frequency.
//! 6. `busy * 100 > total * (up - down)`: keep the current frequency (the hold band).
//! 7. Otherwise `((busy * cur / total) * 100) / (up - down / 2)`, each division truncating.
//!
//! `devfreq_update_target` then clamps the governor's answer into the range
//! (`devfreq_get_freq_range`):
//! 1. The frequency table's extremes.
//! 2. The QoS floor raises the minimum to `1000 * min kHz` and the cap (unless it is the
//!    S32_MAX default) lowers the maximum to `1000 * max kHz`, each an s32 multiplied as an
//!    unsigned long: a negative value wraps to a frequency near 2^64 Hz (a floor that pins the
//!    clock at its maximum, a cap that caps nothing).
//! 3. The available OPPs (`scaling_min_freq`, `scaling_max_freq`):
//!    - v5.5..v6.16: the minimum raised to `scaling_min`, the maximum lowered to `scaling_max`,
//!      then a minimum above the maximum lowered to it: a cap below `scaling_min` wins.
//!    - v6.17+: the maximum clamped into `[scaling_min, scaling_max]` first, then the minimum
//!      into `[scaling_min, max]`: a cap below `scaling_min` gives way to `scaling_min`.
//!
//! The user's sysfs `min_freq` and `max_freq` (`min_freq_store`, `max_freq_store`, the same
//! from v5.5 through v6.19) are requests on those QoS lists:
//! 1. The written Hz are read as an unsigned long (`sscanf("%lu")`).
//! 2. `min_freq`: divided by 1000 (kHz, rounded down). `max_freq`: 0 becomes
//!    `PM_QOS_MAX_FREQUENCY_DEFAULT_VALUE` (S32_MAX, no cap), anything else is divided by 1000
//!    rounding up.
//! 3. `dev_pm_qos_update_request` takes an s32: the kHz keep their low 32 bits, read as signed
//!    (4294967301000 Hz is 5 kHz, 4294967296000 Hz is 0 kHz, 2147483648000 Hz is -2^31 kHz).
//! 4. `pm_qos_update_target` reads -1 (`PM_QOS_DEFAULT_VALUE`) as the list's default: 0 for
//!    the floor, S32_MAX for the cap.
//!
//! torpor does what the kernel does with such values, and the run notes each one that step 3
//! or 4 changed ([`sysfs_note`]).

use serde::{Deserialize, Serialize};

use crate::qos::freq::{FreqQos, NO_MAX_KHZ};

/// `DFSO_UPTHRESHOLD`.
pub const DEFAULT_UPTHRESHOLD: u64 = 90;
/// `DFSO_DOWNDIFFERENCTIAL` (sic in the kernel).
pub const DEFAULT_DOWNDIFFERENTIAL: u64 = 5;

/// What the driver's `get_dev_status` returns (`struct devfreq_dev_status`; unsigned long).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DevStatus {
    pub total_time: u64,
    pub busy_time: u64,
    /// Hz; 0 when unknown.
    pub current_frequency: u64,
}

/// `struct devfreq_simple_ondemand_data`: 0 takes the governor's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OndemandData {
    pub upthreshold: u64,
    pub downdifferential: u64,
}

/// The governor's "as fast as possible" (`DEVFREQ_MAX_FREQ`, ULONG_MAX), clamped later.
pub const MAX_FREQ: u64 = u64::MAX;

/// Why simple_ondemand refused to decide (`-EINVAL`): the frequency stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadThresholds {
    pub up: u64,
    pub down: u64,
}

/// `devfreq_simple_ondemand_func` on a status already read.
pub fn simple_ondemand(status: DevStatus, data: OndemandData) -> Result<u64, BadThresholds> {
    let up = if data.upthreshold == 0 {
        DEFAULT_UPTHRESHOLD
    } else {
        data.upthreshold
    };
    let down = if data.downdifferential == 0 {
        DEFAULT_DOWNDIFFERENTIAL
    } else {
        data.downdifferential
    };
    if up > 100 || up < down {
        return Err(BadThresholds { up, down });
    }
    let mut s = status;
    if s.total_time == 0 {
        return Ok(MAX_FREQ);
    }
    if s.busy_time >= 1 << 24 || s.total_time >= 1 << 24 {
        s.busy_time >>= 7;
        s.total_time >>= 7;
    }
    // The kernel multiplies unsigned longs: wrapping, as it would.
    if s.busy_time.wrapping_mul(100) > s.total_time.wrapping_mul(up) {
        return Ok(MAX_FREQ);
    }
    if s.current_frequency == 0 {
        return Ok(MAX_FREQ);
    }
    if s.busy_time.wrapping_mul(100) > s.total_time.wrapping_mul(up - down) {
        return Ok(s.current_frequency);
    }
    // A total shifted down to 0 would divide by zero in C too; it cannot happen here (a total
    // of 2^24 or more shifts to at least 2^17).
    let a = s.busy_time.wrapping_mul(s.current_frequency);
    let b = (a / s.total_time).wrapping_mul(100);
    Ok(b / (up - down / 2))
}

/// Which form of `devfreq_get_freq_range` (module documentation, step 3), by the release that
/// introduced it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RangeVersion {
    /// v5.5 through v6.16.
    #[serde(rename = "v5.5")]
    V5_5,
    /// v6.17 and later.
    #[default]
    #[serde(rename = "v6.17")]
    V6_17,
}

/// A QoS value (kHz, an s32) in Hz as devfreq computes it: `HZ_PER_KHZ * value` in unsigned
/// long arithmetic, a negative value wrapping (step 2).
fn qos_hz(khz: i64) -> u64 {
    1000u64.wrapping_mul(khz as u64)
}

/// `devfreq_get_freq_range`: (min, max) in Hz for a table whose extremes are `table_min` and
/// `table_max`, the available OPPs' extremes `scaling_min`/`scaling_max`, and the device's
/// frequency QoS (kHz).
pub fn freq_range(
    version: RangeVersion,
    table_min: u64,
    table_max: u64,
    scaling_min: u64,
    scaling_max: u64,
    qos: &FreqQos,
) -> (u64, u64) {
    let mut min = table_min.max(qos_hz(qos.min_khz()));
    let mut max = table_max;
    if qos.max_khz() != NO_MAX_KHZ {
        max = max.min(qos_hz(qos.max_khz()));
    }
    match version {
        RangeVersion::V5_5 => {
            min = min.max(scaling_min);
            max = max.min(scaling_max);
            min = min.min(max);
        }
        RangeVersion::V6_17 => {
            // The kernel's clamp(val, lo, hi) is min(max(val, lo), hi): hi wins a crossing.
            max = max.max(scaling_min).min(scaling_max);
            min = min.max(scaling_min).min(max);
        }
    }
    (min, max)
}

/// The value `min_freq_store` leaves in devfreq's floor request for `hz` written (kHz; module
/// documentation, steps 1 to 4).
pub fn user_min_request_khz(hz: u64) -> i64 {
    stored_khz(hz / 1000, 0)
}

/// The value `max_freq_store` leaves in devfreq's cap request for `hz` written (kHz).
pub fn user_max_request_khz(hz: u64) -> i64 {
    let khz = if hz == 0 {
        NO_MAX_KHZ as u64
    } else {
        hz.div_ceil(1000)
    };
    stored_khz(khz, NO_MAX_KHZ)
}

/// An unsigned long of kHz passed as an s32, -1 read as the list's `default` (steps 3, 4).
fn stored_khz(khz: u64, default: i64) -> i64 {
    match khz as u32 as i32 {
        -1 => default,
        v => i64::from(v),
    }
}

/// What the run says about a sysfs write of `hz` to `min_freq` (`floor`) or `max_freq` whose
/// kHz the kernel does not keep as written (steps 3 and 4); `None` when it keeps them.
pub fn sysfs_note(floor: bool, hz: u64) -> Option<String> {
    let (name, khz, stored) = match (floor, hz) {
        (true, _) => ("min_freq", hz / 1000, user_min_request_khz(hz)),
        (false, 0) => return None,
        (false, _) => ("max_freq", hz.div_ceil(1000), user_max_request_khz(hz)),
    };
    if i64::try_from(khz) == Ok(stored) {
        return None;
    }
    let as_s32 = khz as u32 as i32;
    let effect = match (floor, stored) {
        (true, 0) => "no floor".to_string(),
        (true, v) if v < 0 => "a negative floor, which devfreq multiplies to a frequency near \
                               2^64 Hz: the clock is pinned at its maximum"
            .to_string(),
        (true, v) => format!("a floor of {v} kHz"),
        (false, NO_MAX_KHZ) => "no cap".to_string(),
        (false, v) if v < 0 => "a negative cap, which devfreq multiplies to a frequency near \
                                2^64 Hz: no cap"
            .to_string(),
        (false, v) => format!("a cap of {v} kHz"),
    };
    let default = if as_s32 == -1 {
        ", which PM QoS reads as the default"
    } else {
        ""
    };
    Some(format!(
        "devfreq {name} = {hz} Hz is {khz} kHz, which the kernel passes to \
         dev_pm_qos_update_request as an s32: {as_s32} kHz{default}; so {effect}, as in the \
         kernel"
    ))
}

/// Whether a clamped frequency came from the range's top (`DEVFREQ_FLAG_LEAST_UPPER_BOUND`):
/// drivers choosing an OPP round down then instead of up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub freq: u64,
    pub least_upper_bound: bool,
}

/// `devfreq_update_target`'s clamp of the governor's answer.
pub fn clamp_target(freq: u64, range: (u64, u64)) -> Target {
    let (min, max) = range;
    if freq < min {
        Target {
            freq: min,
            least_upper_bound: false,
        }
    } else if freq > max {
        Target {
            freq: max,
            least_upper_bound: true,
        }
    } else {
        Target {
            freq,
            least_upper_bound: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UFS: OndemandData = OndemandData {
        upthreshold: 70,
        downdifferential: 5,
    };

    fn st(busy: u64, total: u64, cur: u64) -> DevStatus {
        DevStatus {
            total_time: total,
            busy_time: busy,
            current_frequency: cur,
        }
    }

    #[test]
    fn the_two_forms_part_where_the_cap_is_below_the_lowest_available_opp() {
        // Table 37.5..300 MHz with the 37.5 MHz OPP disabled: scaling_min 100 MHz.
        let (t_lo, t_hi, s_lo, s_hi) = (37_500_000, 300_000_000, 100_000_000, 300_000_000);
        let mut q = FreqQos::default();
        q.set_max(1, 50_000);
        // v5.5: min = max(37.5, 0) = 37.5 MHz, max = min(300, 50) = 50; min = max(37.5, 100) =
        // 100, max = min(50, 300) = 50; min > max: min = 50. The cap wins: (50, 50) MHz.
        assert_eq!(
            freq_range(RangeVersion::V5_5, t_lo, t_hi, s_lo, s_hi, &q),
            (50_000_000, 50_000_000)
        );
        // v6.17: max = clamp(50, 100, 300) = 100; min = clamp(37.5, 100, 100) = 100: the
        // lowest available OPP wins: (100, 100) MHz.
        assert_eq!(
            freq_range(RangeVersion::V6_17, t_lo, t_hi, s_lo, s_hi, &q),
            (s_lo, s_lo)
        );
        // A cap at 200 MHz, within the OPPs: both (100, 200) MHz.
        q.set_max(1, 200_000);
        for v in [RangeVersion::V5_5, RangeVersion::V6_17] {
            assert_eq!(
                freq_range(v, t_lo, t_hi, s_lo, s_hi, &q),
                (s_lo, 200_000_000)
            );
        }
    }

    #[test]
    fn sysfs_limits_pass_through_an_s32_as_in_the_kernel() {
        // 4294967301000 Hz: 4294967301 kHz, whose low 32 bits are 5: a 5 kHz floor.
        assert_eq!(user_min_request_khz(4_294_967_301_000), 5);
        // 4294967296000 Hz as a cap: 2^32 kHz, low 32 bits 0: a cap of 0 kHz.
        assert_eq!(user_max_request_khz(4_294_967_296_000), 0);
        // 2147483648000 Hz as a floor: 2^31 kHz, read as an s32: -2^31.
        assert_eq!(user_min_request_khz(2_147_483_648_000), -(1 << 31));
        // 4294967295000 Hz: 0xFFFFFFFF kHz, -1, PM_QOS_DEFAULT_VALUE: the list's default.
        assert_eq!(user_min_request_khz(4_294_967_295_000), 0);
        assert_eq!(user_max_request_khz(4_294_967_295_000), NO_MAX_KHZ);
        // A cap rounds up (1 Hz is 1 kHz) and 0 is no cap; S32_MAX kHz as a floor is kept.
        assert_eq!(user_max_request_khz(1), 1);
        assert_eq!(user_max_request_khz(0), NO_MAX_KHZ);
        assert_eq!(user_min_request_khz(2_147_483_647_999), NO_MAX_KHZ);
        // 2147483647001 Hz as a cap: rounded up to 2^31 kHz, -2^31 as an s32.
        assert_eq!(user_max_request_khz(2_147_483_647_001), -(1 << 31));
    }

    #[test]
    fn what_truncated_limits_do_to_the_range() {
        let (lo, hi) = (37_500_000, 300_000_000);
        // A cap of 0 kHz (4294967296000 Hz written): max = min(300 MHz, 0) = 0. v5.5: the
        // floor 37.5 MHz is lowered to it: (0, 0); v6.17: max = clamp(0, 37.5, 300) = 37.5:
        // (37.5, 37.5) MHz. Either way the clock goes to its minimum.
        let mut q = FreqQos::default();
        q.set_max(1, user_max_request_khz(4_294_967_296_000));
        assert_eq!(freq_range(RangeVersion::V5_5, lo, hi, lo, hi, &q), (0, 0));
        assert_eq!(
            freq_range(RangeVersion::V6_17, lo, hi, lo, hi, &q),
            (lo, lo)
        );
        // A floor of 5 kHz (4294967301000 Hz): 5000 Hz, below the table: no effect.
        let mut q = FreqQos::default();
        q.set_min(1, user_min_request_khz(4_294_967_301_000));
        assert_eq!(
            freq_range(RangeVersion::V6_17, lo, hi, lo, hi, &q),
            (lo, hi)
        );
        // A floor of -2^31 kHz: 1000 x (2^64 - 2^31) mod 2^64 = 2^64 - 2^31 x 1000 Hz, above
        // every table: pinned at the maximum.
        q.set_min(1, user_min_request_khz(2_147_483_648_000));
        for v in [RangeVersion::V5_5, RangeVersion::V6_17] {
            assert_eq!(freq_range(v, lo, hi, lo, hi, &q), (hi, hi));
        }
        // A cap of -2^31 kHz: a frequency near 2^64 Hz, which caps nothing.
        let mut q = FreqQos::default();
        q.set_max(1, user_max_request_khz(2_147_483_647_001));
        assert_eq!(freq_range(RangeVersion::V5_5, lo, hi, lo, hi, &q), (lo, hi));
    }

    #[test]
    fn the_run_notes_a_limit_the_kernel_truncates() {
        assert_eq!(sysfs_note(true, 300_000_000), None);
        assert_eq!(sysfs_note(false, 0), None);
        assert_eq!(sysfs_note(false, 2_147_483_647_000), None);
        let five = sysfs_note(true, 4_294_967_301_000).unwrap();
        assert!(
            five.contains("4294967301 kHz") && five.contains("a floor of 5 kHz"),
            "{five}"
        );
        let pinned = sysfs_note(true, 2_147_483_648_000).unwrap();
        assert!(pinned.contains("pinned at its maximum"), "{pinned}");
        let zero = sysfs_note(false, 4_294_967_296_000).unwrap();
        assert!(zero.contains("a cap of 0 kHz"), "{zero}");
        let default = sysfs_note(false, 4_294_967_295_000).unwrap();
        assert!(
            default.contains("-1 kHz, which PM QoS reads as the default"),
            "{default}"
        );
        assert!(default.contains("no cap"), "{default}");
    }

    #[test]
    fn simple_ondemand_by_hand() {
        let mhz = 1_000_000;
        // No window yet: as fast as possible.
        assert_eq!(simple_ondemand(st(0, 0, 300 * mhz), UFS), Ok(MAX_FREQ));
        // 71 % > 70 %: maximum. Exactly 70 %: not strictly greater, so into the hold band
        // check: 7000 > 100 * 65 = 6500: keep the current frequency.
        assert_eq!(simple_ondemand(st(71, 100, 300 * mhz), UFS), Ok(MAX_FREQ));
        assert_eq!(simple_ondemand(st(70, 100, 300 * mhz), UFS), Ok(300 * mhz));
        // 65 % is not above the band's 65: proportional. 65 * 300e6 / 100 = 195e6; x100 =
        // 1.95e10; / (70 - 5/2 = 68) = 286764705 (286764705.88 truncated).
        assert_eq!(
            simple_ondemand(st(65, 100, 300 * mhz), UFS),
            Ok(286_764_705)
        );
        // 50 %: 50 * 300e6 / 100 * 100 / 68 = 1.5e10 / 68 = 220588235.
        assert_eq!(
            simple_ondemand(st(50, 100, 300 * mhz), UFS),
            Ok(220_588_235)
        );
        // Unknown current frequency below the up threshold: maximum.
        assert_eq!(simple_ondemand(st(10, 100, 0), UFS), Ok(MAX_FREQ));
        // Integer truncation inside: busy 1, total 3, cur 100 Hz: 100/3 = 33; x100 = 3300;
        // /68 = 48.
        assert_eq!(simple_ondemand(st(1, 3, 100), UFS), Ok(48));
    }

    #[test]
    fn defaults_thresholds_and_the_overflow_guard() {
        let d = OndemandData::default();
        // Defaults 90/5: 89 % is in the band 85..90 -> hold.
        assert_eq!(simple_ondemand(st(89, 100, 1000), d), Ok(1000));
        // 80 %: 80 * 1000 / 100 = 800; x100 = 80000; / (90 - 5/2 = 88) = 909.
        assert_eq!(simple_ondemand(st(80, 100, 1000), d), Ok(909));
        // up > 100 or up < down: refused.
        let bad = OndemandData {
            upthreshold: 101,
            downdifferential: 5,
        };
        assert!(simple_ondemand(st(1, 2, 3), bad).is_err());
        let inverted = OndemandData {
            upthreshold: 10,
            downdifferential: 20,
        };
        assert!(simple_ondemand(st(1, 2, 3), inverted).is_err());
        // A 100 ms window in us, 2^24 or more: both >> 7. busy 10_000_000 >> 7 = 78125,
        // total 20_000_000 >> 7 = 156250: 50 %, proportional: 78125 * 1000 / 156250 = 500;
        // x100 = 50000; / 68 = 735.
        assert_eq!(
            simple_ondemand(st(10_000_000, 20_000_000, 1000), UFS),
            Ok(735)
        );
    }

    #[test]
    fn the_range_takes_qos_floors_and_caps_and_the_cap_wins() {
        let (lo, hi) = (37_500_000, 300_000_000);
        for v in [RangeVersion::V5_5, RangeVersion::V6_17] {
            let mut q = FreqQos::default();
            assert_eq!(freq_range(v, lo, hi, lo, hi, &q), (lo, hi));
            // The block layer's boost asks S32_MAX kHz as a floor: min = max(37.5 MHz, 2^31-1
            // MHz) then lowered to max, 300 MHz.
            q.set_min(1, NO_MAX_KHZ);
            assert_eq!(freq_range(v, lo, hi, lo, hi, &q), (hi, hi));
            // A cap at 100 MHz beside it: the cap wins.
            q.set_max(2, 100_000);
            let mhz100 = 100_000_000;
            assert_eq!(freq_range(v, lo, hi, lo, hi, &q), (mhz100, mhz100));
        }
        // Clamping the governor's answer: below min -> min, GLB; above max -> max, LUB.
        assert_eq!(
            clamp_target(MAX_FREQ, (lo, hi)),
            Target {
                freq: hi,
                least_upper_bound: true
            }
        );
        assert_eq!(
            clamp_target(1, (lo, hi)),
            Target {
                freq: lo,
                least_upper_bound: false
            }
        );
    }
}
