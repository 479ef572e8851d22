//! A small scenario on each development-board preset (presets/cpu/hisilicon-hi6220-hikey.toml,
//! presets/cpu/qcom-msm8996-pixel.toml): what each CPU does and draws, worked out by hand from the
//! preset's figures and the documented rules.

use std::path::Path;
use torpor_core::drivers::run::{run_text, Limits};
use torpor_core::report::Report;

/// One task on CPU 0 of `preset`: 1 ms of work every 10 ms for 1 s, under menu and performance
/// (the defaults).
fn periodic_task_on(preset: &str) -> Report {
    let text = format!(
        "[platform.cpu]\npreset = \"{preset}\"\n[[workload.task]]\nname = \"t\"\ncpu = 0\n\
         period = \"10ms\"\nrun = \"1ms\"\n[run]\nduration = \"1s\"\n"
    );
    run_text(
        &text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut (),
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn a_periodic_task_on_the_hikey_wakes_from_cluster_sleep_and_the_idle_cluster_stays_down() {
    let report = periodic_task_on("hisilicon-hi6220-hikey");
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

#[test]
fn a_periodic_task_on_the_pixel_wakes_from_cpu_sleep_and_an_idle_gold_cpu_sleeps_throughout() {
    let report = periodic_task_on("qcom-msm8996-pixel");
    let cpu = report.variants[0].cpu.as_ref().unwrap();
    let task = &cpu.tasks[0];
    assert_eq!(task.wakeups, 99);
    // 9 ms sleeps: CPU_SLEEP_0 (the deepest, 300 us target residency). A wake-up costs the
    // timer's 50 us slack, the state's real exit (60 us) and the big-core path at 1.5936 GHz:
    // timer_irq 0.69-2.51 us + sched 0.94-5.02 us.
    let (lo_ns, hi_ns) = (111_630, 117_530);
    assert!(
        lo_ns <= task.latency_min_ns && task.latency_max_ns <= hi_ns,
        "{}..{} ns",
        task.latency_min_ns,
        task.latency_max_ns
    );
    let cpu0 = &cpu.cpus[0];
    assert_eq!(cpu0.states[1].name, "CPU_SLEEP_0");
    assert_eq!(cpu0.states[1].entries, 100);
    // Under performance CPU 0 (silver) runs at 1593.6 MHz: the estimate's central 612.5 mW
    // (59.6 mW x 925 / 90).
    let busy_mw = cpu0.busy_energy_mj / (cpu0.busy_ns as f64 * 1e-9);
    assert!((busy_mw - 612.5).abs() < 1e-6, "{busy_mw} mW");
    // CPUs 2 and 3 (gold) have no work: one CPU_SLEEP_0 stay of the whole second at 2.086 mW,
    // plus its entry energy (4.172 - 2.086) mW x 300 us = 0.6258 uJ: 2.0866258 mJ.
    for c in &cpu.cpus[2..4] {
        assert_eq!(c.busy_ns, 0);
        let s = &c.states[1];
        assert_eq!((s.entries, s.time_ns), (1, 1_000_000_000), "cpu{}", c.cpu);
        assert!(
            (c.energy_mj - 2.0866258).abs() < 1e-9,
            "cpu{}: {}",
            c.cpu,
            c.energy_mj
        );
    }
}
