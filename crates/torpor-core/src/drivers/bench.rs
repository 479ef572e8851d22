//! `torpor bench`: the engine's hot loops timed on this machine, as simulated work per
//! wall-clock second. The criterion benchmarks in `benches/` measure the same loops more
//! carefully; this one needs no Rust toolchain on the user's machine.

use std::time::Instant;

use serde::Serialize;

use crate::apst::{self, ApstConfig, ApstParams};
use crate::cpuidle::{Device, GovernorName, IdleState, Kernel, Platform};
use crate::error::InputError;
use crate::hpb::{Geometry, HcmParams, IssuedWrites};
use crate::input::nvme_preset as preset;
use crate::input::ufs_preset;
use crate::sim::Pcg32;
use crate::storage::nvme::device::NvmeDevice;
use crate::storage::ufs::device::{BoostConfig, BoostNotify, FtlSetup, UfsDevice};
use crate::storage::ufs::hpb_exchange::{HpbDynamics, HpbSetup};
use crate::time::Nanos;
use crate::ufshcd::scaling::{ScalingParams, VendorProfile};
use crate::workload::{self, FioJob, IozoneSpec, RwMode, Workload};
use crate::world;

/// One benchmark's figure.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    pub name: String,
    pub count: u64,
    pub unit: String,
    pub wall_s: f64,
    pub per_s: f64,
}

/// The longest time budget one benchmark may be given: an hour.
pub const MAX_SECONDS: f64 = 3600.0;

/// Runs each benchmark for roughly `seconds` of wall time, a number in (0, [`MAX_SECONDS`]].
pub fn run_all(seconds: f64) -> Result<Vec<BenchResult>, InputError> {
    if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
        return Err(InputError::whole(
            "--seconds",
            format!("expected a time budget in seconds, more than 0 and at most {MAX_SECONDS}, got {seconds}"),
        ));
    }
    Ok(vec![
        nvme_workflow(seconds, 3, "nvme: APST workflow 3 (SN530, v5.14)"),
        nvme_workflow(seconds, 1, "nvme: sustained QD2 writes (SN530, v5.14)"),
        ufs_random_read(seconds, 32),
        ufs_random_read(seconds, 1),
        hpb_iozone(seconds, true),
        hpb_iozone(seconds, false),
        governor(seconds, GovernorName::Teo619),
        governor(seconds, GovernorName::Teo66),
        governor(seconds, GovernorName::Menu619),
        scenario_events(
            seconds,
            PHONE,
            "system: the phone scenario (gs101 + UFS 4.0, 3 variants)",
        ),
        scenario_events(
            seconds,
            CPUS,
            "cpus: gs101 governors scenario (5 governors)",
        ),
    ])
}

/// The built-in whole-system phone scenario (scenarios/system-phone.toml).
const PHONE: &str = include_str!("../../../../scenarios/system-phone.toml");
/// The built-in CPU-only scenario (scenarios/cpu-gs101-governors.toml).
const CPUS: &str = include_str!("../../../../scenarios/cpu-gs101-governors.toml");

/// Runs a built-in scenario end to end (every variant), doubling its simulated duration until
/// the wall time exceeds the budget; rates it in engine events per second.
fn scenario_events(seconds: f64, text: &str, name: &str) -> BenchResult {
    let mut span_s = 1u64;
    loop {
        let (events, wall) = scenario_events_for(text, Nanos::from_secs(span_s));
        if wall >= seconds || span_s >= 1 << 20 {
            return BenchResult {
                name: name.to_string(),
                count: events,
                unit: "events".into(),
                wall_s: wall,
                per_s: events as f64 / wall,
            };
        }
        span_s *= 2;
    }
}

/// One run of a built-in scenario for `span`: the engine's events and the wall seconds of the
/// run (parsing included: it is a small share). Shared with the criterion bench.
pub fn scenario_events_for(text: &str, span: Nanos) -> (u64, f64) {
    let value = toml::Value::String(format!("{}ms", span.0 / 1_000_000));
    let overrides = [("run.duration".to_string(), value)];
    let limits = crate::drivers::run::Limits { max_ios: u64::MAX };
    let start = Instant::now();
    let report = crate::drivers::run::run_text(
        text,
        "built-in",
        std::path::Path::new("."),
        &overrides,
        &limits,
        &mut (),
    )
    .expect("a built-in scenario runs");
    let wall = start.elapsed().as_secs_f64();
    (report.variants.iter().map(|v| v.events).sum(), wall)
}

/// Simulates APST workflow `n` on the SN530 preset with the v5.14 table, doubling the
/// simulated span until the wall time exceeds the budget.
fn nvme_workflow(seconds: f64, n: u8, name: &str) -> BenchResult {
    let drive = preset::find("wdc-pc-sn530-256gb")
        .expect("built-in preset")
        .expect("valid preset");
    let table = match apst::build(&drive.controller, &ApstParams::default()) {
        ApstConfig::Sent(t) => t,
        ApstConfig::NotSent { reason } => panic!("SN530 preset sends no APST table: {reason}"),
    };
    let mut span = Nanos::from_secs(1);
    loop {
        let mut device = NvmeDevice::new(&drive.controller, Some(&table), drive.service.clone());
        let mut loads = vec![Workload::Job(workload::apst_workflow(n).expect("1..=7"))];
        let start = Instant::now();
        let report = world::run_io(&mut device, &mut loads, span, 1).expect("built-in workload");
        let wall = start.elapsed().as_secs_f64();
        if wall >= seconds || span >= Nanos::from_secs(1 << 20) {
            return BenchResult {
                name: name.to_string(),
                count: report.ios,
                unit: "IOs".into(),
                wall_s: wall,
                per_s: report.ios as f64 / wall,
            };
        }
        span = Nanos(span.0 * 2);
    }
}

/// The seed-003 iozone run at 32 GiB on the UFS 2.1 preset's FTL, HPB in device control mode
/// or off, doubling the reads per thread until the wall time exceeds the budget.
fn hpb_iozone(seconds: f64, hpb: bool) -> BenchResult {
    let mut reads = 1 << 14;
    loop {
        let start = Instant::now();
        let ios = hpb_iozone_for(reads, hpb);
        let wall = start.elapsed().as_secs_f64();
        if wall >= seconds || reads >= 1 << 40 {
            return BenchResult {
                name: format!(
                    "ufs: iozone 4K random read, 16 threads, 32 GiB, HPB {} (UFS 2.1 FTL)",
                    if hpb { "on" } else { "off" }
                ),
                count: ios,
                unit: "IOs".into(),
                wall_s: wall,
                per_s: ios as f64 / wall,
            };
        }
        reads *= 2;
    }
}

/// Runs `reads_per_thread` reads of each of the 16 iozone threads over 32 GiB on
/// `ufs21-64gb-class` (clock scaling off), with HPB in device control mode or without; returns
/// the IOs completed. Shared with the criterion bench.
pub fn hpb_iozone_for(reads_per_thread: u64, hpb: bool) -> u64 {
    let preset = ufs_preset::find("ufs21-64gb-class")
        .expect("built-in preset")
        .expect("valid preset");
    let mut cfg = preset.device_config(None, None);
    let descriptors = preset.hpb_descriptors().expect("the preset has [hpb]");
    cfg.ftl = Some(FtlSetup {
        config: preset.ftl_config().expect("the preset has [ftl]"),
        hpb: hpb.then(|| HpbSetup {
            geometry: Geometry::new(&descriptors).expect("the preset's geometry is checked"),
            params: HcmParams::default(),
            issued_writes: IssuedWrites::Kept,
            dynamics: HpbDynamics::default(),
        }),
    });
    let mut device = UfsDevice::new(cfg).expect("the preset's FTL is checked");
    let mut loads: Vec<Workload> = IozoneSpec::seed(32 << 30)
        .jobs()
        .into_iter()
        .map(|mut job| {
            job.number_ios = Some(reads_per_thread);
            Workload::Job(job)
        })
        .collect();
    world::run_io(&mut device, &mut loads, Nanos::MAX, 1)
        .expect("built-in workload")
        .ios
}

/// A 4 KiB random-read job at `iodepth` on the eUFS 3.1 preset behind a `ufs-qcom` host (60 ms
/// delayed devfreq monitor) with the block layer's boost at the next poll, doubling the
/// simulated span until the wall time exceeds the budget.
fn ufs_random_read(seconds: f64, iodepth: u32) -> BenchResult {
    let mut span = Nanos::from_ms(100);
    loop {
        let start = Instant::now();
        let ios = ufs_random_read_for(span, iodepth);
        let wall = start.elapsed().as_secs_f64();
        if wall >= seconds || span >= Nanos::from_secs(1 << 20) {
            return BenchResult {
                name: format!("ufs: 4K random read QD{iodepth} (eUFS 3.1, ufs-qcom, boost)"),
                count: ios,
                unit: "IOs".into(),
                wall_s: wall,
                per_s: ios as f64 / wall,
            };
        }
        span = Nanos(span.0 * 2);
    }
}

/// The UFS model's whole path (queue, busy window, polls, boost work) for `span` of simulated
/// time under that job; returns the IOs completed. Also the criterion bench's loop.
pub fn ufs_random_read_for(span: Nanos, iodepth: u32) -> u64 {
    let preset = ufs_preset::find("samsung-eufs31-512gb")
        .expect("built-in preset")
        .expect("valid preset");
    let (min, max) = (preset.min_level.freq_hz, preset.max_level.freq_hz);
    let mut job = FioJob::new("randread", RwMode::RandRead);
    job.iodepth = iodepth;
    job.time_based = true;
    let mut cfg =
        preset.device_config(Some(ScalingParams::of(VendorProfile::Qcom, min, max)), None);
    cfg.boost = Some(BoostConfig {
        timeout_ms: 30,
        notify: BoostNotify::NextPoll,
    });
    let mut device = UfsDevice::new(cfg).expect("preset without FTL");
    let mut loads = vec![Workload::Job(job)];
    world::run_io(&mut device, &mut loads, span, 1)
        .expect("built-in workload")
        .ios
}

/// Idle periods per second through one governor alone (`select` + `reflect`, as `idle decide`
/// and trace replay drive it), on a four-state x86-like table with a mix of short
/// interrupt-ended and long timer-ended periods drawn in advance.
fn governor(seconds: f64, name: GovernorName) -> BenchResult {
    let platform = Platform {
        states: [
            (0, 0, true),
            (2, 2, false),
            (170, 500, false),
            (200, 600, false),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(exit_us, target_us, polling))| IdleState {
            name: format!("C{i}"),
            exit_latency_ns: exit_us * 1000,
            target_residency_ns: target_us * 1000,
            polling,
        })
        .collect(),
        tick_ns: 4_000_000,
        capacity: 1024,
    };
    let mut rng = Pcg32::new(1, 1);
    let steps: Vec<(i64, u64)> = (0..4096)
        .map(|_| {
            let sleep = 50_000 + rng.below(8_000_000) as i64;
            // One period in three ends early, by an interrupt the sleep length did not show.
            let residency = if rng.below(3) == 0 {
                rng.below(sleep as u64)
            } else {
                sleep as u64
            };
            (sleep, residency)
        })
        .collect();
    let mut dev = Device::new(platform.state_count());
    let mut gov = name.build(&platform, &mut dev);
    let mut kernel = Kernel::default();
    let start = Instant::now();
    let mut count = 0u64;
    let mut checksum = 0usize;
    loop {
        for &(sleep, residency) in &steps {
            kernel.sleep_length_ns = sleep;
            kernel.delta_tick_ns = sleep.min(platform.tick_ns);
            let mut stop_tick = true;
            let idx = gov.select(&platform, &mut dev, &mut kernel, &mut stop_tick);
            checksum = checksum.wrapping_add(idx + usize::from(stop_tick));
            dev.last_residency_ns = residency;
            kernel.clock_ns = kernel.clock_ns.wrapping_add(residency);
            gov.reflect(&platform, &mut dev, &mut kernel, idx);
        }
        count += steps.len() as u64;
        let wall = start.elapsed().as_secs_f64();
        if wall >= seconds {
            std::hint::black_box(checksum);
            return BenchResult {
                name: format!("cpuidle: {} select + reflect", name.canonical()),
                count,
                unit: "idle periods".into(),
                wall_s: wall,
                per_s: count as f64 / wall,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn budgets_that_are_not_a_positive_number_of_seconds_up_to_an_hour_are_refused() {
        for bad in [f64::NAN, f64::INFINITY, 1e308, -1.0, 0.0, 3600.5] {
            let e = super::run_all(bad).expect_err("refused");
            assert_eq!(e.file, "--seconds");
        }
    }
}
