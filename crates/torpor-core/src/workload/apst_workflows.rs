//! The seven workflows used to evaluate Linux's v5.14 APST table algorithm.
//!
//! Source: the commit message of ebd8a93aa4f5 ("nvme: extend and modify the APST configuration
//! algorithm", Alexey Bogoslavsky, merged for v5.14), section "Workflows":
//!
//! 1. consecutive write at the maximum rate with IO depth 2, with no pauses;
//! 2. to 6. a repeated pattern of 1000 consecutive 4K writes followed by 50 ms, 150 ms, 500 ms,
//!    1.5 s or 5 s of idle time;
//! 7. a repeated pattern of a single random 4K read followed by 150 ms of idle time.
//!
//! Each becomes a [`FioJob`]: the idle time is fio's `thinktime`, the pattern length its
//! `thinktime_blocks`, and "repeated" is `time_based` (the job loops until the run ends).
//! Workflow 1's message gives no block size; torpor uses 4 KiB, like the six others.

use super::fio_job::{FioJob, RwMode};
use crate::time::Nanos;

/// One line per workflow, in the commit message's order (index 0 is workflow 1).
pub const APST_WORKFLOW_TITLES: [&str; 7] = [
    "consecutive 4 KiB writes at the maximum rate, IO depth 2, no pauses",
    "1000 consecutive 4 KiB writes, then 50 ms idle, repeated",
    "1000 consecutive 4 KiB writes, then 150 ms idle, repeated",
    "1000 consecutive 4 KiB writes, then 500 ms idle, repeated",
    "1000 consecutive 4 KiB writes, then 1.5 s idle, repeated",
    "1000 consecutive 4 KiB writes, then 5 s idle, repeated",
    "one random 4 KiB read, then 150 ms idle, repeated",
];

/// Idle time after each burst of workflows 2 to 6, in milliseconds.
const BURST_IDLE_MS: [u64; 5] = [50, 150, 500, 1500, 5000];
/// Writes per burst in workflows 2 to 6.
const BURST_WRITES: u64 = 1000;

/// Workflow `n` (1 to 7) as a fio job, or `None` for any other number.
pub fn apst_workflow(n: u8) -> Option<FioJob> {
    let mut job = FioJob::new(format!("apst-workflow-{n}"), RwMode::Write);
    job.time_based = true;
    match n {
        1 => job.iodepth = 2,
        2..=6 => {
            job.thinktime = Some(Nanos::from_ms(BURST_IDLE_MS[usize::from(n - 2)]));
            job.thinktime_blocks = BURST_WRITES;
        }
        7 => {
            job.rw = RwMode::RandRead;
            job.thinktime = Some(Nanos::from_ms(150));
            job.thinktime_blocks = 1;
        }
        _ => return None,
    }
    Some(job)
}
