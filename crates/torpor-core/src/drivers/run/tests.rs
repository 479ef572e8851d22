use super::*;

use crate::error::InputError;
use crate::report::VariantReport;
use crate::time::Nanos;

fn run(text: &str) -> Result<Report, InputError> {
    run_in(text, Path::new("/nonexistent-dir"))
}

/// Runs `text` from `base`, unwatched, with the default limits and no overrides.
fn run_at(text: &str, base: &Path) -> Result<Report, RunError> {
    run_text(text, "s.toml", base, &[], &Limits::default(), &mut ())
}

/// [`run_at`], bad input as its `InputError`.
fn run_in(text: &str, base: &Path) -> Result<Report, InputError> {
    run_at(text, base).map_err(|e| match e {
        RunError::Input(e) => e,
        RunError::Interrupted => panic!("an unwatched run was interrupted"),
    })
}

const SN530: &str = "[platform.nvme]\npreset = \"wdc-pc-sn530-256gb\"\n";

#[test]
fn unknown_preset_is_reported_at_its_scenario_line() {
    let e = run("[platform.nvme]\npreset = \"no-such-drive\"\n[workload]\napst_workflow = 1\n")
        .unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
    assert!(e
        .message
        .contains("no built-in preset has the id \"no-such-drive\""));
}

#[test]
fn missing_files_are_reported_at_the_key_that_names_them() {
    let e = run("[platform.nvme]\nfile = \"x.json\"\n[workload]\napst_workflow = 1\n").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
    assert_eq!(e.message, "`platform.nvme.file`: \"x.json\": no such file");
    let e = run(&format!("{SN530}[workload.replay]\nfile = \"t.log\"\n")).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(4)));
}

#[test]
fn a_missing_file_in_a_variant_is_reported_at_the_variants_line() {
    let e = run(&format!(
        "{SN530}[workload]\napst_workflow = 1\n[[variant]]\nname = \"a\"\n\
         [[variant]]\nname = \"b\"\n[variant.platform.nvme]\npreset = \"nope\"\n"
    ))
    .unwrap_err();
    assert_eq!(e.line, Some(10));
}

#[test]
fn latency_scale_changes_the_drive_not_the_table() {
    // SN530, workflow 7, v5.14: the table still sends PS0 to PS3 after 100 ms (declared
    // latencies), but the drive enters PS3 in 2 x 3.9 ms, so it settles there after
    // 100 + 7.8 = 107.8 ms of idle, and wakes in 2 x 11 ms: every read after the first
    // waits 22 ms + 75 us of service = 22 075 us.
    let r = run(&format!(
        "{SN530}latency_scale = 2.0\n[workload]\napst_workflow = 7\n[run]\nduration = \"2s\"\n"
    ))
    .unwrap();
    let v = &r.variants[0];
    assert_eq!(v.io.all.max_us, 22_075.0);
    assert_eq!(v.io.all.p50_us, 22_075.0);
    let nvme = v.nvme.as_ref().unwrap();
    assert_eq!(nvme.apst.idle_schedule[0].reached_after_ms, 107.8);
    let e = run(&format!(
        "{SN530}latency_scale = 0.0\n[workload]\napst_workflow = 7\n"
    ))
    .unwrap_err();
    assert_eq!(e.line, Some(3));
}

#[test]
fn every_variant_sees_the_same_io() {
    // Workflow 2 never idles 100 ms, so no table changes the IO: identical counts.
    let r = run(&format!(
        "{SN530}[workload]\napst_workflow = 2\n[run]\nduration = \"1s\"\n\
         [[variant]]\nname = \"a\"\n[variant.policy.apst]\nalgorithm = \"legacy\"\n\
         [[variant]]\nname = \"b\"\n"
    ))
    .unwrap();
    assert_eq!(r.variants.len(), 2);
    assert_eq!(r.variants[0].io.ios, r.variants[1].io.ios);
    // 1000 writes of 15 us then 50 ms idle: cycles of 65 ms; in 1 s, 15 full cycles end at
    // 975 ms and the 16th burst (975 - 990 ms) completes too: 16 000 writes.
    assert_eq!(r.variants[0].io.ios, 16_000);
}

#[test]
fn an_idle_power_override_sets_the_drives_idle_power() {
    // Workflow 7 under legacy never leaves PS0 (745 ms ITPT > 150 ms gaps): 200 reads of
    // 75 us in 30 s at ACTP 1800 mW, the rest idle in PS0 at the override, 500 mW:
    // (0.015 s x 1800 + 29.985 s x 500) / 30 s = 500.65 mW.
    let r = run(&format!(
        "{SN530}idle_power_mw = {{ PS0 = 500.0 }}\n[policy.apst]\nalgorithm = \"legacy\"\n\
         [workload]\napst_workflow = 7\n[run]\nduration = \"30s\"\n"
    ))
    .unwrap();
    let nvme = r.variants[0].nvme.as_ref().unwrap();
    assert!(
        (nvme.stats.avg_power_mw - 500.65).abs() < 1e-9,
        "{}",
        nvme.stats.avg_power_mw
    );
    let e = run(&format!(
        "{SN530}idle_power_mw = {{ PS7 = 5.0 }}\n[workload]\napst_workflow = 7\n"
    ))
    .unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(
        e.message.contains("no PS7 (it reports PS0-PS4)"),
        "{}",
        e.message
    );
}

#[test]
fn without_a_duration_a_replay_runs_to_its_end() {
    // Two reads of a v3 log, 2 s apart (timestamps in us). Legacy table on the SN530: PS0
    // -> PS3 after 745 ms (settled at 748.9 ms), PS3 -> PS4 only after 2200 ms more, so
    // the second read wakes the drive from PS3 (11 ms) and completes 75 us later: the run
    // ends at 2 s + 11 ms + 75 us.
    let dir = std::env::temp_dir().join(format!("torpor-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("t.iolog"),
        "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n\
         0 /dev/x read 0 4096\n2000000 /dev/x read 4096 4096\n2000001 /dev/x close\n",
    )
    .unwrap();
    let text = format!(
        "{SN530}[policy.apst]\nalgorithm = \"legacy\"\n[workload.replay]\nfile = \"t.iolog\"\n"
    );
    let r = run_in(&text, &dir).unwrap();
    assert_eq!(r.variants[0].duration_s, 2.011075);
    assert_eq!(r.variants[0].io.ios, 2);
    // A time-based job beside it would never end: the duration is then required.
    let e = run_in(
        &(text.clone() + "[[workload.job]]\nname = \"j\"\nrw = \"read\"\ntime_based = true\n"),
        &dir,
    )
    .unwrap_err();
    assert!(
        e.message.contains("[run] duration: needed"),
        "{}",
        e.message
    );
    // Cut at 1 s: the second read (line 5, read ahead) and the close (line 6) are not
    // reached; the first read completed.
    let cut = text.clone() + "[run]\nduration = \"1s\"\n";
    let r = run_in(&cut, &dir).unwrap();
    let w = &r.variants[0].io.workloads[0];
    assert_eq!((w.ios, w.lines_not_reached), (1, Some(2)));
    // Run to its end, nothing is left out.
    let r = run_in(&text, &dir).unwrap();
    assert_eq!(r.variants[0].io.workloads[0].lines_not_reached, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scenario_asking_for_too_much_work_is_refused_at_its_duration() {
    // Workflow 1 (QD2 writes) on the SN530: 2 slots of 15 us 4 KiB writes give at most
    // 2 x (T / 15 us + 1) IOs. Ten years: 2 x 315 576 000 s / 15 us = 4.2e13 IOs.
    let text = format!("{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"315576000s\"\n");
    let e = match run_at(&text, Path::new(".")) {
        Err(RunError::Input(e)) => e,
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    };
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("up to 4.2e13 IOs"), "{e}");
    assert!(e.message.contains("limit of 5.0e9"), "{e}");
    // One second is 2 x (1 s / 15 us + 1) = 133 334 IOs: refused under a limit of
    // 133 333, run under 133 334.
    let text = format!("{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"1s\"\n");
    let tight = |max_ios| {
        run_text(
            &text,
            "s.toml",
            Path::new("."),
            &[],
            &Limits { max_ios },
            &mut (),
        )
    };
    assert!(matches!(tight(133_333), Err(RunError::Input(_))));
    let r = tight(133_334).unwrap();
    assert!(r.variants[0].io.ios <= 133_334);
}

#[test]
fn overrides_set_fields_by_dotted_path_as_a_sweep_does() {
    // Workflow 7 under v5.14 reaches PS3 in every 150 ms gap (slowest read 11 075 us); a
    // primary timeout of 200 ms keeps the drive in PS0 (every read 75 us).
    let text = format!("{SN530}[workload]\napst_workflow = 7\n[run]\nduration = \"2s\"\n");
    let run = |overrides: &[Override]| {
        run_text(
            &text,
            "s.toml",
            Path::new("."),
            overrides,
            &Limits::default(),
            &mut (),
        )
    };
    assert_eq!(run(&[]).unwrap().variants[0].io.all.max_us, 11_075.0);
    let longer = [(
        "policy.apst.primary_timeout_ms".to_string(),
        toml::Value::Integer(200),
    )];
    assert_eq!(run(&longer).unwrap().variants[0].io.all.max_us, 75.0);
    let wrong = [("policy.apst.nope".to_string(), toml::Value::Integer(1))];
    match run(&wrong) {
        Err(RunError::Input(e)) => assert!(e.message.contains("nope"), "{e}"),
        other => panic!("expected an error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_timeline_records_the_drives_states_and_requests_in_its_window() {
    // SN530 (PS0 idle 700 mW by its preset, ACTP 1800 mW, MP 3500 mW), workflow 7, v5.14:
    // transitions draw 700 + 0.5 x (3500 - 700) = 2100 mW. Read at 0 (75 us); idle from
    // 0.075 ms; PS3 entry at 100.075 ms (3.9 ms), settled 103.975 ms; the next read comes
    // 150 ms after the first completed, 150.075 ms, wakes PS3 (11 ms) to 161.075 ms, is
    // served to 161.15 ms; the same again from 261.15 ms: read at 311.15 ms, served from
    // 322.15 to 322.225 ms. The window ends at 400 ms.
    let text = format!(
        "{SN530}[workload]\napst_workflow = 7\n[run]\nduration = \"1s\"\ntimeline = \"400ms\"\n"
    );
    let r = run_at(&text, Path::new(".")).unwrap();
    let t = r.variants[0]
        .nvme
        .as_ref()
        .unwrap()
        .timeline
        .as_ref()
        .unwrap();
    assert_eq!(t.states.last().map(String::as_str), Some("transition"));
    let ms: Vec<f64> = t
        .timeline
        .t_s
        .iter()
        .map(|s| (s * 1e6).round() / 1e3)
        .collect();
    assert_eq!(
        ms,
        vec![
            0.0, 0.0, 0.075, 100.075, 103.975, 150.075, 161.075, 161.15, 261.15, 265.05, 311.15,
            322.15, 322.225
        ]
    );
    assert_eq!(
        t.timeline.state,
        vec![0, 0, 0, 5, 3, 5, 0, 0, 5, 3, 5, 0, 0]
    );
    let mw: Vec<f32> = t.timeline.power_mw.clone();
    assert_eq!(
        mw,
        vec![
            700.0, 1800.0, 700.0, 2100.0, 25.0, 2100.0, 1800.0, 700.0, 2100.0, 25.0, 2100.0,
            1800.0, 700.0
        ]
    );
    let requests: Vec<f64> = t
        .timeline
        .request_t_s
        .iter()
        .map(|s| (s * 1e6).round() / 1e3)
        .collect();
    assert_eq!(requests, vec![0.0, 150.075, 311.15]);
    assert_eq!(t.timeline.dropped, 0);
}

/// Runs `scenario` beside the job file `jobs` (as `jobs.fio`) in a fresh folder.
fn run_with_job_file(scenario: &str, jobs: &str) -> Result<Report, InputError> {
    let dir =
        std::env::temp_dir().join(format!("torpor-fio-{}-{}", std::process::id(), jobs.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("jobs.fio"), jobs).unwrap();
    let r = run_in(scenario, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

#[test]
fn a_job_file_runs_beside_the_scenario_and_reports_as_fio_would() {
    // SN530 under the default table: rate_iops=100 for runtime=2 (seconds, fio's unit)
    // issues reads at 0, 10, ..., 1990 ms: 200 of them, none idle for the 100 ms the table
    // waits, so each takes the 75 us of a 4 KiB read. fio's runtime is the whole 2 s.
    let scenario = format!("{SN530}[workload]\nfio = \"jobs.fio\"\n[run]\nduration = \"3s\"\n");
    let r = run_with_job_file(
        &scenario,
        "[global]\nioengine=libaio\ndirect=1\nruntime=2\n[paced]\nrw=randread\nrate_iops=100\n",
    )
    .unwrap();
    let io = &r.variants[0].io;
    assert_eq!(io.ios, 200);
    let fio = io.workloads[0].fio.as_ref().unwrap();
    assert_eq!(fio.runtime_ms, 2000);
    assert!(fio.write.is_none());
    let read = fio.read.as_ref().unwrap();
    assert_eq!((read.ios, read.bytes), (200, 200 * 4096));
    assert_eq!((read.clat_min_ns, read.clat_max_ns), (75_000, 75_000));
    assert_eq!(
        (read.clat_mean_ns, read.clat_stdev_ns),
        (75_000.0, Some(0.0))
    );
    assert!(
        io.notes
            .iter()
            .any(|n| n.contains("ioengine=libaio accepted")),
        "{:?}",
        io.notes
    );

    // rate_iops=5: reads 200 ms apart; after each the drive idles 100 ms and enters PS3
    // (3.9 ms), so every read but the first wakes it (11 ms) then takes 75 us: one of
    // 75 us, nine of 11 075 us. Mean 99 750 / 10 = 9975 us; squared deviations 9900^2 +
    // 9 x 1100^2 = 108 900 000 us^2, over n - 1 = 9: 12 100 000, stdev 3478.505 us.
    let r = run_with_job_file(
        &scenario,
        "[sleepy]\nrw=randread\nrate_iops=5\nruntime=2s\ndirect=1\n",
    )
    .unwrap();
    let read = r.variants[0].io.workloads[0]
        .fio
        .clone()
        .unwrap()
        .read
        .unwrap();
    assert_eq!(
        (read.ios, read.clat_min_ns, read.clat_max_ns),
        (10, 75_000, 11_075_000)
    );
    assert_eq!(read.clat_mean_ns, 9_975_000.0);
    let stdev = read.clat_stdev_ns.unwrap();
    assert!((stdev - 12_100_000f64.sqrt() * 1e3).abs() < 1e-6, "{stdev}");
}

#[test]
fn job_file_errors_point_into_the_job_file_and_its_absence_at_the_scenario() {
    let scenario = format!("{SN530}[workload]\nfio = \"jobs.fio\"\n");
    let e = run_with_job_file(&scenario, "[a]\nrw=read\nbogus=1\n").unwrap_err();
    assert!(e.file.ends_with("jobs.fio"), "{e}");
    assert_eq!(e.line, Some(3));
    let e = run(&scenario).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(4)));
    assert_eq!(e.message, "`workload.fio`: \"jobs.fio\": no such file");
}

/// Counts its ticks and stops the run at the `stop_at`-th.
struct StopAfter {
    ticks: usize,
    stop_at: usize,
    last: Option<(usize, Nanos)>,
}

impl Watch for StopAfter {
    fn tick(&mut self, p: &Progress<'_>) -> bool {
        self.ticks += 1;
        self.last = Some((p.variant, p.now));
        self.ticks < self.stop_at
    }
}

#[test]
fn a_cpu_scenario_runs_its_tasks_under_each_variants_governor() {
    // The one-CPU test platform; cyclictest every 10 ms for 995 ms: 99 wake-ups. The
    // oracle sleeps in SLEEP (280 us exit) each time. ladder climbs from WFI to SLEEP at
    // its fourth select (the zeroed device's first residency counts as long): the wake-ups
    // at 10, 20 and 30 ms cost WFI's 1 us, the other 96 SLEEP's 280 us.
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cpu");
    // A real-time cyclictest (-p): no timer slack.
    let text = "[platform.cpu]\nfile = \"one-cpu.toml\"\n\
                [[workload.task]]\nname = \"cyclictest\"\ncpu = 0\nperiod = \"10ms\"\nrun = \"5us\"\n\
                timer_slack = \"0us\"\n\
                [run]\nduration = \"995ms\"\n\
                [[variant]]\nname = \"oracle\"\n[variant.policy.cpuidle]\ngovernor = \"oracle\"\n\
                [[variant]]\nname = \"ladder\"\n[variant.policy.cpuidle]\ngovernor = \"ladder\"\n";
    let r = run_in(text, &base).unwrap();
    let oracle = r.variants[0].cpu.as_ref().unwrap();
    assert_eq!(oracle.governor, "oracle");
    assert_eq!(oracle.tasks[0].wakeups, 99);
    assert_eq!(oracle.tasks[0].latency_max_ns, 280_000);
    assert_eq!(r.variants[0].io.ios, 0);
    let ladder = r.variants[1].cpu.as_ref().unwrap();
    assert_eq!(ladder.tasks[0].latency_min_ns, 1_000);
    assert_eq!(ladder.tasks[0].latency_max_ns, 280_000);
    assert_eq!(
        ladder.tasks[0].latency_sum_ns,
        3 * 1_000 + 96 * 280_000,
        "three 1 us wake-ups in WFI, then SLEEP"
    );
    // A normal task's timer fires at the end of its 50 us slack: each wake-up 50 us later
    // than intended, then SLEEP's exit.
    let normal = run_in(&text.replace("timer_slack = \"0us\"\n", ""), &base).unwrap();
    let oracle = normal.variants[0].cpu.as_ref().unwrap();
    assert_eq!(oracle.tasks[0].latency_max_ns, 330_000);
    assert_eq!(oracle.tasks[0].latency_min_ns, 330_000);
}

#[test]
fn cpu_scenarios_are_checked_at_their_lines() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cpu");
    let task = "[[workload.task]]\nname = \"t\"\ncpu = 0\nperiod = \"10ms\"\nrun = \"5us\"\n";
    let cases = [
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n[policy.cpuidle]\ngovernor = \"teo@9\"\n{task}"),
            "s.toml:4: [policy.cpuidle] unknown governor \"teo@9\"",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\nhz = 5\n{task}"),
            "s.toml:3: [platform.cpu] hz: expected CONFIG_HZ in 24..=10000",
        ),
        (
            // Beyond 32 bits: the same words, the value as written.
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\nhz = 1099511627776\n{task}"),
            "s.toml:3: `platform.cpu.hz`: expected CONFIG_HZ in 24..=10000 (100, 250, 300 and 1000 are the kernel's choices), got 1099511627776",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}", task.replace("cpu = 0", "cpu = 3")),
            "s.toml:5: [[workload.task]] t: `cpu`:",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}", task.replace("run = ", "run_mean = \"1us\"\nrun = ")),
            "s.toml:8: [[workload.task]] t: `run`: expected one of `run` (fixed)",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}wakes = \"nobody\"\n", task),
            "s.toml:8: [[workload.task]] t: `wakes`: no task is named \"nobody\"",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n[workload]\napst_workflow = 1\n{task}"),
            "IO (`apst_workflow`, `[[workload.job]]`, `fio`, `[workload.replay]`) \
             needs a device",
        ),
        (
            format!("{SN530}[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"fixed\"\ncpus = [0]\n{task}"),
            "[platform.irq] mode: this scenario has two devices: say whose interrupts go \
             where, in `[platform.irq.nvme]` and `[platform.irq.ufs]`",
        ),
        (
            format!("{SN530}[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"fixed\"\ncpus = [5]\n{task}"),
            "s.toml:7: [platform.irq]: the interrupt is mapped to CPU 5, which the platform \
             does not have (it has [0])",
        ),
        (
            format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{task}[workload.task.io]\ndevice = \"nvme\"\nrw = \"read\"\n"),
            "s.toml:9: [[workload.task]] t: `io.device`: this scenario has no device \"nvme\": \
             it has no device",
        ),
        (
            format!("{SN530}[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"sideways\"\n{task}"),
            "s.toml:6: [platform.irq] mode: expected \"managed\", \"fixed\" or \"round-robin\"",
        ),
        (
            format!("[platform.cpu]\npreset = \"qcom-msm8961\"\n{task}"),
            "s.toml:2: [platform.cpu] preset: no built-in CPU platform \"qcom-msm8961\"",
        ),
    ];
    for (text, want) in cases {
        let got = run_in(&text, &base).unwrap_err().to_string();
        assert!(got.contains(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn ufshcd_holds_the_cpus_latency_while_its_clocks_are_up_when_asked() {
    // A bursty reader on the gs101 beside the UFS 4.0 class under ufshcd's defaults (no
    // suspension at the max level): each burst scales the host up, each idle stretch down.
    // With pm_qos_enable, every hold and release the device counts reaches the CPUs'
    // global list (one vote each); without it, none.
    let text = "[platform.cpu]\npreset = \"google-gs101\"\n\
                [platform.ufs]\npreset = \"samsung-ufs40-class\"\n\
                [policy.devfreq]\nprofile = \"ufshcd\"\n\
                [[workload.job]]\nname = \"bursts\"\nrw = \"read\"\nbs = \"512k\"\n\
                iodepth = 4\nthinktime = \"1s\"\nthinktime_blocks = 1024\ntime_based = true\n\
                [run]\nduration = \"4s\"\n\
                [[variant]]\nname = \"on\"\n\
                [[variant]]\nname = \"off\"\n[variant.policy.devfreq]\npm_qos_enable = false\n";
    let r = run(text).unwrap();
    let votes = |v: &VariantReport| v.cpu.as_ref().unwrap().host_latency_votes;
    let counted = |v: &VariantReport| {
        let c = &v.ufs.as_ref().unwrap().stats.counters;
        c.cpu_latency_holds + c.cpu_latency_releases
    };
    let (on, off) = (&r.variants[0], &r.variants[1]);
    assert!(counted(on) >= 2, "the bursts scale the host up and down");
    assert_eq!(votes(on), counted(on));
    assert_eq!((votes(off), counted(off)), (0, 0));
}

#[test]
fn a_watcher_sees_progress_and_can_stop_the_run() {
    // Workflow 1 for 10 s issues ~1.3 M IOs: hundreds of watch ticks (one per 4096 events).
    let text = format!(
        "{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"10s\"\n\
         [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n"
    );
    let mut w = StopAfter {
        ticks: 0,
        stop_at: usize::MAX,
        last: None,
    };
    run_text(
        &text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut w,
    )
    .unwrap();
    assert!(w.ticks > 200, "{}", w.ticks);
    let (variant, now) = w.last.unwrap();
    assert_eq!(variant, 1);
    assert!(now <= Nanos::from_secs(10));
    // Stopped at the third tick: the first variant's start, then two in its run.
    let mut w = StopAfter {
        ticks: 0,
        stop_at: 3,
        last: None,
    };
    let r = run_text(
        &text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut w,
    );
    assert!(matches!(r, Err(RunError::Interrupted)));
    assert_eq!(w.ticks, 3);
    assert_eq!(w.last.unwrap().0, 0);
}

#[test]
fn a_dump_matched_to_no_preset_says_its_service_times_are_the_defaults() {
    // The Samsung 950 PRO's id-ctrl dump matches its preset (whose service times it takes);
    // the same dump under a model name no preset has keeps the client defaults, and says so.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvme");
    let dump = std::fs::read_to_string(data.join("samsung-950-pro.nvme-cli-1.x.json")).unwrap();
    let unlisted = dump.replace("Samsung SSD 950 PRO", "Acme Unlisted X1   ");
    assert_ne!(dump, unlisted);
    let dir = std::env::temp_dir().join(format!("torpor-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("matched.json"), &dump).unwrap();
    std::fs::write(dir.join("unlisted.json"), &unlisted).unwrap();
    let said = |name: &str| {
        let text = format!(
            "[platform.nvme]\nfile = \"{name}\"\n[run]\nduration = \"10ms\"\n\
             [workload]\napst_workflow = 1\n"
        );
        let r = run_in(&text, &dir).unwrap();
        let notes = &r.variants[0].nvme.as_ref().unwrap().notes;
        notes
            .iter()
            .any(|n| n.starts_with("service times are torpor's client-drive defaults"))
    };
    let (matched, unmatched) = (said("matched.json"), said("unlisted.json"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!matched);
    assert!(unmatched);
}
