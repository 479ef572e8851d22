use super::*;

const FIXTURE: &str = include_str!("../../../tests/data/lisa/two-domains.plat_info.yml");

#[test]
fn the_fixture_as_written_by_hand() {
    assert!(sniff(FIXTURE));
    let p = LisaPlatform::parse("p.yml", FIXTURE).unwrap();
    assert_eq!(p.name.as_deref(), Some("made-up board"));
    assert_eq!(p.cpus, 4);
    assert_eq!(p.capacities, vec![512, 512, 1024, 1024]);
    assert_eq!(p.freq_domains, vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(p.freqs_khz[2], vec![800_000, 2_000_000]);
    let em = p.energy_model.as_ref().unwrap();
    // CPU 1's node is the alias *id003, defined inside CPU 0's parent.
    assert_eq!(
        em[1].active,
        vec![(500_000, 256.0, 30.0), (1_000_000, 512.0, 90.0)]
    );
    assert_eq!(
        em[3].idle,
        vec![("WFI".to_string(), 20.0), ("cpu-sleep-0".to_string(), 4.0)]
    );
    assert_eq!(p.idle_state_names(0), vec!["WFI", "cpu-sleep-0"]);
    assert!(p
        .replay_refusal()
        .contains("(WFI, cpu-sleep-0) without exit latencies"));
}

#[test]
fn torpor_toml_is_not_lisa() {
    assert!(!sniff("id = \"x\"\n[[cluster]]\n"));
    assert!(!sniff("# platform-info:\nid = 1\n"));
}

#[test]
fn what_is_missing_or_wrong_is_named() {
    let no_domains = FIXTURE.replace("        freq-domains:\n        -   - 0\n            - 1\n        -   - 2\n            - 3\n", "");
    let e = LisaPlatform::parse("p.yml", &no_domains).unwrap_err();
    assert!(e.message.contains("expected `freq-domains`"), "{e}");
    let twice = FIXTURE.replace(
        "            - 1\n        -   - 2",
        "            - 2\n        -   - 2",
    );
    let e = LisaPlatform::parse("p.yml", &twice).unwrap_err();
    assert!(e.message.contains("lists CPU 2 twice"), "{e}");
    let big = FIXTURE.replace("                3: 1024\n", "                3: 2048\n");
    let e = LisaPlatform::parse("p.yml", &big).unwrap_err();
    assert!(e.message.contains("capacity from 0 to 1024"), "{e}");
    let e = LisaPlatform::parse("p.yml", "platform-info:\n    conf: [1]\n").unwrap_err();
    assert_eq!(e.line, Some(2));
}
