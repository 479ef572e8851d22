//! Seed 002's claims and the revert's, one function each; the rule is in its doc comment.

use super::{
    frame_ms, perc_diff, seed, RevertRow, Runs, EXAGGERATION, JANKBENCH, LATENCY_SENSITIVE, SEED,
    SEED_POWER_DIFF, SEED_SCORE_GAIN, SEED_TOO_DEEP, SEED_TOO_SHALLOW, WORKLOADS,
};
use crate::experiments::claim::Claim;
use crate::experiments::format::{g, signed_g};
use crate::experiments::row_lookup::{find, MissingRow};

/// The seed's claims, in the report's order (the revert's comes apart: [`revert`]).
pub(super) fn claims(runs: &Runs) -> Result<Vec<Claim>, MissingRow> {
    Ok(vec![
        too_deep(runs)?,
        too_shallow(runs)?,
        latency(runs)?,
        power_mixed(runs)?,
        benchmark_scores(runs)?,
    ])
}

fn claim(claim: &str, seed: String, torpor: String, ok: bool) -> Claim {
    Claim::new(SEED, claim, seed, torpor, Some(ok))
}

/// A perc_diff with its sign, `decimals` decimals, as Python writes it (`nan` where menu's
/// figure is zero).
fn signed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "+nan".to_owned()
    } else {
        format!("{x:+.decimals$}")
    }
}

/// (menu, teo@5.13, teo-util)'s `measure` on `workload`.
fn order(
    runs: &Runs,
    workload: &str,
    measure: impl Fn(&super::TeoRow) -> f64,
) -> Result<[f64; 3], MissingRow> {
    Ok([
        measure(runs.row(workload, "menu")?),
        measure(runs.row(workload, "teo@5.13")?),
        measure(runs.row(workload, "teo-util")?),
    ])
}

/// The seed's three figures per workload, "geekbench 14.994 / 9.649 / 4.02; ...".
fn seed_orders(figures: &[(&str, [f64; 3])]) -> String {
    figures
        .iter()
        .map(|(w, [a, b, c])| format!("{w} {} / {} / {}", g(*a), g(*b), g(*c)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Too-deep sleeps, menu > teo > teo-util. Rule: on every workload the too-deep share strictly
/// falls from menu to teo@5.13 (the seed's teo) to teo-util.
pub(super) fn too_deep(runs: &Runs) -> Result<Claim, MissingRow> {
    let (mut got, mut breaks) = (Vec::new(), Vec::new());
    for w in WORKLOADS {
        let [m, t, u] = order(runs, w, |r| r.too_deep_pct)?;
        got.push(format!("{w} {m:.1} / {t:.1} / {u:.1}"));
        if !(m > t && t > u) {
            breaks.push(format!("{w} ({m:.3} / {t:.3} / {u:.3})"));
        }
    }
    let why = if breaks.is_empty() {
        String::new()
    } else {
        format!("; the order breaks on {}", breaks.join(", "))
    };
    Ok(claim(
        "Too-deep sleeps: menu > teo > teo-util (percent of idle periods, each workload)",
        seed_orders(&SEED_TOO_DEEP),
        got.join("; ") + &why,
        breaks.is_empty(),
    ))
}

/// Too-shallow sleeps, the reverse order. Rule: on every workload the too-shallow share
/// strictly rises from menu to teo@5.13 to teo-util.
pub(super) fn too_shallow(runs: &Runs) -> Result<Claim, MissingRow> {
    let (mut got, mut ok) = (Vec::new(), true);
    for w in WORKLOADS {
        let [m, t, u] = order(runs, w, |r| r.too_shallow_pct)?;
        ok &= m < t && t < u;
        got.push(format!("{w} {m:.1} / {t:.1} / {u:.1}"));
    }
    Ok(claim(
        "Too-shallow sleeps: the reverse order, menu < teo < teo-util",
        seed_orders(&SEED_TOO_SHALLOW),
        got.join("; "),
        ok,
    ))
}

/// Wake-up latency on the latency-sensitive workloads (the seed: -30 % to -55 % for the tasks
/// it lists). Rule: on each, teo-util's geometric-mean wake-up latency is below menu's.
pub(super) fn latency(runs: &Runs) -> Result<Claim, MissingRow> {
    let (mut got, mut ok) = (Vec::new(), true);
    for w in LATENCY_SENSITIVE {
        let m = runs.row(w, "menu")?.wakeup_latency_gmean_us;
        let u = runs.row(w, "teo-util")?.wakeup_latency_gmean_us;
        ok &= u < m;
        got.push(format!(
            "{w} {}%",
            signed(perc_diff(u, m).unwrap_or(f64::NAN), 1)
        ));
    }
    Ok(claim(
        "teo-util lowers wake-up latency on the latency-sensitive workloads (gmean, vs menu)",
        "Geekbench -30.3%/-32.7%; PCMark -54.9%/-42.3%/-25.5% (per task)".to_owned(),
        got.join("; "),
        ok,
    ))
}

/// teo-util's power against menu, percent, per workload (NaN where menu's is zero).
fn power_diffs(runs: &Runs) -> Result<Vec<(&'static str, f64)>, MissingRow> {
    WORKLOADS
        .iter()
        .map(|&w| {
            let u = runs.row(w, "teo-util")?.avg_power_mw;
            let m = runs.row(w, "menu")?.avg_power_mw;
            Ok((w, perc_diff(u, m).unwrap_or(f64::NAN)))
        })
        .collect()
}

/// teo-util's score proxy against menu, percent, higher is better: work per second, or for
/// Jankbench the mean frame time's fall (NaN where menu's is zero).
fn score_gains(runs: &Runs) -> Result<Vec<(&'static str, f64)>, MissingRow> {
    WORKLOADS
        .iter()
        .map(|&w| {
            let (u, m) = (runs.row(w, "teo-util")?, runs.row(w, "menu")?);
            let gain = if w == JANKBENCH {
                -perc_diff(frame_ms(u)?, frame_ms(m)?).unwrap_or(f64::NAN)
            } else {
                perc_diff(u.work_ms_per_s, m.work_ms_per_s).unwrap_or(f64::NAN)
            };
            Ok((w, gain))
        })
        .collect()
}

/// Same sign as the seed's figure, and no larger than [`EXAGGERATION`] times it.
fn within(got: f64, seed: f64) -> bool {
    got * seed > 0.0 && got.abs() <= EXAGGERATION * seed.abs()
}

/// The words naming the workloads whose figure is not [`within`] the seed's ("" when none).
fn outside(got: &[(&str, f64)], seeds: &[(&str, f64)]) -> Result<String, MissingRow> {
    let mut off = Vec::new();
    for &(w, v) in got {
        if !within(v, seed(seeds, w)?) {
            off.push(w);
        }
    }
    Ok(if off.is_empty() {
        String::new()
    } else {
        format!(
            "; outside the seed's direction or {}x its size: {}",
            g(EXAGGERATION),
            off.join(", ")
        )
    })
}

/// A mixed power effect (the seed: +6.7 % Geekbench, +2.71 % PCMark, -16.08 % Jankbench,
/// +3.05 % Speedometer). Rule: teo-util's power against menu rises on some workload and falls
/// on another, and on each it moves the seed's way by at most [`EXAGGERATION`] times the
/// seed's change.
pub(super) fn power_mixed(runs: &Runs) -> Result<Claim, MissingRow> {
    let diffs = power_diffs(runs)?;
    let mixed = diffs.iter().any(|(_, d)| *d > 0.0) && diffs.iter().any(|(_, d)| *d < 0.0);
    let why = outside(&diffs, &SEED_POWER_DIFF)?;
    let seed_words: Vec<String> = SEED_POWER_DIFF
        .iter()
        .map(|(w, d)| format!("{w} {}%", signed_g(*d)))
        .collect();
    let got: Vec<String> = diffs
        .iter()
        .map(|(w, d)| format!("{w} {}%", signed(*d, 1)))
        .collect();
    Ok(claim(
        "teo-util's power effect is mixed: higher on some workloads, lower on others (vs menu)",
        seed_words.join(", "),
        got.join(", ") + &why,
        mixed && why.is_empty(),
    ))
}

/// Better scores (the seed: GB5 multicore +1.36 %, PCMark +0.15 %, Jankbench frame -9.0 %,
/// Speedometer +1.83 %). Rule: on every workload teo-util's score proxy beats menu's (more work
/// per second; a shorter mean frame on Jankbench), by at most [`EXAGGERATION`] times the
/// seed's gain.
pub(super) fn benchmark_scores(runs: &Runs) -> Result<Claim, MissingRow> {
    let gains = score_gains(runs)?;
    let why = outside(&gains, &SEED_SCORE_GAIN)?;
    let work: Vec<String> = gains
        .iter()
        .filter(|(w, _)| *w != JANKBENCH)
        .map(|(w, v)| format!("{w} {}%", signed(*v, 2)))
        .collect();
    let frame = -seed(&gains, JANKBENCH)?;
    Ok(claim(
        "Benchmark scores (Geekbench, PCMark, Speedometer) and Jankbench frame times improve \
         with teo-util (vs menu)",
        "GB5 multicore +1.36%; PCMark +0.15%; Speedometer +1.83%; Jankbench mean frame -9.0%"
            .to_owned(),
        format!(
            "work per second: {}; Jankbench mean frame {}%{why}",
            work.join(", "),
            signed(frame, 2)
        ),
        why.is_empty(),
    ))
}

/// The revert of v6.11 (spec-cpu.md §3.5, "reported by Vincent Guittot and Qais Yousef"; no
/// figure published). Rule: under teo-util the lightly busy CPU0 spends (almost) no time in
/// the cluster state (< 1 % of the run) while teo@6.12 uses it (> 10 %), and teo-util draws
/// more power.
pub(super) fn revert(rows: &[RevertRow]) -> Result<Claim, MissingRow> {
    let under = |gov: &str| {
        find(
            rows,
            |r| r.governor == gov,
            || format!("revert run under {gov}"),
        )
    };
    let (u, t) = (under("teo-util")?, under("teo@6.12")?);
    let ok = u.cluster_state_pct_cpu0 < 1.0
        && t.cluster_state_pct_cpu0 > 10.0
        && u.avg_power_mw > t.avg_power_mw;
    Ok(Claim::new(
        "spec §3.5",
        "With util-awareness a lightly utilized CPU never enters the cluster state, which costs \
         power (the reason for the v6.11 revert)",
        "reported by Vincent Guittot and Qais Yousef; no figure published",
        format!(
            "cluster state on CPU0: teo-util {:.1}% vs teo@6.12 {:.1}%; power {:.1} vs {:.1} mW",
            u.cluster_state_pct_cpu0, t.cluster_state_pct_cpu0, u.avg_power_mw, t.avg_power_mw
        ),
        Some(ok),
    ))
}
