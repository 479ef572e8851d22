//! Throughput of the NVMe drive model alone: simulated IOs per second of wall time.
//!
//! A closed loop at queue depth 1 submits 4 KiB IOs (three reads, then one write) back to
//! back in bursts of 1000, with think times of 50–150 ms between bursts, like the APST
//! workflows. Under the v5.14 table (PS3 after 100 ms idle) about half the gaps cross into PS3,
//! so the loop exercises the idle walk, wakes and busy-period metering, not just service times.
//! The drive is SN530-like (its published power states) with a round service model.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use torpor_core::apst::psd::{NvmeController, PowerState};
use torpor_core::apst::{ApstTable, APST_ENTRIES};
use torpor_core::sim::Pcg32;
use torpor_core::storage::io::{IoOp, IoRequest, TimedDevice};
use torpor_core::storage::nvme::device::NvmeDevice;
use torpor_core::storage::nvme::service::ServiceModel;
use torpor_core::Nanos;

const BURST: u64 = 1000;
const BURSTS: u64 = 20;

fn state(max_mw: f64, non_op: bool, enlat_us: u32, exlat_us: u32) -> PowerState {
    PowerState {
        max_power_mw: max_mw,
        non_operational: non_op,
        entry_lat_us: enlat_us,
        exit_lat_us: exlat_us,
        active_power_mw: None,
        idle_power_mw: None,
    }
}

/// WDC PC SN530 256GB power states (smartctl dump, linuxhw/SMART).
fn sn530() -> NvmeController {
    NvmeController {
        model: "PC SN530 NVMe WDC 256GB".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            state(3500.0, false, 0, 0),
            state(2400.0, false, 0, 0),
            state(1900.0, false, 0, 0),
            state(25.0, true, 3900, 11000),
            state(5.0, true, 5000, 39000),
        ],
    }
}

/// v5.14 defaults on the SN530: PS0–2 → PS3 after 100 ms, PS3 → PS4 after 2000 ms.
fn v514_table() -> ApstTable {
    let mut entries = [0u64; APST_ENTRIES];
    for e in &mut entries[..3] {
        *e = (3 << 3) | (100 << 8);
    }
    entries[3] = (4 << 3) | (2000 << 8);
    ApstTable {
        apste: true,
        entries,
    }
}

fn service() -> ServiceModel {
    ServiceModel {
        read_4k_us: 60.0,
        write_4k_us: 20.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism: 4,
    }
}

/// Runs the closed loop on a fresh drive; returns the last completion (kept alive by the caller).
fn closed_loop(ctrl: &NvmeController, table: &ApstTable, gaps: &[Nanos]) -> Nanos {
    let mut dev = NvmeDevice::new(ctrl, Some(table), service());
    let mut now = Nanos::ZERO;
    for &gap in gaps {
        for i in 0..BURST {
            let op = if i % 4 == 3 { IoOp::Write } else { IoOp::Read };
            let req = IoRequest {
                op,
                offset: i * 4096,
                bytes: 4096,
                sync: true,
            };
            now = dev.accept(now, &req);
        }
        now += gap;
    }
    black_box(dev.finish(now));
    now
}

fn bench_nvme(c: &mut Criterion) {
    let ctrl = sn530();
    let table = v514_table();
    let mut rng = Pcg32::new(42, 54);
    let gaps: Vec<Nanos> = (0..BURSTS)
        .map(|_| Nanos::from_ms(50 + rng.below(101)))
        .collect();
    let mut group = c.benchmark_group("nvme");
    group.throughput(Throughput::Elements(BURST * BURSTS));
    group.bench_function("apst_v514_bursts_qd1", |b| {
        b.iter(|| closed_loop(black_box(&ctrl), &table, &gaps))
    });
    group.finish();
}

criterion_group!(benches, bench_nvme);
criterion_main!(benches);
