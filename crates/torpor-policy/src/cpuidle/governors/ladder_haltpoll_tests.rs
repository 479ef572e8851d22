//! ladder and haltpoll on sequences worked by hand from spec-cpu.md §4.

use crate::cpuidle::decide::text::decisions;

const POLL_C1_C6: &str = r#"{"format": "idle-decide/1", "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000}, {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000}]}"#;

fn step(fields: &str) -> String {
    format!("{{\"sleep_length_ns\": 10000000, {fields}}}")
}

fn sequence(header: &str, steps: &[String]) -> String {
    let mut text = header.to_string();
    for s in steps {
        text.push('\n');
        text.push_str(s);
    }
    text
}

#[test]
fn ladder_climbs_after_four_long_stays_and_falls_after_one_short() {
    // POLL is state 0, so the ladder starts on C1 (first = 1). Thresholds: C1 promotes above
    // its exit latency 2000 ns and never demotes (it is `first`); C6 is the top (no promotion)
    // and demotes below 100000 ns.
    let steps = vec![
        // 0: the zeroed device's residency 0 - 2000 is negative: as a u64 it beats 2000 (1 of 4).
        step(r#""residency_ns": 1000000"#),
        // 1, 2: 1000000 - 2000 > 2000: promotions 2 and 3.
        step(r#""residency_ns": 1000000"#),
        step(r#""residency_ns": 1000000"#),
        // 3: the 4th promotion: C6.
        step(r#""residency_ns": 50000"#),
        // 4: 50000 - 100000 < 0 compares as a huge u64: no demotion, stay on C6.
        step(r#""residency_ns": 150000"#),
        // 5: 150000 - 100000 = 50000 < 100000: one demotion is enough: C1.
        step(r#""residency_ns": 1000000"#),
        // 6: C6's exit latency 100000 breaks a 50000 ns limit: no promotion counted; stay.
        step(r#""residency_ns": 1000000, "latency_req_ns": 50000"#),
        // 7: a limit of 0: state 0. Entering POLL leaves the rung (index 0) alone in reflect.
        step(r#""residency_ns": 5000, "latency_req_ns": 0"#),
        // 8: on rung 0, whose thresholds stayed zeroed (enable started at 1): 5000 > 0 and the
        //    promotion count 1 >= threshold 0: C1 at once.
        step(r#""residency_ns": 1000000"#),
        // 9: C1 disabled changes nothing while C1 is `first`; the entry is rejected: residency 0.
        step(r#""residency_ns": 1000000, "disabled": [1], "entered": -1"#),
        // 10: 0 - 2000 as u64 beats 2000 again: promotion 2 of 4 on C1 (count kept from 9).
        step(r#""residency_ns": 1000000"#),
        step(r#""residency_ns": 1000000"#),
        // 12: the 4th: C6.
        step(r#""residency_ns": 1000000"#),
    ];
    let got: Vec<usize> = decisions("ladder", &sequence(POLL_C1_C6, &steps))
        .iter()
        .map(|&(idx, stop)| {
            assert!(stop, "ladder never keeps the tick");
            idx
        })
        .collect();
    assert_eq!(got, vec![1, 1, 1, 2, 2, 1, 1, 0, 1, 1, 1, 1, 2]);
}

#[test]
fn ladder_walks_down_past_states_that_break_the_limit() {
    let header = r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 1, "target_residency_ns": 1}, {"exit_latency_ns": 10, "target_residency_ns": 20}, {"exit_latency_ns": 100, "target_residency_ns": 200}, {"exit_latency_ns": 1000, "target_residency_ns": 2000}]}"#;
    // No polling state: first = 0. Long stays climb one rung per four selects: 0,0,0,1 (the
    // zeroed device's 0 - 1 counts as long), 1,1,1,2, 2,2,2,3; then a 50 ns limit on rung 3:
    // C3 breaks it, C2 (100) too, C1 (10) meets it: rung 1.
    let mut steps: Vec<String> = (0..12)
        .map(|_| step(r#""residency_ns": 1000000"#))
        .collect();
    steps.push(step(r#""residency_ns": 1000000, "latency_req_ns": 50"#));
    let got: Vec<usize> = decisions("ladder", &sequence(header, &steps))
        .iter()
        .map(|d| d.0)
        .collect();
    assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 1]);
}

#[test]
fn haltpoll_grows_and_shrinks_its_poll_window() {
    let header = r#"{"format": "idle-decide/1", "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "halt", "exit_latency_ns": 1000, "target_residency_ns": 1000}]}"#;
    // Defaults: max window 200000 ns, grow x2 from 50000, shrink /2, reset below 50000.
    let steps = vec![
        // 0: no window yet: halt. 30000 > 0 and <= 200000: window max(0*2, 50000) = 50000.
        step(r#""residency_ns": 30000"#),
        // 1: after a halt: poll (tick kept); work came before the window ran out.
        step(r#""residency_ns": 10000, "entered": 0"#),
        // 2: after a poll that work ended: poll again; this one runs out its window.
        step(r#""residency_ns": 50000, "entered": 0, "poll_time_limit": true"#),
        // 3: the window ran out: halt. 120000 > 50000: window 100000.
        step(r#""residency_ns": 120000"#),
        // 4: after a halt: poll; the driver halts instead: 150000 > 100000: window 200000.
        step(r#""residency_ns": 150000, "entered": 1"#),
        // 5-7: halts longer than the max window: 200000/2 = 100000, then 50000 (not below
        //      50000: kept), then 25000 < 50000: reset to 0 (v6.9).
        step(r#""residency_ns": 500000, "entered": 1"#),
        step(r#""residency_ns": 500000, "entered": 1"#),
        step(r#""residency_ns": 500000, "entered": 1"#),
        // 8: no window again: halt.
        step(r#""residency_ns": 500000"#),
        // 9: a latency limit of 0: poll, tick kept.
        step(r#""residency_ns": 500, "latency_req_ns": 0"#),
    ];
    let t = true;
    let f = false;
    assert_eq!(
        decisions("haltpoll", &sequence(header, &steps)),
        vec![
            (1, t),
            (0, f),
            (0, f),
            (1, t),
            (0, f),
            (0, f),
            (0, f),
            (0, f),
            (1, t),
            (0, f)
        ]
    );
}
