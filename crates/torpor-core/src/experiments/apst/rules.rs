//! Seed 000's claims, one function each; the rule is in its doc comment.

use super::{
    claim, declared_exit_too_short, first_target_exit_ms, name, pm991_worst_increase,
    schedule_text, sn530_savings, Grid, TableView, Tables, BC511, BG4, DRIVES, INTEL_760P, PM991,
    SEED, SEED_PM991_INCREASE, SEED_SN530_SAVING, SEED_W7_MS, SN530, SN530_OVERSHOOT_POINTS,
    WORKFLOWS,
};
use crate::experiments::claim::Claim;
use crate::experiments::format::{g, percent, signed_percent};
use crate::experiments::row_lookup::MissingRow;

/// Every claim, in the report's order.
pub(super) fn claims(grid: &Grid, tables: &Tables) -> Result<Vec<Claim>, MissingRow> {
    let mut out = vec![
        tables_identical(tables)?,
        quicker(tables, SN530)?,
        quicker(tables, INTEL_760P)?,
        deeper_similar_time(tables)?,
        deeper_later(tables)?,
        sn530_large_savings(grid)?,
        kioxia_flat(grid)?,
        pm991_increase(grid)?,
        sustained_unchanged(grid)?,
    ];
    for (device, old_ms, new_ms) in SEED_W7_MS {
        out.extend(w7_latency(grid, tables, device, old_ms, new_ms)?);
    }
    out.push(others_milder(grid)?);
    out.push(background_ops());
    Ok(out)
}

fn both<'a>(
    tables: &'a Tables,
    device: &str,
) -> Result<(&'a TableView, &'a TableView), MissingRow> {
    let t = tables.drive(device)?;
    Ok((&t.legacy, &t.v5_14))
}

fn chains_text(old: &TableView, new: &TableView) -> String {
    format!(
        "legacy: {}; v5.14: {}",
        schedule_text(old),
        schedule_text(new)
    )
}

/// Kioxia BG4, "virtually identical" tables. Rule: the same idle transition state (ITPS) in
/// every entry (as many entries in both), and each pair of non-zero idle times (ITPT) within a
/// factor 1.25.
pub(super) fn tables_identical(tables: &Tables) -> Result<Claim, MissingRow> {
    let (old, new) = both(tables, BG4)?;
    let pairs = || old.table.entries.iter().zip(&new.table.entries);
    let same_targets = old.table.entries.len() == new.table.entries.len()
        && pairs().all(|(a, b)| a.itps == b.itps);
    let within = pairs()
        .filter(|(a, b)| a.itpt_ms != 0 && b.itpt_ms != 0)
        .all(|(a, b)| {
            let (hi, lo) = (a.itpt_ms.max(b.itpt_ms), a.itpt_ms.min(b.itpt_ms));
            f64::from(hi) / f64::from(lo) <= 1.25
        });
    Ok(claim(
        "Kioxia BG4: legacy and v5.14 tables are virtually identical \
         (rule: same targets, ITPTs within x1.25)",
        "virtually identical",
        chains_text(old, new),
        same_targets && within,
    ))
}

/// "much quicker transitions to PS3 and PS4". The claim is about the tables, so the rule reads
/// the tables: PS0's idle time before its first transition (ITPT) under v5.14 is non-zero and
/// at most half legacy's, and the deepest state of the chain is as deep and reached sooner.
pub(super) fn quicker(tables: &Tables, device: &str) -> Result<Claim, MissingRow> {
    let (old, new) = both(tables, device)?;
    let first_itpt = |t: &TableView| {
        t.table
            .entries
            .first()
            .map(|e| e.itpt_ms)
            .ok_or_else(|| MissingRow::new(format!("table entries of {device}")))
    };
    let (old_itpt, new_itpt) = (first_itpt(old)?, first_itpt(new)?);
    let (old_itpt_f, new_itpt_f) = (f64::from(old_itpt), f64::from(new_itpt));
    let deepest_sooner = match (old.idle_schedule.last(), new.idle_schedule.last()) {
        (Some(o), Some(n)) => n.ps >= o.ps && n.reached_after_ms < o.reached_after_ms,
        _ => false,
    };
    let ok = new_itpt > 0 && new_itpt_f <= 0.5 * old_itpt_f && deepest_sooner;
    let ratio = if old_itpt == 0 {
        f64::INFINITY
    } else {
        new_itpt_f / old_itpt_f
    };
    Ok(claim(
        format!(
            "{}: v5.14 makes the transitions to PS3/PS4 much quicker \
             (rule: PS0's ITPT at most half legacy's, deepest state reached sooner)",
            name(device)
        ),
        "much quicker transitions to PS3 and PS4",
        format!(
            "PS0 ITPT {old_itpt} -> {new_itpt} ms (x{ratio:.2}, rule <= x0.50: {}); {}",
            margin(0.5 - ratio),
            chains_text(old, new)
        ),
        ok,
    ))
}

/// How far a value is inside (+) or outside (-) its rule's bound, in words.
fn margin(slack: f64) -> String {
    if slack == 0.0 {
        return "exactly at the bound".to_owned();
    }
    let side = if slack > 0.0 { "inside" } else { "beyond" };
    format!("{:.2} {side} the bound", slack.abs())
}

/// SK hynix BC511, "PS4 rather than PS3 after a similar amount of time". Rule: the chain's
/// first target is PS3 under legacy and PS4 under v5.14, reached after idle times within a
/// factor 2 of each other.
pub(super) fn deeper_similar_time(tables: &Tables) -> Result<Claim, MissingRow> {
    let (old, new) = both(tables, BC511)?;
    let ok = match (old.idle_schedule.first(), new.idle_schedule.first()) {
        (Some(o), Some(n)) => {
            let (a, b) = (o.reached_after_ms, n.reached_after_ms);
            o.ps == 3 && n.ps == 4 && a.max(b) <= 2.0 * a.min(b)
        }
        _ => false,
    };
    Ok(claim(
        "SK hynix BC511: PS4 rather than PS3 after a similar idle time \
         (rule: first target PS3 -> PS4, idle times within x2)",
        "PS4 rather than PS3 after a similar amount of time",
        chains_text(old, new),
        ok,
    ))
}

/// Samsung PM991, "initial transition later, but to a lower power state". Rule: v5.14's first
/// transition goes to a deeper state than legacy's and happens strictly later.
pub(super) fn deeper_later(tables: &Tables) -> Result<Claim, MissingRow> {
    let (old, new) = both(tables, PM991)?;
    let ok = match (old.idle_schedule.first(), new.idle_schedule.first()) {
        (Some(o), Some(n)) => n.ps > o.ps && n.reached_after_ms > o.reached_after_ms,
        _ => false,
    };
    Ok(claim(
        "Samsung PM991: the first transition happens after a longer idle time but to a \
         lower power state (rule: deeper first target, later)",
        "initial transition later, but to a lower power state",
        chains_text(old, new),
        ok,
    ))
}

/// WD SN530, "up to 62 % lower power on scenarios 4, 5 and 6". Rule, bounded on both sides:
/// at least 30 % lower average power on each of workflows 4-6, and the largest saving at most
/// [`SN530_OVERSHOOT_POINTS`] above the seed's figure (beyond it the model overshoots).
pub(super) fn sn530_large_savings(grid: &Grid) -> Result<Claim, MissingRow> {
    let savings = sn530_savings(grid)?;
    let ceiling = SEED_SN530_SAVING + SN530_OVERSHOOT_POINTS;
    let largest = savings
        .iter()
        .map(|s| s.value)
        .fold(f64::NEG_INFINITY, f64::max);
    let low: Vec<String> = savings
        .iter()
        .filter(|s| s.value < 0.30)
        .map(|s| s.workflow.to_string())
        .collect();
    let verdict = if !low.is_empty() {
        format!("; workflow(s) {} below 30 %", low.join(", "))
    } else if largest > ceiling {
        format!(
            "; largest {} overshoots the seed's {} by more than {:.0} points",
            percent(largest, 0),
            percent(SEED_SN530_SAVING, 0),
            SN530_OVERSHOOT_POINTS * 100.0
        )
    } else {
        String::new()
    };
    let each: Vec<String> = savings
        .iter()
        .map(|s| format!("workflow {}: {} lower", s.workflow, percent(s.value, 0)))
        .collect();
    Ok(claim(
        format!(
            "WD SN530: large power savings on workflows 4-6 (rule: >= 30 % lower average power \
             on each, the largest at most {})",
            percent(ceiling, 0)
        ),
        format!(
            "up to {} lower power on scenarios 4, 5 and 6",
            percent(SEED_SN530_SAVING, 0)
        ),
        each.join(", ") + &verdict,
        low.is_empty() && largest <= ceiling,
    ))
}

/// Kioxia BG4, "little or no change". Rule: |change in average power| <= 10 % on every
/// workflow.
pub(super) fn kioxia_flat(grid: &Grid) -> Result<Claim, MissingRow> {
    let changes = WORKFLOWS
        .map(|w| grid.relative_change(BG4, w, |r| r.avg_power_mw))
        .collect::<Result<Vec<f64>, MissingRow>>()?;
    // The largest in size, the first on a tie.
    let worst = changes
        .iter()
        .copied()
        .reduce(|a, b| if b.abs() > a.abs() { b } else { a })
        .unwrap_or(0.0);
    let each: Vec<String> = changes.iter().map(|c| signed_percent(*c, 1)).collect();
    Ok(claim(
        "Kioxia BG4: little or no change in average power on all workflows \
         (rule: |change| <= 10 % on each)",
        "little or no change",
        format!(
            "largest change {} (workflows 1-7: {})",
            signed_percent(worst, 1),
            each.join(", ")
        ),
        changes.iter().all(|c| c.abs() <= 0.10),
    ))
}

/// Samsung PM991, "up to 18 % more power in worst-case scenarios". Rule: the worst workflow
/// shows a power increase, above 0 and at most twice the seed's figure.
pub(super) fn pm991_increase(grid: &Grid) -> Result<Claim, MissingRow> {
    let worst = pm991_worst_increase(grid)?;
    let bound = 2.0 * SEED_PM991_INCREASE;
    Ok(claim(
        format!(
            "Samsung PM991: moderate increase in power in the worst case \
             (rule: worst-case increase > 0 and <= {}, twice the seed's figure)",
            percent(bound, 0)
        ),
        format!(
            "up to {} more power in worst-case scenarios",
            percent(SEED_PM991_INCREASE, 0)
        ),
        format!(
            "worst: workflow {}, {}",
            worst.workflow,
            signed_percent(worst.value, 1)
        ),
        0.0 < worst.value && worst.value <= bound,
    ))
}

/// Sustained writes (workflow 1), "effect minimal". Rule: workflow 1's mean latency and
/// average power change by at most 1 % on every drive.
pub(super) fn sustained_unchanged(grid: &Grid) -> Result<Claim, MissingRow> {
    let mut largest = f64::NEG_INFINITY;
    for (device, _) in DRIVES {
        let lat = grid.relative_change(device, 1, |r| r.lat_mean_us)?.abs();
        let power = grid.relative_change(device, 1, |r| r.avg_power_mw)?.abs();
        largest = largest.max(lat.max(power));
    }
    Ok(claim(
        "Sustained writes (workflow 1): minimal effect, the drive does not enter low-power \
         states (rule: latency and power within 1 % on every drive)",
        "effect minimal",
        format!("largest change {}", percent(largest, 2)),
        largest <= 0.01,
    ))
}

/// Workflow 7's mean latency, "`seed_old_ms` ms -> `seed_new_ms` ms". Two rules: direction
/// (v5.14's mean at least 3 x legacy's) and magnitude (within a factor 2 of the seed's
/// v5.14 figure). A failed magnitude says so when the declared exit latency of the chain's
/// first state cannot produce the seed's mean.
pub(super) fn w7_latency(
    grid: &Grid,
    tables: &Tables,
    device: &str,
    seed_old_ms: f64,
    seed_new_ms: f64,
) -> Result<[Claim; 2], MissingRow> {
    let old = grid.row(device, 7, "legacy")?.lat_mean_us / 1000.0;
    let new = grid.row(device, 7, "v5.14")?.lat_mean_us / 1000.0;
    let name = name(device);
    let direction = claim(
        format!("{name}: workflow 7 mean latency rises sharply under v5.14 (rule: >= 3 x legacy)"),
        format!("{} ms -> {} ms", g(seed_old_ms), g(seed_new_ms)),
        format!("{old:.3} ms -> {new:.2} ms"),
        new >= 3.0 * old,
    );
    let ok = seed_new_ms / 2.0 <= new && new <= seed_new_ms * 2.0;
    let mut explain = String::new();
    if let Some((ps, exit_ms)) = first_target_exit_ms(&tables.drive(device)?.v5_14)? {
        if !ok && declared_exit_too_short(exit_ms, seed_new_ms) {
            explain = format!(
                "; the declared exit latency of PS{ps} is {} ms, so a {} ms mean cannot come \
                 from the declared latencies: the real drive wakes slower than its descriptor \
                 says (or the host adds delay)",
                g(exit_ms),
                g(seed_new_ms)
            );
        }
    }
    let magnitude = claim(
        format!(
            "{name}: workflow 7 mean latency under v5.14 matches the seed's figure \
             (rule: within x2)"
        ),
        format!("{} ms", g(seed_new_ms)),
        format!("{new:.2} ms{explain}"),
        ok,
    );
    Ok([direction, magnitude])
}

/// The other drives, "much milder or non-existent". Rule: on each of the three, workflow 7's
/// mean latency increase (ms) is at most half the smaller of SN530's and 760p's ("much").
pub(super) fn others_milder(grid: &Grid) -> Result<Claim, MissingRow> {
    let increase = |device: &str| -> Result<f64, MissingRow> {
        let old = grid.row(device, 7, "legacy")?.lat_mean_us;
        let new = grid.row(device, 7, "v5.14")?.lat_mean_us;
        Ok((new - old) / 1000.0)
    };
    let bound = 0.5 * increase(SN530)?.min(increase(INTEL_760P)?);
    let mut ok = true;
    let mut each = Vec::new();
    for (device, name) in DRIVES {
        if device == SN530 || device == INTEL_760P {
            continue;
        }
        let v = increase(device)?;
        ok &= v <= bound;
        let slack = margin(bound - v).replace("the bound", "it");
        each.push(format!("{name} {v:+.2} ms ({slack})"));
    }
    Ok(claim(
        "Other drives: the workflow-7 latency increase is much milder or non-existent \
         (rule: at most half of the smaller of SN530's and 760p's increase)",
        "much milder or non-existent",
        format!("increase bound {bound:.2} ms; {}", each.join(", ")),
        ok,
    ))
}

/// Background operations: not checkable, the drive model has none.
pub(super) fn background_ops() -> Claim {
    Claim::new(
        SEED,
        "Intel and Samsung drives: longer stays in deep states trigger background operations \
         that raise power on workflows 3, 4 and 7",
        "more complex impact observed on scenarios 3, 4 and 7",
        "not checkable: background operations are not modelled, the drive model has no \
         background-operation power",
        None,
    )
}
