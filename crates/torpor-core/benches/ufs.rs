//! Throughput of the UFS model on the engine: simulated IOs per second of wall time under a
//! 4 KiB random-read job, at queue depth 32 (the device saturated) and 1 (one IO at a time),
//! on the eUFS 3.1 preset behind a `ufs-qcom` host with the block layer's boost: the loop
//! `torpor bench` times, measured by criterion over a fixed simulated span.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::drivers::bench::{hpb_iozone_for, ufs_random_read_for};
use torpor_core::Nanos;

fn ufs(c: &mut Criterion) {
    let mut g = c.benchmark_group("ufs 4K random read");
    for (qd, span) in [(32u32, Nanos::from_ms(200)), (1, Nanos::from_ms(1000))] {
        g.throughput(Throughput::Elements(ufs_random_read_for(span, qd)));
        g.bench_function(format!("QD{qd}"), |b| {
            b.iter(|| ufs_random_read_for(span, qd))
        });
    }
    g.finish();
}

fn hpb(c: &mut Criterion) {
    let mut g = c.benchmark_group("ufs iozone 4K random read, 16 threads, 32 GiB");
    g.sample_size(10);
    let reads = 1 << 15;
    for on in [true, false] {
        g.throughput(Throughput::Elements(hpb_iozone_for(reads, on)));
        g.bench_function(if on { "HPB on" } else { "HPB off" }, |b| {
            b.iter(|| hpb_iozone_for(reads, on))
        });
    }
    g.finish();
}

criterion_group!(benches, ufs, hpb);
criterion_main!(benches);
