//! Seed 002: teo's util-awareness on a Pixel 6, against menu and teo (Kajetan Puchalski,
//! "[v6,0/2] cpuidle: teo: Introduce util-awareness", 2023-01-05), and the cluster-state cost
//! behind its revert in v6.11 (spec-cpu.md §3.5).
//!
//! The caller runs stand-ins for the seed's workloads under each governor and the revert's
//! HiKey960 case, and hands their rows here ([`TeoInputs`]). The stand-ins' shapes are
//! guesses, so the rules test orderings and signs, with bounds wide enough for a guessed
//! shape; robustness is not assessed (no stated range to rerun at).

mod rules;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::claim::{not_assessed, JudgedClaim};
use super::row_lookup::{find, MissingRow};

/// The seed's number.
pub const SEED: &str = "002";

/// The stand-ins' workloads, in the order the claims list them (the Python side's
/// `teo.WORKLOADS` runs them).
pub const WORKLOADS: [&str; 4] = ["geekbench", "pcmark-web", "jankbench", "speedometer"];

/// The governors the report's tables show, in order (as `[policy.cpuidle] governor` names
/// them).
pub const GOVERNORS: [&str; 5] = ["menu", "teo@5.13", "teo-util", "teo", "oracle"];

/// The workloads the seed calls latency-sensitive (its Geekbench; PCMark's wake-up latency is
/// the other table where util-awareness halves latency).
pub const LATENCY_SENSITIVE: [&str; 2] = ["geekbench", "pcmark-web"];

/// The seed's figures (teo_util_v4, the version merged), per workload: too deep % and too
/// shallow %, each (menu, teo, teo-util).
pub const SEED_TOO_DEEP: [(&str, [f64; 3]); 3] = [
    ("geekbench", [14.994, 9.649, 4.02]),
    ("pcmark-web", [24.814, 11.65, 3.662]),
    ("jankbench", [26.00, 11.00, 2.54]),
];
pub const SEED_TOO_SHALLOW: [(&str, [f64; 3]); 3] = [
    ("geekbench", [2.497, 5.963, 14.598]),
    ("pcmark-web", [3.101, 8.578, 18.692]),
    ("jankbench", [4.74, 11.89, 21.93]),
];
/// teo_util_v4's total power against menu (perc_diff), each workload's power table.
pub const SEED_POWER_DIFF: [(&str, f64); 4] = [
    ("geekbench", 6.7),
    ("pcmark-web", 2.71),
    ("jankbench", -16.08),
    ("speedometer", 3.05),
];
/// teo_util_v4's score against menu, percent, higher is better: Geekbench 5's multicore score,
/// PCMark's PcmaWebV2Score, Speedometer 2's score, and Jankbench's mean frame duration
/// (13.9 -> 12.6 ms, -9.0 %, as an improvement of 9.0 %).
pub const SEED_SCORE_GAIN: [(&str, f64); 4] = [
    ("geekbench", 1.36),
    ("pcmark-web", 0.15),
    ("jankbench", 9.0),
    ("speedometer", 1.83),
];
/// The seed's phone under menu (its Jankbench tables: mean_duration and jank_perc of
/// menu_60hz): the mean frame, ms, and the jank, % of frames.
pub const SEED_FRAME_MS: f64 = 13.9;
pub const SEED_JANK_PCT: f64 = 1.5;

/// How far a stand-in may exaggerate a seed figure before its agreement stops counting: the
/// shapes are guesses, so a sign and a magnitude up to this many times the seed's pass.
pub const EXAGGERATION: f64 = 3.0;

/// Why the claims carry no robustness (`robust_basis`).
pub const ROBUST_BASIS: &str = "not assessed: the stand-ins' shapes are torpor's guesses with \
    no stated range to rerun at; the rules test orderings and signs, with bounds wide enough \
    for a guessed shape";

/// One workload under one governor: the CPUs' measures (the `runs` of results.json) and each
/// task's mean wake-up latency.
#[derive(Clone, Debug, Deserialize)]
pub struct TeoRow {
    pub workload: String,
    pub governor: String,
    pub too_deep_pct: f64,
    pub too_shallow_pct: f64,
    pub avg_power_mw: f64,
    pub wakeup_latency_gmean_us: f64,
    pub work_ms_per_s: f64,
    /// Jankbench's mean frame, ms (`None` on the other workloads).
    pub frame_ms: Option<f64>,
    #[serde(rename = "_tasks", default)]
    pub tasks: Vec<TaskLatency>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TaskLatency {
    pub task: String,
    pub latency_avg_us: f64,
}

/// The revert case under one governor: the cluster state's share of the run on the lightly
/// busy CPU0, %, and the cluster's power.
#[derive(Clone, Debug, Deserialize)]
pub struct RevertRow {
    pub governor: String,
    pub cluster_state_pct_cpu0: f64,
    pub avg_power_mw: f64,
}

/// Everything `torpor reproduce teo` collects, and the two numbers of its scenarios the
/// Jankbench figures read.
#[derive(Clone, Debug, Deserialize)]
pub struct TeoInputs {
    pub runs: Vec<TeoRow>,
    pub revert: Vec<RevertRow>,
    /// The vsync period, us, and the simulated time per run, s.
    pub vsync_us: u64,
    pub duration_s: u64,
}

/// perc_diff against menu of one workload's power, score proxy (work per second; Jankbench's
/// mean frame) and each task's mean wake-up latency, per governor; `None` where menu's figure
/// is zero.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgainstMenu {
    pub power: BTreeMap<String, Option<f64>>,
    pub score: BTreeMap<String, Option<f64>>,
    /// Per task, per governor.
    pub latency: BTreeMap<String, BTreeMap<String, Option<f64>>>,
}

/// The derived numbers the reports quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TeoFigures {
    /// Per workload, each governor against menu.
    pub against_menu: BTreeMap<String, AgainstMenu>,
    /// The workloads on which teo-util draws more power than menu, in order.
    pub teo_util_draws_more: Vec<String>,
    /// Jankbench under menu: vsyncs per frame, and the vsyncs of a run.
    pub menu_frame_vsyncs: f64,
    pub run_vsyncs: u64,
    pub seed_frame_gain_pct: f64,
    pub seed_frame_ms: f64,
    pub seed_jank_pct: f64,
}

/// The claims (robustness not assessed) and the figures the reports quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TeoJudgement {
    pub claims: Vec<JudgedClaim>,
    pub figures: TeoFigures,
}

/// Judges seed 002's claims and the revert's on `inputs`.
pub fn judge(inputs: TeoInputs) -> Result<TeoJudgement, MissingRow> {
    let runs = Runs(&inputs.runs);
    let mut claims = rules::claims(&runs)?;
    claims.push(rules::revert(&inputs.revert)?);
    Ok(TeoJudgement {
        claims: not_assessed(claims, ROBUST_BASIS),
        figures: figures(&runs, &inputs)?,
    })
}

fn figures(runs: &Runs, inputs: &TeoInputs) -> Result<TeoFigures, MissingRow> {
    let mut against_menu = BTreeMap::new();
    let mut teo_util_draws_more = Vec::new();
    for w in WORKLOADS {
        let menu = runs.row(w, "menu")?;
        if runs.row(w, "teo-util")?.avg_power_mw > menu.avg_power_mw {
            teo_util_draws_more.push(w.to_owned());
        }
        let mut table = AgainstMenu {
            power: BTreeMap::new(),
            score: BTreeMap::new(),
            latency: BTreeMap::new(),
        };
        for gov in GOVERNORS {
            let r = runs.row(w, gov)?;
            let score = if w == JANKBENCH {
                perc_diff(frame_ms(r)?, frame_ms(menu)?)
            } else {
                perc_diff(r.work_ms_per_s, menu.work_ms_per_s)
            };
            table
                .power
                .insert(gov.to_owned(), perc_diff(r.avg_power_mw, menu.avg_power_mw));
            table.score.insert(gov.to_owned(), score);
            for base in &menu.tasks {
                let got = find(
                    &r.tasks,
                    |t| t.task == base.task,
                    || format!("task {} under {gov}", base.task),
                )?;
                table.latency.entry(base.task.clone()).or_default().insert(
                    gov.to_owned(),
                    perc_diff(got.latency_avg_us, base.latency_avg_us),
                );
            }
        }
        against_menu.insert(w.to_owned(), table);
    }
    let vsync_us = inputs.vsync_us as f64;
    Ok(TeoFigures {
        against_menu,
        teo_util_draws_more,
        menu_frame_vsyncs: 1000.0 * frame_ms(runs.row(JANKBENCH, "menu")?)? / vsync_us,
        run_vsyncs: (1e6 * inputs.duration_s as f64 / vsync_us).round_ties_even() as u64,
        seed_frame_gain_pct: seed(&SEED_SCORE_GAIN, JANKBENCH)?,
        seed_frame_ms: SEED_FRAME_MS,
        seed_jank_pct: SEED_JANK_PCT,
    })
}

const JANKBENCH: &str = "jankbench";

/// The seed's perc_diff: `value` against `base` (menu's), percent; `None` when `base` is 0.
pub fn perc_diff(value: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| 100.0 * (value - base) / base)
}

fn frame_ms(r: &TeoRow) -> Result<f64, MissingRow> {
    r.frame_ms
        .ok_or_else(|| MissingRow::new(format!("frame_ms of {} under {}", r.workload, r.governor)))
}

/// The figure of `workload` in one of the seed's per-workload lists.
fn seed<T: Copy>(figures: &[(&str, T)], workload: &str) -> Result<T, MissingRow> {
    figures
        .iter()
        .find(|(w, _)| *w == workload)
        .map(|(_, f)| *f)
        .ok_or_else(|| MissingRow::new(format!("seed figure for {workload}")))
}

/// The rows, found by workload and governor.
struct Runs<'a>(&'a [TeoRow]);

impl Runs<'_> {
    fn row(&self, workload: &str, governor: &str) -> Result<&TeoRow, MissingRow> {
        find(
            self.0,
            |r| r.workload == workload && r.governor == governor,
            || format!("run of {workload} under {governor}"),
        )
    }
}
