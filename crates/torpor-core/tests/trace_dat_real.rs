//! The trace.dat reader against `trace-cmd report` on real traces: the two trace.dat files of
//! `../shared/real-data/ftrace/` (Arm Juno boards, version 6, from LISA and trappy, Apache-2.0)
//! and the text Debian's trace-cmd 3.1.6 printed for each (`*.report.txt` beside them, read
//! by torpor's text reader). Every event torpor reads must come out of both the same: CPU,
//! timestamp (the report prints microseconds), and fields; the events skipped must be the
//! same by name. Skipped, saying why, where `../shared` is absent.
//!
//! One difference is trace-cmd's, not the file's: its sched_switch plugin prints `prev_state`
//! from a fixed table (`SDTtZXxW`, bit by bit) and never the `+` the kernel's print fmt
//! appends for a preempted task, so `R+` is compared as `R`. The files' kernels (4.x) have
//! the same letters as that table for the states they show.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use torpor_core::trace::ftrace::{EventKind, FtraceReader};
use torpor_core::trace::trace_dat::TraceDatReader;

fn real_data() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real-data/ftrace");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {} is absent (the real traces are not in the repository)",
            dir.display()
        );
        None
    }
}

/// `prev_state` as trace-cmd's plugin prints it.
fn plugin_view(kind: EventKind<'_>) -> EventKind<'_> {
    match kind {
        EventKind::SchedSwitch {
            prev_pid,
            prev_state,
            next_pid,
        } => EventKind::SchedSwitch {
            prev_pid,
            prev_state: prev_state.strip_suffix('+').unwrap_or(prev_state),
            next_pid,
        },
        other => other,
    }
}

fn compare(base: &str, dir: &Path) -> u64 {
    let dat = dir.join(format!("{base}.trace.dat"));
    let txt = dir.join(format!("{base}.report.txt"));
    let mut bin = TraceDatReader::new(File::open(&dat).unwrap(), "bin").unwrap();
    let mut text = FtraceReader::new(BufReader::new(File::open(&txt).unwrap()), "txt").unwrap();
    assert_eq!(bin.header().cpus, text.header().cpus, "{base}: CPU count");
    let mut n = 0u64;
    loop {
        let a = bin.next_event().unwrap();
        let b = text.next_event().unwrap();
        match (a, b) {
            (None, None) => break,
            (Some(a), Some(b)) => {
                n += 1;
                let at = format!("{base}: event {n} (report line {})", b.line);
                assert_eq!(a.cpu, b.cpu, "{at}: CPU");
                // The report prints microseconds, rounded to the nearest.
                assert_eq!(
                    (a.timestamp_ns + 500) / 1000 * 1000,
                    b.timestamp_ns,
                    "{at}: timestamp {} ns",
                    a.timestamp_ns
                );
                assert_eq!(plugin_view(a.kind), b.kind, "{at}: fields");
            }
            (a, b) => panic!(
                "{base}: after {n} events one reader ended first: trace.dat {:?}, report {:?}",
                a.map(|e| e.line),
                b.map(|e| e.line)
            ),
        }
    }
    let (cb, ct) = (bin.counts(), text.counts());
    assert_eq!(cb.known_events, ct.known_events, "{base}: events read");
    assert_eq!(
        cb.unknown_events, ct.unknown_events,
        "{base}: events skipped"
    );
    assert_eq!(cb.lost_events, 0);
    n
}

#[test]
fn real_trace_dat_files_read_as_trace_cmd_reports_them() {
    let Some(dir) = real_data() else {
        return;
    };
    // The counts their .source.md give: 474 cpu_idle + 16 cpu_frequency + 399 sched_switch,
    // and 17 cpu_idle + 23 sched_switch.
    assert_eq!(compare("lisa-sched_load-juno", &dir), 474 + 16 + 399);
    assert_eq!(compare("trappy-trace_idle-juno", &dir), 17 + 23);
}
