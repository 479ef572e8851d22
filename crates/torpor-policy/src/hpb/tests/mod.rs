//! Tests of the HPB host model: state-machine sequences built by hand from spec-storage §4.7-4.9
//! (each transition and its trigger) with counters on small hand-worked scenarios, in device
//! control mode (`device_control.rs`) and host control mode (`host_control.rs`), and a randomized
//! interleaving check that no HPB READ carries a stale entry (`interleaving.rs`).
//!
//! The small LU used throughout: 16 KiB sub-regions (v = 5, 4 entries), 32 KiB regions (v = 6,
//! 8 entries, 2 sub-regions), 34 blocks: regions 0-3 full, region 4 one sub-region of 2 entries.
//! Two LRU slots; HPB 2.0 with bMAX_DATA_SIZE_FOR_HPB_SINGLE_CMD 3 (4 blocks).

use super::*;
use crate::time::Nanos;

mod device_control;
mod host_control;
mod interleaving;

pub(super) fn desc(control: u8) -> HpbDescriptors {
    HpbDescriptors {
        hpb_version: geometry::HPB_VERSION_2_0,
        hpb_control: control,
        region_size: 6,
        subregion_size: 5,
        device_max_active_regions: 4,
        lu_max_active_regions: 2,
        pinned_start: 0,
        num_pinned: 0,
        max_data_size_single_cmd: Some(3),
        num_blocks: 34,
    }
}

pub(super) fn lu_with(d: HpbDescriptors, params: HcmParams, w: IssuedWrites) -> HpbLu {
    HpbLu::new(Geometry::new(&d).unwrap(), params, w, Nanos::ZERO).0
}

pub(super) fn dcm() -> HpbLu {
    lu_with(desc(1), HcmParams::default(), IssuedWrites::Kept)
}

pub(super) fn hcm(params: HcmParams) -> HpbLu {
    lu_with(desc(0), params, IssuedWrites::Kept)
}

pub(super) const T0: Nanos = Nanos::ZERO;

pub(super) fn read(lu: &mut HpbLu, lpn: u64, len: u32) -> PrepKind {
    lu.prep(T0, Op::Read, lpn, len).kind
}

pub(super) fn recommend(lu: &mut HpbLu, active: &[(u32, u32)], inactive: &[u32]) -> bool {
    let rsp = HpbResponse::RegionUpdate {
        active: active.to_vec(),
        inactive: inactive.to_vec(),
    };
    lu.on_response(&rsp).unwrap()
}

pub(super) fn read_buffers(cmds: &[HpbCommand]) -> Vec<MapReq> {
    cmds.iter()
        .filter_map(|c| match c {
            HpbCommand::ReadBuffer(m) => Some(*m),
            HpbCommand::InactivateRegion { .. } => None,
        })
        .collect()
}

/// Recommends (DCM) and loads the sub-regions, completing every READ BUFFER.
pub(super) fn load(lu: &mut HpbLu, srgns: &[(u32, u32)]) {
    for &s in srgns {
        recommend(lu, &[s], &[]);
        for m in read_buffers(&lu.map_work(T0)) {
            lu.map_req_done(&m);
        }
    }
}

pub(super) fn hit(id: u64) -> PrepKind {
    PrepKind::Hit {
        map_load: MapLoadId(id),
    }
}
