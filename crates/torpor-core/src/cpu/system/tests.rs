//! The CPU system on runs whose every event can be followed by hand.

use super::*;
use crate::cpu::platform::CpuPlatform;
use crate::cpu::task::{Dist, TaskSpec};
use crate::qos::cpu_latency::{QosOp, QosTarget, SYSFS_HOLDER};

/// One CPU: WFI (1 us / 1 us, 10 mW) and a sleep state (280 us exit, 2 ms target, 1 mW);
/// 100 mW running.
const ONE_CPU: &str = r#"
id = "one"
name = "one CPU"
source = "test"
[[cluster]]
name = "c"
cpus = [0]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 10.0, source = "test" }
[[cluster.state]]
name = "SLEEP"
exit_latency_us = 280
target_residency_us = 2000
power_mw = { mw = 1.0, source = "test" }
[[cluster.opp]]
freq_khz = 1000000
power_mw = { mw = 100.0, source = "test" }
"#;

/// ONE_CPU with three OPPs (500 MHz 50 mW, 1 GHz 100 mW, 2 GHz 400 mW) and a 300 us
/// transition latency (schedutil's default rate limit: 450 us).
fn three_opps() -> String {
    ONE_CPU.replace(
        "[[cluster.opp]]\nfreq_khz = 1000000\npower_mw = { mw = 100.0, source = \"test\" }\n",
        "[cluster.cpufreq]\ntransition_latency = { ns = 300000, source = \"test\" }\n\
         [[cluster.opp]]\nfreq_khz = 500000\npower_mw = { mw = 50.0, source = \"test\" }\n\
         [[cluster.opp]]\nfreq_khz = 1000000\npower_mw = { mw = 100.0, source = \"test\" }\n\
         [[cluster.opp]]\nfreq_khz = 2000000\npower_mw = { mw = 400.0, source = \"test\" }\n",
    )
}

/// cpu0's resume latency set to `us` at time 0 through its sysfs file.
fn cpu0_limit(us: i32) -> Vec<QosAction> {
    vec![QosAction {
        at: Nanos::ZERO,
        holder: SYSFS_HOLDER,
        target: QosTarget::ResumeLatency { cpu: 0 },
        op: QosOp::Set(us),
    }]
}

/// Runs `spec` alone on the engine for `duration`.
pub(crate) fn run(spec: &CpuRunSpec, duration: Nanos) -> Result<CpuReport, String> {
    let system = CpuSystem::new(spec).map_err(|e| e.to_string())?;
    Ok(crate::world::run_cpus(system, duration, |_| true).0)
}

fn spec(governor: &str, qos: Vec<QosAction>) -> CpuRunSpec {
    CpuRunSpec {
        platform: CpuPlatform::parse("one.toml", ONE_CPU).unwrap(),
        governor: GovernorName::parse(governor).unwrap(),
        hz: 250,
        tasks: vec![TaskSpec::cyclictest("cyclic", 0, Nanos::from_ms(10))],
        qos,
        seed: 1,
        irq: vec![IrqMap::Managed],
        cpufreq: crate::cpufreq::GovernorName::Performance,
        rate_limit_us: None,
    }
}

#[test]
fn cyclictest_under_the_oracle_by_hand() {
    // Wake-ups at 10, 20, ..., 990 ms (99 of them in 995 ms). The oracle sees ~10 ms to the next
    // timer and sleeps deep; the tick is stopped (the timer is more than 4 ms away). Each
    // wake-up costs SLEEP's 280 us exit latency, then a 5 us burst.
    let r = run(&spec("oracle", vec![]), Nanos::from_ms(995)).unwrap();
    let t = &r.tasks[0];
    assert_eq!(t.wakeups, 99);
    assert_eq!((t.latency_min_ns, t.latency_max_ns), (280_000, 280_000));
    let cpu = &r.cpus[0];
    assert_eq!(cpu.states[1].entries, 100);
    assert_eq!(cpu.states[0].entries, 0);
    assert_eq!((cpu.states[1].above, cpu.states[1].below), (0, 0));
    assert_eq!(cpu.tick_kept, 0);
    // Running 99 x 5 us = 0.495 ms at 100 mW = 0.0495 mJ; SLEEP the rest, exits included,
    // 994.505 ms at 1 mW; each of the 100 entries costs (10 - 1) mW x 2 ms = 0.018 mJ.
    assert_eq!(cpu.busy_ns, 495_000);
    assert_eq!(cpu.states[1].time_ns, 994_505_000);
    let want = 0.0495 + 0.994505 + 100.0 * 0.018;
    assert!((r.energy_mj() - want).abs() < 1e-9, "{}", r.energy_mj());
}

#[test]
fn a_latency_limit_keeps_the_cpu_in_wfi() {
    // A 200 us limit rules SLEEP (280 us) out: WFI every time, 1 us per wake-up, 10 mW idle.
    let r = run(&spec("oracle", cpu0_limit(200)), Nanos::from_ms(995)).unwrap();
    let t = &r.tasks[0];
    assert_eq!((t.latency_min_ns, t.latency_max_ns), (1_000, 1_000));
    let cpu = &r.cpus[0];
    assert_eq!((cpu.states[0].entries, cpu.states[1].entries), (100, 0));
    // WFI's 1 us target fits every period, so a deeper state would have: all 100 are "below"
    // (too shallow) except the last, cut by the end of the run before it was classified.
    assert_eq!(cpu.states[0].below, 99);
    // Running 99 x 5 us; WFI the rest (its 1 us exits included) at 10 mW; WFI's entries are
    // free (it is the shallowest state).
    assert_eq!(cpu.busy_ns, 495_000);
    let want = 0.0495 + (995.0 - 0.495) * 10.0 * 1e-3;
    assert!((r.energy_mj() - want).abs() < 1e-9, "{}", r.energy_mj());
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let mut s = spec("ladder", vec![]);
    s.tasks.push(TaskSpec {
        name: "irq".into(),
        cpu: 0,
        wake: Wake::Sleep {
            sleep: Dist::Exponential(Nanos::from_us(700)),
            source: Source::Interrupt,
        },
        run: Dist::Uniform(Nanos::from_us(10), Nanos::from_us(50)),
        wakes: None,
        io: None,
        timer_slack: Nanos::ZERO,
        job: None,
        uclamp: crate::cpu::task::Uclamp::NONE,
    });
    let a = run(&s, Nanos::from_ms(500)).unwrap();
    let b = run(&s, Nanos::from_ms(500)).unwrap();
    assert_eq!(a, b);
    s.seed = 2;
    assert_ne!(run(&s, Nanos::from_ms(500)).unwrap(), a);
}

fn at_ms(ms: u64, holder: u32, target: QosTarget, op: QosOp) -> QosAction {
    QosAction {
        at: Nanos::from_ms(ms),
        holder,
        target,
        op,
    }
}

/// Wake-up latencies of the one task, in us, and (SLEEP entries, WFI entries, kicks).
fn outcome(r: &CpuReport) -> ((u64, u64, u64), (u64, u64, u64)) {
    let t = &r.tasks[0];
    let c = &r.cpus[0];
    (
        (
            t.latency_min_ns / 1000,
            t.latency_max_ns / 1000,
            t.latency_sum_ns / 1000,
        ),
        (c.states[1].entries, c.states[0].entries, c.qos_kicks),
    )
}

#[test]
fn a_lower_global_limit_kicks_the_sleeping_cpu_into_wfi() {
    // Wake-ups at 10, 20, 30 ms. Until 15 ms nothing is asked: SLEEP from 0 and from 10.285 ms
    // (the 10 ms wake-up pays SLEEP's 280 us). At 15 ms a holder of /dev/cpu_dma_latency asks
    // 100 us: the CPU is kicked out of SLEEP (one kick), is out at 15.28 ms and re-selects:
    // only WFI (1 us) is allowed. The 20 and 30 ms wake-ups pay 1 us each, from WFI entered at
    // 15.28, 20.006 and 30.006 ms.
    let dma = QosTarget::CpuDmaLatency;
    let qos = vec![at_ms(15, 7, dma, QosOp::Set(100))];
    let r = run(&spec("oracle", qos), Nanos::from_ms(35)).unwrap();
    assert_eq!(outcome(&r), ((1, 280, 282), (2, 3, 1)));
}

#[test]
fn a_higher_global_limit_kicks_too_and_the_cpu_goes_deeper() {
    // 100 us from time 0: WFI, the 10 ms wake-up pays 1 us. At 15 ms the holder closes the file:
    // the limit returns to 2e9 us, the kernel kicks the idle CPU all the same (out of WFI at
    // 15.001 ms), which now has 4.999 ms to its timer and picks SLEEP (2 ms target). The 20 and
    // 30 ms wake-ups pay 280 us.
    let dma = QosTarget::CpuDmaLatency;
    let qos = vec![
        at_ms(0, 7, dma, QosOp::Set(100)),
        at_ms(15, 7, dma, QosOp::Remove),
    ];
    let r = run(&spec("oracle", qos), Nanos::from_ms(35)).unwrap();
    // SLEEP entries: 15.001, 20.285 and 30.285 ms; WFI: 0 and 10.006 ms.
    assert_eq!(outcome(&r), ((1, 280, 561), (3, 2, 1)));
}

#[test]
fn a_request_that_leaves_the_global_limit_alone_kicks_nothing() {
    // Holder 7 asks 100 us at 0; holder 8 asks 500 us at 15 ms: the minimum stays 100, no kick.
    // WFI throughout: three wake-ups at 1 us, WFI entered at 0, 10.006, 20.006, 30.006 ms.
    let dma = QosTarget::CpuDmaLatency;
    let qos = vec![
        at_ms(0, 7, dma, QosOp::Set(100)),
        at_ms(15, 8, dma, QosOp::Set(500)),
    ];
    let r = run(&spec("oracle", qos), Nanos::from_ms(35)).unwrap();
    assert_eq!(outcome(&r), ((1, 1, 3), (0, 4, 0)));
}

#[test]
fn a_cpu_resume_latency_change_waits_for_the_next_idle_entry() {
    // cpu0's file set to 100 us at 15 ms: no notifier wakes the CPU, which stays in SLEEP until
    // its 20 ms wake-up (280 us), then enters WFI at 20.285 ms; the 30 ms wake-up pays 1 us.
    let file = QosTarget::ResumeLatency { cpu: 0 };
    let qos = vec![at_ms(15, SYSFS_HOLDER, file, QosOp::Set(100))];
    let r = run(&spec("oracle", qos), Nanos::from_ms(35)).unwrap();
    // SLEEP entries: 0 and 10.285 ms; WFI: 20.285 and 30.006 ms.
    assert_eq!(outcome(&r), ((1, 280, 561), (2, 2, 0)));
}

/// Three CPUs with three states and a wake-up path whose every cost varies.
const THREE_CPUS: &str = r#"
id = "three"
name = "three CPUs"
source = "test"
[wakeup]
timer_irq = { min_us = 5.0, max_us = 20.0, source = "test" }
io_irq = { min_us = 5.0, max_us = 20.0, source = "test" }
ipi = { min_us = 2.0, max_us = 8.0, source = "test" }
sched = { min_us = 10.0, max_us = 30.0, source = "test" }
exit = { min = 0.3, max = 1.0, source = "test" }
[[cluster]]
name = "c"
cpus = [0, 1, 2]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[cluster.state]]
name = "SLEEP"
exit_latency_us = 280
target_residency_us = 2000
entry_us = 100.0
[[cluster.state]]
name = "DEEP"
exit_latency_us = 1000
target_residency_us = 5000
entry_us = 300.0
"#;

#[test]
fn the_oracle_is_never_too_deep_in_a_closed_loop_chain_of_wake_ups() {
    // A 60 Hz frame pipeline: an interrupt wakes the UI thread on cpu0, whose burst end wakes
    // the render thread on cpu1 (an IPI), whose end wakes the compositor on cpu2; binder work
    // on cpu2 too. Every wake-up of cpu1 and cpu2 comes from another CPU's burst, determined
    // (as a lower bound) one burst ahead: the oracle's choice never falls short of its
    // target residency.
    let ms = Nanos::from_ms;
    let us = Nanos::from_us;
    let task = |name: &str, cpu, wake, run, wakes| TaskSpec {
        name: name.into(),
        cpu,
        wake,
        run,
        wakes,
        io: None,
        timer_slack: Nanos::ZERO,
        job: None,
        uclamp: crate::cpu::task::Uclamp::NONE,
    };
    let spec = CpuRunSpec {
        platform: CpuPlatform::parse("three.toml", THREE_CPUS).unwrap(),
        governor: GovernorName::parse("oracle").unwrap(),
        hz: 250,
        tasks: vec![
            task(
                "ui",
                0,
                Wake::Periodic {
                    period: us(16_667),
                    phase: us(16_667),
                    jitter: Nanos::ZERO,
                    source: Source::Interrupt,
                },
                Dist::Exponential(ms(4)),
                Some(1),
            ),
            task("render", 1, Wake::ByTask, Dist::Exponential(ms(5)), Some(2)),
            task(
                "compositor",
                2,
                Wake::ByTask,
                Dist::Uniform(ms(1), ms(2)),
                None,
            ),
            task(
                "binder",
                2,
                Wake::Sleep {
                    sleep: Dist::Exponential(ms(5)),
                    source: Source::Interrupt,
                },
                Dist::Exponential(us(100)),
                None,
            ),
        ],
        qos: vec![],
        seed: 3,
        irq: vec![IrqMap::Managed],
        cpufreq: crate::cpufreq::GovernorName::Performance,
        rate_limit_us: None,
    };
    let r = run(&spec, ms(5_000)).unwrap();
    let above: u64 = r.cpus.iter().flat_map(|c| &c.states).map(|s| s.above).sum();
    let deep: u64 = r.cpus.iter().map(|c| c.states[2].entries).sum();
    let woken: u64 = r.tasks.iter().map(|t| t.wakeups).sum();
    assert_eq!(above, 0);
    // Not vacuous: the pipeline ran its ~300 frames, and the CPUs slept deep between them.
    assert!(woken > 900, "{woken}");
    assert!(deep > 100, "{deep}");
}

#[test]
fn a_timeline_draws_each_cpus_lanes_by_hand() {
    // cyclictest every 10 ms under the oracle on ONE_CPU: SLEEP from 0; at 10 ms the exit
    // (280 us), running at 10.28 ms for 5 us, SLEEP again at 10.285 ms; the same at 20 ms.
    // Lanes: SLEEP = 1, then exit = 2, kernel = 3, running = 4 after the two states.
    let system = CpuSystem::new(&spec("oracle", vec![]))
        .unwrap()
        .with_timeline(Nanos::from_ms(25), 100);
    let (r, _, _) = crate::world::run_cpus(system, Nanos::from_ms(50), |_| true);
    let t = &r.timelines[0];
    assert_eq!(t.states, ["WFI", "SLEEP", "exit", "kernel", "running"]);
    let us: Vec<u64> = t
        .timeline
        .t_s
        .iter()
        .map(|s| (s * 1e6).round() as u64)
        .collect();
    assert_eq!(us, [0, 10_000, 10_280, 10_285, 20_000, 20_280, 20_285]);
    assert_eq!(t.timeline.state, [1, 2, 4, 1, 2, 4, 1]);
    // SLEEP draws 1 mW (also through its exit), running 100 mW.
    assert_eq!(t.timeline.power_mw, [1.0, 1.0, 100.0, 1.0, 1.0, 100.0, 1.0]);
}

#[test]
fn schedutil_lowers_the_clock_after_its_transition_latency_mid_burst() {
    // ONE_CPU with three OPPs (500 MHz 50 mW, 1 GHz 100 mW, 2 GHz 400 mW) and a 300 us
    // transition latency (so schedutil's rate limit is 300 + 150 = 450 us); a task woken by
    // its timer every 10 ms runs 100 us of work (stated at 2 GHz) under the oracle.
    // - 10 ms: the task is enqueued; the CPU's PELT, idle since 0, crosses periods and reads
    //   util 0: perf 0, raw 0, the lowest OPP (500 MHz), committed (the start's limits
    //   update is due). The switch lands at 10.3 ms.
    // - 10.28 ms: out of SLEEP, the burst starts at 2 GHz (it would end at 10.38 ms); at
    //   10.3 ms 20 us are done and 80 us remain, x4 at 500 MHz = 320 us: it ends at 10.62 ms.
    // - 20 ms and 30 ms: util is 1 (100 us of invariant running time, decayed), raw
    //   2 GHz x 1 / 1024 = 1953 kHz: 500 MHz again, no change; each burst takes 400 us.
    let platform = three_opps();
    let mut s = spec("oracle", vec![]);
    s.platform = CpuPlatform::parse("one.toml", &platform).unwrap();
    s.tasks[0].run = Dist::Fixed(Nanos::from_us(100));
    s.cpufreq = crate::cpufreq::GovernorName::Schedutil612;
    let r = run(&s, Nanos::from_ms(35)).unwrap();
    let t = &r.tasks[0];
    assert_eq!(t.wakeups, 3);
    assert_eq!((t.latency_min_ns, t.latency_max_ns), (280_000, 280_000));
    let cpu = &r.cpus[0];
    assert_eq!(cpu.freq_changes, 1);
    let at: Vec<(u64, u64)> = cpu.opps.iter().map(|o| (o.khz, o.time_ns)).collect();
    assert_eq!(
        at,
        vec![
            (500_000, 320_000 + 400_000 + 400_000),
            (1_000_000, 0),
            (2_000_000, 20_000)
        ]
    );
    assert_eq!(cpu.busy_ns, 1_140_000);
    // Active energy: 1120 us x 50 mW + 20 us x 400 mW = 0.056 + 0.008 mJ.
    let active: f64 = cpu.opps.iter().map(|o| o.energy_mj).sum();
    assert!((active - 0.064).abs() < 1e-12, "{active}");
}

#[test]
fn a_frame_that_runs_past_its_period_misses_it_and_counts_its_work() {
    // ONE_CPU with OPPs 500 MHz and 1 GHz; a task every 1 ms (first at 1 ms) doing 600 us of
    // work (stated at 1 GHz). The oracle takes WFI (1 us exit; SLEEP's 2 ms would not fit).
    // performance: each burst runs 1.001 -> 1.601 ms, inside its period: 9 frames by 10 ms,
    // none missed, 9 x 600 us of work. powersave (500 MHz): each burst takes 1.2 ms, 1.001 ->
    // 2.201 ms, past the 2 ms frame, which is missed; the task next wakes at 3 ms. Frames at
    // 1, 3, 5, 7, 9 ms: 5 bursts started (3 ms of work), 4 of them ended by 10 ms, each
    // having missed one frame.
    let platform = ONE_CPU.replace(
        "[[cluster.opp]]\nfreq_khz = 1000000\n",
        "[[cluster.opp]]\nfreq_khz = 500000\npower_mw = { mw = 50.0, source = \"test\" }\n\
         [[cluster.opp]]\nfreq_khz = 1000000\n",
    );
    let mut s = spec("oracle", vec![]);
    s.platform = CpuPlatform::parse("one.toml", &platform).unwrap();
    s.tasks[0] = TaskSpec::cyclictest("frame", 0, Nanos::from_ms(1));
    s.tasks[0].run = Dist::Fixed(Nanos::from_us(600));
    for (governor, wakeups, work_us, missed) in [
        (crate::cpufreq::GovernorName::Performance, 9, 5_400, 0),
        (crate::cpufreq::GovernorName::Powersave, 5, 3_000, 4),
    ] {
        s.cpufreq = governor;
        let r = run(&s, Nanos::from_ms(10)).unwrap();
        let t = &r.tasks[0];
        assert_eq!(
            (t.wakeups, t.work_ns, t.periods_missed),
            (wakeups, work_us * 1000, missed),
            "{governor:?}"
        );
    }
}

#[test]
fn a_frames_response_runs_from_its_vsync_through_the_thread_it_wakes() {
    // Two CPUs of ONE_CPU's kind, no [wakeup] table (a wake-up costs the state's exit latency,
    // an IPI nothing). "ui" on cpu0 wakes by timer every 10 ms (first at 10 ms) for 2 ms and
    // wakes "render" on cpu1, which runs 3 ms. The oracle sleeps both CPUs in SLEEP (280 us
    // exit) between frames, whose gaps exceed its 2 ms target residency. Frame at 10 ms: ui
    // runs 10.28 -> 12.28 ms (response 2.28 ms), render 12.56 -> 15.56 ms (response from
    // the vsync: 5.56 ms). Frames at 10, 20, 30 ms in 35 ms: ui ends three bursts, render two
    // (its third would end at 35.56 ms).
    let two = ONE_CPU.replace("cpus = [0]", "cpus = [0, 1]");
    let mut s = spec("oracle", vec![]);
    s.platform = CpuPlatform::parse("two.toml", &two).unwrap();
    let mut ui = TaskSpec::cyclictest("ui", 0, Nanos::from_ms(10));
    ui.run = Dist::Fixed(Nanos::from_ms(2));
    ui.wakes = Some(1);
    let mut render = TaskSpec::cyclictest("render", 1, Nanos::from_ms(10));
    render.wake = Wake::ByTask;
    render.run = Dist::Fixed(Nanos::from_ms(3));
    s.tasks = vec![ui, render];
    let r = run(&s, Nanos::from_ms(35)).unwrap();
    let (ui, render) = (&r.tasks[0], &r.tasks[1]);
    assert_eq!(
        (ui.responses, ui.response_sum_ns, ui.response_max_ns),
        (3, 3 * 2_280_000, 2_280_000)
    );
    assert_eq!(
        (
            render.responses,
            render.response_sum_ns,
            render.response_max_ns
        ),
        (2, 2 * 5_560_000, 5_560_000)
    );
    // Its own wake-up latency is the exit alone, counted from the waker's call.
    assert_eq!(
        (render.latency_min_ns, render.latency_max_ns),
        (280_000, 280_000)
    );
}

#[test]
fn a_clamp_floor_raises_the_clock_at_the_first_update_after_the_enqueue() {
    // The platform of the mid-burst test (500 MHz / 1 GHz / 2 GHz, 300 us transition latency),
    // one task woken by its timer at 10 ms with 6 ms of work (stated at 2 GHz), run for 19.9 ms
    // (its next period, at 20 ms, is not reached).
    // - 10 ms: its enqueue's update reads util 0 and no floor yet (v6.12 counts the task's
    //   clamps after that update): 500 MHz, landing at 10.3 ms. Its clamps then count.
    // - 10.28 ms: the burst starts at 2 GHz; 20 us of work are done at 10.3 ms.
    // - The running CPU's next tick T (its phase is drawn: within 4 ms) crossed a PELT period:
    //   with uclamp_min 1024, perf is the floor, 1024: 2 GHz, landing at T + 0.3 ms.
    // So the CPU is busy at 500 MHz for d = T + 0.3 - 10.3 ms (< 4.3 ms), doing d / 4 of
    // work, and at 2 GHz for the rest: 20 us + (6 ms - 20 us - d / 4) = 6 ms - d / 4; the
    // burst ends by 10.3 + 4.3 + 6 - 4.3 / 4 < 19.6 ms.
    // Without the clamp the utilization stays far below any higher OPP: the burst runs at
    // 500 MHz until the run ends, unfinished.
    let platform = three_opps();
    let mut s = spec("oracle", vec![]);
    s.platform = CpuPlatform::parse("one.toml", &platform).unwrap();
    s.tasks[0].run = Dist::Fixed(Nanos::from_ms(6));
    s.cpufreq = crate::cpufreq::GovernorName::Schedutil612;
    s.tasks[0].uclamp = Uclamp {
        min: 1024,
        max: 1024,
    };
    let end = Nanos::from_us(19_900);
    let r = run(&s, end).unwrap();
    let busy = |r: &CpuReport, khz| {
        r.cpus[0]
            .opps
            .iter()
            .find(|o| o.khz == khz)
            .unwrap()
            .time_ns
    };
    let d = busy(&r, 500_000);
    assert!(d > 0 && d < 4_300_000, "{d}");
    assert_eq!(busy(&r, 2_000_000), 6_000_000 - d / 4);
    assert_eq!(r.tasks[0].responses, 1);
    s.tasks[0].uclamp = Uclamp::NONE;
    let r = run(&s, end).unwrap();
    assert_eq!(
        (busy(&r, 500_000), r.tasks[0].responses),
        (19_900_000 - 10_300_000, 0)
    );
}

#[test]
fn a_scaling_limit_written_mid_burst_moves_the_clock_after_the_transition_latency() {
    // The platform of the mid-burst test (500 MHz / 1 GHz / 2 GHz, 300 us transition latency);
    // one task woken at 10 ms with 4 ms of work (stated at 2 GHz); at 11 ms a write to cpu0's
    // scaling_max_freq (performance) or scaling_min_freq (powersave) of 1 GHz; run 19.9 ms.
    // - performance at 2 GHz: the burst starts at 10.28 ms; the cap's `limits` asks for
    //   1 GHz, which lands at 11.3 ms after 1.02 ms of work; the 2.98 ms left take 5.96 ms:
    //   the burst ends at 17.26 ms (response 7.26 ms).
    // - powersave at 500 MHz (a quarter speed): 1.02 ms at 500 MHz do 0.255 ms of work; the
    //   floor's `limits` moves it to 1 GHz, where the 3.745 ms left take 7.49 ms: the burst
    //   ends at 18.79 ms (response 8.79 ms).
    let platform = three_opps();
    let cases = [
        (
            crate::cpufreq::GovernorName::Performance,
            QosTarget::ScalingMaxFreq { cpu: 0 },
            [(1_000_000, 5_960_000), (2_000_000, 1_020_000)],
            7_260_000,
        ),
        (
            crate::cpufreq::GovernorName::Powersave,
            QosTarget::ScalingMinFreq { cpu: 0 },
            [(500_000, 1_020_000), (1_000_000, 7_490_000)],
            8_790_000,
        ),
    ];
    for (governor, target, busy, response) in cases {
        let write = at_ms(11, SYSFS_HOLDER, target, QosOp::Set(1_000_000));
        let mut s = spec("oracle", vec![write]);
        s.platform = CpuPlatform::parse("one.toml", &platform).unwrap();
        s.tasks[0].run = Dist::Fixed(Nanos::from_ms(4));
        s.cpufreq = governor;
        let r = run(&s, Nanos::from_us(19_900)).unwrap();
        let cpu = &r.cpus[0];
        for (khz, ns) in busy {
            let at = cpu.opps.iter().find(|o| o.khz == khz).unwrap();
            assert_eq!(at.time_ns, ns, "{governor:?} at {khz} kHz");
        }
        let t = &r.tasks[0];
        assert_eq!(
            (t.responses, t.response_sum_ns),
            (1, response),
            "{governor:?}"
        );
    }
}

#[test]
fn the_tick_grid_answers_as_the_division_does_in_any_order_of_questions() {
    // A second method: the first grid instant after `now`, found by stepping from the phase.
    let by_steps = |now: u64, period: u64, phase: u64| {
        let mut at = phase;
        while at <= now {
            at += period;
        }
        at
    };
    let mut rng = crate::sim::Pcg32::new(5, 11);
    for _ in 0..50 {
        let period = 1 + rng.below(5_000);
        let phase = rng.below(period);
        let mut grid = super::TickGrid::new(period, phase);
        let mut now = 0u64;
        for _ in 0..200 {
            // Mostly forward within a period or two, sometimes far, sometimes back.
            now = match rng.below(4) {
                0 => now + rng.below(period * 40),
                1 => now.saturating_sub(rng.below(period * 2)),
                _ => now + rng.below(period),
            };
            assert_eq!(grid.after(now), by_steps(now, period, phase), "now {now}");
        }
    }
}
