//! When does an idle drive reach each state? Follows an APST table's chain from PS0.
//!
//! This is the table read as a timeline — "PS3 after 100 ms, PS4 after 2103.9 ms" — which is
//! how the APST commit message compares tables ("much quicker transitions to PS3 and PS4").
//! A state is *reached* when its entry completes, so each step adds the previous ITPT and the
//! target's entry latency (ENLAT), as the drive model does.

use serde::Serialize;

use super::apst::ApstTable;
use super::psd::NvmeController;

/// One step of the idle timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reached {
    pub ps: usize,
    /// Continuous idle time, ms, after which the drive is in `ps`.
    pub reached_after_ms: f64,
}

/// The states an idle drive passes through from PS0, and when it reaches each.
pub fn idle_schedule(table: &ApstTable, ctrl: &NvmeController) -> Vec<Reached> {
    let states = ctrl.states();
    let mut out = Vec::new();
    let (mut ps, mut t_us) = (0usize, 0u64);
    // At most one step per state: a well-formed table only goes deeper.
    for _ in 0..states.len() {
        let itpt = table.itpt_ms(ps) as u64;
        let next = table.itps(ps) as usize;
        if !table.apste || itpt == 0 || next <= ps || next >= states.len() {
            break;
        }
        t_us += itpt * 1000 + states[next].entry_lat_us as u64;
        out.push(Reached {
            ps: next,
            reached_after_ms: t_us as f64 / 1000.0,
        });
        ps = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::nvme::psd::PowerState;

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
