//! The printed forms of model values, outside the models: what tools and people read, and
//! the measures reports derive from a run's results (defined here so that no front end
//! computes them itself).

pub mod apst;
pub mod fio_text;
pub mod ftrace_writer;
pub mod idlestat_comparison;
pub mod knobs;
pub mod qos;
pub mod residency_share;
pub mod rows;
pub mod timeline_window;
pub mod ufs_link;
