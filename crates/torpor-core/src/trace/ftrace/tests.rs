//! Small hand-written traces of each format; the expected events are read off the text by
//! hand.

use super::*;

/// (cpu, timestamp ns, kind as Debug text, line) of one event.
type Seen = (u32, u64, String, usize);

/// Every event of `text`, then the counts.
fn read(text: &[u8]) -> Result<(Vec<Seen>, FtraceCounts), InputError> {
    let mut r = FtraceReader::new(text, "t.trace")?;
    let mut out = Vec::new();
    while let Some(e) = r.next_event()? {
        out.push((e.cpu, e.timestamp_ns, format!("{:?}", e.kind), e.line));
    }
    Ok((out, r.counts()))
}

fn err(text: &[u8]) -> String {
    read(text).unwrap_err().to_string()
}

#[test]
fn raw_trace_with_flags_column_and_every_event_kind() {
    let text = b"# tracer: nop
#
# entries-in-buffer/entries-written: 21/21   #P:4
#
#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION
#              | |         |   ||||      |         |
          <idle>-0       [001] d..1.  100.000001: cpu_idle: state=2 cpu_id=1
          <idle>-0       [001] d..1.  100.000500: cpu_idle: state=4294967295 cpu_id=1
          <idle>-0       [001] d..1.  100.000501: cpu_idle_miss: cpu_id=1 state=2 type=above
          <idle>-0       [000] d..2   100.001000: cpu_frequency: state=1800000 cpu_id=0
     kworker/0:1-57      [000] dN.3   100.001100: sched_wakeup: comm=Chrome IO pid=1234 prio=120 target_cpu=002
     kworker/0:1-57      [000] d..3   100.001200: sched_wakeup_new: comm=sh pid=99 prio=120 target_cpu=003
     kworker/0:1-57      [000] d..3   100.001250: sched_waking: comm=Chrome IO pid=1235 prio=120 target_cpu=001
     kworker/0:1-57      [000] d..3   100.001300: sched_switch: prev_comm=kworker/0:1 prev_pid=57 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [002] d.h1   100.002000: hrtimer_start: hrtimer=00000000a1b2c3d4 function=tick_nohz_handler expires=100004000000 softexpires=100004000000 mode=ABS
          <idle>-0       [002] d.h1   100.002100: hrtimer_expire_entry: hrtimer=00000000a1b2c3d4 function=tick_nohz_handler now=100004000123
          <idle>-0       [002] d.h1   100.002200: hrtimer_cancel: hrtimer=00000000a1b2c3d4
          <idle>-0       [003] ..s1   100.003000: timer_start: timer=ffff8881003ee0a8 function=delayed_work_timer_fn expires=4295000000 [timeout=250] cpu=3 idx=70 flags=I
          <idle>-0       [003] ..s1   100.003100: timer_expire_entry: timer=ffff8881003ee0a8 function=delayed_work_timer_fn now=4295000001 baseclk=4295000000
          <idle>-0       [003] ..s1   100.003200: timer_cancel: timer=0xffff8881003ee0a8
          <idle>-0       [003] d..1   100.003300: tick_stop: success=0 dependency=SCHED
          <idle>-0       [003] d.h1   100.003400: irq_handler_entry: irq=27 name=arch_timer
          <idle>-0       [003] d.h1   100.003500: ipi_raise: target_mask=00000000,00000002 (Rescheduling interrupts)
          <idle>-0       [001] d.h1   100.003600: ipi_entry: (Rescheduling interrupts)
          <idle>-0       [001] d.h1   100.003700: ipi_exit: (Rescheduling interrupts)
          <idle>-0       [001] d..1   100.003800: sugov_next_freq: cpu=1 util=12
";
    let (events, counts) = read(text).unwrap();
    let expected: Vec<(u32, u64, &str, usize)> = vec![
        (1, 100_000_001_000, "CpuIdle { state: Some(2), cpu_id: 1 }", 7),
        (1, 100_000_500_000, "CpuIdle { state: None, cpu_id: 1 }", 8),
        (1, 100_000_501_000, "CpuIdleMiss { cpu_id: 1, state: 2, below: false }", 9),
        (0, 100_001_000_000, "CpuFrequency { khz: 1800000, cpu_id: 0 }", 10),
        (0, 100_001_100_000, "SchedWakeup { comm: \"Chrome IO\", pid: 1234, target_cpu: 2, new: false }", 11),
        (0, 100_001_200_000, "SchedWakeup { comm: \"sh\", pid: 99, target_cpu: 3, new: true }", 12),
        (0, 100_001_250_000, "SchedWaking { comm: \"Chrome IO\", pid: 1235, target_cpu: 1 }", 13),
        (0, 100_001_300_000, "SchedSwitch { prev_pid: 57, prev_state: \"I\", next_pid: 0 }", 14),
        (2, 100_002_000_000, "HrtimerStart { hrtimer: 2712847316, function: \"tick_nohz_handler\", expires_ns: 100004000000, softexpires_ns: 100004000000 }", 15),
        (2, 100_002_100_000, "HrtimerExpireEntry { hrtimer: 2712847316, function: \"tick_nohz_handler\", now_ns: 100004000123 }", 16),
        (2, 100_002_200_000, "HrtimerCancel { hrtimer: 2712847316 }", 17),
        (3, 100_003_000_000, "TimerStart { timer: 18446612686369120424, function: \"delayed_work_timer_fn\", expires: 4295000000 }", 18),
        (3, 100_003_100_000, "TimerExpireEntry { timer: 18446612686369120424, function: \"delayed_work_timer_fn\", now: 4295000001 }", 19),
        (3, 100_003_200_000, "TimerCancel { timer: 18446612686369120424 }", 20),
        (3, 100_003_300_000, "TickStop { success: false, dependency: \"SCHED\" }", 21),
        (3, 100_003_400_000, "IrqHandlerEntry { irq: 27, name: \"arch_timer\" }", 22),
        (3, 100_003_500_000, "IpiRaise { target_mask: \"00000000,00000002\", reason: \"Rescheduling interrupts\" }", 23),
        (1, 100_003_600_000, "IpiEntry { reason: \"Rescheduling interrupts\" }", 24),
        (1, 100_003_700_000, "IpiExit { reason: \"Rescheduling interrupts\" }", 25),
    ];
    let got: Vec<(u32, u64, &str, usize)> = events
        .iter()
        .map(|(c, t, k, l)| (*c, *t, k.as_str(), *l))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(counts.events, 19);
    assert_eq!(counts.unknown_events.get("sugov_next_freq"), Some(&1));
    // 0xa1b2c3d4 and 0xffff8881003ee0a8 in decimal (checked with Python's int()).
    assert_eq!(0xa1b2c3d4_u64, 2_712_847_316);
    assert_eq!(0xffff8881003ee0a8_u64, 18_446_612_686_369_120_424);
}

#[test]
fn systrace_tgid_column_and_no_flags_column() {
    // systrace: TGID column; then the same events with the irq-info option off (no flags).
    let text = b"# tracer: nop
#
# entries-in-buffer/entries-written: 3/3   #P:8
#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION
kworker/u17:1-959   (  959) [006] d..3   538.064659: sched_switch: prev_comm=kworker/u17:1 prev_pid=959 prev_prio=100 prev_state=S ==> next_comm=swapper/6 next_pid=0 next_prio=120
          <idle>-0     (-----) [006] d..2   538.064674: cpu_idle: state=2 cpu_id=6
          <idle>-0     [007]   538.1: cpu_idle: state=0 cpu_id=7
";
    let (events, _) = read(text).unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0].1, 538_064_659_000);
    assert_eq!(events[1].2, "CpuIdle { state: Some(2), cpu_id: 6 }");
    assert_eq!((events[2].0, events[2].1), (7, 538_100_000_000));
}

#[test]
fn trace_cmd_reports_old_and_new_headers_and_compact_sched_switch() {
    let old = b"version = 6
cpus=8
\t  <idle>-0     [006]  7115.449624: cpu_idle:             state=0 cpu_id=6
";
    let (events, _) = read(old).unwrap();
    assert_eq!(
        events,
        vec![(
            6,
            7_115_449_624_000,
            "CpuIdle { state: Some(0), cpu_id: 6 }".to_string(),
            3
        )]
    );
    let new = b"cpus=6
CPU 3 is empty
       trace-cmd-6244  [005] 162534.215742: sched_switch:         trace-cmd:6244 [120] x ==> swapper/5:0 [120]
          <idle>-0     [005] 162534.215764: cpu_idle:             state=2 cpu_id=5
";
    let (events, counts) = read(new).unwrap();
    assert_eq!(
        events[0].2,
        "SchedSwitch { prev_pid: 6244, prev_state: \"x\", next_pid: 0 }"
    );
    assert_eq!(events[1].1, 162_534_215_764_000);
    assert_eq!(counts.empty_cpu_notes, 1);
}

fn idlestat_header(cpus: u32, topology: &str, states: &[(&str, i64)]) -> String {
    let mut s = format!("idlestat version = 0.8\ncpus={cpus}\n{topology}");
    for c in 0..cpus {
        s += &format!("cpuid {c}:\n");
        for i in 0..IDLESTAT_STATES {
            match states.get(i) {
                Some((n, r)) => s += &format!("\t{n}\n\t{r}\n"),
                None => s += "\t(null)\n\t-1\n",
            }
        }
    }
    s
}

#[test]
fn idlestat_trace_header_gives_topology_and_states() {
    let mut text = idlestat_header(
        3,
        "clusterA:\n\tcore0\n\t\tcpu0\n\t\tcpu1\nclusterB:\n\tcpu2\n",
        &[("WFI", 1), ("C2", 300)],
    );
    text += "      idlestat-4000  [000] ....   10.000000: cpu_frequency: state=800000 cpu_id=0\n";
    text += "          <idle>-0     [002] d..1  10.000100: cpu_idle: state=1 cpu_id=2\n";
    let mut r = FtraceReader::new(text.as_bytes(), "t.trace").unwrap();
    let h = r.header().clone();
    assert_eq!(h.format, FtraceFormat::Idlestat);
    assert_eq!(h.cpus, Some(3));
    assert_eq!(
        h.topology.unwrap(),
        vec![
            CpuPlace {
                cluster: 0,
                core: 0,
                cpu: 0
            },
            CpuPlace {
                cluster: 0,
                core: 0,
                cpu: 1
            },
            CpuPlace {
                cluster: 1,
                core: 2,
                cpu: 2
            },
        ]
    );
    let states = h.states.unwrap();
    assert_eq!(states.len(), 3);
    assert_eq!(
        states[2][1],
        TableState {
            name: Some("C2".into()),
            target_residency_us: Some(300)
        }
    );
    assert_eq!(
        states[2][2],
        TableState {
            name: None,
            target_residency_us: None
        }
    );
    let e = r.next_event().unwrap().unwrap();
    assert_eq!(
        e.kind,
        EventKind::CpuFrequency {
            khz: 800_000,
            cpu_id: 0
        }
    );
    let e = r.next_event().unwrap().unwrap();
    assert_eq!(
        (e.cpu, e.timestamp_ns, e.line),
        (2, 10_000_100_000, 3 + 5 + 3 * 33 + 2)
    );
    assert!(r.next_event().unwrap().is_none());
}

#[test]
fn warnings_are_counted_not_fatal() {
    let text = b"cpus=2
          <idle>-0     [001]  10.000200: cpu_idle: state=0 cpu_id=1
          <idle>-0     [001]  10.000100: cpu_idle: state=4294967295 cpu_id=1
CPU:0 [LOST 17 EVENTS]
##### CPU 1 buffer started ####
          <idle>-0     [000]  10.000300: cpu_idle: state=0 cpu_i";
    let (events, counts) = read(text).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(counts.backwards_timestamps, 1);
    assert_eq!(counts.first_backwards_line, Some(3));
    assert_eq!((counts.lost_markers, counts.lost_events), (1, 17));
    assert_eq!(counts.buffer_started_markers, 1);
    assert!(counts.truncated_last_line);
    // The same when the cut-short last line still has its newline (trappy's unsorted trace).
    let (events, counts) =
        read(b"cpus=1\n  a-1 [000] 1.0: sched_switch: prev_comm=a prev_pid=1\n").unwrap();
    assert!(events.is_empty() && counts.truncated_last_line);
    assert!(counts.known_events.is_empty());
}

#[test]
fn malformed_lines_are_errors_at_their_line() {
    // Each bad line has a good one after it: a bad last line is only counted (see below).
    assert_eq!(
        err(b"cpus=2\n  <idle>-0 [002] 1.000000: cpu_idle: state=0 cpu_id=0\n  <idle>-0 [000] 2.000000: cpu_idle: state=0 cpu_id=0\n"),
        "t.trace:2: CPU column says CPU 2, but the header says the trace has 2 CPUs"
    );
    assert_eq!(
        err(b"cpus=2\n  <idle>-0 [001] 1.000000: cpu_idle: state=10 cpu_id=1\n  <idle>-0 [000] 2.000000: cpu_idle: state=0 cpu_id=0\n"),
        "t.trace:2: expected a `cpu_idle` state below 10 (the kernel's CPUIDLE_STATE_MAX) or \
         4294967295 (exit), got 10"
    );
    assert_eq!(
        err(b"cpus=2\n  <idle>-0 [001] 1.000000: cpu_idle: state=1\n  x\n"),
        "t.trace:2: expected `cpu_id=` in the fields of `cpu_idle`, got \"state=1\""
    );
    assert_eq!(
        err(
            b"cpus=2\n\x00\x01\x02garbage\n  <idle>-0 [000] 2.000000: cpu_idle: state=0 cpu_id=0\n"
        ),
        "t.trace:2: expected an event line `TASK-PID [CPU] TIMESTAMP: EVENT: FIELDS`, got \
         \"\\0\\u{1}\\u{2}garbage\""
    );
    assert_eq!(
        err(b"\x17\x08\x44tracing6\n"),
        "t.trace:1: this is a binary trace.dat, which torpor reads from a file, not a stream \
         (its CPUs' data lies at offsets): give its path, or convert it with `trace-cmd report \
         FILE > FILE.txt`"
    );
    assert_eq!(
        err(b"cpus=1\n  <idle>-0 [000] 123456: cpu_idle: state=0 cpu_id=0\n"),
        "t.trace:2: expected a timestamp in seconds with up to nine decimals \
         (`538.064659:`), got \"123456\"; traces taken with a counter clock (`x86-tsc`, \
         `counter`) are not supported"
    );
    let long = format!(
        "cpus=1\n{}\n",
        "x".repeat(crate::user_file::MAX_LINE_BYTES + 1)
    );
    assert!(err(long.as_bytes()).starts_with("t.trace:2: the line is longer than 64 KiB"));
    assert_eq!(
        err(b""),
        "t.trace: the file is empty; expected ftrace text (a `trace` file, `trace-cmd report` \
         output or an idlestat trace)"
    );
}

/// A tiny deterministic generator (xorshift), so the test needs no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bytes_and_mutated_lines_never_panic() {
    let seed_lines: &[&[u8]] = &[
        b"cpus=4\n",
        b"# tracer: nop\n",
        b"#P:4\n",
        b"idlestat version = 0.8\n",
        b"          <idle>-0     [001] d..1  100.000001: cpu_idle: state=2 cpu_id=1\n",
        b"     kworker/0:1-57      [000] dN.3   100.001100: sched_wakeup: comm=x pid=1 prio=120 target_cpu=002\n",
        b"  <idle>-0 [002] d.h1 100.002000: hrtimer_start: hrtimer=00000000a1b2c3d4 function=f expires=1 softexpires=1\n",
        b"  <idle>-0 [003] d.h1 100.0035: ipi_raise: target_mask=00000000,00000002 (x)\n",
        b"  a-1 [000] 1.0: sched_switch: a:1 [120] R ==> b:2 [120]\n",
        b"clusterA:\n",
        b"\tcore0\n",
        b"\t\tcpu0\n",
        b"cpuid 0:\n",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let mut text = Vec::new();
        let lines = 1 + rng.next() % 12;
        for _ in 0..lines {
            let mut line = seed_lines[(rng.next() % seed_lines.len() as u64) as usize].to_vec();
            match rng.next() % 4 {
                0 => {}
                1 => {
                    let cut = (rng.next() as usize) % (line.len() + 1);
                    line.truncate(cut);
                }
                2 => {
                    for _ in 0..1 + rng.next() % 4 {
                        let at = (rng.next() as usize) % line.len().max(1);
                        if at < line.len() {
                            line[at] = rng.next() as u8;
                        }
                    }
                }
                _ => {
                    line = (0..rng.next() % 200).map(|_| rng.next() as u8).collect();
                }
            }
            text.extend_from_slice(&line);
        }
        // Either outcome is fine; only a panic fails.
        let _ = read(&text);
        let _ = crate::drivers::idle_stats::from_reader(&text[..], "t.trace", None, None);
    }
}

#[test]
fn known_index_names_every_known_event() {
    for (i, name) in KNOWN.iter().enumerate() {
        assert_eq!(known_index(name.as_bytes()), Some(i), "{name}");
    }
    assert_eq!(known_index(b"cpu_idl"), None);
    assert_eq!(known_index(b""), None);
}

#[test]
fn field_finds_the_key_at_the_start_or_after_a_space() {
    let f = b"prev_state=S state=1 cpu_id=3 xstate=9";
    assert_eq!(field(f, b"state"), Some(&b"1"[..]));
    assert_eq!(field(f, b"prev_state"), Some(&b"S"[..]));
    assert_eq!(field(f, b"cpu_id"), Some(&b"3"[..]));
    assert_eq!(field(b"state", b"state"), None);
    assert_eq!(field(b"state=", b"state"), Some(&b""[..]));
    assert_eq!(field(b"a state x=1", b"state"), None);
}

/// The one-pass lookup gives, for every key, what a [`field`] search per key gives, on
/// `sched_switch` fields in the kernel's form, with a comm that mimics a key, with a key
/// missing or repeated, and on edge cases (empty, trailing space, a bare key).
#[test]
fn fields_of_agrees_with_field_per_key() {
    let keys: [&[u8]; 3] = [b"prev_pid", b"prev_state", b"next_pid"];
    let cases: &[&[u8]] = &[
        b"prev_comm=kworker/0:1 prev_pid=57 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120",
        b"prev_comm=a prev_pid=9 b prev_pid=57 prev_prio=120 prev_state=R+ ==> next_comm=x next_pid=3 next_prio=120",
        b"prev_comm=x prev_pid=5 prev_state=S",
        b"next_pid=4 prev_pid=1 prev_pid=2 prev_state= next_pid=8",
        b"xprev_pid=1 prev_pidx=2 prev_pid",
        b"prev_pid=7 ",
        b" prev_pid=7",
        b"",
        b" ",
        b"prev_pid=",
    ];
    for f in cases {
        let want = keys.map(|k| field(f, k));
        assert_eq!(fields_of(f, keys), want, "{}", String::from_utf8_lossy(f));
    }
    // Hand-read values for the kernel's form.
    assert_eq!(
        fields_of(cases[0], keys),
        [Some(&b"57"[..]), Some(&b"I"[..]), Some(&b"0"[..])]
    );
    assert_eq!(
        fields_of(cases[1], keys),
        [Some(&b"9"[..]), Some(&b"R+"[..]), Some(&b"3"[..])]
    );
}

/// The timestamp's fraction scaled to nanoseconds, one to nine decimals, worked out by hand.
#[test]
fn timestamps_of_every_precision() {
    assert_eq!(parse_timestamp(b"1.5"), Ok(1_500_000_000));
    assert_eq!(parse_timestamp(b"538.064659"), Ok(538_064_659_000));
    assert_eq!(parse_timestamp(b"0.000000001"), Ok(1));
    assert_eq!(parse_timestamp(b"18446744073.709551615"), Ok(u64::MAX));
    assert!(parse_timestamp(b"18446744073.709551616").is_err());
    assert!(parse_timestamp(b"1.0000000001").is_err());
    assert!(parse_timestamp(b"1.").is_err());
    assert!(parse_timestamp(b"1.5x").is_err());
    assert!(parse_timestamp(b"x.5").is_err());
    assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
    assert_eq!(parse_u64(b"18446744073709551616"), None);
    assert_eq!(
        parse_u64(b"9999999999999999999"),
        Some(9_999_999_999_999_999_999)
    );
    assert_eq!(parse_u64(b"12a"), None);
}

/// The word-at-a-time search finds what a byte-by-byte search finds, at every length and
/// alignment, with the needle absent, first, last, repeated, and beside bytes one above or
/// below it (where a borrow could flag the wrong byte).
#[test]
fn find_byte_agrees_with_a_byte_loop() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let alphabet = [b' ', b'[', b'!', b'Z', b'\\', 0x00, 0xff, 0x80, b'a'];
    for _ in 0..20_000 {
        let len = (rng.next() % 40) as usize;
        let hay: Vec<u8> = (0..len)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        for needle in [b' ', b'[', 0x00, 0xff] {
            let want = hay.iter().position(|&b| b == needle);
            assert_eq!(find_byte(&hay, needle), want, "{hay:?} {needle}");
        }
    }
}

/// The one-pass reading of the kernel's layout answers only where the general checks give the
/// same answer: hand-picked lines of every layout, then mutations of them over the bytes the
/// layout is made of. It does answer for the kernel's, trace-cmd's and systrace's event lines
/// (values read off the text by hand).
#[test]
fn kernel_layout_agrees_with_the_general_checks() {
    // (line, (CPU, timestamp ns, offset of the event name))
    type Answer = (u32, u64, usize);
    let answered: &[(&[u8], Answer)] = &[
        (
            b"          <idle>-0     [001] d..1  100.000001: cpu_idle: state=2 cpu_id=1",
            (1, 100_000_001_000, 47),
        ),
        (
            b"     kworker/0:1-57      [000] dN.3.   1.5: sched_switch: x",
            (0, 1_500_000_000, 44),
        ),
        (b"  a-1 [12345] 0.000000001: e:", (12345, 1, 27)),
        (b"  a-1 [7]\t\t2.25:\tev: f", (7, 2_250_000_000, 17)),
        (
            b"  b-2 [003] ....  18446744073.709551615: e: f",
            (3, u64::MAX, 41),
        ),
        (
            b"     surfaceflinger-495   (  495) [002] ...1  12.000100: tracing_mark_write: B",
            (2, 12_000_100_000, 57),
        ),
        // The kernel's `[%03d]` and six decimals (each read as one word).
        (
            b"  k-12   [002]  1000.000103: sched_switch: x",
            (2, 1_000_000_103_000, 29),
        ),
        (b"  a-1 [127] 5.999999:\te", (127, 5_999_999_000, 22)),
    ];
    for (line, want) in answered {
        assert_eq!(kernel_layout(line), Some(*want), "{}", Lossy(line));
    }
    let general = |line: &[u8]| match classify_any_layout(line) {
        LineClass::Event {
            cpu,
            ts: Ok(ts),
            event_at,
        } => Some((cpu, ts, event_at)),
        _ => None,
    };
    let seeds: &[&[u8]] = &[
        b"          <idle>-0     [001] d..1  100.000001: cpu_idle: state=2 cpu_id=1",
        b"  a-1 [000] 1.0: sched_switch: a:1 [120] R ==> b:2 [120]",
        b"  CPU-1 [000] 1.0: e: f",
        b"CPU:1 [LOST 7 EVENTS]",
        b"# [000] 1.0: e:",
        b"  x[9]-1 [001] 1.5: e:",
        b"  a-1 [123456] 1.5: e:",
        b"  a-1 [001] 18446744073.709551616: e:",
        b"  a-1 [001] 1.1234567891: e:",
        b"  a-1 [001] 12345678901234567890.1: e:",
        b"  k-12   [002]  1000.000103: sched_switch: x",
        b"  a-1 [127] 5.999999:\te",
        b"  a-1 [001] 1.000001:",
    ];
    for seed in seeds {
        if let Some(fast) = kernel_layout(seed) {
            assert_eq!(Some(fast), general(seed), "{}", Lossy(seed));
        }
    }
    let alphabet = b" \t[]().:#01925CPUdx";
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut answers = 0;
    for _ in 0..200_000 {
        let mut line = seeds[(rng.next() % seeds.len() as u64) as usize].to_vec();
        for _ in 0..1 + rng.next() % 3 {
            let at = (rng.next() as usize) % line.len();
            let b = alphabet[(rng.next() % alphabet.len() as u64) as usize];
            match rng.next() % 3 {
                0 => line[at] = b,
                1 => line.insert(at, b),
                _ => {
                    line.remove(at);
                }
            }
            if line.is_empty() {
                break;
            }
        }
        if let Some(fast) = kernel_layout(&line) {
            answers += 1;
            assert_eq!(Some(fast), general(&line), "{}", Lossy(&line));
        }
    }
    assert!(
        answers > 10_000,
        "only {answers} mutated lines read in one pass"
    );
}

/// With `fields_only_of`, the other known events are counted by name and their fields not
/// checked, except on the last line, where a missing field still marks the trace cut short
/// (as without it) and a complete wrong line is counted like any other.
#[test]
fn fields_only_of_checks_other_events_up_to_their_name() {
    let idle = "  <idle>-0 [000] d..1 1.000001: cpu_idle: state=1 cpu_id=0\n";
    let bad_switch = "  a-1 [000] d..2 1.000002: sched_switch: prev_pid=zz\n";
    let bad_irq = "  a-1 [000] d.h2 1.000003: irq_handler_entry: irq=x name=y\n";
    let exit = "  <idle>-0 [000] d..1 1.000004: cpu_idle: state=4294967295 cpu_id=0\n";
    let only = |text: &str| -> Result<(Vec<Seen>, FtraceCounts), InputError> {
        let mut r = FtraceReader::new(text.as_bytes(), "t.trace")?;
        r.fields_only_of(&["cpu_idle"]);
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push((e.cpu, e.timestamp_ns, format!("{:?}", e.kind), e.line));
        }
        Ok((out, r.counts()))
    };
    let text = format!("{idle}{bad_switch}{bad_irq}{exit}");
    assert!(read(text.as_bytes()).is_err());
    let (events, counts) = only(&text).unwrap();
    assert_eq!(
        events.iter().map(|e| e.3).collect::<Vec<_>>(),
        [1, 4],
        "only the cpu_idle lines are returned"
    );
    assert_eq!(counts.events, 4);
    assert_eq!(counts.known_events["sched_switch"], 1);
    assert_eq!(counts.known_events["irq_handler_entry"], 1);
    assert!(!counts.truncated_last_line);
    // A cpu_idle line keeps every check.
    let bad_idle = idle.replace("state=1", "state=x");
    assert!(only(&format!("{bad_idle}{exit}")).is_err());
    // Last lines: a missing field (cut by hand) or no line end is a cut-short trace.
    let cut = "  a-1 [000] d..2 1.000005: sched_switch: prev_comm=bash prev_pid=1\n";
    for last in [cut, cut.trim_end(), bad_switch.trim_end()] {
        let (_, counts) = only(&format!("{idle}{exit}{last}")).unwrap();
        assert!(counts.truncated_last_line, "{last}");
        assert_eq!(counts.known_events.get("sched_switch"), None, "{last}");
        assert_eq!(counts.events, 2);
    }
    // A complete last line whose fields are wrong but all there is counted.
    let (_, counts) = only(&format!("{idle}{exit}{bad_switch}")).unwrap();
    assert!(!counts.truncated_last_line);
    assert_eq!(counts.known_events["sched_switch"], 1);
}

/// Skipping blanks eight bytes at a time stops where a byte loop stops, over runs of spaces and
/// tabs of every length and start.
#[test]
fn skip_blanks_agrees_with_a_byte_loop() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let alphabet = [b' ', b' ', b' ', b'\t', b'a', 0x00, 0xa0];
    for _ in 0..20_000 {
        let len = (rng.next() % 40) as usize;
        let line: Vec<u8> = (0..len)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        let from = (rng.next() % 42) as usize;
        let want = (from..)
            .find(|&i| !matches!(line.get(i), Some(b' ' | b'\t')))
            .unwrap();
        assert_eq!(skip_blanks(&line, from), want, "{line:?} from {from}");
    }
}
