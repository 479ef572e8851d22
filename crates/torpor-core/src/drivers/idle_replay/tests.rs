//! Hand-written traces whose replay is worked out by hand below each test, and a generated
//! sequence whose bookkeeping is checked against a plain per-period method.

use super::replayer::StateCost;
use super::*;
use crate::cpuidle::{classify, Device, Governor, Kernel, Miss};

/// One cluster of two CPUs, HZ=250 (tick 4 ms). States (exit / target residency / power):
/// S0 WFI 1 us / 1 us / 10 mW; S1 CPU_OFF 100 us / 500 us / 2 mW; S2 DEEP 1000 us / 5000 us /
/// 1 mW; active power 100 mW.
const PLATFORM: &str = r#"
id = "replay-test"
name = "replay test"
source = "written for this test"
[[cluster]]
name = "c"
cpus = [0, 1]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 10.0, source = "test" }
[[cluster.state]]
name = "CPU_OFF"
exit_latency_us = 100
target_residency_us = 500
power_mw = { mw = 2.0, source = "test" }
[[cluster.state]]
name = "DEEP"
exit_latency_us = 1000
target_residency_us = 5000
power_mw = { mw = 1.0, source = "test" }
[[cluster.opp]]
freq_khz = 1000000
power_mw = { mw = 100.0, source = "test" }
"#;

fn platform() -> CpuPlatform {
    CpuPlatform::parse("p.toml", PLATFORM).unwrap()
}

/// A raw `trace` file of two CPUs from `(cpu, seconds, event text)` lines.
fn trace(lines: &[(u32, &str, &str)]) -> String {
    let mut t = String::from("# tracer: nop\n#\n#P:2\n");
    for (cpu, ts, ev) in lines {
        t += &format!("          <idle>-0     [{cpu:03}] d..2 {ts}: {ev}\n");
    }
    t
}

fn idle(cpu: u32, ts: &'static str, state: u32) -> (u32, &'static str, String) {
    (cpu, ts, format!("cpu_idle: state={state} cpu_id={cpu}"))
}

fn exit(cpu: u32, ts: &'static str) -> (u32, &'static str, String) {
    (cpu, ts, format!("cpu_idle: state=4294967295 cpu_id={cpu}"))
}

fn run(lines: &[(u32, &'static str, String)], governors: &str) -> ReplayReport {
    let borrowed: Vec<(u32, &str, &str)> =
        lines.iter().map(|(c, t, e)| (*c, *t, e.as_str())).collect();
    let text = trace(&borrowed);
    let p = platform();
    from_reader(
        text.as_bytes(),
        "t.txt",
        Some((&p, "platform")),
        &IdleReplayOptions {
            governors: parse_governors(governors).unwrap(),
            hz: Some(250),
        },
    )
    .unwrap()
}

fn summary(r: &ReplayReport, governor: &str) -> Summary {
    r.governors
        .iter()
        .find(|(n, _)| n == governor)
        .map(|(_, c)| c.total.clone())
        .unwrap()
}

fn entries(s: &Summary) -> Vec<u64> {
    s.states.iter().map(|s| s.entries).collect()
}

#[test]
fn the_oracle_and_the_traced_kernel_on_three_periods_without_timer_events() {
    // CPU 0: 200 us in S0, 2 ms in DEEP, 10 ms in CPU_OFF; no timer, irq or switch events.
    let r = run(
        &[
            idle(0, "100.000000", 0),
            exit(0, "100.000200"),
            idle(0, "100.001000", 2),
            exit(0, "100.003000"),
            idle(0, "100.010000", 1),
            exit(0, "100.020000"),
        ],
        "oracle",
    );
    assert_eq!(r.periods, 3);
    // The oracle takes the deepest target residency within the duration: 200 us -> WFI,
    // 2 ms -> CPU_OFF (500 us <= 2 ms < 5 ms), 10 ms -> DEEP. None is too deep (each target
    // fits) nor too shallow (2 ms - 0 < 5 ms for the next state; 200 us < 500 us).
    let o = summary(&r, "oracle");
    assert_eq!((o.periods, o.too_deep, o.too_shallow), (3, 0, 0));
    assert_eq!(entries(&o), [1, 1, 1]);
    // Exit latencies 1 + 100 + 1000 us.
    assert_eq!(o.added_latency_ns, 1_101_000);
    // Energy: each state's power through its exit (mW x us x 1e-6 = mJ), plus its entry and
    // exit energy E(s) = E(s-1) + (P(s-1) - P(s)) x target: E(CPU_OFF) = 8 x 500 = 0.004,
    // E(DEEP) = 0.004 + 1 x 5000 = 0.009. WFI 10 x 201 = 0.00201; CPU_OFF 2 x 2100 + 0.004 =
    // 0.0082; DEEP 1 x 11000 + 0.009 = 0.020; total 0.03021.
    assert!((o.idle_energy_mj.unwrap() - 0.03021).abs() < 1e-12);
    // Ticks: the sleep length is reconstructed as max(duration, 4 ms) = 4, 4 and 10 ms; only
    // the last is more than a tick away, so only there can the tick stop (and the oracle, whose
    // 10 ms period outlasts the 4 ms to the tick, stops it). None of the two kept-tick periods
    // outlasts the 4 ms to the tick.
    assert_eq!((o.tick_kept, o.tick_before_wakeup), (Some(2), Some(0)));
    // The traced kernel: WFI 200 us (fine); DEEP for 2 ms: 2 ms + 1 ms exit = 3 ms < 5 ms,
    // too deep; CPU_OFF for 10 ms: 10.1 ms - 0.1 ms = 10 ms >= 5 ms of DEEP, too shallow.
    let a = &r.actual.total;
    assert_eq!((a.periods, a.too_deep, a.too_shallow), (3, 1, 1));
    assert!((a.too_deep_pct - 100.0 / 3.0).abs() < 1e-9);
    // WFI 0.00201; DEEP 1 x 3000 + 0.009 = 0.012; CPU_OFF 2 x 10100 + 0.004 = 0.0242.
    assert!((a.idle_energy_mj.unwrap() - 0.03821).abs() < 1e-12);
    assert_eq!(a.tick_kept, None);
    assert_eq!(a.kernel_reported, Some(KernelMisses::default()));
    // Every input but the causes is reconstructed; the report says so.
    assert_eq!(r.wake_causes.unknown, 3);
    let sleep = r.inputs.iter().find(|i| i.input == "sleep_length").unwrap();
    assert_eq!((sleep.observed, sleep.reconstructed), (0, 3));
    assert!(sleep
        .how
        .contains("3 as max(idle duration, TICK_NSEC = 4000000 ns)"));
    let trip = r.inputs.iter().find(|i| i.input == "idle_trip").unwrap();
    assert_eq!((trip.observed, trip.reconstructed), (0, 3));
}

#[test]
fn ladder_climbs_after_four_long_periods_and_the_oracle_does_not_need_to() {
    // CPU 1: six periods of 1 ms, then one of 50 us, all traced in WFI.
    let mut lines = Vec::new();
    let starts = [
        "1.000", "1.010", "1.020", "1.030", "1.040", "1.050", "1.060",
    ];
    let ends = [
        "1.001", "1.011", "1.021", "1.031", "1.041", "1.051", "1.060050",
    ];
    for (s, e) in starts.iter().zip(ends) {
        lines.push(idle(1, s, 0));
        lines.push(exit(1, e));
    }
    let r = run(&lines, "ladder,oracle");
    // ladder starts on S0. Select 1: last residency 0 minus S0's 1 us exit wraps as u64, which
    // beats the 1 us promotion time: count 1. Selects 2-4: 1 ms + 1 us - 1 us = 1 ms > 1 us:
    // counts 2, 3, 4 -> the 4th select moves to S1. Selects 5-7 on S1: 1.1 ms - 0.1 ms = 1 ms
    // > 100 us promotes (counts 1, 2, 3: not yet 4) and is not below the 100 us demotion time.
    // So S0 x3, S1 x4. S0 for 1 ms: 1 ms >= CPU_OFF's 500 us: too shallow x3. S1 for 1 ms: fine.
    // S1 for 50 us: 150 us < 500 us: too deep.
    let l = summary(&r, "ladder");
    assert_eq!(entries(&l), [3, 4, 0]);
    assert_eq!((l.too_deep, l.too_shallow), (1, 3));
    // The oracle: CPU_OFF for each 1 ms period, WFI for the 50 us one; no miss.
    let o = summary(&r, "oracle");
    assert_eq!(entries(&o), [1, 6, 0]);
    assert_eq!((o.too_deep, o.too_shallow), (0, 0));
    // The traced kernel's WFI for 1 ms is too shallow six times.
    assert_eq!(
        (r.actual.total.too_deep, r.actual.total.too_shallow),
        (0, 6)
    );
    assert_eq!(r.actual.per_cpu.len(), 1);
    assert_eq!(r.actual.per_cpu[0].cpu, 1);
}

#[test]
fn menu_and_teo_run_on_every_period() {
    let mut lines = Vec::new();
    let pairs = [
        ("2.000", "2.000100"),
        ("2.001", "2.009"),
        ("2.010", "2.010050"),
        ("2.011", "2.030"),
    ];
    for (cpu, (s, e)) in [0u32, 1]
        .iter()
        .flat_map(|c| pairs.iter().map(move |p| (*c, *p)))
    {
        lines.push(idle(cpu, s, 0));
        lines.push(exit(cpu, e));
    }
    let r = run(&lines, "menu,teo,teo-util,menu@6.6,teo@6.6");
    assert_eq!(r.periods, 8);
    for g in ["menu", "teo", "teo-util", "menu@6.6", "teo@6.6"] {
        let s = summary(&r, g);
        assert_eq!(s.periods, 8, "{g}");
        assert_eq!(entries(&s).iter().sum::<u64>(), 8, "{g}");
    }
}

/// Collects the periods a trace rebuilds.
fn periods(lines: &[(u32, &'static str, String)]) -> (Vec<Period>, Dropped) {
    let borrowed: Vec<(u32, &str, &str)> =
        lines.iter().map(|(c, t, e)| (*c, *t, e.as_str())).collect();
    let text = trace(&borrowed);
    let mut reader = FtraceReader::new(text.as_bytes(), "t.txt").unwrap();
    let mut b = PeriodBuilder::new(4_000_000, |_| 1024, 2);
    let mut out = Vec::new();
    let mut emit = |p: Period, _line: usize| {
        out.push(p);
        Ok(())
    };
    while let Some(ev) = reader.next_event().unwrap() {
        b.on_event(ev.cpu, ev.timestamp_ns, ev.line, &ev.kind, &mut emit)
            .unwrap();
    }
    b.finish(&mut emit).unwrap();
    (out, b.dropped.clone())
}

#[test]
fn timers_causes_trips_and_utilization_come_from_their_events() {
    let (p, dropped) = periods(&[
        // CPU 0 runs a task for 1024 PELT units (1 048 576 ns) from time 0, then idles.
        (
            0,
            "0.000000000",
            "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> \
             next_comm=t next_pid=100 next_prio=120"
                .into(),
        ),
        (
            0,
            "0.001048576",
            "sched_switch: prev_comm=t prev_pid=100 prev_prio=120 prev_state=S ==> \
             next_comm=swapper/0 next_pid=0 next_prio=120"
                .into(),
        ),
        // CPU 1: a timer for 3 ms, then idle at 0.5 ms (the trace clock and the hrtimer clock
        // are taken to agree until an expiry says otherwise).
        (
            1,
            "0.000000",
            "hrtimer_start: hrtimer=00000000deadbeef function=hrtimer_wakeup expires=3000000 \
             softexpires=3000000"
                .into(),
        ),
        idle(1, "0.000500", 0),
        exit(1, "0.003000"),
        (
            1,
            "0.003010",
            "hrtimer_expire_entry: hrtimer=00000000deadbeef function=hrtimer_wakeup now=3000100"
                .into(),
        ),
        // CPU 0 idles after its task; CPU 1 wakes a task on it.
        idle(0, "0.003200", 2),
        (
            1,
            "0.003500",
            "sched_wakeup: comm=t pid=100 prio=120 target_cpu=000".into(),
        ),
        exit(0, "0.003600"),
        // Woken by an IPI after 300 us: no timer pending any more.
        idle(1, "0.004000", 1),
        exit(1, "0.004300"),
        (1, "0.004305", "ipi_entry: (Rescheduling interrupts)".into()),
        // An exit with no entry, and an entry never closed.
        exit(1, "0.005000"),
        idle(1, "0.006000", 0),
    ]);
    assert_eq!(p.len(), 3);
    let cpu1: Vec<&Period> = p.iter().filter(|p| p.cpu == 1).collect();
    // Entry at 0.5 ms, timer at 3.0 ms: a 2.5 ms sleep length, observed; woken by that timer.
    assert_eq!(cpu1[0].to_timer_ns, 2_500_000);
    assert_eq!(cpu1[0].sleep_from, SleepFrom::PendingTimer);
    assert_eq!(cpu1[0].cause, Cause::Timer);
    assert_eq!(cpu1[0].duration_ns, 2_500_000);
    // Nothing pending: max(300 us, 4 ms); an IPI.
    assert_eq!(
        (cpu1[1].to_timer_ns, cpu1[1].sleep_from, cpu1[1].cause),
        (4_000_000, SleepFrom::Assumed, Cause::Ipi)
    );
    assert!(!cpu1[0].util_observed);
    // CPU 0: PELT after one full period of running from 0 at capacity 1024 (pelt's
    // hand-worked case): util 21. The switch ended a trip; the wake-up came from CPU 1.
    let cpu0 = p.iter().find(|p| p.cpu == 0).unwrap();
    assert_eq!((cpu0.util, cpu0.util_observed), (21, true));
    assert!(cpu0.new_trip);
    assert_eq!(cpu0.cause, Cause::RemoteWakeup);
    assert_eq!(cpu0.actual_state, 2);
    // With a sched_switch seen, CPU 1's second period continues the first one's trip.
    assert!(!cpu1[1].new_trip);
    assert_eq!((dropped.exits_without_entry, dropped.open_at_end), (1, 1));
}

#[test]
fn a_remote_sched_waking_is_its_own_cause_and_sched_wakeup_wins() {
    let (p, _) = periods(&[
        // CPU 0 idles; CPU 1 wakes a task whose last CPU was 0: only a sched_waking.
        idle(0, "0.001000", 1),
        (
            1,
            "0.001500",
            "sched_waking: comm=t pid=100 prio=120 target_cpu=000".into(),
        ),
        exit(0, "0.001600"),
        // CPU 0 idles again: a sched_waking then the sched_wakeup of the same wake-up.
        idle(0, "0.002000", 1),
        (
            1,
            "0.002500",
            "sched_waking: comm=t pid=100 prio=120 target_cpu=000".into(),
        ),
        (
            1,
            "0.002501",
            "sched_wakeup: comm=t pid=100 prio=120 target_cpu=000".into(),
        ),
        exit(0, "0.002600"),
        // A waking issued on the CPU itself is no remote wake-up.
        idle(1, "0.003000", 1),
        (
            1,
            "0.003100",
            "sched_waking: comm=u pid=101 prio=120 target_cpu=001".into(),
        ),
        exit(1, "0.003200"),
    ]);
    let causes: Vec<(u32, Cause)> = p.iter().map(|p| (p.cpu, p.cause)).collect();
    assert_eq!(
        causes,
        vec![
            (0, Cause::RemoteWaking),
            (0, Cause::RemoteWakeup),
            (1, Cause::Unknown)
        ]
    );
}

#[test]
fn the_tick_timer_rearms_itself_and_a_timer_irq_yields_to_the_hrtimer_it_ran() {
    let (p, _) = periods(&[
        (
            0,
            "1.000000",
            "hrtimer_start: hrtimer=0000000000000001 function=tick_sched_timer expires=1004000000 \
             softexpires=1004000000"
                .into(),
        ),
        idle(0, "1.001000", 1),
        exit(0, "1.004000"),
        (
            0,
            "1.004001",
            "irq_handler_entry: irq=3 name=arch_timer".into(),
        ),
        (
            0,
            "1.004002",
            "hrtimer_expire_entry: hrtimer=0000000000000001 function=tick_sched_timer \
             now=1004000500"
                .into(),
        ),
        // The tick is due again at 1.008 (re-armed by one period, no start event).
        idle(0, "1.005000", 1),
        exit(0, "1.005100"),
        (
            0,
            "1.005101",
            "irq_handler_entry: irq=3 name=arch_timer".into(),
        ),
    ]);
    // First period: the tick 3 ms away (observed); no other timer and a tick wake-up: the sleep
    // length is the wake-up (3 ms), and the cause the tick, not the irq that carried it.
    assert_eq!((p[0].to_tick_ns, p[0].tick_observed), (3_000_000, true));
    assert_eq!(
        (p[0].cause, p[0].sleep_from),
        (Cause::Tick, SleepFrom::TimerWakeup)
    );
    // Second: the tick at 1.004 + 4 ms = 1.008 is 3 ms after the 1.005 entry. The clock offset the
    // expiry measured (now - trace time = -1.5 us) does not move an already pending timer. A bare arch_timer irq
    // is a timer.
    assert_eq!(p[1].to_tick_ns, 3_000_000);
    assert_eq!(p[1].cause, Cause::Timer);
    assert_eq!(p[1].to_timer_ns, 100_000);
}

#[test]
fn a_state_beyond_the_platform_or_a_cpu_outside_it_is_refused_at_its_line() {
    let p = platform();
    let opts = IdleReplayOptions {
        governors: parse_governors("oracle").unwrap(),
        hz: None,
    };
    let deep = trace(&[
        (0, "1.0", "cpu_idle: state=3 cpu_id=0"),
        (0, "1.1", "cpu_idle: state=4294967295 cpu_id=0"),
    ]);
    let e = from_reader(deep.as_bytes(), "t.txt", Some((&p, "platform")), &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.txt:4: cpu_idle state=3 on CPU 0, but the platform's cluster \"c\" has 3 states (0 \
         to 2); expected the platform of the traced machine"
    );
    let wide = "cpus=3\n  <idle>-0 [002] 1.000000: cpu_idle: state=0 cpu_id=2\n";
    let e = from_reader(wide.as_bytes(), "w.txt", Some((&p, "platform")), &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "w.txt:2: CPU 2 is in no cluster of the platform; expected the platform of the traced \
         machine"
    );
    let e = from_reader(deep.as_bytes(), "t.txt", None, &opts).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("t.txt: the trace carries no C-state table"));
}

/// Two clusters for the bookkeeping check: a polling state, a disabled state, a cluster-level
/// state in cluster `a`; power figures in both.
const MIXED: &str = r#"
id = "replay-mixed"
name = "replay mixed"
source = "written for this test"
[[cluster]]
name = "a"
cpus = [0, 1, 2]
capacity = 1024
[[cluster.state]]
name = "POLL"
polling = true
exit_latency_us = 0
target_residency_us = 0
power_mw = { mw = 20.0, source = "test" }
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 10.0, source = "test" }
[[cluster.state]]
name = "CPU_OFF"
exit_latency_us = 100
target_residency_us = 500
power_mw = { mw = 2.0, source = "test" }
[[cluster.state]]
name = "MID"
exit_latency_us = 300
target_residency_us = 1200
disabled = true
power_mw = { mw = 1.5, source = "test" }
[[cluster.state]]
name = "DEEP"
level = "cluster"
exit_latency_us = 1000
target_residency_us = 5000
power_mw = { mw = 0.5, source = "test" }
[[cluster]]
name = "b"
cpus = [3, 4]
capacity = 512
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 8.0, source = "test" }
[[cluster.state]]
name = "OFF"
exit_latency_us = 200
target_residency_us = 800
power_mw = { mw = 0.7, source = "test" }
"#;

/// Periods on CPUs 0..5 of every cause, trip start and sleep-length kind, with durations from
/// a few us to 20 ms (a xorshift sequence: the same every run).
fn generated_periods(n: usize) -> Vec<Period> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut t = [0u64; 5];
    let causes = [
        Cause::Timer,
        Cause::Tick,
        Cause::Ipi,
        Cause::Irq,
        Cause::RemoteWakeup,
        Cause::Unknown,
    ];
    let from = [
        SleepFrom::PendingTimer,
        SleepFrom::TimerWakeup,
        SleepFrom::Assumed,
    ];
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let cpu = (x % 5) as u32;
            let duration = match (x >> 8) % 4 {
                0 => 1 + (x >> 12) % 2_000,
                1 => 2_000 + (x >> 12) % 600_000,
                2 => 500_000 + (x >> 12) % 6_000_000,
                _ => 1_000_000 + (x >> 12) % 20_000_000,
            };
            let entry = t[cpu as usize];
            t[cpu as usize] += duration + 10_000;
            Period {
                cpu,
                entry_ns: entry,
                duration_ns: duration,
                actual_state: (x >> 40) as usize % if cpu < 3 { 5 } else { 2 },
                to_timer_ns: duration + (x >> 44) % 3 * (x >> 20) % 8_000_000,
                sleep_from: from[(x >> 50) as usize % 3],
                to_tick_ns: 1 + (x >> 24) % 4_000_000,
                tick_observed: (x >> 52) & 1 == 1,
                cause: causes[(x >> 53) as usize % 6],
                util: (x >> 30) % 1100,
                util_observed: (x >> 58) & 1 == 1,
                new_trip: (x >> 59).is_multiple_of(3),
            }
        })
        .collect()
}

/// One governor on one CPU in the plain replay below.
struct PlainGov {
    governor: Box<dyn Governor>,
    dev: Device,
    kernel: Kernel,
    tick_stopped: bool,
}

/// One column's sums for one CPU in the plain replay.
#[derive(Clone, Debug, Default, PartialEq)]
struct PlainSums {
    entries: Vec<u64>,
    time_ns: Vec<u64>,
    too_deep: u64,
    too_shallow: u64,
    latency_ns: u64,
    energy_mj: f64,
    tick_kept: u64,
    tick_before_wakeup: u64,
}

impl PlainSums {
    /// Books a period the plain way: `classify` on the device, the state's power from the
    /// platform (mW x ns = 1e-9 mJ) plus its transition energy.
    fn book(&mut self, t: &ClusterTable, dev: &Device, idx: usize, d: u64, measured: u64) {
        let s = &t.view.states[idx];
        let exit = s.exit_latency_ns.max(0) as u64;
        self.entries[idx] += 1;
        self.time_ns[idx] += d;
        self.latency_ns += exit;
        match classify(&t.view, dev, idx, d + measured) {
            Miss::TooDeep => self.too_deep += 1,
            Miss::TooShallow => self.too_shallow += 1,
            Miss::None => {}
        }
        if let Some(mw) = &t.state_mw {
            self.energy_mj += mw[idx] * (d + exit) as f64 * 1e-9 + t.transition_mj[idx];
        }
    }

    fn of(s: &Summary) -> PlainSums {
        PlainSums {
            entries: s.states.iter().map(|s| s.entries).collect(),
            time_ns: s.states.iter().map(|s| s.time_ns).collect(),
            too_deep: s.too_deep,
            too_shallow: s.too_shallow,
            latency_ns: s.added_latency_ns,
            energy_mj: s.idle_energy_mj.unwrap_or(0.0),
            tick_kept: s.tick_kept.unwrap_or(0),
            tick_before_wakeup: s.tick_before_wakeup.unwrap_or(0),
        }
    }
}

#[test]
fn the_replay_books_every_period_as_the_plain_per_period_method_does() {
    // The plain method: each CPU's governors stepped through the same periods by the
    // module doc's rules, each period classified with `classify` and charged from the table.
    let p = CpuPlatform::parse("mixed.toml", MIXED).unwrap();
    let names = parse_governors("menu,teo,teo-util,oracle,ladder,haltpoll").unwrap();
    let layout = Layout::from_platform(&p, 4_000_000, "platform");
    let ps = generated_periods(20_000);
    let mut r = Replayer::new(layout.clone(), names.clone(), "mixed.toml").unwrap();
    for (line, q) in ps.iter().enumerate() {
        r.replay(*q, "t", line).unwrap();
    }
    let (actual, govs) = r.columns(&[], &active_time(&r.layout, &PstateTracker::default()));

    let table = |cpu: u32| &layout.clusters[layout.cpu_cluster[cpu as usize].unwrap()];
    let sums = |cpu: u32| PlainSums {
        entries: vec![0; table(cpu).view.state_count()],
        time_ns: vec![0; table(cpu).view.state_count()],
        ..PlainSums::default()
    };
    let device = |cpu: u32| {
        let mut d = Device::new(table(cpu).view.state_count());
        d.disabled.clone_from(&table(cpu).disabled);
        d
    };
    let mut plain_actual: Vec<PlainSums> = (0..5).map(sums).collect();
    let mut plain: Vec<Vec<(PlainGov, PlainSums)>> = (0..5)
        .map(|cpu| {
            names
                .iter()
                .map(|(_, g)| {
                    let mut dev = device(cpu);
                    let governor = g.build(&table(cpu).view, &mut dev);
                    let k = Kernel::default();
                    let gov = PlainGov {
                        governor,
                        dev,
                        kernel: k,
                        tick_stopped: false,
                    };
                    (gov, sums(cpu))
                })
                .collect()
        })
        .collect();
    for q in &ps {
        let t = table(q.cpu);
        let view = &t.view;
        let d = q.duration_ns;
        let actual_exit = view.states[q.actual_state].exit_latency_ns.max(0) as u64;
        plain_actual[q.cpu as usize].book(t, &device(q.cpu), q.actual_state, d, actual_exit);
        let can_stop = q.to_timer_ns > view.tick_ns as u64;
        for (g, s) in &mut plain[q.cpu as usize] {
            if q.new_trip {
                g.tick_stopped = false;
            }
            let delta_next = if g.tick_stopped {
                q.to_timer_ns
            } else {
                q.to_timer_ns.min(q.to_tick_ns)
            };
            let sleep = if can_stop { q.to_timer_ns } else { delta_next };
            g.kernel.sleep_length_ns = sleep as i64;
            g.kernel.delta_tick_ns = delta_next as i64;
            g.kernel.tick_stopped = g.tick_stopped;
            g.kernel.util = q.util.min(view.capacity);
            g.kernel.clock_ns = q.entry_ns;
            g.kernel.oracle_residency_ns = d as i64;
            let mut stop_tick = true;
            let idx = g
                .governor
                .select(view, &mut g.dev, &mut g.kernel, &mut stop_tick);
            if (stop_tick || g.tick_stopped) && can_stop {
                g.tick_stopped = true;
            } else {
                s.tick_kept += 1;
                s.tick_before_wakeup += u64::from(d > delta_next);
            }
            let polling = view.states[idx].polling;
            let measured = if polling {
                0
            } else {
                view.states[idx].exit_latency_ns as u64
            };
            s.book(t, &g.dev, idx, d, measured);
            g.dev.last_residency_ns = d + measured;
            if polling {
                g.dev.poll_time_limit = false;
            }
            g.kernel.got_idle_tick = q.cause == Cause::Tick;
            g.kernel.clock_ns = q.entry_ns + d + measured;
            g.governor.reflect(view, &mut g.dev, &mut g.kernel, idx);
        }
    }

    assert_eq!(actual.per_cpu.len(), 5);
    assert!(actual.total.idle_energy_mj.is_some());
    for (cpu, got) in actual.per_cpu.iter().enumerate() {
        assert_eq!(
            PlainSums::of(&got.summary),
            plain_actual[cpu],
            "actual, CPU {cpu}"
        );
    }
    for (i, (name, column)) in govs.iter().enumerate() {
        assert_eq!(column.per_cpu.len(), 5, "{name}");
        for (cpu, got) in column.per_cpu.iter().enumerate() {
            assert_eq!(
                PlainSums::of(&got.summary),
                plain[cpu][i].1,
                "{name}, CPU {cpu}"
            );
        }
    }
    // The plain sums saw periods of every kind, or the comparison would prove little.
    let all = |f: fn(&PlainSums) -> u64| plain.iter().flatten().map(|(_, s)| f(s)).sum::<u64>();
    assert!(all(|s| s.too_deep) > 0 && all(|s| s.too_shallow) > 0);
    assert!(all(|s| s.tick_kept) > 0 && all(|s| s.tick_before_wakeup) > 0);
    assert!(all(|s| s.entries[0]) > 0 && all(|s| s.entries[1]) > 0);
}

#[test]
fn the_per_state_bounds_classify_as_classify_does() {
    // Every state of a five-state table, under every set of disabled states, at residencies
    // around each exit latency, target residency and their sums (where the bounds fall).
    let p = CpuPlatform::parse("mixed.toml", MIXED).unwrap();
    let mut table = Layout::from_platform(&p, 4_000_000, "platform").clusters[0].clone();
    let states = table.view.states.clone();
    let mut marks: Vec<i64> = vec![0, i64::MAX];
    for a in &states {
        for b in &states {
            marks.push(a.target_residency_ns);
            marks.push(a.exit_latency_ns + b.target_residency_ns);
        }
    }
    for mask in 0u32..32 {
        table.disabled = (0..5).map(|i| mask >> i & 1 == 1).collect();
        let mut dev = Device::new(5);
        dev.disabled.clone_from(&table.disabled);
        for i in 0..5 {
            let s = StateCost::new(&table, &dev, i);
            for &m in &marks {
                for r in [m.saturating_sub(1), m, m.saturating_add(1)] {
                    let r = r as u64;
                    let bounds = if (r as i64) < s.too_deep_below {
                        Miss::TooDeep
                    } else if r as i64 > s.too_shallow_above {
                        Miss::TooShallow
                    } else {
                        Miss::None
                    };
                    let what = format!("state {i}, disabled {mask:05b}, residency {r}");
                    assert_eq!(bounds, classify(&table.view, &dev, i, r), "{what}");
                }
            }
        }
    }
}

/// The test platform with a second OPP: 500 MHz at 30 mW below 1 GHz at 100 mW.
fn two_opps() -> CpuPlatform {
    let text = PLATFORM.replace(
        "[[cluster.opp]]\nfreq_khz = 1000000",
        "[[cluster.opp]]\nfreq_khz = 500000\npower_mw = { mw = 30.0, source = \"test\" }\n\
         [[cluster.opp]]\nfreq_khz = 1000000",
    );
    CpuPlatform::parse("p.toml", &text).unwrap()
}

fn freq(cpu: u32, ts: &'static str, khz: u32) -> (u32, &'static str, String) {
    (cpu, ts, format!("cpu_frequency: state={khz} cpu_id={cpu}"))
}

#[test]
fn active_energy_at_two_traced_frequencies_by_hand() {
    // us after 100 s. cpu0:
    //   0     500 MHz (running)               500 MHz from 0
    //   300   WFI                             300 us at 500 MHz
    //   500   exit                            500 MHz from 500
    //   600   1 GHz                           100 us at 500 MHz; 1 GHz from 600
    //   1000  CPU_OFF                         400 us at 1 GHz
    //   3000  exit                            1 GHz from 3000
    //   3200  700 MHz, not an OPP             200 us at 1 GHz; 700 MHz from 3200
    //   3500  WFI                             300 us at 700 MHz: unlisted, charged at 1 GHz
    //   4000  exit                            700 MHz from 4000, open at the end
    // cpu1 (no cpu_frequency event): WFI 0..100, running 100..350 at an unknown frequency
    // (charged at 1 GHz, the policy's maximum), WFI from 350, exit at 2000, open at the end.
    // Active (mW x us x 1e-6 = mJ): 500 MHz 400 us x 30 = 0.012; 1 GHz 600 us x 100 = 0.06;
    // unlisted 300 us x 100 = 0.03; cpu1 250 us x 100 = 0.025; in all 0.127.
    // Idle, the traced kernel's states (power x (duration + exit) + transition energy):
    // cpu0 WFI 10 x (201 + 501) = 0.00702, CPU_OFF 2 x 2100 + 0.004 = 0.0082; cpu1 WFI
    // 10 x (101 + 1651) = 0.01752; in all 0.03274.
    let lines = [
        freq(0, "100.000000", 500_000),
        idle(1, "100.000000", 0),
        exit(1, "100.000100"),
        idle(0, "100.000300", 0),
        idle(1, "100.000350", 0),
        exit(0, "100.000500"),
        freq(0, "100.000600", 1_000_000),
        idle(0, "100.001000", 1),
        exit(1, "100.002000"),
        exit(0, "100.003000"),
        freq(0, "100.003200", 700_000),
        idle(0, "100.003500", 0),
        exit(0, "100.004000"),
    ];
    let borrowed: Vec<(u32, &str, &str)> =
        lines.iter().map(|(c, t, e)| (*c, *t, e.as_str())).collect();
    let p = two_opps();
    let r = from_reader(
        trace(&borrowed).as_bytes(),
        "t.txt",
        Some((&p, "platform")),
        &IdleReplayOptions {
            governors: parse_governors("oracle").unwrap(),
            hz: Some(250),
        },
    )
    .unwrap();
    let a = &r.active;
    assert_eq!(a.rule, "traced frequency, else highest OPP");
    assert_eq!(a.cpu_frequency_events, 3);
    assert_eq!(
        (a.traced_ns, a.unlisted_frequency_ns, a.unknown_frequency_ns),
        (1_000_000, 300_000, 250_000)
    );
    assert!((a.energy_mj.unwrap() - 0.127).abs() < 1e-12);
    let cpu0 = &a.per_cpu[0];
    assert_eq!((cpu0.cpu, cpu0.fallback_khz), (0, Some(1_000_000)));
    assert!((cpu0.energy_mj.unwrap() - 0.102).abs() < 1e-12);
    let actual = &r.actual.total;
    assert!((actual.idle_energy_mj.unwrap() - 0.03274).abs() < 1e-12);
    // The parts add up, in every column and on every CPU; the active part is the workload's,
    // the same in every column.
    for col in [&r.actual, &r.governors[0].1] {
        let t = &col.total;
        assert_eq!(t.active_energy_mj, a.energy_mj);
        let sum = t.idle_energy_mj.unwrap() + t.active_energy_mj.unwrap();
        assert!((t.energy_mj.unwrap() - sum).abs() < 1e-15);
        let per_cpu: f64 = col
            .per_cpu
            .iter()
            .map(|c| c.summary.energy_mj.unwrap())
            .sum();
        assert!((per_cpu - t.energy_mj.unwrap()).abs() < 1e-12);
    }
    assert!((actual.energy_mj.unwrap() - 0.15974).abs() < 1e-12);
    assert!(r.notes.iter().any(|n| n.contains("for 1.000 ms")));
}

#[test]
fn without_frequency_events_running_time_is_charged_at_the_policys_maximum() {
    // cpu0 runs 200..1000 and 3000..10000 us between its periods: 7.8 ms at 1 GHz, 100 mW:
    // 0.78 mJ.
    let r = run(
        &[
            idle(0, "100.000000", 0),
            exit(0, "100.000200"),
            idle(0, "100.001000", 2),
            exit(0, "100.003000"),
            idle(0, "100.010000", 1),
            exit(0, "100.020000"),
        ],
        "oracle",
    );
    assert_eq!(r.active.rule, "highest OPP");
    assert_eq!(r.active.unknown_frequency_ns, 7_800_000);
    assert!((r.active.energy_mj.unwrap() - 0.78).abs() < 1e-12);
    assert!((r.actual.total.energy_mj.unwrap() - (0.03821 + 0.78)).abs() < 1e-12);
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("the trace has no cpu_frequency events")));
}
