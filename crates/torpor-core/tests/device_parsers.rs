//! Users' own NVMe power-state tables: `nvme id-ctrl -o json` (nvme-cli 1.x and 2.x) and
//! `smartctl -a` text, read into an `NvmeController`.
//!
//! Expected values are the drives' published tables (the fixtures' `.source.txt` and
//! `.source.md` files name them; the smartctl fixtures are synthetic printouts of those
//! tables), converted to mW by hand in the comments; malformed inputs check the file, the line
//! that is wrong and what the message says was expected.

use torpor_core::apst::psd::{NvmeController, PowerState};
use torpor_core::input::{nvme_cli, parse_controller, smartctl};
use torpor_core::InputError;

const SAMSUNG_950_PRO_JSON: &str = include_str!("data/nvme/samsung-950-pro.nvme-cli-1.x.json");
const SN530_JSON: &str = include_str!("data/nvme/wdc-pc-sn530-256gb.nvme-cli-2.x.json");
const SN530_SMARTCTL: &str = include_str!("data/nvme/wdc-pc-sn530-256gb-synthetic.smartctl.txt");
const INTEL_760P_SMARTCTL: &str =
    include_str!("../../../scenarios/data/intel-760p-synthetic.smartctl.txt");

const APSTA_NOTE: &str =
    "smartctl does not print APSTA; assumed 1 (the drive supports APST): check with `nvme id-ctrl`";

fn ps(
    max_power_mw: f64,
    non_operational: bool,
    entry_lat_us: u32,
    exit_lat_us: u32,
    active_power_mw: Option<f64>,
) -> PowerState {
    PowerState {
        max_power_mw,
        non_operational,
        entry_lat_us,
        exit_lat_us,
        active_power_mw,
        idle_power_mw: None,
    }
}

/// PC SN530 NVMe WDC 256GB, from the linuxhw/SMART dump (see the fixtures' .source.txt):
/// 3.50 W = 3500 mW, 2.40 W = 2400 mW, 1.90 W = 1900 mW; 0.0250 W = 25 mW, 0.0050 W = 5 mW;
/// Active 1.80/1.60/1.50 W = 1800/1600/1500 mW; latencies in µs as printed.
fn sn530_states() -> Vec<PowerState> {
    vec![
        ps(3500.0, false, 0, 0, Some(1800.0)),
        ps(2400.0, false, 0, 0, Some(1600.0)),
        ps(1900.0, false, 0, 0, Some(1500.0)),
        ps(25.0, true, 3900, 11000, None),
        ps(5.0, true, 5000, 39000, None),
    ]
}

fn assert_error(result: Result<impl std::fmt::Debug, InputError>, line: usize, fragment: &str) {
    let e = result.expect_err("malformed input must be an error");
    assert_eq!(e.file, "drive.in", "{e}");
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.message.contains(fragment),
        "message `{}` lacks `{fragment}`",
        e.message
    );
}

fn json(text: &str) -> Result<NvmeController, InputError> {
    nvme_cli::parse("drive.in", text).map(|p| p.controller)
}

fn smart(text: &str) -> Result<torpor_core::input::Parsed, InputError> {
    smartctl::parse("drive.in", text)
}

// ---------------------------------------------------------------------------------------
// nvme id-ctrl -o json: real-shaped fixtures
// ---------------------------------------------------------------------------------------

#[test]
fn nvme_cli_1x_samsung_950_pro_reads_the_pr52_table() {
    let c = json(SAMSUNG_950_PRO_JSON).expect("fixture parses");
    // PR #52: 6.50 W, 5.80 W, 3.60 W (0.01 W units → ×1000 mW), 0.0700 W = 70 mW and
    // 0.0050 W = 5 mW non-operational; enlat/exlat 5/5, 30/30, 100/100, 500/5000,
    // 2000/22000 µs; idle and active power "-".
    let expected = NvmeController {
        model: "Samsung SSD 950 PRO".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            ps(6500.0, false, 5, 5, None),
            ps(5800.0, false, 30, 30, None),
            ps(3600.0, false, 100, 100, None),
            ps(70.0, true, 500, 5000, None),
            ps(5.0, true, 2000, 22000, None),
        ],
    };
    assert_eq!(c, expected);
}

#[test]
fn nvme_cli_2x_wd_sn530_reads_the_published_table() {
    let c = json(SN530_JSON).expect("fixture parses");
    let expected = NvmeController {
        model: "PC SN530 NVMe WDC 256GB".into(),
        npss: 4,
        apsta: true,
        power_states: sn530_states(),
    };
    assert_eq!(c, expected);
}

#[test]
fn json_and_smartctl_views_of_the_sn530_agree() {
    // Two formats, two parsers, one drive: the power states must be identical.
    let from_json = json(SN530_JSON).expect("json parses");
    let from_smartctl = smart(SN530_SMARTCTL).expect("smartctl parses").controller;
    assert_eq!(from_json, from_smartctl);
}

#[test]
fn parse_controller_dispatches_json_and_text_by_content() {
    let from_json = parse_controller("drive.in", SN530_JSON).expect("json");
    assert!(from_json.notes.is_empty());
    assert_eq!(from_json.controller.power_states, sn530_states());
    let from_text = parse_controller("drive.in", INTEL_760P_SMARTCTL).expect("smartctl");
    assert_eq!(from_text.controller.model, "INTEL SSDPEKKW256G8");
}

// ---------------------------------------------------------------------------------------
// nvme id-ctrl -o json: encodings of each nvme-cli version
// ---------------------------------------------------------------------------------------

/// A two-state document; psd i is on line 6 + i.
fn doc(npss: &str, psds: &[&str]) -> String {
    let mut text = format!(
        "{{\n  \"mn\" : \"TEST DRIVE  \",\n  \"npss\" : {npss},\n  \"apsta\" : 1,\n  \"psds\" : [\n"
    );
    text.push_str(
        &psds
            .iter()
            .map(|p| format!("    {p}"))
            .collect::<Vec<_>>()
            .join(",\n"),
    );
    text.push_str("\n  ]\n}\n");
    text
}

const PS0: &str = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0}"#;
const PS1: &str = r#"{"max_power" : 50, "flags" : 3, "entry_lat" : 5000, "exit_lat" : 39000}"#;

#[test]
fn minimal_document_reads_flags_bits() {
    let c = json(&doc("1", &[PS0, PS1])).expect("parses");
    // flags 0: MXPS 0 → 350 × 10 mW = 3500 mW, operational. flags 3: MXPS 1 → 50 × 0.1 mW =
    // 5 mW, NOPS 1.
    assert_eq!(c.model, "TEST DRIVE");
    assert_eq!(c.npss, 1);
    assert!(c.apsta);
    assert_eq!(
        c.power_states,
        vec![
            ps(3500.0, false, 0, 0, None),
            ps(5.0, true, 5000, 39000, None)
        ]
    );
}

#[test]
fn apsta_counts_as_supported_when_any_bit_is_set_as_the_kernel_tests_it() {
    // drivers/nvme/host/core.c: `if (!ctrl->apsta) return;` tests the whole byte. 2 = 0b10
    // has only a reserved bit set: the kernel still programs APST, and the parser says why.
    let text = doc("1", &[PS0, PS1]).replace("\"apsta\" : 1", "\"apsta\" : 2");
    let parsed = nvme_cli::parse("drive.in", &text).expect("parses");
    assert!(parsed.controller.apsta);
    assert_eq!(
        parsed.notes,
        vec![
            "APSTA is 0x02: reserved bits are set and bit 0 is clear; the kernel tests the \
              whole byte, so it programs APST for this drive"
                .to_string()
        ]
    );
    let zero = doc("1", &[PS0, PS1]).replace("\"apsta\" : 1", "\"apsta\" : 0");
    assert!(!json(&zero).expect("parses").apsta);
    assert!(nvme_cli::parse("d", &doc("1", &[PS0, PS1]))
        .unwrap()
        .notes
        .is_empty());
}

#[test]
fn nvme_cli_1x_scale_bytes_use_bits_7_6() {
    // idle_scale 64 = 0b01_000000 → 0.0001 W units: 900 × 0.1 mW = 90 mW.
    // active_work_scale 130 = 0b10_000010 → 0.01 W units (APW 2): 180 × 10 mW = 1800 mW.
    let psd = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 900, "idle_scale" : 64, "active_power" : 180, "active_work_scale" : 130}"#;
    let c = json(&doc("1", &[psd, PS1])).expect("parses");
    assert_eq!(c.power_states[0].idle_power_mw, Some(90.0));
    assert_eq!(c.power_states[0].active_power_mw, Some(1800.0));
}

#[test]
fn nvme_cli_1x_scale_byte_without_scale_bits_is_not_reported() {
    // active_work_scale 2 = APW 2 with scale bits 00, and no active power: not reported.
    let psd = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 0, "idle_scale" : 0, "active_power" : 0, "active_work_scale" : 2}"#;
    let c = json(&doc("1", &[psd, PS1])).expect("parses");
    assert_eq!(c.power_states[0].active_power_mw, None);
    assert_eq!(c.power_states[0].idle_power_mw, None);
}

#[test]
fn nvme_cli_2_0_shifted_active_scale_with_a_power_reads_as_the_scale() {
    // nvme-cli 2.0 put `nvme_psd_power_scale(apws)` (2 = 0.01 W) in `active_work_scale`:
    // 180 × 10 mW = 1800 mW.
    let psd = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 0, "idle_scale" : 0, "active_power" : 180, "active_work_scale" : 2}"#;
    let c = json(&doc("1", &[psd, PS1])).expect("parses");
    assert_eq!(c.power_states[0].active_power_mw, Some(1800.0));
}

#[test]
fn nvme_cli_2_1_to_2_5_two_bit_scales_with_flags() {
    // idle_scale 1 (0.0001 W): 5000 × 0.1 mW = 500 mW; active_scale 2: 250 × 10 mW = 2500 mW.
    let psd = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 5000, "idle_scale" : 1, "active_power" : 250, "active_power_work" : 2, "active_scale" : 2}"#;
    let c = json(&doc("1", &[psd, PS1])).expect("parses");
    assert_eq!(c.power_states[0].idle_power_mw, Some(500.0));
    assert_eq!(c.power_states[0].active_power_mw, Some(2500.0));
}

#[test]
fn flags_and_2x_keys_that_agree_are_accepted() {
    let psd = r#"{"max_power" : 50, "flags" : 3, "max_power_scale" : 1, "non-operational_state" : 1, "entry_lat" : 5000, "exit_lat" : 39000}"#;
    let c = json(&doc("1", &[PS0, psd])).expect("parses");
    assert_eq!(c.power_states[1], ps(5.0, true, 5000, 39000, None));
}

#[test]
fn npss_above_31_is_accepted_with_the_psds_as_given() {
    // The kernel refuses NPSS > 31 when building the APST table, not when reading Identify.
    let c = json(&doc("40", &vec![PS0; 32])).expect("npss 40 parses");
    assert_eq!(c.npss, 40);
    assert_eq!(c.power_states.len(), 32);
}

#[test]
fn npss_above_31_with_fewer_than_the_32_real_descriptors_is_refused() {
    // nvme-cli prints at least psd[0..=31] then; two entries (or none, as with npss 255 and
    // `psds: []`) mean the dump was edited or cut, and would simulate a drive with no states.
    for (npss, psds) in [("40", vec![PS0, PS1]), ("255", vec![])] {
        let e = json(&doc(npss, &psds)).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(
            e.message
                .contains("should list at least the 32 descriptors that exist"),
            "{e}"
        );
    }
}

#[test]
fn npss_above_31_keeps_only_the_32_real_descriptors() {
    // nvme-cli prints psd[0..=npss]; entries past psd[31] are not descriptors.
    let psds = vec![PS0; 34];
    let c = json(&doc("33", &psds)).expect("npss 33 parses");
    assert_eq!(c.npss, 33);
    assert_eq!(c.power_states.len(), 32);
}

// ---------------------------------------------------------------------------------------
// nvme id-ctrl -o json: malformed input
// ---------------------------------------------------------------------------------------

#[test]
fn json_empty_file_is_rejected() {
    assert_error(json(""), 1, "empty file");
    assert_error(json("  \n\n"), 1, "empty file");
}

#[test]
fn json_truncated_inside_a_psd_points_at_the_last_line() {
    let full = doc("1", &[PS0, PS1]);
    let cut = &full[..full.find("\"flags\" : 3").expect("psd 1")];
    // The text ends on line 7 (psd 1).
    assert_error(json(cut), 7, "invalid JSON (EOF while parsing");
}

#[test]
fn json_truncated_after_a_newline_points_at_the_last_line() {
    // Cut right after psd 0's line (line 6) and its newline: nothing follows line 6.
    let full = doc("1", &[PS0, PS1]);
    let cut = &full[..full.find("    {\"max_power\" : 50").expect("psd 1")];
    assert_error(json(cut), 6, "invalid JSON (EOF while parsing");
}

#[test]
fn json_binary_garbage_is_invalid_json() {
    assert_error(json("{\u{0}\u{1}\u{7f}\u{fffd}"), 1, "invalid JSON");
}

#[test]
fn json_array_at_top_level_is_not_an_object() {
    assert_error(json("\n[1, 2]\n"), 2, "expected a JSON object, got [1, 2]");
}

#[test]
fn json_without_psds_is_rejected() {
    let text = "{\n  \"mn\" : \"X\",\n  \"npss\" : 0,\n  \"apsta\" : 1\n}\n";
    assert_error(json(text), 1, "missing `psds`");
}

#[test]
fn json_smart_log_output_is_named_as_such() {
    let text =
        "{\n  \"critical_warning\" : 0,\n  \"temperature\" : 318,\n  \"avail_spare\" : 100\n}\n";
    assert_error(json(text), 1, "looks like `nvme smart-log` output");
}

#[test]
fn json_id_ns_output_is_named_as_such() {
    let text = "{\n  \"nsze\" : 500118192,\n  \"ncap\" : 500118192,\n  \"lbafs\" : []\n}\n";
    assert_error(json(text), 1, "looks like `nvme id-ns` output");
}

#[test]
fn json_psds_that_is_not_an_array_is_rejected() {
    let text = "{\n  \"mn\" : \"X\",\n  \"npss\" : 0,\n  \"apsta\" : 1,\n  \"psds\" : {\"max_power\" : 1}\n}\n";
    assert_error(
        json(text),
        5,
        "psds: expected an array of power-state descriptors",
    );
}

#[test]
fn json_psd_that_is_not_an_object_is_rejected() {
    assert_error(
        json(&doc("1", &[PS0, "5"])),
        7,
        "psds[1]: expected an object",
    );
}

#[test]
fn json_psd_without_exit_lat_is_rejected() {
    let psd = r#"{"max_power" : 50, "flags" : 3, "entry_lat" : 5000}"#;
    assert_error(
        json(&doc("1", &[PS0, psd])),
        7,
        "psds[1]: missing `exit_lat`; expected an integer number of microseconds (0..=4294967295)",
    );
}

#[test]
fn json_string_where_a_number_is_expected_is_rejected() {
    let psd = PS1.replace("39000", "\"39000\"");
    assert_error(
        json(&doc("1", &[PS0, &psd])),
        7,
        "psds[1].exit_lat: expected an integer number of microseconds (0..=4294967295), got \"39000\"",
    );
}

#[test]
fn json_negative_latency_is_rejected() {
    let psd = PS1.replace("39000", "-5");
    assert_error(
        json(&doc("1", &[PS0, &psd])),
        7,
        "psds[1].exit_lat: expected an integer number of microseconds (0..=4294967295), got -5",
    );
}

#[test]
fn json_exit_lat_above_u32_is_rejected() {
    // u32::MAX + 1 = 4294967296.
    let psd = PS1.replace("39000", "4294967296");
    assert_error(
        json(&doc("1", &[PS0, &psd])),
        7,
        "(0..=4294967295), got 4294967296",
    );
}

#[test]
fn json_max_power_above_u16_is_rejected() {
    let psd = PS0.replace("350", "65536");
    assert_error(
        json(&doc("1", &[&psd, PS1])),
        6,
        "psds[0].max_power: expected an integer number of max-power-scale units (0..=65535), got 65536",
    );
}

#[test]
fn json_fractional_latency_is_rejected() {
    let psd = PS1.replace("5000", "2.5");
    assert_error(
        json(&doc("1", &[PS0, &psd])),
        7,
        "psds[1].entry_lat: expected an integer",
    );
}

#[test]
fn json_null_latency_is_rejected() {
    let psd = PS1.replace("5000", "null");
    assert_error(
        json(&doc("1", &[PS0, &psd])),
        7,
        "psds[1].entry_lat: expected an integer number of microseconds (0..=4294967295), got null",
    );
}

#[test]
fn json_npss_disagreeing_with_the_psds_is_rejected() {
    assert_error(
        json(&doc("2", &[PS0, PS1])),
        3,
        "npss is 2, so `psds` should have 3 entries (PS0..=PS2), but it has 2",
    );
}

#[test]
fn json_missing_npss_is_rejected() {
    let text = doc("1", &[PS0, PS1]).replace("  \"npss\" : 1,\n", "");
    assert_error(json(&text), 1, "missing `npss`");
}

#[test]
fn json_npss_above_a_byte_is_rejected() {
    assert_error(
        json(&doc("256", &[PS0, PS1])),
        3,
        "npss: expected an integer (NPSS",
    );
}

#[test]
fn json_missing_apsta_is_rejected() {
    let text = doc("1", &[PS0, PS1]).replace("  \"apsta\" : 1,\n", "");
    assert_error(json(&text), 1, "missing `apsta`");
}

#[test]
fn json_model_that_is_not_a_string_is_rejected() {
    let text = doc("1", &[PS0, PS1]).replace("\"TEST DRIVE  \"", "12");
    assert_error(
        json(&text),
        2,
        "mn: expected a string (the model number), got 12",
    );
}

#[test]
fn json_flags_above_a_byte_is_rejected() {
    let psd = PS0.replace("\"flags\" : 0", "\"flags\" : 256");
    assert_error(
        json(&doc("1", &[&psd, PS1])),
        6,
        "psds[0].flags: expected an integer (PSD byte 3",
    );
}

#[test]
fn json_unknown_2x_max_power_scale_is_rejected() {
    let psd = r#"{"max_power" : 50, "max_power_scale" : 2, "non-operational_state" : 1, "entry_lat" : 5000, "exit_lat" : 39000}"#;
    assert_error(
        json(&doc("1", &[PS0, psd])),
        7,
        "psds[1].max_power_scale: expected 0 (0.01 W units) or 1 (0.0001 W units) (0..=1), got 2",
    );
}

#[test]
fn json_reserved_scale_in_a_1x_scale_byte_is_rejected() {
    // 192 = 0b11_000000: scale bits 11, reserved.
    let psd = r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 5, "idle_scale" : 192}"#;
    assert_error(
        json(&doc("1", &[psd, PS1])),
        6,
        "psds[0].idle_scale: bits 7:6 of 192 hold the reserved power scale 3",
    );
}

#[test]
fn json_reserved_2x_active_scale_is_rejected() {
    let psd = r#"{"max_power" : 350, "max_power_scale" : 0, "non-operational_state" : 0, "entry_lat" : 0, "exit_lat" : 0, "active_power" : 5, "active_scale" : 3}"#;
    assert_error(json(&doc("1", &[psd, PS1])), 6, "psds[0].active_scale: expected 0 (not reported), 1 (0.0001 W units) or 2 (0.01 W units) (0..=2), got 3");
}

#[test]
fn json_1x_and_2x_keys_that_contradict_are_rejected() {
    // flags 3 says MXPS 1, but max_power_scale says 0.
    let psd = r#"{"max_power" : 50, "flags" : 3, "max_power_scale" : 0, "non-operational_state" : 1, "entry_lat" : 5000, "exit_lat" : 39000}"#;
    assert_error(
        json(&doc("1", &[PS0, psd])),
        7,
        "psds[1]: `flags` = 3 (max-power scale bit 1, non-operational bit 1) contradicts",
    );
}

#[test]
fn json_psd_without_flags_or_2x_keys_is_rejected() {
    let psd = r#"{"max_power" : 50, "entry_lat" : 5000, "exit_lat" : 39000}"#;
    assert_error(
        json(&doc("1", &[PS0, psd])),
        7,
        "psds[1]: missing `flags` (nvme-cli 1.x) or `max_power_scale` and `non-operational_state`",
    );
}

#[test]
fn json_half_of_the_2x_keys_is_rejected() {
    let psd =
        r#"{"max_power" : 50, "max_power_scale" : 1, "entry_lat" : 5000, "exit_lat" : 39000}"#;
    assert_error(
        json(&doc("1", &[PS0, psd])),
        7,
        "psds[1]: missing `non-operational_state`",
    );
}

#[test]
fn json_idle_power_without_its_scale_is_rejected() {
    let psd =
        r#"{"max_power" : 350, "flags" : 0, "entry_lat" : 0, "exit_lat" : 0, "idle_power" : 5}"#;
    assert_error(
        json(&doc("1", &[psd, PS1])),
        6,
        "psds[0]: `idle_power` is given without its scale",
    );
}

#[test]
fn json_error_in_a_multi_line_fixture_points_at_the_key_line() {
    // In the 950 PRO fixture `psds` opens on line 81 and each descriptor takes 14 lines
    // (`{`, 12 keys, `}`), so PS4's `{` is on line 82 + 4 × 14 = 138 and its 4th key,
    // `exit_lat`, on line 142.
    let text = SAMSUNG_950_PRO_JSON.replace("\"exit_lat\" : 22000", "\"exit_lat\" : -5");
    assert_error(
        json(&text),
        142,
        "psds[4].exit_lat: expected an integer number of microseconds (0..=4294967295), got -5",
    );
}

// ---------------------------------------------------------------------------------------
// smartctl -a: synthetic printouts of real tables (real dumps: tests/test_real_data.py)
// ---------------------------------------------------------------------------------------

#[test]
fn smartctl_wd_sn530_dump_reads_the_published_table() {
    let parsed = smart(SN530_SMARTCTL).expect("dump parses");
    let expected = NvmeController {
        model: "PC SN530 NVMe WDC 256GB".into(),
        npss: 4,
        apsta: true,
        power_states: sn530_states(),
    };
    assert_eq!(parsed.controller, expected);
    assert_eq!(parsed.notes.len(), 2, "{:?}", parsed.notes);
    assert_eq!(parsed.notes[0], APSTA_NOTE);
    assert!(
        parsed.notes[1].contains("Active/Idle"),
        "{:?}",
        parsed.notes
    );
}

#[test]
fn smartctl_intel_760p_dump_reads_the_published_table() {
    let parsed = smart(INTEL_760P_SMARTCTL).expect("dump parses");
    // 9.00/4.60/3.80 W = 9000/4600/3800 mW; 0.0450 W = 45 mW; 0.0040 W = 4 mW.
    let expected = NvmeController {
        model: "INTEL SSDPEKKW256G8".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            ps(9000.0, false, 0, 0, None),
            ps(4600.0, false, 0, 0, None),
            ps(3800.0, false, 0, 0, None),
            ps(45.0, true, 2000, 2000, None),
            ps(4.0, true, 6000, 8000, None),
        ],
    };
    assert_eq!(parsed.controller, expected);
    // No Active/Idle value is printed, so the APSTA assumption is the only note.
    assert_eq!(parsed.notes, vec![APSTA_NOTE.to_string()]);
}

#[test]
fn smartctl_crlf_line_endings_read_the_same() {
    let crlf = SN530_SMARTCTL.replace('\n', "\r\n");
    assert_eq!(
        smart(&crlf).expect("crlf parses"),
        smart(SN530_SMARTCTL).expect("lf parses")
    );
}

/// A table with the header on line 2; row i is on line 3 + i.
fn table(rows: &[&str]) -> String {
    let mut text = String::from(
        "Model Number:                       TEST DRIVE\n\
         St Op     Max   Active     Idle   RL RT WL WT  Ent_Lat  Ex_Lat\n",
    );
    for row in rows {
        text.push_str(row);
        text.push('\n');
    }
    text.push_str("\nSupported LBA Sizes (NSID 0x1)\n");
    text
}

const ROW0: &str = " 0 +     3.50W    1.80W       -    0  0  0  0        0       0";
const ROW1: &str = " 1 -   0.0250W       -        -    3  3  3  3     3900   11000";

#[test]
fn smartctl_reserved_scale_question_mark_is_not_reported_with_a_note() {
    let row = " 0 +     3.50W        ?       -    0  0  0  0        0       0";
    let parsed = smart(&table(&[row, ROW1])).expect("parses");
    assert_eq!(parsed.controller.power_states[0].active_power_mw, None);
    assert!(
        parsed
            .notes
            .iter()
            .any(|n| n.contains("PS0 Active power is `?`")),
        "{:?}",
        parsed.notes
    );
}

#[test]
fn smartctl_without_model_number_leaves_the_model_empty_with_a_note() {
    let text = table(&[ROW0, ROW1]).replace("Model Number:                       TEST DRIVE\n", "");
    let parsed = smart(&text).expect("parses");
    assert_eq!(parsed.controller.model, "");
    assert!(parsed
        .notes
        .iter()
        .any(|n| n.contains("no `Model Number:` line")));
}

#[test]
fn smartctl_table_ends_at_a_line_without_a_state_number() {
    // No blank line between the tables, as in some pasted dumps.
    let text = table(&[ROW0, ROW1]).replace("\n\nSupported LBA", "\nSupported LBA");
    assert_eq!(smart(&text).expect("parses").controller.npss, 1);
}

// ---------------------------------------------------------------------------------------
// smartctl -a: malformed input
// ---------------------------------------------------------------------------------------

#[test]
fn smartctl_empty_file_is_rejected() {
    assert_error(smart(""), 1, "empty file");
}

#[test]
fn smartctl_text_without_the_table_is_rejected() {
    let ata = "=== START OF INFORMATION SECTION ===\nDevice Model:     Samsung SSD 860 EVO 500GB\n";
    assert_error(smart(ata), 1, "no `Supported Power States` table");
}

#[test]
fn smartctl_binary_garbage_is_rejected() {
    assert_error(
        smart("\u{0}\u{1}\u{2}\u{7f}\u{fffd}\n\u{3}"),
        1,
        "no `Supported Power States` table",
    );
}

#[test]
fn smartctl_title_without_header_is_rejected() {
    let text = "Model Number: X\n\nSupported Power States\n\n";
    assert_error(
        smart(text),
        4,
        "expected the column header `St Op Max Active Idle RL RT WL WT Ent_Lat Ex_Lat`",
    );
}

#[test]
fn smartctl_header_with_wrong_columns_is_rejected() {
    let text =
        "St Op     Max   Active     Idle   RL RT WL WT  Ent_Lat\n 0 +  3.50W - - 0 0 0 0 0\n";
    assert_error(smart(text), 1, "unexpected power-state table header");
}

#[test]
fn smartctl_header_without_rows_is_rejected() {
    assert_error(smart(&table(&[])), 3, "the power-state table has no rows");
}

#[test]
fn smartctl_row_with_too_few_columns_is_rejected() {
    let row = " 1 -   0.0250W       -        -    3  3  3  3     3900";
    assert_error(smart(&table(&[ROW0, row])), 4, "expected 11 columns");
}

#[test]
fn smartctl_non_numeric_latency_is_rejected() {
    let row = ROW1.replace("11000", "11ms");
    assert_error(
        smart(&table(&[ROW0, &row])),
        4,
        "PS1 Ex_Lat: expected an integer number of microseconds (0..=4294967295), got `11ms`",
    );
}

#[test]
fn smartctl_latency_above_u32_is_rejected() {
    let row = ROW1.replace("   3900", "4294967296");
    assert_error(smart(&table(&[ROW0, &row])), 4, "PS1 Ent_Lat: expected an integer number of microseconds (0..=4294967295), got `4294967296`");
}

#[test]
fn smartctl_power_without_watts_unit_is_rejected() {
    let row = ROW0.replace("3.50W", "3.50 ");
    assert_error(
        smart(&table(&[&row, ROW1])),
        3,
        "PS0 Max: expected a power like `3.50W` or `0.0250W`, got `3.50`",
    );
}

#[test]
fn smartctl_power_with_one_decimal_is_rejected() {
    let row = ROW0.replace("1.80W", " 1.8W");
    assert_error(
        smart(&table(&[&row, ROW1])),
        3,
        "PS0 Active: expected a power like `1.80W`, or `-` (not reported), got `1.8W`",
    );
}

#[test]
fn smartctl_rows_out_of_order_are_rejected() {
    let row2 = ROW1.replacen(" 1 ", " 2 ", 1);
    assert_error(
        smart(&table(&[ROW0, &row2])),
        4,
        "expected state 1 (rows numbered 0, 1, 2, … in order), got `2`",
    );
}

#[test]
fn smartctl_duplicate_state_is_rejected() {
    assert_error(
        smart(&table(&[ROW0, ROW1, ROW1])),
        5,
        "expected state 2 (rows numbered 0, 1, 2, … in order), got `1`",
    );
}

#[test]
fn smartctl_op_column_other_than_plus_or_minus_is_rejected() {
    let row = ROW1.replacen('-', "*", 1);
    assert_error(
        smart(&table(&[ROW0, &row])),
        4,
        "PS1 Op: expected `+` (operational) or `-` (non-operational), got `*`",
    );
}

#[test]
fn smartctl_non_numeric_rank_is_rejected() {
    let row = ROW0.replacen("  0  0  0  0 ", "  x  0  0  0 ", 1);
    assert_error(
        smart(&table(&[&row, ROW1])),
        3,
        "PS0 RL: expected a relative rank (0..=31), got `x`",
    );
}

#[test]
fn smartctl_more_than_32_states_is_rejected() {
    let rows: Vec<String> = (0..33)
        .map(|i| format!("{i:2} +     3.50W       -        -    0  0  0  0        0       0"))
        .collect();
    let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
    // Row 32 (the 33rd) is on line 3 + 32 = 35.
    assert_error(smart(&table(&refs)), 35, "expected at most 32 power states");
}
