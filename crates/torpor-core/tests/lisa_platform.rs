//! `--platform` given a LISA plat_info.yml: the test's own fixture (always), and LISA's real
//! Juno r0 file from ../shared/real-data/ftrace (skipped, saying so, where that folder is
//! absent; never copied into the repository). Expected values are read off the files by hand.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use torpor_core::drivers::idle_stats::{from_reader, StatsPlatform};
use torpor_core::input::lisa_platform::LisaPlatform;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lisa/two-domains.plat_info.yml")
}

#[test]
fn lisas_juno_r0_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/real-data/ftrace/lisa-sched_load-juno.plat_info.yml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped: {} is absent (real data lives beside the repo)",
            path.display()
        );
        return;
    };
    let p = LisaPlatform::parse("juno.yml", &text).unwrap();
    assert_eq!(p.name.as_deref(), Some("juno"));
    assert_eq!(p.cpus, 6);
    assert_eq!(p.capacities, vec![446, 1024, 1024, 446, 446, 446]);
    assert_eq!(p.freq_domains, vec![vec![0, 3, 4, 5], vec![1, 2]]);
    assert_eq!(
        p.freqs_khz[0],
        vec![450_000, 575_000, 700_000, 775_000, 850_000]
    );
    assert_eq!(
        p.freqs_khz[2],
        vec![450_000, 625_000, 800_000, 950_000, 1_100_000]
    );
    let em = p.energy_model.as_ref().expect("the file has an nrg-model");
    assert_eq!(em[0].active[0], (450_000, 236.11764705882354, 42.0));
    assert_eq!(em[5].active[4], (850_000, 446.0, 119.0));
    assert_eq!(em[2].active[4], (1_100_000, 1024.0, 583.0));
    for c in em {
        let names: Vec<&str> = c.idle.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["WFI", "cpu-sleep-0", "cluster-sleep-0"]);
        assert!(c.idle.iter().all(|(_, p)| *p == 0.0));
    }
}

#[test]
fn idle_stats_takes_the_topology_and_says_what_is_missing() {
    let platform = StatsPlatform::load(&fixture()).unwrap();
    // CPUs 2 and 3 (the second domain: cluster B) idle in state 1 for 3 us each, both at
    // once for 2 us.
    let trace = "cpus=4\n\
        <idle>-0 [002] 1.000000: cpu_idle: state=1 cpu_id=2\n\
        <idle>-0 [003] 1.000001: cpu_idle: state=1 cpu_id=3\n\
        <idle>-0 [002] 1.000003: cpu_idle: state=4294967295 cpu_id=2\n\
        <idle>-0 [003] 1.000004: cpu_idle: state=4294967295 cpu_id=3\n";
    let stats = from_reader(Cursor::new(trace), "t.txt", Some(&platform), Some("p.yml")).unwrap();
    assert_eq!(stats.topology_from, Some("platform"));
    assert_eq!(stats.states_from, None);
    assert!(
        stats
            .notes
            .iter()
            .any(|n| n.contains("2 frequency domains as clusters")),
        "{:?}",
        stats.notes
    );
    assert!(stats
        .notes
        .iter()
        .any(|n| n.contains("names the idle states WFI, cpu-sleep-0 but gives no target")));
    assert_eq!(stats.sections["cpu2"][0]["total_us"], 3.0);
    assert_eq!(
        stats.sections["clusterB"][0]["total_us"],
        2.0,
        "{:?}",
        stats.sections.keys()
    );
}

#[test]
fn idle_replay_refuses_it_and_says_why() {
    let spec = fixture().to_string_lossy().into_owned();
    let e = torpor_core::drivers::idle_replay::load_platform(&spec).unwrap_err();
    assert_eq!(e.line, None);
    assert!(
        e.message.starts_with(
            "a LISA plat_info.yml gives the idle states (WFI, cpu-sleep-0) without exit \
             latencies or target residencies"
        ),
        "{e}"
    );
}
