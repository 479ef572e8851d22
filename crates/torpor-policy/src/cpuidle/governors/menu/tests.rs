//! menu@6.6, menu@6.19 (and menu@7.0/7.1 where they differ) on idle-decide sequences whose decisions were worked out by hand
//! from spec-cpu.md §2.2-§2.4 (arithmetic in the comments), plus the typical-interval
//! computations alone.
//!
//! Shorthands in the comments: `timer(n, cf)` = `(4096000 + n * cf) / 8192000` microseconds
//! (u64 wrap, truncated to u32); "ring" = the eight recent intervals in microseconds, MAX =
//! UINT_MAX; "typ" = the typical interval; (idx, stop) = the decision.

use super::{duration_bucket, v6_19, v6_6};
use crate::cpuidle::decide::text::decisions;
use crate::cpuidle::GovernorName;

/// x86-like: POLL, C1 2/2 us, C1E 10/20 us, C6 100/400 us; HZ=250.
const A: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000}, {"name": "C1E", "exit_latency_ns": 10000, "target_residency_ns": 20000}, {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000}]}"#;

/// A fast C1 (0.5/2 us) after POLL, and a C6 of 100/950 us.
const P: &str = r#"{"format": "idle-decide/1", "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 500, "target_residency_ns": 2000}, {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 950000}]}"#;

/// PowerVM-like: snooze, then CEDE with a 120 us target residency (and 1 us exit latency).
const V: &str = r#"{"format": "idle-decide/1", "states": [{"name": "snooze", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "CEDE", "exit_latency_ns": 1000, "target_residency_ns": 120000}]}"#;

/// ARM-like, no polling state: WFI 1/1 us, CPU off 150 us / 1 ms.
const W: &str = r#"{"format": "idle-decide/1", "states": [{"name": "WFI", "exit_latency_ns": 1000, "target_residency_ns": 1000}, {"name": "OFF", "exit_latency_ns": 150000, "target_residency_ns": 1000000}]}"#;

/// A deep state with a target residency beyond the 4 ms tick: C8 500 us / 4.9 ms.
const B: &str = r#"{"format": "idle-decide/1", "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000}, {"name": "C8", "exit_latency_ns": 500000, "target_residency_ns": 4900000}]}"#;

/// HZ=1000 and the three states of 779b1a1cb13a's changelog: 0, 5/5 us, 200 us / 2 ms.
const H: &str = r#"{"format": "idle-decide/1", "tick_ns": 1000000, "states": [{"name": "S0", "exit_latency_ns": 0, "target_residency_ns": 0}, {"name": "S1", "exit_latency_ns": 5000, "target_residency_ns": 5000}, {"name": "S2", "exit_latency_ns": 200000, "target_residency_ns": 2000000}]}"#;

const BOTH: [&str; 2] = ["menu@6.6", "menu"];

fn decide(governor: &str, header: &str, steps: &[&str]) -> Vec<(usize, bool)> {
    let text = format!("{header}\n{}\n", steps.join("\n"));
    decisions(governor, &text)
}

#[test]
fn names_and_aliases() {
    assert_eq!(GovernorName::parse("menu").unwrap(), GovernorName::Menu619);
    assert_eq!(
        GovernorName::parse("menu@6.19").unwrap(),
        GovernorName::Menu619
    );
    assert_eq!(
        GovernorName::parse("menu@6.6").unwrap(),
        GovernorName::Menu66
    );
    assert_eq!(GovernorName::Menu619.canonical(), "menu");
    assert_eq!(GovernorName::Menu66.canonical(), "menu@6.6");
    assert_eq!(
        GovernorName::parse("menu@7.0").unwrap(),
        GovernorName::Menu70
    );
    assert_eq!(
        GovernorName::parse("menu@7.1").unwrap(),
        GovernorName::Menu71
    );
    assert!(GovernorName::parse("menu@6.12").is_err());
}

#[test]
fn first_select_on_the_zeroed_device() {
    // Empty ring (6.19 first pushes MAX: last_residency_ns is 0) -> typ none (UINT_MAX us)
    // -> ask the sleep length: 1.5 ms, bucket 3, timer(1500000, 8192) = 12292096000 /
    // 8192000 = 1500 us. Every state fits 1.5 ms (6.6: latency limit 1500000 / 1); the
    // prediction is under the 4 ms tick, so the tick is kept, and C6's 400 us fits before it.
    for g in BOTH {
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 1500000, "residency_ns": 1200000}"#],
        );
        assert_eq!(d, vec![(3, false)], "{g}");
    }
}

/// Nine idle periods of 480 us in C1E (selected: C6) with a 50 ms timer.
const LEARN: &str = r#"{"sleep_length_ns": 50000000, "entered": 2, "residency_ns": 480000}"#;

#[test]
fn learning_a_steady_interval_and_how_the_versions_discard_outliers() {
    // Each update: measured = 480000 - C1E's 10000 (the ENTERED state's exit latency; C6's
    // would give 380 us, which does not fit C6) = 470000 -> ring gets 470.
    // Bucket 4 factor: 8192 -> 7177 -> 6289 -> 5512 -> 4832 -> ... (sample 1024*470000/50e6
    // = 9); timer(50e6, 2864) after 8 updates is still 17 ms > tick: deep, tick stopped.
    //
    // 6.19, after k updates the ring is [MAX, 470 x k, 0 x (7-k)]:
    // k=3: 7 kept, avg 1410/7 = 201, var 662700/7 - 201^2 = 54270: not steady; avg-min 201 <
    //      max-avg 269 -> drop 470 -> only zeros -> none.
    // k=4: avg 1880/7 = 268, var 126228 - 71824 = 54404: no; 268 > 202 -> drop the zeros ->
    //      four 470s, var 0 -> typ 470 us < C6's 400? no: C6 fits, prediction < tick -> keep it.
    // 6.6, ring [470 x k, 0 x (8-k)] (no MAX): it only ever drops the largest samples, so
    // with any zero left the 470s go first (k=7: avg 411, var 24161, 411^2 < 36*24161) and
    // nothing is left: no prediction until k=8.
    let steps = [LEARN; 9];
    let deep = (3, true);
    let typical = (3, false);
    assert_eq!(
        decide("menu", A, &steps),
        [vec![deep; 4], vec![typical; 5]].concat()
    );
    assert_eq!(
        decide("menu@6.6", A, &steps),
        [vec![deep; 8], vec![typical; 1]].concat()
    );
}

#[test]
fn a_rejected_entry_pushes_no_data_into_the_ring_from_6_19() {
    // As in the learning test, but the driver rejects step 4's entry (no reflect).
    // Step 5 (6.19): no update pending and last_residency_ns == 0 -> push MAX: ring
    // [MAX, 470 x 4, MAX, 0, 0]: 6 kept, avg 1880/6 = 313, var 147266 - 97969 = 49297, not
    // steady, 6 samples -> none; timer(50e6, 4832) = 29492 us -> deep again.
    // Step 6: ring [MAX, 470 x 4, MAX, 470, 0]: avg 2350/6 = 391, var 184083 - 152881 = 31202
    // -> none. Step 7: six 470s -> typ 470.
    let mut steps = vec![LEARN; 8];
    let rejected = r#"{"sleep_length_ns": 50000000, "entered": -1, "residency_ns": 480000}"#;
    steps[4] = rejected;
    assert_eq!(
        decide("menu", A, &steps),
        vec![
            (3, true),
            (3, true),
            (3, true),
            (3, true),
            (3, false),
            (3, true),
            (3, true),
            (3, false)
        ]
    );
    // Without the rejection step 5 still predicts (ring [MAX, 470 x 5, 0, 0] -> 470).
    assert_eq!(decide("menu", A, &[LEARN; 6])[5], (3, false));
}

#[test]
fn state_0_early_returns() {
    for g in BOTH {
        // latency_req 0: state 0, tick kept because it polls.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 50000000, "latency_req_ns": 0, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, false)], "{g}");
        // The same on the ARM platform: WFI does not poll, so the tick may stop.
        let d = decide(
            g,
            W,
            &[r#"{"sleep_length_ns": 50000000, "latency_req_ns": 0, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, true)], "{g}");
        // Timer (1 us) before C1's 2 us target residency.
        let d = decide(g, A, &[r#"{"sleep_length_ns": 1000, "residency_ns": 1}"#]);
        assert_eq!(d, vec![(0, false)], "{g}");
        // 1 us latency limit under C1's 2 us exit latency.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 50000000, "latency_req_ns": 1000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, false)], "{g}");
        // ... but not with state 0 disabled: first enabled is C1 (6.6: it breaks the 1 us
        // limit after its residency test, 6.19 before it); 50 ms prediction: tick stopped.
        let d = decide(
            g,
            A,
            &[
                r#"{"sleep_length_ns": 50000000, "latency_req_ns": 1000, "disabled": [0], "residency_ns": 1}"#,
            ],
        );
        assert_eq!(d, vec![(1, true)], "{g}");
        // One state only.
        let one = r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 1000, "target_residency_ns": 1000}]}"#;
        let d = decide(
            g,
            one,
            &[r#"{"sleep_length_ns": 50000000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, true)], "{g}");
    }
}

#[test]
fn disabled_states_and_latency_limits() {
    for g in BOTH {
        // 50 ms: C6 disabled -> C1E, prediction >= tick -> stop.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 50000000, "disabled": [3], "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(2, true)], "{g}");
        // Everything disabled: no early return (state 0 is disabled), the walk finds nothing,
        // state 0 it is; it polls, so the tick stays.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 50000000, "disabled": [0, 1, 2, 3], "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, false)], "{g}");
        // 50 us limit: C6's 100 us exit latency ends the walk at C1E.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 50000000, "latency_req_ns": 50000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(2, true)], "{g}");
    }
}

#[test]
fn the_running_tick_pulls_the_choice_below_delta_tick() {
    for g in BOTH {
        // 1.5 ms -> C6 (see the first test); the next event is at 300 us: C6 (400 us) does
        // not fit, step down to C1E (20 us fits).
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 1500000, "delta_tick_ns": 300000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(2, false)], "{g}");
        // C1E disabled: skipped, C1 (2 us) fits.
        let d = decide(
            g,
            A,
            &[
                r#"{"sleep_length_ns": 1500000, "delta_tick_ns": 300000, "disabled": [2], "residency_ns": 1}"#,
            ],
        );
        assert_eq!(d, vec![(1, false)], "{g}");
        // A negative delta_tick (compared signed): nothing fits, the walk ends at state 0.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 1500000, "delta_tick_ns": -5, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, false)], "{g}");
    }
}

#[test]
fn a_negative_sleep_length_counts_as_zero() {
    for g in BOTH {
        // delta < 0 -> next_timer 0 (and delta_tick 0): timer(0, 8192) = 0 us; 0 < C1's
        // 2 us -> state 0.
        let d = decide(g, A, &[r#"{"sleep_length_ns": -5, "residency_ns": 1}"#]);
        assert_eq!(d, vec![(0, false)], "{g}");
        // State 0 disabled: no early return; C1 is the first enabled state and does not fit
        // 0 ns; tick kept; C1's 2 us > delta_tick (0 whatever the step says), but every
        // shallower state is disabled, so the step-down finds nothing and C1 stays.
        let d = decide(
            g,
            A,
            &[
                r#"{"sleep_length_ns": -5, "delta_tick_ns": 7000000, "disabled": [0], "residency_ns": 1}"#,
            ],
        );
        assert_eq!(d, vec![(1, false)], "{g}");
    }
}

#[test]
fn the_timer_prediction_wraps_like_the_kernel() {
    for g in BOTH {
        // KTIME_MAX * 8192 wraps to 2^64 - 8192; + 4096000 wraps to 4087808; / 8192000 = 0 us.
        // Prediction 0: POLL fits; C1 would replace polling only with exit 2 us <= 0 (6.19)
        // / <= the latency limit min(2e12, 0 / 1) = 0 (6.6): no. State 0, tick kept.
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 9223372036854775807, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(0, false)], "{g}");
        // (4294967296000 + 1000000) ns: timer = 4294968296 us, truncated to u32 = 1000 us,
        // under the tick: C6 with the tick kept (not the deep stop an untruncated one gives).
        let d = decide(
            g,
            A,
            &[r#"{"sleep_length_ns": 4294968296000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(3, false)], "{g}");
    }
}

#[test]
fn tick_stopped_paths() {
    for g in BOTH {
        // B: 4.5 ms -> timer(4.5e6, 8192) = 4500 us >= tick; C8 (4.9 ms) does not fit.
        // Tick stopped: C1 is shallower than a tick; C8 fits before the next event only if
        // delta_tick >= 4.9 ms (default: the 4.5 ms sleep length) -> C1; with 6 ms -> C8.
        let d = decide(
            g,
            B,
            &[r#"{"sleep_length_ns": 4500000, "tick_stopped": true, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(1, true)], "{g}");
        let d = decide(
            g,
            B,
            &[
                r#"{"sleep_length_ns": 4500000, "tick_stopped": true, "delta_tick_ns": 6000000, "residency_ns": 1}"#,
            ],
        );
        assert_eq!(d, vec![(2, true)], "{g}");
        // Tick running: keep C1 and lower the prediction to its 2 us: the tick is kept.
        let d = decide(
            g,
            B,
            &[r#"{"sleep_length_ns": 4500000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(1, false)], "{g}");
    }
}

#[test]
fn the_exit_latency_is_checked_first_from_6_17() {
    // H (tick 1 ms): timer(1e6, 8192) = 1000 us = one tick, not below it; limit 20 us; tick
    // stopped; next event 3 ms. S2's 2 ms residency exceeds the prediction: 6.6 returns it
    // because S1 is shorter than a tick and S2 fits before the event (its 200 us exit
    // latency never checked); 6.19 stops at S2's exit latency first.
    let step = [
        r#"{"sleep_length_ns": 1000000, "tick_stopped": true, "delta_tick_ns": 3000000, "latency_req_ns": 20000, "residency_ns": 1}"#,
    ];
    assert_eq!(decide("menu@6.6", H, &step), vec![(2, true)]);
    assert_eq!(decide("menu", H, &step), vec![(1, true)]);
}

#[test]
fn io_waiters_only_matter_to_6_6() {
    // 1.5 ms, 2 waiters: bucket 3 + 6 (unity too), latency limit 1500000 / 21 = 71428 ns <
    // C6's 100 us -> C1E; 6.19 ignores them -> C6.
    let step = [r#"{"sleep_length_ns": 1500000, "nr_iowait": 2, "residency_ns": 1}"#];
    assert_eq!(decide("menu@6.6", A, &step), vec![(2, false)]);
    assert_eq!(decide("menu", A, &step), vec![(3, false)]);
    // 429496730 waiters: 1 + 10 n wraps mod 2^32 to 5 -> limit 300000: C6 allowed.
    let step = [r#"{"sleep_length_ns": 1500000, "nr_iowait": 429496730, "residency_ns": 1}"#];
    assert_eq!(decide("menu@6.6", A, &step), vec![(3, false)]);
    // 214748365 waiters: 1 + 10 n = 2147483651, a negative int widened to a huge u64 divisor:
    // limit 0 -> only POLL (exit 0) passes.
    let step = [r#"{"sleep_length_ns": 1500000, "nr_iowait": 214748365, "residency_ns": 1}"#];
    assert_eq!(decide("menu@6.6", A, &step), vec![(0, false)]);
}

/// P, step 0: a fresh device, 1 ms timer: timer(1e6, 8192) = 1000 us; everything fits (C6's
/// 950 us too, also before the 1 ms tick event): C6 with the tick kept.
const P0: &str = r#"{"sleep_length_ns": 1000000, "entered": 0, "residency_ns": 8000}"#;

#[test]
fn polling_is_replaced_by_a_fast_state() {
    // Step 1: measured = 8000 - POLL's 0 -> ring gets 8 us. 6.19 ring [MAX, 8, 0 x 6]: avg
    // 8/7 = 1, var 64/7 - 1 = 8 <= 400 -> typ 1 us; 6.6 ring [8, 0 x 7]: avg 1, var (49 + 7)/8
    // = 7 -> 1 us. 1000 ns <= 15 us: no sleep length (next_timer KTIME_MAX, delta_tick 2 ms).
    // POLL fits 1 us, C1 (2 us) does not: the pick polls, C1's exit 500 <= 1000 (6.6: <= the
    // limit 1000 / 1) and 2 us < 15 us and 2 us <= KTIME_MAX -> C1, prediction 2 us -> tick kept.
    for g in BOTH {
        let d = decide(
            g,
            P,
            &[P0, r#"{"sleep_length_ns": 1000000, "residency_ns": 1}"#],
        );
        assert_eq!(d, vec![(2, false), (1, false)], "{g}");
    }
}

#[test]
fn the_residency_threshold_keeps_polling_from_6_19() {
    // V step 0: timer 1000 us -> CEDE (120 us fits; tick kept, fits before 1 ms). Entered
    // snooze for 20 us. Step 1: ring gets 20: 6.19 [MAX, 20, 0 x 6] avg 20/7 = 2, var
    // 400/7 - 4 = 53 -> 2 us; 6.6 [20, 0 x 7] avg 2, var (324 + 28)/8 = 44 -> 2 us. No sleep
    // length. CEDE's 120 us does not fit 2 us; the pick polls; CEDE's exit 1 us <= 2 us.
    // 6.6: CEDE replaces polling. 6.19: 120 us is not below 15 us -> keep polling.
    let steps = [
        r#"{"sleep_length_ns": 1000000, "entered": 0, "residency_ns": 20000}"#,
        r#"{"sleep_length_ns": 1000000, "residency_ns": 1}"#,
    ];
    assert_eq!(decide("menu@6.6", V, &steps), vec![(1, false), (1, false)]);
    assert_eq!(decide("menu", V, &steps), vec![(1, false), (0, false)]);
}

/// The first five steps of fixture seq-07 (tests/data/idle-decide/menu-6.6): POLL, then S1
/// with 6741 ns exit latency and 35904 ns target residency; HZ=1000.
const SEQ07: &str = r#"{"format": "idle-decide/1", "tick_ns": 1000000, "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "S1", "exit_latency_ns": 6741, "target_residency_ns": 35904}]}"#;
const SEQ07_STEPS: [&str; 4] = [
    r#"{"sleep_length_ns": 944039, "residency_ns": 38403}"#,
    r#"{"sleep_length_ns": 7199, "latency_req_ns": 2147483647000, "residency_ns": 63258, "poll_time_limit": true}"#,
    r#"{"sleep_length_ns": 46692, "latency_req_ns": 1999, "residency_ns": 26350}"#,
    r#"{"sleep_length_ns": 461, "latency_req_ns": 1000, "residency_ns": 42}"#,
];

#[test]
fn polling_is_replaced_under_the_lowered_latency_limit_in_6_6() {
    // s0: empty ring -> none -> sleep length 944039, bucket 2, timer 944 us; limit
    //     min(no constraint, 944000 / 1). S1 fits 944 us -> S1; prediction < tick (keep it),
    //     35904 <= delta_tick 944039 -> (1, false). In S1 for 38403 ns.
    // s1: measured 38403 - 6741 = 31662 -> ring [31, 0 x 7]: avg 31 >> 3 = 3, var (28^2 +
    //     7 * 3^2) / 8 = 105 -> typ 3 us <= 15 us: no sleep length (KTIME_MAX, delta_tick
    //     500 us). No early return (limit 2147 s). Limit -> 3000; S1 does not fit; the pick
    //     polls but S1's exit 6741 > 3000 -> POLL, tick kept: (0, false). The poll timed out.
    // s2: measured = next_timer = KTIME_MAX -> ring gets ktime_to_us(KTIME_MAX) as u32 =
    //     9223372036854775 mod 2^32 = 2783138807 > INT_MAX, never kept. Kept [31, 0 x 6]:
    //     avg 4, var (27^2 + 6 * 4^2) / 7 = 117 -> 4 us. Limit 1999 < 6741: early return,
    //     POLL polls -> (0, false). In POLL 26350 ns (no time limit).
    // s3: measured 26350 - 0 -> kept [31, 26, 0 x 5]: avg 57 / 7 = 8, var (23^2 + 18^2 +
    //     5 * 8^2) / 7 = 167 -> 8 us. Limit 1000 < 6741: early return (0, false). 42 ns.
    // s4: measured 42 -> 0 us; typ still 8 us -> no sleep length. Limit 7499 >= 6741: no
    //     early return; tick running: limit min(7499, 8000 / 1) = 7499. POLL fits 8 us, S1
    //     does not; the pick polls, S1's exit 6741 <= 7499 and 35904 <= KTIME_MAX -> S1 with
    //     prediction 35904: tick kept, 35904 <= delta_tick 500000 -> (1, false).
    //     (The fidelity set's file says (0, false) here: see the fixtures' README.)
    let mut steps = SEQ07_STEPS.to_vec();
    let s4 = r#"{"sleep_length_ns": 1553, "delta_tick_ns": 1553, "latency_req_ns": 7499, "residency_ns": 3476}"#;
    steps.push(s4);
    assert_eq!(
        decide("menu@6.6", SEQ07, &steps),
        vec![(1, false), (0, false), (0, false), (0, false), (1, false)]
    );
    // One I/O waiter at s4: multiplier 11 -> limit min(7499, 8000 / 11 = 727) = 727 < S1's
    // exit 6741: no replacement; prediction < tick -> POLL, tick kept.
    steps[4] = r#"{"sleep_length_ns": 1553, "delta_tick_ns": 1553, "latency_req_ns": 7499, "nr_iowait": 1, "residency_ns": 3476}"#;
    assert_eq!(decide("menu@6.6", SEQ07, &steps)[4], (0, false));
}

#[test]
fn a_poll_time_limit_counts_as_a_timer_wakeup() {
    // Step 0 as P0 but POLL ran into its time limit after 250 us. Step 1: measured =
    // next_timer = 1 ms -> factor 8192 - 1024 + 1024 = 8192; ring 1000 (none) -> C6 again.
    // Step 1 enters C1 (not polling) for 250.5 us; the stale poll_time_limit must not count:
    // step 2 measured 250000 -> factor 7168 + 1024 * 250000 / 1e6 = 7424; ring [1000, 250]
    // (6.19: [MAX, 1000, 250]) gives none; timer(1e6, 7424) = 7428096000 / 8192000 = 906 us
    // < C6's 950 us -> C1.
    let steps = [
        r#"{"sleep_length_ns": 1000000, "entered": 0, "residency_ns": 250000, "poll_time_limit": true}"#,
        r#"{"sleep_length_ns": 1000000, "entered": 1, "residency_ns": 250500}"#,
        r#"{"sleep_length_ns": 1000000, "residency_ns": 1}"#,
    ];
    // Without the limit, step 1 already learns 250 us: factor 7424 -> C1.
    let no_limit = [
        r#"{"sleep_length_ns": 1000000, "entered": 0, "residency_ns": 250000}"#,
        r#"{"sleep_length_ns": 1000000, "residency_ns": 1}"#,
    ];
    for g in BOTH {
        assert_eq!(
            decide(g, P, &steps),
            vec![(2, false), (2, false), (1, false)],
            "{g}"
        );
        assert_eq!(decide(g, P, &no_limit), vec![(2, false), (1, false)], "{g}");
    }
}

#[test]
fn a_tick_wakeup_counts_as_a_long_sleep() {
    // B, 5 ms timer: timer(5e6, 8192) = 5000 us -> C8 (4.9 ms fits), prediction >= tick: stop.
    // Woken after 4 ms in C8. With got_tick (timer 5 ms > tick): measured = 45 ms, capped at
    // 5 ms -> factor stays 8192 -> C8 again. Without: measured = 4e6 - 500000 = 3.5e6 ->
    // factor 7168 + 716 = 7884 -> timer(5e6, 7884) = 4812 us < 4.9 ms, >= tick, tick running
    // -> keep C1 with its 2 us prediction: tick kept.
    let woken = r#"{"sleep_length_ns": 5000000, "residency_ns": 4000000, "got_tick": true}"#;
    let plain = r#"{"sleep_length_ns": 5000000, "residency_ns": 4000000}"#;
    let next = r#"{"sleep_length_ns": 5000000, "residency_ns": 1}"#;
    // A tick flag set during a rejected entry stays set for the next reflect.
    let rejected =
        r#"{"sleep_length_ns": 5000000, "entered": -1, "residency_ns": 4000000, "got_tick": true}"#;
    for g in BOTH {
        assert_eq!(
            decide(g, B, &[woken, next]),
            vec![(2, true), (2, true)],
            "{g}"
        );
        assert_eq!(
            decide(g, B, &[plain, next]),
            vec![(2, true), (1, false)],
            "{g}"
        );
        assert_eq!(
            decide(g, B, &[rejected, plain, next]),
            vec![(2, true), (2, true), (2, true)],
            "{g}"
        );
    }
}

#[test]
fn a_short_typical_interval_skips_the_sleep_length() {
    // W step 0: timer(2e6, 8192) = 2000 us -> OFF (1 ms fits before the 2 ms event), tick
    // kept. Entered WFI for 9 us: measured 9000 - 1000 = 8000 -> ring 8 -> typ 1 us (see the
    // polling test): no sleep length, next_timer = KTIME_MAX. The 500 ns sleep length is
    // never read, so no early return (which would stop the tick for WFI): WFI (1 us fits),
    // prediction under the tick -> tick kept.
    let first = r#"{"sleep_length_ns": 2000000, "entered": 0, "residency_ns": 9000}"#;
    let short = r#"{"sleep_length_ns": 500, "residency_ns": 1}"#;
    // With the tick already stopped the 1 us prediction is distrusted and replaced by the
    // timer, which is KTIME_MAX here: the deepest state (v7.0 stopped doing this).
    let stopped = r#"{"sleep_length_ns": 500, "tick_stopped": true, "residency_ns": 1}"#;
    for g in BOTH {
        assert_eq!(
            decide(g, W, &[first, short]),
            vec![(1, false), (0, false)],
            "{g}"
        );
        assert_eq!(
            decide(g, W, &[first, stopped]),
            vec![(1, false), (1, true)],
            "{g}"
        );
    }
}

#[test]
fn stopped_tick_handling_from_7_0() {
    // W as above: after step 0 the typical interval is 1 us, and bucket 3's factor is
    // 7168 + 1024 * 8000 / 2e6 = 7172. Step 1 runs with the tick stopped.
    let first = r#"{"sleep_length_ns": 2000000, "entered": 0, "residency_ns": 9000}"#;
    // 500 ns timer. 6.19 never reads it: prediction KTIME_MAX -> OFF. 7.0+ fetch it (tick
    // stopped): bucket 0, timer(500, 8192) = 8192000 / 8192000 = 1 us; the 500 ns timer is
    // before state 1's 1 ms target residency: state 0 early return, WFI, tick stopped.
    let soon = r#"{"sleep_length_ns": 500, "tick_stopped": true, "residency_ns": 1}"#;
    // 5 ms timer: timer(5e6, 7172) = 35864096000 / 8192000 = 4377 us; min with 1 us = 1 us
    // < tick. 7.0 distrusts it and uses the 5 ms timer -> OFF. 7.1 trusts it because the
    // timer is within two ticks (8 ms) -> WFI (1 us fits, OFF does not). 6.19: KTIME_MAX.
    let within_two_ticks =
        r#"{"sleep_length_ns": 5000000, "tick_stopped": true, "residency_ns": 1}"#;
    // 9 ms timer: beyond two ticks, so 7.1 also takes the timer -> OFF.
    let beyond = r#"{"sleep_length_ns": 9000000, "tick_stopped": true, "residency_ns": 1}"#;
    // Tick running: 7.x skip the sleep length like 6.19 (see the test above) -> WFI, tick kept.
    let running = r#"{"sleep_length_ns": 500, "residency_ns": 1}"#;
    let cases: [(&str, [(usize, bool); 4]); 4] = [
        ("menu@6.6", [(1, true), (1, true), (1, true), (0, false)]),
        ("menu", [(1, true), (1, true), (1, true), (0, false)]),
        ("menu@7.0", [(0, true), (1, true), (1, true), (0, false)]),
        ("menu@7.1", [(0, true), (0, true), (1, true), (0, false)]),
    ];
    for (g, want) in cases {
        for (step, want) in [soon, within_two_ticks, beyond, running].iter().zip(want) {
            assert_eq!(
                decide(g, W, &[first, step]),
                vec![(1, false), want],
                "{g} {step}"
            );
        }
    }
}

#[test]
fn huge_residencies_are_truncated_to_32_bit_microseconds() {
    // P, 5e12 ns timer: timer = 5000000000 us, as u32 705032704 -> 705 s: C6, stop.
    // POLL for 4294967304000 ns (<= the timer, >= 50 ms: factor += 1024): the ring gets
    // 4294967304 us as u32 = 8, which predicts 1 us as in the polling test -> C1.
    let steps = [
        r#"{"sleep_length_ns": 5000000000000, "entered": 0, "residency_ns": 4294967304000}"#,
        r#"{"sleep_length_ns": 5000000000000, "residency_ns": 1}"#,
    ];
    for g in BOTH {
        assert_eq!(decide(g, P, &steps), vec![(2, true), (1, false)], "{g}");
    }
}

#[test]
fn typical_interval_6_6_drops_only_the_largest() {
    // Ring [0, 1000 x 7]: avg 7000 >> 3 = 875, var (875^2 + 7 * 125^2) >> 3 = 109375:
    // 875^2 = 765625 < 36 * 109375 -> drop values > 999 -> only 0 left -> none.
    assert_eq!(
        v6_6::typical_interval(&[0, 1000, 1000, 1000, 1000, 1000, 1000, 1000]),
        u32::MAX
    );
    // Values above INT_MAX are never kept.
    assert_eq!(v6_6::typical_interval(&[1 << 31; 8]), u32::MAX);
    // Ring [100 x 4, 900 x 4]: avg 500, var 160000 (no) -> drop the 900s -> 100.
    assert_eq!(
        v6_6::typical_interval(&[100, 100, 100, 100, 900, 900, 900, 900]),
        100
    );
    // Small values: var <= 400 passes with any number of samples.
    assert_eq!(v6_6::typical_interval(&[20, 0, 0, 0, 0, 0, 0, 0]), 2);
}

#[test]
fn typical_interval_6_19_drops_the_farther_extreme() {
    // Ring [0, 1000 x 7]: avg 875, var 7000000 / 8 - 875^2 = 109375 (no); 875 - 0 > 1000 -
    // 875 -> drop the minimum -> seven 1000s -> 1000.
    assert_eq!(
        v6_19::typical_interval(&[0, 1000, 1000, 1000, 1000, 1000, 1000, 1000]),
        1000
    );
    // A tie drops the maximum: [100 x 4, 900 x 4] avg 500, 400 = 400 -> 100.
    assert_eq!(
        v6_19::typical_interval(&[100, 100, 100, 100, 900, 900, 900, 900]),
        100
    );
    // UINT_MAX samples are never kept: [MAX, 8, 0 x 6] -> 1.
    assert_eq!(v6_19::typical_interval(&[u32::MAX, 8, 0, 0, 0, 0, 0, 0]), 1);
    // Eight samples of UINT_MAX - 1: each square is 2^64 - 2^34 + 4, eight of them wrap to
    // 2^64 - 2^37 + 32, >> 3 = 2^61 - 2^34 + 4; minus avg^2 (2^64 - 2^34 + 4) wraps to
    // 2^61 > U64_MAX / 36: not steady (exact arithmetic would say variance 0); the tie then
    // drops the maximum, i.e. everything -> none.
    assert_eq!(v6_19::typical_interval(&[u32::MAX - 1; 8]), u32::MAX);
    // Exactly six samples left and not steady: give up (the v6.15 "return max" was reverted).
    // [MAX, MAX, 5000, 0 x 5]: avg 833, var 25e6 / 6 - 833^2 = 3472777 -> none.
    assert_eq!(
        v6_19::typical_interval(&[u32::MAX, u32::MAX, 5000, 0, 0, 0, 0, 0]),
        u32::MAX
    );
}

#[test]
fn buckets_by_decade() {
    let cases = [
        (0, 0),
        (9_999, 0),
        (10_000, 1),
        (99_999, 1),
        (100_000, 2),
        (1_000_000, 3),
        (9_999_999, 3),
        (10_000_000, 4),
        (100_000_000, 5),
        (u64::MAX, 5),
    ];
    for (ns, b) in cases {
        assert_eq!(duration_bucket(ns), b, "{ns}");
    }
}
