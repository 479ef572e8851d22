//! The device's side of HPB device control mode: which sub-regions it recommends the host
//! activate, and which regions inactivate, in the responses to normal READs. It is what warms
//! the host's HPB map in device control mode (`hpb_exchange.rs` carries the recommendations to
//! the host's driver, `hpb/`).
//!
//! The device's recommendation policy is not public (spec-storage §6.3; §7, item 6). The
//! model the spec suggests:
//!
//! 1. A normal READ that missed the device's map cache in sub-region `(r, s)` recommends
//!    activating `(r, s)`, once, until `r` is inactivated.
//! 2. The device tracks the regions it has recommended in LRU order of recommendation and use.
//! 3. When a new region exceeds its active-region budget, it recommends inactivating the least
//!    recent one.
//! 4. A response carries at most 2 activations and 2 inactivations (spec-storage §4.2); a
//!    sub-region past the second waits for a later miss.

use super::lru::Lru;

/// Most activations, and most inactivations, one HPB response carries (spec-storage §4.2).
pub const MAX_RESPONSE_ENTRIES: usize = 2;

/// What the device puts in one response's HPB field (spec-storage §4.2): sub-regions to
/// activate and regions to inactivate, at most [`MAX_RESPONSE_ENTRIES`] each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recommendation {
    pub activate: Vec<(u32, u32)>,
    pub inactivate: Vec<u32>,
}

impl Recommendation {
    pub fn is_empty(&self) -> bool {
        self.activate.is_empty() && self.inactivate.is_empty()
    }
}

/// A region geometry or budget the recommender cannot track.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "HPB geometry of {rgn_entries} entries a region, {srgn_entries} a sub-region, \
     {max_active_regions} active regions; expected powers of two, a sub-region no larger than \
     its region, at most 64 sub-regions a region, and a budget above 0"
)]
pub struct RecommenderError {
    pub rgn_entries: u64,
    pub srgn_entries: u64,
    pub max_active_regions: u32,
}

/// The device's DCM recommendation heuristic (module documentation).
#[derive(Clone, Debug)]
pub struct DcmRecommender {
    rgn_shift: u32,
    srgn_shift: u32,
    /// Recommended regions → bitmask of their sub-regions already recommended.
    active: Lru<u64>,
}

impl DcmRecommender {
    /// Regions of `rgn_entries` LPNs, sub-regions of `srgn_entries` (both powers of two,
    /// `srgn_entries ≤ rgn_entries`, at most 64 sub-regions a region; spec-storage §4.3), and
    /// the device's budget of active regions (its `wLUMaxActiveHPBRegions`, less pinned ones).
    pub fn new(
        rgn_entries: u64,
        srgn_entries: u64,
        max_active_regions: u32,
    ) -> Result<DcmRecommender, RecommenderError> {
        let ok = rgn_entries.is_power_of_two()
            && srgn_entries.is_power_of_two()
            && srgn_entries <= rgn_entries
            && rgn_entries / srgn_entries <= 64
            && max_active_regions > 0;
        if !ok {
            return Err(RecommenderError {
                rgn_entries,
                srgn_entries,
                max_active_regions,
            });
        }
        Ok(DcmRecommender {
            rgn_shift: rgn_entries.trailing_zeros(),
            srgn_shift: srgn_entries.trailing_zeros(),
            active: Lru::new(max_active_regions as usize),
        })
    }

    /// `(region, sub-region)` of `lpn` (spec-storage §4.3).
    pub fn position(&self, lpn: u64) -> (u32, u32) {
        let rgn = lpn >> self.rgn_shift;
        let srgn = (lpn & ((1u64 << self.rgn_shift) - 1)) >> self.srgn_shift;
        (rgn as u32, srgn as u32)
    }

    /// The response to a normal READ of `blocks` LPNs from `lpn` that missed the device's map
    /// cache: each sub-region it touches not yet recommended is recommended (at most
    /// [`MAX_RESPONSE_ENTRIES`]; later ones wait for a later miss), its region becomes the most
    /// recent, and a region beyond the budget evicts the least recent, recommended inactive.
    pub fn on_read_miss(&mut self, lpn: u64, blocks: u32) -> Recommendation {
        let mut rec = Recommendation::default();
        let last = lpn + blocks.max(1) as u64 - 1;
        for srgn_index in lpn >> self.srgn_shift..=last >> self.srgn_shift {
            if rec.activate.len() == MAX_RESPONSE_ENTRIES {
                break;
            }
            let (rgn, srgn) = self.position(srgn_index << self.srgn_shift);
            let bit = 1u64 << srgn;
            match self.active.touch(rgn as u64) {
                Some(mask) if *mask & bit != 0 => continue,
                Some(mask) => *mask |= bit,
                None => {
                    if let Some((victim, _)) = self.active.insert(rgn as u64, bit) {
                        rec.inactivate.push(victim as u32);
                    }
                }
            }
            rec.activate.push((rgn, srgn));
        }
        rec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcm_recommends_missed_sub_regions_once_and_evicts_the_least_recent_region() {
        // Regions of 4096 entries (16 MiB), sub-regions of 1024 (4 MiB), budget 2.
        let mut d = DcmRecommender::new(4096, 1024, 2).unwrap();
        assert_eq!(d.position(5 * 4096 + 3 * 1024 + 7), (5, 3));
        let rec = |a: &[(u32, u32)], i: &[u32]| Recommendation {
            activate: a.to_vec(),
            inactivate: i.to_vec(),
        };
        assert_eq!(d.on_read_miss(0, 1), rec(&[(0, 0)], &[]));
        assert!(d.on_read_miss(10, 1).is_empty()); // (0, 0) already recommended
        assert_eq!(d.on_read_miss(1024, 1), rec(&[(0, 1)], &[]));
        assert_eq!(d.on_read_miss(4096, 1), rec(&[(1, 0)], &[]));
        // Region 2 is a third: region 0, least recent, goes.
        assert_eq!(d.on_read_miss(2 * 4096 + 2048, 1), rec(&[(2, 2)], &[0]));
        // Across (1, 0) (already) and (1, 1): one activation; region 1 becomes most recent.
        assert_eq!(d.on_read_miss(4096 + 1023, 2), rec(&[(1, 1)], &[]));
        // Three new sub-regions of region 3: the first two; region 2 (least recent) goes.
        assert_eq!(d.on_read_miss(3 * 4096, 3000), rec(&[(3, 0), (3, 1)], &[2]));
        // Region 0 comes back as new.
        assert_eq!(d.on_read_miss(1024, 1), rec(&[(0, 1)], &[1]));
        assert_eq!(
            DcmRecommender::new(4096, 1000, 2).unwrap_err().to_string(),
            "HPB geometry of 4096 entries a region, 1000 a sub-region, 2 active regions; expected \
             powers of two, a sub-region no larger than its region, at most 64 sub-regions a \
             region, and a budget above 0"
        );
        assert!(DcmRecommender::new(1 << 20, 1024, 2).is_err()); // 1024 sub-regions a region
        assert!(DcmRecommender::new(4096, 1024, 0).is_err());
    }
}
