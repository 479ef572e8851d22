//! A hand-made trace whose every number is worked out by hand in the comments.

use super::*;

const PLATFORM: &str = r#"
[[cluster]]
cores = [[0, 1]]
[[cluster]]
cpus = [2]

[[state]]
name = "WFI"
target_residency_us = 10
[[state]]
name = "C2"
exit_latency_us = 40
target_residency_us = 100
[[state]]
name = "C3"
target_residency_us = 1000
"#;

/// `(us after 1000 s, cpu, state)`; state -1 is the exit.
fn trace(header: &str, events: &[(u64, u32, i64)]) -> String {
    let mut s = header.to_string();
    for &(us, cpu, state) in events {
        let state = if state < 0 { 4294967295 } else { state };
        s += &format!(
            "          <idle>-0     [{cpu:03}] d..1  1000.{us:06}: cpu_idle: state={state} cpu_id={cpu}\n"
        );
    }
    s
}

/// A row: state, then min, max, avg, total (us), then hits, over, under.
fn row(state: &str, us: [f64; 4], counts: [u64; 3]) -> serde_json::Value {
    let [min, max, avg, total] = us;
    let [hits, over, under] = counts;
    serde_json::json!({"state": state, "min_us": min, "max_us": max, "avg_us": avg,
        "total_us": total, "hits": hits, "over": over, "under": under})
}

#[test]
fn hand_made_trace_gives_hand_computed_rows() {
    // Times in us after 1000 s. cpu0 and cpu1 are SMT siblings (core0, clusterA); cpu2 is
    // clusterB alone.
    let events = [
        (0, 0, 0),   // cpu0 enters WFI; cpu1 still runs: core0 runs
        (5, 2, -1),  // cpu2 exits before any entry: ignored
        (10, 1, 1),  // cpu1 C2: core0 and clusterA enter min(0,1) = WFI at 10
        (50, 0, -1), // cpu0 WFI 50us (not over: 50 >= 10; not under: C2 never entered by cpu0)
        //                  core0 WFI 40us (10..50; not under: core0 never in C2 yet)
        (60, 0, 1),   // cpu0 C2: core0 enters min(1,1) = C2 at 60
        (70, 0, 1),   // re-entering the current state: ignored
        (100, 2, 2),  // cpu2 C3 ...
        (100, 2, -1), // ... for 0us: dropped for cpu2, its core and clusterB (3 intervals)
        (300, 1, -1), // cpu1 C2 290us (10..300), not under: cpu1 never in C3 yet
        //                  core0 C2 240us (60..300)
        (310, 1, 2),   // cpu1 C3: core0 enters min(1,2) = C2 at 310
        (400, 0, -1),  // cpu0 C2 340us (60..400); core0 C2 90us (310..400): over (90 < 100)
        (500, 2, 0),   // cpu2 WFI, still open at the end
        (2000, 1, -1), // cpu1 C3 1690us (310..2000)
        (2100, 1, 0),  // cpu1 WFI ...
        (2105, 1, -1), // ... 5us: over (5 < 10)
        (2200, 1, 1),  // cpu1 C2 ...
        (2350, 1, -1), // ... 150us: not over (>= 100), not under (< 1000)
        (2400, 1, 0),  // cpu1 WFI ...
        (2600, 1, -1), // ... 200us: under (C2's 100us fits, and cpu1 has been in C2)
    ];
    let text = trace("cpus=3\n", &events);
    let p = StatsPlatform::parse(PLATFORM, "p.toml").unwrap();
    let got = from_reader(text.as_bytes(), "t.trace", Some(&p), Some("p.toml")).unwrap();
    let core0 = serde_json::json!([
        row("WFI", [40.0, 40.0, 40.0, 40.0], [1, 0, 0]),
        row("C2", [90.0, 240.0, 165.0, 330.0], [2, 1, 0]),
    ]);
    let expected = serde_json::json!({
        "clusterA": core0,
        "core0": core0,
        "cpu0": [
            row("WFI", [50.0, 50.0, 50.0, 50.0], [1, 0, 0]),
            row("C2", [340.0, 340.0, 340.0, 340.0], [1, 0, 0]),
        ],
        "cpu1": [
            row("WFI", [5.0, 200.0, 102.5, 205.0], [2, 1, 1]),
            row("C2", [150.0, 290.0, 220.0, 440.0], [2, 0, 0]),
            row("C3", [1690.0, 1690.0, 1690.0, 1690.0], [1, 0, 0]),
        ],
    });
    assert_eq!(serde_json::Value::Object(got.sections.clone()), expected);
    // Section order is idlestat's: cluster, its SMT core, the core's CPUs.
    assert_eq!(
        got.sections.keys().collect::<Vec<_>>(),
        ["clusterA", "core0", "cpu0", "cpu1"]
    );
    assert_eq!(
        got.dropped,
        IdleDropped {
            exits_before_entry: 1,
            non_positive_intervals: 3,
            open_at_end: 1
        }
    );
    assert_eq!(got.cpu_idle_events, 19);
    assert_eq!(
        (got.first_ns, got.last_ns),
        (Some(1_000_000_000_000), Some(1_000_002_600_000))
    );
    assert_eq!(got.states_from, Some("platform"));
    assert_eq!(got.states[1].exit_latency_us, Some(40));
}

#[test]
fn without_a_table_states_are_numbered_and_over_under_left_out() {
    // Two CPUs from `#P:2`: one assumed cluster, which is idle from 30 (both idle) to 40.
    let events = [(0, 0, 1), (30, 1, 0), (40, 0, -1), (45, 1, -1)];
    let text = trace(
        "# tracer: nop\n# entries-in-buffer/entries-written: 4/4   #P:2\n",
        &events,
    );
    let got = from_reader(text.as_bytes(), "t.trace", None, None).unwrap();
    let none = serde_json::Value::Null;
    let r = |s: &str, us: f64| {
        serde_json::json!({"state": s, "min_us": us, "max_us": us, "avg_us": us,
            "total_us": us, "hits": 1, "over": none, "under": none})
    };
    assert_eq!(
        serde_json::Value::Object(got.sections),
        serde_json::json!({"clusterA": [r("state0", 10.0)], "cpu0": [r("state1", 40.0)],
            "cpu1": [r("state0", 15.0)]})
    );
    assert_eq!(got.topology_from, Some("assumed"));
    assert_eq!(got.states_from, None);
    assert_eq!(got.notes.len(), 2);
    // No CPU count at all (trace_pipe text): CPU sections only.
    let text = trace("", &events);
    let got = from_reader(text.as_bytes(), "t.trace", None, None).unwrap();
    assert_eq!(got.sections.keys().collect::<Vec<_>>(), ["cpu0", "cpu1"]);
    assert_eq!(got.topology_from, None);
}

#[test]
fn platform_files_are_checked() {
    let bad = |text: &str| {
        StatsPlatform::parse(text, "p.toml")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        bad("[[cluster]]\ncpus = [0, 2]\n[[state]]\nname = \"WFI\"\ntarget_residency_us = 1\n"),
        "p.toml:1: CPU 1 is in no cluster; expected every CPU from 0 to the highest"
    );
    assert_eq!(
        bad("[[cluster]]\ncpus = [0]\ncores = [[1]]\n[[state]]\nname = \"WFI\"\ntarget_residency_us = 1\n"),
        "p.toml:1: cluster 1 needs exactly one of `cpus = [...]` or `cores = [[...], ...]`"
    );
    assert!(
        bad("[[cluster]]\ncpus = [0]\n[[state]]\nname = \"WFI\"\nresidency = 1\n")
            .starts_with("p.toml:5: unknown field `residency`")
    );
    // A wrong shape names what was expected in the file's words, not a type of the program.
    assert_eq!(
        bad("cluster = [5]\n"),
        "p.toml:1: invalid type: integer `5`, expected a [[cluster]] table (key `cluster`)"
    );
    assert!(
        bad("[[cluster]]\ncpus = [0]\nstate = [\"WFI\"]\n").starts_with(
            "p.toml:3: invalid type: string \"WFI\", expected a state table (`name`, \
         `target_residency_us`, `exit_latency_us`)"
        )
    );
    // Both times are the kernel's `unsigned int` microseconds: 2^32 us is one past the bound,
    // refused at the line that writes it (PLATFORM opens with an empty line: C2's latency is on
    // its line 12, C3's residency on line 16).
    for (from, to, line) in [
        ("exit_latency_us = 40", "exit_latency_us = 4294967296", 12),
        (
            "target_residency_us = 1000",
            "target_residency_us = 4294967296",
            16,
        ),
    ] {
        let e = StatsPlatform::parse(&PLATFORM.replace(from, to), "p.toml").unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
        assert!(
            e.message.contains("(0..=4294967295), got 4294967296"),
            "{e}"
        );
    }
    let p = StatsPlatform::parse(PLATFORM, "p.toml").unwrap();
    let text = trace("cpus=4\n", &[(0, 0, 0)]);
    assert_eq!(
        from_reader(text.as_bytes(), "t.trace", Some(&p), Some("p.toml"))
            .unwrap_err()
            .to_string(),
        "p.toml: the platform lists 3 CPUs but the trace header says 4"
    );
}

#[test]
fn a_cpu_platform_gives_each_cluster_its_own_table() {
    // Two clusters with different deep states: cpu0's SLEEP needs 2000 us, cpu1's DEEP 100 us.
    // Both CPUs sleep 1000 us in state 1: over on cpu0 (1000 < 2000), not on cpu1.
    let cpu = crate::cpu::CpuPlatform::parse(
        "p.toml",
        r#"
id = "two-tables"
name = "two clusters, two tables"
source = "test"
[[cluster]]
name = "little"
cpus = [0]
capacity = 512
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[cluster.state]]
name = "SLEEP"
exit_latency_us = 300
target_residency_us = 2000
[[cluster]]
name = "big"
cpus = [1]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[cluster.state]]
name = "DEEP"
exit_latency_us = 50
target_residency_us = 100
"#,
    )
    .unwrap();
    let p = StatsPlatform::from_cpu_platform(&cpu);
    let text = trace(
        "cpus=2\n",
        &[(0, 0, 1), (0, 1, 1), (1000, 0, -1), (1000, 1, -1)],
    );
    let got = from_reader(text.as_bytes(), "t.trace", Some(&p), Some("p.toml")).unwrap();
    assert_eq!(
        got.sections["cpu0"],
        serde_json::json!([row("SLEEP", [1000.0, 1000.0, 1000.0, 1000.0], [1, 1, 0])])
    );
    assert_eq!(
        got.sections["cpu1"],
        serde_json::json!([row("DEEP", [1000.0, 1000.0, 1000.0, 1000.0], [1, 0, 0])])
    );
}

/// A P-state row: kHz, then min, max, avg, total (us), then hits.
fn prow(khz: u32, us: [f64; 4], hits: u64) -> serde_json::Value {
    let [min, max, avg, total] = us;
    serde_json::json!({"freq_khz": khz, "min_us": min, "max_us": max, "avg_us": avg,
        "total_us": total, "hits": hits})
}

#[test]
fn pstate_residency_of_the_hand_made_trace() {
    // tests/ftrace/pstates.report.txt: two CPUs, one cluster (assumed from `cpus=2`). Only
    // time while a CPU runs counts (idlestat's cpu_pstate_idle / cpu_pstate_running); the
    // cluster runs at its running CPUs' highest frequency. Times in us after 1000 s:
    //   10   cpu1 enters: it ran before at an unknown frequency since an unknown time: nothing
    //   60   cpu1 exits: running at an unknown frequency from 60
    //   100  cpu0 500 MHz (no cpu_idle yet: running): cpu0 500 from 100; cluster 500 from 100
    //   150  cpu1 enters: 90 us at an unknown frequency (60..150), in no row
    //   300  cpu1 1 GHz while idle: nothing recorded
    //   400  cpu1 exits at 1 GHz: cpu1 1000 from 400; cluster 1000: 500 for 300 (100..400)
    //   600  cpu0 enters: cpu0 500 for 500 (100..600); cluster still 1000 (cpu1)
    //   700  cpu1 500 MHz: cpu1 1000 for 300 (400..700); cluster 500: 1000 for 300
    //   900  cpu1 enters: cpu1 500 for 200 (700..900); cluster none: 500 for 200
    //   1000 cpu0 exits: cpu0 500 from 1000; cluster 500 from 1000
    //   1100 cpu0 1 GHz: cpu0 500 for 100 (1000..1100); cluster 1000: 500 for 100
    //   1150 cpu1 exits at 500: cluster still 1000
    //   1400 cpu0 enters: cpu0 1000 for 300 (1100..1400); cluster 500: 1000 for 300
    //   1500 cpu1 enters: cpu1 500 for 350 (1150..1500); cluster none: 500 for 100
    //   1600 cpu0 exits: cpu0 (and the cluster) at 1 GHz from 1600, open at the end
    // cpu0: 500 MHz 500, 100 -> min 100, max 500, avg 300, total 600, 2 hits; 1 GHz 300, 1 hit.
    // cpu1: 500 MHz 200, 350 -> min 200, max 350, avg 275, total 550; 1 GHz 300, 1 hit.
    // clusterA: 500 MHz 300, 200, 100, 100 -> min 100, max 300, avg 175, total 700; 1 GHz 300,
    // 300 -> total 600.
    let text = include_str!("../../../../../tests/ftrace/pstates.report.txt");
    let got = from_reader(text.as_bytes(), "t", None, None).unwrap();
    let p = &got.pstates;
    let expected = serde_json::json!({
        "clusterA": [
            prow(500_000, [100.0, 300.0, 175.0, 700.0], 4),
            prow(1_000_000, [300.0, 300.0, 300.0, 600.0], 2),
        ],
        "cpu0": [
            prow(500_000, [100.0, 500.0, 300.0, 600.0], 2),
            prow(1_000_000, [300.0, 300.0, 300.0, 300.0], 1),
        ],
        "cpu1": [
            prow(500_000, [200.0, 350.0, 275.0, 550.0], 2),
            prow(1_000_000, [300.0, 300.0, 300.0, 300.0], 1),
        ],
    });
    assert_eq!(serde_json::Value::Object(p.sections.clone()), expected);
    // Second method: the cluster's P-state time is the union of its CPUs' running time at a
    // known frequency: cpu0 100..600 and 1000..1400, cpu1 400..900 and 1150..1500, whose union
    // is 100..900 and 1000..1500, 1300 us.
    let cluster_us: f64 = p.sections["clusterA"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_us"].as_f64().unwrap())
        .sum();
    assert_eq!(cluster_us, 800.0 + 500.0);
    assert_eq!(p.cpu_frequency_events, 4);
    assert_eq!(
        p.unknown_frequency,
        [UnknownFrequency {
            cpu: 1,
            intervals: 1,
            total_ns: 90_000
        }]
    );
    assert_eq!(
        p.dropped,
        PstateDropped {
            open_at_end: 1,
            ..PstateDropped::default()
        }
    );
}

#[test]
fn a_frequency_event_of_a_cpu_the_platform_lacks_is_refused_at_its_line() {
    let p = StatsPlatform::parse(
        "[[cluster]]\ncpus = [0]\n[[state]]\nname = \"WFI\"\ntarget_residency_us = 1\n",
        "p.toml",
    )
    .unwrap();
    let text =
        "         sugov:0-300   [000]  1000.000100: cpu_frequency:        state=500000 cpu_id=1\n";
    let e = from_reader(text.as_bytes(), "t", Some(&p), Some("p.toml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t:1: cpu_id=1, but the platform lists 1 CPUs"
    );
}
