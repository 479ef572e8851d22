//! The MobileBlockIOTraces CSV through the streaming reader: its header, then request by
//! request. An `Err` is a correct answer to bad input; only a panic (or a hang, or runaway
//! memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::block::BlockTraceReader;
use torpor_core::trace::mobile_csv::MobileCsvReader;

/// More requests than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = MobileCsvReader::new(std::io::Cursor::new(data), "f.csv") else {
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
