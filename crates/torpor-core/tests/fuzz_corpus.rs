//! Replays the fuzzers' corpora (`fuzz/corpus/<target>/`) and the inputs that once crashed
//! them (`fuzz/regressions/<target>/`) on stable, through the same calls as the fuzz targets in
//! `fuzz/fuzz_targets/`. Every input must come back as a value or as an `InputError` whose
//! one-line message starts with the file label; a panic fails the test with the input's path.
//! The corpora are committed: a missing or emptied folder fails too.

use std::fs;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use torpor_core::cpu::CpuPlatform;
use torpor_core::cpuidle::NAMES;
use torpor_core::drivers::idle_decide::Sequence;
use torpor_core::drivers::sweep_file;
use torpor_core::input::{nvme_cli, nvme_preset, smartctl, ufs_preset};
use torpor_core::scenario::ScenarioFile;
use torpor_core::trace::blkparse::{BlkparseReader, ReplayedAction};
use torpor_core::trace::block::BlockTraceReader;
use torpor_core::trace::disksim::{AsciiDialect, AsciiTraceReader};
use torpor_core::trace::fio_iolog::IologReader;
use torpor_core::trace::ftrace::FtraceReader;
use torpor_core::trace::mobile_csv::MobileCsvReader;
use torpor_core::trace::packed_text;
use torpor_core::trace::perfetto::PerfettoReader;
use torpor_core::trace::trace_dat::TraceDatReader;
use torpor_core::workload::fio_file;
use torpor_core::InputError;

/// Fewer files than this in a corpus means it was lost, not minimized.
const MIN_CORPUS_FILES: usize = 20;

/// The fio_iolog target's cap on entries read from one input (and the trace_dat target's on
/// events).
const MAX_ENTRIES: usize = 100_000;

fn fuzz_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    dir.canonicalize().unwrap_or(dir)
}

/// Every file of `fuzz/<kind>/<target>/`, sorted; hidden files (`.gitkeep`) are not inputs.
/// Panics when the folder does not exist.
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let entries = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the fuzz corpora are committed)", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// An error a user would see: one line, starting with the label the parser was given.
fn check_error(path: &Path, label: &str, e: &InputError) {
    let shown = e.to_string();
    assert!(
        !shown.contains('\n'),
        "{}: error message spans lines: {shown:?}",
        path.display()
    );
    assert!(
        shown.starts_with(label),
        "{}: error does not start with {label:?}: {shown:?}",
        path.display()
    );
}

/// Runs `one` on every corpus and regression input of `target`; fails listing each input that
/// panicked in the parser or gave a malformed error, and when the corpus holds too few files.
fn replay(target: &str, one: fn(&Path, &[u8])) {
    let corpus = inputs("corpus", target);
    assert!(
        corpus.len() >= MIN_CORPUS_FILES,
        "fuzz/corpus/{target}: {} files, expected at least {MIN_CORPUS_FILES}",
        corpus.len()
    );
    let regressions = inputs("regressions", target);
    let mut failed = Vec::new();
    for (path, bytes) in corpus.iter().chain(&regressions) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| one(path, bytes))) {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{}: {why}", path.display()));
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs failed (a panic in the parser, or a malformed error):\n{}",
        failed.len(),
        corpus.len() + regressions.len(),
        failed.join("\n")
    );
}

#[test]
fn nvme_cli_json_corpus() {
    replay("nvme_cli_json", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Err(e) = nvme_cli::parse("f.json", text) {
            check_error(path, "f.json", &e);
        }
    });
}

#[test]
fn smartctl_text_corpus() {
    replay("smartctl_text", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Err(e) = smartctl::parse("f.txt", text) {
            check_error(path, "f.txt", &e);
        }
    });
}

#[test]
fn fio_iolog_corpus() {
    replay("fio_iolog", |path, bytes| {
        if std::str::from_utf8(bytes).is_err() {
            return;
        }
        let mut reader = match IologReader::new(Cursor::new(bytes), "f.iolog") {
            Ok(r) => r,
            Err(e) => return check_error(path, "f.iolog", &e),
        };
        for _ in 0..MAX_ENTRIES {
            match reader.next_entry() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "f.iolog", &e);
                    break;
                }
            }
        }
        let _ = reader.counts();
    });
}

#[test]
fn scenario_toml_corpus() {
    replay("scenario_toml", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        match ScenarioFile::parse("s.toml", text) {
            Ok(file) => {
                let _ = file.variants();
            }
            Err(e) => check_error(path, "s.toml", &e),
        }
    });
}

#[test]
fn trace_dat_corpus() {
    replay("trace_dat", |path, bytes| {
        let mut reader = match TraceDatReader::new(bytes.to_vec(), "f.dat") {
            Ok(r) => r,
            Err(e) => return check_error(path, "f.dat", &e),
        };
        for _ in 0..MAX_ENTRIES {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "f.dat", &e);
                    break;
                }
            }
        }
        let _ = reader.counts();
    });
}

/// Reads `reader` to its end or its first error (at most [`MAX_ENTRIES`] requests), checking
/// the error.
fn drain_block(path: &Path, label: &str, reader: &mut dyn BlockTraceReader) {
    for _ in 0..MAX_ENTRIES {
        match reader.next_event() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                check_error(path, label, &e);
                break;
            }
        }
    }
    let _ = reader.counts();
}

#[test]
fn ftrace_text_corpus() {
    replay("ftrace_text", |path, bytes| {
        let mut reader = match FtraceReader::new(Cursor::new(bytes), "f.trace") {
            Ok(r) => r,
            Err(e) => return check_error(path, "f.trace", &e),
        };
        for _ in 0..MAX_ENTRIES {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "f.trace", &e);
                    break;
                }
            }
        }
        let _ = reader.counts();
    });
}

#[test]
fn blkparse_text_corpus() {
    replay("blkparse_text", |path, bytes| {
        let Some((&pick, text)) = bytes.split_first() else {
            return;
        };
        let action = if pick & 1 == 0 {
            ReplayedAction::Q
        } else {
            ReplayedAction::D
        };
        let mut reader = BlkparseReader::new(Cursor::new(text), "f.blk", action);
        drain_block(path, "f.blk", &mut reader);
    });
}

#[test]
fn disksim_ascii_corpus() {
    replay("disksim_ascii", |path, bytes| {
        let Some((&pick, text)) = bytes.split_first() else {
            return;
        };
        let dialect = if pick & 1 == 0 {
            AsciiDialect::Disksim
        } else {
            AsciiDialect::Mqsim
        };
        let mut reader = AsciiTraceReader::new(Cursor::new(text), "f.trace", dialect);
        drain_block(path, "f.trace", &mut reader);
    });
}

#[test]
fn mobile_csv_corpus() {
    replay("mobile_csv", |path, bytes| {
        match MobileCsvReader::new(Cursor::new(bytes), "f.csv") {
            Ok(mut reader) => drain_block(path, "f.csv", &mut reader),
            Err(e) => check_error(path, "f.csv", &e),
        }
    });
}

#[test]
fn fio_job_file_corpus() {
    replay("fio_job_file", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Err(e) = fio_file::parse("f.fio", text) {
            check_error(path, "f.fio", &e);
        }
    });
}

#[test]
fn cpu_platform_toml_corpus() {
    replay("cpu_platform_toml", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Err(e) = CpuPlatform::parse("p.toml", text) {
            check_error(path, "p.toml", &e);
        }
    });
}

#[test]
fn device_preset_toml_corpus() {
    replay("device_preset_toml", |path, bytes| {
        let Some((&pick, rest)) = bytes.split_first() else {
            return;
        };
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        let result = if pick & 1 == 0 {
            nvme_preset::parse_preset("d.toml", text).map(|_| ())
        } else {
            ufs_preset::parse_preset("d.toml", text).map(|_| ())
        };
        if let Err(e) = result {
            check_error(path, "d.toml", &e);
        }
    });
}

#[test]
fn idle_decide_jsonl_corpus() {
    replay("idle_decide_jsonl", |path, bytes| {
        let Some((&pick, text)) = bytes.split_first() else {
            return;
        };
        let name = NAMES[usize::from(pick) % NAMES.len()].0;
        let mut seq = match Sequence::new(Cursor::new(text), "d.jsonl", name) {
            Ok(s) => s,
            Err(e) => return check_error(path, "d.jsonl", &e),
        };
        for _ in 0..MAX_ENTRIES {
            match seq.next_decision() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "d.jsonl", &e);
                    break;
                }
            }
        }
    });
}

#[test]
fn sweep_toml_corpus() {
    replay("sweep_toml", |path, bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        if let Err(e) = sweep_file::parse("s.toml", text) {
            check_error(path, "s.toml", &e);
        }
    });
}

#[test]
fn perfetto_corpus() {
    replay("perfetto", |path, bytes| {
        let mut reader = PerfettoReader::new(bytes, "f.pftrace");
        for _ in 0..MAX_ENTRIES {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "f.pftrace", &e);
                    break;
                }
            }
        }
        let _ = reader.counts();
    });
}

#[test]
fn packed_text_corpus() {
    replay("packed_text", |path, bytes| {
        let Some(packing) = packed_text::sniff_head(bytes) else {
            return;
        };
        let text = match packed_text::open(Cursor::new(bytes.to_vec()), packing, "f.xz") {
            Ok(t) => t,
            Err(e) => return check_error(path, "f.xz", &e),
        };
        let mut reader = match FtraceReader::new(text, "f.xz") {
            Ok(r) => r,
            Err(e) => return check_error(path, "f.xz", &e),
        };
        for _ in 0..MAX_ENTRIES {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    check_error(path, "f.xz", &e);
                    break;
                }
            }
        }
    });
}
