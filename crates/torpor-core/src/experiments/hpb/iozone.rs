//! Seed 003's iozone claims: random-read throughput over five ranges with HPB off and on,
//! against the seed's table.

use serde::Deserialize;

use super::SEED;
use crate::experiments::claim::Claim;
use crate::experiments::format::percent;
use crate::experiments::row_lookup::{find, MissingRow};

/// The seed's iozone table, MB/s: (IO range GB, HPB on, HPB off).
pub(super) const SEED_IOZONE: [(u32, f64, f64); 5] = [
    (1, 294.8, 300.87),
    (4, 293.51, 179.35),
    (8, 294.85, 162.52),
    (16, 293.45, 156.26),
    (32, 277.4, 153.25),
];
/// What the iozone claims' fitted figures were fitted to (`fitted_to`): the FTL's controller
/// time at the seed's 1 GB HPB-off point, the host's region budget at its 32 GB HPB-on point.
const FITTED_FTL: &str =
    "the FTL's controller time (ftl.rs), fitted to the seed's 1 GB HPB-off 300.87 MB/s";
const FITTED_BUDGET: &str = "the host's active-region budget (lu_max_active_regions), fitted \
    to the seed's 32 GB HPB-on 277.4 MB/s";

/// HPB on, 1-16 GB: within 5 % of the seed's ~294 (the model omits the host's HPB work, which
/// costs the seed 2 % at 1 GB against HPB off; 5 % leaves room for that and the calibration).
const FLAT_TOL: f64 = 0.05;
/// HPB off at each range: within 10 % of the seed (the FTL's calibration note bounds the
/// model's own error at 4.4 %; twice that for the engine's queueing).
const OFF_TOL: f64 = 0.10;
/// Parity at 1 GB: on and off within 5 % of each other (seed: 2.0 %).
const PARITY_TOL: f64 = 0.05;
/// "About half" at 32 GB: off(32) / off(1) in [0.45, 0.60] (seed 0.509).
const HALF_RANGE: (f64, f64) = (0.45, 0.60);
/// With HPB, 32 GB lies 2-10 % below 16 GB (seed 5.5 %).
const DROP_RANGE_PCT: (f64, f64) = (2.0, 10.0);
/// An iozone `runs` row: one range with HPB off or on.
#[derive(Clone, Debug, Deserialize)]
pub struct IozoneRow {
    pub range_gb: u32,
    pub hpb: bool,
    pub bw_mbs: f64,
}

fn bw(rows: &[IozoneRow], range_gb: u32, hpb: bool) -> Result<f64, MissingRow> {
    find(
        rows,
        |r| r.range_gb == range_gb && r.hpb == hpb,
        || format!("range {range_gb} GB, hpb {hpb}"),
    )
    .map(|r| r.bw_mbs)
}

/// `ranges`' figures as the claims list them: "1 GB 294.8, 4 GB 293.51".
fn listed(ranges: impl Iterator<Item = (u32, String)>) -> String {
    ranges
        .map(|(gb, v)| format!("{gb} GB {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rule: with HPB, each range from 1 to 16 GB within [`FLAT_TOL`] of the seed's HPB-on figure.
pub(super) fn flat(rows: &[IozoneRow]) -> Result<Claim, MissingRow> {
    let seed = &SEED_IOZONE[..SEED_IOZONE.len() - 1];
    let got = seed
        .iter()
        .map(|(gb, _, _)| bw(rows, *gb, true))
        .collect::<Result<Vec<_>, _>>()?;
    let ok = seed
        .iter()
        .zip(&got)
        .all(|((_, on, _), v)| (v - on).abs() <= FLAT_TOL * on);
    Ok(Claim::new(
        SEED,
        "With HPB, random-read throughput stays flat (~294 MB/s) from 1 to 16 GB",
        listed(seed.iter().map(|(gb, on, _)| (*gb, on.to_string()))),
        format!(
            "{} (each within {})",
            listed(
                seed.iter()
                    .zip(&got)
                    .map(|((gb, _, _), v)| (*gb, format!("{v:.1}")))
            ),
            percent(FLAT_TOL, 0)
        ),
        Some(ok),
    ))
}

/// Rule: without HPB, each range within [`OFF_TOL`] of the seed's figure (1 GB is the FTL's
/// calibration point).
pub(super) fn off_curve(rows: &[IozoneRow]) -> Result<Claim, MissingRow> {
    let got = SEED_IOZONE
        .iter()
        .map(|(gb, _, _)| bw(rows, *gb, false))
        .collect::<Result<Vec<_>, _>>()?;
    let ok = SEED_IOZONE
        .iter()
        .zip(&got)
        .all(|((_, _, off), v)| (v - off).abs() <= OFF_TOL * off);
    Ok(Claim::new(
        SEED,
        "Without HPB, throughput falls as the range outgrows the device's map cache",
        listed(
            SEED_IOZONE
                .iter()
                .map(|(gb, _, off)| (*gb, off.to_string())),
        ),
        format!(
            "{} (each within {}; 1 GB is the FTL's calibration point)",
            listed(
                SEED_IOZONE
                    .iter()
                    .zip(&got)
                    .map(|((gb, _, _), v)| (*gb, format!("{v:.1}")))
            ),
            percent(OFF_TOL, 0)
        ),
        Some(ok),
    )
    .fitted_to(format!("{FITTED_FTL} (the 1 GB point of the five)")))
}

/// Rule: at 1 GB, HPB on and off within [`PARITY_TOL`] of each other (of off).
pub(super) fn parity(rows: &[IozoneRow]) -> Result<Claim, MissingRow> {
    let (on, off) = (bw(rows, 1, true)?, bw(rows, 1, false)?);
    Ok(Claim::new(
        SEED,
        "At 1 GB HPB brings nothing: the device's own map cache covers the range",
        "294.8 on vs 300.87 off",
        format!("{on:.1} on vs {off:.1} off"),
        Some((on - off).abs() <= PARITY_TOL * off),
    )
    .fitted_to(format!("{FITTED_FTL} (the HPB-off side)")))
}

/// Rule: without HPB, off(32 GB) / off(1 GB) within [`HALF_RANGE`].
pub(super) fn half(rows: &[IozoneRow]) -> Result<Claim, MissingRow> {
    let r = bw(rows, 32, false)? / bw(rows, 1, false)?;
    let (lo, hi) = HALF_RANGE;
    Ok(Claim::new(
        SEED,
        "Without HPB, 32 GB reaches about half the 1 GB throughput",
        format!("153.25 / 300.87 = {:.3}", 153.25 / 300.87),
        format!("{r:.3} (rule: {lo}-{hi})"),
        Some(lo <= r && r <= hi),
    )
    .fitted_to(format!("{FITTED_FTL} (the ratio's denominator)")))
}

/// Rule: with HPB, 32 GB is 2-10 % ([`DROP_RANGE_PCT`]) below 16 GB (seed 5.5 %): the host's
/// active-region budget no longer covers the range. The budget is fitted to this point.
pub(super) fn drop_32(rows: &[IozoneRow]) -> Result<Claim, MissingRow> {
    let (on16, on32) = (bw(rows, 16, true)?, bw(rows, 32, true)?);
    let drop = 100.0 * (on16 - on32) / on16;
    let seed_drop = 100.0 * (293.45 - 277.4) / 293.45;
    let (lo, hi) = DROP_RANGE_PCT;
    Ok(Claim::new(
        SEED,
        "With HPB, 32 GB dips a little: the host's active regions no longer cover the range",
        format!("277.4 vs 293.45 ({seed_drop:.1} % lower)"),
        format!(
            "{on32:.1} vs {on16:.1} ({drop:.1} % lower; the region budget is FITTED to this \
             point: a calibration check)"
        ),
        Some(lo <= drop && drop <= hi),
    )
    .fitted_to(FITTED_BUDGET))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn iozone(on: [f64; 5], off: [f64; 5]) -> Vec<IozoneRow> {
        SEED_IOZONE
            .iter()
            .enumerate()
            .flat_map(|(i, (gb, _, _))| {
                [
                    IozoneRow {
                        range_gb: *gb,
                        hpb: false,
                        bw_mbs: off[i],
                    },
                    IozoneRow {
                        range_gb: *gb,
                        hpb: true,
                        bw_mbs: on[i],
                    },
                ]
            })
            .collect()
    }

    /// The seed's own table: every iozone rule holds on it but parity (2.0 % apart, within
    /// 5 %: it holds too).
    pub(in crate::experiments::hpb) fn seed_rows() -> Vec<IozoneRow> {
        iozone(
            SEED_IOZONE.map(|(_, on, _)| on),
            SEED_IOZONE.map(|(_, _, off)| off),
        )
    }

    #[test]
    fn the_seed_s_own_table_passes_every_iozone_rule() {
        let rows = seed_rows();
        for claim in [flat, off_curve, parity, half, drop_32] {
            assert_eq!(claim(&rows).unwrap().ok, Some(true));
        }
        // 153.25 / 300.87 = 0.5094; 16.05 / 293.45 = 5.47 %.
        assert_eq!(half(&rows).unwrap().torpor_value, "0.509 (rule: 0.45-0.6)");
        assert_eq!(
            drop_32(&rows).unwrap().seed_value,
            "277.4 vs 293.45 (5.5 % lower)"
        );
        assert_eq!(
            flat(&rows).unwrap().seed_value,
            "1 GB 294.8, 4 GB 293.51, 8 GB 294.85, 16 GB 293.45"
        );
    }

    #[test]
    fn each_iozone_rule_fails_past_its_bound() {
        // 8 GB with HPB at 280: 14.85 below 294.85, more than 5 % (14.74): flat fails.
        let mut on = SEED_IOZONE.map(|(_, on, _)| on);
        let off = SEED_IOZONE.map(|(_, _, off)| off);
        on[2] = 280.0;
        let c = flat(&iozone(on, off)).unwrap();
        assert_eq!(c.ok, Some(false));
        assert_eq!(
            c.torpor_value,
            "1 GB 294.8, 4 GB 293.5, 8 GB 280.0, 16 GB 293.4 (each within 5%)"
        );
        // 4 GB off at 200: 20.65 above 179.35, more than 10 %: the off curve fails.
        let mut off2 = off;
        off2[1] = 200.0;
        assert_eq!(off_curve(&iozone(on, off2)).unwrap().ok, Some(false));
        // 1 GB: 280 on vs 300 off is 6.7 % apart: no parity.
        let (mut on3, mut off3) = (on, off);
        on3[0] = 280.0;
        off3[0] = 300.0;
        assert_eq!(parity(&iozone(on3, off3)).unwrap().ok, Some(false));
        // 32 GB off at 100 of 300.87: 0.33, not about half.
        let mut off4 = off;
        off4[4] = 100.0;
        assert_eq!(half(&iozone(on, off4)).unwrap().ok, Some(false));
        // 32 GB with HPB at 290 of 293.45: 1.2 % lower, less than 2 %.
        let mut on5 = on;
        on5[4] = 290.0;
        assert_eq!(drop_32(&iozone(on5, off)).unwrap().ok, Some(false));
    }
}
