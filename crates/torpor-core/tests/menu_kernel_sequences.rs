//! `menu@6.6` against the kernel's own v6.6 `menu.c` compiled in userspace, on the twelve
//! idle-decide sequences of the project's fidelity set (`tests/data/idle-decide/menu-6.6/`,
//! provenance in its README): every decision (index and tick) must be the one `menu.c` makes.
//!
//! The fidelity set came with its own "kernel" decisions (`*.fidelity.jsonl`), which part from
//! `menu.c` as compiled here on 45 of the 4800 steps. They are those of `menu.c` without its
//! polling swap, an unmerged patch, not mainline (docs/research/menu-6.6-fidelity.md). The
//! second test pins down exactly where they differ, so the dispute stays visible.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use torpor_core::drivers::idle_decide::Sequence;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(deny_unknown_fields)]
struct Decision {
    step: u64,
    idx: usize,
    stop_tick: bool,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/idle-decide/menu-6.6")
}

/// The sequence files (`seq-NN.jsonl`), sorted.
fn sequences() -> Vec<PathBuf> {
    let mut seqs: Vec<PathBuf> = fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with("seq-") && name.matches('.').count() == 1
        })
        .collect();
    seqs.sort();
    assert_eq!(seqs.len(), 12, "expected the twelve fixture sequences");
    seqs
}

/// The decisions file beside `seq` with the given tag (`seq-NN.TAG.jsonl`).
fn decisions(seq: &Path, tag: &str) -> Vec<Decision> {
    let path = seq.with_extension(format!("{tag}.jsonl"));
    fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// torpor's decisions on a sequence, through the same reader `torpor idle decide` uses.
fn torpor(seq: &Path) -> Vec<Decision> {
    let text = fs::read(seq).unwrap();
    let name = seq.file_name().unwrap().to_str().unwrap();
    let mut run = Sequence::new(text.as_slice(), name, "menu@6.6").unwrap();
    let mut out = Vec::new();
    while let Some(d) = run.next_decision().unwrap() {
        out.push(Decision {
            step: d.step,
            idx: d.idx,
            stop_tick: d.stop_tick,
        });
    }
    out
}

#[test]
fn menu_6_6_makes_menu_c_s_decision_on_every_step() {
    for seq in sequences() {
        let ours = torpor(&seq);
        let theirs = decisions(&seq, "menu-c");
        assert_eq!(ours.len(), 400, "{seq:?}");
        assert_eq!(ours, theirs, "{seq:?}");
    }
}

/// Where the fidelity set's decisions differ, they are all one case: with the tick running
/// and state 0 a polling state, `menu.c` (and torpor) replace polling by a deeper state that
/// meets the latency limit and fits before the next timer (`select`'s step 6); the fidelity
/// file keeps polling, `(0, false)`, as `menu.c` does with that swap deleted.
#[test]
fn the_fidelity_set_differs_only_where_menu_c_replaces_polling() {
    let mut differing = 0;
    for seq in sequences() {
        let text = fs::read_to_string(&seq).unwrap();
        let mut lines = text.lines();
        let platform: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(platform["states"][0]["polling"], Value::Bool(true));
        let steps: Vec<Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        let fidelity = decisions(&seq, "fidelity");
        for (ours, theirs) in torpor(&seq).iter().zip(&fidelity) {
            if ours == theirs {
                continue;
            }
            differing += 1;
            let step = &steps[ours.step as usize];
            let disabled = step["disabled"].as_array().cloned().unwrap_or_default();
            assert!(
                theirs.idx == 0
                    && !theirs.stop_tick
                    && ours.idx > 0
                    && step["tick_stopped"] != Value::Bool(true)
                    && !disabled.contains(&Value::from(0)),
                "{seq:?}: {ours:?} vs {theirs:?}"
            );
            // What the swap needs of the state it takes, read from the inputs alone: its exit
            // latency meets the step's limit. Its target residency becomes the prediction, so
            // the running tick is stopped only if that residency is a tick or more; when the
            // tick is kept, the residency fits before it (the step's delta_tick, or half a
            // tick when menu skipped the sleep length), or the tick-keeping step at the end
            // would have moved off this state.
            let state = &platform["states"][ours.idx];
            let tick_ns = platform["tick_ns"].as_i64().unwrap_or(4_000_000);
            let sleep_ns = step["sleep_length_ns"].as_i64().unwrap();
            let delta_tick_ns = step["delta_tick_ns"]
                .as_i64()
                .unwrap_or(sleep_ns.min(tick_ns));
            let latency_req_ns = step["latency_req_ns"].as_i64().unwrap_or(2_000_000_000_000);
            let residency_ns = state["target_residency_ns"].as_i64().unwrap();
            let tick_fits = if ours.stop_tick {
                residency_ns >= tick_ns
            } else {
                residency_ns <= delta_tick_ns.max(tick_ns / 2)
            };
            assert!(
                state["exit_latency_ns"].as_i64().unwrap() <= latency_req_ns && tick_fits,
                "{seq:?}: {ours:?} at {step}"
            );
        }
    }
    assert_eq!(differing, 45);
}
