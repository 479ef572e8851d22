//! A fio iolog (v2 or v3) through the streaming reader, entry by entry. An `Err` is a correct
//! answer to bad input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::fio_iolog::IologReader;

/// More entries than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_ENTRIES: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    // The reader takes bytes; the UTF-8 check keeps the target's input the same as the
    // replay test's (which reads the corpus as text for the other targets too).
    if std::str::from_utf8(data).is_err() {
        return;
    }
    let Ok(mut reader) = IologReader::new(std::io::Cursor::new(data), "f.iolog") else {
        return;
    };
    for _ in 0..MAX_ENTRIES {
        match reader.next_entry() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.counts();
});
