//! Bytes as a Perfetto trace through the streaming reader, event by event. An `Err` is a
//! correct answer to bad input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::perfetto::PerfettoReader;

/// More events than a 64 KiB input can hold: a reader that goes past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let mut reader = PerfettoReader::new(data, "f.pftrace");
    for _ in 0..MAX_EVENTS {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.counts();
});
