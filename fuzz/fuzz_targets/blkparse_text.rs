//! blkparse's default text output through the streaming reader, request by request; the first
//! byte picks the replayed action (Q or D). An `Err` is a correct answer to bad input; only a
//! panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::trace::blkparse::{BlkparseReader, ReplayedAction};
use torpor_core::trace::block::BlockTraceReader;

/// More requests than a 4 KiB input can hold: a reader that goes past it is looping.
const MAX_EVENTS: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let action = if pick & 1 == 0 { ReplayedAction::Q } else { ReplayedAction::D };
    let mut reader = BlkparseReader::new(std::io::Cursor::new(text), "f.blk", action);
    for _ in 0..MAX_EVENTS {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.counts();
});
