//! Workloads that drive a block device: fio-like jobs, the seven APST workflows of the
//! ebd8a93aa4f5 commit message, and fio iolog replay, all run by [`run_io`].

mod apst_workflows;
mod fio_job;
mod replay;
mod run;

pub use apst_workflows::{apst_workflow, APST_WORKFLOW_TITLES};
pub use fio_job::{FioJob, JobError, RwMode};
pub use replay::{IologReplay, ReplayOptions};
pub use run::{run_io, IoReport, Workload, WorkloadReport};
