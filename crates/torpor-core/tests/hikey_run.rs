//! A small scenario on the HiKey preset (presets/cpu/hisilicon-hi6220-hikey.toml): what each
//! CPU does and draws, worked out by hand from the preset's figures and the documented rules.

use std::path::Path;
use torpor_core::run::{run_text, Limits};

#[test]
fn a_periodic_task_on_the_hikey_wakes_from_cluster_sleep_and_the_idle_cluster_stays_down() {
    // One task on CPU 0: 1 ms of work every 10 ms for 1 s, menu and performance (the defaults).
    let report = run_text(
        "[platform.cpu]\npreset = \"hisilicon-hi6220-hikey\"\n[[workload.task]]\nname = \"t\"\n\
         cpu = 0\nperiod = \"10ms\"\nrun = \"1ms\"\n[run]\nduration = \"1s\"\n",
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut (),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let cpu = report.variants[0].cpu.as_ref().unwrap();
    let task = &cpu.tasks[0];
    // Releases at 0, 10, ..., 990 ms; the first starts the run, so 99 wake-ups.
    assert_eq!(task.wakeups, 99);
    // Each 9 ms sleep is past CLUSTER_SLEEP's 2700 us target residency, so menu picks it. A
    // wake-up then costs the timer's 50 us slack, the state's real exit (280 us) and the
    // A53 path at 1.2 GHz: timer_irq 1.92-6.67 us + sched 2.5-12.5 us.
    let (lo_ns, hi_ns) = (334_420, 349_170);
    assert!(
        lo_ns <= task.latency_min_ns && task.latency_max_ns <= hi_ns,
        "{}..{} ns",
        task.latency_min_ns,
        task.latency_max_ns
    );
    let cpu0 = &cpu.cpus[0];
    assert_eq!(cpu0.states[2].name, "CLUSTER_SLEEP");
    assert_eq!(cpu0.states[2].entries, 100);
    // Under performance CPU 0 runs at 1.2 GHz: 311 x 1.33^2 x 1200 / 1000 = 660.2 mW.
    let busy_mw = cpu0.busy_energy_mj / (cpu0.busy_ns as f64 * 1e-9);
    assert!((busy_mw - 660.2).abs() < 1e-6, "{busy_mw} mW");
    // Cluster 1 has no work: each CPU enters CLUSTER_SLEEP once and the cluster stays down at
    // its central 0 mW, so each pays only the entry energy of docs/cpu-platform.md,
    // E = (4.9 - 2.45) mW x 1000 us + (2.45 - 0) mW x 2700 us = 2.45 + 6.615 = 9.065 uJ.
    for c in &cpu.cpus[4..8] {
        assert_eq!(c.busy_ns, 0);
        let s = &c.states[2];
        assert_eq!((s.entries, s.time_ns), (1, 1_000_000_000), "cpu{}", c.cpu);
        assert!((c.energy_mj - 0.009065).abs() < 1e-9, "cpu{}", c.cpu);
    }
}
