//! The map work (`ufshpb_map_work_handler` in v6.5; spec-storage §4.7): evict the regions queued
//! for inactivation, then activate regions and issue READ BUFFERs for the queued sub-regions;
//! and the READ BUFFER completion (`ufshpb_map_req_compl_fn`).

use super::lu::{HpbCommand, HpbLu, IssuedWrites, MapLoadId, MapReq, RgnState, SrgnState};
use crate::time::Nanos;

/// Why an activation stopped the run (the driver's error codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// HCM, LRU full: the entering region has fewer than `eviction_thld_enter` reads (-EACCES).
    EnterThreshold,
    /// LRU full and no region may leave (-ENOMEM).
    NoVictim,
    /// The sub-region's READ BUFFER is still in flight, or (HCM) `inflight_map_req` are (-EAGAIN).
    Again,
}

impl HpbLu {
    /// Runs the map work at `now`; returns the commands to send, in order.
    ///
    /// Steps: (1) pop every region off the to-inactivate list: a pinned one is skipped; one in the
    /// LRU with a sub-region ISSUED is kept for the next run (-EBUSY; back on the list after this
    /// pass, unless one of its sub-regions was queued for loading meanwhile); otherwise (HCM: after
    /// a WRITE BUFFER 01h) it leaves the LRU, turns INACTIVE and frees every map (UNUSED).
    /// (2) pop sub-regions off the to-activate list: activate the region — already in the LRU:
    /// move it to the LRU tail; INACTIVE with the LRU full: (HCM: refuse below
    /// `eviction_thld_enter` reads) evict the first LRU region from the head with no sub-region
    /// ISSUED (HCM: and at most `eviction_thld_exit` reads), (HCM: WRITE BUFFER 01h first); then
    /// append to the LRU tail as ACTIVE (HCM: rewind its read timer) — and issue its READ BUFFER:
    /// not while ISSUED; allocate the map if UNUSED; (HCM) at `inflight_map_req` in flight the
    /// sub-region turns INVALID instead. (3) The first failure puts the sub-region back at the
    /// head of the list and ends the run; nothing retries it before the next kick.
    pub fn map_work(&mut self, now: Nanos) -> Vec<HpbCommand> {
        let mut cmds = Vec::new();
        self.run_inactive_region_list(&mut cmds);
        self.run_active_subregion_list(now, &mut cmds);
        cmds
    }

    /// A READ BUFFER completed: the sub-region becomes VALID with the map of load `req.id`.
    /// [`IssuedWrites::Dropped`] zeroes the dirty bitmap and clears the region's dirty flag as the
    /// driver does; [`IssuedWrites::Kept`] keeps the bits written while ISSUED, and the flag when
    /// there are any. It does not kick the map work.
    pub fn map_req_done(&mut self, req: &MapReq) {
        let i = self.idx(req.rgn, req.srgn) as usize;
        debug_assert_eq!(self.srgns[i].state, SrgnState::Issued);
        let keep = self.issued_writes == IssuedWrites::Kept;
        let mctx = self.srgns[i]
            .mctx
            .as_mut()
            .expect("an ISSUED sub-region keeps its map: its region cannot be evicted");
        if !keep {
            mctx.clear_dirty();
        }
        let clean = mctx.is_clean();
        mctx.load = Some(req.id);
        if clean {
            self.rgns[req.rgn as usize].dirty = false;
        }
        // The region cannot be INACTIVE: eviction waits while a sub-region is ISSUED.
        self.srgns[i].state = SrgnState::Valid;
        self.num_inflight_map_req -= 1;
    }

    fn run_inactive_region_list(&mut self, cmds: &mut Vec<HpbCommand>) {
        let mut pending = Vec::new();
        while let Some(r) = self.inact.pop_front() {
            if self.evict_region(r, cmds).is_err() {
                let queued = (0..self.geo.srgn_cnt(r)).any(|s| self.act.contains(self.idx(r, s)));
                if !queued {
                    pending.push(r);
                }
            }
        }
        for r in pending {
            self.inact.push_back(r);
        }
    }

    /// `ufshpb_evict_region`; `Err` is -EBUSY (a sub-region ISSUED).
    fn evict_region(&mut self, rgn: u32, cmds: &mut Vec<HpbCommand>) -> Result<(), ()> {
        if self.rgns[rgn as usize].state == RgnState::Pinned || !self.lru.contains(rgn) {
            return Ok(());
        }
        if self.any_issued(rgn) {
            return Err(());
        }
        self.evict_with_umap(rgn, cmds);
        Ok(())
    }

    /// HCM sends WRITE BUFFER 01h before evicting; then `__ufshpb_evict_region`.
    fn evict_with_umap(&mut self, rgn: u32, cmds: &mut Vec<HpbCommand>) {
        if self.is_hcm() {
            cmds.push(HpbCommand::InactivateRegion { rgn });
            self.stats.umap_req_cnt += 1;
        }
        self.lru.remove(rgn);
        self.rgns[rgn as usize].state = RgnState::Inactive;
        for s in 0..self.geo.srgn_cnt(rgn) {
            let i = self.idx(rgn, s) as usize;
            if self.srgns[i].state != SrgnState::Unused {
                self.srgns[i].mctx = None;
                self.srgns[i].state = SrgnState::Unused;
                self.mapped_srgns -= 1;
            }
        }
    }

    fn run_active_subregion_list(&mut self, now: Nanos, cmds: &mut Vec<HpbCommand>) {
        while let Some(i) = self.act.pop_front() {
            let (r, s) = self.split(i);
            let ok = self
                .add_region(r, now, cmds)
                .and_then(|()| self.issue_map_req(r, s, cmds));
            if ok.is_err() {
                // `ufshpb_add_active_list`: its region cannot be on the to-inactivate list (that
                // would have taken the sub-region off this one), so it goes back at the head.
                self.act.push_front(i);
                return;
            }
        }
    }

    /// `ufshpb_add_region`.
    fn add_region(&mut self, rgn: u32, now: Nanos, cmds: &mut Vec<HpbCommand>) -> Result<(), Stop> {
        if self.lru.contains(rgn) {
            // `ufshpb_hit_lru_info`: a re-activation, not a read hit, refreshes the LRU.
            self.lru.move_to_back(rgn);
            return Ok(());
        }
        if self.rgns[rgn as usize].state != RgnState::Inactive {
            return Ok(());
        }
        let hcm = self.is_hcm();
        if self.lru.len() == self.geo.max_lru_active as usize {
            if hcm && self.rgns[rgn as usize].reads < self.params.eviction_thld_enter {
                return Err(Stop::EnterThreshold);
            }
            let exit = self.params.eviction_thld_exit;
            let victim = self
                .lru
                .iter()
                .find(|&v| !(self.any_issued(v) || hcm && self.rgns[v as usize].reads > exit))
                .ok_or(Stop::NoVictim)?;
            self.evict_with_umap(victim, cmds);
        }
        self.lru.push_back(rgn);
        let rg = &mut self.rgns[rgn as usize];
        rg.state = RgnState::Active;
        if hcm {
            rg.read_timeout = now + Nanos::from_ms(self.params.read_timeout_ms);
            rg.read_timeout_expiries = self.params.read_timeout_expiries;
        }
        Ok(())
    }

    /// `ufshpb_issue_map_req` (its "region INACTIVE and sub-region INVALID" skip needs a
    /// concurrent eviction between activation and issue, which a sequential model never has).
    fn issue_map_req(
        &mut self,
        rgn: u32,
        srgn: u32,
        cmds: &mut Vec<HpbCommand>,
    ) -> Result<(), Stop> {
        let i = self.idx(rgn, srgn) as usize;
        match self.srgns[i].state {
            SrgnState::Issued => return Err(Stop::Again),
            SrgnState::Unused => self.alloc_mctx(rgn, srgn),
            SrgnState::Invalid | SrgnState::Valid => {}
        }
        if self.is_hcm() && self.num_inflight_map_req >= self.params.inflight_map_req {
            self.srgns[i].state = SrgnState::Invalid;
            return Err(Stop::Again);
        }
        self.srgns[i].state = SrgnState::Issued;
        if self.issued_writes == IssuedWrites::Kept {
            if let Some(mctx) = self.srgns[i].mctx.as_mut() {
                mctx.clear_dirty();
            }
        }
        self.stats.map_req_cnt += 1;
        self.num_inflight_map_req += 1;
        cmds.push(HpbCommand::ReadBuffer(MapReq {
            id: MapLoadId(self.stats.map_req_cnt),
            rgn,
            srgn,
            alloc_len: self.geo.map_alloc_len(rgn, srgn),
        }));
        Ok(())
    }
}
