//! The printed forms of model values, outside the models: what tools and people read.

pub mod apst;
pub mod ftrace_writer;
pub mod knobs;
pub mod qos;
