//! devfreq's decision for one device: the `simple_ondemand` governor and the frequency range
//! PM QoS allows, as drivers/devfreq/devfreq.c and governor_simpleondemand.c compute them
//! (v5.5+, when devfreq took its limits from device PM QoS; unchanged through v6.19).
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
//! `devfreq_update_target` then clamps the governor's answer into the range: the frequency
//! table's extremes, narrowed by the QoS floor (`1000 * min kHz`) and cap (unless it is the
//! S32_MAX default), kept within the available OPPs, and `min <= max` (the cap wins).

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

/// `devfreq_get_freq_range`: (min, max) in Hz for a table whose extremes are `table_min` and
/// `table_max`, the available OPPs' extremes `scaling_min`/`scaling_max`, and the device's
/// frequency QoS (kHz).
pub fn freq_range(
    table_min: u64,
    table_max: u64,
    scaling_min: u64,
    scaling_max: u64,
    qos: &FreqQos,
) -> (u64, u64) {
    let mut min = table_min.max(1000 * qos.min_khz().max(0) as u64);
    let mut max = table_max;
    if qos.max_khz() != NO_MAX_KHZ {
        max = max.min(1000 * qos.max_khz().max(0) as u64);
    }
    max = max.clamp(scaling_min, scaling_max);
    // clamp(min, scaling_min, max) with max possibly below scaling_min: the kernel's clamp
    // macro takes the upper bound last, so max wins.
    min = min.max(scaling_min).min(max);
    (min, max)
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
        let mut q = FreqQos::default();
        assert_eq!(freq_range(lo, hi, lo, hi, &q), (lo, hi));
        // The block layer's boost asks S32_MAX kHz as a floor: min = max(37.5 MHz, 2^31-1 MHz)
        // then min(.., max) = 300 MHz.
        q.set_min(1, NO_MAX_KHZ);
        assert_eq!(freq_range(lo, hi, lo, hi, &q), (hi, hi));
        // A cap at 100 MHz beside it: the cap wins.
        q.set_max(2, 100_000);
        assert_eq!(freq_range(lo, hi, lo, hi, &q), (100_000_000, 100_000_000));
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
