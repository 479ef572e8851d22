//! Host memory held by the map cache (spec-storage §4.10; `ufshpb_get_map_ctx`,
//! `ufshpb_init_mem_wq` and `ufshpb_hpb_lu_prepared` in v6.5): each sub-region with a map context
//! holds `pages_per_srgn` pages and a dirty bitmap; the mempools reserve up to
//! `ufshpb_host_map_kbytes` but do not cap the total (the LRU bound does).

use super::geometry::PAGE_BYTES;
use super::lu::HpbLu;

/// Module parameter `ufshpb_host_map_kbytes` default: "A cache size of 2MB can cache ppn in the
/// 1GB range."
pub const HOST_MAP_KBYTES: u64 = 2048;

/// The map cache's host memory, now and at its peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostMemory {
    /// Sub-regions holding a map context now.
    pub mapped_srgns: u32,
    /// Bytes of map pages now: `mapped_srgns × pages_per_srgn × PAGE_SIZE`.
    pub map_bytes: u64,
    /// The most map-page bytes held at once.
    pub peak_map_bytes: u64,
    /// Upper bound: every LRU slot and pinned region fully loaded,
    /// `lu_max_active_rgns × srgns_per_rgn × pages_per_srgn × PAGE_SIZE`.
    pub max_map_bytes: u64,
    /// Pages the mempools keep in reserve for this LU alone:
    /// `min(PAGE_ALIGN(kbytes × 1024) / PAGE_SIZE, tot_active_srgn_pages)`.
    pub mempool_reserve_pages: u64,
}

impl HpbLu {
    /// The host memory report. Dirty bitmaps (`entries / 8` bytes per mapped sub-region, 128 B
    /// for 1024 entries) and the page-pointer arrays are bookkeeping next to the map pages and are
    /// not counted.
    pub fn host_memory(&self) -> HostMemory {
        let page_bytes_per_srgn = self.geo.pages_per_srgn as u64 * PAGE_BYTES;
        let tot_active_srgn_pages = self.geo.lu_max_active_rgns as u64
            * self.geo.srgns_per_rgn as u64
            * self.geo.pages_per_srgn as u64;
        let pool_pages = (HOST_MAP_KBYTES * 1024).div_ceil(PAGE_BYTES);
        HostMemory {
            mapped_srgns: self.mapped_srgns,
            map_bytes: self.mapped_srgns as u64 * page_bytes_per_srgn,
            peak_map_bytes: self.peak_mapped_srgns as u64 * page_bytes_per_srgn,
            max_map_bytes: tot_active_srgn_pages * PAGE_BYTES,
            mempool_reserve_pages: pool_pages.min(tot_active_srgn_pages),
        }
    }
}
