//! Read speed of trace.dat, in bytes and events per second: a synthetic 8-CPU trace built in
//! memory by the tests' writer of the documented layout (`tests/trace_dat_writer/`), version 6
//! plain and version 7 with zstd-compressed data; per CPU a stream of `cpu_idle` entries and
//! exits and `sched_switch` events, full 4 KiB pages. Throughput counts the ring-buffer pages'
//! bytes (for the plain file, nearly all of it; the compressed file is far smaller), and the
//! events torpor reads. `idle stats` on the plain file is measured too.

#[path = "../tests/trace_dat_writer/mod.rs"]
mod writer;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::drivers::idle_stats;
use torpor_core::trace::trace_dat::TraceDatReader;
use writer::{id, payload, Dat, Order, Zip};

const CPUS: u32 = 8;

/// A trace.dat of about `bytes` bytes of pages, the events torpor reads in it and the pages'
/// bytes.
fn synthetic(bytes: usize, version: u32, zip: Option<Zip>) -> (Vec<u8>, u64, u64) {
    let mut d = Dat::new(version, false);
    d.zip = zip;
    d.cpus = CPUS;
    let o = Order { big: false };
    let ps = d.page_size as usize;
    let pages_per_cpu = bytes / ps / CPUS as usize;
    let mut events = 0u64;
    for cpu in 0..CPUS {
        let mut pages = Vec::with_capacity(pages_per_cpu);
        let mut ts = 1_000_000_000u64;
        let mut i = 0u64;
        for _ in 0..pages_per_cpu {
            let mut p = d.page(ts);
            // 3 records: 16 + 16 + 64 bytes of data and 12 bytes of headers.
            while p.body.len() + 108 <= ps - 16 {
                let state = [0u64, 0, 1, 2][(i % 4) as usize];
                let mut e = payload(o, id::CPU_IDLE, 16);
                o.put(&mut e, 8, state, 4);
                o.put(&mut e, 12, u64::from(cpu), 4);
                let gap = 1 + (i * 7919 % 300) as u32 * 1000;
                p.record(gap, &e);
                let mut x = payload(o, id::CPU_IDLE, 16);
                o.put(&mut x, 8, u64::from(u32::MAX), 4);
                o.put(&mut x, 12, u64::from(cpu), 4);
                p.record(40_000, &x);
                let mut s = payload(o, id::SCHED_SWITCH, 64);
                o.put(&mut s, 56, 57, 4);
                p.record(5_000, &s);
                ts += u64::from(gap) + 45_000;
                i += 1;
                events += 3;
            }
            pages.push(p.bytes(ps));
        }
        d.data.push((cpu, pages));
    }
    let pages = (pages_per_cpu * ps) as u64 * u64::from(CPUS);
    (d.bytes(), events, pages)
}

fn read_all(bytes: &[u8]) -> u64 {
    let mut r = TraceDatReader::new(bytes, "bench").expect("the bench trace reads");
    let mut n = 0u64;
    while r.next_event().expect("event").is_some() {
        n += 1;
    }
    n
}

/// This process's CPU time (user and system) in seconds: the machine is shared, so wall-clock
/// figures swing with other loads; MB per CPU-second is printed beside criterion's.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn bench(c: &mut Criterion) {
    for (name, version, zip) in [("v6 plain", 6, None), ("v7 zstd", 7, Some(Zip::Zstd))] {
        let (file, events, pages) = synthetic(64 << 20, version, zip);
        assert_eq!(read_all(&file), events, "{name}: every event read");
        let rounds = 5;
        let before = cpu_seconds();
        for _ in 0..rounds {
            read_all(&file);
        }
        let cpu = (cpu_seconds() - before) / f64::from(rounds);
        eprintln!(
            "trace.dat {name}: {} bytes of file, {pages} bytes of pages, {events} events; \
             per CPU-second: {:.0} MB of pages, {:.2} M events",
            file.len(),
            pages as f64 / cpu / 1e6,
            events as f64 / cpu / 1e6
        );
        let mut g = c.benchmark_group(format!("trace.dat {name}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(pages));
        g.bench_function("MB/s", |b| b.iter(|| read_all(&file)));
        g.throughput(Throughput::Elements(events));
        g.bench_function("events/s", |b| b.iter(|| read_all(&file)));
        if zip.is_none() {
            g.throughput(Throughput::Bytes(pages));
            g.bench_function("idle stats MB/s", |b| {
                b.iter(|| {
                    let r = TraceDatReader::new(&file[..], "bench").expect("reads");
                    idle_stats::from_source(r, "bench", None, None).expect("stats")
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
