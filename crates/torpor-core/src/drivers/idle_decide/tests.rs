//! The sequence reader and the step semantics of idle-decide.md, checked with the oracle (whose
//! choices follow from the step by hand) and with a recording governor.

use super::*;

const HEADER: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [
 {"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true},
 {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000},
 {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000}]}"#;

fn run(governor: &str, text: &str) -> Result<Vec<Decision>, InputError> {
    let mut seq = Sequence::new(text.as_bytes(), "seq.jsonl", governor)?;
    let mut out = Vec::new();
    while let Some(d) = seq.next_decision()? {
        out.push(d);
    }
    Ok(out)
}

fn one_line_header() -> String {
    HEADER.replace('\n', "")
}

#[test]
fn oracle_picks_the_deepest_state_that_fits_and_meets_the_limit() {
    let text = format!(
        "{}\n{}\n{}\n{}\n{}\n",
        one_line_header(),
        // 1.2 ms fits C6 (400 us); the tick (4 ms) would not fire first: stop it.
        r#"{"sleep_length_ns": 1500000, "residency_ns": 1200000, "delta_tick_ns": 1000000}"#,
        // 100 us only fits C1; it ends before the tick: keep it.
        r#"{"sleep_length_ns": 1500000, "residency_ns": 100000}"#,
        // C6's 100 us exit latency breaks a 50 us limit.
        r#"{"sleep_length_ns": 1500000, "residency_ns": 9000000, "latency_req_ns": 50000}"#,
        // C1 disabled and nothing deeper fits: POLL, tick kept.
        r#"{"sleep_length_ns": 1500000, "residency_ns": 100000, "disabled": [1]}"#,
    );
    let d = run("oracle", &text).unwrap();
    let got: Vec<(usize, bool)> = d.iter().map(|d| (d.idx, d.stop_tick)).collect();
    assert_eq!(got, vec![(2, true), (1, false), (1, true), (0, false)]);
    assert_eq!(d[3].step, 3);
}

fn error_of(governor: &str, text: &str) -> String {
    match run(governor, text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_sequences_are_refused_at_their_line() {
    let h = one_line_header();
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "seq.jsonl:1: the file is empty"),
        ("{\"format\": \"idle-decide/2\", \"states\": []}".into(), "seq.jsonl:1: expected \"format\": \"idle-decide/1\""),
        (
            r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 1, "target_residency_ns": 5}, {"exit_latency_ns": 1, "target_residency_ns": 4}]}"#.into(),
            "seq.jsonl:1: expected states ordered by target residency",
        ),
        (r#"{"format": "idle-decide/1", "states": []}"#.into(), "expected 1 to 10 idle states"),
        (r#"{"format": "idle-decide/1", "states": [{"exit_latency_ns": 1}]}"#.into(), "missing field `target_residency_ns`"),
        (format!("{h}\n{{\"sleep_length_ns\": 1}}"), "seq.jsonl:2: expected a step object: missing field `residency_ns`"),
        (format!("{h}\n\n{{\"sleep_length_ns\": 1, \"residency_ns\": 1, \"colour\": 1}}"), "seq.jsonl:3: expected a step object: unknown field `colour`"),
        (format!("{h}\n{{\"sleep_length_ns\": 1.5, \"residency_ns\": 1}}"), "seq.jsonl:2: expected a step object: invalid type: floating point"),
        (format!("{h}\n{{\"sleep_length_ns\": 1, \"residency_ns\": 1, \"entered\": 3}}"), "seq.jsonl:2: expected entered to be null, -1"),
        (format!("{h}\n{{\"sleep_length_ns\": 1, \"residency_ns\": 1, \"disabled\": [7]}}"), "seq.jsonl:2: expected disabled state indices below 3"),
        (format!("{h}\n{{\"sleep_length_ns\": 1, \"residency_ns\": 1, \"util\": 1025}}"), "seq.jsonl:2: expected util in 0..=1024"),
        (format!("{h}\nnot json"), "seq.jsonl:2: expected a step object"),
        (format!("{h}\n{{\"sleep_length_ns\": 99999999999999999999, \"residency_ns\": 1}}"), "seq.jsonl:2: expected a step object"),
    ];
    for (text, want) in cases {
        let got = error_of("oracle", &text);
        assert!(got.contains(want), "{text:?}\n got: {got}\nwant: {want}");
    }
    assert!(error_of("no-such", &h).contains("unknown governor \"no-such\""));
}
