//! The older teo generations on idle-decide sequences whose decisions were worked out by hand
//! from spec-cpu.md §3.0-3.4 (the arithmetic is in the comments).
//!
//! Notation: Hk/Ik/Rk = hits/intercepts/recent of bin k after the step's update; "sums@c" =
//! (intercepts, hits, recent) summed over the bins below candidate c; decay d(x) = x - x>>3,
//! so one pulse decays 1024 -> 896 -> 784 -> 686 -> 601 -> 526 -> 461 -> 404 -> 354 -> 310.

use super::v5_13::Teo513;
use super::v6_6::Teo66;
use crate::cpuidle::decide::text::{decisions, parse_header};
use crate::cpuidle::{Device, Governor, Kernel};

/// x86-like: a polling state, C1 and C6; the deepest state (400 us) is under the 4 ms tick, so
/// v6.6's "slept past a tick" bin is in use. middle_of_bin(0) = 1000, middle_of_bin(1) = 201000.
const X86: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true},
 {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000},
 {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000}]}"#;

/// X86 plus a state deeper than the tick (6 ms): no "slept past a tick" bin in v6.6.
/// middle_of_bin(2) = (400000 + 6000000) / 2 = 3200000.
const DEEP: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true},
 {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000},
 {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000},
 {"name": "C8", "exit_latency_ns": 1000000, "target_residency_ns": 6000000}]}"#;

/// An ARM-like pair: WFI (not polling) and CPU off.
const ARM2: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "WFI", "exit_latency_ns": 1000, "target_residency_ns": 1000},
 {"name": "OFF", "exit_latency_ns": 300000, "target_residency_ns": 1000000}]}"#;

/// A polling state and one state between half a tick and a tick.
const POLL_OFF: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true},
 {"name": "OFF", "exit_latency_ns": 300000, "target_residency_ns": 3000000}]}"#;

const ONE_STATE: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "WFI", "exit_latency_ns": 1000, "target_residency_ns": 1000}]}"#;

/// Sleep length 10 ms, woken by the timer (span = residency = sleep length): a hit in the
/// timer's bin whatever was entered (time_span >= sleep_length -> measured = U64_MAX).
const TIMER_10MS: &str = r#"{"sleep_length_ns": 10000000, "residency_ns": 10000000}"#;

/// Sleep length 10 ms, C1 entered, 50 us: measured = 50000 - 2000/2 = 49000 -> bin 1, while
/// the timer's bin is the deepest fitting 10 ms: an intercept in bin 1.
const C1_50US: &str = r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 50000}"#;

fn decide(governor: &str, header: &str, steps: &[&str]) -> Vec<(usize, bool)> {
    let mut text = header.replace('\n', "");
    for s in steps {
        text.push('\n');
        text.push_str(s);
    }
    text.push('\n');
    decisions(governor, &text)
}

fn repeated(step: &'static str, n: usize) -> Vec<&'static str> {
    vec![step; n]
}

// ---------------------------------------------------------------------------------------------
// teo@5.13 (and what teo@6.3 shares with it)

#[test]
fn v5_13_first_select_learns_a_hit_then_intercepts_pull_the_choice_shallower() {
    let steps = [
        // Update on the zeroed device: time_span 0 >= sleep_length 0 -> measured U64_MAX; only
        // state 0's target residency (0) is <= 0, so a hit in bin 0: H0 = 1024, total = 1024.
        // Candidate: deepest state fitting 10 ms = 2, sums@2 = (0, 1024, 0);
        // 2*0 > 1024 - 1024 is false, recent 0 <= 4: keep 2; 10 ms >= tick: stop.
        C1_50US,
        // Update: 50000 < 10 ms -> measured 49000, bin 1; timer bin 2 -> intercept:
        // H0 = 896, I1 = 1024, R1 = 1, total = 1920. sums@2 = (1024, 896, 1):
        // 2*1024 = 2048 > 1920 - 896 = 1024 -> look down. i=1: 2*1024 > 1024 -> state 1,
        // duration = middle_of_bin(1) = 201000 < tick: keep the tick; 2000 <= delta 4 ms.
        C1_50US,
        // H0 = 784, I1 = 896 + 1024 = 1920, total = 2704: 3840 > 2704 - 784 = 1920 -> state 1.
        C1_50US,
        // Tick already stopped: H0 = 686, I1 = 1680 + 1024 = 2704, total = 3390:
        // 5408 > 3390 - 686 = 2704, i=1 qualifies but its bin middle (201000) is under a tick
        // (teo_time_ok fails) -> back to the first suitable state, the candidate 2, with the
        // sleep length; the tick being stopped, stop_tick stays true.
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "entered": 1, "residency_ns": 50000}"#,
        // H0 = 601, I1 = 2366 + 1024 = 3390, total = 3991: 6780 > 3390 -> state 1 again.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &steps),
        vec![(2, true), (1, false), (1, false), (2, true), (1, false)]
    );
}

#[test]
fn v5_13_recent_intercepts_alone_trigger_and_are_forgotten_after_nine_updates() {
    // Updates u1..u11 (u_k runs in step k's select on step k-1's outcome):
    // u1 hit in bin 2; u2..u6 intercepts in bin 1 (ring slots 2..6); u7..u10 hits in bin 2;
    // u11 (slot 2 again) forgets u2's intercept.
    let mut steps = vec![TIMER_10MS];
    steps.extend(repeated(C1_50US, 5));
    steps.extend(repeated(TIMER_10MS, 6));
    // step  H0   H2    I1    total  sums@2             2*I > total-H0?  recent > 4?  choice
    //  0    1024 0     0     1024   (0,1024,0)         no               no           2, stop
    //  1    896  1024  0     1920   (0,896,0)          no               no           2, stop
    //  2    784  896   1024  2704   (1024,784,1)       2048 > 1920 yes  no           1
    //  3    686  784   1920  3390   (1920,686,2)       3840 > 2704 yes  no           1
    //  4    601  686   2704  3991   (2704,601,3)       5408 > 3390 yes  no           1
    //  5    526  601   3390  4517   (3390,526,4)       6780 > 3991 yes  no           1
    //  6    461  526   3991  4978   (3991,461,5)       7982 > 4517 yes  5 > 4 yes    1
    //  7    404  1485  3493  5382   (3493,404,5)       6986 > 4978 yes  yes          1
    //  8    354  2324  3057  5735   (3057,354,5)       6114 > 5381 yes  yes          1
    //  9    310  3058  2675  6043   (2675,310,5)       5350 > 5733 no   yes          1
    // 10    272  3700  2341  6313   (2341,272,5)       4682 > 6041 no   yes          1
    // 11    238  4262  2049  6549   (2049,238,4)       4098 > 6311 no   4 > 4 no     2, stop
    // Whenever triggered, i=1 holds all the bins' intercepts and recents: 2*sum > sum -> 1,
    // with duration 201000 < tick (tick kept; 2000 <= delta 4 ms).
    let mut expected = vec![(2, true), (2, true)];
    expected.extend(vec![(1, false); 9]);
    expected.push((2, true));
    assert_eq!(decide("teo@5.13", X86, &steps), expected);
}

#[test]
fn v5_13_state_1_beyond_the_timer_returns_state_0_at_once() {
    let steps = [
        // 2000 > 1000: state 0 before any sums; it polls: keep the tick.
        r#"{"sleep_length_ns": 1000, "residency_ns": 1000}"#,
        // The same with the tick stopped: nothing to keep, stop_tick stays true.
        r#"{"sleep_length_ns": 1000, "tick_stopped": true, "residency_ns": 1000}"#,
    ];
    assert_eq!(decide("teo@5.13", X86, &steps), vec![(0, false), (0, true)]);
}

#[test]
fn v5_13_disabled_states_are_skipped_but_keep_their_bins() {
    let steps = [
        // State 0 disabled: no early exit; i=1 is the first enabled state (idx0 = 1) and does
        // not fit 1000 -> it is taken as is; 1000 < tick keeps the tick.
        r#"{"sleep_length_ns": 1000, "disabled": [0], "residency_ns": 1000}"#,
        // Nothing enabled: state 0, which polls -> tick kept.
        r#"{"sleep_length_ns": 10000000, "disabled": [0, 1, 2], "residency_ns": 10000000}"#,
        // Updates so far: u0 H0 = 1024; u1 (span 1000 >= sleep 1000) hit in bin 0, H0 = 1920;
        // u2 hit in bin 2 (span = sleep): H0 = 1680, H2 = 1024, total 2704.
        // C6 disabled: candidate 1, sums@1 = (0,1680,0), 0 > 2704-1680 no -> 1; 10 ms: stop.
        r#"{"sleep_length_ns": 10000000, "disabled": [2], "entered": 1, "residency_ns": 50000}"#,
        // u3: intercept in bin 1: H0 = 1470, H2 = 896, I1 = 1024, total 3390.
        // C1 disabled: candidate 2, sums@2 = (1024, 1470, 1): 2048 > 3390 - 1470 = 1920 ->
        // i=1 qualifies (2048 > 1024) but is disabled -> the first suitable state, 2.
        r#"{"sleep_length_ns": 10000000, "disabled": [1], "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &steps),
        vec![(1, false), (0, false), (1, true), (2, true)]
    );
}

#[test]
fn v5_13_latency_limit_caps_the_choice_but_not_the_tick_decision() {
    let steps = [
        // C6's 100 us exit latency breaks 50 us: constraint_idx = 1; the expected duration is
        // still the 10 ms sleep length, so the tick is stopped.
        r#"{"sleep_length_ns": 10000000, "latency_req_ns": 50000, "residency_ns": 10000000}"#,
        // latency_req 0: even C1 (2 us) breaks it: constraint_idx stays 0 -> POLL, tick kept.
        r#"{"sleep_length_ns": 10000000, "latency_req_ns": 0, "residency_ns": 10000000}"#,
    ];
    assert_eq!(decide("teo@5.13", X86, &steps), vec![(1, true), (0, false)]);
}

#[test]
fn v5_13_poll_time_limit_is_a_safety_net_and_is_cleared() {
    let limited = [
        // Fresh: (2, stop). POLL ran into its time limit after 1 us.
        r#"{"sleep_length_ns": 10000000, "entered": 0, "residency_ns": 1000, "poll_time_limit": true}"#,
        // u1: reflect set time_span = sleep_length -> measured U64_MAX -> hit in bin 2:
        // H0 = 896, H2 = 1024, total 1920; sums@2 = (0, 896, 0): no alternative -> (2, stop).
        C1_50US,
        // reflect cleared poll_time_limit, so C1's 50 us is a real intercept in bin 1:
        // H0 = 784, H2 = 896, I1 = 1024, total 2704: 2048 > 2704 - 784 = 1920 -> state 1.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &limited),
        vec![(2, true), (2, true), (1, false)]
    );
    let natural = [
        r#"{"sleep_length_ns": 10000000, "entered": 0, "residency_ns": 1000}"#,
        // u1: measured 1000 - 0/2 = 1000 -> intercept in bin 0: H0 = 896, I0 = 1024, total
        // 1920; sums@2 = (1024, 896, 1): 2048 > 1024. i=1: 2*0 > 1024 no, C1 suitable (first
        // suitable = 1); i=0: 2*1024 > 1024 -> POLL with duration middle_of_bin(0) = 1000.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &natural),
        vec![(2, true), (0, false)]
    );
}

#[test]
fn v5_13_tick_wakeup_beyond_a_tick_counts_as_a_timer_hit() {
    let tick = [
        // Fresh on DEEP: candidate 3 (6 ms fits 10 ms), stop.
        TIMER_10MS,
        // u1: hit in bin 3 (H0 = 896, H3 = 1024) -> (3, stop). C6 woke after 4 ms on the tick.
        r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 4000000, "got_tick": true}"#,
        // u2: got_tick and 10 ms > tick -> time_span = sleep_length -> hit in bin 3 again:
        // no intercepts, no alternative -> (3, stop).
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", DEEP, &tick),
        vec![(3, true), (3, true), (3, true)]
    );
    let no_tick = [
        TIMER_10MS,
        r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 4000000}"#,
        // u2: measured 4000000 - 100000/2 = 3950000 -> bin 2 (400 us .. 6 ms), timer bin 3:
        // intercept. H0 = 784, H3 = 896, I2 = 1024, total 2704; sums@3 = (1024, 784, 1):
        // 2048 > 2704 - 784 = 1920. i=2: 2*1024 > 1024 -> C6, duration middle_of_bin(2) =
        // 3200000 < tick: keep the tick; 400000 <= delta 4 ms.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", DEEP, &no_tick),
        vec![(3, true), (3, true), (2, false)]
    );
}

#[test]
fn v5_13_tick_flag_survives_a_poll_time_limit_and_is_read_next_time() {
    let steps = [
        // Fresh on DEEP: (3, stop). POLL hit its limit and the tick fired: reflect tests
        // poll_time_limit first and never calls tick_nohz_idle_got_tick(): the flag stays.
        r#"{"sleep_length_ns": 10000000, "entered": 0, "residency_ns": 1000, "poll_time_limit": true, "got_tick": true}"#,
        // u1: hit in bin 3 (safety net). H0 = 896, H3 = 1024: (3, stop). This C6 wake-up after
        // 50 us is natural, but reflect now reads the stale tick flag: safety net again.
        r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 50000}"#,
        // u2: hit in bin 3 -> no intercepts: (3, stop). (Had the flag been consumed in step 0,
        // u2 would be an intercept in bin 1 (50000 < 100000 -> 25000) and sums@3 = (1024, 784,
        // 1) with total 2704 would pick C1 with duration 201000: (1, keep).)
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", DEEP, &steps),
        vec![(3, true), (3, true), (3, true)]
    );
}

#[test]
fn v5_13_rejected_entry_teaches_nothing() {
    let steps = [
        // Rejected: no reflect, and select already set last_state_idx = -1.
        r#"{"sleep_length_ns": 10000000, "entered": -1, "residency_ns": 50000}"#,
        // No update: H0 = 1024, total 1024, as after step 0 -> (2, stop).
        C1_50US,
        // One update since step 0: H0 = 896, I1 = 1024, total 1920: 2048 > 1024 -> state 1.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &steps),
        vec![(2, true), (2, true), (1, false)]
    );
}

#[test]
fn v5_13_learns_from_the_entered_state_not_the_selected_one() {
    let steps = [
        // Selected C6, the driver entered C1: exit latency 2000 -> measured 3000 - 1000 = 2000,
        // bin 1 (2000 <= 2000). With C6's latency it would have been 3000/2 = 1500, bin 0,
        // and the choice below would be POLL.
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 3000}"#,
        // Intercept in bin 1: as in the first test's step 1 -> (1, keep).
        TIMER_10MS,
    ];
    assert_eq!(decide("teo@5.13", X86, &steps), vec![(2, true), (1, false)]);
}

#[test]
fn v5_13_integer_edges_negative_sleep_huge_residency_and_truncation() {
    let negative = [
        // 2000 > -5000: state 0 at once (tick kept: it polls).
        r#"{"sleep_length_ns": -5000, "residency_ns": 1000}"#,
        // u1: time_span 1000 >= -5000 -> U64_MAX; no target residency <= -5000: hit in bin 0.
        // State 0 disabled: C1 is idx0 and does not fit -5000 -> C1; -5000 < tick: keep.
        r#"{"sleep_length_ns": -5000, "disabled": [0], "entered": 1, "residency_ns": 1000}"#,
        // Candidate C6 (3 ms fits 400 us), no intercepts. 3 ms < tick: keep the tick, and
        // C6's 400 us > delta_tick -1 (a racy negative delta): shallower -> C1 (state 0 is
        // disabled, C1 is the last enabled state visited).
        r#"{"sleep_length_ns": 3000000, "delta_tick_ns": -1, "disabled": [0], "residency_ns": 1000}"#,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &negative),
        vec![(0, false), (1, false), (1, false)]
    );
    let huge = [
        // residency -1 is the kernel's u64 0xFFFF_FFFF_FFFF_FFFF: measured = that - 1000,
        // beyond every bin: a hit in bin 2, not an intercept -> (2, stop) next.
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": -1, "span_ns": 50000}"#,
        TIMER_10MS,
    ];
    assert_eq!(decide("teo@5.13", X86, &huge), vec![(2, true), (2, true)]);
    let truncated = [
        // C6 entered, 3999 < 100000: measured = 3999 / 2 = 1999 (truncated) -> bin 0, an
        // intercept in bin 0 -> POLL as in the poll_time_limit test's natural case. Rounding
        // up (2000) would put it in bin 1 and choose C1.
        r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 3999}"#,
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@5.13", X86, &truncated),
        vec![(2, true), (0, false)]
    );
    let late = [
        // A short residency but a span reaching the sleep length: woken by the timer.
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 50000, "span_ns": 10000000}"#,
        TIMER_10MS,
    ];
    assert_eq!(decide("teo@5.13", X86, &late), vec![(2, true), (2, true)]);
}

#[test]
fn v5_13_single_state_platform_may_stop_the_tick() {
    // No choice: state 0 with the 10 ms sleep length as the duration: WFI does not poll and
    // 10 ms >= tick -> stop; 1 ms < tick -> keep.
    let steps = [
        TIMER_10MS,
        r#"{"sleep_length_ns": 1000000, "residency_ns": 1000000}"#,
    ];
    assert_eq!(
        decide("teo@5.13", ONE_STATE, &steps),
        vec![(0, true), (0, false)]
    );
}

// ---------------------------------------------------------------------------------------------
// teo@6.3

/// The same steps for 5.13 and 6.3: only utilization differs.
const UTIL_STEPS: [&str; 4] = [
    // util 16 is not above 1024 >> 6 = 16: fresh (2, stop) for both.
    r#"{"sleep_length_ns": 10000000, "util": 16, "residency_ns": 10000000}"#,
    // u1: hit in bin 2 (H0 896, H2 1024, total 1920): no alternative, candidate 2.
    // 6.3, util 17 > 16: one enabled non-polling state shallower whose target residency fits
    // the 10 ms duration -> C1; the duration is not lowered: the tick is still stopped.
    r#"{"sleep_length_ns": 10000000, "util": 17, "residency_ns": 10000000}"#,
    // Latency 50 us caps at C1; utilized: below C1 only POLL, skipped -> C1 stays.
    r#"{"sleep_length_ns": 10000000, "util": 17, "latency_req_ns": 50000, "residency_ns": 10000000}"#,
    // 2000 > 1000: state 0 before utilization is even read.
    r#"{"sleep_length_ns": 1000, "util": 1024, "residency_ns": 1000}"#,
];

#[test]
fn v6_3_utilized_cpu_goes_one_state_shallower_and_still_stops_the_tick() {
    let util = vec![(2, true), (1, true), (1, true), (0, false)];
    assert_eq!(decide("teo@6.3", X86, &UTIL_STEPS), util);
    assert_eq!(decide("teo-util", X86, &UTIL_STEPS), util);
    // v5.13 ignores utilization.
    assert_eq!(
        decide("teo@5.13", X86, &UTIL_STEPS),
        vec![(2, true), (2, true), (1, true), (0, false)]
    );
}

#[test]
fn v6_3_threshold_is_the_capacity_shifted_by_six() {
    // capacity 160 -> threshold 160 >> 6 = 2: util 2 is not above it, util 3 is.
    let little = X86.replace(
        "\"tick_ns\": 4000000,",
        "\"tick_ns\": 4000000, \"capacity\": 160,",
    );
    let steps = [
        r#"{"sleep_length_ns": 10000000, "util": 2, "residency_ns": 10000000}"#,
        r#"{"sleep_length_ns": 10000000, "util": 3, "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.3", &little, &steps),
        vec![(2, true), (1, true)]
    );
    // capacity 63 -> threshold 0: any utilization at all counts.
    let tiny = X86.replace(
        "\"tick_ns\": 4000000,",
        "\"tick_ns\": 4000000, \"capacity\": 63,",
    );
    let steps = [
        r#"{"sleep_length_ns": 10000000, "util": 0, "residency_ns": 10000000}"#,
        r#"{"sleep_length_ns": 10000000, "util": 1, "residency_ns": 10000000}"#,
    ];
    assert_eq!(decide("teo@6.3", &tiny, &steps), vec![(2, true), (1, true)]);
}

#[test]
fn v6_3_two_state_platform_utilized_takes_the_first_non_polling_state() {
    let steps = [
        // Utilized, two states: WFI is enabled and does not poll -> WFI; 10 ms: stop.
        r#"{"sleep_length_ns": 10000000, "util": 100, "residency_ns": 10000000}"#,
        // Not utilized: normal selection. u1 hit in bin 1 (H0 896, H1 1024, total 1920),
        // sums@1 = (0, 896, 0): no alternative -> OFF.
        r#"{"sleep_length_ns": 10000000, "util": 0, "residency_ns": 10000000}"#,
        // Utilized with WFI disabled: OFF is the first enabled non-polling state.
        r#"{"sleep_length_ns": 10000000, "util": 100, "disabled": [0], "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.3", ARM2, &steps),
        vec![(0, true), (1, true), (1, true)]
    );
    assert_eq!(
        decide("teo@5.13", ARM2, &steps),
        vec![(1, true), (1, true), (1, true)]
    );
}

// ---------------------------------------------------------------------------------------------
// teo@6.6

#[test]
fn v6_6_first_select_and_the_slept_past_a_tick_bin() {
    let steps = [
        // u0 on the zeroed device: U64_MAX; X86's deepest (400 us) < tick: tick_hits decays
        // (0), but sleep_length 0 < tick -> ordinary hit in bin 0: H0 = 1024, total 1024.
        // Candidate = deepest enabled = 2, sums@2 = (0, 1024, 0), no alternative; 400 us is
        // not under 15 us: fetch the sleep length (10 ms); 400 us fits; tick intercepts 0 is
        // not > 1024/2 + 1024/8 = 640 -> duration 10 ms: stop.
        C1_50US,
        // u1: measured 49000, bin 1; sleep >= tick -> timer bin = 3 (virtual); 49000 < tick
        // -> intercept in bin 1: H0 896, I1 1024, R1 1, total 1920. sums@2 = (1024, 896, 1):
        // 2048 > 1920 - 896 -> i=1 qualifies, state_ok -> C1. State 0 polls and 2000 < 15000:
        // no sleep length fetched (it stays KTIME_MAX), tick kept.
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 5000000}"#,
        // u2: 5 ms < KTIME_MAX -> measured 5000000 - 1000 = 4999000, bin 2; KTIME_MAX >= tick
        // -> timer bin 3 and 4999000 >= tick -> tick_hits = 1024 (bins untouched but decayed):
        // H0 784, I1 896, tick_hits 1024, total = 784 + 896 + 0 + 1024 = 2704.
        // sums@2 = (896, 784, 1): 1792 > 2704 - 784 = 1920 no -> 2; fetch: 10 ms; tick
        // intercepts 896 > 1352 + 338 = 1690 no -> stop.
        TIMER_10MS,
    ];
    assert_eq!(
        decide("teo@6.6", X86, &steps),
        vec![(2, true), (1, false), (2, true)]
    );
}

#[test]
fn v6_6_sleep_length_is_not_fetched_for_shallow_choices() {
    let platform = parse_header(&X86.replace('\n', ""));
    let mut dev = Device::new(platform.state_count());
    let mut kernel = Kernel {
        sleep_length_ns: 10_000_000,
        delta_tick_ns: 4_000_000,
        latency_req_ns: 50_000,
        ..Kernel::default()
    };
    let mut teo = Teo66::new(&platform, &mut dev);
    let mut stop_tick = true;
    // Capped at C1 by the latency limit; POLL is state 0 and C1's 2 us < 15 us: done
    // without asking for the sleep length, tick kept.
    assert_eq!(
        teo.select(&platform, &mut dev, &mut kernel, &mut stop_tick),
        1
    );
    assert!(!stop_tick);
    assert_eq!(kernel.sleep_length_calls, 0);
    assert_eq!(teo.cpu.sleep_length_ns, crate::cpuidle::KTIME_MAX);
    // v5.13 always asks first.
    let mut v5 = Teo513::new(&platform, &mut dev);
    dev.last_state_idx = 0;
    let mut stop_tick = true;
    assert_eq!(
        v5.select(&platform, &mut dev, &mut kernel, &mut stop_tick),
        1
    );
    assert_eq!(kernel.sleep_length_calls, 1);
}

#[test]
fn v6_6_tick_wakeup_without_a_sleep_length_is_a_tick_hit() {
    let capped = r#"{"sleep_length_ns": 10000000, "latency_req_ns": 50000, "entered": 1, "residency_ns": 4000000, "got_tick": true}"#;
    let steps = [capped, capped, TIMER_10MS];
    // Steps 0, 1: capped at C1, no sleep length (KTIME_MAX) -> (1, keep).
    // The tick woke C1 after 4 ms: got_tick and KTIME_MAX > tick -> time_span = KTIME_MAX ->
    // U64_MAX -> timer bin 3 (virtual) and U64_MAX >= tick: tick_hits.
    // u1: H0 896, tick_hits 1024, total 1920; u2: H0 784, tick_hits 896 + 1024 = 1920,
    // total 2704. Step 2: candidate 2, sums@2 = (0, 784, 0); no intercepts anywhere -> 10 ms:
    // stop.
    assert_eq!(
        decide("teo@6.6", X86, &steps),
        vec![(1, false), (1, false), (2, true)]
    );
    // Without the tick flag: measured 4000000 - 1000 = 3999000 < tick -> intercepts in bin 2
    // (timer bin 3). u2: H0 784, I2 896 + 1024 = 1920, total 2704; candidate 2, sums@2 =
    // (0, 784, 0): no alternative; sleep 10 ms fits; but C6 < tick and the intercepts of all
    // bins, 1920 > 2704/2 + 2704/8 = 1690: duration = tick/2 -> keep the tick (400 us fits
    // the 4 ms delta).
    let natural = r#"{"sleep_length_ns": 10000000, "latency_req_ns": 50000, "entered": 1, "residency_ns": 4000000}"#;
    assert_eq!(
        decide("teo@6.6", X86, &[natural, natural, TIMER_10MS]),
        vec![(1, false), (1, false), (2, false)]
    );
}

/// An intercept in DEEP's bin 2: C6 entered, 1 ms -> measured 1000000 - 50000 = 950000.
const C6_1MS: &str = r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 1000000}"#;

#[test]
fn v6_6_expects_the_sleep_length_where_v5_13_expects_the_middle_of_a_bin() {
    // u1: intercept in bin 2 (timer bin 3): H0 896, I2 1024, total 1920; sums@3 =
    // (1024, 896, 1): 2048 > 1024 -> i=2 qualifies -> C6.
    // v5.13: duration = middle_of_bin(2) = 3200000 < tick -> keep the tick.
    // v6.6: the fetched 10 ms; tick intercepts 1024 > 960 + 240 = 1200 no -> stop.
    // u2: H0 784, I2 896 + 1024 = 1920, total 2704: C6 again in both; v6.6 now sees tick
    // intercepts 1920 > 1352 + 338 = 1690 -> tick/2: keep.
    let steps = [C6_1MS, C6_1MS, C6_1MS];
    assert_eq!(
        decide("teo@5.13", DEEP, &steps),
        vec![(3, true), (2, false), (2, false)]
    );
    assert_eq!(
        decide("teo@6.6", DEEP, &steps),
        vec![(3, true), (2, true), (2, false)]
    );
}

#[test]
fn v6_6_timer_before_the_candidate_steps_down_unless_the_tick_is_stopped() {
    let steps = [
        // Candidate C8; the 1 ms timer is before 6 ms: the first state fitting 1 ms is C6;
        // 1 ms < tick: keep, and 400 us fits delta 1 ms.
        r#"{"sleep_length_ns": 1000000, "residency_ns": 1000000}"#,
        // Tick stopped: C6 (< tick) is not state_ok -> C8 stays, stop_tick untouched.
        r#"{"sleep_length_ns": 1000000, "tick_stopped": true, "residency_ns": 1000000}"#,
    ];
    assert_eq!(decide("teo@6.6", DEEP, &steps), vec![(2, false), (3, true)]);
}

#[test]
fn v6_6_latency_limit_and_single_or_no_enabled_state() {
    let steps = [
        // latency 0: constraint_idx 0 -> state 0: tick kept, no sleep length.
        r#"{"sleep_length_ns": 10000000, "latency_req_ns": 0, "residency_ns": 10000000}"#,
        // latency 200 us: C6 (100 us) is the limit; 400 us >= 15 us: fetch, 10 ms: stop.
        r#"{"sleep_length_ns": 10000000, "latency_req_ns": 200000, "residency_ns": 10000000}"#,
        // Only C6 enabled: idx == idx0, duration = its 400 us < tick -> keep.
        r#"{"sleep_length_ns": 10000000, "disabled": [0, 1, 3], "residency_ns": 10000000}"#,
        // Only C8 enabled: duration = 6 ms >= tick -> stop.
        r#"{"sleep_length_ns": 10000000, "disabled": [0, 1, 2], "residency_ns": 10000000}"#,
        // None enabled: state 0, tick kept.
        r#"{"sleep_length_ns": 10000000, "disabled": [0, 1, 2, 3], "residency_ns": 10000000}"#,
    ];
    // The updates in between are all hits (span = sleep length when fetched; U64_MAX against
    // KTIME_MAX otherwise): no intercepts, no alternative search.
    assert_eq!(
        decide("teo@6.6", DEEP, &steps),
        vec![(0, false), (2, true), (2, false), (3, true), (0, false)]
    );
}

#[test]
fn v6_6_single_state_platform_always_keeps_the_tick() {
    let steps = [
        TIMER_10MS,
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.6", ONE_STATE, &steps),
        vec![(0, false), (0, false)]
    );
}

#[test]
fn v6_6_two_state_platform_utilized_paths() {
    let steps = [
        // WFI enabled, not polling, fine with a running tick -> WFI, tick kept.
        r#"{"sleep_length_ns": 10000000, "util": 100, "residency_ns": 10000000}"#,
        // Tick stopped: WFI (1 us) is not state_ok -> OFF with duration 1 ms; tick stopped:
        // returned as is.
        r#"{"sleep_length_ns": 10000000, "util": 100, "tick_stopped": true, "residency_ns": 10000000}"#,
        // OFF disabled -> WFI, tick kept.
        r#"{"sleep_length_ns": 10000000, "util": 100, "disabled": [1], "residency_ns": 10000000}"#,
        // WFI disabled -> OFF, duration 1 ms < tick; 1 ms <= delta_tick (tick/2, never fetched).
        r#"{"sleep_length_ns": 10000000, "util": 100, "disabled": [0], "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.6", ARM2, &steps),
        vec![(0, false), (1, true), (0, false), (1, false)]
    );
    // POLL + OFF (3 ms): POLL polls -> OFF with duration 3 ms < tick; 3 ms > the unfetched
    // delta_tick of tick/2 = 2 ms -> shallower: POLL.
    let poll = [r#"{"sleep_length_ns": 10000000, "util": 100, "residency_ns": 10000000}"#];
    assert_eq!(decide("teo@6.6", POLL_OFF, &poll), vec![(0, false)]);
}

#[test]
fn v6_6_utilized_cpu_steps_down_and_keeps_the_tick_where_v6_3_stopped_it() {
    // Step 1 of UTIL_STEPS: candidate 2, utilized -> C1 (state_ok); POLL is state 0 and
    // 2000 < 15000 -> no timer check, tick kept. Step 2: capped at C1, utilized: nothing
    // non-polling below -> C1, tick kept. Step 3: candidate C6 (X86 has no early exit any
    // more), utilized -> C1, kept. (v6.3 gave (1, stop), (1, stop), (0, keep).)
    assert_eq!(
        decide("teo@6.6", X86, &UTIL_STEPS),
        vec![(2, true), (1, false), (1, false), (1, false)]
    );
    // Tick stopped on DEEP: the step down to C6 (< tick) is refused -> C8 stays.
    let stopped = [
        r#"{"sleep_length_ns": 10000000, "util": 100, "tick_stopped": true, "residency_ns": 10000000}"#,
    ];
    assert_eq!(decide("teo@6.6", DEEP, &stopped), vec![(3, true)]);
}

/// On X86: C6 woke after 5 ms while the timer was 10 ms away: measured 5000000 - 50000 >=
/// tick -> a tick hit.
const PAST_TICK: &str = r#"{"sleep_length_ns": 10000000, "entered": 2, "residency_ns": 5000000}"#;

#[test]
fn v6_6_stale_ring_slot_wraps_recent_and_hides_recent_intercepts() {
    // Updates (u_k in step k's select, ring slot k mod 9):
    //   u1 (slot 1): POLL 1 us -> intercept in bin 0: R0 = 1, recent_idx[1] = 0.
    //   u2..u10: tick hits; u10 reuses slot 1: R0 -> 0, and the slot keeps "bin 0".
    //   u11..u15 (slots 2..6): intercepts in bin 1: R1 = 5.
    //   u16..u19: tick hits; u19 reuses slot 1 again: R0 -> 0 - 1 = 0xFFFFFFFF.
    let mut steps = vec![r#"{"sleep_length_ns": 10000000, "entered": 0, "residency_ns": 1000}"#];
    steps.extend(repeated(PAST_TICK, 9));
    steps.extend(repeated(C1_50US, 5));
    steps.extend(repeated(PAST_TICK, 4));
    steps.push(TIMER_10MS);
    // Metrics after u19 (d() applied once per update, pulses as listed):
    //   H0 = 1024 decayed 19 times = 84; I0 = 1024 decayed 18 times = 96;
    //   I1 = pulses at u11..u15, then 4 decays = 2341;
    //   tick_hits = pulses at u2..u10 and u16..u19 = 5116; total = 7637.
    // Step 19: candidate 2, sums@2 = (96 + 2341 = 2437, 84, 0xFFFFFFFF + 5 = 4 (u32 wrap)).
    // 2*2437 = 4874 > 7637 - 84 = 7553 no; recent 4 > 4 no: no alternative. Fetch: 10 ms;
    // tick intercepts 2437 > 3818 + 954 = 4772 no -> (2, stop). Without the stale slot R0
    // would be 0, recent 5 > 4, and i=1 (2*5 > 5) would have chosen C1 with the tick kept.
    let d = decide("teo@6.6", X86, &steps);
    assert_eq!(d.len(), 20);
    assert_eq!(d[19], (2, true));
}

#[test]
fn v6_6_tick_hit_update_leaves_its_ring_slot_stale() {
    let platform = parse_header(&X86.replace('\n', ""));
    let mut dev = Device::new(platform.state_count());
    let mut teo = Teo66::new(&platform, &mut dev);
    // Slot 0 remembers an intercept in bin 1 that is still counted.
    teo.cpu.recent_idx[0] = 1;
    teo.cpu.state_bins[1].recent = 1;
    // C6 for 5 ms against a 10 ms timer: measured 4950000 >= tick -> tick hit.
    teo.cpu.sleep_length_ns = 10_000_000;
    teo.cpu.time_span_ns = 5_000_000;
    dev.last_state_idx = 2;
    dev.last_residency_ns = 5_000_000;
    teo.update(&platform, &dev);
    assert_eq!(teo.cpu.state_bins[1].recent, 0);
    assert_eq!(teo.tick_hits, 1024);
    assert_eq!(
        teo.cpu.recent_idx[0], 1,
        "the tick-hit path does not rewrite the slot"
    );
    // Back on slot 0 (nine updates later in a real run): forgotten a second time.
    teo.cpu.next_recent_idx = 0;
    teo.update(&platform, &dev);
    assert_eq!(teo.cpu.state_bins[1].recent, u32::MAX);
    // tick_hits: 1024 - 128 + 1024 = 1920.
    assert_eq!(teo.tick_hits, 1920);
}

#[test]
fn v6_6_alternative_search_falls_back_past_unsuitable_and_disabled_states() {
    // u1 in each run: intercept in bin 2 -> H0 896, I2 1024, total 1920; sums@3 =
    // (1024, 896, 1): 2048 > 1024 -> i=2 qualifies (2*1024 > 1024).
    // Tick stopped: C6 (400 us < tick) is not state_ok -> the first suitable state, C8; the
    // fetched 10 ms fits 6 ms; the tick is stopped: returned as is.
    let stopped = [
        C6_1MS,
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.6", DEEP, &stopped),
        vec![(3, true), (3, true)]
    );
    // C6 disabled: the candidate loop still sums its bin; the search qualifies it and falls
    // back to C8; 10 ms: stop.
    let disabled = [
        C6_1MS,
        r#"{"sleep_length_ns": 10000000, "disabled": [2], "residency_ns": 10000000}"#,
    ];
    assert_eq!(
        decide("teo@6.6", DEEP, &disabled),
        vec![(3, true), (3, true)]
    );
}

#[test]
fn v6_6_negative_sleep_length_walks_down_to_the_shallowest_enabled_state() {
    let steps = [
        // Candidate C8, sleep length -5000: no target residency fits, the walk ends on the
        // last enabled state visited, POLL (state_ok with the tick running); tick kept.
        r#"{"sleep_length_ns": -5000, "residency_ns": 1000}"#,
        // u1: time_span 1000 >= -5000 -> U64_MAX, no residency <= -5000: hit in bin 0.
        // State 0 disabled: the walk from C8 ends on C1 (idx0 = 1); 2000 > delta_tick
        // -5000 would step further down, but C1 is idx0: kept as is.
        r#"{"sleep_length_ns": -5000, "disabled": [0], "residency_ns": 1000}"#,
    ];
    assert_eq!(
        decide("teo@6.6", DEEP, &steps),
        vec![(0, false), (1, false)]
    );
}

/// C6 is exactly a tick deep: with a stopped tick, bin 1's middle (2001000) and C1 (2 us) are
/// too short, bin 2's middle (12000000) and C6 itself (4 ms) are not.
const WIDE: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true},
 {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000},
 {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 4000000},
 {"name": "C10", "exit_latency_ns": 1000000, "target_residency_ns": 20000000}]}"#;

#[test]
fn stopped_tick_search_walks_past_too_shallow_states_to_the_first_suitable_one() {
    // Step 0 (fresh): candidate C10 (20 ms fits 50 ms) -> (3, stop). POLL for 1 us:
    // u1: intercept in bin 0: H0 896, I0 1024, R0 1, total 1920; sums@3 = (1024, 896, 1):
    // 2048 > 1920 - 896 = 1024 -> search. i=2: 2*0 > 1024 no, C6 suitable -> first
    // suitable = 2; i=1: no, C1 too shallow, but a suitable state was found: go on;
    // i=0: 2*1024 > 1024, POLL too shallow -> C6 (v5.13 duration 12 ms). Tick stopped.
    let stopped = [
        r#"{"sleep_length_ns": 50000000, "tick_stopped": true, "entered": 0, "residency_ns": 1000}"#,
        r#"{"sleep_length_ns": 50000000, "tick_stopped": true, "residency_ns": 50000000}"#,
    ];
    for governor in ["teo@5.13", "teo@6.6"] {
        assert_eq!(
            decide(governor, WIDE, &stopped),
            vec![(3, true), (2, true)],
            "{governor}"
        );
    }
    // With the tick running every state is suitable: i=0 wins -> POLL, tick kept.
    let running = [
        r#"{"sleep_length_ns": 50000000, "entered": 0, "residency_ns": 1000}"#,
        r#"{"sleep_length_ns": 50000000, "residency_ns": 50000000}"#,
    ];
    for governor in ["teo@5.13", "teo@6.6"] {
        assert_eq!(
            decide(governor, WIDE, &running),
            vec![(3, true), (0, false)],
            "{governor}"
        );
    }
}
