//! The numbers fio prints for a job, from torpor's measurements of it, so that
//! `torpor run --fio` can lay them out as fio's `stat.c` does (axboe/fio, read for this
//! module: `show_ddir_status`, `calc_clat_percentiles`, `plat_val_to_idx`, `plat_idx_to_val`,
//! `__show_run_stats`, and `update_runtime` in `backend.c`).
//!
//! 1. Latencies are fio's `clat`: completion minus submission, in ns, with exact min, max, mean
//!    and sample standard deviation (fio's `calc_lat` divides by `n - 1`).
//! 2. Percentiles are what fio prints: fio files each latency in a log-linear histogram of 64
//!    buckets per power of two (values below 128 ns exactly; at most 1856 buckets, everything
//!    from about 17.2 s in the last) and reports the midpoint of the bucket where the running
//!    count reaches `p / 100 x n`. torpor's histogram splits every fio bucket in two at the same
//!    edges, so fio's counts, and so its printed values, are rebuilt exactly. fio compares in
//!    floating point; torpor compares exactly (`count x 10000 >= p_hundredths x n`), which can
//!    differ from fio only when `p / 100 x n` is a whole number.
//! 3. The job's runtime is fio's: from the job's start (after `startdelay`) to its end, in
//!    whole milliseconds rounded up from whole microseconds. The end is when its last IO
//!    completed; when its `runtime` stopped it, not before the runtime's end (fio's rate
//!    limiter sleeps until then); when the run ended first, the run's end.
//! 4. IO counts are completed IOs (fio counts issued ones; they differ only by IOs still in
//!    flight when the run's end cut them off, which fio would have waited for).

use serde::{Deserialize, Serialize};

use crate::metrics::LatencyHistogram;
use crate::time::Nanos;
use crate::workload::{FioJob, WorkloadReport};

/// fio's default `percentile_list`, in hundredths of a percent.
const PERCENTILES: [u64; 17] = [
    100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 9500, 9900, 9950, 9990, 9995,
    9999,
];

/// `FIO_IO_U_PLAT_BITS`: fio's buckets per power of two are 2^6.
const PLAT_BITS: u32 = 6;
/// `FIO_IO_U_PLAT_NR`: 29 groups of 64 buckets.
const PLAT_NR: usize = 29 << PLAT_BITS;

/// One job as fio reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FioJobStats {
    /// When the job started (its `startdelay`), from the run's start.
    pub start_ns: u64,
    /// The job's runtime in fio's sense (module doc, step 3).
    pub runtime_ms: u64,
    pub read: Option<FioDirStats>,
    pub write: Option<FioDirStats>,
}

/// One direction of a job: what fio's `show_ddir_status` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FioDirStats {
    /// Completed IOs and their bytes.
    pub ios: u64,
    pub bytes: u64,
    pub clat_min_ns: u64,
    pub clat_max_ns: u64,
    pub clat_mean_ns: f64,
    /// `None` only if the sum of squares overflowed (see [`LatencyHistogram::stdev_ns`]).
    pub clat_stdev_ns: Option<f64>,
    /// fio's default list: `[percent, ns]`, the value fio prints (module doc, step 2).
    pub clat_percentiles_ns: Vec<(f64, u64)>,
}

/// What fio would print for `job`, measured as `w`, in a run that ended at `run_end`.
pub fn job_stats(job: &FioJob, w: &WorkloadReport, run_end: Nanos) -> FioJobStats {
    let start = job.startdelay.unwrap_or(Nanos::ZERO);
    let end = match (w.finished, job.runtime) {
        (Some(f), Some(r)) if w.runtime_ran_out => f.max(start.saturating_add(r)).min(run_end),
        (Some(f), _) => f,
        (None, _) => run_end,
    };
    let us = (end - start).0 / 1_000;
    FioJobStats {
        start_ns: start.0,
        runtime_ms: us.div_ceil(1_000),
        read: dir_stats(&w.read, job.bs),
        write: dir_stats(&w.write, job.bs),
    }
}

fn dir_stats(h: &LatencyHistogram, bs: u64) -> Option<FioDirStats> {
    let n = h.count();
    if n == 0 {
        return None;
    }
    Some(FioDirStats {
        ios: n,
        bytes: n * bs,
        clat_min_ns: h.min()?.0,
        clat_max_ns: h.max()?.0,
        clat_mean_ns: h.mean_ns()?,
        clat_stdev_ns: h.stdev_ns(),
        clat_percentiles_ns: percentiles(h),
    })
}

/// fio's `plat_val_to_idx`: the bucket of `v` ns.
fn plat_idx(v: u64) -> usize {
    if v < 2 << PLAT_BITS {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    let offset = ((v >> error_bits) & ((1 << PLAT_BITS) - 1)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// fio's `plat_idx_to_val`: the midpoint of bucket `idx`.
fn plat_val(idx: usize) -> u64 {
    if idx < 2 << PLAT_BITS {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % (1 << PLAT_BITS)) as u64;
    // (k + 0.5) x 2^error_bits with error_bits >= 1: a whole number.
    base + (2 * k + 1) * (1 << (error_bits - 1))
}

/// fio's `calc_clat_percentiles` over fio's buckets rebuilt from torpor's.
fn percentiles(h: &LatencyHistogram) -> Vec<(f64, u64)> {
    let n = u128::from(h.count());
    let mut out = Vec::with_capacity(PERCENTILES.len());
    let mut wanted = PERCENTILES.iter().peekable();
    let mut seen: u128 = 0;
    let mut buckets = h.buckets().peekable();
    while let Some((lo, count)) = buckets.next() {
        let idx = plat_idx(lo);
        seen += u128::from(count);
        // torpor's buckets that share this fio bucket come next.
        if buckets
            .peek()
            .is_some_and(|&(next, _)| plat_idx(next) == idx)
        {
            continue;
        }
        while let Some(&&p) = wanted.peek() {
            if seen * 10_000 < u128::from(p) * n {
                break;
            }
            out.push((p as f64 / 100.0, plat_val(idx)));
            wanted.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_buckets_by_hand() {
        // Below 128 ns each value is its own bucket.
        assert_eq!((plat_idx(127), plat_val(127)), (127, 127));
        // 128..255: width 2, bucket 128 + (v >> 1 & 63): 200 -> 128 + 36 = 164, midpoint
        // 128 + 36.5 x 2 = 201.
        assert_eq!((plat_idx(200), plat_val(164)), (164, 201));
        // 75 000 ns: msb 16, error bits 10, base (11 << 6) = 704, 75000 >> 10 = 73, & 63 = 9:
        // bucket 713, midpoint 65 536 + 9.5 x 1024 = 75 264.
        assert_eq!((plat_idx(75_000), plat_val(713)), (713, 75_264));
        // 11 075 000 ns: msb 23, error bits 17, base 1152, 11075000 >> 17 = 84, & 63 = 20:
        // bucket 1172, midpoint 2^23 + 20.5 x 2^17 = 11 075 584.
        assert_eq!((plat_idx(11_075_000), plat_val(1172)), (1172, 11_075_584));
        // Everything past the last group shares bucket 1855.
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn percentiles_follow_the_running_count() {
        // One 75 us IO and nine of 11 075 us: the first bucket holds 1 of 10 samples, so the
        // 1st, 5th and 10th percentiles (ranks 0.1, 0.5, 1.0) are 75 264 ns; from the 20th on,
        // 11 075 584 ns.
        let mut h = LatencyHistogram::new();
        h.record(Nanos::from_us(75));
        for _ in 0..9 {
            h.record(Nanos::from_us(11_075));
        }
        let got = percentiles(&h);
        assert_eq!(got.len(), 17);
        assert_eq!(
            &got[..4],
            &[
                (1.0, 75_264),
                (5.0, 75_264),
                (10.0, 75_264),
                (20.0, 11_075_584)
            ]
        );
        assert_eq!(got[16], (99.99, 11_075_584));
    }

    #[test]
    fn two_of_torpors_buckets_make_one_of_fios() {
        // 75 000 and 75 600 ns fall in torpor's buckets of width 512 starting at 74 752 and
        // 75 264 (msb 16: 2^16 + k x 512), both inside fio's bucket [74 752, 75 776): one
        // bucket, so every percentile is its midpoint.
        let mut h = LatencyHistogram::new();
        h.record(Nanos(75_000));
        h.record(Nanos(75_600));
        assert_eq!(h.buckets().count(), 2);
        assert!(percentiles(&h).iter().all(|&(_, v)| v == 75_264));
    }
}
