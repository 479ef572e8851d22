//! ftrace text (a raw `trace` file, `trace-cmd report` output, idlestat's trace files) through
//! the streaming reader, event by event. An `Err` is a correct answer to bad input; only a
//! panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::ftrace::FtraceReader;

/// More events than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    // Any bytes: the reader checks UTF-8 line by line itself.
    let Ok(mut reader) = FtraceReader::new(std::io::Cursor::new(data), "f.trace") else {
        return;
    };
    for _ in 0..MAX_EVENTS {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.counts();
});
