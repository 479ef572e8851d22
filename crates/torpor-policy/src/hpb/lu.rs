//! The host's HPB state for one logical unit (spec-storage §4.4; `struct ufshpb_lu`,
//! `ufshpb_region`, `ufshpb_subregion` in v6.5): region and sub-region states, the per-sub-region
//! map context (map pages and dirty bitmap), the LRU of active regions, the to-activate and
//! to-inactivate lists, the in-flight map-request count and the statistics. The operations live
//! beside it: `read_path.rs`, `response.rs`, `map_work.rs`, `host_control.rs`, `memory.rs`.

use super::geometry::{ControlMode, Geometry};
use super::list::IndexList;
use super::params::HcmParams;
use crate::time::Nanos;

/// Region state (`enum HPB_RGN_STATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RgnState {
    Inactive,
    Active,
    /// Always active, never in the LRU, never evicted.
    Pinned,
}

/// Sub-region state (`enum HPB_SRGN_STATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrgnState {
    /// No map memory.
    Unused,
    /// Map memory, map not usable.
    Invalid,
    /// Map usable for HPB READs (where not dirty).
    Valid,
    /// A READ BUFFER for it is in flight.
    Issued,
}

/// Which READ BUFFER filled a map: the 1-based sequence number of the request (`map_req_cnt` at
/// its issue). The model keeps no PPNs; this names the device's map snapshot an entry came from,
/// so the device can tell a current entry from a stale one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MapLoadId(pub u64);

/// What a write to an ISSUED sub-region does.
///
/// The driver sets dirty bits only in VALID sub-regions and zeroes the whole bitmap when the READ
/// BUFFER completes, so a write landing while the load is in flight is forgotten and the map,
/// captured before the write, becomes VALID and clean: an HPB READ can then carry a stale entry
/// (spec-storage §4.6). torpor keeps such writes by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IssuedWrites {
    /// torpor: the bitmap is zeroed when the READ BUFFER is issued (the map reflects the device
    /// from then on), writes while ISSUED set bits, and the completion keeps them.
    #[default]
    Kept,
    /// The driver (v5.15-v6.5): writes while ISSUED are not recorded; the completion zeroes the
    /// bitmap.
    Dropped,
}

/// `struct ufshpb_map_ctx`: the map pages (here only which load filled them) and the dirty
/// bitmap, one bit per entry.
#[derive(Clone, Debug)]
pub(crate) struct MapCtx {
    pub(crate) dirty: Vec<u64>,
    pub(crate) load: Option<MapLoadId>,
}

impl MapCtx {
    pub(crate) fn zeroed(entries: u32) -> Self {
        MapCtx {
            dirty: vec![0; entries.div_ceil(64) as usize],
            load: None,
        }
    }

    pub(crate) fn set_dirty(&mut self, off: u32, n: u32) {
        for b in off..off + n {
            self.dirty[(b / 64) as usize] |= 1 << (b % 64);
        }
    }

    pub(crate) fn any_dirty(&self, off: u32, n: u32) -> bool {
        (off..off + n).any(|b| self.dirty[(b / 64) as usize] & (1 << (b % 64)) != 0)
    }

    pub(crate) fn clear_dirty(&mut self) {
        self.dirty.fill(0);
    }

    pub(crate) fn is_clean(&self) -> bool {
        self.dirty.iter().all(|&w| w == 0)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct SubRegion {
    pub(crate) state: SrgnState,
    pub(crate) mctx: Option<MapCtx>,
    /// HCM read counter.
    pub(crate) reads: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub(crate) state: RgnState,
    /// HCM: Σ of its sub-regions' reads.
    pub(crate) reads: u32,
    /// HCM: when the region next times out without reads.
    pub(crate) read_timeout: Nanos,
    /// HCM: timeouts left; decremented with the driver's unsigned wrap-around.
    pub(crate) read_timeout_expiries: u32,
    /// `RGN_FLAG_DIRTY` (HCM): written since its last map load completed.
    pub(crate) dirty: bool,
    /// `RGN_FLAG_UPDATE` (HCM): the device lost HPB state; the next read re-activates.
    pub(crate) update: bool,
}

/// Statistics as in `hpb_stats/` (v6.5 names; v5.15 called the three `rcmd_*` ones `rb_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HpbStats {
    /// Reads sent as HPB READ.
    pub hit_cnt: u64,
    /// Reads short enough for HPB READ that were sent as normal READs.
    pub miss_cnt: u64,
    /// Valid HPB response fields received (`rb_noti_cnt`).
    pub rcmd_noti_cnt: u64,
    /// Sub-region activations queued, by the device (DCM) or the read counters (HCM)
    /// (`rb_active_cnt`).
    pub rcmd_active_cnt: u64,
    /// Region inactivations queued (`rb_inactive_cnt`).
    pub rcmd_inactive_cnt: u64,
    /// READ BUFFERs issued.
    pub map_req_cnt: u64,
    /// WRITE BUFFER 01h (inactivate one region) issued; HCM only.
    pub umap_req_cnt: u64,
}

/// What the host asks the device for from the map work, in issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HpbCommand {
    /// HPB READ BUFFER (F9h, buffer ID 01h): load one sub-region's map. The caller sends it and
    /// hands it back to [`HpbLu::map_req_done`] when it completes.
    ReadBuffer(MapReq),
    /// HPB WRITE BUFFER (FAh, buffer ID 01h): the host inactivated this region (HCM). Its
    /// completion needs no host action.
    InactivateRegion { rgn: u32 },
}

/// One READ BUFFER in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapReq {
    pub id: MapLoadId,
    pub rgn: u32,
    pub srgn: u32,
    /// Allocation length: the map bytes the device returns (`srgn_mem_size`, or the partial last
    /// sub-region's entries × 8).
    pub alloc_len: u32,
}

/// The HPB host state of one LU.
#[derive(Clone, Debug)]
pub struct HpbLu {
    pub(crate) geo: Geometry,
    pub(crate) params: HcmParams,
    pub(crate) issued_writes: IssuedWrites,
    pub(crate) rgns: Vec<Region>,
    /// Flat, index `rgn * srgns_per_rgn + srgn`.
    pub(crate) srgns: Vec<SubRegion>,
    /// `lh_lru_rgn`: active (non-pinned) regions, head = least recently (re)activated.
    pub(crate) lru: IndexList,
    /// `lh_act_srgn`: sub-regions to load, by flat index.
    pub(crate) act: IndexList,
    /// `lh_inact_rgn`: regions to evict.
    pub(crate) inact: IndexList,
    pub(crate) num_inflight_map_req: u32,
    pub(crate) stats: HpbStats,
    /// Sub-regions holding a map context, and the peak of that count.
    pub(crate) mapped_srgns: u32,
    pub(crate) peak_mapped_srgns: u32,
}

/// What the caller schedules once the LU is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpbInit {
    /// Run the map work now, to load the pinned regions. The driver queues it only when
    /// `lu_pinned_end - lu_pinned_start > 0`, i.e. for two or more pinned regions; a single
    /// pinned region waits for the first kick (a response, or the first HCM poll).
    pub map_work: bool,
    /// HCM: when the first read-timeout poll runs (`timeout_polling_interval_ms` after init).
    pub first_poll: Option<Nanos>,
}

impl HpbLu {
    /// `ufshpb_alloc_region_tbl` + `ufshpb_param_init`: every region INACTIVE with UNUSED
    /// sub-regions, except pinned regions, whose sub-regions get map memory, turn INVALID and are
    /// queued for loading. `params` are used only in host control mode.
    pub fn new(
        geo: Geometry,
        params: HcmParams,
        issued_writes: IssuedWrites,
        now: Nanos,
    ) -> (HpbLu, HpbInit) {
        let n_rgn = geo.rgns_per_lu as usize;
        let n_srgn = (geo.rgns_per_lu * geo.srgns_per_rgn) as usize;
        let mut lu = HpbLu {
            rgns: vec![
                Region {
                    state: RgnState::Inactive,
                    reads: 0,
                    read_timeout: Nanos::ZERO,
                    read_timeout_expiries: 0,
                    dirty: false,
                    update: false,
                };
                n_rgn
            ],
            srgns: vec![
                SubRegion {
                    state: SrgnState::Unused,
                    mctx: None,
                    reads: 0,
                };
                n_srgn
            ],
            lru: IndexList::new(n_rgn),
            act: IndexList::new(n_srgn),
            inact: IndexList::new(n_rgn),
            num_inflight_map_req: 0,
            stats: HpbStats::default(),
            mapped_srgns: 0,
            peak_mapped_srgns: 0,
            geo,
            params,
            issued_writes,
        };
        for r in lu.geo.pinned.clone() {
            for s in 0..lu.geo.srgn_cnt(r) {
                lu.alloc_mctx(r, s);
                let i = lu.idx(r, s);
                lu.srgns[i as usize].state = SrgnState::Invalid;
                lu.act.push_back(i);
            }
            lu.rgns[r as usize].state = RgnState::Pinned;
        }
        let init = HpbInit {
            map_work: lu.geo.pinned.len() >= 2,
            first_poll: lu
                .is_hcm()
                .then(|| now + Nanos::from_ms(lu.params.timeout_polling_interval_ms)),
        };
        (lu, init)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn stats(&self) -> &HpbStats {
        &self.stats
    }

    pub fn is_hcm(&self) -> bool {
        self.geo.mode == ControlMode::Host
    }

    pub fn rgn_state(&self, rgn: u32) -> RgnState {
        self.rgns[rgn as usize].state
    }

    pub fn srgn_state(&self, rgn: u32, srgn: u32) -> SrgnState {
        self.srgns[self.idx(rgn, srgn) as usize].state
    }

    /// READ BUFFERs in flight (`num_inflight_map_req`).
    pub fn num_inflight_map_req(&self) -> u32 {
        self.num_inflight_map_req
    }

    /// The LRU from least to most recently activated.
    pub fn lru(&self) -> Vec<u32> {
        self.lru.iter().collect()
    }

    /// The to-activate list, head first, as (region, sub-region).
    pub fn act_list(&self) -> Vec<(u32, u32)> {
        self.act.iter().map(|i| self.split(i)).collect()
    }

    /// The to-inactivate list, head first.
    pub fn inact_list(&self) -> Vec<u32> {
        self.inact.iter().collect()
    }

    /// HCM read counters of a sub-region and of its region.
    pub fn reads(&self, rgn: u32, srgn: u32) -> (u32, u32) {
        (
            self.srgns[self.idx(rgn, srgn) as usize].reads,
            self.rgns[rgn as usize].reads,
        )
    }

    /// The load whose map an HPB READ starting at `lpn` would carry, when that sub-region's map is
    /// usable (region active, sub-region VALID); dirty bits are not consulted.
    pub fn map_load_of(&self, lpn: u64) -> Option<MapLoadId> {
        let p = self.geo.pos(lpn);
        let s = &self.srgns[self.idx(p.rgn, p.srgn) as usize];
        let usable =
            self.rgns[p.rgn as usize].state != RgnState::Inactive && s.state == SrgnState::Valid;
        usable
            .then(|| s.mctx.as_ref().and_then(|m| m.load))
            .flatten()
    }

    pub(crate) fn idx(&self, rgn: u32, srgn: u32) -> u32 {
        rgn * self.geo.srgns_per_rgn + srgn
    }

    pub(crate) fn split(&self, i: u32) -> (u32, u32) {
        (i / self.geo.srgns_per_rgn, i % self.geo.srgns_per_rgn)
    }

    /// `ufshpb_get_map_ctx`: zeroed pages and bitmap. Host memory cannot run out in the model
    /// (the mempools are a reserve; the LRU bound caps the total, §4.10).
    pub(crate) fn alloc_mctx(&mut self, rgn: u32, srgn: u32) {
        let entries = self.geo.srgn_entries(rgn, srgn);
        let i = self.idx(rgn, srgn) as usize;
        self.srgns[i].mctx = Some(MapCtx::zeroed(entries));
        self.mapped_srgns += 1;
        self.peak_mapped_srgns = self.peak_mapped_srgns.max(self.mapped_srgns);
    }

    /// `ufshpb_update_active_info`: off the to-inactivate list, onto the tail of the
    /// to-activate list unless already there; counted either way.
    pub(crate) fn update_active_info(&mut self, rgn: u32, srgn: u32) {
        self.inact.remove(rgn);
        let i = self.idx(rgn, srgn);
        if !self.act.contains(i) {
            self.act.push_back(i);
        }
        self.stats.rcmd_active_cnt += 1;
    }

    /// `ufshpb_update_inactive_info`: every sub-region off the to-activate list, the region onto
    /// the tail of the to-inactivate list unless already there; counted either way.
    pub(crate) fn update_inactive_info(&mut self, rgn: u32) {
        for s in 0..self.geo.srgn_cnt(rgn) {
            self.act.remove(self.idx(rgn, s));
        }
        if !self.inact.contains(rgn) {
            self.inact.push_back(rgn);
        }
        self.stats.rcmd_inactive_cnt += 1;
    }

    pub(crate) fn any_issued(&self, rgn: u32) -> bool {
        (0..self.geo.srgn_cnt(rgn))
            .any(|s| self.srgns[self.idx(rgn, s) as usize].state == SrgnState::Issued)
    }
}
