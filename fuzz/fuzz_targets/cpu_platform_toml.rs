//! A CPU platform file (the format of `presets/cpu/`, of `torpor probe`'s output and of a
//! user's own platform) through `CpuPlatform::parse`. An `Err` is a correct answer to bad
//! input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::cpu::CpuPlatform;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = CpuPlatform::parse("p.toml", text);
});
