//! Scenario TOML through `ScenarioFile::parse` and its variant resolution; the simulation is
//! not run. An `Err` is a correct answer to bad input; only a panic (or a hang, or runaway
//! memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::scenario::ScenarioFile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = ScenarioFile::parse("s.toml", text) {
        let _ = file.variants();
    }
});
