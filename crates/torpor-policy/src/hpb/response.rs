//! The device's HPB response field (`ufshpb_rsp_upiu`, `ufshpb_rsp_req_region_update`,
//! `ufshpb_dev_reset_handler` in v6.5; spec-storage §4.2, §4.7): recommendations to load
//! sub-regions and to inactivate regions, or the device's report that it lost its HPB state.

use super::lu::{HpbLu, RgnState, SrgnState};

/// Most active recommendations in one response (`MAX_ACTIVE_NUM`).
pub const MAX_ACTIVE_NUM: usize = 2;
/// Most inactive recommendations in one response (`MAX_INACTIVE_NUM`).
pub const MAX_INACTIVE_NUM: usize = 2;

/// A response field that passed the header checks (HPB_UPDATE_ALERT set, GOOD status, sense
/// lengths, op != 0), already addressed to this LU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HpbResponse {
    /// `hpb_op` 1 (REQ_REGION_UPDATE): load these (region, sub-region)s, inactivate these regions.
    RegionUpdate {
        active: Vec<(u32, u32)>,
        inactive: Vec<u32>,
    },
    /// `hpb_op` 2 (DEV_RESET): the device lost its HPB information.
    DevReset,
}

/// A response the driver would discard, or one naming a region or sub-region the LU lacks (the
/// driver would index past its tables; the model refuses it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResponseError(pub String);

impl HpbLu {
    /// Handles a response field; returns whether the caller queues the map work now (the driver's
    /// `queue_work` on the HPB workqueue). Invalid fields are refused before any counting, as
    /// `ufshpb_is_hpb_rsp_valid` does.
    ///
    /// REQ_REGION_UPDATE: (1) `rcmd_noti_cnt++`; (2) each active (r, s) — in HCM only when r is
    /// ACTIVE (not pinned) and not dirty — leaves r off the to-inactivate list, is queued for
    /// loading (`rcmd_active_cnt++`) and turns VALID → INVALID so no HPB READ uses the old map;
    /// (3) DCM only: each inactive r has its sub-regions taken off the to-activate list, is
    /// queued for eviction (`rcmd_inactive_cnt++`) and, unless INACTIVE, has its VALID
    /// sub-regions turned INVALID; (4) queue the map work.
    /// DEV_RESET: DCM queues every LRU region for eviction as in (3) and queues the map work; HCM
    /// sets the update flag on every LRU region, so its next read re-activates it.
    pub fn on_response(&mut self, rsp: &HpbResponse) -> Result<bool, ResponseError> {
        self.check_response(rsp)?;
        self.stats.rcmd_noti_cnt += 1;
        match rsp {
            HpbResponse::RegionUpdate { active, inactive } => {
                for &(r, s) in active {
                    let rg = &self.rgns[r as usize];
                    if self.is_hcm() && (rg.state != RgnState::Active || rg.dirty) {
                        continue;
                    }
                    self.update_active_info(r, s);
                    let i = self.idx(r, s) as usize;
                    if self.srgns[i].state == SrgnState::Valid {
                        self.srgns[i].state = SrgnState::Invalid;
                    }
                }
                if !self.is_hcm() {
                    for &r in inactive {
                        self.submit_region_inactive(r);
                    }
                }
                Ok(true)
            }
            HpbResponse::DevReset if self.is_hcm() => {
                for r in self.lru() {
                    self.rgns[r as usize].update = true;
                }
                Ok(false)
            }
            HpbResponse::DevReset => {
                for r in self.lru() {
                    self.submit_region_inactive(r);
                }
                Ok(true)
            }
        }
    }

    fn check_response(&self, rsp: &HpbResponse) -> Result<(), ResponseError> {
        let HpbResponse::RegionUpdate { active, inactive } = rsp else {
            return Ok(());
        };
        let bad = |m: String| Err(ResponseError(m));
        if active.len() > MAX_ACTIVE_NUM || inactive.len() > MAX_INACTIVE_NUM {
            return bad(format!(
                "at most {MAX_ACTIVE_NUM} active and {MAX_INACTIVE_NUM} inactive fields, got {} \
                 and {}",
                active.len(),
                inactive.len()
            ));
        }
        if active.is_empty() && inactive.is_empty() {
            return bad("a region update with at least one field, got none".into());
        }
        let n = self.geo.rgns_per_lu;
        for &(r, s) in active {
            if r >= n || s >= self.geo.srgn_cnt(r) {
                return bad(format!(
                    "an active field inside the LU, got region {r} sub-region {s}"
                ));
            }
        }
        if let Some(r) = inactive.iter().find(|&&r| r >= n) {
            return bad(format!("an inactive region below {n}, got {r}"));
        }
        Ok(())
    }

    /// `ufshpb_submit_region_inactive`.
    fn submit_region_inactive(&mut self, rgn: u32) {
        self.update_inactive_info(rgn);
        if self.rgns[rgn as usize].state == RgnState::Inactive {
            return;
        }
        for s in 0..self.geo.srgn_cnt(rgn) {
            let i = self.idx(rgn, s) as usize;
            if self.srgns[i].state == SrgnState::Valid {
                self.srgns[i].state = SrgnState::Invalid;
            }
        }
    }
}
