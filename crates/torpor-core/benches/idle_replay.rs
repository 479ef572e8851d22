//! Speed of `idle replay`, in idle periods per second: the governors alone (periods built in
//! memory, one governor per run, 8 CPUs) and the trace side (ftrace text parsed and idle periods
//! rebuilt, no governor). The end-to-end command on a large trace file is measured by hand
//! (docs/idle-replay.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::cpu::CpuPlatform;
use torpor_core::drivers::idle_replay::{
    parse_governors, Cause, Layout, Period, PeriodBuilder, Replayer, SleepFrom,
};
use torpor_core::trace::ftrace::FtraceReader;

const PLATFORM: &str = r#"
id = "bench"
name = "bench"
source = "bench"
[[cluster]]
name = "little"
cpus = [0, 1, 2, 3]
capacity = 446
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
power_mw = { mw = 5.0, source = "bench" }
[[cluster.state]]
name = "CPU_SLEEP"
exit_latency_us = 150
target_residency_us = 700
power_mw = { mw = 1.0, source = "bench" }
[[cluster.state]]
name = "CLUSTER_SLEEP"
level = "cluster"
exit_latency_us = 1000
target_residency_us = 3000
power_mw = { mw = 0.5, source = "bench" }
[[cluster]]
name = "big"
cpus = [4, 5, 6, 7]
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
[[cluster.state]]
name = "CPU_SLEEP"
exit_latency_us = 300
target_residency_us = 1500
[[cluster.state]]
name = "CLUSTER_SLEEP"
level = "cluster"
exit_latency_us = 1200
target_residency_us = 4000
"#;

/// Periods with a mix of short (interrupt) and long (timer) idles on 8 CPUs.
fn periods(n: usize) -> Vec<Period> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut t = [0u64; 8];
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let cpu = (i % 8) as u32;
            let timer = x.is_multiple_of(3);
            let duration = if timer {
                500_000 + x % 20_000_000
            } else {
                5_000 + x % 800_000
            };
            let entry = t[cpu as usize];
            t[cpu as usize] += duration + 50_000;
            Period {
                cpu,
                entry_ns: entry,
                duration_ns: duration,
                actual_state: (x >> 20) as usize % 3,
                to_timer_ns: if timer {
                    duration
                } else {
                    duration.max(4_000_000)
                },
                sleep_from: SleepFrom::Assumed,
                to_tick_ns: 4_000_000,
                tick_observed: false,
                cause: if timer { Cause::Timer } else { Cause::Irq },
                util: (x >> 30) % 400,
                util_observed: true,
                new_trip: x.is_multiple_of(5),
            }
        })
        .collect()
}

fn synthetic_trace(bytes: usize) -> Vec<u8> {
    let mut out = b"# tracer: nop\n#P:8\n".to_vec();
    let mut t = 100_000_000u64; // us
    let mut i = 0u64;
    while out.len() < bytes {
        let cpu = i % 8;
        let state = [0, 0, 1, 2][(i / 8 % 4) as usize];
        t += 1 + i * 7919 % 300;
        let line = format!(
            "          <idle>-0     [{cpu:03}] d..1 {}.{:06}: cpu_idle: state={state} cpu_id={cpu}\n\
             \x20         <idle>-0     [{cpu:03}] d..1 {}.{:06}: cpu_idle: state=4294967295 cpu_id={cpu}\n\
             \x20         <idle>-0     [{cpu:03}] d.h1 {}.{:06}: irq_handler_entry: irq=27 name=arch_timer\n",
            t / 1_000_000,
            t % 1_000_000,
            (t + 40) / 1_000_000,
            (t + 40) % 1_000_000,
            (t + 41) / 1_000_000,
            (t + 41) % 1_000_000,
        );
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let platform = CpuPlatform::parse("bench.toml", PLATFORM).expect("the bench platform parses");
    let ps = periods(1 << 20);
    let mut g = c.benchmark_group("idle replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ps.len() as u64));
    for name in ["menu", "teo", "teo-util", "oracle"] {
        g.bench_function(format!("governor {name}"), |b| {
            b.iter(|| {
                let layout = Layout::from_platform(&platform, 4_000_000, "platform");
                let mut r = Replayer::new(layout, parse_governors(name).expect("known"), "bench")
                    .expect("replayer");
                for p in &ps {
                    r.replay(*p, "bench", 0).expect("replays");
                }
                r.counts.cause_timer
            })
        });
    }
    let text = synthetic_trace(32 << 20);
    let count = {
        let mut n = 0u64;
        let mut r = FtraceReader::new(&text[..], "bench").expect("header");
        let mut b = PeriodBuilder::new(4_000_000, |_| 1024, 8);
        while let Some(ev) = r.next_event().expect("event") {
            b.on_event(ev.cpu, ev.timestamp_ns, ev.line, &ev.kind, &mut |_, _| {
                n += 1;
                Ok(())
            })
            .expect("event");
        }
        n
    };
    g.throughput(Throughput::Elements(count));
    g.bench_function("parse and rebuild periods", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let mut r = FtraceReader::new(&text[..], "bench").expect("header");
            let mut pb = PeriodBuilder::new(4_000_000, |_| 1024, 8);
            while let Some(ev) = r.next_event().expect("event") {
                pb.on_event(ev.cpu, ev.timestamp_ns, ev.line, &ev.kind, &mut |_, _| {
                    n += 1;
                    Ok(())
                })
                .expect("event");
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
