//! Parse speed of block traces, in bytes per second, on synthetic traces built in memory:
//! blkparse's default output (per request a Q, G, I, D and C line, every 64th request a
//! message) read for its Q events, and an MQSim ASCII trace.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::trace::blkparse::{BlkparseReader, ReplayedAction};
use torpor_core::trace::block::BlockTraceReader;
use torpor_core::trace::disksim::{AsciiDialect, AsciiTraceReader};

fn blkparse(bytes: usize) -> Vec<u8> {
    let mut out = b"Input file sda.blktrace.0 added\n".to_vec();
    let (mut t, mut i, mut seq) = (0u64, 0u64, 0u64);
    while out.len() < bytes {
        t += 1 + i * 7919 % 5000;
        let sector = i * 2654435761 % 500_000_000;
        let rwbs = ["R", "WS", "RA", "WSM"][(i % 4) as usize];
        for (dt, act, tail) in [
            (0, "Q", "[fio]"),
            (1_000, "G", "[fio]"),
            (2_000, "I", "[fio]"),
            (5_000, "D", "[fio]"),
            (90_000, "C", "[0]"),
        ] {
            seq += 1;
            let ts = t * 1_000 + dt;
            out.extend_from_slice(
                format!(
                    "{:3},{:<3} {:2} {:8} {:5}.{:09} {:5} {:>2} {:>3} {sector} + 8 {tail}\n",
                    8,
                    0,
                    i % 8,
                    seq,
                    ts / 1_000_000_000,
                    ts % 1_000_000_000,
                    1000 + i % 50,
                    act,
                    rwbs
                )
                .as_bytes(),
            );
        }
        if i % 64 == 0 {
            out.extend_from_slice(b"  8,0    0        0     0.000000000     0  m   N note\n");
        }
        i += 1;
    }
    out
}

fn mqsim(bytes: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut t, mut i) = (0u64, 0u64);
    while out.len() < bytes {
        t += 1 + i * 7919 % 50_000;
        out.extend_from_slice(
            format!(
                "{t} {} {} 16 {}\n",
                i % 4,
                i * 2654435761 % 500_000_000,
                i % 2
            )
            .as_bytes(),
        );
        i += 1;
    }
    out
}

fn drain(mut r: impl BlockTraceReader) -> u64 {
    let mut n = 0;
    while r.next_event().expect("valid").is_some() {
        n += 1;
    }
    n
}

fn bench(c: &mut Criterion) {
    let text = blkparse(16 << 20);
    let mut g = c.benchmark_group("block_traces");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("blkparse Q", |b| {
        b.iter(|| drain(BlkparseReader::new(&text[..], "bench", ReplayedAction::Q)))
    });
    let text = mqsim(16 << 20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("mqsim", |b| {
        b.iter(|| {
            drain(AsciiTraceReader::new(
                &text[..],
                "bench",
                AsciiDialect::Mqsim,
            ))
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
