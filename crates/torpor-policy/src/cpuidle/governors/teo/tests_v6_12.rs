//! Hand-derived idle-decide sequences for `teo@6.12`, `teo@6.14`, `teo` (`teo@6.19`) and
//! `teo@7.0`.
//!
//! Every expected decision and metric below is worked out from the kernel's arithmetic in the
//! comment beside it; none was copied from a run. Notation: `h0` = hits of bin 0, `i1` =
//! intercepts of bin 1, `T` = total, `S` = short_idles, `TI` = tick_intercepts, `TH` = tick_hits,
//! `TT` = total_tick; "d(x)" is one decay (x - x>>3). Decisions are written (idx, stop_tick).
//!
//! Platforms (tick 4 ms, so 5/8-of-total tests use T/2 + T/8):
//! - A (x86-like): POLL 0/0 polling, C1 2000/2000, C6 100000/600000 (exit/target, ns).
//! - B (Arm-like, no polling state): WFI 1000/1000, CORE 10000/12000, CLUSTER 400000/2000000.
//! - E and F (v7.0 tests, below): equal deep targets; five states.
//!
//! Tests that need a learned state set it on a fresh governor with `last_state_idx = -1`
//! (`learned!`), so the first select runs no update.

use super::common_v6_12::{intercepts_dominate, Bin, Scan};
use super::v6_12::Teo612;
use super::v6_14::{self, Teo614};
use super::v6_19::{self, Teo619};
use super::v7_0::Teo70;
use crate::cpuidle::decide::text::{decisions, parse_header, sequence};
use crate::cpuidle::decide::{Step, Stepper};
use crate::cpuidle::{Device, Governor, Platform};

const A: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000}, {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 600000}]}"#;
const B: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [{"name": "WFI", "exit_latency_ns": 1000, "target_residency_ns": 1000}, {"name": "CORE", "exit_latency_ns": 10000, "target_residency_ns": 12000}, {"name": "CLUSTER", "exit_latency_ns": 400000, "target_residency_ns": 2000000}]}"#;
const ONE: &str =
    r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 0, "target_residency_ns": 0}]}"#;

const ALL: [&str; 3] = ["teo@6.12", "teo@6.14", "teo"];

/// Runs a sequence through the idle-decide reader, as `torpor idle decide` does.
fn decide(name: &str, header: &str, steps: &[&str]) -> Vec<(usize, bool)> {
    let text = format!("{header}\n{}\n", steps.join("\n"));
    decisions(name, &text)
}

/// One concrete governor driven as the cpuidle core drives it ([`Stepper`], the protocol
/// every sequence runs through), so a test can look at the governor's state.
struct Drive<G>(Stepper<G>);

impl<G: Governor> Drive<G> {
    fn new(header: &str, build: fn(&Platform, &mut Device) -> G) -> Self {
        Drive(Stepper::with(parse_header(header), build))
    }

    fn g(&self) -> &G {
        self.0.governor()
    }

    fn g_mut(&mut self) -> &mut G {
        self.0.parts_mut().1
    }

    fn step(&mut self, line: &str) -> (usize, bool) {
        let s: Step = serde_json::from_str(line).unwrap();
        self.0.check(&s).unwrap();
        let d = self.0.run(&s);
        (d.idx, d.stop_tick)
    }

    fn steps(&mut self, lines: &[&str]) -> Vec<(usize, bool)> {
        lines.iter().map(|l| self.step(l)).collect()
    }
}

fn hits(b: &[Bin]) -> Vec<u32> {
    b[..3].iter().map(|b| b.hits).collect()
}

fn intercepts(b: &[Bin]) -> Vec<u32> {
    b[..3].iter().map(|b| b.intercepts).collect()
}

/// Sequence L (platform A, 10 ms to the next timer every time): an idle period cut short at
/// 50 us in C6, two at 30 us in C1, then a 3 ms one in C1.
const L: [&str; 5] = [
    r#"{"sleep_length_ns": 10000000, "residency_ns": 50000}"#,
    r#"{"sleep_length_ns": 10000000, "residency_ns": 30000}"#,
    r#"{"sleep_length_ns": 10000000, "residency_ns": 30000}"#,
    r#"{"sleep_length_ns": 10000000, "residency_ns": 3000000}"#,
    r#"{"sleep_length_ns": 10000000, "residency_ns": 3000000}"#,
];

#[test]
fn the_names_resolve_to_the_three_variants() {
    for (name, want) in [
        ("teo@6.12", "teo@6.12"),
        ("teo@6.14", "teo@6.14"),
        ("teo", "teo"),
        ("teo@6.19", "teo"),
    ] {
        let text = format!("{A}\n");
        let (stepper, _) = sequence(name, &text);
        assert_eq!(stepper.governor_name(), want);
    }
}

/// A variant chosen by name (as `idle decide` does) decides as the concrete governor does.
#[test]
fn the_driver_matches_the_sequence_reader() {
    let mut steps: Vec<&str> = L.to_vec();
    steps.push(r#"{"sleep_length_ns": -7, "entered": -1, "residency_ns": 9, "got_tick": true}"#);
    steps.push(r#"{"sleep_length_ns": 900000, "entered": 0, "residency_ns": 70000, "poll_time_limit": true, "disabled": [1]}"#);
    steps.push(r#"{"sleep_length_ns": 9000000, "tick_stopped": true, "residency_ns": 5000000}"#);
    let a = decide("teo@6.12", A, &steps);
    assert_eq!(a, Drive::new(A, Teo612::new).steps(&steps));
    let b = decide("teo@6.14", A, &steps);
    assert_eq!(b, Drive::new(A, Teo614::new).steps(&steps));
    let c = decide("teo", A, &steps);
    assert_eq!(c, Drive::new(A, Teo619::new).steps(&steps));
}

/// The device starts zeroed (last_state_idx 0, residency 0), so the first select runs one
/// update with the zeroed sleep length 0.
#[test]
fn first_select_learns_from_the_zeroed_device() {
    // Platform B, CLUSTER disabled, 10 ms to the next timer.
    let step = [r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [2]}"#];

    // 6.12: time_span 0 >= sleep_length 0 -> measured = U64_MAX. No target <= 0, so
    // idx_timer = idx_duration = 0: a hit, h0 = 1024. CLUSTER (2 ms) < tick: TH stays 0 and
    // TICK <= 0 fails. T = 0 + 1024. Candidate CORE (1): 2*0 > 1024 - 1024 fails; no polling
    // state 0, so the sleep length is fetched: 12000 <= 10 ms; TI sum 0 > 640 fails;
    // end: not polling, 10 ms >= 4 ms -> (1, stop).
    let mut d = Drive::new(B, Teo612::new);
    assert_eq!(d.steps(&step), vec![(1, true)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 1);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().total),
        (vec![1024, 0, 0], 1024)
    );

    // 6.14: lat = 1000 (WFI, the zeroed last_state_idx), measured 0 < 1000 -> 0/2 = 0 and
    // S += 1024. Hit in bin 0; T = 0 - 0 + 1024. Candidate CORE: 12000 < 15000 and
    // 2*S = 2048 >= T = 1024 -> returned without the sleep length, tick kept.
    let mut d = Drive::new(B, Teo614::new);
    assert_eq!(d.steps(&step), vec![(1, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 0);
    assert_eq!(d.g().sleep_length_ns, i64::MAX);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().total, d.g().short_idles),
        (vec![1024, 0, 0], 1024, 1024)
    );

    // 6.19: the same arithmetic (S = 1024, h0 = 1024, T = 0 + 1024) and the same skip.
    let mut d = Drive::new(B, Teo619::new);
    assert_eq!(d.steps(&step), vec![(1, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 0);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().total, d.g().short_idles),
        (vec![1024, 0, 0], 1024, 1024)
    );

    // All states enabled on A: candidate C6 (600 us, not short), fetched 10 ms -> (2, stop).
    for name in ALL {
        assert_eq!(decide(name, A, &[L[0]]), vec![(2, true)], "{name}");
    }
}

#[test]
fn learning_over_several_steps_differs_between_generations() {
    // 6.12.
    // s0: (2, stop) as in the first-select test; time_span = 50000 - 0.
    // s1 update: 50000 < 10 ms; lat 100000 > 50000 -> measured 25000. h0 d(1024) = 896, T 896.
    //   Timer bin 2, wake-up bin 1 (2000 <= 25000 < 600000). C6 < tick: TH 0, TICK <= 10 ms ->
    //   idx_timer = 3, TICK <= 25000 fails -> intercept: i1 = 1024, T = 1920.
    //   select: idx_int = i0+i1 = 1024, idx_hit = 896: 2048 > 1920-896 = 1024 -> lookup:
    //   i=1: 2*1024 > 1024 -> C1. State 0 polls and 2000 < 15000 -> (1, keep), no sleep length.
    // s2 update: span 30000 < KTIME_MAX; measured 30000 - 1000 = 29000. h0 784, i1 d(1024) = 896,
    //   T = 1680; idx_timer 3, wake-up bin 1 -> i1 = 1920, T = 2704.
    //   select: idx_int 1920, idx_hit 784: 3840 > 1920 -> C1 -> polling skip -> (1, keep).
    // s3 update: h0 686, i1 1680 -> 2704, T = 686 + 1680 + 1024 = 3390 -> (1, keep) again.
    // s4 update: measured 3000000 - 1000 = 2999000, sleep length KTIME_MAX: idx_timer 3,
    //   wake-up bin 2 (600000 <= 2999000), TICK <= 2999000 fails -> intercept i2 = 1024.
    //   h0 601, i1 2366, T = 601 + 2366 + 1024 = 3991. idx_int 2366, idx_hit 601:
    //   4732 > 3390 -> C1 -> (1, keep).
    let mut d = Drive::new(A, Teo612::new);
    assert_eq!(
        d.steps(&L),
        vec![(2, true), (1, false), (1, false), (1, false), (1, false)]
    );
    assert_eq!(hits(&d.g().state_bins), vec![601, 0, 0]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 2366, 1024]);
    assert_eq!((d.g().total, d.g().tick_hits), (3991, 0));
    assert_eq!(d.0.kernel().sleep_length_calls, 1);

    // 6.14.
    // s1 update: S d(1024) = 896, measured 25000 (halved: lat 100000 > 50000) -> S = 1920.
    //   h0 896; timer bin 2, wake-up bin 1 -> i1 = 1024; TICK <= 25000 fails (TI 0).
    //   T = d(1024) + 1024 = 1920. select: 2048 > 1920-896 -> C1; 2000 < 15000 and
    //   2*S = 3840 >= 1920 -> (1, keep), no sleep length.
    // s2 update: S d(1920) = 1680 (29000 is not short). h0 784, i1 896 + 1024 = 1920,
    //   T = 1920 - 240 + 1024 = 2704. 3840 > 2704-784 -> C1; 3360 >= 2704 -> (1, keep).
    // s3 update: S = 1470; h0 686; i1 1680 + 1024 = 2704; T = 2704 - 338 + 1024 = 3390.
    //   5408 > 3390-686 -> C1; 2*1470 = 2940 < 3390 and no latency limit: fetch 10 ms;
    //   TI 0 > 1695 + 423 fails -> end: 10 ms >= tick -> (1, stop).
    // s4 update: S = 1287; measured 2999000 with the 10 ms sleep length -> hit in bin 2:
    //   h2 = 1024; h0 601; i1 2366; T = 3390 - 423 + 1024 = 3991. idx_int 2366, idx_hit 601:
    //   4732 > 3390 -> C1; 2574 < 3991 -> fetch -> (1, stop).
    let mut d = Drive::new(A, Teo614::new);
    assert_eq!(
        d.steps(&L),
        vec![(2, true), (1, false), (1, false), (1, true), (1, true)]
    );
    assert_eq!(hits(&d.g().state_bins), vec![601, 0, 1024]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 2366, 0]);
    assert_eq!(
        (d.g().total, d.g().short_idles, d.g().tick_intercepts),
        (3991, 1287, 0)
    );

    // 6.19.
    // s1 update: S 896 -> 1920; measured 25000; h0 896; T = 896 + 1024 = 1920. Intercept in
    //   bin 1 and 25000 <= tick -> TI = 1024. select -> (1, keep) as 6.14.
    // s2 update: S 1680; h0 784; i1 896 -> 1920; T = 784 + 896 + 1024 = 2704;
    //   TI d(1024) = 896 + 1024 = 1920. -> (1, keep).
    // s3 update: S 1470; h0 686; i1 1680 -> 2704; T = 686 + 1680 + 1024 = 3390;
    //   TI 1680 + 1024 = 2704. select: C1; 2940 < 3390 -> fetch 10 ms; 2000 < tick and
    //   TI 2704 > 1695 + 423 = 2118 -> plan half a tick (2 ms): keep the tick; C1 fits
    //   delta 4 ms -> (1, keep).
    // s4 update: S 1287; hit in bin 2 (10 ms sleep length, 2999000 measured): h2 1024;
    //   h0 601; i1 2366; T = 601 + 2366 + 1024 = 3991; TI d(2704) = 2366.
    //   select: 4732 > 3991-601 -> lookup i=1 -> C1; fetch; TI 2366 > 1995 + 498 = 2493
    //   fails -> (1, stop).
    let mut d = Drive::new(A, Teo619::new);
    assert_eq!(
        d.steps(&L),
        vec![(2, true), (1, false), (1, false), (1, false), (1, true)]
    );
    assert_eq!(hits(&d.g().state_bins), vec![601, 0, 1024]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 2366, 0]);
    assert_eq!(
        (d.g().total, d.g().short_idles, d.g().tick_intercepts),
        (3991, 1287, 2366)
    );

    // The registry builds the same machines.
    assert_eq!(decide("teo@6.12", A, &L)[3], (1, false));
    assert_eq!(decide("teo@6.14", A, &L)[3], (1, true));
    assert_eq!(decide("teo@6.19", A, &L)[3], (1, false));
}

#[test]
fn early_returns_without_a_choice() {
    // One state: state 0, tick kept, whatever the inputs (and the updates run on one bin).
    let one = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000}"#,
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 5000000}"#,
    ];
    // Every state disabled: state 0, tick kept.
    let none = [r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [0, 1, 2]}"#];
    // Only C6 enabled: idx0 = idx = 2, duration = its 600 us target < tick -> not stopped; the
    // sleep length is never fetched. With the tick stopped, end returns it with stop_tick.
    let only_c6 = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [0, 1]}"#,
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 5000000, "disabled": [0, 1]}"#,
    ];
    // Only POLL enabled: same path, polling; with the tick stopped it still returns stop_tick
    // (the `end:` label checks tick_nohz_tick_stopped() first).
    let only_poll = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [1, 2]}"#,
        r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 5000000, "disabled": [1, 2]}"#,
    ];
    for name in ALL {
        assert_eq!(
            decide(name, ONE, &one),
            vec![(0, false), (0, false)],
            "{name}"
        );
        assert_eq!(decide(name, A, &none), vec![(0, false)], "{name}");
        assert_eq!(
            decide(name, A, &only_c6),
            vec![(2, false), (2, true)],
            "{name}"
        );
        assert_eq!(
            decide(name, A, &only_poll),
            vec![(0, false), (0, true)],
            "{name}"
        );
    }
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&only_c6);
    assert_eq!(d.0.kernel().sleep_length_calls, 0);
}

/// Intercepts in bin 0 pull the choice to state 0: v6.12 still fetches the sleep length to
/// learn from it ("Don't count non-existent intercepts"); v6.14+ skip it when idles are short.
#[test]
fn intercepts_down_to_state_0() {
    let steps = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 1000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 1000}"#,
    ];
    // 6.12 s1 update: 1000 < lat 100000 -> measured 500; timer bin 3 (virtual, C6 < tick),
    // wake-up bin 0 -> i0 = 1024; h0 896; T = 896 + 1024 = 1920.
    // select: idx_int (C1) = 1024, (C6) = 1024 + i1 0; idx_hit = 896. 2048 > 1920-896 ->
    // lookup: i=1: 2*0 > 1024 no, C1 suitable; i=0: 2*1024 > 1024 -> POLL. idx 0 and the
    // candidate was 2 -> fetch the sleep length, keep the tick: (0, keep).
    let mut d = Drive::new(A, Teo612::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (0, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 2);
    assert_eq!(d.g().sleep_length_ns, 10_000_000);

    // 6.14 s1: S = 896 + 1024 (500 is short); same bins -> POLL; 2*1920 >= T 1920 -> skip.
    let mut d = Drive::new(A, Teo614::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (0, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 1);
    assert_eq!(d.g().sleep_length_ns, i64::MAX);

    // 6.19 s1: i0 = 1024, TI = 1024 (500 <= tick); lookup i=1: sum 0, idx 1, 0 > 1024 no;
    // i=0: sum 1024, idx 0, 2048 > 1024 stop. Short idles dominate -> (0, keep), no fetch.
    let mut d = Drive::new(A, Teo619::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (0, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 1);
}

#[test]
fn latency_limits() {
    // latency_req 0: no state past 0 has exit latency <= 0 -> constraint_idx 0 -> state 0,
    // tick kept, no sleep length (6.12: "idx == 0 -> out_tick"; 6.14+: 0 < 7500).
    let zero = [r#"{"sleep_length_ns": 10000000, "latency_req_ns": 0, "residency_ns": 100}"#];
    for name in ALL {
        assert_eq!(decide(name, A, &zero), vec![(0, false)], "{name}");
        assert_eq!(decide(name, B, &zero), vec![(0, false)], "{name}");
    }
    // Platform B, s0: candidate CLUSTER, fetched 10 ms -> (2, stop); 5 ms in CLUSTER:
    // measured 5000000 - 200000 = 4800000 (not short), hit in bin 2.
    // 6.14 s1 update: S d(1024) = 896, h0 896, h2 1024, T = 1024 - 128 + 1024 = 1920;
    // 2*896 = 1792 < 1920: short idles no longer dominate.
    // s1 with latency 7499: CORE's 10000 > 7499 -> constraint 0 -> state 0; 7499 < 7500 ->
    // out_tick without the sleep length. With 7500 the sleep length is fetched, then state 0
    // returns with the tick kept. With 10000, CORE meets the limit: constraint 1 -> idx 1,
    // 12000 < 15000 but neither test holds -> fetch; 12000 <= 10 ms; TI 0 -> 10 ms >= tick ->
    // (1, stop).
    let s0 = r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000}"#;
    for (limit, want, calls) in [
        (7499, (0, false), 1),
        (7500, (0, false), 2),
        (10000, (1, true), 2),
    ] {
        let s1 = format!(
            r#"{{"sleep_length_ns": 10000000, "latency_req_ns": {limit}, "residency_ns": 5000000}}"#
        );
        let mut d = Drive::new(B, Teo614::new);
        assert_eq!(d.steps(&[s0, &s1]), vec![(2, true), want], "limit {limit}");
        assert_eq!(d.0.kernel().sleep_length_calls, calls, "limit {limit}");
        let mut d = Drive::new(B, Teo619::new);
        assert_eq!(d.steps(&[s0, &s1]), vec![(2, true), want], "limit {limit}");
        assert_eq!(d.0.kernel().sleep_length_calls, calls, "limit {limit}");
    }
    // 6.12 has no latency skip: idx 0 after the clamp returns before the fetch.
    let s1 = r#"{"sleep_length_ns": 10000000, "latency_req_ns": 7500, "residency_ns": 5000000}"#;
    let mut d = Drive::new(B, Teo612::new);
    assert_eq!(d.steps(&[s0, s1]), vec![(2, true), (0, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 1);
}

#[test]
fn a_kept_tick_caps_the_state_at_delta_tick() {
    // First select on A: candidate C6, sleep 1 ms (fits 600 us), so no step down; 1 ms < tick
    // -> keep the tick; C6's 600 us > delta 300 us -> the deepest enabled state fitting
    // 300 us: C1. With delta 700 us C6 stays.
    let s = [r#"{"sleep_length_ns": 1000000, "delta_tick_ns": 300000, "residency_ns": 1}"#];
    let t = [r#"{"sleep_length_ns": 1000000, "delta_tick_ns": 700000, "residency_ns": 1}"#];
    for name in ALL {
        assert_eq!(decide(name, A, &s), vec![(1, false)], "{name}");
        assert_eq!(decide(name, A, &t), vec![(2, false)], "{name}");
    }
}

/// A short sleep length with the tick stopped: v6.12 and v6.14 refuse the fitting state below a
/// tick (teo_state_ok); v6.19 dropped that check ("Drop misguided target residency check").
#[test]
fn stopped_tick_and_a_short_sleep_length() {
    // First select on A: C6's 600 us > 100 us -> deepest fitting below is C1 (2 us); v6.12/14:
    // C1 < tick with the tick stopped -> keep C6. End: tick stopped -> stop_tick stays.
    let s = [r#"{"sleep_length_ns": 100000, "tick_stopped": true, "residency_ns": 1}"#];
    assert_eq!(decide("teo@6.12", A, &s), vec![(2, true)]);
    assert_eq!(decide("teo@6.14", A, &s), vec![(2, true)]);
    assert_eq!(decide("teo", A, &s), vec![(1, true)]);
}

#[test]
fn stopped_tick_keeps_the_intercept_lookup_off_shallow_states() {
    // L's s2 with the tick stopped. State after the s2 update (learning test):
    // 6.12 h0 784 i1 1920 T 2704; lookup i=1: 3840 > 1920 but C1 < tick -> first_suitable C6.
    //   Fetch 10 ms; tick intercept sum i0+i1+i2 = 1920 > 1352 + 338 -> half a tick, but the
    //   tick is stopped -> (2, stop).
    // 6.14: same lookup -> C6; 2*S 3360 >= 2704 but C6 is not shallow -> fetch -> (2, stop).
    // 6.19: min_idx walks past POLL and C1 (< tick) to 2 = idx: no lookup -> C6 -> (2, stop).
    let mut steps = L[..3].to_vec();
    steps[2] = r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 30000}"#;
    for name in ALL {
        assert_eq!(
            decide(name, A, &steps),
            vec![(2, true), (1, false), (2, true)],
            "{name}"
        );
    }
}

/// Disabled states keep their bins: their events count in the sums, and each lookup treats a
/// disabled state its own way.
#[test]
fn disabled_states_in_the_intercept_lookup() {
    // L's s2 with C1 disabled (s2's update is unchanged: it learns from s1).
    // 6.12: idx_int = i0 + i1 = 1920 (C1's bin counted though disabled), idx_hit 784;
    //   3840 > 1920 -> lookup i=1: 3840 > 1920 but C1 disabled -> first_suitable C6. Fetch;
    //   tick intercept sum 1920 > 1690 -> half a tick: keep the tick; C6 (600 us) fits
    //   delta 4 ms -> (2, keep).
    // 6.14: lookup -> C6; not shallow -> fetch; TI 0 -> (2, stop).
    // 6.19: i=1 disabled, skipped; i=0: sum 1920, POLL, 3840 > 1920 -> POLL; short idles
    //   dominate (3360 >= 2704) -> (0, keep).
    let mut steps = L[..3].to_vec();
    steps[2] = r#"{"sleep_length_ns": 10000000, "residency_ns": 30000, "disabled": [1]}"#;
    assert_eq!(decide("teo@6.12", A, &steps)[2], (2, false));
    assert_eq!(decide("teo@6.14", A, &steps)[2], (2, true));
    assert_eq!(decide("teo", A, &steps)[2], (0, false));
}

#[test]
fn rejected_entries_teach_nothing() {
    // s0 (first select, C6) is rejected: no reflect, last_state_idx stays -1, so s1 runs no
    // update: the state stays what the zeroed-device update left (h0 1024, T 1024).
    let steps = [
        r#"{"sleep_length_ns": 10000000, "entered": -1, "residency_ns": 1000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 1000}"#,
    ];
    let mut d = Drive::new(A, Teo612::new);
    assert_eq!(d.steps(&steps[..1]), vec![(2, true)]);
    assert_eq!(d.steps(&steps[1..]), vec![(2, true)]);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().total),
        (vec![1024, 0, 0], 1024)
    );
    let mut d = Drive::new(A, Teo614::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true)]);
    assert_eq!((d.g().total, d.g().short_idles), (1024, 1024));
    let mut d = Drive::new(A, Teo619::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true)]);
    assert_eq!((d.g().total, d.g().short_idles), (1024, 1024));
    // Only s1 reflected: the next update learns from it (1000 in C6 -> intercept in bin 0).
    d.step(steps[1]);
    assert_eq!(intercepts(&d.g().state_bins), vec![1024, 0, 0]);
}

#[test]
fn the_entered_state_supplies_the_exit_latency() {
    // s0 selects C6 but the driver enters C1 for 30 us: lat = 2000 (not C6's 100000), so
    // measured = 30000 - 1000 = 29000: not short (with C6's latency it would be halved and
    // short). Timer bin 2, wake-up bin 1 -> intercept.
    let steps = [
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 30000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 30000}"#,
    ];
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    // S = d(1024) = 896, nothing added; i1 = 1024.
    assert_eq!(
        (d.g().short_idles, intercepts(&d.g().state_bins)),
        (896, vec![0, 1024, 0])
    );
    let mut d = Drive::new(A, Teo619::new);
    d.steps(&steps);
    assert_eq!(
        (d.g().short_idles, intercepts(&d.g().state_bins)),
        (896, vec![0, 1024, 0])
    );
}

/// A poll time-out (and, before v6.19, a tick with more than a tick to the next timer) makes
/// the wake-up artificial. Before v6.19 the `||` means the tick flag is not consumed when the
/// poll limit fired, so it stays set for the next reflect.
#[test]
fn poll_time_limit_and_the_unread_tick_flag() {
    // s0: C6 chosen, the driver polls instead (entered 0), hits the poll limit, and the tick
    // fired. s1: C6 chosen, C1 entered for 30 us, no new tick.
    let steps = [
        r#"{"sleep_length_ns": 10000000, "entered": 0, "residency_ns": 250000, "poll_time_limit": true, "got_tick": true}"#,
        r#"{"sleep_length_ns": 10000000, "entered": 1, "residency_ns": 30000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 30000}"#,
    ];
    // 6.14 s0 reflect: poll limit -> artificial, poll_time_limit cleared, tick flag unread.
    // s1 update: S 896 (artificial: no measurement); measured U64_MAX -> hit in timer bin 2:
    //   h2 1024, h0 896, T 1920. select: (2, stop) (no intercepts).
    // s1 reflect: the stale tick flag reads true and 10 ms > tick -> artificial again.
    // s2 update: S 784; hit in bin 2: h2 896 + 1024 = 1920; C1's 29000 never lands in i1.
    let mut d = Drive::new(A, Teo614::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true), (2, true)]);
    assert_eq!(hits(&d.g().state_bins), vec![784, 0, 1920]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 0, 0]);
    assert_eq!(
        (d.g().short_idles, d.0.device().poll_time_limit),
        (784, false)
    );
    assert!(!d.0.kernel().got_idle_tick);

    // 6.12: time_span = sleep length (10 ms) at both reflects -> measured U64_MAX; C6 < tick
    // and TICK <= 10 ms -> virtual timer bin, TICK <= U64_MAX -> tick hits:
    // TH 1024, then d(1024) + 1024 = 1920; bins only decay.
    let mut d = Drive::new(A, Teo612::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true), (2, true)]);
    assert_eq!(d.g().tick_hits, 1920);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 0, 0]);
    // T = h0 d(d(1024)) = 784 + TH 1920.
    assert_eq!(d.g().total, 784 + 1920);

    // 6.19: the flag is read at s0's reflect (tick_wakeup), and the poll limit waits in the
    // device for s1's update: S 896; measured S64_MAX -> hit in bin 2; T = 896 + 1024 = 1920;
    // TT = 1024, 3*1024 > 2*1920 fails -> plain hit h2 = 1024. s1 reflect: no tick.
    // s2 update: S 784; measured 29000 -> intercept in bin 1, TI 1024; T = 784 + 896 + 1024.
    //   select: idx_int 1024, idx_hit 784: 2048 > 2704 - 784 = 1920 -> lookup i=1: C1,
    //   2048 > 1024 stop. 2*784 < 2704 -> fetch; TI 1024 > 1352 + 338 fails -> (1, stop).
    let mut d = Drive::new(A, Teo619::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true), (1, true)]);
    assert_eq!(hits(&d.g().state_bins), vec![784, 0, 896]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 1024, 0]);
    assert_eq!(
        (d.g().total, d.g().total_tick, d.g().tick_intercepts),
        (2704, 896, 1024)
    );
}

#[test]
fn tick_wake_ups() {
    // s0: C6 for 5 ms, tick fired; s1: C6 for 100 us, tick fired; s2: anything.
    let steps = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "got_tick": true}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 100000, "got_tick": true}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 100000}"#,
    ];
    // 6.19 s1 update: S 896; measured 4950000; h0 896; hit in bin 2... but first the tick:
    //   T = 896 + 1024 = 1920; TT = 1024; 3072 > 3840 fails -> hit h2 = 1024.
    // s2 update: S 784; measured 50000: timer bin 2, wake-up bin 1. h0 784, h2 896,
    //   T = 1680 + 1024 = 2704; TT = 896 + 1024 = 1920; 5760 > 5408 -> tick wake-ups
    //   dominate: h2 = 1920 and nothing else (no intercept, no TI).
    let mut d = Drive::new(A, Teo619::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true), (2, true)]);
    assert_eq!(hits(&d.g().state_bins), vec![784, 0, 1920]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 0, 0]);
    assert_eq!(
        (d.g().total, d.g().total_tick, d.g().tick_intercepts),
        (2704, 1920, 0)
    );

    // 6.14: a tick with 10 ms to the timer is a safety net: both wake-ups measured U64_MAX,
    // hits in bin 2: h2 1024, then 896 + 1024.
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    assert_eq!(hits(&d.g().state_bins), vec![784, 0, 1920]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 0, 0]);

    // 6.12: the same safety net lands in tick_hits (virtual bin): TH 1024, then 1920.
    let mut d = Drive::new(A, Teo612::new);
    d.steps(&steps);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().tick_hits),
        (vec![784, 0, 0], 1920)
    );

    // A tick with at most a tick to the timer is genuine in 6.14: 2 ms sleep length, 100 us
    // in C6 -> measured 50000: timer bin 2, wake-up bin 1 -> intercept.
    let genuine = [
        r#"{"sleep_length_ns": 4000000, "residency_ns": 100000, "got_tick": true}"#,
        r#"{"sleep_length_ns": 4000000, "residency_ns": 100000}"#,
    ];
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&genuine);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 1024, 0]);
    assert!(!d.g().artificial_wakeup);
}

/// v6.12 measures the time from select to reflect (`span_ns`) against the sleep length: at or
/// past it the wake-up was the timer's.
#[test]
fn time_span_against_the_sleep_length() {
    for (span, want_i1, want_th) in [(9_999_999, 1024, 0), (10_000_000, 0, 1024)] {
        let s0 =
            format!(r#"{{"sleep_length_ns": 10000000, "residency_ns": 50000, "span_ns": {span}}}"#);
        let mut d = Drive::new(A, Teo612::new);
        d.steps(&[&s0, L[1]]);
        // Below: measured 25000 -> intercept i1. At: U64_MAX -> virtual bin, TH += 1024.
        assert_eq!(
            (d.g().state_bins[1].intercepts, d.g().tick_hits),
            (want_i1, want_th),
            "{span}"
        );
    }
}

#[test]
fn negative_sleep_length() {
    // First select on A with the timer "in the past" (-5 ns; delta = min(-5, tick) = -5):
    // C6 > -5 -> no enabled state below fits -> POLL (the shallowest walked); -5 < tick ->
    // keep the tick; idx 0 = idx0 -> (0, keep).
    let steps = [
        r#"{"sleep_length_ns": -5, "entered": 0, "residency_ns": 1000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 1000}"#,
    ];
    for name in ALL {
        assert_eq!(decide(name, A, &steps)[0], (0, false), "{name}");
    }
    // Next update: no target <= -5, so idx_timer = idx_duration = 0: a hit in bin 0.
    // 6.14: h0 = 896 + 1024 = 1920; S = 896 + 1024 (1000 is short).
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().short_idles),
        (vec![1920, 0, 0], 1920)
    );
    // 6.12: time_span 1000 >= -5 -> measured U64_MAX, but still no target <= -5 and
    // TICK <= -5 fails -> hit in bin 0.
    let mut d = Drive::new(A, Teo612::new);
    d.steps(&steps);
    assert_eq!(hits(&d.g().state_bins), vec![1920, 0, 0]);
}

/// A residency of -1 (a clock going backwards) is U64_MAX in `last_residency_ns`: before v6.19
/// it compares as a huge u64, in v6.19 it is the s64 -1, halved toward zero to 0.
#[test]
fn a_wrapped_residency() {
    let steps = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": -1}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 100}"#,
    ];
    // 6.14: measured U64_MAX - 50000 >= every target -> hit in the timer bin 2; not short.
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().short_idles),
        (vec![896, 0, 1024], 896)
    );
    // 6.19: -1 < lat 100000 -> -1/2 = 0 (not -1): short; 0 <= target 0 -> wake-up bin 0,
    // timer bin 2 -> intercept in bin 0, and 0 <= tick -> TI 1024.
    let mut d = Drive::new(A, Teo619::new);
    d.steps(&steps);
    assert_eq!(intercepts(&d.g().state_bins), vec![1024, 0, 0]);
    assert_eq!((d.g().short_idles, d.g().tick_intercepts), (1920, 1024));
    // 6.12: the clock moved by -1 too: time_span = -1 < 10 ms; measured huge -> virtual
    // timer bin, TICK <= huge -> TH 1024.
    let mut d = Drive::new(A, Teo612::new);
    d.steps(&steps);
    assert_eq!((d.g().time_span_ns, d.g().tick_hits), (100, 1024));
    assert_eq!(hits(&d.g().state_bins), vec![896, 0, 0]);
}

#[test]
fn integer_edges() {
    // total - idx_hit_sum wraps as unsigned int: 100 - 101 = 0xFFFF_FFFF, so 2 * 1 is not
    // greater (a signed view would say 2 > -1).
    let scan = |int, hit| Scan {
        idx: Some(2),
        idx0: 0,
        constraint_idx: 2,
        idx_intercept_sum: int,
        idx_hit_sum: hit,
        intercept_sum: int,
    };
    assert!(!intercepts_dominate(100, &scan(1, 101)));
    assert!(intercepts_dominate(100, &scan(1, 99)));
    // 2 * 0x8000_0001 wraps to 2.
    assert!(!intercepts_dominate(10, &scan(0x8000_0001, 0)));

    // Decay from one pulse: 1024, 896, 784, 686 (784 >> 3 = 98), ... 9, 8, 7 after 41 steps;
    // then v6.14 is stuck at 7 (7 >> 3 = 0) and v6.19 drops it to 0.
    let (mut a, mut b) = (1024u32, 1024u32);
    let mut seen = Vec::new();
    for _ in 0..41 {
        v6_14::decay(&mut a);
        v6_19::teo_decay(&mut b);
        seen.push(a);
        assert_eq!(a, b);
    }
    assert_eq!(&seen[..3], &[896, 784, 686]);
    assert_eq!(a, 7);
    v6_14::decay(&mut a);
    v6_19::teo_decay(&mut b);
    assert_eq!((a, b), (7, 0));
}

/// The same zeroing seen through a sequence: one short idle from the zeroed device, then 42
/// long ones leave short_idles at 7 in v6.14 and 0 in v6.19.
#[test]
fn short_idles_fade_out_only_in_v6_19() {
    let long = r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000}"#;
    let steps = vec![long; 43];
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    assert_eq!(d.g().short_idles, 7);
    let mut d = Drive::new(A, Teo619::new);
    d.steps(&steps);
    assert_eq!(d.g().short_idles, 0);
}

/// A tick wake-up after a select that skipped the sleep length (KTIME_MAX > tick): before
/// v6.19 a safety net booked at the deepest bin, in v6.12 the virtual tick bin.
#[test]
fn tick_wake_up_without_a_sleep_length() {
    // L's s0 and s1 (C1 for 30 us, chosen without the sleep length), with the tick firing.
    let steps = [
        L[0],
        r#"{"sleep_length_ns": 10000000, "residency_ns": 30000, "got_tick": true}"#,
        L[2],
    ];
    // 6.12 s1 reflect: KTIME_MAX > tick -> time_span = KTIME_MAX. s2 update: KTIME_MAX >=
    // KTIME_MAX -> U64_MAX; TICK <= KTIME_MAX -> virtual timer bin, TH = 0 + 1024 -> return.
    // h0 784, i1 d(1024) = 896 (not 1920 as without the tick), T = 784 + 896 + 0 + 1024.
    let mut d = Drive::new(A, Teo612::new);
    d.steps(&steps);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 896, 0]);
    assert_eq!((d.g().tick_hits, d.g().total), (1024, 2704));
    // 6.14: artificial -> U64_MAX; timer bin 2 (every target <= KTIME_MAX) -> hit h2 = 1024.
    let mut d = Drive::new(A, Teo614::new);
    d.steps(&steps);
    assert_eq!(hits(&d.g().state_bins), vec![784, 0, 1024]);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 896, 0]);
    // 6.19: TT 1024, 3072 > 2*2704 fails -> an ordinary intercept (29000 in bin 1), TI grows.
    let mut d = Drive::new(A, Teo619::new);
    d.steps(&steps);
    assert_eq!(intercepts(&d.g().state_bins), vec![0, 1920, 0]);
    assert_eq!((d.g().total_tick, d.g().tick_intercepts), (1024, 1920));
}

/// When the deepest target residency is at least a tick, v6.12 has no tick_hits bin.
#[test]
fn no_tick_hits_bin_when_the_deepest_state_outlasts_a_tick() {
    let deep = r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"exit_latency_ns": 2000, "target_residency_ns": 2000}, {"exit_latency_ns": 1000000, "target_residency_ns": 5000000}]}"#;
    let steps = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 6000000}"#,
        r#"{"sleep_length_ns": 10000000, "residency_ns": 6000000}"#,
    ];
    // s0: candidate 2, 5 ms <= 10 ms, not below a tick -> (2, stop). s1 update: span 6 ms
    // < 10 ms; measured 6000000 - 500000 = 5500000 -> timer and wake-up bin 2: hit h2 = 1024;
    // TH untouched; T = 896 + 1024. On platform A the same wake-up is a tick hit instead.
    let mut d = Drive::new(deep, Teo612::new);
    assert_eq!(d.steps(&steps), vec![(2, true), (2, true)]);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().tick_hits, d.g().total),
        (vec![896, 0, 1024], 0, 1920)
    );
    let mut d = Drive::new(A, Teo612::new);
    d.steps(&steps);
    assert_eq!(
        (hits(&d.g().state_bins), d.g().tick_hits, d.g().total),
        (vec![896, 0, 0], 1024, 1920)
    );
}

// ---- teo@7.0: each of its five changes against v6.19 ----

/// Platform E: two deep states with the same 5 ms target residency.
const E: &str = r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"exit_latency_ns": 2000, "target_residency_ns": 2000}, {"exit_latency_ns": 100000, "target_residency_ns": 5000000}, {"exit_latency_ns": 200000, "target_residency_ns": 5000000}]}"#;
/// Platform F: five states, targets 0, 2 us, 50 us, 300 us, 1 ms.
const F: &str = r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"exit_latency_ns": 2000, "target_residency_ns": 2000}, {"exit_latency_ns": 30000, "target_residency_ns": 50000}, {"exit_latency_ns": 100000, "target_residency_ns": 300000}, {"exit_latency_ns": 200000, "target_residency_ns": 1000000}]}"#;

/// Sets the learned state of a fresh governor and leaves nothing to update at the next select.
macro_rules! learned {
    ($header:expr, $build:expr, $intercepts:expr, $total:expr, $tick_intercepts:expr) => {{
        let mut d = Drive::new($header, $build);
        d.0.parts_mut().0.last_state_idx = -1;
        for (i, v) in $intercepts.iter().enumerate() {
            d.g_mut().state_bins[i].intercepts = *v;
        }
        d.g_mut().total = $total;
        d.g_mut().tick_intercepts = $tick_intercepts;
        d
    }};
}

#[test]
fn v7_0_a_hit_needs_the_wake_up_after_the_timer() {
    // From empty learned state (no update at s0): candidate C6, 10 ms fetched; 600 us < tick
    // and 3*TI >= 2*T is 0 >= 0 -> half a tick: (2, keep) (v6.19's 0 > 0 + 0 fails);
    // then 5 ms in C6: measured 4950000, same bin as the timer (2). v6.19: hit h2 = 1024.
    // v7.0: 10000000 - 4950000 = 5050000 is not below lat/2 = 50000 -> intercept i2 = 1024
    // (4950000 > tick: no TI).
    let early = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000}"#,
        L[1],
    ];
    let mut d = learned!(A, Teo70::new, [0u32; 0], 0, 0);
    assert_eq!(d.steps(&early)[0], (2, false));
    assert_eq!(
        (hits(&d.g().state_bins), intercepts(&d.g().state_bins)),
        (vec![0, 0, 0], vec![0, 0, 1024])
    );
    assert_eq!(d.g().tick_intercepts, 0);
    let mut d = learned!(A, Teo619::new, [0u32; 0], 0, 0);
    d.steps(&early);
    assert_eq!(hits(&d.g().state_bins), vec![0, 0, 1024]);
    // 10040000 in C6: measured 9990000; 10000000 - 9990000 = 10000 < 50000 -> hit in v7.0.
    let late = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 10040000}"#,
        L[1],
    ];
    let mut d = learned!(A, Teo70::new, [0u32; 0], 0, 0);
    d.steps(&late);
    assert_eq!(hits(&d.g().state_bins), vec![0, 0, 1024]);
}

#[test]
fn v7_0_a_lone_tick_wake_up_is_a_hit_in_the_timer_bin() {
    // Learned h0 = 1024, nothing else: s0 -> C6 (2*0 > 0 - 1024 wraps: no lookup), 10 ms
    // fetched, 0 >= 0 keeps the tick: (2, keep); 100 us in C6 with the tick firing. Next update: measured 50000, timer bin 2,
    // wake-up bin 1; bin sum d(1024) = 896, T = 1920, TT = 1024: 3072 > 3840 fails.
    // v7.0: TI 0, 3*0 < 2*896 -> hit h2 = 1024, nothing else.
    // v6.19: an ordinary intercept i1 = 1024, TI = 1024 (50000 <= tick).
    let steps = [
        r#"{"sleep_length_ns": 10000000, "residency_ns": 100000, "got_tick": true}"#,
        L[1],
    ];
    let mut d = learned!(A, Teo70::new, [0u32; 0], 0, 0);
    d.g_mut().state_bins[0].hits = 1024;
    assert_eq!(d.steps(&steps)[0], (2, false));
    assert_eq!(
        (hits(&d.g().state_bins), intercepts(&d.g().state_bins)),
        (vec![896, 0, 1024], vec![0, 0, 0])
    );
    assert_eq!((d.g().total_tick, d.g().tick_intercepts), (1024, 0));
    let mut d = learned!(A, Teo619::new, [0u32; 0], 0, 0);
    d.g_mut().state_bins[0].hits = 1024;
    d.steps(&steps);
    assert_eq!(
        (hits(&d.g().state_bins), intercepts(&d.g().state_bins)),
        (vec![896, 0, 0], vec![0, 1024, 0])
    );
    assert_eq!(d.g().tick_intercepts, 1024);
}

#[test]
fn v7_0_tick_intercepts_need_two_thirds() {
    // A, learned T = 3000, TI = 1950, no intercepts in bins: candidate C6, fetched 10 ms;
    // 600 us < tick. v6.19: 1950 > 1500 + 375 -> half a tick -> keep it; C6 fits delta 4 ms
    // -> (2, keep). v7.0: 3*1950 = 5850 >= 6000 fails -> (2, stop).
    let step = [r#"{"sleep_length_ns": 10000000, "residency_ns": 1}"#];
    let mut d = learned!(A, Teo619::new, [0u32; 0], 3000, 1950);
    assert_eq!(d.steps(&step), vec![(2, false)]);
    let mut d = learned!(A, Teo70::new, [0u32; 0], 3000, 1950);
    assert_eq!(d.steps(&step), vec![(2, true)]);
    // TI = 2000: 6000 >= 6000 -> kept in v7.0 too.
    let mut d = learned!(A, Teo70::new, [0u32; 0], 3000, 2000);
    assert_eq!(d.steps(&step), vec![(2, false)]);
}

#[test]
fn v7_0_stopped_tick_and_a_zero_size_bin() {
    // E, learned i0 = 4000, T = 5000, tick stopped: candidate 3; idx_int = 4000, 8000 > 5000.
    // min_idx walks past 0 and 1 (< tick) to 2. v6.19: walk i = 2 only: sum 0, idx 2 -> C6a;
    // fetch 10 ms, 5 ms fits -> (2, stop). v7.0: state 2 has state 3's target (5 ms): keep 3.
    let step = [r#"{"sleep_length_ns": 10000000, "tick_stopped": true, "residency_ns": 1}"#];
    let mut d = learned!(E, Teo619::new, [4000u32], 5000, 0);
    assert_eq!(d.steps(&step), vec![(2, true)]);
    let mut d = learned!(E, Teo70::new, [4000u32], 5000, 0);
    assert_eq!(d.steps(&step), vec![(3, true)]);
}

#[test]
fn v7_0_the_lookup_reaches_the_busiest_bin() {
    // The changelog's example on E: intercepts 400, 250, 251 below candidate 3, T = 1000.
    // idx_int 901: 1802 > 1000. v6.19: i=2: 251 (502 > 901 no), i=1: 501 (1002 > 901) -> C1;
    // not short (0 >= 1000 fails) -> fetch; 2 us fits; TI 0 -> (1, stop).
    // v7.0: busiest bin 0 (400; 250 and 251 are smaller); min_idx 0 >= 0 and enabled -> POLL;
    // fetch (no short idles), then state 0 returns with the tick kept: (0, keep).
    let step = [r#"{"sleep_length_ns": 10000000, "residency_ns": 1}"#];
    let mut d = learned!(E, Teo619::new, [400u32, 250, 251], 1000, 0);
    assert_eq!(d.steps(&step), vec![(1, true)]);
    let mut d = learned!(E, Teo70::new, [400u32, 250, 251], 1000, 0);
    assert_eq!(d.steps(&step), vec![(0, false)]);
    assert_eq!(d.0.kernel().sleep_length_calls, 1);

    // F, intercepts 0, 400, 300, 301 below candidate 4, T = 1100: idx_int 1001, 2002 > 1100.
    // Busiest bin 1 (400; 301 < 400). v6.19: i=3: 301 (602 > 1001 no); i=2: 601 (1202 > 1001)
    // -> C3 (50 us, not short) -> fetch -> (2, stop). v7.0: i=3, i=2 pass the half but lie
    // above bin 1; i=1: 1001, 2002 > 1001 -> C1; 0 >= 1100 fails -> fetch -> (1, stop).
    let mut d = learned!(F, Teo619::new, [0u32, 400, 300, 301], 1100, 0);
    assert_eq!(d.steps(&step), vec![(2, true)]);
    let mut d = learned!(F, Teo70::new, [0u32, 400, 300, 301], 1100, 0);
    assert_eq!(d.steps(&step), vec![(1, true)]);
}

#[test]
fn v7_0_first_select_on_the_zeroed_device() {
    // A: the zeroed update has sleep length 0, measured 0 and POLL's exit latency 0: same bin,
    // but 0 - 0 < 0/2 fails -> intercept i0 = 1024 (and TI 1024, S 1024, T 1024). Select:
    // idx_int (C6) = 1024, 2048 > 1024 - 0 -> lookup; the busiest bin is 0 and min_idx 0 >= 0
    // -> POLL; 2*S >= T -> (0, keep) without the sleep length. v6.19 books a hit: (2, stop).
    let mut d = Drive::new(A, Teo70::new);
    assert_eq!(d.steps(&[L[0]]), vec![(0, false)]);
    assert_eq!(intercepts(&d.g().state_bins), vec![1024, 0, 0]);
    assert_eq!(d.0.kernel().sleep_length_calls, 0);
    assert_eq!(decide("teo@6.19", A, &[L[0]]), vec![(2, true)]);
    // B: WFI's latency 1000 -> 0 - 0 < 500 holds: a hit h0 as in v6.19, so the same choices.
    let step = [r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [2]}"#];
    let mut d = Drive::new(B, Teo70::new);
    assert_eq!(d.steps(&step), vec![(1, false)]);
    assert_eq!(hits(&d.g().state_bins), vec![1024, 0, 0]);
    // Paths no v7.0 change touches: one enabled state; latency 0.
    let only_c6 = [r#"{"sleep_length_ns": 10000000, "residency_ns": 5000000, "disabled": [0, 1]}"#];
    assert_eq!(decide("teo@7.0", A, &only_c6), vec![(2, false)]);
    let zero = [r#"{"sleep_length_ns": 10000000, "latency_req_ns": 0, "residency_ns": 100}"#];
    assert_eq!(decide("teo@7.0", B, &zero), vec![(0, false)]);
}
