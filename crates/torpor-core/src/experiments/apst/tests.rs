//! Each rule on hand-made rows and tables, at its bound: exactly on it holds, just past it
//! fails. Expected values are worked by hand from the rule in the claim's doc comment.

use std::collections::BTreeMap;

use super::*;

/// Rows for every drive, workflow and builder: 1000 mW and 15 us (75 us on workflow 7) under
/// both builders, unless `set` changes a drive's (workflow -> (legacy, v5.14)) power or its
/// workflow-7 latency.
struct Rows(Vec<ApstRow>);

impl Rows {
    fn flat() -> Self {
        let mut rows = Vec::new();
        for (device, _) in DRIVES {
            for w in WORKFLOWS {
                for algorithm in ["legacy", "v5.14"] {
                    rows.push(ApstRow {
                        device: device.to_owned(),
                        workflow: w,
                        algorithm: algorithm.to_owned(),
                        avg_power_mw: 1000.0,
                        lat_mean_us: if w == 7 { 75.0 } else { 15.0 },
                    });
                }
            }
        }
        Self(rows)
    }

    fn set(mut self, device: &str, w: u32, f: impl Fn(&mut ApstRow, bool)) -> Self {
        for r in self.0.iter_mut() {
            if r.device == device && r.workflow == w {
                let new = r.algorithm == "v5.14";
                f(r, new);
            }
        }
        self
    }

    /// v5.14's power on `device`'s workflow `w` (legacy stays at 1000 mW).
    fn power(self, device: &str, w: u32, new_mw: f64) -> Self {
        self.set(device, w, |r, new| {
            if new {
                r.avg_power_mw = new_mw;
            }
        })
    }

    /// v5.14's workflow-7 mean latency on `device` (legacy stays at 75 us).
    fn w7(self, device: &str, new_us: f64) -> Self {
        self.set(device, 7, |r, new| {
            if new {
                r.lat_mean_us = new_us;
            }
        })
    }
}

/// A table whose PS0 entry is (itps, itpt_ms), with the idle chain it gives, on a drive whose
/// PS0 is operational (with `idlp` idle power) and whose PS3 and PS4 exit after `exit_us`.
fn table(first: (u32, u32), chain: &[(usize, f64)], idlp: Option<f64>, exit_us: u32) -> TableView {
    let mut entries = vec![
        Entry {
            itps: 0,
            itpt_ms: 0
        };
        32
    ];
    entries[0] = Entry {
        itps: first.0,
        itpt_ms: first.1,
    };
    let state = |non_operational, idle_power_mw, exit_lat_us| PowerStateView {
        non_operational,
        exit_lat_us,
        idle_power_mw,
    };
    TableView {
        table: Table { entries },
        idle_schedule: chain
            .iter()
            .map(|&(ps, reached_after_ms)| Reached {
                ps,
                reached_after_ms,
            })
            .collect(),
        device: DriveView {
            controller: ControllerView {
                power_states: vec![
                    state(false, idlp, 0),
                    state(false, None, 0),
                    state(false, None, 0),
                    state(true, None, exit_us),
                    state(true, None, exit_us),
                ],
            },
        },
    }
}

fn plain() -> TableView {
    table((3, 100), &[(3, 100.0)], None, 8000)
}

/// Every drive with `plain` tables, `device`'s replaced by (legacy, v5.14).
fn tables_with(device: &str, legacy: TableView, v5_14: TableView) -> BTreeMap<String, DriveTables> {
    let mut out: BTreeMap<String, DriveTables> = DRIVES
        .iter()
        .map(|(d, _)| {
            let t = DriveTables {
                legacy: plain(),
                v5_14: plain(),
            };
            (d.to_string(), t)
        })
        .collect();
    out.insert(device.to_owned(), DriveTables { legacy, v5_14 });
    out
}

fn all_plain() -> BTreeMap<String, DriveTables> {
    tables_with(BG4, plain(), plain())
}

fn ok(c: Result<Claim, MissingRow>) -> Option<bool> {
    c.unwrap().ok
}

#[test]
fn sn530_savings_need_thirty_percent_on_each_and_at_most_72() {
    let verdict = |p4, p5, p6| {
        let rows = Rows::flat()
            .power(SN530, 4, p4)
            .power(SN530, 5, p5)
            .power(SN530, 6, p6);
        rules::sn530_large_savings(&Grid(&rows.0)).unwrap()
    };
    // 1000 -> 700 mW is 30 % lower: the lower bound.
    assert_eq!(verdict(700.0, 700.0, 700.0).ok, Some(true));
    let low = verdict(700.0, 701.0, 700.0);
    assert_eq!(low.ok, Some(false));
    assert!(low.torpor_value.ends_with("; workflow(s) 5 below 30 %"));
    // 62 % + 10 points = 72 % (1000 -> 280 mW) is the ceiling.
    let at = verdict(280.0, 700.0, 700.0);
    assert_eq!(at.ok, Some(true));
    assert_eq!(
        at.torpor_value,
        "workflow 4: 72% lower, workflow 5: 30% lower, workflow 6: 30% lower"
    );
    let over = verdict(279.0, 700.0, 700.0);
    assert_eq!(over.ok, Some(false));
    assert!(over
        .torpor_value
        .ends_with("; largest 72% overshoots the seed's 62% by more than 10 points"));
    assert!(over.claim.ends_with("the largest at most 72%)"));
}

#[test]
fn kioxia_flat_allows_ten_percent_either_way() {
    let rows = Rows::flat().power(BG4, 3, 1100.0).power(BG4, 6, 900.0);
    let c = rules::kioxia_flat(&Grid(&rows.0)).unwrap();
    assert_eq!(c.ok, Some(true));
    // +10 % and -10 % tie in size: the first is quoted.
    assert_eq!(
        c.torpor_value,
        "largest change +10.0% (workflows 1-7: +0.0%, +0.0%, +10.0%, +0.0%, +0.0%, -10.0%, +0.0%)"
    );
    let rows = Rows::flat().power(BG4, 3, 1101.0);
    assert_eq!(ok(rules::kioxia_flat(&Grid(&rows.0))), Some(false));
}

#[test]
fn pm991_wants_an_increase_up_to_twice_the_seed() {
    let verdict = |mw| {
        let rows = Rows::flat().power(PM991, 3, mw);
        rules::pm991_increase(&Grid(&rows.0)).unwrap()
    };
    // +36 % = 2 x 18 %: the bound.
    let at = verdict(1360.0);
    assert_eq!(at.ok, Some(true));
    assert_eq!(at.torpor_value, "worst: workflow 3, +36.0%");
    assert_eq!(verdict(1361.0).ok, Some(false));
    // No change anywhere: the worst is workflow 1 (the first of equals), +0.0 %, no increase.
    let none = verdict(1000.0);
    assert_eq!(none.ok, Some(false));
    assert_eq!(none.torpor_value, "worst: workflow 1, +0.0%");
}

#[test]
fn sustained_writes_allow_one_percent() {
    let mut rows = Rows::flat();
    for (d, _) in DRIVES {
        rows = rows.power(d, 1, 1010.0);
    }
    let c = rules::sustained_unchanged(&Grid(&rows.0)).unwrap();
    assert_eq!(
        (c.ok, c.torpor_value.as_str()),
        (Some(true), "largest change 1.00%")
    );
    let rows = Rows::flat().power(BG4, 1, 1011.0);
    let c = rules::sustained_unchanged(&Grid(&rows.0)).unwrap();
    assert_eq!(
        (c.ok, c.torpor_value.as_str()),
        (Some(false), "largest change 1.10%")
    );
}

#[test]
fn workflow7_direction_at_three_times_and_magnitude_at_twice_the_seed() {
    let tables = all_plain();
    let verdicts = |new_us| {
        let rows = Rows::flat().w7(SN530, new_us);
        let [d, m] = rules::w7_latency(&Grid(&rows.0), &Tables(&tables), SN530, 0.6, 10.0).unwrap();
        (d.ok, m.ok)
    };
    // Direction: 3 x 75 us = 225 us; magnitude: 10 ms / 2 = 5 ms to 10 ms x 2 = 20 ms.
    assert_eq!(verdicts(225.0), (Some(true), Some(false)));
    assert_eq!(verdicts(224.0).0, Some(false));
    assert_eq!(verdicts(5000.0), (Some(true), Some(true)));
    assert_eq!(verdicts(4999.0).1, Some(false));
    assert_eq!(verdicts(20000.0).1, Some(true));
    assert_eq!(verdicts(20001.0).1, Some(false));
}

#[test]
fn a_missed_magnitude_names_a_declared_exit_latency_too_short_for_the_seed() {
    let rows = Rows::flat().w7(SN530, 4000.0);
    // PS3 first, exiting after 4 ms: below half of 10 ms, so 10 ms cannot come from it.
    let short = tables_with(SN530, plain(), table((3, 50), &[(3, 50.0)], None, 4000));
    let [direction, magnitude] =
        rules::w7_latency(&Grid(&rows.0), &Tables(&short), SN530, 0.6, 10.0).unwrap();
    assert_eq!(direction.torpor_value, "0.075 ms -> 4.00 ms");
    assert_eq!(direction.seed_value, "0.6 ms -> 10 ms");
    assert_eq!(
        magnitude.torpor_value,
        "4.00 ms; the declared exit latency of PS3 is 4 ms, so a 10 ms mean cannot come from \
         the declared latencies: the real drive wakes slower than its descriptor says (or the \
         host adds delay)"
    );
    // An exit latency of 5 ms (half of 10 ms) could: no explanation.
    let enough = tables_with(SN530, plain(), table((3, 50), &[(3, 50.0)], None, 5000));
    let [_, magnitude] =
        rules::w7_latency(&Grid(&rows.0), &Tables(&enough), SN530, 0.6, 10.0).unwrap();
    assert_eq!(magnitude.torpor_value, "4.00 ms");
}

#[test]
fn other_drives_may_rise_at_most_half_the_smaller_of_sn530_and_760p() {
    let verdict = |other_us| {
        let mut rows = Rows::flat().w7(SN530, 11075.0).w7(INTEL_760P, 8075.0);
        for d in [PM991, BC511, BG4] {
            rows = rows.w7(d, other_us);
        }
        rules::others_milder(&Grid(&rows.0)).unwrap()
    };
    // +11 ms and +8 ms: the bound is half of 8 ms.
    let at = verdict(4075.0);
    assert_eq!(at.ok, Some(true));
    assert!(at
        .torpor_value
        .starts_with("increase bound 4.00 ms; Samsung PM991 +4.00 ms (exactly at it), "));
    let past = verdict(4085.0);
    assert_eq!(past.ok, Some(false));
    assert!(past
        .torpor_value
        .contains("Kioxia BG4 +4.01 ms (0.01 beyond it)"));
}

#[test]
fn identical_tables_allow_itpts_within_a_factor_1_25() {
    let verdict = |itps, itpt| {
        let t = tables_with(
            BG4,
            table((3, 100), &[], None, 0),
            table((itps, itpt), &[], None, 0),
        );
        ok(rules::tables_identical(&Tables(&t)))
    };
    assert_eq!(verdict(3, 125), Some(true));
    assert_eq!(verdict(3, 126), Some(false));
    assert_eq!(verdict(4, 100), Some(false));
}

#[test]
fn quicker_holds_at_exactly_half_and_wants_the_deepest_state_sooner() {
    let legacy = || table((3, 200), &[(3, 205.0), (4, 900.0)], None, 0);
    let verdict = |v5_14| {
        let t = tables_with(INTEL_760P, legacy(), v5_14);
        rules::quicker(&Tables(&t), INTEL_760P).unwrap()
    };
    let at = verdict(table((3, 100), &[(3, 105.0), (4, 800.0)], None, 0));
    assert_eq!(at.ok, Some(true));
    assert_eq!(
        at.torpor_value,
        "PS0 ITPT 200 -> 100 ms (x0.50, rule <= x0.50: exactly at the bound); legacy: PS3 \
         after 205 ms, PS4 after 900 ms; v5.14: PS3 after 105 ms, PS4 after 800 ms"
    );
    let past = verdict(table((3, 101), &[(3, 106.0), (4, 800.0)], None, 0));
    assert_eq!(past.ok, Some(false));
    assert!(past
        .torpor_value
        .contains("(x0.51, rule <= x0.50: 0.01 beyond the bound)"));
    let late = verdict(table((3, 100), &[(3, 105.0), (4, 900.0)], None, 0));
    assert_eq!(late.ok, Some(false));
    let none = verdict(table((0, 0), &[], None, 0));
    assert_eq!(none.ok, Some(false));
    assert!(none.torpor_value.ends_with("v5.14: no transitions"));
}

#[test]
fn deeper_at_a_similar_time_allows_a_factor_2_and_deeper_later_wants_strictly_later() {
    let similar = |ms| {
        let t = tables_with(
            BC511,
            table((3, 100), &[(3, 100.0)], None, 0),
            table((4, 0), &[(4, ms)], None, 0),
        );
        ok(rules::deeper_similar_time(&Tables(&t)))
    };
    assert_eq!((similar(200.0), similar(201.0)), (Some(true), Some(false)));
    assert_eq!(similar(50.0), Some(true));
    let later = |ms| {
        let t = tables_with(
            PM991,
            table((3, 100), &[(3, 100.0)], None, 0),
            table((4, 0), &[(4, ms)], None, 0),
        );
        ok(rules::deeper_later(&Tables(&t)))
    };
    assert_eq!((later(100.5), later(100.0)), (Some(true), Some(false)));
}

#[test]
fn a_match_with_the_seed_is_within_five_percent() {
    assert_eq!(Against::of(0.75, 0.62), Against::Above);
    assert_eq!(Against::of(0.50, 0.62), Against::Below);
    // 0.62 x 1.05 = 0.651 and 0.62 x 0.95 = 0.589.
    assert_eq!(Against::of(0.65, 0.62), Against::Matches);
    assert_eq!(Against::of(0.59, 0.62), Against::Matches);
    assert_eq!(Against::of(0.652, 0.62), Against::Above);
}

fn inputs(
    runs: Rows,
    ends: Vec<(&str, Rows)>,
    tables: BTreeMap<String, DriveTables>,
) -> ApstInputs {
    ApstInputs {
        runs: runs.0,
        ends: ends
            .into_iter()
            .map(|(name, rows)| ApstEnd {
                name: name.to_owned(),
                runs: rows.0,
            })
            .collect(),
        tables,
    }
}

#[test]
fn figures_are_the_seed_comparisons_the_report_quotes() {
    let rows = Rows::flat()
        .power(SN530, 4, 250.0)
        .power(SN530, 5, 500.0)
        .power(SN530, 6, 400.0)
        .power(PM991, 2, 1100.0)
        .power(PM991, 5, 1100.0)
        .w7(INTEL_760P, 8000.0)
        .set(BG4, 2, |r, new| r.lat_mean_us = if new { 5.0 } else { 0.0 });
    let tables = tables_with(BG4, plain(), table((3, 1), &[], Some(300.0), 0));
    let f = judge(inputs(rows, vec![], tables)).unwrap().figures;
    // SN530: 75 %, 50 %, 60 % lower; the largest exceeds 62 %.
    assert_eq!(
        (f.sn530_smallest_saving, f.sn530_largest_saving),
        (0.5, 0.75)
    );
    assert_eq!(f.sn530_against_seed, Against::Above);
    // PM991: +10 % on workflows 2 and 5, the first is the worst; short of 18 %.
    assert_eq!(f.pm991_worst.workflow, 2);
    assert!((f.pm991_worst.value - 0.1).abs() < 1e-12);
    assert_eq!(f.pm991_against_seed, Against::Below);
    // 760p: 8 ms against 53 ms, PS3 first with an 8 ms exit latency, below 26.5 ms.
    let w7 = f.intel_w7.unwrap();
    assert_eq!(
        (w7.mean_ms, w7.first_target_ps, w7.exit_latency_ms),
        (8.0, 3, 8.0)
    );
    assert!(w7.declared_too_short);
    // The BG4's v5.14 table's drive reports IDLP; the others do not.
    assert_eq!(f.drives_without_idlp.len(), 4);
    assert!(!f.drives_without_idlp.contains(&"Kioxia BG4".to_owned()));
    assert_eq!(f.schedules[BG4]["v5.14"], "no transitions");
    assert_eq!(f.schedules[BG4]["legacy"], "PS3 after 100 ms");
    // A legacy latency of zero has no relative change.
    assert_eq!(f.changes[BG4]["2"].latency, None);
    assert_eq!(f.changes[SN530]["4"].power, Some(-0.75));
}

#[test]
fn the_end_that_flips_a_claim_is_named() {
    let good = || {
        Rows::flat()
            .power(SN530, 4, 500.0)
            .power(SN530, 5, 500.0)
            .power(SN530, 6, 500.0)
    };
    let flips = good().power(SN530, 5, 750.0);
    let judged = judge(inputs(
        good(),
        vec![("idle low", good()), ("idle high", flips)],
        all_plain(),
    ))
    .unwrap();
    let savings = &judged.claims[5];
    assert!(savings
        .claim
        .claim
        .starts_with("WD SN530: large power savings"));
    assert_eq!(savings.robust, Some(false));
    assert_eq!(
        savings.hinges_on.as_deref(),
        Some("holds at the central values; fails with idle high")
    );
    assert_eq!(savings.robust_basis, ROBUST_BASIS);
    // The background operations are not checkable, hence not assessed.
    let last = judged.claims.last().unwrap();
    assert_eq!((last.claim.ok, last.robust), (None, None));
    assert_eq!(judged.claims.len(), 15);
}

#[test]
fn a_missing_run_is_an_error_not_a_panic() {
    let mut rows = Rows::flat();
    rows.0.retain(|r| !(r.device == PM991 && r.workflow == 4));
    let err = judge(inputs(rows, vec![], all_plain())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no row for run of samsung-pm991-mzvlq256hajd workflow 4 legacy"
    );
    let mut tables = all_plain();
    tables.remove(BG4);
    assert!(judge(inputs(Rows::flat(), vec![], tables)).is_err());
}
