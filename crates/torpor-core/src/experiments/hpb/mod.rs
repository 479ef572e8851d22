//! Seed 003's claims (Daejun Park, Samsung, "[PATCH v14 0/3] scsi: ufs: Add Host Performance
//! Booster Support", linux-scsi, 2020-12; the iozone table of 2020-12-17): iozone's random
//! reads over five ranges with HPB off and on, and the start-up time of 36 apps over six
//! cycles. The runs are the Python package's (`torpor reproduce hpb`): the iozone rows, the
//! synthetic launches' storage time per cycle and the warm-up sweep's gains come here and go
//! back as verdicts (robustness not assessed), with the warm-up curves and the seed's tables
//! the reports quote.

mod iozone;
mod launch;

use serde::{Deserialize, Serialize};

pub use iozone::IozoneRow;
pub use launch::{half_gain_cycle, seed_gains, warmup_curve, LaunchRow, WarmupRow};

use super::claim::{not_assessed, Claim, JudgedClaim};
use super::row_lookup::MissingRow;
use launch::{storage, SEED_LAUNCH};

const SEED: &str = "003";

/// What the Python side collects: the iozone rows, the launch rows, the warm-up sweep's rows,
/// and the launches' span in regions (the host map cache's working set).
#[derive(Clone, Debug, Deserialize)]
pub struct HpbInputs {
    pub runs: Vec<IozoneRow>,
    pub launch: Vec<LaunchRow>,
    pub warmup: Vec<WarmupRow>,
    pub working_set_regions: i64,
}

/// One row of the seed's iozone table, MB/s.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedIozone {
    pub range_gb: u32,
    pub hpb_on_mbs: f64,
    pub hpb_off_mbs: f64,
}

/// One of the seed's start-up cycles, s, and HPB's change (HPB - baseline).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedLaunch {
    pub cycle: u32,
    pub baseline_s: f64,
    pub hpb_s: f64,
    pub hpb_minus_baseline_s: f64,
}

/// One lever value's warm-up: HPB's gain per cycle and the cycle it reaches half its plateau.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WarmupCurve {
    pub lever: String,
    pub value: i64,
    pub gains_s: Vec<f64>,
    pub half_gain_cycle: usize,
}

/// torpor's launches: storage time with HPB minus without, per cycle, s.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchDiff {
    pub cycle: u32,
    pub hpb_minus_off_s: f64,
}

/// The numbers the reports quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HpbFigures {
    pub seed_iozone: Vec<SeedIozone>,
    pub seed_launch: Vec<SeedLaunch>,
    /// The seed's gain per cycle (baseline - HPB, to 0.1 s) and where it reaches half its
    /// plateau.
    pub seed_gains_s: Vec<f64>,
    pub seed_half_gain_cycle: usize,
    pub launch: Vec<LaunchDiff>,
    /// Each lever value of the sweep, in the rows' order.
    pub warmup: Vec<WarmupCurve>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HpbJudgement {
    pub claims: Vec<JudgedClaim>,
    pub figures: HpbFigures,
}

/// Why the claims carry no robustness (`robust_basis`).
const ROBUST_BASIS: &str = "not assessed: the FTL's estimates (map cache, controller time, \
    read units) have ranges in the preset, but the experiment runs them at their central values \
    only; the warm-up levers are swept for the pace claim itself, not as ends of a range";

/// The claims (robustness not assessed) and the figures.
pub fn judge(inputs: HpbInputs) -> Result<HpbJudgement, MissingRow> {
    let claims = vec![
        iozone::flat(&inputs.runs)?,
        iozone::off_curve(&inputs.runs)?,
        iozone::parity(&inputs.runs)?,
        iozone::half(&inputs.runs)?,
        iozone::drop_32(&inputs.runs)?,
        launch::launch_warms(&inputs.launch)?,
        launch::warmup_driver(&inputs.warmup, inputs.working_set_regions)?,
        launch_seconds(),
    ];
    Ok(HpbJudgement {
        claims: not_assessed(claims, ROBUST_BASIS),
        figures: figures(&inputs.launch, &inputs.warmup)?,
    })
}

/// Not checkable: launch time is mostly CPU and app work.
fn launch_seconds() -> Claim {
    Claim::new(
        SEED,
        "Start-up time of 36 apps per cycle: 272.4 s falling to 231.9 s (baseline), 264.9 s to \
         212.6 s (HPB)",
        "kernel 4.4, UFS 2.1 64 GB, 8 GB RAM",
        "not checkable: launch time is mostly CPU and app work, and torpor simulates only the \
         storage; the launches' IO is synthetic",
        None,
    )
}

fn figures(launch: &[LaunchRow], warmup: &[WarmupRow]) -> Result<HpbFigures, MissingRow> {
    let mut cycles: Vec<u32> = launch.iter().map(|r| r.cycle).collect();
    cycles.sort_unstable();
    cycles.dedup();
    let launch = cycles
        .into_iter()
        .map(|c| {
            Ok(LaunchDiff {
                cycle: c,
                hpb_minus_off_s: storage(launch, c, true)? - storage(launch, c, false)?,
            })
        })
        .collect::<Result<Vec<_>, MissingRow>>()?;
    let mut settings: Vec<(&str, i64)> = vec![];
    for r in warmup {
        if !settings.contains(&(r.lever.as_str(), r.value)) {
            settings.push((r.lever.as_str(), r.value));
        }
    }
    let warmup = settings
        .into_iter()
        .map(|(lever, value)| {
            let gains_s = warmup_curve(warmup, lever, value);
            WarmupCurve {
                lever: lever.to_owned(),
                value,
                half_gain_cycle: half_gain_cycle(&gains_s),
                gains_s,
            }
        })
        .collect();
    let seed_gains_s = seed_gains();
    Ok(HpbFigures {
        seed_iozone: iozone::SEED_IOZONE
            .iter()
            .map(|&(range_gb, hpb_on_mbs, hpb_off_mbs)| SeedIozone {
                range_gb,
                hpb_on_mbs,
                hpb_off_mbs,
            })
            .collect(),
        seed_launch: (1..)
            .zip(SEED_LAUNCH)
            .map(|(cycle, (baseline_s, hpb_s))| SeedLaunch {
                cycle,
                baseline_s,
                hpb_s,
                hpb_minus_baseline_s: hpb_s - baseline_s,
            })
            .collect(),
        seed_half_gain_cycle: half_gain_cycle(&seed_gains_s),
        seed_gains_s,
        launch,
        warmup,
    })
}

#[cfg(test)]
mod tests {
    use super::iozone::tests::seed_rows;
    use super::launch::tests::{launch, sweep};
    use super::*;

    #[test]
    fn figures_carry_the_curves_and_the_seed_s_tables() {
        let inputs = HpbInputs {
            runs: seed_rows(),
            launch: launch([10.0, 10.0, 10.0], [9.0, 8.0, 7.0]),
            warmup: sweep(0.3),
            working_set_regions: 1248,
        };
        let judged = judge(inputs).unwrap();
        assert_eq!(judged.claims.len(), 8);
        assert!(judged.claims.iter().all(|c| c.robust.is_none()));
        let f = judged.figures;
        assert_eq!(f.warmup.len(), 8);
        assert_eq!(f.warmup[2].gains_s, vec![0.0, 2.0, 6.0, 10.0, 10.0, 10.0]);
        assert_eq!(f.warmup[2].half_gain_cycle, 3);
        assert_eq!(f.launch[2].hpb_minus_off_s, -3.0);
        // The seed's cycle 6: 212.6 - 231.9 = -19.3.
        assert_eq!(
            format!("{:+.1}", f.seed_launch[5].hpb_minus_baseline_s),
            "-19.3"
        );
        assert_eq!(f.seed_half_gain_cycle, 3);
        assert_eq!(f.seed_iozone[4].hpb_on_mbs, 277.4);
    }
}
