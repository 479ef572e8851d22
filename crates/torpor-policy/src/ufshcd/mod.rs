//! The UFS host controller driver's side of clock scaling (drivers/ufs/core/ufshcd.c): the load
//! it measures for devfreq (`clk_scaling.rs`) and what it does with devfreq's decisions on the
//! monitor's schedule (`scaling.rs`).

pub mod clk_scaling;
pub mod scaling;
