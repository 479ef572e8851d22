//! Workloads that drive a block device: fio-like jobs (from scenario tables, fio job files or
//! an iozone random-read run), the seven APST workflows of the ebd8a93aa4f5 commit message, and
//! trace replay (fio iologs, block traces), all issued by [`IoIssuer`] on the world's engine.

mod apst_workflows;
pub mod estimate;
pub mod fio_file;
mod fio_job;
mod iozone;
mod issuer;
mod job_progress;
mod replay;

pub use apst_workflows::{apst_workflow, APST_WORKFLOW_TITLES};

/// The most jobs one variant may run (`[[workload.job]]`s, a fio file's jobs once `numjobs` is
/// expanded, iozone's threads): the issuer keeps a slot per job.
pub const MAX_JOBS: usize = 256;
pub use fio_job::{FioJob, JobError, PerDir, RwMode, MAX_IODEPTH};
pub use iozone::IozoneSpec;
pub use issuer::{Due, IoIssuer, IoReport, Workload, WorkloadReport};
pub use replay::{ReplayOptions, TraceCounts, TraceReplay};
