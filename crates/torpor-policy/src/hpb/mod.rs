//! UFS HPB (Host Performance Booster), host side, as the Linux driver did it: a what-if
//! component (torpor issue 11) the UFS device model calls. HPB caches the device's L2P map in
//! host memory so a random read can carry its physical address (HPB READ) and skip the device's
//! map lookup.
//!
//! Kernel followed: **v6.5**, `drivers/ufs/core/ufshpb.[ch]` (read at torvalds/linux blob of
//! commit 222d227f; the v6.1-v6.5 form, after "Remove HPB2.0 flows" and "Properly handle
//! max-single-cmd"), the last release before "scsi: ufs: core: Remove HPB support" (7e9609d2daea,
//! v6.6). HPB first merged in v5.15 (`drivers/scsi/ufs/ufshpb.c`). Spec: spec-storage §4, §6.1-6.4.
//!
//! # What it models
//! One HPB logical unit: geometry from descriptors ([`geometry`]), region / sub-region state,
//! dirty bitmaps, LRU and work lists ([`lu`]), per-command preparation ([`read_path`]), device
//! responses ([`response`]), the map work and READ BUFFER completion ([`map_work`]), host
//! control mode's read-timeout poll and normalization ([`host_control`], [`params`]) and the host
//! memory of the map cache ([`memory`]). No engine dependency: methods take `now` where time
//! matters and return what the caller must schedule or send. Not modelled: the LU state machine
//! (INIT / PRESENT / SUSPEND / RESET / FAILED — the LU is always PRESENT), several LUs sharing a
//! device, allocation failures, and the HPB 2.0 pre-requests (gone before v5.15 final).
//!
//! # Algorithm
//! 1. [`HpbLu::new`]: every region INACTIVE, sub-regions UNUSED; pinned regions PINNED, their
//!    sub-regions INVALID with a map and queued for loading.
//! 2. [`HpbLu::prep`] per command: writes and discards dirty the covered entries of usable maps
//!    (HCM: reset the sub-region's read count, mark the region dirty); a read of at most
//!    `max_single_cmd_blocks` is counted (HCM: exactly `activation_thld` reads queue an
//!    activation) and becomes an HPB READ when all touched sub-regions are VALID and clean.
//! 3. [`HpbLu::on_response`]: device recommendations queue sub-region loads and (DCM) region
//!    evictions, invalidate the affected maps, and ask for the map work.
//! 4. [`HpbLu::map_work`]: evictions first, then activations (LRU insert with victim selection)
//!    and READ BUFFERs, stopping at the first failure.
//! 5. [`HpbLu::map_req_done`]: the sub-region becomes VALID.
//! 6. HCM: [`HpbLu::read_timeout_work`] every 200 ms expires unread regions and kicks the map
//!    work (the only kick host-initiated activations get); [`HpbLu::normalize`] halves counters.
//!
//! # Deviation
//! A write to an ISSUED sub-region is lost by the driver (the completion zeroes the bitmap), so a
//! stale entry can be sent; torpor keeps it by default ([`IssuedWrites`]).

pub mod geometry;
pub mod host_control;
mod list;
pub mod lu;
pub mod map_work;
pub mod memory;
pub mod params;
pub mod read_path;
pub mod response;

#[cfg(test)]
mod tests;

pub use geometry::{ControlMode, Geometry, GeometryError, HpbDescriptors, Pos};
pub use host_control::Poll;
pub use lu::{
    HpbCommand, HpbInit, HpbLu, HpbStats, IssuedWrites, MapLoadId, MapReq, RgnState, SrgnState,
};
pub use memory::HostMemory;
pub use params::HcmParams;
pub use read_path::{Op, Prep, PrepKind};
pub use response::{HpbResponse, ResponseError};
