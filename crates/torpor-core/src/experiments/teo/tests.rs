//! Each rule at its bound on rows built by hand; expected values worked from the rule in the
//! claim's doc comment.

use super::*;

/// A row of `workload` under `governor` with neutral measures: 100 everywhere, no idle misses,
/// Jankbench's frame 10 ms, one task "t" at 50 us.
fn neutral(workload: &str, governor: &str) -> TeoRow {
    TeoRow {
        workload: workload.to_owned(),
        governor: governor.to_owned(),
        too_deep_pct: 0.0,
        too_shallow_pct: 0.0,
        avg_power_mw: 100.0,
        wakeup_latency_gmean_us: 100.0,
        work_ms_per_s: 100.0,
        frame_ms: (workload == JANKBENCH).then_some(10.0),
        tasks: vec![TaskLatency {
            task: "t".to_owned(),
            latency_avg_us: 50.0,
        }],
    }
}

/// Rows for every workload and governor, `set` applied to each with the governor's index in
/// (menu, teo@5.13, teo-util, teo, oracle).
fn rows(set: impl Fn(&mut TeoRow, usize)) -> Vec<TeoRow> {
    let mut out = Vec::new();
    for w in WORKLOADS {
        for (i, g) in GOVERNORS.iter().enumerate() {
            let mut r = neutral(w, g);
            set(&mut r, i);
            out.push(r);
        }
    }
    out
}

/// `values` (menu, teo@5.13, teo-util) of a measure on every workload, `on` overriding some.
fn three(
    values: [f64; 3],
    on: &[(&str, [f64; 3])],
    field: fn(&mut TeoRow) -> &mut f64,
) -> Vec<TeoRow> {
    rows(|r, i| {
        let v = on
            .iter()
            .find(|(w, _)| *w == r.workload)
            .map_or(values, |(_, v)| *v);
        if i < 3 {
            *field(r) = v[i];
        }
    })
}

fn verdict(rule: fn(&Runs) -> Result<Claim, MissingRow>, rows: &[TeoRow]) -> Option<bool> {
    rule(&Runs(rows)).unwrap().ok
}

use crate::experiments::claim::Claim;

fn deep(r: &mut TeoRow) -> &mut f64 {
    &mut r.too_deep_pct
}

fn shallow(r: &mut TeoRow) -> &mut f64 {
    &mut r.too_shallow_pct
}

fn lat(r: &mut TeoRow) -> &mut f64 {
    &mut r.wakeup_latency_gmean_us
}

#[test]
fn too_deep_needs_a_strict_fall_on_every_workload() {
    assert_eq!(
        verdict(rules::too_deep, &three([15.0, 10.0, 4.0], &[], deep)),
        Some(true)
    );
    let tie = three([15.0, 10.0, 4.0], &[(JANKBENCH, [15.0, 4.0, 4.0])], deep);
    let c = rules::too_deep(&Runs(&tie)).unwrap();
    assert_eq!(c.ok, Some(false));
    assert!(c
        .torpor_value
        .ends_with("; the order breaks on jankbench (15.000 / 4.000 / 4.000)"));
    assert!(c
        .seed_value
        .starts_with("geekbench 14.994 / 9.649 / 4.02; pcmark-web 24.814 / 11.65 / 3.662"));
}

#[test]
fn too_shallow_needs_the_reverse_order() {
    let good = three([2.0, 6.0, 14.0], &[], shallow);
    assert_eq!(verdict(rules::too_shallow, &good), Some(true));
    let flipped = three(
        [2.0, 6.0, 14.0],
        &[("speedometer", [6.0, 2.0, 14.0])],
        shallow,
    );
    assert_eq!(verdict(rules::too_shallow, &flipped), Some(false));
}

#[test]
fn latency_counts_only_the_latency_sensitive_workloads() {
    // Worse on Jankbench does not matter.
    let ok = three(
        [100.0, 90.0, 60.0],
        &[(JANKBENCH, [100.0, 90.0, 200.0])],
        lat,
    );
    let c = rules::latency(&Runs(&ok)).unwrap();
    assert_eq!(c.ok, Some(true));
    assert_eq!(c.torpor_value, "geekbench -40.0%; pcmark-web -40.0%");
    let equal = three(
        [100.0, 90.0, 60.0],
        &[("pcmark-web", [100.0, 90.0, 100.0])],
        lat,
    );
    assert_eq!(verdict(rules::latency, &equal), Some(false));
}

/// teo-util's power per workload, menu at 100 mW.
fn power(util: &[(&str, f64)]) -> Vec<TeoRow> {
    rows(|r, i| {
        if i == 2 {
            r.avg_power_mw = util
                .iter()
                .find(|(w, _)| *w == r.workload)
                .map_or(101.0, |(_, p)| *p);
        }
    })
}

#[test]
fn power_is_mixed_with_a_rise_and_a_fall_each_within_three_seed_figures() {
    // The seed: +6.7 % Geekbench, +2.71 % PCMark, -16.08 % Jankbench, +3.05 % Speedometer; so
    // PCMark may rise up to 8.13 % and Jankbench fall up to 48.24 %.
    assert_eq!(
        verdict(rules::power_mixed, &power(&[(JANKBENCH, 99.0)])),
        Some(true)
    );
    let rising = rules::power_mixed(&Runs(&power(&[]))).unwrap();
    assert_eq!(rising.ok, Some(false));
    assert_eq!(
        rising.torpor_value,
        "geekbench +1.0%, pcmark-web +1.0%, jankbench +1.0%, speedometer +1.0%; outside the \
         seed's direction or 3x its size: jankbench"
    );
    assert_eq!(
        rising.seed_value,
        "geekbench +6.7%, pcmark-web +2.71%, jankbench -16.08%, speedometer +3.05%"
    );
    let edge = |pcmark| power(&[(JANKBENCH, 51.77), ("pcmark-web", pcmark)]);
    assert_eq!(verdict(rules::power_mixed, &edge(108.12)), Some(true));
    assert_eq!(verdict(rules::power_mixed, &edge(108.2)), Some(false));
    let too_low = power(&[(JANKBENCH, 51.7)]);
    assert_eq!(verdict(rules::power_mixed, &too_low), Some(false));
}

#[test]
fn scores_improve_on_each_workload_within_three_seed_gains() {
    // Bounds: Geekbench 4.08 %, PCMark 0.45 %, Speedometer 5.49 %, Jankbench's frame a fall of
    // up to 27 %.
    let scores = |work: [(&str, f64); 3], frame_util: f64| {
        rows(|r, i| {
            if i == 2 {
                if let Some((_, gain)) = work.iter().find(|(w, _)| *w == r.workload) {
                    r.work_ms_per_s = 100.0 + gain;
                }
                if r.workload == JANKBENCH {
                    r.frame_ms = Some(frame_util);
                }
            }
        })
    };
    let good = [
        ("geekbench", 4.0),
        ("pcmark-web", 0.4),
        ("speedometer", 5.0),
    ];
    let c = rules::benchmark_scores(&Runs(&scores(good, 7.4))).unwrap();
    assert_eq!(c.ok, Some(true));
    assert_eq!(
        c.torpor_value,
        "work per second: geekbench +4.00%, pcmark-web +0.40%, speedometer +5.00%; Jankbench \
         mean frame -26.00%"
    );
    assert_eq!(
        verdict(rules::benchmark_scores, &scores(good, 7.31)),
        Some(true)
    );
    assert_eq!(
        verdict(rules::benchmark_scores, &scores(good, 7.2)),
        Some(false)
    );
    assert_eq!(
        verdict(rules::benchmark_scores, &scores(good, 10.1)),
        Some(false)
    );
    let pcmark_past = [
        ("geekbench", 4.0),
        ("pcmark-web", 0.5),
        ("speedometer", 5.0),
    ];
    assert_eq!(
        verdict(rules::benchmark_scores, &scores(pcmark_past, 9.0)),
        Some(false)
    );
    let no_gain = [
        ("geekbench", 4.0),
        ("pcmark-web", 0.4),
        ("speedometer", 0.0),
    ];
    assert_eq!(
        verdict(rules::benchmark_scores, &scores(no_gain, 9.0)),
        Some(false)
    );
}

#[test]
fn the_revert_needs_the_cluster_state_missed_and_paid_for() {
    let revert = |util_pct, teo_pct, util_mw| {
        let row = |governor: &str, cluster_state_pct_cpu0, avg_power_mw| RevertRow {
            governor: governor.to_owned(),
            cluster_state_pct_cpu0,
            avg_power_mw,
        };
        let rows = [
            row("teo-util", util_pct, util_mw),
            row("teo@6.12", teo_pct, 10.0),
        ];
        rules::revert(&rows).unwrap()
    };
    let c = revert(0.5, 90.0, 11.0);
    assert_eq!((c.ok, c.seed.as_str()), (Some(true), "spec §3.5"));
    assert_eq!(
        c.torpor_value,
        "cluster state on CPU0: teo-util 0.5% vs teo@6.12 90.0%; power 11.0 vs 10.0 mW"
    );
    assert_eq!(revert(1.0, 90.0, 11.0).ok, Some(false));
    assert_eq!(revert(0.5, 10.0, 11.0).ok, Some(false));
    assert_eq!(revert(0.5, 90.0, 10.0).ok, Some(false));
    assert!(rules::revert(&[]).is_err());
}

#[test]
fn figures_are_each_governor_against_menu_and_jankbench_s_vsyncs() {
    let runs = rows(|r, i| {
        if i == 2 && r.workload == "geekbench" {
            r.avg_power_mw = 110.0;
            r.work_ms_per_s = 95.0;
            r.tasks[0].latency_avg_us = 25.0;
        }
        if r.workload == JANKBENCH && i == 0 {
            r.frame_ms = Some(25.0);
        }
        if r.workload == "speedometer" && i == 0 {
            r.avg_power_mw = 0.0;
        }
    });
    let inputs = TeoInputs {
        runs,
        revert: vec![
            RevertRow {
                governor: "teo-util".into(),
                cluster_state_pct_cpu0: 0.0,
                avg_power_mw: 2.0,
            },
            RevertRow {
                governor: "teo@6.12".into(),
                cluster_state_pct_cpu0: 50.0,
                avg_power_mw: 1.0,
            },
        ],
        vsync_us: 16667,
        duration_s: 20,
    };
    let judged = judge(inputs).unwrap();
    let f = judged.figures;
    let gb = &f.against_menu["geekbench"];
    assert_eq!(gb.power["teo-util"], Some(10.0));
    assert_eq!(gb.power["menu"], Some(0.0));
    assert_eq!(gb.score["teo-util"], Some(-5.0));
    assert_eq!(gb.latency["t"]["teo-util"], Some(-50.0));
    // Jankbench's score is the frame's change: 10 ms against menu's 25 ms is -60 %.
    assert_eq!(f.against_menu[JANKBENCH].score["teo"], Some(-60.0));
    // Menu at 0 mW on Speedometer: no perc_diff.
    assert_eq!(f.against_menu["speedometer"].power["oracle"], None);
    // teo-util draws more on Geekbench (110 > 100) and on Speedometer (100 > 0).
    assert_eq!(f.teo_util_draws_more, ["geekbench", "speedometer"]);
    // 25 ms frames at 16.667 ms vsyncs: 1.49997 vsyncs; 20 s hold 1199.98, so 1200 vsyncs.
    assert!((f.menu_frame_vsyncs - 25_000.0 / 16_667.0).abs() < 1e-12);
    assert_eq!(f.run_vsyncs, 1200);
    assert_eq!(f.seed_frame_gain_pct, 9.0);
    // Six claims, none assessed for robustness.
    assert_eq!(judged.claims.len(), 6);
    assert!(judged
        .claims
        .iter()
        .all(|c| c.robust.is_none() && c.robust_basis == ROBUST_BASIS));
}

#[test]
fn a_missing_run_is_an_error_not_a_panic() {
    let mut runs = rows(|_, _| {});
    runs.retain(|r| !(r.workload == "pcmark-web" && r.governor == "teo@5.13"));
    let err = rules::claims(&Runs(&runs)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no row for run of pcmark-web under teo@5.13"
    );
}
