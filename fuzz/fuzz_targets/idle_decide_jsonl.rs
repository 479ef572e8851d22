//! An idle-decide/1 sequence (JSON lines: the platform, then one step a line) read and run
//! through a governor; the first byte picks the governor among every accepted name. An `Err`
//! is a correct answer to bad input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::drivers::idle_decide::Sequence;
use torpor_core::cpuidle::NAMES;

/// More steps than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_STEPS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()].0;
    let Ok(mut seq) = Sequence::new(std::io::Cursor::new(text), "d.jsonl", name) else {
        return;
    };
    for _ in 0..MAX_STEPS {
        match seq.next_decision() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
});
