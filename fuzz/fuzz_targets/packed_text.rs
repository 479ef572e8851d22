//! Packed text traces (gzip, zstd, xz, a systrace page) told by their first bytes, unpacked as
//! a stream and read by the ftrace text reader, event by event, as `idle stats` reads them. An
//! `Err` is a correct answer to bad input; only a panic (or a hang, or runaway memory) is a
//! finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::ftrace::FtraceReader;
use torpor_core::trace::packed_text;

/// More events than a few KiB can unpack to in reasonable time: a reader past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    // Any bytes: only packed ones (by their magic) go further.
    let Some(packing) = packed_text::sniff_head(data) else {
        return;
    };
    let Ok(text) = packed_text::open(std::io::Cursor::new(data.to_vec()), packing, "f.xz") else {
        return;
    };
    let Ok(mut reader) = FtraceReader::new(text, "f.xz") else {
        return;
    };
    for _ in 0..MAX_EVENTS {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
});
