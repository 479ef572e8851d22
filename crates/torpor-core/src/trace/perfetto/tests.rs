//! Unit tests of the sniffing; the reader's tests, on traces a small encoder writes, are in
//! `tests/perfetto.rs`.

use super::looks_like_trace;

#[test]
fn text_is_not_a_trace() {
    assert!(!looks_like_trace(b"\n# tracer: nop\n#\n"));
    assert!(!looks_like_trace(b"cpus=4\n"));
    assert!(!looks_like_trace(b""));
    assert!(!looks_like_trace(b"\n\n\n"));
}

#[test]
fn a_first_packet_is_a_trace() {
    // packet { trusted_packet_sequence_id: 1 (field 10), timestamp: 5 (field 8) }
    assert!(looks_like_trace(&[0x0a, 4, 0x50, 1, 0x40, 5]));
    // Cut by the end of what was read: still a trace.
    assert!(looks_like_trace(&[0x0a, 100, 0x50, 1, 0x40]));
    // A packet whose bytes are not fields.
    assert!(!looks_like_trace(&[0x0a, 2, 0x0b, 0xff]));
}
