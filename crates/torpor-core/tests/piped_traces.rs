//! Traces read from a pipe (a FIFO here; `-` and `/dev/stdin` are the same reader, checked
//! through the CLI in tests/test_perfetto.py and tests/test_idle_stats.py): `idle stats` and
//! `idle replay` give what they give from the file itself, for a Perfetto trace and for text
//! packed in gzip or xz; a trace.dat, which must be read at its sections' offsets, is refused
//! by name.

use std::io::Write;
use std::path::{Path, PathBuf};

use torpor_core::drivers::idle_replay::{parse_governors, replay_file, IdleReplayOptions};
use torpor_core::drivers::idle_stats::idle_stats;
use torpor_core::trace::ftrace::FtraceFormat;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn perfetto_fixture() -> PathBuf {
    repo().join("crates/torpor-core/tests/data/perfetto/every-event.pftrace")
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("torpor-piped-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `read` on a FIFO that a thread fills with `bytes`, as `cat FILE > FIFO` would, but
/// without its races: a reader that opens before any writer sees an empty FIFO, and a writer
/// that writes before any reader opens gets a broken pipe. So a read-write descriptor holds the
/// FIFO open while the writer opens it and writes (all of `bytes` fits in the pipe's 64 KiB),
/// and the writer closes only once the reader has taken some (closing first would drop them).
fn through_fifo<T>(name: &str, bytes: Vec<u8>, read: impl FnOnce(&Path) -> T) -> T {
    use std::os::fd::AsRawFd;

    assert!(bytes.len() <= 1 << 16, "more than a pipe holds");
    let fifo = dir().join(name);
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let hold = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let (opened, is_open) = std::sync::mpsc::channel();
    let path = fifo.clone();
    let fill = std::thread::spawn(move || {
        let mut writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        writer.write_all(&bytes).unwrap();
        opened.send(()).unwrap();
        for _ in 0..10_000 {
            let mut unread: libc::c_int = 0;
            // SAFETY: FIONREAD stores the bytes waiting in the pipe into `unread`, a c_int
            // that outlives the call; the descriptor is `writer`'s, open throughout.
            let ok = unsafe { libc::ioctl(writer.as_raw_fd(), libc::FIONREAD, &mut unread) };
            if ok != 0 || (unread as usize) < bytes.len() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
    is_open.recv().unwrap();
    drop(hold);
    let got = read(&fifo);
    fill.join().unwrap();
    std::fs::remove_file(&fifo).unwrap();
    got
}

fn menu() -> IdleReplayOptions {
    IdleReplayOptions {
        governors: parse_governors("menu").unwrap(),
        hz: None,
    }
}

#[test]
fn a_perfetto_trace_from_a_fifo_gives_what_the_file_gives() {
    let file = perfetto_fixture();
    let bytes = std::fs::read(&file).unwrap();
    let want = idle_stats(&file, None).unwrap();
    let got = through_fifo("stats.fifo", bytes.clone(), |p| {
        idle_stats(p, None).unwrap()
    });
    assert_eq!(got.format, FtraceFormat::Perfetto);
    assert_eq!(got.sections, want.sections);
    // The fixture's cpu_idle events (tests/perfetto.rs, every_event).
    assert_eq!(got.cpu_idle_events, 5);
    assert_eq!(got.trace, want.trace);

    let want = replay_file(&file, Some("intel-skylake-client"), &menu()).unwrap();
    let got = through_fifo("replay.fifo", bytes, |p| {
        replay_file(p, Some("intel-skylake-client"), &menu()).unwrap()
    });
    assert_eq!(got.format, FtraceFormat::Perfetto);
    // CPU 1's period 1000-1400 and CPU 0's 1100-2000 (tests/perfetto.rs).
    assert_eq!(got.periods, 2);
    assert_eq!(
        serde_json::to_value(&got.governors).unwrap(),
        serde_json::to_value(&want.governors).unwrap()
    );
}

#[test]
fn packed_text_from_a_fifo_gives_what_the_plain_file_gives() {
    let plain_path = repo().join("tests/ftrace/replay-timers.report.txt");
    let plain = std::fs::read(&plain_path).unwrap();
    let want = replay_file(&plain_path, Some("arm-juno-r0"), &menu()).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let got = through_fifo("gz.fifo", gz.finish().unwrap(), |p| {
        replay_file(p, Some("arm-juno-r0"), &menu()).unwrap()
    });
    assert_eq!(got.trace.packed, Some("gzip"));
    assert_eq!(got.periods, want.periods);
    assert_eq!(
        serde_json::to_value(&got.governors).unwrap(),
        serde_json::to_value(&want.governors).unwrap()
    );
    let want = idle_stats(&plain_path, None).unwrap();
    let got = through_fifo("plain.fifo", plain, |p| idle_stats(p, None).unwrap());
    assert_eq!(got.trace.packed, None);
    assert_eq!(got.sections, want.sections);
}

#[test]
fn a_trace_dat_from_a_fifo_is_refused_by_name() {
    let mut bytes = b"\x17\x08\x44tracing7\0".to_vec();
    bytes.resize(8192, 0);
    let e = through_fifo("dat.fifo", bytes, |p| idle_stats(p, None).unwrap_err());
    assert_eq!(e.line, None);
    assert!(
        e.message
            .starts_with("a trace.dat from a pipe; its per-CPU sections are read at"),
        "{e}"
    );
}
