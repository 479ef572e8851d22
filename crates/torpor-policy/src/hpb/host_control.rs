//! Host control mode's periodic work (v6.5 `ufshpb_read_to_handler` and
//! `ufshpb_normalization_work_handler`; spec-storage §4.8): regions that stop being read time
//! out and are inactivated, and the read counters decay so that old reads stop counting.

use super::lu::{HpbLu, RgnState};
use crate::time::Nanos;

/// What the read-timeout poll leaves the caller to schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Poll {
    /// Run the map work now (`ufshpb_kick_map_work`: only when a list is non-empty). This is
    /// when host-initiated activations queued by reads get processed.
    pub map_work: bool,
    /// The next poll: `now + timeout_polling_interval_ms` (the caller may round to jiffies).
    pub next_poll: Nanos,
}

impl HpbLu {
    /// The read-timeout poll (HCM; [`super::HpbInit::first_poll`] starts it).
    ///
    /// Steps: (1) for each LRU region, head first, whose `read_timeout` is strictly before `now`:
    /// decrement its expiries; when the region is dirty or the expiries reach 0 it has expired,
    /// else its timeout is re-armed to `now + read_timeout_ms`; (2) queue every expired region for
    /// inactivation (`rcmd_inactive_cnt++` each), in the reverse of the LRU order (the driver
    /// `list_add`s them to a local list); (3) kick the map work if a list is non-empty;
    /// (4) re-arm after `timeout_polling_interval_ms`.
    pub fn read_timeout_work(&mut self, now: Nanos) -> Poll {
        debug_assert!(
            self.is_hcm(),
            "the read-timeout work exists in host control mode only"
        );
        let mut expired = Vec::new();
        for r in self.lru.iter() {
            let rg = &mut self.rgns[r as usize];
            if now > rg.read_timeout {
                rg.read_timeout_expiries = rg.read_timeout_expiries.wrapping_sub(1);
                if rg.dirty || rg.read_timeout_expiries == 0 {
                    expired.push(r);
                } else {
                    rg.read_timeout = now + Nanos::from_ms(self.params.read_timeout_ms);
                }
            }
        }
        for &r in expired.iter().rev() {
            self.update_inactive_info(r);
        }
        Poll {
            map_work: !self.inact.is_empty() || !self.act.is_empty(),
            next_poll: now + Nanos::from_ms(self.params.timeout_polling_interval_ms),
        }
    }

    /// The normalization work (HCM), asked for by [`HpbLu::prep`]: every sub-region's read count
    /// is shifted right by `normalization_factor`, each region's count becomes their sum, and an
    /// ACTIVE region left with no reads is queued for inactivation (`rcmd_inactive_cnt++`, even
    /// when already queued). It does not kick the map work. (The driver walks `srgns_per_rgn`
    /// sub-regions in every region, past the end of a shorter last region's table; the model walks
    /// the ones that exist.)
    pub fn normalize(&mut self) {
        let factor = self.params.normalization_factor;
        for r in 0..self.geo.rgns_per_lu {
            let mut sum = 0;
            for s in 0..self.geo.srgn_cnt(r) {
                let i = self.idx(r, s) as usize;
                self.srgns[i].reads >>= factor;
                sum += self.srgns[i].reads;
            }
            self.rgns[r as usize].reads = sum;
            if self.rgns[r as usize].state == RgnState::Active && sum == 0 {
                self.update_inactive_info(r);
            }
        }
    }
}
