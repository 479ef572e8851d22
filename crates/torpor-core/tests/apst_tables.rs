//! The kernel's APST table builders against independently derived tables: the worked examples
//! of spec-storage.md §1.5 (arithmetic in the comments), the 17 built-in drives against the
//! tables a separate script derived for the research data (`tests/data/apst/`), the edge cases
//! of §1.3/§1.4, the table's text/JSON/wire forms, and preset parsing.

use serde_json::json;
use torpor_core::apst::psd::{NvmeController, PowerState};
use torpor_core::apst::{
    build, ApstAlgorithm, ApstConfig, ApstParams, ApstTable, APST_ENTRIES, S32_MAX,
};
use torpor_core::input::nvme_preset::{builtin, find, parse_preset};
use torpor_core::report::apst_table::table_json;
use torpor_core::view::apst::{
    emit_kernel_params, emit_nvme_cli, emit_sysfs, get_feature_text, transitions,
};

// ---------------------------------------------------------------------------------------------
// helpers

fn op(max_power_mw: f64) -> PowerState {
    PowerState {
        max_power_mw,
        non_operational: false,
        entry_lat_us: 0,
        exit_lat_us: 0,
        active_power_mw: None,
        idle_power_mw: None,
    }
}

fn nonop(max_power_mw: f64, entry_lat_us: u32, exit_lat_us: u32) -> PowerState {
    PowerState {
        non_operational: true,
        entry_lat_us,
        exit_lat_us,
        ..op(max_power_mw)
    }
}

fn ctrl(power_states: Vec<PowerState>) -> NvmeController {
    NvmeController {
        model: "test".into(),
        npss: (power_states.len() - 1) as u8,
        apsta: true,
        power_states,
    }
}

/// Samsung PM981 1 TB (§1.5): PS0-PS2 operational; PS3 210/1200 µs; PS4 2000/8000 µs.
fn pm981_1tb() -> NvmeController {
    ctrl(vec![
        op(8000.0),
        op(6300.0),
        op(3500.0),
        nonop(70.0, 210, 1200),
        nonop(5.0, 2000, 8000),
    ])
}

/// Kingston NV2 2 TB (§1.5): PS1/PS2 operational with exit latencies; PS3 5000/5000 µs; PS4
/// 20000/70000 µs.
fn kingston_nv2() -> NvmeController {
    let mut ps1 = op(3500.0);
    ps1.exit_lat_us = 200;
    let mut ps2 = op(2500.0);
    ps2.exit_lat_us = 1000;
    ctrl(vec![
        op(5000.0),
        ps1,
        ps2,
        nonop(1500.0, 5000, 5000),
        nonop(1500.0, 20000, 70000),
    ])
}

/// The 960-class device of §1.5: non-op 40 mW (210/1500 µs) and 5 mW (2200/6000 µs), behind
/// three operational states.
fn samsung_960_class() -> NvmeController {
    ctrl(vec![
        op(6000.0),
        op(5000.0),
        op(3000.0),
        nonop(40.0, 210, 1500),
        nonop(5.0, 2200, 6000),
    ])
}

fn legacy() -> ApstParams {
    ApstParams {
        algorithm: ApstAlgorithm::Legacy,
        ..ApstParams::default()
    }
}

fn v5_14() -> ApstParams {
    ApstParams::default()
}

fn sent(config: ApstConfig) -> ApstTable {
    match config {
        ApstConfig::Sent(t) => t,
        ApstConfig::NotSent { reason } => panic!("expected a table, got NotSent: {reason}"),
    }
}

/// An enabled table with `(itps, itpt_ms)` for PS0, PS1, ... and zero after.
fn table(entries: &[(u64, u64)]) -> ApstTable {
    let mut t = ApstTable {
        apste: true,
        entries: [0; APST_ENTRIES],
    };
    for (i, &(itps, itpt_ms)) in entries.iter().enumerate() {
        t.entries[i] = (itps << 3) | (itpt_ms << 8);
    }
    t
}

// ---------------------------------------------------------------------------------------------
// §1.5 worked examples

#[test]
fn pm981_legacy_chains_ps3_after_71_ms_then_ps4_after_500_ms() {
    // PS4: total 2000 + 8000 = 10000 µs → ceil(10000 / 20) = 500 ms.
    // PS3: total 210 + 1200 = 1410 µs → ceil(1410 / 20) = ceil(70.5) = 71 ms.
    let expected = table(&[(3, 71), (3, 71), (3, 71), (4, 500), (0, 0)]);
    assert_eq!(sent(build(&pm981_1tb(), &legacy())), expected);
}

#[test]
fn pm981_v5_14_goes_straight_to_ps4_after_100_ms() {
    // PS4 total 10000 ≤ 15000 → primary @ 100 ms; PS3 (1410) would also fit, but a primary
    // is already chosen, so PS3's own entry also points at PS4.
    let expected = table(&[(4, 100), (4, 100), (4, 100), (4, 100), (0, 0)]);
    assert_eq!(sent(build(&pm981_1tb(), &v5_14())), expected);
}

#[test]
fn nv2_legacy_uses_ps4_because_only_its_exit_latency_is_compared() {
    // PS4: exit 70000 ≤ 100000 (total 90000 is irrelevant to the limit) → 90000 / 20 = 4500.
    // PS3: total 10000 → 500 ms.
    let expected = table(&[(3, 500), (3, 500), (3, 500), (4, 4500), (0, 0)]);
    assert_eq!(sent(build(&kingston_nv2(), &legacy())), expected);
}

#[test]
fn nv2_v5_14_has_primary_ps3_and_secondary_ps4() {
    // PS4 total 90000: > 15000, ≤ 100000 → secondary @ 2000 ms (nothing chosen yet).
    // PS3 total 10000 ≤ 15000 → primary @ 100 ms. Matches the pastebin get-feature dump quoted
    // in §1.5 (entries 0-2 "100 ms ITPS 3", entry 3 "2000 ms ITPS 4").
    let expected = table(&[(3, 100), (3, 100), (3, 100), (4, 2000), (0, 0)]);
    assert_eq!(sent(build(&kingston_nv2(), &v5_14())), expected);
}

#[test]
fn samsung_960_class_legacy_and_v5_14() {
    // Legacy: PS4 total 2200 + 6000 = 8200 → (8200 + 19) / 20 = 410 (integer division);
    //         PS3 total 210 + 1500 = 1710 → (1710 + 19) / 20 = 86.
    let expected_legacy = table(&[(3, 86), (3, 86), (3, 86), (4, 410), (0, 0)]);
    assert_eq!(
        sent(build(&samsung_960_class(), &legacy())),
        expected_legacy
    );
    // v5.14: PS4 8200 ≤ 15000 → primary @ 100 ms (the 5 mW state, as §1.5 says).
    let expected_v5_14 = table(&[(4, 100), (4, 100), (4, 100), (4, 100), (0, 0)]);
    assert_eq!(sent(build(&samsung_960_class(), &v5_14())), expected_v5_14);
}

// ---------------------------------------------------------------------------------------------
// the 17 built-in drives against the research data's derived tables

const DERIVED: &str = include_str!("data/apst/derived_tables.json");

/// Checks `t` entry by entry against one derived list (`from_ps`, `itps`, `itpt_ms`,
/// `entry_hex`; `itps` null = entry 0); entries past the list must be 0.
fn assert_matches_derived(id: &str, alg: &str, t: &ApstTable, derived: &serde_json::Value) {
    let list = derived.as_array().expect("derived list");
    assert!(t.apste, "{id} {alg}: APSTE");
    for (i, e) in list.iter().enumerate() {
        assert_eq!(
            e["from_ps"].as_u64(),
            Some(i as u64),
            "{id} {alg}: fixture order"
        );
        let raw = u64::from_str_radix(
            e["entry_hex"].as_str().unwrap().trim_start_matches("0x"),
            16,
        )
        .unwrap();
        assert_eq!(t.entries[i], raw, "{id} {alg}: raw entry of PS{i}");
        match e["itps"].as_u64() {
            Some(itps) => {
                assert_eq!(u64::from(t.itps(i)), itps, "{id} {alg}: ITPS of PS{i}");
                assert_eq!(
                    Some(u64::from(t.itpt_ms(i))),
                    e["itpt_ms"].as_u64(),
                    "{id} {alg}: ITPT of PS{i}"
                );
            }
            None => assert_eq!(t.entries[i], 0, "{id} {alg}: PS{i} has no transition"),
        }
    }
    assert!(
        t.entries[list.len()..].iter().all(|&e| e == 0),
        "{id} {alg}: entries past NPSS"
    );
}

#[test]
fn every_builtin_drive_gives_the_derived_tables_for_both_algorithms() {
    let fixture: serde_json::Value = serde_json::from_str(DERIVED).unwrap();
    let drives = fixture["drives"].as_object().unwrap();
    let presets: Vec<_> = builtin().map(|p| p.unwrap()).collect();
    assert_eq!(presets.len(), 17);
    assert_eq!(drives.len(), 17);
    for p in &presets {
        let d = &drives[&p.id];
        let v = sent(build(&p.controller, &v5_14()));
        assert_matches_derived(&p.id, "v5.14", &v, &d["linux_apst_v5_14_default"]);
        let l = sent(build(&p.controller, &legacy()));
        assert_matches_derived(&p.id, "legacy", &l, &d["linux_apst_legacy_50x"]);
    }
}

// ---------------------------------------------------------------------------------------------
// edge cases of §1.3 / §1.4

#[test]
fn total_equal_to_primary_tolerance_is_primary() {
    // PS1 total 5000 + 10000 = 15000 = primary tolerance → primary @ 100 ms.
    let c = ctrl(vec![op(3000.0), nonop(5.0, 5000, 10000)]);
    assert_eq!(sent(build(&c, &v5_14())), table(&[(1, 100)]));
    // One µs more (15001) falls to the secondary rule → @ 2000 ms.
    let c = ctrl(vec![op(3000.0), nonop(5.0, 5001, 10000)]);
    assert_eq!(sent(build(&c, &v5_14())), table(&[(1, 2000)]));
}

#[test]
fn total_equal_to_secondary_tolerance_is_secondary() {
    // PS2 total 30000 + 70000 = 100000 = secondary tolerance → secondary @ 2000 ms;
    // PS1 total 10000 → primary @ 100 ms.
    let c = ctrl(vec![
        op(3000.0),
        nonop(50.0, 1000, 9000),
        nonop(5.0, 30000, 70000),
    ]);
    assert_eq!(sent(build(&c, &v5_14())), table(&[(1, 100), (2, 2000)]));
}

#[test]
fn deepest_state_beyond_secondary_tolerance_is_never_a_v5_14_target() {
    // PS4 total 20000 + 90000 = 110000 > 100000 → skipped; PS3 (10000) is the primary and
    // has no deeper target.
    let mut c = kingston_nv2();
    c.power_states[4].exit_lat_us = 90000;
    assert_eq!(
        sent(build(&c, &v5_14())),
        table(&[(3, 100), (3, 100), (3, 100)])
    );
    // Legacy still uses it (exit 90000 ≤ 100000): (110000 + 19) / 20 = 5500 ms.
    assert_eq!(
        sent(build(&c, &legacy())),
        table(&[(3, 500), (3, 500), (3, 500), (4, 5500)])
    );
}

#[test]
fn zero_latencies_give_legacy_itpt_0_which_disables_the_transition() {
    // PS1 reports 0/0: ITPT = (0 + 19) / 20 = 0, entry = 1 << 3 = 0x8: ITPS 1 but never taken.
    let c = ctrl(vec![op(3000.0), nonop(5.0, 0, 0)]);
    let t = sent(build(&c, &legacy()));
    assert!(t.apste);
    assert_eq!(t.entries[0], 0x8);
    assert_eq!(t.itpt_ms(0), 0);
    assert!(transitions(&t, &c).is_empty());
}

#[test]
fn apsta_0_sends_nothing() {
    let mut c = pm981_1tb();
    c.apsta = false;
    assert!(matches!(build(&c, &v5_14()), ApstConfig::NotSent { .. }));
    assert!(matches!(build(&c, &legacy()), ApstConfig::NotSent { .. }));
}

#[test]
fn npss_above_31_sends_nothing_with_the_kernel_warning() {
    let mut c = pm981_1tb();
    c.npss = 32;
    let expected = ApstConfig::NotSent {
        reason: "NPSS is invalid; not using APST".to_string(),
    };
    assert_eq!(build(&c, &v5_14()), expected);
    assert_eq!(build(&c, &legacy()), expected);
}

#[test]
fn no_deepest_ps_quirk_never_targets_npss() {
    let params = ApstParams {
        no_deepest_ps: true,
        ..v5_14()
    };
    // PS4 skipped; PS3 total 1410 ≤ 15000 → primary @ 100 ms; PS3's own entry stays 0.
    assert_eq!(
        sent(build(&pm981_1tb(), &params)),
        table(&[(3, 100), (3, 100), (3, 100)])
    );
    let params = ApstParams {
        no_deepest_ps: true,
        ..legacy()
    };
    // PS3 → ceil(1410 / 20) = 71 ms.
    assert_eq!(
        sent(build(&pm981_1tb(), &params)),
        table(&[(3, 71), (3, 71), (3, 71)])
    );
}

#[test]
fn v5_14_falls_back_to_the_legacy_formula_when_primary_timeout_is_0() {
    // Same as nv2_legacy: PS3 @ 500 ms, PS3 → PS4 @ 4500 ms.
    let params = ApstParams {
        primary_timeout_ms: 0,
        ..v5_14()
    };
    let expected = table(&[(3, 500), (3, 500), (3, 500), (4, 4500)]);
    assert_eq!(sent(build(&kingston_nv2(), &params)), expected);
}

#[test]
fn v5_14_falls_back_to_the_legacy_formula_when_primary_tolerance_is_0() {
    let params = ApstParams {
        primary_latency_tol_us: 0,
        ..v5_14()
    };
    let expected = table(&[(3, 500), (3, 500), (3, 500), (4, 4500)]);
    assert_eq!(sent(build(&kingston_nv2(), &params)), expected);
}

#[test]
fn ps_max_latency_filters_on_exit_latency_only() {
    // Limit 9000: PS4 exit 8000 ≤ 9000 although entry + exit = 10000 > 9000 → still used.
    let params = ApstParams {
        ps_max_latency_us: Some(9000),
        ..legacy()
    };
    let expected = table(&[(3, 71), (3, 71), (3, 71), (4, 500)]);
    assert_eq!(sent(build(&pm981_1tb(), &params)), expected);
    // Limit 7999 < exit 8000 → PS4 excluded; the chain stops at PS3.
    let params = ApstParams {
        ps_max_latency_us: Some(7999),
        ..legacy()
    };
    assert_eq!(
        sent(build(&pm981_1tb(), &params)),
        table(&[(3, 71), (3, 71), (3, 71)])
    );
}

#[test]
fn ps_max_latency_0_sends_apste_0_and_an_all_zero_table() {
    let params = ApstParams {
        ps_max_latency_us: Some(0),
        ..v5_14()
    };
    let expected = ApstTable {
        apste: false,
        entries: [0; APST_ENTRIES],
    };
    assert_eq!(sent(build(&pm981_1tb(), &params)), expected);
}

#[test]
fn no_qualifying_state_still_sends_apste_1_with_an_all_zero_table() {
    let c = ctrl(vec![op(3000.0), op(2000.0)]);
    let expected = ApstTable {
        apste: true,
        entries: [0; APST_ENTRIES],
    };
    assert_eq!(sent(build(&c, &v5_14())), expected);
    assert_eq!(sent(build(&c, &legacy())), expected);
}

#[test]
fn secondary_timeout_0_disables_the_secondary_target() {
    // NV2 PS4 (90000) would be secondary; with the secondary off only PS3 (primary) remains.
    let params = ApstParams {
        secondary_timeout_ms: 0,
        ..v5_14()
    };
    assert_eq!(
        sent(build(&kingston_nv2(), &params)),
        table(&[(3, 100), (3, 100), (3, 100)])
    );
}

#[test]
fn legacy_itpt_is_clamped_to_24_bits() {
    // Exit 400 000 000 µs: (4e8 + 19) / 20 = 20 000 000 > 2^24 - 1 = 16 777 215 (0xffffff).
    let c = ctrl(vec![op(3000.0), nonop(5.0, 0, 400_000_000)]);
    let params = ApstParams {
        ps_max_latency_us: Some(u64::MAX),
        ..legacy()
    };
    let t = sent(build(&c, &params));
    assert_eq!(t.entries[0], 0xffff_ff08); // 0xffffff << 8 | 1 << 3
}

#[test]
fn v5_14_module_param_timeouts_are_not_clamped_and_spill_into_reserved_bits() {
    // primary timeout 2^24 ms: (2^24 << 8) = 2^32 → bit 32, outside the 24-bit ITPT field.
    let params = ApstParams {
        primary_timeout_ms: 1 << 24,
        ..v5_14()
    };
    let t = sent(build(&pm981_1tb(), &params));
    assert_eq!(t.entries[0], 0x1_0000_0020); // 2^32 | 4 << 3
    assert_eq!((t.itps(0), t.itpt_ms(0)), (4, 0));
}

#[test]
fn legacy_params_for_a_v5_14_kernel_build_the_legacy_table() {
    // What emit_kernel_params writes for legacy: the v5.14 algorithm with primary timeout 0.
    let as_kernel = ApstParams {
        primary_timeout_ms: 0,
        ..v5_14()
    };
    for c in [pm981_1tb(), kingston_nv2(), samsung_960_class()] {
        assert_eq!(build(&c, &as_kernel), build(&c, &legacy()));
    }
}

// ---------------------------------------------------------------------------------------------
// wire, text and JSON forms

#[test]
fn to_bytes_is_32_little_endian_u64s() {
    // PM981 legacy: PS0 0x4718 (71 << 8 | 3 << 3), PS3 0x1f420 (500 << 8 | 4 << 3).
    let b = sent(build(&pm981_1tb(), &legacy())).to_bytes();
    assert_eq!(b.len(), 256);
    assert_eq!(&b[0..8], &[0x18, 0x47, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[24..32], &[0x20, 0xf4, 0x01, 0, 0, 0, 0, 0]);
    assert!(b[32..].iter().all(|&x| x == 0));
}

#[test]
fn json_form_has_apste_and_32_entries_with_raw_values() {
    let t = sent(build(&pm981_1tb(), &legacy()));
    let mut entries = vec![
        json!({"ps": 0, "itps": 3, "itpt_ms": 71, "raw": 0x4718}),
        json!({"ps": 1, "itps": 3, "itpt_ms": 71, "raw": 0x4718}),
        json!({"ps": 2, "itps": 3, "itpt_ms": 71, "raw": 0x4718}),
        json!({"ps": 3, "itps": 4, "itpt_ms": 500, "raw": 0x1f420}),
    ];
    for ps in 4..32 {
        entries.push(json!({"ps": ps, "itps": 0, "itpt_ms": 0, "raw": 0}));
    }
    assert_eq!(table_json(&t), json!({"apste": 1, "entries": entries}));
    let off = ApstTable {
        apste: false,
        entries: [0; APST_ENTRIES],
    };
    assert_eq!(table_json(&off)["apste"], json!(0));
}

/// One entry block of nvme-cli v2.9.1 `stdout_auto_pst()`.
fn block(i: usize, itpt: u32, itps: u32) -> String {
    format!(
        "\tEntry[{i:2}]\n\t.................\n\tIdle Time Prior to Transition (ITPT): {itpt} ms\n\
         \tIdle Transition Power State   (ITPS): {itps}\n\t.................\n"
    )
}

#[test]
fn get_feature_text_matches_nvme_cli_layout() {
    // NV2 v5.14 table, written out as nvme-cli v2.9.1 prints it (compare the pastebin dump
    // quoted in spec §1.5): header with `%#010x` value, APSTE line, 32 entry blocks.
    let t = sent(build(&kingston_nv2(), &v5_14()));
    let mut expected = String::from(
        "get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001\n\
         \tAutonomous Power State Transition Enable (APSTE): Enabled\n\
         \tAuto PST Entries\t.................\n\
         \tEntry[ 0]\n\
         \t.................\n\
         \tIdle Time Prior to Transition (ITPT): 100 ms\n\
         \tIdle Transition Power State   (ITPS): 3\n\
         \t.................\n\
         \tEntry[ 1]\n\
         \t.................\n\
         \tIdle Time Prior to Transition (ITPT): 100 ms\n\
         \tIdle Transition Power State   (ITPS): 3\n\
         \t.................\n\
         \tEntry[ 2]\n\
         \t.................\n\
         \tIdle Time Prior to Transition (ITPT): 100 ms\n\
         \tIdle Transition Power State   (ITPS): 3\n\
         \t.................\n\
         \tEntry[ 3]\n\
         \t.................\n\
         \tIdle Time Prior to Transition (ITPT): 2000 ms\n\
         \tIdle Transition Power State   (ITPS): 4\n\
         \t.................\n",
    );
    for i in 4..32 {
        expected.push_str(&block(i, 0, 0));
    }
    assert_eq!(get_feature_text(&t), expected);
}

#[test]
fn get_feature_text_for_a_disabled_table_prints_zero_without_0x() {
    // C's `%#08x` of 0 prints "00000000": the `#` flag adds no prefix to zero.
    let off = ApstTable {
        apste: false,
        entries: [0; APST_ENTRIES],
    };
    let text = get_feature_text(&off);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("get-feature:0x0c (Autonomous Power State Transition), Current value:00000000")
    );
    assert_eq!(
        lines.next(),
        Some("\tAutonomous Power State Transition Enable (APSTE): Disabled")
    );
    // header + APSTE + "Auto PST Entries" + 32 blocks of 5 lines
    assert_eq!(text.lines().count(), 3 + 32 * 5);
    assert!(text.ends_with(&block(31, 0, 0)));
}

#[test]
fn transitions_are_listed_one_line_per_state() {
    let c = kingston_nv2();
    let t = sent(build(&c, &v5_14()));
    assert_eq!(
        transitions(&t, &c),
        vec![
            "PS0 -> PS3 after 100 ms idle",
            "PS1 -> PS3 after 100 ms idle",
            "PS2 -> PS3 after 100 ms idle",
            "PS3 -> PS4 after 2000 ms idle",
        ]
    );
    let off = ApstTable { apste: false, ..t };
    assert!(transitions(&off, &c).is_empty());
}

#[test]
fn nvme_cli_command_sets_feature_0x0c_with_256_bytes_of_data() {
    let t = sent(build(&pm981_1tb(), &v5_14()));
    assert_eq!(
        emit_nvme_cli(&t, "apst.bin", "/dev/nvme0"),
        "nvme set-feature /dev/nvme0 --feature-id=0x0c --value=1 --data-len=256 --data=apst.bin"
    );
    let off = ApstTable {
        apste: false,
        entries: [0; APST_ENTRIES],
    };
    assert_eq!(
        emit_nvme_cli(&off, "/tmp/my table.bin", "/dev/nvme1"),
        "nvme set-feature /dev/nvme1 --feature-id=0x0c --value=0 --data-len=256 --data='/tmp/my table.bin'"
    );
}

#[test]
fn kernel_params_for_the_v5_14_defaults_name_all_five_parameters() {
    let text = emit_kernel_params(&v5_14());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        vec![
            "# kernel command line",
            "nvme_core.default_ps_max_latency_us=100000 nvme_core.apst_primary_timeout_ms=100 \
             nvme_core.apst_secondary_timeout_ms=2000 nvme_core.apst_primary_latency_tol_us=15000 \
             nvme_core.apst_secondary_latency_tol_us=100000",
            "# /etc/modprobe.d/nvme_core.conf",
            "options nvme_core default_ps_max_latency_us=100000 apst_primary_timeout_ms=100 \
             apst_secondary_timeout_ms=2000 apst_primary_latency_tol_us=15000 \
             apst_secondary_latency_tol_us=100000",
        ]
    );
}

#[test]
fn kernel_params_for_legacy_set_primary_timeout_0_and_flag_the_quirk() {
    let params = ApstParams {
        ps_max_latency_us: Some(25000),
        no_deepest_ps: true,
        ..legacy()
    };
    let text = emit_kernel_params(&params);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "nvme_core.default_ps_max_latency_us=25000 nvme_core.apst_primary_timeout_ms=0"
    );
    assert_eq!(
        lines[3],
        "options nvme_core default_ps_max_latency_us=25000 apst_primary_timeout_ms=0"
    );
    assert!(lines[4..]
        .iter()
        .any(|l| l.starts_with('#') && l.contains("v4.12-v5.13")));
    assert!(lines[4..]
        .iter()
        .any(|l| l.starts_with('#') && l.contains("NVME_QUIRK_NO_DEEPEST_PS")));
}

#[test]
fn sysfs_commands_set_the_module_parameters_then_the_latency_tolerance() {
    let params = ApstParams {
        primary_timeout_ms: 50,
        ps_max_latency_us: Some(25000),
        ..v5_14()
    };
    let text = emit_sysfs(&params, "/dev/nvme1n1");
    let commands: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        commands,
        vec![
            "echo 50 > /sys/module/nvme_core/parameters/apst_primary_timeout_ms",
            "echo 2000 > /sys/module/nvme_core/parameters/apst_secondary_timeout_ms",
            "echo 15000 > /sys/module/nvme_core/parameters/apst_primary_latency_tol_us",
            "echo 100000 > /sys/module/nvme_core/parameters/apst_secondary_latency_tol_us",
            "echo 25000 > /sys/class/nvme/nvme1/power/pm_qos_latency_tolerance_us",
        ]
    );
    // Legacy on v5.14+: primary timeout 0; no limit is `any`; a controller path stays itself.
    let legacy_any = ApstParams {
        ps_max_latency_us: Some(u64::MAX),
        ..legacy()
    };
    let text = emit_sysfs(&legacy_any, "/dev/nvme0");
    let commands: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        commands,
        vec![
            "echo 0 > /sys/module/nvme_core/parameters/apst_primary_timeout_ms",
            "echo any > /sys/class/nvme/nvme0/power/pm_qos_latency_tolerance_us",
        ]
    );
    // v4.11 kernels have no apst_* parameters: the tolerance alone (its default 25000 us).
    let text = emit_sysfs(&v4_11(), "/dev/nvme0n1");
    let commands: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        commands,
        vec!["echo 25000 > /sys/class/nvme/nvme0/power/pm_qos_latency_tolerance_us"]
    );
}

#[test]
fn kernel_params_cap_an_unlimited_latency_at_s32_max() {
    let params = ApstParams {
        ps_max_latency_us: Some(u64::MAX),
        ..v5_14()
    };
    let text = emit_kernel_params(&params);
    // S32_MAX = 2^31 - 1 = 2147483647.
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("nvme_core.default_ps_max_latency_us=2147483647 "));
    assert!(text.contains("means no limit"));
}

#[test]
fn a_latency_limit_at_s32_max_or_above_is_no_limit() {
    // One non-operational state whose exit latency, 3 000 000 000 us, is above S32_MAX
    // (2 147 483 647): the kernel's tolerance S32_MAX is PM_QOS_LATENCY_ANY -> U64_MAX, so
    // the state qualifies; one microsecond below S32_MAX it does not. Legacy ITPT =
    // ceil((0 + 3e9) / 20) ms = 150 000 000 ms, capped at 2^24 - 1 = 16 777 215 ms.
    let c = ctrl(vec![op(5000.0), nonop(5.0, 0, 3_000_000_000)]);
    for (limit, expected) in [
        (S32_MAX, table(&[(1, 16_777_215)])),
        (u64::MAX, table(&[(1, 16_777_215)])),
        (S32_MAX - 1, table(&[])),
    ] {
        let params = ApstParams {
            ps_max_latency_us: Some(limit),
            ..legacy()
        };
        assert_eq!(sent(build(&c, &params)), expected, "limit {limit}");
    }
}

// ---------------------------------------------------------------------------------------------
// presets

#[test]
fn every_builtin_preset_loads_with_its_file_name_as_id() {
    let ids: Vec<String> = builtin().map(|p| p.unwrap().id).collect();
    assert_eq!(ids.len(), 17);
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    assert!(ids.contains(&"samsung-970-evo-plus-1tb".to_string()));
}

#[test]
fn preset_powers_are_converted_from_w_to_mw() {
    let p = find("samsung-970-evo-plus-1tb").unwrap().unwrap();
    let mw: Vec<f64> = p
        .controller
        .power_states
        .iter()
        .map(|s| s.max_power_mw)
        .collect();
    // 7.80 W, 6.00 W, 3.40 W, 0.0700 W, 0.0100 W as printed by smartctl.
    assert_eq!(mw, vec![7800.0, 6000.0, 3400.0, 70.0, 10.0]);
    assert_eq!(p.controller.npss, 4);
    assert!(p.controller.apsta);
    // 1e6 / 19000 IOPS = 52.6 µs; 1e6 / 60000 = 16.7 µs (Samsung QD1 spec).
    assert_eq!((p.service.read_4k_us, p.service.write_4k_us), (52.6, 16.7));
    let wd = find("wdc-pc-sn530-256gb").unwrap().unwrap();
    assert_eq!(wd.controller.power_states[0].active_power_mw, Some(1800.0));
    assert!(wd.in_apst_commit);
    assert!(find("no-such-drive").is_none());
}

const TINY: &str = r#"id = "tiny"
vendor = "V"
model = "M"
firmware = "F"
npss = 1
apsta = true
apsta_source = "a"
in_apst_commit = false
source = "s"

[[power_state]]
ps = 0
max_power_w = 3.5
operational = true
entry_lat_us = 0
exit_lat_us = 0

[[power_state]]
ps = 1
max_power_w = 0.005
operational = false
entry_lat_us = 1000
exit_lat_us = 9000

[service]
read_4k_us = 75.0
write_4k_us = 15.0
read_mb_s = 2000.0
write_mb_s = 1000.0
parallelism = 32

[service.source]
read_4k_us = "r"
write_4k_us = "w"
read_mb_s = "rb"
write_mb_s = "wb"
parallelism = "p"
"#;

fn error_for(from: &str, to: &str) -> (Option<usize>, String) {
    let text = TINY.replacen(from, to, 1);
    assert_ne!(text, TINY, "the edit must apply");
    let e = parse_preset("tiny.toml", &text).unwrap_err();
    assert_eq!(e.file, "tiny.toml");
    (e.line, e.message)
}

#[test]
fn minimal_preset_parses() {
    let p = parse_preset("tiny.toml", TINY).unwrap();
    assert_eq!(p.controller.power_states.len(), 2);
    assert_eq!(p.controller.power_states[1].max_power_mw, 5.0);
    assert!(p.controller.power_states[1].non_operational);
}

#[test]
fn unknown_key_is_reported_at_its_line() {
    // Line 23 is PS1's `exit_lat_us`; the new key lands on line 24.
    let (line, msg) = error_for("exit_lat_us = 9000", "exit_lat_us = 9000\nbogus = 1");
    assert_eq!(line, Some(24));
    assert!(msg.starts_with("unknown field `bogus`"), "{msg}");
}

#[test]
fn missing_field_is_reported_at_its_table() {
    // PS1's table header is line 18.
    let (line, msg) = error_for("exit_lat_us = 9000\n", "");
    assert_eq!(line, Some(18));
    assert!(
        msg.contains("missing field `exit_lat_us`") && msg.contains("[[power_state]]"),
        "{msg}"
    );
}

#[test]
fn wrong_type_names_the_key_and_line() {
    let (line, msg) = error_for("exit_lat_us = 9000", "exit_lat_us = \"slow\"");
    assert_eq!(line, Some(23));
    assert!(
        msg.contains("invalid type") && msg.contains("`exit_lat_us`"),
        "{msg}"
    );
}

#[test]
fn power_states_out_of_order_are_rejected_at_the_ps_line() {
    // PS1's `ps` is line 19.
    let (line, msg) = error_for("ps = 1", "ps = 2");
    assert_eq!(line, Some(19));
    assert!(msg.contains("`ps` is 2; expected 1"), "{msg}");
}

#[test]
fn npss_must_be_the_last_state_index() {
    let (line, msg) = error_for("npss = 1", "npss = 2");
    assert_eq!(line, Some(5));
    assert!(msg.contains("`npss` is 2"), "{msg}");
}

#[test]
fn negative_power_is_rejected() {
    // PS1's `max_power_w` is line 20.
    let (line, msg) = error_for("max_power_w = 0.005", "max_power_w = -1.0");
    assert_eq!(line, Some(20));
    assert!(msg.contains("`max_power_w`"), "{msg}");
}

#[test]
fn a_service_number_without_a_source_is_rejected() {
    // `parallelism = "p"` under [service.source] is line 37.
    let (line, msg) = error_for("parallelism = \"p\"", "parallelism = \"\"");
    assert_eq!(line, Some(37));
    assert!(msg.contains("service.source.parallelism"), "{msg}");
}

#[test]
fn a_mistyped_preset_id_suggests_the_close_ones() {
    use torpor_core::input::nvme_preset::suggestion;
    // Two characters swapped: distance 2, within a third of the 18-character id.
    assert_eq!(
        suggestion("wdc-pc-sn530-265gb"),
        "did you mean \"wdc-pc-sn530-256gb\"? (`torpor devices` lists them)"
    );
    // A model number alone: every word of it is in the id.
    assert!(suggestion("SN530").contains("\"wdc-pc-sn530-256gb\""));
    assert_eq!(suggestion("floppy"), "see `torpor devices`");
}

// ---------------------------------------------------------------------------------------------
// v4.11: the first builder (c5552fde102f), total latency against a 25 ms default

fn v4_11() -> ApstParams {
    ApstParams {
        algorithm: ApstAlgorithm::V4_11,
        ..ApstParams::default()
    }
}

#[test]
fn v4_11_reproduces_the_samsung_950_numbers_of_its_cover_letter() {
    // The patch series' cover letter, on a Samsung 950 with the default 25 ms limit: "we enter
    // state 3 (70mW, 0.5ms entry latency, 5ms exit latency) after 275ms and state 4 (5mW, 2ms
    // entry latency, 22ms exit latency) after 1200ms". By the formula: (500 + 5000) / 20 =
    // 275 ms and (2000 + 22000) / 20 = 1200 ms; both totals (5.5 and 24 ms) are within 25 ms.
    let samsung_950 = ctrl(vec![
        op(6500.0),
        op(5800.0),
        op(3600.0),
        nonop(70.0, 500, 5000),
        nonop(5.0, 2000, 22000),
    ]);
    let expected = table(&[(3, 275), (3, 275), (3, 275), (4, 1200)]);
    assert_eq!(sent(build(&samsung_950, &v4_11())), expected);
    assert_eq!(v4_11().max_latency_us(), 25_000);
}

#[test]
fn v4_11_compares_entry_plus_exit_where_later_kernels_compare_exit_only() {
    // Toshiba XG4 as a user reported it under v4.11 (damige/linux-nvme#11): PS3 5/25 ms,
    // PS4 100/70 ms. Totals 30 ms and 170 ms both exceed 25 ms: an enabled, all-zero table.
    let xg4 = ctrl(vec![
        op(6000.0),
        op(2400.0),
        op(1900.0),
        nonop(12.0, 5000, 25000),
        nonop(6.0, 100_000, 70_000),
    ]);
    assert_eq!(sent(build(&xg4, &v4_11())), table(&[]));
    // The user's workaround, a 170 ms limit, admits both: PS3 after 30000 / 20 = 1500 ms,
    // PS4 after 170000 / 20 = 8500 ms.
    let relaxed = ApstParams {
        ps_max_latency_us: Some(170_000),
        ..v4_11()
    };
    let both = table(&[(3, 1500), (3, 1500), (3, 1500), (4, 8500)]);
    assert_eq!(sent(build(&xg4, &relaxed)), both);
    // v4.12 on (legacy): exit latencies 25 and 70 ms against 100 ms: the same two states.
    assert_eq!(sent(build(&xg4, &legacy())), both);
    // One microsecond short of PS4's total under v4.11 drops PS4 only.
    let tight = ApstParams {
        ps_max_latency_us: Some(169_999),
        ..v4_11()
    };
    assert_eq!(
        sent(build(&xg4, &tight)),
        table(&[(3, 1500), (3, 1500), (3, 1500)])
    );
}

#[test]
fn an_unset_latency_limit_is_the_default_of_the_algorithms_releases() {
    assert_eq!(legacy().max_latency_us(), 100_000);
    assert_eq!(v5_14().max_latency_us(), 100_000);
    assert_eq!(v4_11().resolved().ps_max_latency_us, Some(25_000));
    // v4.11 kernels have no apst_* module parameters: only the limit is emitted.
    let text = emit_kernel_params(&v4_11());
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .ends_with("nvme_core.default_ps_max_latency_us=25000"));
    assert!(!text.contains("apst_primary"));
}

#[test]
fn a_ps0_idle_estimate_carries_its_range_and_source() {
    let with = format!(
        "{TINY}\n[estimate.ps0_idle_power_w]\nlow = 0.3\ncentral = 0.6\nhigh = 1.2\n\
         source = \"ESTIMATE: rule\"\n"
    );
    let p = parse_preset("tiny.toml", &with).unwrap();
    let e = p.ps0_idle.expect("estimate read");
    assert_eq!((e.low_mw, e.central_mw, e.high_mw), (300.0, 600.0, 1200.0));
    assert_eq!(e.source, "ESTIMATE: rule");
    assert!(parse_preset("tiny.toml", TINY).unwrap().ps0_idle.is_none());
    // Out of order, above PS0's 3.5 W maximum, or without a source: errors at their line.
    for (bad, line, says) in [
        (
            "central = 0.6",
            "central = 0.2",
            "expected low <= central <= high",
        ),
        (
            "high = 1.2",
            "high = 3.6",
            "above the state's maximum power 3500 mW",
        ),
        (
            "source = \"ESTIMATE: rule\"",
            "source = \" \"",
            "expected where the figures come from",
        ),
    ] {
        let text = with.replacen(bad, line, 1);
        let e = parse_preset("tiny.toml", &text).unwrap_err();
        assert!(e.message.contains(says), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

#[test]
fn every_preset_states_ps0_idle_power_by_the_rule_or_a_measurement() {
    // The rule written in the presets: 0.1 / 0.2 / 0.3 x min(PS0 max power, 5 W), clamped to
    // 0.25-1.5 W. The Samsung 950 PRO carries its own (system-level) measurement instead.
    for p in builtin().map(Result::unwrap) {
        let e = p
            .ps0_idle
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no estimate", p.id));
        if p.id == "samsung-950-pro" {
            assert_eq!((e.low_mw, e.central_mw, e.high_mw), (800.0, 1000.0, 1200.0));
            assert!(e.source.starts_with("MEASURED"));
            continue;
        }
        let reference = p.controller.power_states[0].max_power_mw.min(5000.0);
        let rule = |k: f64| (k * reference).clamp(250.0, 1500.0);
        for (got, k) in [(e.low_mw, 0.1), (e.central_mw, 0.2), (e.high_mw, 0.3)] {
            assert!(
                (got - rule(k)).abs() < 0.5,
                "{}: {got} mW vs rule {}",
                p.id,
                rule(k)
            );
        }
        assert!(e.source.starts_with("ESTIMATE by rule"), "{}", p.id);
    }
}

#[test]
fn every_preset_without_actp_states_ps0_active_power_by_the_rule() {
    // 0.6 / 0.8 / 1.0 x min(PS0 max power, 5 W); drives that report ACTP need none.
    for p in builtin().map(Result::unwrap) {
        let ps0 = &p.controller.power_states[0];
        match (ps0.active_power_mw, &p.ps0_active) {
            (Some(_), None) => continue,
            (None, Some(e)) => {
                let reference = ps0.max_power_mw.min(5000.0);
                for (got, k) in [(e.low_mw, 0.6), (e.central_mw, 0.8), (e.high_mw, 1.0)] {
                    assert!((got - k * reference).abs() < 0.5, "{}: {got} mW", p.id);
                }
                // Never below the idle estimate's top end: a busy drive draws more than an idle one.
                let idle = p.ps0_idle.as_ref().unwrap();
                assert!(e.low_mw >= idle.high_mw, "{}", p.id);
            }
            (actp, estimate) => panic!("{}: ACTP {actp:?} and estimate {estimate:?}", p.id),
        }
    }
}
