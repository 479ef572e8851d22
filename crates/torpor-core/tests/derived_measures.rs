//! Measures derived from a run's figures are computed once, in the report, so that no view
//! recomputes them: energy per IO, transitions per hour, each task's mean wake-up latency.

use std::path::Path;
use torpor_core::drivers::run::{run_text, Limits};

fn run(text: &str) -> torpor_core::report::Report {
    run_text(
        text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut (),
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn nvme_energy_per_io_and_transitions_per_hour_follow_their_definitions() {
    // APST workflow 7 on the SN530 for 30 s under v5.14: the drive sleeps between bursts.
    let report = run(
        "[platform.nvme]\npreset = \"wdc-pc-sn530-256gb\"\n[workload]\napst_workflow = 7\n\
         [run]\nduration = \"30s\"\n",
    );
    let nvme = report.variants[0].nvme.as_ref().unwrap();
    let s = &nvme.stats;
    assert!(s.ios > 0 && s.transitions > 0);
    // uJ per request: mJ x 1000 / requests; per hour: transitions x 3600 / 30 s.
    let per_io = nvme.energy_per_io_uj.unwrap();
    assert!((per_io - s.energy_mj * 1000.0 / s.ios as f64).abs() < 1e-9);
    assert!((nvme.transitions_per_hour - s.transitions as f64 * 120.0).abs() < 1e-9);
}

#[test]
fn a_tasks_mean_wake_up_latency_is_its_sum_over_its_wake_ups() {
    let report = run(
        "[platform.cpu]\npreset = \"google-gs101\"\n[[workload.task]]\nname = \"t\"\ncpu = 0\n\
         sleep = \"10ms\"\nrun = \"1ms\"\n[run]\nduration = \"1s\"\n",
    );
    let t = &report.variants[0].cpu.as_ref().unwrap().tasks[0];
    assert!(t.wakeups > 0);
    let mean_us = t.latency_sum_ns as f64 / t.wakeups as f64 / 1000.0;
    assert!((t.latency_avg_us - mean_us).abs() < 1e-9);
    assert!(t.latency_min_ns as f64 / 1000.0 <= t.latency_avg_us);
    assert!(t.latency_avg_us <= t.latency_max_ns as f64 / 1000.0);
}
