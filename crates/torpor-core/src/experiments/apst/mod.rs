//! Seed 000: Linux commit ebd8a93aa4f5 ("nvme: extend and modify the APST configuration
//! algorithm"). Its message reports, for five drives and seven workflows, how the v5.14 table
//! builder changed the tables, average power and latency compared with the legacy one.
//!
//! The runs (the 5 x 7 x 2 grid, once at the central power figures and once at each end of
//! each power assumption's range) and the tables each builder produces come from the caller
//! ([`ApstInputs`]); here are the seed's figures, the measures derived from the runs, and one
//! rule per claim ([`rules`]), each a direction and a stated tolerance.

mod rules;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::claim::{robustness, Claim, End, JudgedClaim};
use super::row_lookup::{find, MissingRow};

/// The seed's number.
pub const SEED: &str = "000";

/// The drives of the commit message: preset id and the name the claims use.
pub const DRIVES: [(&str, &str); 5] = [
    (SN530, "WD SN530"),
    (INTEL_760P, "Intel 760p"),
    (PM991, "Samsung PM991"),
    (BC511, "SK hynix BC511"),
    (BG4, "Kioxia BG4"),
];
const SN530: &str = "wdc-pc-sn530-256gb";
const INTEL_760P: &str = "intel-760p-ssdpekkw256g8";
const PM991: &str = "samsung-pm991-mzvlq256hajd";
const BC511: &str = "skhynix-bc511-hfm256gdjtni";
const BG4: &str = "kioxia-bg4-kbg40zns256g";

/// The commit message's workflows.
pub const WORKFLOWS: std::ops::RangeInclusive<u32> = 1..=7;

/// "up to 62 % lower power on scenarios 4, 5 and 6" (the WD SN530).
pub const SEED_SN530_SAVING: f64 = 0.62;
/// How far above the seed's "up to" figure torpor's largest saving may go and still match it,
/// as a fraction (10 percentage points): past it the model overshoots the measurement.
pub const SN530_OVERSHOOT_POINTS: f64 = 0.10;
/// "up to 18 % more power in worst-case scenarios" (the Samsung PM991).
pub const SEED_PM991_INCREASE: f64 = 0.18;
/// Workflow 7's mean latency, legacy -> v5.14, ms: "0.6 ms -> 10 ms" (WD SN530) and
/// "2 ms -> 53 ms" (Intel 760p).
pub const SEED_W7_MS: [(&str, f64, f64); 2] = [(SN530, 0.6, 10.0), (INTEL_760P, 2.0, 53.0)];

/// How close to a seed's figure a value must be (relative) for the report to call it a match.
const MATCH_TOLERANCE: f64 = 0.05;

/// What the robustness runs vary (`robust_basis` in results.json).
pub const ROBUST_BASIS: &str = "each drive's PS0 idle and active power and the transition \
    power, each at both ends of its range, the others central";

/// One run's measures: a drive, a workflow, a table builder (the rows of `torpor reproduce
/// apst`'s results.json; the measures no rule reads are ignored).
#[derive(Clone, Debug, Deserialize)]
pub struct ApstRow {
    pub device: String,
    pub workflow: u32,
    pub algorithm: String,
    pub avg_power_mw: f64,
    pub lat_mean_us: f64,
}

/// The grid at one end of one power assumption's range.
#[derive(Clone, Debug, Deserialize)]
pub struct ApstEnd {
    /// The assumption and the end, as `hinges_on` quotes them.
    pub name: String,
    pub runs: Vec<ApstRow>,
}

/// What the table views (`torpor apst`'s JSON) hold that the rules read.
#[derive(Clone, Debug, Deserialize)]
pub struct TableView {
    pub table: Table,
    /// The states the drive reaches from PS0 as idle time grows, in order.
    pub idle_schedule: Vec<Reached>,
    pub device: DriveView,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Table {
    pub entries: Vec<Entry>,
}

/// One APST table entry: the idle transition power state and the idle time before it, ms.
#[derive(Clone, Debug, Deserialize)]
pub struct Entry {
    pub itps: u32,
    pub itpt_ms: u32,
}

/// A state of the idle chain and the idle time, ms, after which the drive is in it.
#[derive(Clone, Debug, Deserialize)]
pub struct Reached {
    pub ps: usize,
    pub reached_after_ms: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct DriveView {
    pub controller: ControllerView,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ControllerView {
    pub power_states: Vec<PowerStateView>,
}

/// A power state descriptor as far as the judgement reads it.
#[derive(Clone, Debug, Deserialize)]
pub struct PowerStateView {
    pub non_operational: bool,
    pub exit_lat_us: u32,
    pub idle_power_mw: Option<f64>,
}

/// Both builders' tables of one drive.
#[derive(Clone, Debug, Deserialize)]
pub struct DriveTables {
    pub legacy: TableView,
    #[serde(rename = "v5.14")]
    pub v5_14: TableView,
}

/// Everything `torpor reproduce apst` collects: the central grid, the grid at each end of each
/// power assumption's range (in the order `hinges_on` names them), and each drive's tables.
#[derive(Clone, Debug, Deserialize)]
pub struct ApstInputs {
    pub runs: Vec<ApstRow>,
    pub ends: Vec<ApstEnd>,
    pub tables: BTreeMap<String, DriveTables>,
}

/// A figure of one workflow.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WorkflowFigure {
    pub workflow: u32,
    pub value: f64,
}

/// Where a figure of torpor's stands against the seed's (within [`MATCH_TOLERANCE`]: a match).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Against {
    Above,
    Below,
    Matches,
}

impl Against {
    /// `value` against the seed's `seed` figure.
    pub fn of(value: f64, seed: f64) -> Self {
        if value > seed * (1.0 + MATCH_TOLERANCE) {
            Self::Above
        } else if value < seed * (1.0 - MATCH_TOLERANCE) {
            Self::Below
        } else {
            Self::Matches
        }
    }
}

/// The Intel 760p's workflow-7 mean latency under v5.14 against the seed's and against what
/// the declared exit latency of the first state of its idle chain allows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct W7Latency {
    pub mean_ms: f64,
    pub seed_ms: f64,
    /// The first state the v5.14 table sends the drive to.
    pub first_target_ps: usize,
    pub exit_latency_ms: f64,
    /// The declared exit latency is below half the seed's mean: the descriptor cannot account
    /// for the seed's figure.
    pub declared_too_short: bool,
}

/// v5.14 against legacy on one drive and workflow, as fractions; `None` where legacy's
/// figure is zero.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub power: Option<f64>,
    pub latency: Option<f64>,
}

/// The derived numbers the reports quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApstFigures {
    pub seed_sn530_saving: f64,
    pub seed_pm991_increase: f64,
    /// The smallest and the largest of the SN530's savings under v5.14 on workflows 4-6
    /// (fractions).
    pub sn530_smallest_saving: f64,
    pub sn530_largest_saving: f64,
    /// The largest saving against the seed's "up to 62 %".
    pub sn530_against_seed: Against,
    /// The PM991's workflow with the largest power change under v5.14, and that change.
    pub pm991_worst: WorkflowFigure,
    pub pm991_against_seed: Against,
    /// `None` when the Intel 760p's v5.14 table makes no transition.
    pub intel_w7: Option<W7Latency>,
    /// The drives (names) none of whose operational states reports idle power (IDLP).
    pub drives_without_idlp: Vec<String>,
    /// Per drive id, each builder's idle chain in words ("PS3 after 100 ms, ...").
    pub schedules: BTreeMap<String, BTreeMap<String, String>>,
    /// Per drive id and workflow (as text, JSON's keys), v5.14 against legacy.
    pub changes: BTreeMap<String, BTreeMap<String, Change>>,
}

/// The claims, with their robustness, and the figures the reports quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApstJudgement {
    pub claims: Vec<JudgedClaim>,
    pub figures: ApstFigures,
}

/// Judges seed 000's claims on `inputs`: every claim at the central grid, again at each end,
/// and the verdict's robustness across them.
pub fn judge(inputs: ApstInputs) -> Result<ApstJudgement, MissingRow> {
    let tables = Tables(&inputs.tables);
    let central = rules::claims(&Grid(&inputs.runs), &tables)?;
    let ends = inputs
        .ends
        .iter()
        .map(|end| {
            let claims = rules::claims(&Grid(&end.runs), &tables)?;
            Ok((end.name.clone(), claims.into_iter().map(Some).collect()))
        })
        .collect::<Result<Vec<End>, MissingRow>>()?;
    Ok(ApstJudgement {
        claims: robustness(central, &ends, ROBUST_BASIS),
        figures: figures(&Grid(&inputs.runs), &tables)?,
    })
}

fn figures(grid: &Grid, tables: &Tables) -> Result<ApstFigures, MissingRow> {
    let savings = sn530_savings(grid)?;
    let values = savings.iter().map(|s| s.value);
    let smallest = values.clone().fold(f64::INFINITY, f64::min);
    let largest = values.fold(f64::NEG_INFINITY, f64::max);
    let pm991_worst = pm991_worst_increase(grid)?;
    let mut schedules = BTreeMap::new();
    let mut changes = BTreeMap::new();
    for (device, _) in DRIVES {
        let t = tables.drive(device)?;
        schedules.insert(
            device.to_owned(),
            BTreeMap::from([
                ("legacy".to_owned(), schedule_text(&t.legacy)),
                ("v5.14".to_owned(), schedule_text(&t.v5_14)),
            ]),
        );
        let mut per_workflow = BTreeMap::new();
        for w in WORKFLOWS {
            let change = Change {
                power: grid.change(device, w, |r| r.avg_power_mw)?,
                latency: grid.change(device, w, |r| r.lat_mean_us)?,
            };
            per_workflow.insert(w.to_string(), change);
        }
        changes.insert(device.to_owned(), per_workflow);
    }
    Ok(ApstFigures {
        seed_sn530_saving: SEED_SN530_SAVING,
        seed_pm991_increase: SEED_PM991_INCREASE,
        sn530_smallest_saving: smallest,
        sn530_largest_saving: largest,
        sn530_against_seed: Against::of(largest, SEED_SN530_SAVING),
        pm991_against_seed: Against::of(pm991_worst.value, SEED_PM991_INCREASE),
        pm991_worst,
        intel_w7: intel_w7(grid, tables)?,
        drives_without_idlp: drives_without_idlp(tables)?,
        schedules,
        changes,
    })
}

fn intel_w7(grid: &Grid, tables: &Tables) -> Result<Option<W7Latency>, MissingRow> {
    let (device, _, seed_ms) = SEED_W7_MS[1];
    let mean_ms = grid.row(device, 7, "v5.14")?.lat_mean_us / 1000.0;
    let Some((ps, exit_latency_ms)) = first_target_exit_ms(&tables.drive(device)?.v5_14)? else {
        return Ok(None);
    };
    Ok(Some(W7Latency {
        mean_ms,
        seed_ms,
        first_target_ps: ps,
        exit_latency_ms,
        declared_too_short: declared_exit_too_short(exit_latency_ms, seed_ms),
    }))
}

/// Rule: a declared exit latency below half the seed's mean cannot produce that mean (every
/// IO would have to wait more than twice the declared wake-up).
fn declared_exit_too_short(exit_latency_ms: f64, seed_mean_ms: f64) -> bool {
    exit_latency_ms < seed_mean_ms / 2.0
}

/// The first state of `t`'s idle chain and its declared exit latency, ms; `None` when the
/// table makes no transition.
fn first_target_exit_ms(t: &TableView) -> Result<Option<(usize, f64)>, MissingRow> {
    let Some(first) = t.idle_schedule.first() else {
        return Ok(None);
    };
    let state = t
        .device
        .controller
        .power_states
        .get(first.ps)
        .ok_or_else(|| MissingRow::new(format!("power state PS{} in a table's drive", first.ps)))?;
    Ok(Some((first.ps, f64::from(state.exit_lat_us) / 1000.0)))
}

fn drives_without_idlp(tables: &Tables) -> Result<Vec<String>, MissingRow> {
    let mut out = Vec::new();
    for (device, name) in DRIVES {
        let states = &tables.drive(device)?.v5_14.device.controller.power_states;
        if states
            .iter()
            .filter(|s| !s.non_operational)
            .all(|s| s.idle_power_mw.is_none())
        {
            out.push(name.to_owned());
        }
    }
    Ok(out)
}

/// The SN530's power saving under v5.14 on workflows 4-6, as fractions.
fn sn530_savings(grid: &Grid) -> Result<Vec<WorkflowFigure>, MissingRow> {
    (4..=6)
        .map(|w| {
            let change = grid.relative_change(SN530, w, |r| r.avg_power_mw)?;
            Ok(WorkflowFigure {
                workflow: w,
                value: -change,
            })
        })
        .collect()
}

/// The PM991's workflow with the largest power change under v5.14 (the first on a tie), and
/// that change.
fn pm991_worst_increase(grid: &Grid) -> Result<WorkflowFigure, MissingRow> {
    let mut worst: Option<WorkflowFigure> = None;
    for w in WORKFLOWS {
        let value = grid.relative_change(PM991, w, |r| r.avg_power_mw)?;
        if worst.is_none_or(|x| value > x.value) {
            worst = Some(WorkflowFigure { workflow: w, value });
        }
    }
    worst.ok_or_else(|| MissingRow::new("workflow"))
}

/// A drive's name as the claims write it.
fn name(device: &str) -> &'static str {
    DRIVES
        .iter()
        .find(|(id, _)| *id == device)
        .map_or("?", |(_, name)| name)
}

/// `(state, ms of idle after which it is reached)` in words, from PS0 along the table's chain.
fn schedule_text(t: &TableView) -> String {
    if t.idle_schedule.is_empty() {
        return "no transitions".to_owned();
    }
    t.idle_schedule
        .iter()
        .map(|s| {
            format!(
                "PS{} after {} ms",
                s.ps,
                super::format::g(s.reached_after_ms)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows of one grid, found by drive, workflow and builder.
struct Grid<'a>(&'a [ApstRow]);

impl Grid<'_> {
    fn row(&self, device: &str, workflow: u32, algorithm: &str) -> Result<&ApstRow, MissingRow> {
        find(
            self.0,
            |r| r.device == device && r.workflow == workflow && r.algorithm == algorithm,
            || format!("run of {device} workflow {workflow} {algorithm}"),
        )
    }

    /// v5.14 against legacy on `device` and `workflow`, as a fraction of legacy's `measure`.
    fn relative_change(
        &self,
        device: &str,
        workflow: u32,
        measure: impl Fn(&ApstRow) -> f64,
    ) -> Result<f64, MissingRow> {
        let old = measure(self.row(device, workflow, "legacy")?);
        let new = measure(self.row(device, workflow, "v5.14")?);
        Ok((new - old) / old)
    }

    /// [`Self::relative_change`], `None` where legacy's figure is zero.
    fn change(
        &self,
        device: &str,
        workflow: u32,
        measure: impl Fn(&ApstRow) -> f64,
    ) -> Result<Option<f64>, MissingRow> {
        let old = measure(self.row(device, workflow, "legacy")?);
        if old == 0.0 {
            return Ok(None);
        }
        self.relative_change(device, workflow, measure).map(Some)
    }
}

/// Each drive's tables, found by drive.
struct Tables<'a>(&'a BTreeMap<String, DriveTables>);

impl Tables<'_> {
    fn drive(&self, device: &str) -> Result<&DriveTables, MissingRow> {
        self.0
            .get(device)
            .ok_or_else(|| MissingRow::new(format!("tables of {device}")))
    }
}

fn claim(claim: impl Into<String>, seed: impl Into<String>, torpor: String, ok: bool) -> Claim {
    Claim::new(SEED, claim, seed, torpor, Some(ok))
}
