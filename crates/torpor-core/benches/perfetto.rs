//! Read speed of Perfetto traces, in bytes and events per second: a synthetic 8-CPU trace built
//! in memory by the tests' encoder (`tests/perfetto_writer/`), as a recorder writes it: rounds
//! of one bundle per CPU (200 events each: `cpu_idle` entries and exits and `sched_switch`
//! events, as full `FtraceEvent`s), plain; the same with the switches in the compact encoding;
//! and the plain one with every 16 packets zlib-compressed. `idle stats` on the plain file is
//! measured too.

#[path = "../tests/perfetto_writer/mod.rs"]
mod writer;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::drivers::idle_stats;
use torpor_core::trace::perfetto::PerfettoReader;
use writer::{bundle, bundle_with, cpu_idle, sched_switch, trace, zlib_packets, Msg};

const CPUS: u32 = 8;
const PER_BUNDLE: u64 = 200;

#[derive(Clone, Copy, PartialEq)]
enum Form {
    Plain,
    Compact,
    Zlib,
}

/// A trace of about `bytes` bytes and the events torpor reads in it.
fn synthetic(bytes: usize, form: Form) -> (Vec<u8>, u64) {
    let mut packets = Vec::new();
    let mut size = 0;
    let mut events = 0u64;
    let mut ts = vec![1_000_000_000u64; CPUS as usize];
    let mut i = 0u64;
    while size < bytes {
        for cpu in 0..CPUS {
            let mut evs = Vec::new();
            // The compact arrays: timestamp deltas, prev_state, next_pid, prio, comm index.
            let mut switches: [Vec<i64>; 5] = Default::default();
            let mut last_switch = 0;
            for _ in 0..PER_BUNDLE / 4 {
                let t = &mut ts[cpu as usize];
                let gap = 1 + (i * 7919 % 300) * 1000;
                let state = [0u32, 0, 1, 2][(i % 4) as usize];
                evs.push(cpu_idle(*t + gap, state, cpu));
                evs.push(cpu_idle(*t + gap + 40_000, u32::MAX, cpu));
                let (a, b) = (*t + gap + 45_000, *t + gap + 90_000);
                if form == Form::Compact {
                    for (at, next) in [(a, 57), (b, 0)] {
                        switches[0].push((at - last_switch) as i64);
                        last_switch = at;
                        switches[1].push(1);
                        switches[2].push(next);
                        switches[3].push(120);
                        switches[4].push(0);
                    }
                } else {
                    evs.push(sched_switch(a, 0, 0, 57));
                    evs.push(sched_switch(b, 57, 1, 0));
                }
                *t += gap + 100_000;
                i += 1;
            }
            let p = if form == Form::Compact {
                let c = Msg::new()
                    .str(5, "task")
                    .packed(1, &switches[0])
                    .packed(2, &switches[1])
                    .packed(3, &switches[2])
                    .packed(4, &switches[3])
                    .packed(6, &switches[4]);
                bundle_with(cpu, evs, |b| b.msg(4, c))
            } else {
                bundle(cpu, evs)
            };
            size += p.0.len() + 4;
            events += PER_BUNDLE;
            packets.push(p);
        }
    }
    // The first compact switch of each CPU has no known previous task.
    if form == Form::Compact {
        events -= u64::from(CPUS);
    }
    if form == Form::Zlib {
        packets = packets.chunks(16).map(zlib_packets).collect();
    }
    (trace(&packets), events)
}

fn read_all(bytes: &[u8]) -> u64 {
    let mut r = PerfettoReader::new(bytes, "bench");
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
    let (plain, plain_events) = synthetic(64 << 20, Form::Plain);
    for (name, form) in [
        ("plain", Form::Plain),
        ("compact_sched", Form::Compact),
        ("zlib", Form::Zlib),
    ] {
        let (file, events) = synthetic(64 << 20, form);
        assert_eq!(read_all(&file), events, "{name}: every event read");
        // Throughput counts the plain trace's bytes for the zlib one (what it stands for).
        let bytes = if form == Form::Zlib {
            plain.len() as u64
        } else {
            file.len() as u64
        };
        let rounds = 3;
        let before = cpu_seconds();
        for _ in 0..rounds {
            read_all(&file);
        }
        let cpu = (cpu_seconds() - before) / f64::from(rounds);
        eprintln!(
            "perfetto {name}: {} bytes of file ({bytes} uncompressed), {events} events; per \
             CPU-second: {:.0} MB, {:.2} M events",
            file.len(),
            bytes as f64 / cpu / 1e6,
            events as f64 / cpu / 1e6
        );
        let mut g = c.benchmark_group(format!("perfetto {name}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function("MB/s", |b| b.iter(|| read_all(&file)));
        g.throughput(Throughput::Elements(events));
        g.bench_function("events/s", |b| b.iter(|| read_all(&file)));
        if form == Form::Plain {
            assert_eq!(events, plain_events);
            g.throughput(Throughput::Bytes(bytes));
            g.bench_function("idle stats MB/s", |b| {
                b.iter(|| {
                    let r = PerfettoReader::new(&file[..], "bench");
                    idle_stats::from_source(r, "bench", None, None).expect("stats")
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
