//! A device preset file (NVMe or UFS, the formats of `presets/nvme/` and `presets/ufs/`)
//! through its parser and checks; the first byte picks which. An `Err` is a correct answer to
//! bad input; only a panic (or a hang, or runaway memory) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use torpor_core::input::{nvme_preset, ufs_preset};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if pick & 1 == 0 {
        let _ = nvme_preset::parse_preset("d.toml", text);
    } else {
        let _ = ufs_preset::parse_preset("d.toml", text);
    }
});
