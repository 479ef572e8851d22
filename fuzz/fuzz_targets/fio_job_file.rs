//! A fio job file (INI) through `fio_file::parse`: sections, options, includes refused. An
//! `Err` is a correct answer to bad input; only a panic (or a hang, or runaway memory) is a
//! finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::workload::fio_file;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = fio_file::parse("f.fio", text);
});
