//! Each expected line below is counted by hand in the test's own text.

use super::*;
use crate::apst::ApstAlgorithm;

const GOOD: &str = r#"
[platform.nvme]
preset = "wdc-pc-sn530-256gb"

[policy.apst]
primary_timeout_ms = 50

[workload]
apst_workflow = 7

[run]
duration = "30s"
seed = 3

[[variant]]
name = "legacy"
[variant.policy.apst]
algorithm = "legacy"

[[variant]]
name = "v5.14"
"#;

fn err(text: &str) -> InputError {
    ScenarioFile::parse("s.toml", text).unwrap_err()
}

#[test]
fn variants_merge_over_the_base() {
    let f = ScenarioFile::parse("s.toml", GOOD).unwrap();
    let v = f.variants();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].name, "legacy");
    assert_eq!(v[0].scenario.policy.apst.algorithm, ApstAlgorithm::Legacy);
    // The base's primary timeout survives in both; the rest are the kernel's defaults.
    assert_eq!(v[0].scenario.policy.apst.primary_timeout_ms, 50);
    assert_eq!(v[1].scenario.policy.apst.algorithm, ApstAlgorithm::V5_14);
    assert_eq!(v[1].scenario.policy.apst.primary_timeout_ms, 50);
    assert_eq!(v[1].scenario.policy.apst.secondary_timeout_ms, 2000);
    assert_eq!(v[1].scenario.run.duration, Some(Nanos::from_secs(30)));
    assert_eq!(v[1].scenario.run.seed, 3);
}

#[test]
fn a_variant_may_change_the_platform_the_workload_and_the_run() {
    let text = GOOD.to_string()
        + "[variant.platform.nvme]\nlatency_scale = 2.0\n[variant.workload]\napst_workflow = 3\n\
           [variant.run]\nduration = \"5s\"\n";
    let f = ScenarioFile::parse("s.toml", &text).unwrap();
    let (a, b) = (&f.variants()[0].scenario, &f.variants()[1].scenario);
    assert_eq!(a.platform.nvme.as_ref().unwrap().latency_scale, 1.0);
    assert_eq!(b.platform.nvme.as_ref().unwrap().latency_scale, 2.0);
    // Deep merge: the preset of the base stays.
    assert_eq!(
        b.platform.nvme.as_ref().unwrap().preset.as_deref(),
        Some("wdc-pc-sn530-256gb")
    );
    assert_eq!(
        (a.workload.apst_workflow, b.workload.apst_workflow),
        (Some(7), Some(3))
    );
    assert_eq!(b.run.duration, Some(Nanos::from_secs(5)));
    assert_eq!(b.run.seed, 3);
}

#[test]
fn no_variant_means_one_named_base() {
    let f = ScenarioFile::parse(
        "s.toml",
        "[platform.nvme]\npreset = \"x\"\n[workload]\napst_workflow = 1\n",
    )
    .unwrap();
    assert_eq!(f.variants().len(), 1);
    assert_eq!(f.variants()[0].name, "base");
    assert_eq!(f.variants()[0].scenario.run.duration, None);
}

#[test]
fn run_with_only_a_seed_is_fine() {
    let text = "[platform.nvme]\npreset = \"x\"\n[workload]\napst_workflow = 1\n[run]\nseed = 9\n";
    let f = ScenarioFile::parse("s.toml", text).unwrap();
    assert_eq!(f.variants()[0].scenario.run.seed, 9);
    assert_eq!(f.variants()[0].scenario.run.duration, None);
}

#[test]
fn unknown_key_names_its_line_and_the_key() {
    let e = err(&GOOD.replace("seed = 3", "seed = 3\nspeed = 2"));
    assert_eq!(e.line, Some(14));
    assert!(e.message.contains("unknown field `speed`"), "{}", e.message);
}

#[test]
fn duration_without_unit_is_refused_on_its_line() {
    let e = err(&GOOD.replace("\"30s\"", "\"30\""));
    assert_eq!(e.line, Some(12));
    assert!(
        e.message.contains("expected a duration with a unit"),
        "{}",
        e.message
    );
}

#[test]
fn an_error_in_a_variant_is_reported_at_the_variants_line() {
    let e = err(&GOOD.replace("algorithm = \"legacy\"", "algorithm = \"v9\""));
    assert_eq!(e.line, Some(18));
    assert!(e.message.contains("v9"), "{}", e.message);
}

#[test]
fn a_bad_block_size_in_the_second_job_is_reported_at_that_job() {
    let text = r#"[platform.nvme]
preset = "x"
[workload]
[[workload.job]]
name = "a"
rw = "read"
bs = "4k"
[[workload.job]]
name = "b"
rw = "read"
bs = 0
"#;
    let e = err(text);
    assert_eq!(e.line, Some(11));
    assert!(
        e.message.contains("[[workload.job]] b: `bs`"),
        "{}",
        e.message
    );
}

#[test]
fn a_duplicate_variant_name_is_reported_at_the_second_name() {
    let text = r#"[platform.nvme]
preset = "x"
[workload]
[[workload.job]]
name = "a"
rw = "read"
[[variant]]
name = "one"
[[variant]]
name = "one"
"#;
    let e = err(text);
    assert_eq!(e.line, Some(10));
    assert!(
        e.message.contains("\"one\" is already used"),
        "{}",
        e.message
    );
}

#[test]
fn iodepth_zero_under_the_replay_is_reported_at_the_replays_line() {
    let text = r#"[platform.nvme]
preset = "x"
[workload]
[[workload.job]]
name = "a"
rw = "read"
iodepth = 4
[workload.replay]
file = "t.iolog"
iodepth = 0
"#;
    let e = err(text);
    assert_eq!(e.line, Some(10));
    assert!(
        e.message.contains("[workload.replay] `iodepth`"),
        "{}",
        e.message
    );
}

#[test]
fn a_missing_workload_is_a_top_level_table() {
    let e = err("[platform.nvme]\npreset = \"x\"\n");
    assert_eq!(e.line, None);
    assert!(
        e.message.contains("missing top-level table `workload`"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("[platform]"), "{}", e.message);
}

#[test]
fn json_is_not_a_scenario() {
    let e = err("{\"platform\": {}}");
    assert_eq!(e.line, Some(1));
    assert!(
        e.message.starts_with("expected a scenario TOML file"),
        "{}",
        e.message
    );
}

#[test]
fn the_old_spelling_is_refused_with_the_new_one() {
    let cases: [(&str, usize, &str); 5] = [
        (
            "[platform]\nnvme = \"sn530\"\n[workload]\napst_workflow = 1\n",
            2,
            "`[platform.nvme]` then `preset = \"sn530\"`",
        ),
        (
            "[platform]\nnvme_file = \"d.json\"\n[workload]\napst_workflow = 1\n",
            2,
            "`[platform.nvme]` then `file = \"d.json\"`",
        ),
        (
            "[platform]\nlatency_scale = 2.0\n[platform.nvme]\npreset = \"x\"\n",
            2,
            "under `[platform.nvme]`",
        ),
        (
            "[platform.nvme]\npreset = \"x\"\n[workload]\niolog = \"t.log\"\n",
            4,
            "`[workload.replay]` then `file = \"t.log\"`",
        ),
        (
            "[platform.nvme]\npreset = \"x\"\n[workload]\napst_workflow = 1\n[[variant]]\n\
             name = \"l\"\napst = { algorithm = \"legacy\" }\n",
            7,
            "`[variant.policy.apst]`",
        ),
    ];
    for (text, line, new) in cases {
        let e = err(text);
        assert_eq!(e.line, Some(line), "{text}");
        assert!(e.message.contains(new), "{}", e.message);
    }
}

#[test]
fn platform_needs_exactly_one_drive_source() {
    let e = err("[platform.nvme]\nlatency_scale = 1.0\n[workload]\napst_workflow = 1\n");
    assert_eq!(e.line, Some(1));
    let e = err("[platform.nvme]\npreset = \"a\"\nfile = \"b\"\n[workload]\napst_workflow = 1\n");
    assert_eq!(e.line, Some(3));
}

#[test]
fn power_overrides_name_states() {
    let base = "[platform.nvme]\npreset = \"a\"\n[workload]\napst_workflow = 1\n";
    let ok = ScenarioFile::parse(
        "s.toml",
        &base.replace("\"a\"\n", "\"a\"\nidle_power_mw = { PS0 = 350.0 }\n"),
    )
    .unwrap();
    assert_eq!(
        ok.variants()[0]
            .scenario
            .platform
            .nvme
            .as_ref()
            .unwrap()
            .idle_power_mw["PS0"],
        350.0
    );
    let e = err(&base.replace("\"a\"\n", "\"a\"\nidle_power_mw = { P0 = 350.0 }\n"));
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("expected keys PS0"), "{}", e.message);
}

#[test]
fn a_sweep_sets_one_field_by_its_dotted_path() {
    let f = ScenarioFile::parse("s.toml", GOOD).unwrap();
    let g = f
        .with_field("policy.apst.secondary_timeout_ms", Value::Integer(500))
        .unwrap();
    // Both variants see it; the variant's own algorithm still wins over the base.
    assert_eq!(
        g.variants()[0].scenario.policy.apst.secondary_timeout_ms,
        500
    );
    assert_eq!(
        g.variants()[0].scenario.policy.apst.algorithm,
        ApstAlgorithm::Legacy
    );
    assert_eq!(
        g.variants()[1].scenario.policy.apst.secondary_timeout_ms,
        500
    );
    // The same schema checks the swept value.
    let e = f
        .with_field(
            "policy.apst.secondary_timeout_ms",
            Value::String("x".into()),
        )
        .unwrap_err();
    assert!(
        e.message
            .starts_with("policy.apst.secondary_timeout_ms = \"x\": "),
        "{}",
        e.message
    );
    assert_eq!(e.line, None);
}

#[test]
fn an_override_applies_to_every_variant_and_is_checked_in_each() {
    // The "legacy" variant sets the algorithm itself: the override reaches it too, and the
    // variant that does not set it gets it from the base.
    let f = ScenarioFile::parse("s.toml", GOOD).unwrap();
    let g = f
        .with_field("policy.apst.algorithm", Value::String("v4.11".into()))
        .unwrap();
    for v in g.variants() {
        assert_eq!(
            v.scenario.policy.apst.algorithm,
            ApstAlgorithm::V4_11,
            "{}",
            v.name
        );
    }
    // A CPU scenario whose every variant names its governor: an unknown one is refused,
    // naming the field, though the base never used it before.
    let cpu = r#"
[platform.cpu]
preset = "google-gs101"
[[workload.task]]
name = "t"
cpu = 0
sleep = "10ms"
run = "1ms"
[run]
duration = "1s"
[[variant]]
name = "menu"
[variant.policy.cpuidle]
governor = "menu"
[[variant]]
name = "teo"
[variant.policy.cpuidle]
governor = "teo"
"#;
    let f = ScenarioFile::parse("s.toml", cpu).unwrap();
    let g = f
        .with_field("policy.cpuidle.governor", Value::String("teo-util".into()))
        .unwrap();
    for v in g.variants() {
        assert_eq!(v.scenario.policy.cpuidle.governor, "teo-util", "{}", v.name);
    }
    let e = f
        .with_field(
            "policy.cpuidle.governor",
            Value::String("nonexistent".into()),
        )
        .unwrap_err();
    assert!(
        e.message.contains("policy.cpuidle.governor"),
        "{}",
        e.message
    );
}

/// Every example of the user reference parses (parsing never touches the files they name).
#[test]
fn every_example_in_the_reference_parses() {
    let doc = include_str!("../../../../docs/scenario.md");
    let mut examples = 0;
    for block in doc.split("```toml\n").skip(1) {
        let text = block.split("```").next().unwrap();
        if let Err(e) = ScenarioFile::parse("docs/scenario.md", text) {
            panic!("example {} does not parse: {e}\n{text}", examples + 1);
        }
        examples += 1;
    }
    assert_eq!(examples, 12);
}

/// Every example scenario shipped in the repository parses under the current schema (sweep
/// files, `*sweep*.toml`, are the front end's and are checked there).
#[test]
fn every_shipped_scenario_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut parsed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let sweep = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains("sweep"));
        if path.extension().is_some_and(|e| e == "toml") && !sweep {
            let text = std::fs::read_to_string(&path).unwrap();
            let label = path.display().to_string();
            if let Err(e) = ScenarioFile::parse(&label, &text) {
                panic!("{e}");
            }
            parsed += 1;
        }
    }
    assert!(
        parsed >= 3,
        "found only {parsed} scenarios in {}",
        dir.display()
    );
}

#[test]
fn a_policy_for_another_platform_is_refused_at_its_line() {
    let ufs = "[platform.ufs]\npreset = \"samsung-ufs40-class\"\n[policy.apst]\n\
               primary_timeout_ms = 50\n[workload]\n[[workload.job]]\nname = \"r\"\nrw = \"read\"\n";
    let e = err(ufs);
    assert_eq!(e.line, Some(3));
    assert_eq!(
        e.message,
        "[policy.apst] acts on `[platform.nvme]`; this scenario runs `[platform.ufs]`, where it \
         would be ignored: remove it"
    );
    // In a variant: the line of the variant's table.
    let nvme = format!(
        "{}[[variant]]\nname = \"b\"\n[variant.policy.boost]\ndev_freq_timeout_ms = 30\n",
        GOOD.replace(
            "[[variant]]\nname = \"legacy\"",
            "[[variant]]\nname = \"a\""
        )
    );
    let e = err(&nvme);
    assert!(
        e.message
            .starts_with("[policy.boost] acts on `[platform.ufs]`"),
        "{e}"
    );
    assert_eq!(e.line, Some(nvme.lines().count() - 1));
    let timeline = "[platform.ufs]\npreset = \"samsung-ufs40-class\"\n[workload]\n\
                    [[workload.job]]\nname = \"r\"\nrw = \"read\"\n[run]\ntimeline = \"1s\"\n";
    assert_eq!(
        err(timeline).message,
        "`run.timeline` acts on `[platform.nvme]` or `[platform.cpu]`; this scenario runs \
         `[platform.ufs]`, where it would be ignored: remove it"
    );
}

#[test]
fn a_zero_threshold_is_simple_ondemands_default() {
    // governor_simpleondemand.c replaces a 0 in its data by DFSO_UPTHRESHOLD (90) or
    // DFSO_DOWNDIFFERENCTIAL (5); ufs-qcom's own pair is 70/5.
    let base = "[platform.ufs]\npreset = \"samsung-ufs40-class\"\n[policy.devfreq]\n\
                profile = \"ufs-qcom\"\nupthreshold = 0\n";
    let job = "[workload]\n[[workload.job]]\nname = \"r\"\nrw = \"read\"\n";
    let file = ScenarioFile::parse("s.toml", &format!("{base}{job}")).unwrap();
    let p = file.variants()[0]
        .scenario
        .policy
        .devfreq
        .resolved(1, 2, 250)
        .unwrap();
    assert_eq!(
        (p.ondemand.upthreshold, p.ondemand.downdifferential),
        (90, 5)
    );
    // 0 -> 90 is then below a downdifferential of 95: refused at the key given.
    let e = err(&format!("{base}downdifferential = 95\n{job}"));
    assert_eq!(e.line, Some(5));
    assert!(
        e.message
            .ends_with("got upthreshold 90, downdifferential 95"),
        "{e}"
    );
}

/// A UFS 2.1 scenario with `hpb` as its `[policy.hpb]` table's lines (table header on line 3,
/// the first key on line 4).
fn with_hpb(hpb: &str) -> String {
    format!(
        "[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[policy.hpb]\n{hpb}[workload]\n\
         [[workload.job]]\nname = \"r\"\nrw = \"randread\"\n"
    )
}

fn hpb_of(text: &str) -> Option<HpbPolicy> {
    let f = ScenarioFile::parse("s.toml", text).unwrap();
    f.variants()[0].scenario.policy.hpb.clone()
}

#[test]
fn hpb_is_on_with_its_table_and_takes_the_drivers_defaults() {
    use crate::hpb::{HcmParams, IssuedWrites};
    let no_table = "[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[workload]\n\
                    [[workload.job]]\nname = \"r\"\nrw = \"randread\"\n";
    assert!(hpb_of(no_table).is_none());
    let p = hpb_of(&with_hpb("")).unwrap();
    assert!(p.enabled);
    assert_eq!(p.mode, None);
    assert_eq!(p.issued_writes, IssuedWrites::Kept);
    assert_eq!(p.hcm_params(), HcmParams::default());
    // Every key: the written values replace the defaults one by one.
    let p = hpb_of(&with_hpb(
        "enabled = false\nmode = \"host\"\nissued_writes = \"dropped\"\nactivation_thld = 4\n\
         normalization_factor = 2\neviction_thld_enter = 64\neviction_thld_exit = 32\n\
         read_timeout_ms = 500\nread_timeout_expiries = 10\ntimeout_polling_interval_ms = 100\n\
         inflight_map_req = 2\n",
    ))
    .unwrap();
    assert!(!p.enabled);
    assert_eq!(p.mode, Some(crate::input::ufs_preset::HpbControl::Host));
    assert_eq!(p.issued_writes, IssuedWrites::Dropped);
    assert_eq!(
        p.hcm_params(),
        HcmParams {
            activation_thld: 4,
            normalization_factor: 2,
            eviction_thld_enter: 64,
            eviction_thld_exit: 32,
            read_timeout_ms: 500,
            read_timeout_expiries: 10,
            timeout_polling_interval_ms: 100,
            inflight_map_req: 2,
        }
    );
}

#[test]
fn bad_hpb_keys_are_refused_at_their_line() {
    let e = err(&with_hpb("mode = \"hybrid\"\n"));
    assert_eq!(e.line, Some(4));
    assert_eq!(
        e.message,
        "`policy.hpb.mode`: unknown variant `hybrid`, expected `device` or `host`"
    );
    let e = err(&with_hpb("enabled = true\nissued_writes = \"lost\"\n"));
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.message,
        "`policy.hpb.issued_writes`: unknown variant `lost`, expected `kept` or `dropped`"
    );
    let e = err(&with_hpb("activation = 4\n"));
    assert_eq!(e.line, Some(4));
    assert!(
        e.message.starts_with(
            "`policy.hpb.activation`: unknown field `activation`, expected one of `enabled`"
        ),
        "{e}"
    );
    // Host-control parameters under device control would be ignored.
    let e = err(&with_hpb("mode = \"device\"\nread_timeout_ms = 500\n"));
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.message,
        "[policy.hpb] read_timeout_ms: a host control mode parameter, ignored in device control \
         mode: remove it or set `mode = \"host\"`"
    );
    // The sysfs stores' relations, at the key written: exit 8 is not above the threshold 8.
    let e = err(&with_hpb("eviction_thld_exit = 8\n"));
    assert_eq!(e.line, Some(4));
    assert_eq!(
        e.message,
        "[policy.hpb] eviction_thld_exit = 8: expected eviction_thld_exit > activation_thld (8)"
    );
    // 300 ms is under twice the default 200 ms poll: at read_timeout_ms, the key written.
    let e = err(&with_hpb("mode = \"host\"\nread_timeout_ms = 300\n"));
    assert_eq!(e.line, Some(5));
    assert!(
        e.message
            .starts_with("[policy.hpb] read_timeout_ms = 300: expected "),
        "{e}"
    );
    let e = err(&with_hpb("activation_thld = 0\n"));
    assert_eq!(
        (e.line, e.message.as_str()),
        (
            Some(4),
            "[policy.hpb] activation_thld = 0: expected activation_thld > 0"
        )
    );
    // On another platform, refused as every misplaced policy is.
    let nvme = "[platform.nvme]\npreset = \"x\"\n[policy.hpb]\n[workload]\napst_workflow = 1\n";
    let e = err(nvme);
    assert_eq!(e.line, Some(3));
    assert!(
        e.message
            .starts_with("[policy.hpb] acts on `[platform.ufs]`"),
        "{e}"
    );
}

#[test]
fn hpb_resolves_against_the_presets_descriptors() {
    use crate::hpb::ControlMode;
    let preset = crate::input::ufs_preset::find("ufs21-64gb-class")
        .unwrap()
        .unwrap();
    let d = preset.hpb_descriptors();
    // The preset's device control; its geometry (16 MiB regions of 4 MiB sub-regions).
    let r = hpb_of(&with_hpb(""))
        .unwrap()
        .resolve(d, 32)
        .unwrap()
        .unwrap();
    assert_eq!(r.geometry.mode, ControlMode::Device);
    assert_eq!(
        (r.geometry.entries_per_rgn, r.geometry.entries_per_srgn),
        (4096, 1024)
    );
    // `mode` overrides the preset's control byte.
    let r = hpb_of(&with_hpb("mode = \"host\"\n"))
        .unwrap()
        .resolve(d, 32)
        .unwrap()
        .unwrap();
    assert_eq!(
        (r.descriptors.hpb_control, r.geometry.mode),
        (0, ControlMode::Host)
    );
    // The device's bounds: 1024 entries a sub-region allow a shift of at most log2 1024 = 10;
    // a queue of 32 allows 31 map requests in flight.
    let bad = |hpb: &str| hpb_of(&with_hpb(hpb)).unwrap().resolve(d, 32).unwrap_err();
    assert_eq!(
        bad("mode = \"host\"\nnormalization_factor = 11\n"),
        (
            "policy.hpb.normalization_factor".to_string(),
            "[policy.hpb] normalization_factor = 11: expected normalization_factor in 1..=10"
                .to_string()
        )
    );
    assert_eq!(
        bad("mode = \"host\"\ninflight_map_req = 32\n").1,
        "[policy.hpb] inflight_map_req = 32: expected inflight_map_req in 1..=31"
    );
    // The preset's device control with a host parameter written: refused at the key.
    assert_eq!(bad("activation_thld = 4\n").0, "policy.hpb.activation_thld");
    // A preset without [hpb], and HPB turned off (nothing to check).
    assert_eq!(
        hpb_of(&with_hpb(""))
            .unwrap()
            .resolve(None, 32)
            .unwrap_err()
            .0,
        "policy.hpb"
    );
    assert_eq!(
        hpb_of(&with_hpb("enabled = false\n"))
            .unwrap()
            .resolve(None, 32),
        Ok(None)
    );
}

/// A UFS scenario whose workload is `[workload.iozone]` with `keys` (header on line 3).
fn with_iozone(keys: &str) -> String {
    format!("[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[workload.iozone]\n{keys}")
}

#[test]
fn iozone_takes_the_seeds_defaults_and_fios_sizes() {
    let f = ScenarioFile::parse("s.toml", &with_iozone("range = \"32g\"\n")).unwrap();
    let io = f.variants()[0].scenario.workload.iozone.clone().unwrap();
    assert_eq!(io, IozoneSpec::seed(32 << 30));
    let f = ScenarioFile::parse(
        "s.toml",
        &with_iozone("range = \"1m\"\nthreads = 4\nrecord = \"8k\"\noffset = \"1g\"\n"),
    )
    .unwrap();
    let io = f.variants()[0].scenario.workload.iozone.clone().unwrap();
    assert_eq!(
        (io.range, io.threads, io.record, io.offset),
        (1 << 20, 4, 8192, 1 << 30)
    );
}

#[test]
fn bad_iozone_shapes_are_refused_at_their_line() {
    // 1 GiB + 4 KiB is not 16 files of whole 4 KiB records (16 x 4096 = 65536 bytes).
    let e = err(&with_iozone("threads = 16\nrange = 1073745920\n"));
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.message,
        "[workload.iozone] `range`: expected 16 files of whole 4096-byte records: a multiple of \
         threads x record = 65536 bytes, got 1073745920"
    );
    let e = err(&with_iozone("range = \"1g\"\nthreads = 0\n"));
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.message,
        "[workload.iozone] `threads`: expected at least 1 thread"
    );
    let e = err(&with_iozone("range = \"1g\"\nthreads = 512\n"));
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.message,
        "[workload.iozone] `threads`: at most 256 jobs in one variant, counting each thread; got \
         512 beside 0 [[workload.job]]s"
    );
    let e = err(&with_iozone("threads = 4\n"));
    assert_eq!(e.line, Some(3));
    assert_eq!(e.message, "[workload.iozone]: missing field `range`");
    let e = err(&with_iozone("range = \"1g\"\nfiles = 4\n"));
    assert_eq!(e.line, Some(5));
    assert!(
        e.message
            .starts_with("`workload.iozone.files`: unknown field `files`"),
        "{e}"
    );
    // On CPUs there is no storage to read.
    let cpu = "[platform.cpu]\npreset = \"qcom-msm8916\"\n[workload.iozone]\nrange = \"1g\"\n\
               [[workload.task]]\nname = \"t\"\ncpu = 0\nperiod = \"10ms\"\nrun = \"5us\"\n";
    let e = err(cpu);
    assert_eq!(e.line, Some(3));
    assert!(
        e.message
            .starts_with("[workload.iozone]: iozone reads a storage device"),
        "{e}"
    );
}

const QOS: &str = r#"
[platform.cpu]
preset = "qcom-msm8916"

[[workload.task]]
name = "cyclictest"
cpu = 0
period = "10ms"
run = "5us"
cpu_dma_latency_us = 10000

[[qos.request]]
at = "2s"
holder = "tuned"
target = "/dev/cpu_dma_latency"
value = "a"

[[qos.request]]
at = "3s"
holder = "me"
target = "cpu1/power/pm_qos_resume_latency_us"
value = "n/a"

[[qos.request]]
at = "4s"
holder = "cyclictest"
target = "cpu_dma_latency"
action = "remove"
"#;

#[test]
fn qos_requests_resolve_to_timed_actions_with_their_holders() {
    use crate::qos::cpu_latency::{QosOp, QosTarget, SYSFS_HOLDER};
    let f = ScenarioFile::parse("s.toml", QOS).unwrap();
    let s = &f.variants()[0].scenario;
    let got = qos::resolve(&s.qos, &s.workload.tasks).unwrap();
    let brief: Vec<_> = got
        .iter()
        .map(|n| (n.action.at, n.action.holder, n.action.target, n.action.op))
        .collect();
    assert_eq!(
        brief,
        vec![
            // cyclictest holds the file from 0 with 10 000 us (4 bytes).
            (Nanos::ZERO, 0, QosTarget::CpuDmaLatency, QosOp::Set(10_000)),
            // "a" is hex: 10 us.
            (
                Nanos::from_secs(2),
                1,
                QosTarget::CpuDmaLatency,
                QosOp::Set(10)
            ),
            // n/a: no latency allowed; the file's one request.
            (
                Nanos::from_secs(3),
                SYSFS_HOLDER,
                QosTarget::ResumeLatency { cpu: 1 },
                QosOp::Set(0)
            ),
            // The same name is the same file handle: cyclictest's closes.
            (
                Nanos::from_secs(4),
                0,
                QosTarget::CpuDmaLatency,
                QosOp::Remove
            ),
        ]
    );
}

#[test]
fn bad_qos_requests_are_refused_at_their_line() {
    let cases = [
        // (replace, with, the line counted in QOS, in the message)
        (
            "value = \"n/a\"",
            "value = \"-5\"",
            22,
            "refuses a negative value",
        ),
        ("value = \"n/a\"", "value = 1.5", 22, "got a float"),
        ("value = \"a\"", "value = \"zz\"", 16, "a hex"),
        ("value = \"a\"", "value = -7", 16, "ignores other negative"),
        (
            "target = \"cpu_dma_latency\"\naction = \"remove\"",
            "target = \"cpu1/power/pm_qos_resume_latency_us\"\naction = \"remove\"",
            28,
            "until it is written again",
        ),
        (
            "action = \"remove\"",
            "action = \"drop\"",
            28,
            "or \"remove\" (close the file)",
        ),
        ("at = \"2s\"", "at = \"2\"", 13, "`at`"),
        (
            "target = \"/dev/cpu_dma_latency\"",
            "target = \"nvme0/power/pm_qos_latency_tolerance_us\"",
            15,
            "NVMe controller",
        ),
        (
            "target = \"/dev/cpu_dma_latency\"",
            "target = \"cpu_dma\"",
            15,
            "expected",
        ),
        (
            "cpu_dma_latency_us = 10000",
            "cpu_dma_latency_us = -1",
            10,
            "0 to 2147483647",
        ),
    ];
    for (from, to, line, says) in cases {
        assert!(QOS.contains(from), "{from}");
        let e = err(&QOS.replacen(from, to, 1));
        let shown = e.to_string();
        assert_eq!(e.line, Some(line), "{to}: {shown}");
        assert!(shown.contains(says), "{to}: {shown}");
    }
}

#[test]
fn variants_that_would_resolve_to_too_many_keys_are_refused_before_any_is_checked() {
    // GOOD's base holds 11 keys and tables (platform, nvme, preset, policy, apst,
    // primary_timeout_ms, workload, apst_workflow, run, duration, seed); `x` and its 245
    // elements make 257. 4096 variants of a name alone (taken out) each resolve those 257:
    // 1,052,672 > 2^20 = 1,048,576.
    let base = GOOD.split("[[variant]]").next().unwrap();
    let x = format!("x = [{}]\n", "0,".repeat(245));
    let variants: String = (0..4096)
        .map(|i| format!("[[variant]]\nname = \"{i}\"\n"))
        .collect();
    let e = err(&format!("{x}{base}{variants}"));
    // Line 1 is `x`; GOOD's first 14 lines (it starts with an empty one) are lines 2 to 15.
    assert_eq!(e.line, Some(16), "{e}");
    assert_eq!(
        e.message,
        "[[variant]]: 4096 variants over a base of 257 keys and array elements make 1052672 \
         to check, more than the limit of 1048576; split the file"
    );
}

#[test]
fn a_watched_parse_stops_when_asked_before_the_next_variant() {
    let mut asked = 0;
    let stopped = ScenarioFile::parse_watched("s.toml", GOOD, &mut || {
        asked += 1;
        asked < 2
    });
    // Asked before the first variant (yes) and before the second (no).
    assert!(matches!(stopped, Err(Stopped::Interrupted)));
    assert_eq!(asked, 2);
}
