//! `torpor bench`: the engine's hot loops timed on this machine, as simulated work per
//! wall-clock second. The criterion benchmarks in `benches/` measure the same loops more
//! carefully; this one needs no Rust toolchain on the user's machine.

use std::time::Instant;

use serde::Serialize;

use crate::error::InputError;
use crate::input::nvme_preset as preset;
use crate::storage::nvme::apst::{self, ApstConfig, ApstParams};
use crate::storage::nvme::device::NvmeDevice;
use crate::time::Nanos;
use crate::workload::{self, Workload};
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
    ])
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
