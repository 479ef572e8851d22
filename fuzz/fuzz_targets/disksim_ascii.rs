//! DiskSim's and MQSim's ASCII traces through the streaming reader, request by request; the
//! first byte picks the dialect. An `Err` is a correct answer to bad input; only a panic (or a
//! hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::block::BlockTraceReader;
use torpor_core::trace::disksim::{AsciiDialect, AsciiTraceReader};

/// More requests than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let dialect = if pick & 1 == 0 { AsciiDialect::Disksim } else { AsciiDialect::Mqsim };
    let mut reader = AsciiTraceReader::new(std::io::Cursor::new(text), "f.trace", dialect);
    for _ in 0..MAX_EVENTS {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.counts();
});
