//! `nvme id-ctrl -o json` text into the nvme-cli parser. An `Err` is a correct answer to bad
//! input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = torpor_core::input::nvme_cli::parse("f.json", text);
});
