//! The whole system on the engine: the built-in phone scenario (gs101 CPUs under teo beside a
//! UFS 4.0-class device with devfreq and the boost; a 60 Hz UI pair, an app reading storage,
//! an app launch) and the CPU-only gs101 governors scenario, in engine events per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::drivers::bench::scenario_events_for;
use torpor_core::Nanos;

const PHONE: &str = include_str!("../../../scenarios/system-phone.toml");
const CPUS: &str = include_str!("../../../scenarios/cpu-gs101-governors.toml");

fn system(c: &mut Criterion) {
    let mut g = c.benchmark_group("whole system");
    g.sample_size(10);
    for (name, text) in [("phone, 1 s", PHONE), ("gs101 governors, 1 s", CPUS)] {
        let span = Nanos::from_secs(1);
        g.throughput(Throughput::Elements(scenario_events_for(text, span).0));
        g.bench_function(name, |b| b.iter(|| scenario_events_for(text, span)));
    }
    g.finish();
}

criterion_group!(benches, system);
criterion_main!(benches);
