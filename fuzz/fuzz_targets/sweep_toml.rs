//! A sweep file's text through `sweep_file::parse`: its shape, axes (values, ranges, bounds),
//! point count, objectives and constraints. The base scenario is not read (the scenario's own
//! parser has its target, `scenario_toml`). An `Err` is a correct answer to bad input; only a
//! panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::drivers::sweep_file;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = sweep_file::parse("s.toml", text);
});
