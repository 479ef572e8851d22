//! Workloads that drive a block device: fio-like jobs, the seven APST workflows of the
//! ebd8a93aa4f5 commit message, and trace replay (fio iologs, block traces), all issued by [`IoIssuer`] on the
//! world's engine.

mod apst_workflows;
pub mod estimate;
mod fio_job;
mod issuer;
mod job_progress;
mod replay;

pub use apst_workflows::{apst_workflow, APST_WORKFLOW_TITLES};
pub use fio_job::{FioJob, JobError, RwMode, MAX_IODEPTH};
pub use issuer::{Due, IoIssuer, IoReport, Workload, WorkloadReport};
pub use replay::{ReplayOptions, TraceCounts, TraceReplay};
