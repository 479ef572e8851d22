//! Bad input never panics: thousands of corrupted variants of real inputs go through every
//! parser, and each must come back as a value or an `InputError` naming the file.

use std::io::Cursor;
use std::path::Path;

use torpor_core::drivers::run::{run_text, Limits, RunError};
use torpor_core::input::parse_controller;
use torpor_core::scenario::ScenarioFile;
use torpor_core::sim::Pcg32;
use torpor_core::trace::fio_iolog::IologReader;
use torpor_core::Nanos;

const SMARTCTL: &str = include_str!("data/nvme/wdc-pc-sn530-256gb-synthetic.smartctl.txt");
const NVME_CLI_1: &str = include_str!("data/nvme/samsung-950-pro.nvme-cli-1.x.json");
const NVME_CLI_2: &str = include_str!("data/nvme/wdc-pc-sn530-256gb.nvme-cli-2.x.json");
const IOLOG_V3: &str = include_str!("data/iolog/hand-v3.iolog");
const IOLOG_V2: &str = include_str!("data/iolog/hand-v2.iolog");
const SCENARIO: &str = r#"
[platform.nvme]
preset = "wdc-pc-sn530-256gb"
[policy.apst]
algorithm = "v5.14"
primary_timeout_ms = 100
[workload]
apst_workflow = 3
[[workload.job]]
name = "j"
rw = "randread"
bs = "4k"
thinktime = "10ms"
[run]
duration = "2s"
seed = 1
[[variant]]
name = "legacy"
[variant.policy.apst]
algorithm = "legacy"
"#;

/// Byte-level corruption: delete, duplicate, replace with a character that matters to the
/// formats (digits, signs, quotes, brackets, separators, newlines, non-ASCII), or truncate.
fn mutate(rng: &mut Pcg32, text: &str) -> String {
    const NASTY: &[&str] = &[
        "-",
        "9",
        "0",
        "99999999999999999999",
        "\"",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "=",
        "\n",
        " ",
        "W",
        ".",
        "é",
        "\u{0}",
        "#",
        "-1",
        "1e9",
    ];
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..=rng.below(4) {
        if s.is_empty() {
            break;
        }
        let i = rng.below(s.len() as u64) as usize;
        match rng.below(5) {
            0 => {
                s.remove(i);
            }
            1 => {
                let c = s[i];
                s.insert(i, c);
            }
            2 => {
                let n = NASTY[rng.below(NASTY.len() as u64) as usize];
                s.splice(i..=i, n.chars());
            }
            3 => s.truncate(i),
            _ => {
                let j = (i + 1 + rng.below(40) as usize).min(s.len());
                s.drain(i..j);
            }
        }
    }
    s.into_iter().collect()
}

#[test]
fn corrupted_device_dumps_give_values_or_errors_naming_the_file() {
    let mut rng = Pcg32::new(2024, 1);
    for base in [SMARTCTL, NVME_CLI_1, NVME_CLI_2] {
        for _ in 0..1500 {
            let text = mutate(&mut rng, base);
            if let Err(e) = parse_controller("dump", &text) {
                assert_eq!(e.file, "dump");
                assert!(!e.message.is_empty());
            }
        }
    }
}

#[test]
fn corrupted_iologs_give_entries_or_errors_naming_the_file() {
    let mut rng = Pcg32::new(2025, 2);
    for base in [IOLOG_V2, IOLOG_V3] {
        for _ in 0..1500 {
            let text = mutate(&mut rng, base);
            let Ok(mut reader) = IologReader::new(Cursor::new(text.into_bytes()), "log") else {
                continue;
            };
            loop {
                match reader.next_entry() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        assert_eq!(e.file, "log");
                        assert!(e.line.is_some(), "{e}");
                        break;
                    }
                }
            }
        }
    }
}

#[test]
fn corrupted_scenarios_give_reports_or_errors_naming_the_file() {
    let mut rng = Pcg32::new(2026, 3);
    for _ in 0..3000 {
        let text = mutate(&mut rng, SCENARIO);
        match ScenarioFile::parse("s.toml", &text) {
            Err(e) => {
                assert_eq!(e.file, "s.toml");
                assert!(!e.message.is_empty(), "{e:?}");
            }
            // What parses must also run (kept short so the test stays fast).
            Ok(s)
                if s.variants().iter().all(|v| {
                    v.scenario
                        .run
                        .duration
                        .is_some_and(|d| d <= Nanos::from_secs(10))
                }) =>
            {
                if let Err(RunError::Input(e)) = run_text(
                    &text,
                    "s.toml",
                    Path::new("."),
                    &[],
                    &Limits::default(),
                    &mut (),
                ) {
                    assert_eq!(e.file, "s.toml", "{e}");
                }
            }
            Ok(_) => {}
        }
    }
}
