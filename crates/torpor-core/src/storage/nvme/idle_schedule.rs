//! When does an idle drive reach each state under a table? The drive's own reading of its
//! chain ([`NvmeDevice::idle_schedule`]), for a table that is not running: `torpor apst` and
//! the claim rules read tables this way ("PS3 after 100 ms, PS4 after 2103.9 ms"), and a run
//! reports the same walk of the drive it simulated, so the two can never disagree.

use super::device::NvmeDevice;
pub use super::device::Reached;
use super::service::ServiceModel;
use crate::apst::psd::NvmeController;
use crate::apst::ApstTable;

/// The states an idle drive with `ctrl`'s declared latencies passes through from PS0 under
/// `table`, and when it reaches each.
pub fn idle_schedule(table: &ApstTable, ctrl: &NvmeController) -> Vec<Reached> {
    NvmeDevice::new(ctrl, Some(table), ServiceModel::CLIENT_DEFAULT).idle_schedule()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apst::psd::PowerState;

    fn ps(non_op: bool, enlat: u32, exlat: u32) -> PowerState {
        PowerState {
            max_power_mw: 1.0,
            non_operational: non_op,
            entry_lat_us: enlat,
            exit_lat_us: exlat,
            active_power_mw: None,
            idle_power_mw: None,
        }
    }

    #[test]
    fn sn530_v5_14_reaches_ps3_then_ps4() {
        // WD SN530 (linuxhw/SMART dump): PS3 ENLAT 3900 us, PS4 ENLAT 5000 us.
        let ctrl = NvmeController {
            model: "SN530".into(),
            npss: 4,
            apsta: true,
            power_states: vec![
                ps(false, 0, 0),
                ps(false, 0, 0),
                ps(false, 0, 0),
                ps(true, 3900, 11000),
                ps(true, 5000, 39000),
            ],
        };
        let mut entries = [0u64; 32];
        for e in entries.iter_mut().take(3) {
            *e = (3 << 3) | (100 << 8);
        }
        entries[3] = (4 << 3) | (2000 << 8);
        let table = ApstTable {
            apste: true,
            entries,
        };
        // PS3: 100 ms idle + 3.9 ms entry = 103.9 ms; PS4: + 2000 ms + 5 ms = 2108.9 ms.
        assert_eq!(
            idle_schedule(&table, &ctrl),
            vec![
                Reached {
                    ps: 3,
                    reached_after_ms: 103.9
                },
                Reached {
                    ps: 4,
                    reached_after_ms: 2108.9
                }
            ]
        );
        let off = ApstTable {
            apste: false,
            entries,
        };
        assert!(idle_schedule(&off, &ctrl).is_empty());
    }
}
