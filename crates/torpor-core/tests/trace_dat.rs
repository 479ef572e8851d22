//! The trace.dat reader on files built by the test's own writer (`trace_dat_writer/`, from
//! the documented layout), so these run everywhere: every event kind torpor decodes with
//! values set by hand, time extends, absolute timestamps, discarded records, lost events,
//! ties across CPUs, both versions, both byte orders, zlib and zstd; then bad input, each
//! case one `FILE: what was expected (at byte N)` line, within bounded time.

#[path = "trace_dat_writer/mod.rs"]
mod writer;

use std::time::{Duration, Instant};

use torpor_core::trace::ftrace::{EventKind, FtraceFormat};
use torpor_core::trace::trace_dat::TraceDatReader;
use torpor_core::InputError;
use writer::{id, payload, Dat, Order, Zip};

/// An expected event: CPU, nanoseconds, fields.
type Expected = (u32, u64, EventKind<'static>);

const T0: u64 = 1_000_000_000;
const EXTEND: u64 = (1 << 28) + 5;
const LONG_IRQ_NAME: &str =
    "a-very-long-interrupt-handler-name-that-does-not-fit-in-a-small-record-\
     so-its-length-goes-in-a-word-of-its-own";

fn comm(p: &mut [u8], at: usize, name: &str) {
    p[at..at + name.len()].copy_from_slice(name.as_bytes());
}

/// The fixture: CPU 0 and CPU 2 of a 4-CPU machine, and the events a reader must give.
fn fixture(version: u32, big: bool, zip: Option<Zip>) -> (Dat, Vec<Expected>) {
    fixture_paged(version, big, zip, 4096)
}

fn fixture_paged(
    version: u32,
    big: bool,
    zip: Option<Zip>,
    page_size: u32,
) -> (Dat, Vec<Expected>) {
    let mut d = Dat::new(version, big);
    d.zip = zip;
    d.page_size = page_size;
    let o = Order { big };
    let ps = d.page_size as usize;
    let mut exp: Vec<Expected> = Vec::new();

    // CPU 0, page 1.
    let mut p = d.page(T0);
    let mut e = payload(o, id::CPU_IDLE, 16);
    o.put(&mut e, 8, 1, 4);
    o.put(&mut e, 12, 0, 4);
    p.record(100, &e);
    exp.push((
        0,
        T0 + 100,
        EventKind::CpuIdle {
            state: Some(1),
            cpu_id: 0,
        },
    ));
    p.record(50, &payload(o, id::SCHED_LOAD_SE, 12)); // skipped: not an event torpor reads
    p.extend(EXTEND);
    let t_exit = T0 + 150 + EXTEND + 9;
    let mut e = payload(o, id::CPU_IDLE, 16);
    o.put(&mut e, 8, u64::from(u32::MAX), 4);
    p.record(9, &e);
    exp.push((
        0,
        t_exit,
        EventKind::CpuIdle {
            state: None,
            cpu_id: 0,
        },
    ));
    let mut e = payload(o, id::HRTIMER_EXPIRE_ENTRY, 32);
    o.put(&mut e, 8, 0xffff_0000_1234_5678, 8);
    o.put(&mut e, 16, 1_268_435_000, 8);
    o.put(&mut e, 24, 0xffff_ffc0_1012_3450, 8);
    p.record(10, &e);
    exp.push((
        0,
        t_exit + 10,
        EventKind::HrtimerExpireEntry {
            hrtimer: 0xffff_0000_1234_5678,
            function: "tick_nohz_handler",
            now_ns: 1_268_435_000,
        },
    ));
    // prev_state: 0 is R, 0x100 the preemption bit (R+), 0x81 two flags.
    for (k, (state, shown)) in [(0u64, "R"), (0x100, "R+"), (0x81, "S|I")]
        .into_iter()
        .enumerate()
    {
        let mut e = payload(o, id::SCHED_SWITCH, 64);
        comm(&mut e, 8, "swapper/0");
        o.put(&mut e, 32, state, 8);
        comm(&mut e, 40, "kworker/0:1");
        o.put(&mut e, 56, 57 + k as u64, 4);
        o.put(&mut e, 24, 7, 4);
        p.record(20, &e);
        exp.push((
            0,
            t_exit + 30 + 20 * k as u64,
            EventKind::SchedSwitch {
                prev_pid: 7,
                prev_state: shown,
                next_pid: 57 + k as i32,
            },
        ));
    }
    let mut t = t_exit + 70;
    // A record longer than 28 words: its length in a word of its own.
    let mut e = payload(o, id::IRQ_HANDLER_ENTRY, 16 + LONG_IRQ_NAME.len() + 1);
    o.put(&mut e, 8, 42, 4);
    o.put(
        &mut e,
        12,
        (((LONG_IRQ_NAME.len() + 1) << 16) | 16) as u64,
        4,
    );
    comm(&mut e, 16, LONG_IRQ_NAME);
    p.record(5, &e);
    t += 5;
    exp.push((
        0,
        t,
        EventKind::IrqHandlerEntry {
            irq: 42,
            name: LONG_IRQ_NAME,
        },
    ));
    p.discarded(7, 12); // a discarded record still moves time
    t += 7;
    let mut e = payload(o, id::IPI_RAISE, 32);
    o.put(&mut e, 8, (8 << 16) | 24, 4);
    o.put(&mut e, 16, 0xffff_ffc0_1100_0000, 8);
    o.put(&mut e, 24, 0b1010, 8);
    p.record(3, &e);
    t += 3;
    exp.push((
        0,
        t,
        EventKind::IpiRaise {
            target_mask: "00000000,0000000a",
            reason: "Rescheduling interrupts",
        },
    ));
    let mut e = payload(o, id::IPI_ENTRY, 16);
    o.put(&mut e, 8, 0xffff_ffc0_1100_0020, 8);
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::IpiEntry {
            reason: "Function call interrupts",
        },
    ));
    let mut e = payload(o, id::TICK_STOP, 16);
    o.put(&mut e, 12, 1 << 2, 4);
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::TickStop {
            success: false,
            dependency: "SCHED",
        },
    ));
    let mut e = payload(o, id::TIMER_START, 48);
    o.put(&mut e, 8, 0xabc, 8);
    o.put(&mut e, 16, 0xffff_ffc0_1020_0000, 8);
    o.put(&mut e, 24, 4_295_000_000, 8);
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::TimerStart {
            timer: 0xabc,
            function: "process_timeout",
            expires: 4_295_000_000,
        },
    ));
    let mut e = payload(o, id::CPU_IDLE_MISS, 20);
    o.put(&mut e, 12, 2, 4);
    e[16] = 1;
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::CpuIdleMiss {
            cpu_id: 0,
            state: 2,
            below: true,
        },
    ));
    let mut e = payload(o, id::SCHED_WAKEUP, 36);
    comm(&mut e, 8, "bash");
    o.put(&mut e, 24, 1234, 4);
    o.put(&mut e, 32, 2, 4);
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::SchedWakeup {
            comm: "bash",
            pid: 1234,
            target_cpu: 2,
            new: false,
        },
    ));
    let mut e = payload(o, id::SCHED_WAKING, 36);
    comm(&mut e, 8, "kworker/0:1");
    o.put(&mut e, 24, 57, 4);
    o.put(&mut e, 32, 3, 4);
    p.record(2, &e);
    t += 2;
    exp.push((
        0,
        t,
        EventKind::SchedWaking {
            comm: "kworker/0:1",
            pid: 57,
            target_cpu: 3,
        },
    ));
    let mut e = payload(o, id::CPU_FREQUENCY, 16);
    o.put(&mut e, 8, 1_800_000, 4);
    p.record(4, &e);
    t += 4;
    exp.push((
        0,
        t,
        EventKind::CpuFrequency {
            khz: 1_800_000,
            cpu_id: 0,
        },
    ));
    p.record(1, &payload(o, id::PRINT, 24)); // skipped
    let page1 = p.bytes(ps);

    // CPU 0, page 2: 3 events lost before it; an absolute timestamp.
    let mut p = d.page(2 * T0);
    p.lost = Some(Some(3));
    p.absolute(5 * T0 / 2);
    let mut e = payload(o, id::CPU_IDLE, 16);
    o.put(&mut e, 8, 0, 4);
    p.record(1, &e);
    exp.push((
        0,
        5 * T0 / 2 + 1,
        EventKind::CpuIdle {
            state: Some(0),
            cpu_id: 0,
        },
    ));
    d.data.push((0, vec![page1, p.bytes(ps)]));

    // CPU 2: one event between CPU 0's first two, one at the same time as CPU 0's exit
    // (CPU 0's comes first), then a page that lost events without a count.
    let mut p = d.page(T0 + 120);
    let mut e = payload(o, id::CPU_IDLE, 16);
    o.put(&mut e, 8, 2, 4);
    o.put(&mut e, 12, 2, 4);
    p.record(0, &e);
    exp.push((
        2,
        T0 + 120,
        EventKind::CpuIdle {
            state: Some(2),
            cpu_id: 2,
        },
    ));
    p.extend(t_exit - (T0 + 120));
    let mut e = payload(o, id::CPU_IDLE, 16);
    o.put(&mut e, 8, u64::from(u32::MAX), 4);
    o.put(&mut e, 12, 2, 4);
    p.record(0, &e);
    exp.push((
        2,
        t_exit,
        EventKind::CpuIdle {
            state: None,
            cpu_id: 2,
        },
    ));
    let mut q = d.page(3 * T0);
    q.lost = Some(None);
    let mut e = payload(o, id::CPU_FREQUENCY, 16);
    o.put(&mut e, 8, 600_000, 4);
    o.put(&mut e, 12, 2, 4);
    q.record(0, &e);
    exp.push((
        2,
        3 * T0,
        EventKind::CpuFrequency {
            khz: 600_000,
            cpu_id: 2,
        },
    ));
    d.data.push((2, vec![p.bytes(ps), q.bytes(ps)]));
    // Time order, ties to the lower CPU.
    exp.sort_by_key(|&(cpu, ts, _)| (ts, cpu));
    (d, exp)
}

fn read_all(bytes: Vec<u8>) -> Result<(Vec<Expected>, TraceDatReader<Vec<u8>>), InputError> {
    let mut r = TraceDatReader::new(bytes, "f.dat")?;
    let mut got = Vec::new();
    while let Some(ev) = r.next_event()? {
        // Owned strings leaked for the comparison: a test's few events.
        let kind = match ev.kind {
            EventKind::HrtimerExpireEntry {
                hrtimer,
                function,
                now_ns,
            } => EventKind::HrtimerExpireEntry {
                hrtimer,
                function: leak(function),
                now_ns,
            },
            EventKind::SchedSwitch {
                prev_pid,
                prev_state,
                next_pid,
            } => EventKind::SchedSwitch {
                prev_pid,
                prev_state: leak(prev_state),
                next_pid,
            },
            EventKind::IrqHandlerEntry { irq, name } => EventKind::IrqHandlerEntry {
                irq,
                name: leak(name),
            },
            EventKind::IpiRaise {
                target_mask,
                reason,
            } => EventKind::IpiRaise {
                target_mask: leak(target_mask),
                reason: leak(reason),
            },
            EventKind::IpiEntry { reason } => EventKind::IpiEntry {
                reason: leak(reason),
            },
            EventKind::TickStop {
                success,
                dependency,
            } => EventKind::TickStop {
                success,
                dependency: leak(dependency),
            },
            EventKind::TimerStart {
                timer,
                function,
                expires,
            } => EventKind::TimerStart {
                timer,
                function: leak(function),
                expires,
            },
            EventKind::SchedWakeup {
                comm,
                pid,
                target_cpu,
                new,
            } => EventKind::SchedWakeup {
                comm: leak(comm),
                pid,
                target_cpu,
                new,
            },
            EventKind::SchedWaking {
                comm,
                pid,
                target_cpu,
            } => EventKind::SchedWaking {
                comm: leak(comm),
                pid,
                target_cpu,
            },
            EventKind::CpuIdle { state, cpu_id } => EventKind::CpuIdle { state, cpu_id },
            EventKind::CpuIdleMiss {
                cpu_id,
                state,
                below,
            } => EventKind::CpuIdleMiss {
                cpu_id,
                state,
                below,
            },
            EventKind::CpuFrequency { khz, cpu_id } => EventKind::CpuFrequency { khz, cpu_id },
            other => panic!("the fixture has no {other:?}"),
        };
        got.push((ev.cpu, ev.timestamp_ns, kind));
    }
    Ok((got, r))
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

#[test]
fn every_version_byte_order_and_codec_gives_the_same_events() {
    let cases = [
        (6, false, None),
        (6, true, None),
        (7, false, None),
        (7, false, Some(Zip::Zlib)),
        (7, false, Some(Zip::Zstd)),
        (7, true, Some(Zip::Zstd)),
    ];
    for (version, big, zip) in cases {
        let (d, exp) = fixture(version, big, zip);
        let what = format!("v{version} big={big} {zip:?}");
        let (got, r) = read_all(d.bytes()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.len(), exp.len(), "{what}");
        for (i, (g, e)) in got.iter().zip(&exp).enumerate() {
            assert_eq!(g, e, "{what}: event {i}");
        }
        assert_eq!(r.header().format, FtraceFormat::TraceDat);
        assert_eq!(r.header().cpus, Some(4), "{what}");
        let c = r.counts();
        assert_eq!(c.events, exp.len() as u64);
        assert_eq!(c.unknown_events.get("sched_load_se"), Some(&1), "{what}");
        assert_eq!(c.unknown_events.get("print"), Some(&1), "{what}");
        assert_eq!((c.lost_markers, c.lost_events), (2, 3), "{what}");
        assert_eq!(c.backwards_timestamps, 0);
        let info = c.trace_dat.expect("trace.dat info");
        assert_eq!(info.version, version);
        assert_eq!(info.big_endian, big);
        assert_eq!(info.compression, zip.map(Zip::name));
        assert_eq!(info.clock.as_deref(), Some("mono"));
        assert_eq!((info.cpus_with_data, info.pages), (2, 4), "{what}");
        assert_eq!(info.lost_uncounted_pages, 1);
    }
}

#[test]
fn the_offset_option_moves_every_timestamp() {
    for version in [6, 7] {
        let (mut d, exp) = fixture(version, false, None);
        d.ts_offset = Some(-500_000_000);
        let (got, _) = read_all(d.bytes()).unwrap();
        let want: Vec<u64> = exp.iter().map(|e| e.1 - 500_000_000).collect();
        assert_eq!(got.iter().map(|e| e.1).collect::<Vec<_>>(), want);
    }
}

#[test]
fn idle_stats_and_idle_replay_read_a_trace_dat_by_content() {
    let (d, _) = fixture(7, false, Some(Zip::Zlib));
    let dir = std::env::temp_dir().join(format!("torpor-trace-dat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A name that says text: the content decides.
    let path = dir.join("trace.txt");
    std::fs::write(&path, d.bytes()).unwrap();
    let stats = torpor_core::drivers::idle_stats::idle_stats(&path, None).unwrap();
    assert_eq!(stats.format, FtraceFormat::TraceDat);
    // cpu_idle events: CPU 0 enters 1, exits, enters 0; CPU 2 enters 2, exits.
    assert_eq!(stats.cpu_idle_events, 5);
    assert_eq!(stats.sections["cpu0"][0]["hits"], 1);
    assert_eq!(
        stats.sections["cpu0"][0]["total_us"],
        ((EXTEND + 59) as f64) / 1000.0
    );
    let options = torpor_core::drivers::idle_replay::IdleReplayOptions {
        governors: torpor_core::drivers::idle_replay::parse_governors("menu").unwrap(),
        hz: None,
    };
    let report = torpor_core::drivers::idle_replay::replay_file(
        &path,
        Some("intel-skylake-client"),
        &options,
    )
    .unwrap();
    assert_eq!(report.format, FtraceFormat::TraceDat);
    // Two periods close (CPU 0's and CPU 2's); CPU 0's last entry stays open.
    assert_eq!(report.periods, 2);
    // An error the replay raises at an event names the record's byte, not a line.
    let e = torpor_core::drivers::idle_replay::replay_file(&path, Some("google-gs101"), &options)
        .unwrap_err();
    assert_eq!(e.line, None);
    assert!(
        e.message
            .starts_with("cpu_idle state=2 on CPU 2, but the platform's cluster")
            && e.message.contains("(at byte "),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An error as the user sees it: one line, the file first, a byte offset.
fn check(e: &InputError, what: &str) {
    let shown = e.to_string();
    assert!(!shown.contains('\n'), "{what}: {shown}");
    assert!(shown.starts_with("f.dat: "), "{what}: {shown}");
    assert!(
        shown.contains("(at byte "),
        "{what}: no byte offset: {shown}"
    );
}

fn error_of(bytes: Vec<u8>) -> InputError {
    match read_all(bytes) {
        Err(e) => e,
        Ok((got, _)) => panic!("read {} events from bad input", got.len()),
    }
}

#[test]
fn a_file_cut_at_any_byte_is_one_error_line() {
    for (version, zip) in [
        (6, None),
        (7, None),
        (7, Some(Zip::Zlib)),
        (7, Some(Zip::Zstd)),
    ] {
        let (d, _) = fixture(version, false, zip);
        let full = d.bytes();
        let n = full.len();
        // Every length through the metadata in front (v6: all of it; v7's sections, each a
        // block cut anywhere alike, every 7 bytes) and the last 2 KiB (v7's options section
        // and BUFFER option), every 97 bytes between (inside CPU data).
        let front_step = if version == 6 { 1 } else { 7 };
        let lengths = (0..n.min(12_000))
            .step_by(front_step)
            .chain((12_000..n.saturating_sub(2048)).step_by(97))
            .chain(n.saturating_sub(2048).max(12_000)..n);
        for len in lengths {
            let start = Instant::now();
            let e = error_of(full[..len].to_vec());
            let what = format!("v{version} {zip:?} cut at {len}");
            let shown = e.to_string();
            assert!(
                !shown.contains('\n') && shown.starts_with("f.dat: "),
                "{what}: {shown}"
            );
            if len >= 10 {
                assert!(shown.contains("(at byte "), "{what}: {shown}");
            }
            // A loop or a search through the file would take far longer than this.
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{what}: took {:?}",
                start.elapsed()
            );
        }
    }
}

#[test]
fn not_a_trace_dat() {
    let e = error_of(b"# tracer: nop\n".to_vec());
    assert_eq!(
        e.to_string(),
        "f.dat: expected a trace.dat: the bytes 0x17 0x08 0x44 and `tracing` (at byte 0)"
    );
    let mut v = Dat::new(6, false).bytes();
    v[10] = b'8';
    let e = error_of(v);
    check(&e, "version 8");
    assert!(e.message.contains("expected file version 6 or 7"), "{e}");
}

/// The fixture's bytes and where its first CPU's data starts.
fn plain_v6() -> (Vec<u8>, usize) {
    let (d, _) = fixture(6, false, None);
    let b = d.bytes();
    let first_page = b.len() - 4 * d.page_size as usize;
    (b, first_page)
}

#[test]
fn a_corrupt_page_header_is_refused() {
    let (mut b, page) = plain_v6();
    // Commit: more record bytes than a page holds.
    b[page + 8..page + 16].copy_from_slice(&5000u64.to_le_bytes());
    let e = error_of(b);
    check(&e, "commit");
    assert_eq!(
        e.to_string(),
        format!(
            "f.dat: corrupt ring-buffer data of CPU 0: the page header's commit word says 5000 \
             bytes of records, but the page holds at most 4080 (at byte {page})"
        )
    );
    // A record type header_event does not define cannot occur: all 32 are defined. A record
    // running past the committed data is refused.
    let (mut b, page) = plain_v6();
    b[page + 8..page + 16].copy_from_slice(&10u64.to_le_bytes());
    let e = error_of(b);
    check(&e, "short commit");
    assert!(e.message.contains("runs past the page's data"), "{e}");
}

#[test]
fn a_format_without_a_field_torpor_reads_is_refused_at_its_first_record() {
    let (mut d, _) = fixture(6, false, None);
    for (_, formats) in &mut d.systems {
        for f in formats.iter_mut() {
            if f.starts_with("name: cpu_idle\n") {
                *f = f.replace("\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n", "");
            }
        }
    }
    let e = error_of(d.bytes());
    check(&e, "missing field");
    assert!(
        e.message
            .starts_with("the format of `cpu_idle` has no field `cpu_id`, which torpor reads"),
        "{e}"
    );
    // A field placed past the record's end.
    let (mut d, _) = fixture(6, false, None);
    for (_, formats) in &mut d.systems {
        for f in formats.iter_mut() {
            if f.starts_with("name: cpu_frequency\n") {
                *f = f.replace("u32 cpu_id;\toffset:12;", "u32 cpu_id;\toffset:60;");
            }
        }
    }
    let e = error_of(d.bytes());
    check(&e, "field past the end");
    assert!(
        e.message.starts_with(
            "in a `cpu_frequency` record, the record holds 16 bytes, but its field `cpu_id` \
             needs bytes 60 to 64"
        ),
        "{e}"
    );
}

#[test]
fn bogus_compression_is_refused() {
    // An algorithm torpor does not read.
    let (d, _) = fixture(7, false, Some(Zip::Zlib));
    let mut b = d.bytes();
    let at = b.windows(5).position(|w| w == b"zlib\0").unwrap();
    b[at..at + 4].copy_from_slice(b"lz4x");
    let e = error_of(b);
    check(&e, "lz4");
    assert!(
        e.message
            .contains("expected the compression `none`, `zlib` or `zstd`"),
        "{e}"
    );
    // A section block whose data is not zlib: the HEADER INFO section is the first.
    let (d, _) = fixture(7, false, Some(Zip::Zlib));
    let mut b = d.bytes();
    let section = b.windows(5).position(|w| w == b"zlib\0").unwrap() + 5 + 4 + 8;
    let data = section + 16 + 8;
    b[data] ^= 0xff;
    b[data + 1] ^= 0xff;
    let e = error_of(b);
    check(&e, "garbage zlib");
    assert!(
        e.message.contains("the zlib data does not decompress"),
        "{e}"
    );
    // A block that says it decompresses to more than it does.
    let (d, _) = fixture(7, false, Some(Zip::Zstd));
    let mut b = d.bytes();
    let section = b.windows(5).position(|w| w == b"zstd\0").unwrap() + 5 + 4 + 8;
    let usize_at = section + 16 + 4;
    let claimed = u32::from_le_bytes(b[usize_at..usize_at + 4].try_into().unwrap()) + 1;
    b[usize_at..usize_at + 4].copy_from_slice(&claimed.to_le_bytes());
    let e = error_of(b);
    check(&e, "wrong size");
    assert!(e.message.contains("but its header says"), "{e}");
}

#[test]
fn huge_claimed_sizes_are_refused_before_any_allocation() {
    // v7: a section claiming 10 GB.
    let (d, _) = fixture(7, false, None);
    let mut b = d.bytes();
    let section = b.windows(5).position(|w| w == b"none\0").unwrap() + 6 + 8;
    b[section + 8..section + 16].copy_from_slice(&(10u64 << 30).to_le_bytes());
    let start = Instant::now();
    let e = error_of(b);
    check(&e, "10 GB section");
    assert!(e.message.contains("claims 10737418240 bytes"), "{e}");
    // v7 compressed: a block claiming to decompress to 4 GB.
    let (d, _) = fixture(7, false, Some(Zip::Zlib));
    let mut b = d.bytes();
    let section = b.windows(5).position(|w| w == b"zlib\0").unwrap() + 5 + 4 + 8;
    b[section + 16 + 4..section + 16 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error_of(b);
    check(&e, "4 GB block");
    assert!(
        e.message
            .contains("claims to decompress to 4294967295 bytes"),
        "{e}"
    );
    // v6: a symbol table claiming 4 GB, and a CPU's data running past the end.
    let d = Dat::new(6, false);
    let mut b = d.bytes();
    let kallsyms = b
        .windows(17)
        .position(|w| w == b"ffffffc010000000 ")
        .unwrap()
        - 4;
    b[kallsyms..kallsyms + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = error_of(b);
    check(&e, "4 GB kallsyms");
    assert!(e.message.contains("claims 4294967295 bytes"), "{e}");
    let (mut b, page) = plain_v6();
    let table = b.windows(10).position(|w| w == b"flyrecord\0").unwrap() + 10;
    b[table + 8..table + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e = error_of(b);
    check(&e, "CPU data past the end");
    assert_eq!(
        e.to_string(),
        format!(
            "f.dat: CPU 0's data runs 1099511627776 bytes from here, past the end of the file at \
             byte {}: the file is cut short (at byte {page})",
            page + 4 * 4096
        )
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_loop_of_options_sections_is_refused() {
    let (d, _) = fixture(7, false, None);
    let mut b = d.bytes();
    // The last option is DONE, whose 8 bytes point to the next options section: point it
    // at the first one.
    let head = b.windows(5).position(|w| w == b"none\0").unwrap() + 6;
    let options_at = u64::from_le_bytes(b[head..head + 8].try_into().unwrap());
    let len = b.len();
    b[len - 8..].copy_from_slice(&options_at.to_le_bytes());
    let e = error_of(b);
    check(&e, "options loop");
    assert!(e.message.contains("loop back"), "{e}");
}

/// Writes the fuzz target's seeds (`fuzz/corpus/trace_dat/seed-*`, with 1 KiB pages to keep
/// them small): `cargo test -p torpor-core --test trace_dat -- --ignored regenerate_fuzz_seeds`.
#[test]
#[ignore = "writes the fuzz seeds; run by hand"]
fn regenerate_fuzz_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/trace_dat");
    std::fs::create_dir_all(&dir).unwrap();
    let variants = [
        ("v6", 6, false, None),
        ("v6-be", 6, true, None),
        ("v7", 7, false, None),
        ("v7-zlib", 7, false, Some(Zip::Zlib)),
        ("v7-zstd", 7, false, Some(Zip::Zstd)),
        ("v7-be-zlib", 7, true, Some(Zip::Zlib)),
    ];
    for (name, version, big, zip) in variants {
        let (d, _) = fixture_paged(version, big, zip, 1024);
        let b = d.bytes();
        std::fs::write(dir.join(format!("seed-{name}")), &b).unwrap();
        for quarter in 1..4 {
            let cut = b.len() * quarter / 4;
            std::fs::write(dir.join(format!("seed-{name}-cut{quarter}")), &b[..cut]).unwrap();
        }
    }
    let (d, _) = fixture_paged(6, false, None, 1024);
    let mut b = d.bytes();
    let page = b.len() - 4 * 1024;
    b[page + 8..page + 16].copy_from_slice(&5000u64.to_le_bytes());
    std::fs::write(dir.join("seed-v6-bad-commit"), &b).unwrap();
}

#[test]
fn many_cpus_of_large_chunks_are_refused_within_a_memory_bound() {
    // 1 MiB pages, one record in the first of ten: each CPU holds a 10 MiB chunk while it
    // waits at its record; 40 CPUs share that data, 400 MiB in all, past the 256 MiB bound.
    let mut d = Dat::new(7, false);
    d.zip = Some(Zip::Zstd);
    d.page_size = 1 << 20;
    d.cpus = 64;
    d.alias_cpus = 39;
    let o = Order { big: false };
    let mut p = d.page(T0);
    p.record(1, &payload(o, id::CPU_IDLE, 16));
    let mut pages = vec![p.bytes(1 << 20)];
    pages.resize(10, d.page(T0).bytes(1 << 20));
    d.data.push((0, pages));
    let e = error_of(d.bytes());
    check(&e, "memory bound");
    assert!(
        e.message
            .contains("would take more than 268435456 bytes of memory at once"),
        "{e}"
    );
}

#[test]
fn pstates_from_a_trace_dat_are_those_of_the_same_events_as_text() {
    // tests/ftrace/pstates.report.txt (the P-state residency worked out by hand in
    // idle_stats/tests.rs) written as a trace.dat: one page per CPU column, each event a
    // cpu_idle or cpu_frequency record of that CPU.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ftrace");
    let text_path = dir.join("pstates.report.txt");
    let text = std::fs::read_to_string(&text_path).unwrap();
    let mut d = Dat::new(7, false);
    d.cpus = 2;
    let o = Order { big: false };
    // Per CPU column: (ns, event id, state, cpu_id) of each record.
    let mut per_cpu: Vec<Vec<(u64, u16, u32, u32)>> = vec![Vec::new(); 2];
    for line in text.lines().skip(1) {
        let column: usize = line[line.find('[').unwrap() + 1..line.find(']').unwrap()]
            .parse()
            .unwrap();
        let after = &line[line.find(']').unwrap() + 1..];
        let (secs, rest) = after.trim().split_once(':').unwrap();
        let ns = (secs.parse::<f64>().unwrap() * 1e6).round() as u64 * 1000;
        let (name, fields) = rest.trim().split_once(':').unwrap();
        let id = if name == "cpu_idle" {
            id::CPU_IDLE
        } else {
            id::CPU_FREQUENCY
        };
        let mut values = fields
            .split_whitespace()
            .map(|kv| kv.split_once('=').unwrap().1.parse::<u32>().unwrap());
        let (state, cpu_id) = (values.next().unwrap(), values.next().unwrap());
        per_cpu[column].push((ns, id, state, cpu_id));
    }
    for (cpu, events) in per_cpu.iter().enumerate() {
        let mut page = d.page(events[0].0);
        let mut last = events[0].0;
        for &(ns, id, state, cpu_id) in events {
            let mut e = payload(o, id, 16);
            o.put(&mut e, 8, u64::from(state), 4);
            o.put(&mut e, 12, u64::from(cpu_id), 4);
            page.record((ns - last) as u32, &e);
            last = ns;
        }
        d.data
            .push((cpu as u32, vec![page.bytes(d.page_size as usize)]));
    }
    let tmp = std::env::temp_dir().join(format!("torpor-pstates-dat-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let dat_path = tmp.join("pstates.dat");
    std::fs::write(&dat_path, d.bytes()).unwrap();
    let from_dat = torpor_core::drivers::idle_stats::idle_stats(&dat_path, None).unwrap();
    let from_text = torpor_core::drivers::idle_stats::idle_stats(&text_path, None).unwrap();
    assert_eq!(from_dat.format, FtraceFormat::TraceDat);
    assert_eq!(from_dat.pstates.cpu_frequency_events, 4);
    assert_eq!(from_dat.pstates, from_text.pstates);
    assert_eq!(from_dat.sections, from_text.sections);
    assert_eq!(
        from_dat.pstates.sections["cpu1"][0]["total_us"],
        serde_json::json!(550.0)
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
