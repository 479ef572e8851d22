//! How much work a job asks for, known before it runs: an upper bound on the IOs it can issue,
//! from its options and the device's service times. `torpor run` refuses a scenario whose
//! bound is far beyond what finishes in minutes (a 10-year run of a saturating job would take
//! most of a year of wall time), unless the user raises the limit.
//!
//! A job issues no more IOs than the smallest of these bounds, each taken over its active time
//! (the run's span after `startdelay`, cut at `runtime`):
//!
//! 1. `number_ios`;
//! 2. unless `time_based`, `size / bs` (fio's default `io_size = size`);
//! 3. with `rate` or `rate_iops`, that rate for each direction the job issues (a direction
//!    without one is unbounded by it);
//! 4. with `thinktime`, `thinktime_blocks` per think time (each stall lasts at least that);
//! 5. the device's throughput: `min(iodepth, parallelism)` requests in service at once, each
//!    taking at least the device's service time for a `bs`-byte request of the faster
//!    direction the job issues (power-state exits only slow it down).
//!
//! A replayed trace is bounded by its length instead: it is streamed, one line at a time.

use super::fio_job::{FioJob, RwMode};
use crate::storage::io::IoOp;
use crate::storage::nvme::service::ServiceModel;
use crate::time::Nanos;

/// An upper bound on the IOs `job` issues in a run of `span` against a drive timed by
/// `service` (the module doc lists the bounds). Whole numbers throughout, so the bound is exact.
pub fn max_ios(job: &FioJob, span: Nanos, service: &ServiceModel) -> u64 {
    let mut active = span - job.startdelay.unwrap_or(Nanos::ZERO);
    if let Some(runtime) = job.runtime {
        active = active.min(runtime);
    }
    let ns = u128::from(active.0);
    // `per` events, one every `every_ns`, from time zero: one more than the span holds.
    let paced = |per: u128, every_ns: u128| per * (ns / every_ns + 1);
    let mut bound = u128::MAX;
    if let Some(n) = job.number_ios {
        bound = bound.min(n.into());
    }
    if !job.time_based {
        bound = bound.min((job.size / job.bs).into());
    }
    let directions: &[usize] = match job.rw {
        RwMode::Read | RwMode::RandRead => &[IoOp::Read as usize],
        RwMode::Write | RwMode::RandWrite => &[IoOp::Write as usize],
        RwMode::Rw | RwMode::RandRw => &[IoOp::Read as usize, IoOp::Write as usize],
    };
    let rated: Option<Vec<u64>> = directions.iter().map(|&d| job.rate_bps(d)).collect();
    if let Some(rates) = rated {
        // The k-th IO of a direction goes at k x bs / rate.
        let per = |bps: u64| u128::from(bps) * ns / 1_000_000_000 / u128::from(job.bs.max(1)) + 1;
        bound = bound.min(rates.into_iter().map(per).sum());
    }
    if let Some(think) = job.thinktime.filter(|t| *t > Nanos::ZERO) {
        bound = bound.min(paced(job.thinktime_blocks.into(), think.0.into()));
    }
    let bytes = u32::try_from(job.bs).unwrap_or(u32::MAX);
    let fastest = match job.rw {
        RwMode::Read | RwMode::RandRead => service.service_time(IoOp::Read, bytes),
        RwMode::Write | RwMode::RandWrite => service.service_time(IoOp::Write, bytes),
        RwMode::Rw | RwMode::RandRw => service
            .service_time(IoOp::Read, bytes)
            .min(service.service_time(IoOp::Write, bytes)),
    };
    // A zero service time (a hand-written model) bounds nothing.
    if fastest > Nanos::ZERO {
        let in_service = job.iodepth.min(service.parallelism.max(1));
        bound = bound.min(paced(in_service.into(), fastest.0.into()));
    }
    u64::try_from(bound).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVE: ServiceModel = ServiceModel {
        read_4k_us: 80.0,
        write_4k_us: 20.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism: 8,
    };

    #[test]
    fn a_saturating_job_is_bounded_by_the_drives_throughput() {
        // 4 KiB random reads at QD 32 on 8 parallel 80 us slots: 8 / 80 us = 100 000 IOs/s,
        // plus one per slot at the start: 10 s -> 1 000 008.
        let mut j = FioJob::new("r", RwMode::RandRead);
        j.iodepth = 32;
        j.time_based = true;
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1_000_008);
        // At QD 2 only two slots are used: 25 000 IOs/s.
        j.iodepth = 2;
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 250_002);
    }

    #[test]
    fn size_rate_thinktime_runtime_and_startdelay_each_bound_it() {
        let mut j = FioJob::new("w", RwMode::Write);
        j.size = 1 << 20; // 256 blocks of 4 KiB
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 256);
        j.time_based = true;
        j.rate_iops = [Some(100); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1001);
        j.rate_iops = [None; 2];
        j.thinktime = Some(Nanos::from_ms(50));
        j.thinktime_blocks = 10;
        // 10 s / 50 ms = 200 stalls (+1): 2010 IOs.
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 2010);
        j.runtime = Some(Nanos::from_secs(1));
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 210);
        j.startdelay = Some(Nanos::from_secs(20));
        // Starts after the run ends: only the throughput bound's first IO remains.
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1);
    }

    #[test]
    fn a_mixed_job_counts_its_rate_twice_and_its_faster_direction() {
        let mut j = FioJob::new("m", RwMode::RandRw);
        j.time_based = true;
        // QD 1 on 20 us writes (faster than 80 us reads): 50 000 IOs/s.
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 50_001);
        j.rate_iops = [Some(10); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 22);
        // Only reads limited: the writes keep the throughput bound.
        j.rate_iops = [Some(10), None];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 50_001);
        // 40 KiB/s of 4 KiB reads and writes each: 10 per second per direction, as above.
        j.rate_iops = [None; 2];
        j.rate = [Some(40 << 10); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 22);
    }
}
