//! Frequency QoS (`freq_qos_*`, kernel/power/qos.c, v5.4+): a floor and a cap from many
//! holders, in kHz.
//!
//! 1. The effective minimum is the **largest** minimum request (default 0).
//! 2. The effective maximum is the **smallest** maximum request (default S32_MAX, "none").
//! 3. A consumer reads both and resolves a conflict itself (devfreq and cpufreq let the
//!    maximum win: see `storage::ufs::devfreq::freq_range`).

use super::{Aggregate, Constraints, Holder};

/// `FREQ_QOS_MAX_DEFAULT_VALUE` (S32_MAX kHz): no cap.
pub const NO_MAX_KHZ: i64 = i32::MAX as i64;

/// A device's or a CPU policy's frequency constraints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreqQos {
    min: Constraints,
    max: Constraints,
}

impl Default for FreqQos {
    fn default() -> Self {
        FreqQos {
            min: Constraints::new(Aggregate::Max, 0),
            max: Constraints::new(Aggregate::Min, NO_MAX_KHZ),
        }
    }
}

impl FreqQos {
    /// The effective floor, kHz.
    pub fn min_khz(&self) -> i64 {
        self.min.value()
    }

    /// The effective cap, kHz (`NO_MAX_KHZ` when none).
    pub fn max_khz(&self) -> i64 {
        self.max.value()
    }

    /// Sets `holder`'s floor; true when the effective floor changed (consumers re-evaluate).
    pub fn set_min(&mut self, holder: Holder, khz: i64) -> bool {
        self.min.set(holder, khz)
    }

    pub fn remove_min(&mut self, holder: Holder) -> bool {
        self.min.remove(holder)
    }

    /// Sets `holder`'s cap; true when the effective cap changed.
    pub fn set_max(&mut self, holder: Holder, khz: i64) -> bool {
        self.max.set(holder, khz)
    }

    pub fn remove_max(&mut self, holder: Holder) -> bool {
        self.max.remove(holder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_floor_and_the_lowest_cap_win() {
        let mut q = FreqQos::default();
        assert_eq!((q.min_khz(), q.max_khz()), (0, NO_MAX_KHZ));
        q.set_min(1, 100_000);
        q.set_min(2, 300_000);
        q.set_max(3, 250_000);
        q.set_max(4, 400_000);
        assert_eq!((q.min_khz(), q.max_khz()), (300_000, 250_000));
        q.remove_min(2);
        q.remove_max(3);
        assert_eq!((q.min_khz(), q.max_khz()), (100_000, 400_000));
    }
}
