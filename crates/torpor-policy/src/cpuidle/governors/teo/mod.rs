//! teo, the "timer events oriented" governor: one file per kernel generation of its selection,
//! named after the first release that behaves as it does, like `menu/`.
//!
//! Two generations of per-state bins, each with its shared pieces kept once:
//! - v5.13 .. v6.10 ([`common_v5_13`]: hits, intercepts and recent intercepts per bin):
//!   [`v5_13`] (`teo@5.13`), [`v6_3`] (`teo@6.3`, `teo-util`), [`v6_6`] (`teo@6.6`).
//! - v6.11 .. v7.0 ([`common_v6_12`]: hits and intercepts per bin, the candidate scan and the
//!   common tail): [`v6_12`] (`teo@6.12`), [`v6_14`] (`teo@6.14`), [`v6_19`] (`teo`),
//!   [`v7_0`] (`teo@7.0`).

mod common_v5_13;
mod common_v6_12;
mod v5_13;
mod v6_12;
mod v6_14;
mod v6_19;
mod v6_3;
mod v6_6;
mod v7_0;

#[cfg(test)]
mod tests_v5_13;
#[cfg(test)]
mod tests_v6_12;

pub use v5_13::Teo513;
pub use v6_12::Teo612;
pub use v6_14::Teo614;
pub use v6_19::Teo619;
pub use v6_3::Teo63;
pub use v6_6::Teo66;
pub use v7_0::Teo70;
