//! The CPU system on runs whose every event can be followed by hand.

use super::*;
use crate::cpu::platform::CpuPlatform;
use crate::cpu::task::{Dist, TaskSpec};

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

fn spec(governor: &str, latency_req_ns: Vec<(u32, i64)>) -> CpuRunSpec {
    CpuRunSpec {
        platform: CpuPlatform::parse("one.toml", ONE_CPU).unwrap(),
        governor: GovernorName::parse(governor).unwrap(),
        hz: 250,
        tasks: vec![TaskSpec::cyclictest("cyclic", 0, Nanos::from_ms(10))],
        latency_req_ns,
        seed: 1,
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
    let r = run(&spec("oracle", vec![(0, 200_000)]), Nanos::from_ms(995)).unwrap();
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
    });
    let a = run(&s, Nanos::from_ms(500)).unwrap();
    let b = run(&s, Nanos::from_ms(500)).unwrap();
    assert_eq!(a, b);
    s.seed = 2;
    assert_ne!(run(&s, Nanos::from_ms(500)).unwrap(), a);
}
