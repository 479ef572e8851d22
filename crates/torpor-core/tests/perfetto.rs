//! The Perfetto reader on traces the test encoder writes (`perfetto_writer/`), every value set
//! by hand: every event torpor reads, in both encodings of the scheduler's events, plain and
//! inside compressed packets, merged across CPUs; losses counted; `idle stats` and
//! `idle replay` reading a Perfetto file by content; bad input as one line with a byte offset.
//!
//! The fixture `tests/data/perfetto/every-event.pftrace` is this file's [`every_event`] trace,
//! and `every-event.expected` the events it must give: `tests/test_perfetto.py` decodes the
//! same fixture with the `perfetto` package from PyPI (Google's compiled schema, independent of
//! this reader) and requires the same lines.

mod perfetto_writer;

use perfetto_writer::{
    bundle, bundle_with, cpu_idle, event, sched_switch, trace, zlib_packets, Msg,
};
use torpor_core::error::InputError;
use torpor_core::trace::ftrace::{Event, EventKind, FtraceCounts, FtraceFormat};
use torpor_core::trace::perfetto::PerfettoReader;

const EXIT: u32 = u32::MAX;
const HRTIMER: i64 = 0xffff_0001;

fn generic(ts: u64, name: &str, fields: &[(&str, i64)]) -> Msg {
    let mut g = Msg::new().str(1, name);
    for (n, v) in fields {
        g = g.msg(2, Msg::new().str(1, n).int(4, *v));
    }
    event(ts, 327, g)
}

fn ftrace_stats(phase: u64, cpus: &[(u64, u64, u64)]) -> Msg {
    let mut s = Msg::new().uint(1, phase);
    for &(cpu, overrun, dropped) in cpus {
        s = s.msg(2, Msg::new().uint(1, cpu).uint(3, overrun).uint(8, dropped));
    }
    Msg::new().msg(34, s)
}

/// The fixture: two CPUs, every event kind, in the packet order a recorder writes them.
fn every_event() -> Vec<u8> {
    let symbols = Msg::new().msg(26, Msg::new().uint(1, 7).str(2, "tick_sched_timer"));
    let a = bundle(
        1,
        vec![
            cpu_idle(1000, 1, 1),
            event(1300, 36, Msg::new().int(1, 27).str(2, "arch_timer")),
            // Out of order inside its bundle: put in place.
            event(
                1200,
                553,
                Msg::new().uint(1, HRTIMER as u64).int(2, 1190).uint(3, 7),
            ),
            cpu_idle(1400, EXIT, 1),
            event(
                1500,
                551,
                Msg::new()
                    .uint(1, HRTIMER as u64)
                    .uint(2, 7)
                    .int(3, 5000)
                    .int(4, 4950),
            ),
            event(1600, 24, Msg::new().uint(1, 1)),
        ],
    )
    .uint(13, 1)
    .msg(12, symbols);
    let ipi = "Rescheduling interrupts";
    let b = bundle(
        0,
        vec![
            event(900, 11, Msg::new().uint(1, 1_800_000).uint(2, 0)),
            sched_switch(1100, 10, 1, 0),
            cpu_idle(1100, 2, 0),
            cpu_idle(2000, EXIT, 0),
            event(2100, 21, Msg::new().str(1, ipi)),
            event(2150, 22, Msg::new().str(1, ipi)),
            event(
                2200,
                17,
                Msg::new()
                    .str(1, "kworker/0:1")
                    .int(2, 55)
                    .int(3, 120)
                    .int(5, 1),
            ),
            event(
                2300,
                114,
                Msg::new().str(1, "sh").int(2, 56).int(3, 120).int(5, 0),
            ),
            sched_switch(2400, 0, 0x100, 55),
            generic(
                2500,
                "cpu_idle_miss",
                &[("cpu_id", 0), ("state", 2), ("below", 1)],
            ),
            generic(2600, "tick_stop", &[("success", 0), ("dependency", 4)]),
            generic(2700, "foo_bar", &[("x", 1)]),
        ],
    );
    let compact = Msg::new()
        .str(5, "swapper/1")
        .str(5, "app")
        .packed(1, &[3050, 100, 100])
        .packed(2, &[1, 0, 2])
        .packed(3, &[0, 77, 0])
        .packed(4, &[120, 120, 120])
        .packed(6, &[0, 1, 0])
        .packed(7, &[3120])
        .packed(8, &[77])
        .packed(9, &[1])
        .packed(10, &[120])
        .packed(11, &[1]);
    let c_inner = bundle_with(
        1,
        vec![
            event(
                3000,
                23,
                Msg::new().uint(1, 3).str(2, "Function call interrupts"),
            ),
            event(
                3100,
                555,
                Msg::new()
                    .uint(1, 0xabc)
                    .uint(2, 0xdead)
                    .uint(3, 4_294_937_296),
            ),
            event(
                3200,
                557,
                Msg::new()
                    .uint(1, 0xabc)
                    .uint(2, 4_294_937_296)
                    .uint(3, 0xdead),
            ),
            event(3300, 556, Msg::new().uint(1, 0xabc)),
            event(3400, 552, Msg::new().uint(1, HRTIMER as u64)),
        ],
        |b| b.msg(4, compact),
    );
    let d = bundle_with(0, vec![cpu_idle(3500, 0, 0)], |b| b.uint(3, 1));
    trace(&[
        ftrace_stats(1, &[(0, 5, 0), (1, 0, 0)]),
        a,
        b,
        zlib_packets(&[c_inner]),
        d,
        ftrace_stats(2, &[(0, 9, 1), (1, 0, 0)]),
        Msg::new().uint(10, 1).uint(42, 1),
    ])
}

/// The events of [`every_event`], worked out by hand from the packets above: merged by time,
/// CPU 1's first compact switch skipped (the task it switches out is not known), the others'
/// previous task the one switched in before; prev_state 1 = S, 0x100 = R+ (preempted),
/// 0 = R, 2 = D; timer functions by the interned symbol 7, or as a number.
const EXPECTED: &str = "\
900 0 cpu_frequency state=1800000 cpu_id=0
1000 1 cpu_idle state=1 cpu_id=1
1100 0 sched_switch prev_pid=10 prev_state=S next_pid=0
1100 0 cpu_idle state=2 cpu_id=0
1200 1 hrtimer_expire_entry hrtimer=4294901761 function=tick_sched_timer now=1190
1300 1 irq_handler_entry irq=27 name=arch_timer
1400 1 cpu_idle state=4294967295 cpu_id=1
1500 1 hrtimer_start hrtimer=4294901761 function=tick_sched_timer expires=5000 softexpires=4950
2000 0 cpu_idle state=4294967295 cpu_id=0
2100 0 ipi_entry reason=Rescheduling interrupts
2150 0 ipi_exit reason=Rescheduling interrupts
2200 0 sched_wakeup comm=kworker/0:1 pid=55 target_cpu=1
2300 0 sched_wakeup_new comm=sh pid=56 target_cpu=0
2400 0 sched_switch prev_pid=0 prev_state=R+ next_pid=55
2500 0 cpu_idle_miss cpu_id=0 state=2 below=1
2600 0 tick_stop success=0 dependency=SCHED
3000 1 ipi_raise target_cpus=00000003 reason=Function call interrupts
3100 1 timer_start timer=2748 function=0xdead expires=4294937296
3120 1 sched_waking comm=app pid=77 target_cpu=1
3150 1 sched_switch prev_pid=0 prev_state=R next_pid=77
3200 1 timer_expire_entry timer=2748 function=0xdead now=4294937296
3250 1 sched_switch prev_pid=77 prev_state=D next_pid=0
3300 1 timer_cancel timer=2748
3400 1 hrtimer_cancel hrtimer=4294901761
3500 0 cpu_idle state=0 cpu_id=0
";

/// One event as a line of [`EXPECTED`] (the field names of the kernel's events).
fn line(e: &Event<'_>) -> String {
    let body = match e.kind {
        EventKind::CpuIdle { state, cpu_id } => {
            format!("cpu_idle state={} cpu_id={cpu_id}", state.unwrap_or(EXIT))
        }
        EventKind::CpuIdleMiss {
            cpu_id,
            state,
            below,
        } => format!(
            "cpu_idle_miss cpu_id={cpu_id} state={state} below={}",
            below as u8
        ),
        EventKind::CpuFrequency { khz, cpu_id } => {
            format!("cpu_frequency state={khz} cpu_id={cpu_id}")
        }
        EventKind::SchedWakeup {
            comm,
            pid,
            target_cpu,
            new,
        } => format!(
            "sched_wakeup{} comm={comm} pid={pid} target_cpu={target_cpu}",
            if new { "_new" } else { "" }
        ),
        EventKind::SchedWaking {
            comm,
            pid,
            target_cpu,
        } => format!("sched_waking comm={comm} pid={pid} target_cpu={target_cpu}"),
        EventKind::SchedSwitch {
            prev_pid,
            prev_state,
            next_pid,
        } => {
            format!("sched_switch prev_pid={prev_pid} prev_state={prev_state} next_pid={next_pid}")
        }
        EventKind::HrtimerStart {
            hrtimer,
            function,
            expires_ns,
            softexpires_ns,
        } => format!(
            "hrtimer_start hrtimer={hrtimer} function={function} expires={expires_ns} \
             softexpires={softexpires_ns}"
        ),
        EventKind::HrtimerExpireEntry {
            hrtimer,
            function,
            now_ns,
        } => format!("hrtimer_expire_entry hrtimer={hrtimer} function={function} now={now_ns}"),
        EventKind::HrtimerCancel { hrtimer } => format!("hrtimer_cancel hrtimer={hrtimer}"),
        EventKind::TimerStart {
            timer,
            function,
            expires,
        } => format!("timer_start timer={timer} function={function} expires={expires}"),
        EventKind::TimerExpireEntry {
            timer,
            function,
            now,
        } => format!("timer_expire_entry timer={timer} function={function} now={now}"),
        EventKind::TimerCancel { timer } => format!("timer_cancel timer={timer}"),
        EventKind::TickStop {
            success,
            dependency,
        } => format!(
            "tick_stop success={} dependency={dependency}",
            success as u8
        ),
        EventKind::IrqHandlerEntry { irq, name } => {
            format!("irq_handler_entry irq={irq} name={name}")
        }
        EventKind::IpiRaise {
            target_mask,
            reason,
        } => format!("ipi_raise target_cpus={target_mask} reason={reason}"),
        EventKind::IpiEntry { reason } => format!("ipi_entry reason={reason}"),
        EventKind::IpiExit { reason } => format!("ipi_exit reason={reason}"),
    };
    format!("{} {} {body}\n", e.timestamp_ns, e.cpu)
}

fn read_all(bytes: &[u8]) -> Result<(String, FtraceCounts), InputError> {
    let mut r = PerfettoReader::new(bytes, "f.pftrace");
    let mut out = String::new();
    while let Some(e) = r.next_event()? {
        out.push_str(&line(&e));
    }
    Ok((out, r.counts()))
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perfetto")
}

#[test]
fn every_event_kind_in_time_order() {
    let (got, c) = read_all(&every_event()).unwrap();
    assert_eq!(got, EXPECTED);
    assert_eq!(c.events, 25);
    let unknown: Vec<(&str, u64)> = c
        .unknown_events
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(unknown, vec![("foo_bar", 1), ("softirq_entry", 1)]);
    // Packet D says events were lost; the kernel overran 9 + 1 - 5 = 5 events on CPU 0.
    assert_eq!((c.lost_markers, c.lost_events), (1, 5));
    let p = c.perfetto.expect("the Perfetto description");
    assert_eq!(p.packets, 8);
    assert_eq!(p.compressed_packets, 1);
    assert_eq!(p.ftrace_bundles, 4);
    assert_eq!(p.cpus_with_data, 2);
    assert_eq!(p.clock, "boot");
    assert_eq!(p.dropped_packets, 1);
    assert_eq!(p.compact_switches_skipped, 1);
    assert_eq!(p.unresolved_functions, 2);
    assert_eq!(p.late_events, 0);
    assert_eq!(c.backwards_timestamps, 0);
}

#[test]
fn the_committed_fixture_is_this_trace() {
    let dir = fixture_dir();
    assert_eq!(
        std::fs::read(dir.join("every-event.pftrace")).unwrap(),
        every_event(),
        "regenerate: cargo test -p torpor-core --test perfetto -- --ignored regenerate"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("every-event.expected")).unwrap(),
        EXPECTED
    );
}

/// Writes the fixture, its expected events and the fuzz seeds:
/// `cargo test -p torpor-core --test perfetto -- --ignored regenerate`.
#[test]
#[ignore = "writes the fixture and the fuzz seeds; run by hand"]
fn regenerate() {
    let dir = fixture_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let b = every_event();
    std::fs::write(dir.join("every-event.pftrace"), &b).unwrap();
    std::fs::write(dir.join("every-event.expected"), EXPECTED).unwrap();
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/perfetto");
    std::fs::create_dir_all(&seeds).unwrap();
    let mut all: Vec<(String, Vec<u8>)> = vec![("every-event".into(), b.clone())];
    for eighth in 1..8 {
        all.push((
            format!("every-event-cut{eighth}"),
            b[..b.len() * eighth / 8].to_vec(),
        ));
    }
    let idle = || bundle(0, vec![cpu_idle(10, 1, 0), cpu_idle(20, EXIT, 0)]);
    let compact = Msg::new()
        .str(5, "a")
        .packed(1, &[5, 5])
        .packed(2, &[0, 1])
        .packed(3, &[1, 0])
        .packed(4, &[120, 120])
        .packed(6, &[0, 0]);
    let zstd = ruzstd::encoding::compress_to_vec(
        &trace(&[idle()])[..],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let small: Vec<(&str, Vec<u8>)> = vec![
        ("idle", trace(&[idle()])),
        (
            "compact",
            trace(&[bundle_with(1, vec![], |b| b.msg(4, compact))]),
        ),
        ("zlib", trace(&[zlib_packets(&[idle(), idle()])])),
        ("zstd", trace(&[Msg::new().bytes(133, &zstd)])),
        (
            "lost",
            trace(&[bundle_with(0, vec![cpu_idle(5, 0, 0)], |b| b.uint(3, 1))]),
        ),
        (
            "stats",
            trace(&[
                ftrace_stats(1, &[(0, 1, 0)]),
                idle(),
                ftrace_stats(2, &[(0, 4, 0)]),
            ]),
        ),
        (
            "late",
            trace(&[
                bundle(1, vec![cpu_idle(100, 1, 1)]),
                bundle(0, vec![cpu_idle(50, 1, 0)]),
            ]),
        ),
        (
            "generic",
            trace(&[bundle(
                0,
                vec![generic(
                    7,
                    "tick_stop",
                    &[("success", 1), ("dependency", 8)],
                )],
            )]),
        ),
        ("bad-zlib", trace(&[Msg::new().bytes(50, b"\x78\x9cjunk")])),
        ("huge-claim", vec![0x0a, 0x80, 0xc8, 0xaf, 0xa0, 0x25]),
        ("empty", Vec::new()),
        ("text", b"# tracer: nop\n".to_vec()),
        (
            "symbols",
            trace(&[bundle(
                0,
                vec![event(9, 553, Msg::new().uint(1, 1).int(2, 9).uint(3, 3))],
            )
            .uint(13, 1)
            .msg(
                12,
                Msg::new().msg(26, Msg::new().uint(1, 3).str(2, "tick_sched_timer")),
            )]),
        ),
    ];
    all.extend(small.into_iter().map(|(n, v)| (n.to_string(), v)));
    for (name, bytes) in all {
        std::fs::write(seeds.join(format!("seed-{name}")), bytes).unwrap();
    }
}

/// Where each top-level packet of `b` ends (the reader stops cleanly there).
fn packet_ends(b: &[u8]) -> Vec<usize> {
    let mut ends = vec![0];
    let mut at = 0;
    while at < b.len() {
        let (len, n) = torpor_core::trace::perfetto::wire::varint(&b[at + 1..]).unwrap();
        at += 1 + n + len as usize;
        ends.push(at);
    }
    ends
}

#[test]
fn a_file_cut_anywhere_is_one_line_with_a_byte_offset() {
    let b = every_event();
    let ends = packet_ends(&b);
    for cut in 0..b.len() {
        match read_all(&b[..cut]) {
            Ok(_) => assert!(ends.contains(&cut), "cut at {cut} read without error"),
            Err(e) => {
                assert!(!ends.contains(&cut), "cut at a packet's end {cut}: {e}");
                let s = e.to_string();
                assert!(
                    s.starts_with("f.pftrace: ") && s.contains("(at byte "),
                    "{s}"
                );
                assert!(!s.contains('\n'));
                assert_eq!(e.line, None);
            }
        }
    }
}

fn error_of(packets: &[Msg]) -> String {
    read_all(&trace(packets)).unwrap_err().to_string()
}

#[test]
fn bad_packets_are_refused_where_they_start() {
    let good = bundle(0, vec![cpu_idle(10, 1, 0)]);
    let good_len = trace(std::slice::from_ref(&good)).len();
    // A packet claiming 10 GB: refused before reading it.
    let mut b = trace(std::slice::from_ref(&good));
    b.extend_from_slice(&[0x0a, 0x80, 0xc8, 0xaf, 0xa0, 0x25]);
    let e = read_all(&b).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "f.pftrace: a packet claims 10000000000 bytes; expected at most 67108864 (at byte \
             {good_len})"
        )
    );
    // Bogus zlib data.
    let bogus = Msg::new().bytes(50, b"\x78\x9cnot deflate");
    let e = error_of(&[good.clone(), bogus]);
    assert!(
        e.starts_with("f.pftrace: in zlib-compressed packets, the data does not decompress")
            && e.ends_with(&format!(
                "(at byte {good_len}, 0 bytes into its decompressed packets)"
            )),
        "{e}"
    );
    // Bogus zstd data.
    let e = error_of(&[Msg::new().bytes(133, b"not zstd")]);
    assert!(
        e.contains("zstd frame header is not valid") && e.ends_with("(at byte 0)"),
        "{e}"
    );
    // A state no kernel emits.
    let e = error_of(&[bundle(0, vec![cpu_idle(10, 12, 0)])]);
    assert!(
        e.contains("in a `cpu_idle` event, expected a `cpu_idle` state below 10"),
        "{e}"
    );
    // A bundle's CPU beyond Linux's largest.
    let e = error_of(&[bundle(9000, vec![cpu_idle(10, 1, 0)])]);
    assert!(
        e.contains("the bundle's `cpu` is 9000; expected a CPU below 8192"),
        "{e}"
    );
    // Compact arrays of different lengths.
    let compact = Msg::new()
        .str(5, "a")
        .packed(1, &[5, 5])
        .packed(2, &[0])
        .packed(3, &[1, 2])
        .packed(6, &[0, 0]);
    let e = error_of(&[bundle_with(0, vec![], |b| b.msg(4, compact))]);
    assert!(
        e.contains("2 switch timestamps but 1 `switch_prev_state`"),
        "{e}"
    );
    // A timestamp past torpor's horizon.
    let e = error_of(&[bundle(0, vec![cpu_idle(1 << 63, 1, 0)])]);
    assert!(
        e.contains("an event's timestamp is 9223372036854775808 ns"),
        "{e}"
    );
    // A string where a number belongs.
    let e = error_of(&[bundle(0, vec![event(5, 13, Msg::new().str(1, "x"))])]);
    assert!(e.contains("`state` is bytes; expected an integer"), "{e}");
}

/// Without `ftrace_stats` naming the CPUs, a CPU whose first bundle comes after another
/// CPU's later events gives late events, counted.
#[test]
fn late_events_are_counted() {
    let b = trace(&[
        bundle(1, vec![cpu_idle(100, 1, 1), cpu_idle(300, EXIT, 1)]),
        bundle(0, vec![cpu_idle(200, 1, 0)]),
    ]);
    let (got, c) = read_all(&b).unwrap();
    assert_eq!(
        got,
        "100 1 cpu_idle state=1 cpu_id=1\n300 1 cpu_idle state=4294967295 cpu_id=1\n\
         200 0 cpu_idle state=1 cpu_id=0\n"
    );
    assert_eq!(c.perfetto.unwrap().late_events, 1);
    // Named by ftrace_stats first, CPU 0 holds the merge back until it has spoken.
    let b = trace(&[
        ftrace_stats(1, &[(0, 0, 0), (1, 0, 0)]),
        bundle(1, vec![cpu_idle(100, 1, 1), cpu_idle(300, EXIT, 1)]),
        bundle(0, vec![cpu_idle(200, 1, 0)]),
    ]);
    let (got, c) = read_all(&b).unwrap();
    assert_eq!(
        got,
        "100 1 cpu_idle state=1 cpu_id=1\n200 0 cpu_idle state=1 cpu_id=0\n\
         300 1 cpu_idle state=4294967295 cpu_id=1\n"
    );
    assert_eq!(c.perfetto.unwrap().late_events, 0);
}

#[test]
fn a_sched_waking_event_reads_as_the_text_one() {
    // SchedWakingFtraceEvent (FtraceEvent field 20): comm 1, pid 2, prio 3, success 4,
    // target_cpu 5 (sched.proto).
    let waking = Msg::new()
        .str(1, "kworker/1:2")
        .uint(2, 4242)
        .uint(3, 120)
        .uint(4, 1)
        .uint(5, 1);
    let b = trace(&[bundle(0, vec![event(700, 20, waking)])]);
    let (got, c) = read_all(&b).unwrap();
    assert_eq!(
        got,
        "700 0 sched_waking comm=kworker/1:2 pid=4242 target_cpu=1\n"
    );
    assert!(c.unknown_events.is_empty());
    assert_eq!(c.known_events.get("sched_waking"), Some(&1));
}

#[test]
fn idle_stats_and_idle_replay_read_a_perfetto_trace_by_content() {
    let dir = std::env::temp_dir().join(format!("torpor-perfetto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A name that says text: the content decides.
    let path = dir.join("trace.txt");
    std::fs::write(&path, every_event()).unwrap();
    let stats = torpor_core::drivers::idle_stats::idle_stats(&path, None).unwrap();
    assert_eq!(stats.format, FtraceFormat::Perfetto);
    // cpu_idle: CPU 1 enters 1 at 1000, exits at 1400; CPU 0 enters 2 at 1100, exits at
    // 2000, enters 0 at 3500 (open at the end).
    assert_eq!(stats.cpu_idle_events, 5);
    assert_eq!(stats.sections["cpu1"][0]["hits"], 1);
    assert_eq!(stats.sections["cpu1"][0]["total_us"], 0.4);
    assert!(stats.trace.perfetto.is_some());
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
    assert_eq!(report.format, FtraceFormat::Perfetto);
    assert_eq!(report.periods, 2);
    // An error the replay raises at an event names its packet's byte, not a line.
    let e = torpor_core::drivers::idle_replay::replay_file(&path, Some("google-gs101"), &options)
        .unwrap_err();
    assert_eq!(e.line, None);
    assert!(e.message.contains("(at byte "), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn zstd_compressed_packets_read_as_zlib_ones() {
    let inner = [
        bundle(0, vec![cpu_idle(10, 1, 0)]),
        bundle(0, vec![cpu_idle(20, EXIT, 0)]),
    ];
    let zstd = ruzstd::encoding::compress_to_vec(
        &trace(&inner)[..],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let (got, c) = read_all(&trace(&[Msg::new().bytes(133, &zstd)])).unwrap();
    let (want, _) = read_all(&trace(&[zlib_packets(&inner)])).unwrap();
    assert_eq!(
        got,
        "10 0 cpu_idle state=1 cpu_id=0\n20 0 cpu_idle state=4294967295 cpu_id=0\n"
    );
    assert_eq!(got, want);
    assert_eq!(c.perfetto.unwrap().compressed_packets, 1);
}
