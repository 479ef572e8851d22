//! The printed forms of model values, outside the models: what tools and people read.

pub mod apst;
pub mod fio;
pub mod knobs;
pub mod qos;
