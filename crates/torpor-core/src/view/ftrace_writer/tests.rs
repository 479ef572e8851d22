//! The writer on runs whose every event is known by hand, and read back by the parser.

use super::*;
use crate::cpu::platform::CpuPlatform;
use crate::cpu::system::{CpuReport, CpuSystem, IrqMap};
use crate::cpu::task::{Dist, Source, TaskSpec, Wake};
use crate::cpuidle::GovernorName;
use crate::qos::cpu_latency::{QosAction, QosOp, QosTarget, SYSFS_HOLDER};
use crate::trace::ftrace::{EventKind, FtraceReader};

/// One CPU: WFI (1 us exit / 1 us target) and SLEEP (280 us / 2 ms) — cpu/system/tests.rs's.
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
[[cluster.state]]
name = "SLEEP"
exit_latency_us = 280
target_residency_us = 2000
[[cluster.opp]]
freq_khz = 1000000
"#;

/// One CPU running cyclictest; `limit_us`: cpu0's resume latency from the start.
fn one_cpu(limit_us: Option<i32>) -> CpuRunSpec {
    let qos = limit_us.map(|us| QosAction {
        at: Nanos::ZERO,
        holder: SYSFS_HOLDER,
        target: QosTarget::ResumeLatency { cpu: 0 },
        op: QosOp::Set(us),
    });
    CpuRunSpec {
        platform: CpuPlatform::parse("one.toml", ONE_CPU).unwrap(),
        governor: GovernorName::parse("oracle").unwrap(),
        hz: 250,
        tasks: vec![TaskSpec::cyclictest("cyclic", 0, Nanos::from_ms(10))],
        qos: qos.into_iter().collect(),
        seed: 1,
        irq: vec![IrqMap::Managed],
        cpufreq: crate::cpufreq::GovernorName::Performance,
        rate_limit_us: None,
    }
}

fn traced(spec: &CpuRunSpec, until: Nanos, form: Form) -> (String, CpuReport) {
    let mut w = FtraceWriter::new(Vec::new(), spec, form).unwrap();
    let system = CpuSystem::new(spec).unwrap().traced(&mut w);
    let (report, _, _) = crate::world::run_cpus(system, until, |_| true);
    (String::from_utf8(w.finish().unwrap()).unwrap(), report)
}

const HEADER: &str = "\
# tracer: nop
#
# entries-in-buffer/entries-written: not known while streaming (torpor simulation)   #P:1
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
";

#[test]
fn a_cyclictest_under_the_oracle_written_by_hand() {
    // The oracle sleeps in SLEEP with the tick stopped (the timer is 10 ms away, more than a
    // 4 ms tick). At 10 ms the task's timer fires; the CPU is out 280 us later, handles the
    // timer interrupt, wakes the task and switches to it; 5 us later the task re-arms its
    // absolute timer for 20 ms and sleeps; the tick, restarted for the task, is stopped again.
    // No miss: 10.28 ms is past SLEEP's 2 ms and no state is deeper. The run ends at 25 ms in
    // SLEEP, with no exit line.
    let idle = "          <idle>-0       [000]";
    let task = "          cyclic-1000    [000]";
    let timer = "hrtimer=ffffff8010000000 function=hrtimer_wakeup";
    let mut want = HEADER.to_string();
    // The platform's one OPP: where the CPU starts, written first.
    want += &format!(
        "{idle} d..1.     0.000000000: cpu_frequency: state=1000000 cpu_id=0\n\
         {idle} d..1.     0.000000000: tick_stop: success=1 dependency=NONE\n\
         {idle} d..1.     0.000000000: cpu_idle: state=1 cpu_id=0\n"
    );
    for (ready, now, done, next) in [
        ("010280000", "10280000", "010285000", "20000000"),
        ("020280000", "20280000", "020285000", "30000000"),
    ] {
        want += &format!(
            "{idle} d..1.     0.{ready}: cpu_idle: state=4294967295 cpu_id=0\n\
             {idle} d.h1.     0.{ready}: irq_handler_entry: irq=11 name=arch_timer\n\
             {idle} d.h1.     0.{ready}: hrtimer_expire_entry: {timer} now={now}\n\
             {idle} dnh2.     0.{ready}: sched_wakeup: comm=cyclic pid=1000 prio=120 \
             target_cpu=000\n\
             {idle} d..2.     0.{ready}: sched_switch: prev_comm=swapper/0 prev_pid=0 \
             prev_prio=120 prev_state=R ==> next_comm=cyclic next_pid=1000 next_prio=120\n\
             {task} d..1.     0.{done}: hrtimer_start: {timer} expires={next} \
             softexpires={next} mode=ABS\n\
             {task} d..2.     0.{done}: sched_switch: prev_comm=cyclic prev_pid=1000 \
             prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
             {idle} d..1.     0.{done}: tick_stop: success=1 dependency=NONE\n\
             {idle} d..1.     0.{done}: cpu_idle: state=1 cpu_id=0\n"
        );
    }
    let (got, _) = traced(&one_cpu(None), Nanos::from_ms(25), Form::Raw);
    assert_lines_eq(&got, &want);
}

#[test]
fn a_too_shallow_period_is_written_as_a_below_miss_after_the_wake_up() {
    // A 200 us latency limit keeps the CPU in WFI (1 us exit): at 10 ms the CPU is out at
    // 10.001 ms; 10.001 ms - 1 us of exit would have fitted SLEEP's 2 ms, so the core counts
    // "below" and traces it once the interrupt is handled. Idle again at 10.006 ms.
    let idle = "          <idle>-0       [000]";
    let task = "          cyclic-1000    [000]";
    let timer = "hrtimer=ffffff8010000000 function=hrtimer_wakeup";
    let want = format!(
        "{HEADER}\
         {idle} d..1.     0.000000000: cpu_frequency: state=1000000 cpu_id=0\n\
         {idle} d..1.     0.000000000: tick_stop: success=1 dependency=NONE\n\
         {idle} d..1.     0.000000000: cpu_idle: state=0 cpu_id=0\n\
         {idle} d..1.     0.010001000: cpu_idle: state=4294967295 cpu_id=0\n\
         {idle} d.h1.     0.010001000: irq_handler_entry: irq=11 name=arch_timer\n\
         {idle} d.h1.     0.010001000: hrtimer_expire_entry: {timer} now=10001000\n\
         {idle} dnh2.     0.010001000: sched_wakeup: comm=cyclic pid=1000 prio=120 \
         target_cpu=000\n\
         {idle} d..1.     0.010001000: cpu_idle_miss: cpu_id=0 state=0 type=below\n\
         {idle} d..2.     0.010001000: sched_switch: prev_comm=swapper/0 prev_pid=0 \
         prev_prio=120 prev_state=R ==> next_comm=cyclic next_pid=1000 next_prio=120\n\
         {task} d..1.     0.010006000: hrtimer_start: {timer} expires=20000000 \
         softexpires=20000000 mode=ABS\n\
         {task} d..2.     0.010006000: sched_switch: prev_comm=cyclic prev_pid=1000 \
         prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
         {idle} d..1.     0.010006000: tick_stop: success=1 dependency=NONE\n\
         {idle} d..1.     0.010006000: cpu_idle: state=0 cpu_id=0\n"
    );
    let (got, _) = traced(&one_cpu(Some(200)), Nanos::from_ms(15), Form::Raw);
    assert_lines_eq(&got, &want);
}

fn assert_lines_eq(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count());
}

/// Two clusters of two CPUs; the little one has a polling state, the big one a cluster state.
const TWO_CLUSTERS: &str = r#"
id = "two"
name = "two clusters"
source = "test"
[[cluster]]
name = "little"
cpus = [0, 1]
capacity = 512
[[cluster.state]]
name = "POLL"
polling = true
exit_latency_us = 0
target_residency_us = 0
[[cluster.state]]
name = "WFI"
exit_latency_us = 2
target_residency_us = 20
[[cluster.state]]
name = "CPU_OFF"
exit_latency_us = 150
target_residency_us = 900
[[cluster.opp]]
freq_khz = 1000000
[[cluster]]
name = "big"
cpus = [2, 3]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 30
[[cluster.state]]
name = "CPU_OFF"
exit_latency_us = 200
target_residency_us = 1500
[[cluster.state]]
name = "CLUSTER_OFF"
level = "cluster"
exit_latency_us = 900
target_residency_us = 4000
[[cluster.opp]]
freq_khz = 2000000
"#;

fn busy_platform(governor: &str, seed: u64) -> CpuRunSpec {
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
    CpuRunSpec {
        platform: CpuPlatform::parse("two.toml", TWO_CLUSTERS).unwrap(),
        governor: GovernorName::parse(governor).unwrap(),
        hz: 250,
        tasks: vec![
            task(
                "audio",
                0,
                Wake::Periodic {
                    period: us(2_500),
                    phase: us(700),
                    jitter: us(300),
                    source: Source::Timer,
                },
                Dist::Uniform(us(20), us(80)),
                Some(2),
            ),
            task(
                "net rx",
                1,
                Wake::Sleep {
                    sleep: Dist::Exponential(us(900)),
                    source: Source::Interrupt,
                },
                Dist::Exponential(us(40)),
                None,
            ),
            task(
                "mixer",
                3,
                Wake::ByTask,
                Dist::Uniform(us(30), us(120)),
                None,
            ),
            task(
                "poller",
                3,
                Wake::Sleep {
                    sleep: Dist::Uniform(us(3_000), us(9_000)),
                    source: Source::Timer,
                },
                Dist::Fixed(us(15)),
                None,
            ),
        ],
        qos: vec![],
        seed,
        irq: vec![IrqMap::Managed],
        cpufreq: crate::cpufreq::GovernorName::Performance,
        rate_limit_us: None,
    }
}

#[test]
fn the_same_run_writes_the_same_bytes() {
    let spec = busy_platform("menu", 7);
    let a = traced(&spec, Nanos::from_ms(200), Form::Raw).0;
    assert_eq!(a, traced(&spec, Nanos::from_ms(200), Form::Raw).0);
    let mut other = spec.clone();
    other.seed = 8;
    assert_ne!(a, traced(&other, Nanos::from_ms(200), Form::Raw).0);
}

/// What a trace says per CPU and state.
type Cells = Vec<Vec<(u64, u64, u64, u64)>>;

/// Per CPU and state, what the trace says: entries, time in the state as the simulation counts
/// it (exit line minus entry: the exit latency included; an interval still open at the end
/// runs to the end), above and below misses; and the (CPU, state) of each interval open at
/// the end.
fn read_back(text: &str, spec: &CpuRunSpec, end: Nanos) -> (Cells, Vec<(usize, usize)>) {
    let ids = spec.platform.cpus();
    let mut per = vec![vec![(0u64, 0u64, 0u64, 0u64); 3]; ids.len()];
    let mut open: Vec<Option<(usize, u64)>> = vec![None; ids.len()];
    let mut r = FtraceReader::new(text.as_bytes(), "written").unwrap();
    while let Some(ev) = r.next_event().unwrap() {
        match ev.kind {
            EventKind::CpuIdle { state, cpu_id } => {
                let c = cpu_id as usize;
                assert_eq!(ev.cpu, cpu_id);
                match state {
                    Some(s) => {
                        assert!(open[c].is_none(), "line {}: entry inside idle", ev.line);
                        open[c] = Some((s as usize, ev.timestamp_ns));
                        per[c][s as usize].0 += 1;
                    }
                    None => {
                        let (s, t0) = open[c].take().expect("exit after an entry");
                        // The simulation counts the exit in the state's time, as the kernel's
                        // residency does: entry line to exit line.
                        per[c][s].1 += ev.timestamp_ns - t0;
                    }
                }
            }
            EventKind::CpuIdleMiss {
                cpu_id,
                state,
                below,
            } => {
                let cell = &mut per[cpu_id as usize][state as usize];
                if below {
                    cell.3 += 1;
                } else {
                    cell.2 += 1;
                }
            }
            _ => {}
        }
    }
    for (c, o) in open.iter().enumerate() {
        if let Some((s, t0)) = o {
            per[c][*s].1 += end.0 - t0;
        }
    }
    let counts = r.counts();
    assert_eq!(counts.backwards_timestamps, 0);
    assert!(!counts.truncated_last_line);
    let open_at_end = open
        .iter()
        .enumerate()
        .filter_map(|(c, o)| o.map(|(s, _)| (c, s)))
        .collect();
    (per, open_at_end)
}

#[test]
fn read_back_the_trace_gives_the_runs_own_counts_and_times() {
    let end = Nanos::from_ms(300);
    for governor in ["menu", "teo", "ladder"] {
        let spec = busy_platform(governor, 3);
        let (text, report) = traced(&spec, end, Form::Raw);
        let (got, open) = read_back(&text, &spec, end);
        let mut misses = 0;
        for (c, cpu) in report.cpus.iter().enumerate() {
            for (s, st) in cpu.states.iter().enumerate() {
                let want = (st.entries, st.time_ns, st.above, st.below);
                let what = format!("{governor}: cpu{} {}", cpu.cpu, st.name);
                if open.contains(&(c, s)) {
                    // The run may end while this CPU wakes: the simulation has ended the period
                    // (its time stops at the wake-up, and it may count a miss), but the exit
                    // line, after the exit latency, falls beyond the end of the trace.
                    let (n, t, above, below) = got[c][s];
                    assert_eq!(n, st.entries, "{what}");
                    assert!(t >= st.time_ns, "{what}");
                    assert!(st.above + st.below - (above + below) <= 1, "{what}");
                } else {
                    assert_eq!(got[c][s], want, "{what}");
                }
                misses += st.above + st.below;
            }
            assert!(cpu.states.iter().any(|s| s.entries > 0));
        }
        assert!(misses > 0, "{governor}: the run should miss sometimes");
        // Every task run is a switch to it; every wake-up that ran was traced.
        let mut r = FtraceReader::new(text.as_bytes(), "written").unwrap();
        let (mut to_task, mut wakeups, mut ipis) = (0u64, 0u64, 0u64);
        while let Some(ev) = r.next_event().unwrap() {
            match ev.kind {
                EventKind::SchedSwitch { next_pid, .. } if next_pid != 0 => to_task += 1,
                EventKind::SchedWakeup { .. } => wakeups += 1,
                EventKind::IpiEntry { .. } => ipis += 1,
                _ => {}
            }
        }
        let ran: u64 = report.tasks.iter().map(|t| t.wakeups).sum();
        assert_eq!(to_task, ran, "{governor}");
        // Wake-ups still waiting at the end were traced but never ran.
        assert!(wakeups >= ran && wakeups <= ran + report.tasks.len() as u64);
        // "audio" on the little cluster wakes "mixer" on the big one, often asleep.
        assert!(ipis > 0, "{governor}");
    }
}

#[test]
fn a_trace_over_a_gibibyte_by_the_estimate_is_refused_up_front() {
    // 5,368,709 events x 200 bytes = 1,073,741,800 <= 2^30 = 1,073,741,824; one more passes.
    assert!(check_trace_size(5_368_709).is_ok());
    let e = check_trace_size(5_368_710).unwrap_err();
    assert_eq!(
        e,
        "--ftrace: this variant's idle trace would take about 1.1e9 bytes (5.4e6 CPU events at \
         about 200 bytes each), more than the limit of 1 GiB per trace; shorten `[run] duration`"
    );
    assert!(check_trace_size(u64::MAX).is_err());
}
