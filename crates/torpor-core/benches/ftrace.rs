//! Parse speed of ftrace text and of `idle stats`, in bytes per second, on a synthetic raw
//! trace built in memory (8 CPUs, two clusters; per line: a `cpu_idle` entry, its exit and a
//! `sched_switch`). `torpor idle stats` against `idlestat --import` on a 100 MB file is measured
//! by hand (docs/idle-stats.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::drivers::idle_stats::{self, StatsPlatform};
use torpor_core::trace::ftrace::FtraceReader;

fn synthetic(bytes: usize) -> Vec<u8> {
    let mut out = b"# tracer: nop\n# entries-in-buffer/entries-written: 0/0   #P:8\n".to_vec();
    let mut t = 100_000_000u64; // us
    let mut i = 0u64;
    while out.len() < bytes {
        let cpu = i % 8;
        let state = [0, 0, 1, 2][(i / 8 % 4) as usize];
        t += 1 + i * 7919 % 300;
        let line = format!(
            "          <idle>-0     [{cpu:03}] d..1 {}.{:06}: cpu_idle: state={state} cpu_id={cpu}\n\
             \x20         <idle>-0     [{cpu:03}] d..1 {}.{:06}: cpu_idle: state=4294967295 cpu_id={cpu}\n\
             \x20    kworker/{cpu}:1-57      [{cpu:03}] d..3 {}.{:06}: sched_switch: prev_comm=kworker/{cpu}:1 prev_pid=57 prev_prio=120 prev_state=I ==> next_comm=swapper/{cpu} next_pid=0 next_prio=120\n",
            t / 1_000_000,
            t % 1_000_000,
            (t + 40) / 1_000_000,
            (t + 40) % 1_000_000,
            (t + 45) / 1_000_000,
            (t + 45) % 1_000_000,
        );
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let text = synthetic(16 << 20);
    let platform = StatsPlatform::parse(
        "[[cluster]]\ncpus = [0, 1, 2, 3]\n[[cluster]]\ncpus = [4, 5, 6, 7]\n\
         [[state]]\nname = \"WFI\"\ntarget_residency_us = 20\n\
         [[state]]\nname = \"sleep\"\ntarget_residency_us = 300\n\
         [[state]]\nname = \"deep\"\ntarget_residency_us = 1500\n",
        "bench.toml",
    )
    .expect("the bench platform parses");
    let mut g = c.benchmark_group("ftrace");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10);
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut r = FtraceReader::new(&text[..], "bench").expect("header");
            let mut n = 0u64;
            while r.next_event().expect("event").is_some() {
                n += 1;
            }
            n
        })
    });
    g.bench_function("idle stats", |b| {
        b.iter(|| idle_stats::from_reader(&text[..], "bench", Some(&platform), None))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
