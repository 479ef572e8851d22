//! Block traces (blkparse, DiskSim, MQSim, the mobile CSV) read from hand-written fixtures in
//! tests/data/blocktrace/, every expected request worked out by hand from the fixture's lines,
//! then replayed against a device simple enough to predict.

use std::io::{BufRead, BufReader, Write};

use torpor_core::storage::io::IoOp;
use torpor_core::trace::blkparse::{BlkparseReader, ReplayedAction};
use torpor_core::trace::block::BlockTraceReader;
use torpor_core::trace::block::{open_trace, BlockCounts, BlockEvent, BlockOp, TraceFormat};
use torpor_core::trace::disksim::{AsciiDialect, AsciiTraceReader};
use torpor_core::trace::mobile_csv::MobileCsvReader;
use torpor_core::workload::{ReplayOptions, TraceCounts, TraceReplay, Workload};
use torpor_core::world::run_io;
use torpor_core::{InputError, Nanos};

mod common;
use common::SerialDevice;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/data/blocktrace/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn input(name: &str) -> Box<dyn BufRead + Send> {
    Box::new(BufReader::new(
        std::fs::File::open(fixture(name)).expect("fixture exists"),
    ))
}

/// (time ns, op, offset bytes, length bytes) of every request, and the reader's counts.
type Req = (u64, BlockOp, u64, u64);

fn drain(mut r: impl BlockTraceReader) -> Result<(Vec<BlockEvent>, BlockCounts), InputError> {
    let mut out = Vec::new();
    while let Some(e) = r.next_event()? {
        out.push(e);
    }
    Ok((out, r.counts()))
}

fn reqs(events: &[BlockEvent]) -> Vec<Req> {
    events
        .iter()
        .map(|e| (e.t_ns, e.op, e.offset_bytes, e.len_bytes))
        .collect()
}

#[test]
fn blkparse_q_events_are_the_requests_the_filesystem_issued() {
    let r = BlkparseReader::new(input("hand.blkparse.txt"), "hand", ReplayedAction::Q);
    let (events, c) = drain(r).unwrap();
    // The seven Q lines, sectors x 512:
    // 223490 + 8 WS -> 114 426 880, 4096; 1024 + 16 R -> 524 288, 8192; 1040 + 8 R (merged
    // later, still issued) -> 532 480, 4096; FWS without sectors -> a flush; 2048 + 2048 DS ->
    // 1 MiB at 1 MiB; 4096 + 8 FWFSM -> 2 097 152, 4096; 8192 + 32 RA on 8,16 -> 4 MiB, 16 KiB.
    assert_eq!(
        reqs(&events),
        vec![
            (0, BlockOp::Write, 114_426_880, 4096),
            (250 * US, BlockOp::Read, 524_288, 8192),
            (260 * US, BlockOp::Read, 532_480, 4096),
            (MS, BlockOp::Flush, 0, 0),
            (2 * MS, BlockOp::Discard, 1 << 20, 1 << 20),
            (3 * MS, BlockOp::Write, 2_097_152, 4096),
            (1_500 * MS, BlockOp::Read, 4 << 20, 16 << 10),
        ]
    );
    // Flags: WS is sync; FWFSM is preflush, FUA, sync, metadata; the lines are where the Q
    // lines are in the file.
    assert!(events[0].sync && !events[0].preflush && !events[0].fua);
    let w = events[5];
    assert!(w.preflush && w.fua && w.sync && w.meta);
    assert_eq!(
        events.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![3, 9, 11, 17, 20, 23, 25]
    );
    // 24 event lines (3 to 26): 7 Q, 1 message, 16 of other actions. blkparse's own lines: 2 `Input
    // file` lines, and 14 non-blank summary lines (CPU0 heading + 7, Total heading + 2,
    // Throughput, Events, Skips).
    assert_eq!(
        (c.reads, c.writes, c.discards, c.flushes, c.preflush_writes),
        (3, 2, 1, 1, 1)
    );
    assert_eq!(
        (c.other_actions, c.messages, c.report_lines, c.no_data),
        (16, 1, 16, 0)
    );
    assert_eq!(c.on_other_devices, 1);
}

#[test]
fn blkparse_d_events_are_what_the_driver_sent_after_merging() {
    let r = BlkparseReader::new(input("hand.blkparse.txt"), "hand", ReplayedAction::D);
    let (events, c) = drain(r).unwrap();
    // The six D lines: the merged read is one request of 24 sectors; the flush request `FN`
    // has no sectors; the FUA write no longer carries the preflush.
    assert_eq!(
        reqs(&events),
        vec![
            (50 * US, BlockOp::Write, 114_426_880, 4096),
            (300 * US, BlockOp::Read, 524_288, 12_288),
            (1_100 * US, BlockOp::Flush, 0, 0),
            (2_050 * US, BlockOp::Discard, 1 << 20, 1 << 20),
            (3_100 * US, BlockOp::Write, 2_097_152, 4096),
            (1_500_100 * US, BlockOp::Read, 4 << 20, 16 << 10),
        ]
    );
    assert!(!events[4].preflush && events[4].fua);
    assert_eq!((c.other_actions, c.preflush_writes), (17, 0));
}

#[test]
fn disksim_and_mqsim_ascii_traces() {
    let r = AsciiTraceReader::new(input("hand.disksim.trace"), "d", AsciiDialect::Disksim);
    let (events, c) = drain(r).unwrap();
    // ms -> ns; flags 1 and 0x11 have bit 0 set (reads), 0 and 0x0 clear (writes).
    assert_eq!(
        reqs(&events),
        vec![
            (0, BlockOp::Read, 0, 4096),
            (500 * US, BlockOp::Write, 32_768, 8192),
            (2_250 * US, BlockOp::Read, 65_536, 4096),
            (10_125 * US, BlockOp::Write, 524_288, 512),
        ]
    );
    assert_eq!(c.on_other_devices, 1);
    let r = AsciiTraceReader::new(input("hand.mqsim.trace"), "m", AsciiDialect::Mqsim);
    let (events, c) = drain(r).unwrap();
    assert_eq!(
        reqs(&events),
        vec![
            (1000, BlockOp::Read, 0, 4096),
            (1000, BlockOp::Read, 4096, 4096),
            (5000, BlockOp::Write, 51_200, 8192),
            (250_000, BlockOp::Read, 102_400, 512),
        ]
    );
    assert_eq!(
        events[3].line, 5,
        "the blank line 4 is skipped, not renumbered"
    );
    assert_eq!((c.reads, c.writes, c.on_other_devices), (3, 1, 1));
}

/// The mobile CSV's requests, expected by hand: times from the first row (100.000000 s);
/// the third row is 100 us before the second, so it goes at the second's time.
const MOBILE: [Req; 4] = [
    (0, BlockOp::Read, 2048 * 512, 4096),
    (MS, BlockOp::Write, 4096 * 512, 8192),
    (MS, BlockOp::Read, 2056 * 512, 4096),
    (500 * MS, BlockOp::Write, 0, 512),
];

#[test]
fn the_mobile_csv_plain_and_gzipped() {
    let r = MobileCsvReader::new(input("hand.mobile.csv"), "c").unwrap();
    let (events, c) = drain(r).unwrap();
    assert_eq!(reqs(&events), MOBILE);
    assert_eq!((c.out_of_order, c.max_step_back_ns), (1, 100 * US));
    assert_eq!(c.on_other_devices, 1);
    // The same file gzipped: recognised by its magic bytes, its format by its header.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(fixture("hand.mobile.csv")).unwrap())
        .unwrap();
    let bytes = gz.finish().unwrap();
    let (format, rest) = open_trace(Box::new(std::io::Cursor::new(bytes)), "c.gz", None).unwrap();
    assert_eq!(format, TraceFormat::MobileCsv);
    let (events, _) = drain(MobileCsvReader::new(rest, "c.gz").unwrap()).unwrap();
    assert_eq!(reqs(&events), MOBILE);
}

#[test]
fn a_damaged_gzip_stream_is_an_error_at_the_line_being_read() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"1000 0 0 8 1\n2000 0 8 8 1\n").unwrap();
    let mut bytes = gz.finish().unwrap();
    let n = bytes.len();
    bytes[n - 8] ^= 0xff; // the CRC-32 of the trailer: the data decode, the check fails
    let (_, rest) = open_trace(Box::new(std::io::Cursor::new(bytes)), "d.gz", None).unwrap();
    let e = drain(AsciiTraceReader::new(rest, "d.gz", AsciiDialect::Mqsim)).expect_err("damaged");
    assert!(e.message.contains("the gzip stream is damaged"), "{e}");
    assert!(e.line.is_some(), "{e}");
}

fn replay(name: &str, format: Option<TraceFormat>, options: ReplayOptions) -> Workload {
    Workload::Replay(TraceReplay::new(input(name), name, format, None, options).unwrap())
}

#[test]
fn a_blkparse_replay_sends_reads_and_writes_at_their_q_times() {
    // Service 10 us, one IO in flight: each request is done before the next is due, so the
    // device sees the five reads and writes at their Q times; the flush and the discard are
    // counted, not sent.
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let mut loads = [replay("hand.blkparse.txt", None, ReplayOptions::default())];
    let r = run_io(&mut dev, &mut loads, Nanos::from_secs(10), 0).unwrap();
    assert_eq!(
        dev.times_ns(),
        vec![0, 250 * US, 260 * US, 3 * MS, 1_500 * MS]
    );
    let ops: Vec<IoOp> = dev.submits.iter().map(|(_, q)| q.op).collect();
    assert_eq!(
        ops,
        vec![IoOp::Write, IoOp::Read, IoOp::Read, IoOp::Write, IoOp::Read]
    );
    assert_eq!((r.read.count(), r.write.count()), (3, 2));
    let c = r.per_workload[0].block_trace.expect("block counts");
    assert_eq!(
        (c.format, c.flushes, c.discards),
        (TraceFormat::Blkparse, 1, 1)
    );
    let Workload::Replay(replay) = &loads[0] else {
        unreachable!()
    };
    assert!(matches!(replay.counts(), TraceCounts::Block(_)));
}

#[test]
fn an_mqsim_replay_queues_behind_a_busy_device_and_scales_time() {
    // Due at 1000, 1000, 5000 and 250 000 ns; service 10 us, iodepth 1: the second waits for
    // the first (done at 11 000), the third for the second (21 000), the fourth is on time.
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut dev,
        &mut [replay("hand.mqsim.trace", None, ReplayOptions::default())],
        Nanos::from_secs(1),
        0,
    )
    .unwrap();
    assert_eq!(dev.times_ns(), vec![1000, 11_000, 21_000, 250_000]);
    // At 200 % the trace's times halve: 500, 500, 2500, 125 000.
    let fast = ReplayOptions {
        replay_time_scale: 200,
        ..ReplayOptions::default()
    };
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut dev,
        &mut [replay("hand.mqsim.trace", Some(TraceFormat::Mqsim), fast)],
        Nanos::from_secs(1),
        0,
    )
    .unwrap();
    assert_eq!(dev.times_ns(), vec![500, 10_500, 20_500, 125_000]);
}

#[test]
fn action_is_refused_for_formats_other_than_blkparse() {
    let e = TraceReplay::new(
        input("hand.mqsim.trace"),
        "m",
        None,
        Some(ReplayedAction::D),
        ReplayOptions::default(),
    )
    .err()
    .expect("refused");
    assert_eq!(
        e.to_string(),
        "m: `action` picks the blkparse action to replay, but this trace is in the mqsim format"
    );
}
