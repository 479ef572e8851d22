//! A user's own dump of a drive must give the power a preset of the same drive gives: the
//! same PS0 estimate rule (or the matched preset's figures), the same workload, the same
//! average power. Synthetic dumps always; the real dumps of ../shared/real-data where that
//! folder exists.

use std::path::{Path, PathBuf};

use torpor_core::drivers::run::{run_text, Limits};
use torpor_core::input::nvme_source::{self, DriveSpec};

/// How far the dump's average power may be from the preset's: the same figures on the same
/// IO give the same energy, so only float noise is allowed.
const TOLERANCE: f64 = 0.001;

/// `smartctl -a` text as smartmontools prints an NVMe drive's identity and power states:
/// (max W, operational, active W, ENLAT us, EXLAT us) per state.
fn smartctl(model: &str, firmware: &str, states: &[(&str, bool, &str, u32, u32)]) -> String {
    let mut text = format!(
        "smartctl 7.3 2022-02-28 r5338 [x86_64-linux] (synthetic test input)\n\n\
         === START OF INFORMATION SECTION ===\n\
         Model Number:                       {model}\n\
         Firmware Version:                   {firmware}\n\n\
         Supported Power States\n\
         St Op     Max   Active     Idle   RL RT WL WT  Ent_Lat  Ex_Lat\n"
    );
    for (i, (max, op, active, enlat, exlat)) in states.iter().enumerate() {
        let rank = if *op { 0 } else { i };
        text += &format!(
            "{i:2} {} {max:>9} {active:>8} {:>8} {rank:3} {rank:2} {rank:2} {rank:2} {enlat:8} {exlat:7}\n",
            if *op { '+' } else { '-' },
            "-",
        );
    }
    text + "\n"
}

/// The SN530's table as its preset holds it (presets/nvme/wdc-pc-sn530-256gb.toml).
const SN530: [(&str, bool, &str, u32, u32); 5] = [
    ("3.50W", true, "1.80W", 0, 0),
    ("2.40W", true, "1.60W", 0, 0),
    ("1.90W", true, "1.50W", 0, 0),
    ("0.0250W", false, "-", 3900, 11000),
    ("0.0050W", false, "-", 5000, 39000),
];

/// Average power of workflow 7 for 20 s on `platform` (a `[platform.nvme]` body), and the
/// run's notes.
fn run_workflow7(platform: &str, base: &Path) -> (f64, Vec<String>) {
    let text = format!(
        "[platform.nvme]\n{platform}\n[workload]\napst_workflow = 7\n[run]\nduration = \"20s\"\n"
    );
    let report = run_text(&text, "s.toml", base, &[], &Limits::default(), &mut ())
        .unwrap_or_else(|e| panic!("{e:?}"));
    let nvme = report.variants[0].nvme.as_ref().unwrap();
    (nvme.stats.avg_power_mw, nvme.notes.clone())
}

fn assert_same_power(preset: &str, dump: &Path, what: &str) {
    let (want, _) = run_workflow7(&format!("preset = \"{preset}\""), Path::new("."));
    let (got, notes) = run_workflow7(
        &format!("file = {:?}", dump.display().to_string()),
        Path::new("."),
    );
    assert!(
        (got - want).abs() <= TOLERANCE * want,
        "{what}: {got} mW from the dump, {want} mW from preset {preset}; notes {notes:#?}"
    );
}

fn temp_dump(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("torpor-dump-power-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_dump_of_a_preset_drive_borrows_the_presets_figures_and_says_so() {
    let text = smartctl("PC SN530 NVMe WDC 256GB", "21113012", &SN530);
    let drive = nvme_source::from_dump("sn530.txt", &text).unwrap();
    assert_eq!(drive.preset.as_deref(), Some("wdc-pc-sn530-256gb"));
    assert!(
        drive.notes.iter().any(|n| n.contains(
            "matched built-in preset wdc-pc-sn530-256gb: same model, same firmware 21113012"
        )),
        "{:#?}",
        drive.notes
    );
    // A vendor word before the model, another firmware: still the preset's drive, said so.
    let text = smartctl("WDC PC SN530 NVMe WDC 256GB", "21113000", &SN530);
    let drive = nvme_source::from_dump("sn530.txt", &text).unwrap();
    assert!(
        drive
            .notes
            .iter()
            .any(|n| n.contains("firmware 21113000 (the preset's: 21113012)")),
        "{:#?}",
        drive.notes
    );
    // Same model, another table: nothing borrowed, the rule serves, and the note says why.
    let mut other = SN530;
    other[4].4 = 44000;
    let drive = nvme_source::from_dump(
        "sn530.txt",
        &smartctl("PC SN530 NVMe WDC 256GB", "x", &other),
    )
    .unwrap();
    assert_eq!(drive.preset, None);
    assert!(drive
        .notes
        .iter()
        .any(|n| n.contains("power-state table differs")));
    assert_eq!(drive.ps0_idle.unwrap().central_mw, 700.0);
}

#[test]
fn a_dump_gets_the_same_power_as_the_preset_of_its_drive() {
    // Before: the dump ran PS0 idle at its ACTP (1.8 W) and reported about twice the preset's
    // power, with no note.
    let path = temp_dump(
        "sn530.txt",
        &smartctl("PC SN530 NVMe WDC 256GB", "21113012", &SN530),
    );
    assert_same_power("wdc-pc-sn530-256gb", &path, "SN530 dump");
}

#[test]
fn a_dump_of_an_unknown_drive_gets_the_rule_with_its_range_and_note() {
    // A model no preset has, with the SN530's table: PS0 reports ACTP 1.8 W but no idle power,
    // so the rule gives 0.2 x min(3.5 W, 5 W) = 700 mW, range 0.1-0.3 x = 350-1050 mW.
    let text = smartctl("Example NVMe 9000 256GB", "1", &SN530);
    let drive: DriveSpec = nvme_source::from_dump("example.txt", &text).unwrap();
    assert_eq!(drive.preset, None);
    let idle = drive.ps0_idle.as_ref().unwrap();
    assert_eq!(
        (idle.low_mw, idle.central_mw, idle.high_mw),
        (350.0, 700.0, 1050.0)
    );
    assert!(
        idle.source.starts_with("ESTIMATE by rule"),
        "{}",
        idle.source
    );
    // ACTP is reported: no active estimate.
    assert!(drive.ps0_active.is_none());
    let path = temp_dump("example.txt", &text);
    let (power, notes) = run_workflow7(
        &format!("file = {:?}", path.display().to_string()),
        Path::new("."),
    );
    assert!(
        notes.iter().any(|n| n.starts_with(
            "PS0 idle power 700 mW, range 350-1050 mW (the drive reports none; ESTIMATE by rule"
        ) && n.contains("--json")),
        "{notes:#?}"
    );
    // The same table and the same rule as the SN530's preset (whose service times are the
    // client defaults a dump gets): the same power.
    let (want, _) = run_workflow7("preset = \"wdc-pc-sn530-256gb\"", Path::new("."));
    assert!(
        (power - want).abs() <= TOLERANCE * want,
        "{power} vs {want} mW"
    );
}

/// The real dumps of py-SMART's collection, and the preset each is of, from the collection's
/// README ("Overlap with the built-in presets"): the 970 EVO Plus 500GB has the 1TB preset's
/// model, firmware and table; the SN550 1TB and 980 PRO share no table with a preset.
const REAL_DUMPS_OF_PRESETS: [(&str, &str); 1] = [(
    "samsung-970-evo-plus-500gb.smartctl.txt",
    "samsung-970-evo-plus-1tb",
)];

#[test]
fn real_dumps_match_their_presets_and_give_their_power() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/real-data/nvme/pysmart");
    if !dir.is_dir() {
        eprintln!(
            "skipped: {} is absent (real data lives beside the repo, not in it)",
            dir.display()
        );
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".smartctl.txt"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 14, "the collection's README lists 14 dumps");
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let drive = nvme_source::load(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = REAL_DUMPS_OF_PRESETS
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(_, preset)| *preset);
        assert_eq!(drive.preset.as_deref(), want, "{name}: {:#?}", drive.notes);
        match want {
            Some(preset) => assert_same_power(preset, path, name),
            None => {
                // No preset: PS0's idle power by the rule, computed here by hand from PS0's
                // maximum power (none of these dumps reports IDLP).
                let ps0 = &drive.controller.power_states[0];
                assert_eq!(ps0.idle_power_mw, None, "{name}");
                let reference = ps0.max_power_mw.min(5000.0);
                let rule = |k: f64| (k * reference).clamp(250.0, 1500.0).min(ps0.max_power_mw);
                match &drive.ps0_idle {
                    None => assert_eq!(ps0.max_power_mw, 0.0, "{name}: no estimate"),
                    Some(e) => {
                        for (got, k) in [(e.low_mw, 0.1), (e.central_mw, 0.2), (e.high_mw, 0.3)] {
                            assert!(
                                (got - rule(k)).abs() < 0.001,
                                "{name}: {got} vs {}",
                                rule(k)
                            );
                        }
                    }
                }
            }
        }
    }
}
