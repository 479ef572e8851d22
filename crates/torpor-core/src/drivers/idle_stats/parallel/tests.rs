//! The parallel scan against the streaming reader: the same report, whatever the block size
//! (down to one byte, so that every line boundary falls at a block start), and the file handed
//! back wherever the streaming reader stops or may stop.

use std::path::{Path, PathBuf};

use super::*;
use crate::drivers::idle_stats::from_reader;

/// Block sizes from one byte up to the default.
const SIZES: [usize; 6] = [1, 2, 7, 64, 4096, BLOCK_BYTES];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests")
}

/// A file under the temp dir holding `text` (unique per test and name).
fn temp(name: &str, text: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("torpor-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn streaming(path: &Path, platform: Option<&StatsPlatform>) -> Result<IdleStats, InputError> {
    let text = std::fs::read(path).unwrap();
    from_reader(&text[..], "t", platform, Some("p"))
}

fn parallel(path: &Path, platform: Option<&StatsPlatform>, block: usize) -> Option<IdleStats> {
    let file = File::open(path).unwrap();
    run(&file, "t", platform, Some("p"), block).unwrap()
}

/// Every block size gives the streaming reader's report.
fn same(path: &Path, platform: Option<&StatsPlatform>) -> IdleStats {
    let expected = streaming(path, platform).unwrap();
    for block in SIZES {
        let got = parallel(path, platform, block)
            .unwrap_or_else(|| panic!("{} handed back at block {block}", path.display()));
        assert_eq!(got, expected, "{} at block size {block}", path.display());
    }
    expected
}

#[test]
fn fixtures_give_the_streaming_report() {
    let dir = fixtures().join("ftrace");
    let platform = StatsPlatform::load(&dir.join("two-clusters.toml")).unwrap();
    for name in ["two-clusters.idlestat", "two-clusters.report.txt"] {
        same(&dir.join(name), None);
        same(&dir.join(name), Some(&platform));
    }
    same(&dir.join("replay-timers.report.txt"), None);
    let pstates = same(&dir.join("pstates.report.txt"), None);
    assert_eq!(pstates.pstates.cpu_frequency_events, 4);
}

/// Markers, blank lines, unknown events, a timestamp going backwards within a block and across
/// a block start, a last line without its newline: the counts worked out by hand.
#[test]
fn counts_are_stitched_across_blocks() {
    let ev = |cpu: u32, us: u64, what: &str| {
        format!("          <idle>-0     [{cpu:03}] d..1  1000.{us:06}: {what}\n")
    };
    let mut text = String::from("# tracer: nop\n#\n");
    text += &ev(0, 10, "cpu_idle: state=1 cpu_id=0"); // line 3
    text += &ev(1, 20, "cpu_idle: state=0 cpu_id=1"); // 4
    text += "\n"; // 5
    text += "CPU:1 [LOST 7 EVENTS]\n"; // 6
    text += "##### CPU 1 buffer started ####\n"; // 7
    text += &ev(1, 15, "foo_bar: x=1"); // 8: backwards on CPU 1 (20 -> 15)
    text += &ev(0, 30, "cpu_idle: state=4294967295 cpu_id=0"); // 9
    text += &ev(1, 12, "baz: y"); // 10: backwards again (15 -> 12)
    text += &ev(1, 40, "cpu_idle: state=4294967295 cpu_id=1"); // 11
    text += &ev(0, 50, "foo_bar: x=2"); // 12, no newline:
    text.pop();
    let path = temp("stitched.txt", text.as_bytes());
    let got = same(&path, None);
    let t = &got.trace;
    assert_eq!(t.backwards_timestamps, 2);
    assert_eq!(t.first_backwards_line, Some(8));
    assert_eq!((t.lost_markers, t.lost_events), (1, 7));
    assert_eq!(t.buffer_started_markers, 1);
    assert_eq!(t.unknown_events.get("foo_bar"), Some(&2));
    assert_eq!(t.unknown_events.get("baz"), Some(&1));
    assert_eq!(t.known_events.get("cpu_idle"), Some(&4));
    assert_eq!(got.cpu_idle_events, 4);
    // CPU 0 in state 1 for 20 us, CPU 1 in state 0 for 20 us.
    assert_eq!(got.sections["cpu0"][0]["total_us"], 20.0);
    assert_eq!(got.sections["cpu1"][0]["total_us"], 20.0);
}

/// Where the streaming reader stops with an error, or skips a cut-short last line, the scan
/// hands the file back at every block size.
#[test]
fn bad_input_is_handed_back() {
    let good = "          <idle>-0     [000] d..1  1000.000010: cpu_idle: state=1 cpu_id=0\n";
    let cases: &[(&str, String)] = &[
        ("not-event", format!("cpus=2\n{good}garbage\n{good}")),
        (
            "cut-short",
            format!("cpus=2\n{good}          <idle>-0     [000] d..1  10"),
        ),
        (
            "bad-state",
            format!("cpus=2\n{good}{}", good.replace("state=1", "state=12")),
        ),
        (
            "cpu-beyond",
            format!("cpus=2\n{good}{}", good.replace("[000]", "[005]")),
        ),
        (
            "cpu-id-beyond",
            format!("cpus=2\n{good}{}", good.replace("cpu_id=0", "cpu_id=3")),
        ),
        (
            "bad-frequency",
            format!(
                "cpus=2\n{}{good}",
                good.replace(
                    "cpu_idle: state=1 cpu_id=0",
                    "cpu_frequency: state=x cpu_id=0"
                )
            ),
        ),
        (
            "cut-switch",
            format!(
                "cpus=2\n{good}{}",
                good.replace("cpu_idle: state=1 cpu_id=0", "sched_switch: prev_pid=1")
            ),
        ),
        (
            "long-line",
            format!("cpus=2\n{good}{}\n{good}", "x".repeat(MAX_LINE_BYTES + 1)),
        ),
    ];
    for (name, text) in cases {
        let path = temp(&format!("{name}.txt"), text.as_bytes());
        let read = streaming(&path, None);
        assert_eq!(
            read.is_ok(),
            ["cut-short", "cut-switch"].contains(name),
            "{name}: {read:?}"
        );
        for block in SIZES {
            assert!(
                parallel(&path, None, block).is_none(),
                "{name} at block size {block}"
            );
        }
    }
    // A platform with fewer CPUs than a cpu_id: the report's own error, handed back too.
    let one = StatsPlatform::parse(
        "[[cluster]]\ncpus = [0]\n[[state]]\nname = \"W\"\ntarget_residency_us = 1\n",
        "p",
    )
    .unwrap();
    let path = temp(
        "platform.txt",
        format!("{good}{}", good.replace("cpu_id=0", "cpu_id=1")).as_bytes(),
    );
    assert!(streaming(&path, Some(&one)).is_err());
    for block in SIZES {
        assert!(parallel(&path, Some(&one), block).is_none());
    }
    // The same for a cpu_frequency event's cpu_id.
    let freq =
        "         sugov:0-300   [000] ....  1000.000020: cpu_frequency: state=500000 cpu_id=1\n";
    let path = temp("platform-freq.txt", format!("{good}{freq}").as_bytes());
    assert!(streaming(&path, Some(&one)).is_err());
    for block in SIZES {
        assert!(parallel(&path, Some(&one), block).is_none());
    }
}

/// Events the report does not read are checked up to their name: wrong fields in them are
/// counted as the event, in any block, and change nothing else; on the last line they are
/// handed back, for the streaming reader to tell a cut-short trace (counts by hand).
#[test]
fn other_events_are_checked_up_to_their_name() {
    let idle = |us: u32, state: u32| {
        format!("  <idle>-0 [000] d..1 1000.{us:06}: cpu_idle: state={state} cpu_id=0\n")
    };
    let other = |us: u32, what: &str| format!("  a-1 [000] d..2 1000.{us:06}: {what}\n");
    let mut text = String::from("cpus=1\n");
    text += &idle(10, 1);
    text += &other(20, "sched_switch: x");
    text += &other(30, "irq_handler_entry: irq=x");
    text += &other(40, "sched_wakeup: comm=a pid=zz target_cpu=9");
    text += &idle(50, 4294967295);
    let path = temp("other.txt", text.as_bytes());
    let got = same(&path, None);
    let t = &got.trace;
    assert_eq!(t.known_events.get("sched_switch"), Some(&1));
    assert_eq!(t.known_events.get("irq_handler_entry"), Some(&1));
    assert_eq!(t.known_events.get("sched_wakeup"), Some(&1));
    assert_eq!(t.known_events.get("cpu_idle"), Some(&2));
    // CPU 0 in state 1 from 10 us to 50 us.
    assert_eq!(got.sections["cpu0"][0]["total_us"], 40.0);
    // A wrong but whole last line: handed back, then counted by the streaming reader.
    text += &other(60, "hrtimer_start: hrtimer=zz");
    let path = temp("other-last.txt", text.as_bytes());
    for block in SIZES {
        assert!(
            parallel(&path, None, block).is_none(),
            "at block size {block}"
        );
    }
    let t = streaming(&path, None).unwrap().trace;
    assert_eq!(t.known_events.get("hrtimer_start"), Some(&1));
    assert!(!t.truncated_last_line);
}

#[test]
fn a_header_error_is_the_streaming_readers() {
    let path = temp("header.txt", b"cpus=0\n");
    let file = File::open(&path).unwrap();
    let err = run(&file, "t", None, None, 64).unwrap_err();
    assert_eq!(Some(err), streaming(&path, None).err());
}

/// The line ends found 64 bytes at a time are the ones a byte-by-byte search finds, from
/// every start, in windows of every length around the chunk size (ends at a chunk's first
/// and last byte, runs of them, none at all, bytes that differ from `\n` by one bit).
#[test]
fn line_ends_are_every_newline_in_order() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut byte = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        b"\n\n\x0b\x0a\x8a\x02ab "[(state % 8) as usize]
    };
    for len in [0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 1000] {
        for _ in 0..20 {
            let buf: Vec<u8> = (0..len).map(|_| byte()).collect();
            for from in 0..=len.min(70) {
                let want: Vec<usize> = (from..len).filter(|&i| buf[i] == b'\n').collect();
                let got: Vec<usize> = LineEnds::new(&buf, from).collect();
                assert_eq!(got, want, "len {len} from {from}");
            }
        }
    }
    let none = [b'a'; 300];
    assert_eq!(LineEnds::new(&none, 0).count(), 0);
    let all = [b'\n'; 130];
    assert!(LineEnds::new(&all, 5).eq(5..130));
}

/// `cpu_frequency`'s fields in the kernel's exact form are read as [`parse_kind`] reads them
/// (values read off the text by hand); any other form, or a value it refuses, is left to it.
#[test]
fn cpu_frequency_fields_in_the_exact_form_agree_with_parse_kind() {
    let freq = |khz, cpu_id| Some(EventKind::CpuFrequency { khz, cpu_id });
    let cases: &[(&str, Option<EventKind>)] = &[
        ("state=1200000 cpu_id=3", freq(1_200_000, 3)),
        ("state=0 cpu_id=0", freq(0, 0)),
        ("state=4294967295 cpu_id=7", freq(u32::MAX, 7)),
        // Beyond a u32, or a CPU the header does not have: parse_kind's errors.
        ("state=4294967296 cpu_id=1", None),
        ("state=5 cpu_id=8", None),
        // Other forms: parse_kind reads them.
        ("cpu_id=1 state=5", None),
        ("state=5  cpu_id=1", None),
        ("state=5 cpu_id=1 extra=2", None),
        ("state= cpu_id=1", None),
        ("state=12a cpu_id=1", None),
    ];
    for (fields, want) in cases {
        let fast = cpu_frequency_fields(fields.as_bytes(), Some(8));
        assert_eq!(fast, *want, "{fields}");
        if let Some(kind) = fast {
            assert_eq!(
                parse_kind(b"cpu_frequency", fields.as_bytes(), Some(8)),
                Ok(kind)
            );
        }
    }
}
