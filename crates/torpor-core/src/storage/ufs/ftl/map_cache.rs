//! The device's SRAM cache of its logical-to-physical (L2P) map: why a random read slows down
//! once the read range outgrows what the cache covers (spec-storage §5), and what an HPB READ
//! saves by carrying the entry itself (spec-storage §6.3).
//!
//! Every 4 KiB logical page (LPN) has a 4-byte entry on the device side (spec-storage §5:
//! "4-byte entry per 4 KB"), stored in map pages of `M` entries, loaded from NAND on demand
//! (Jeong et al., HotStorage 2017, the HPB paper: the table is 1/1024 of the capacity and mobile
//! devices cannot hold it in their RAM). A lookup whose map page is cached costs nothing more; a
//! miss loads the page (its NAND read is timed by the caller, [`Ftl`](super::Ftl)), which then
//! replaces the least recently used one.
//!
//! # Map page and cache (ESTIMATES)
//!
//! - Map page: `M` = 1024 entries = 4 KiB, covering 4 MiB of LBA. ESTIMATE, range 4–16 KiB:
//!   demand-paged FTLs (DFTL, Gupta et al., ASPLOS 2009) page the map in the unit the
//!   controller reads with ECC; 4 KiB is the mapping and ECC unit of current controllers, 16 KiB
//!   a whole 3D TLC page. For the same SRAM the coverage is the same; only the granularity of
//!   hits changes.
//! - Replacement: LRU. ASSUMPTION: a device's policy is not public. Under uniform random reads
//!   every demand policy gives the same hit ratio, `min(1, coverage / range)`, which is all the
//!   calibration uses.
//! - Writes: [`Ftl::write`](super::Ftl::write) brings the written entries' map page into the
//!   cache (as most recent) and marks it dirty. No cost is modelled for loading it or for
//!   writing a dirty page back when it is evicted (no public figure; the evictions are counted).

use super::lru::Lru;

/// Bytes of one logical block, the unit of an L2P entry.
pub const LOGICAL_BLOCK_BYTES: u64 = 4096;

/// Bytes of a device-side L2P entry (spec-storage §5; the host's HPB entries are 8 bytes).
pub const DEVICE_ENTRY_BYTES: u64 = 4;

/// Whether a lookup found the entry's map page in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    Miss,
}

/// A map cache too small for one map page, or of empty map pages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a map cache of {capacity_bytes} bytes holds no map page of {page_entries} entries; expected \
     at least {page_bytes} bytes and at least one entry a page"
)]
pub struct MapCacheError {
    pub capacity_bytes: u64,
    pub page_entries: u64,
    /// Bytes of one map page of `page_entries` entries.
    pub page_bytes: u64,
}

/// The device's SRAM cache of L2P map pages (module documentation).
#[derive(Clone, Debug)]
pub struct MapCache {
    /// Map page → dirty.
    pages: Lru<bool>,
    page_entries: u64,
    dirty_evictions: u64,
}

impl MapCache {
    /// A cache of `capacity_bytes` of SRAM holding map pages of `page_entries` 4-byte entries;
    /// an error when not even one page fits.
    pub fn new(capacity_bytes: u64, page_entries: u64) -> Result<MapCache, MapCacheError> {
        let page_bytes = page_entries.saturating_mul(DEVICE_ENTRY_BYTES);
        if page_entries == 0 || capacity_bytes < page_bytes {
            return Err(MapCacheError {
                capacity_bytes,
                page_entries,
                page_bytes,
            });
        }
        Ok(MapCache {
            pages: Lru::new((capacity_bytes / page_bytes) as usize),
            page_entries,
            dirty_evictions: 0,
        })
    }

    /// The map page holding `lpn`'s entry.
    pub fn page_of(&self, lpn: u64) -> u64 {
        lpn / self.page_entries
    }

    pub fn page_entries(&self) -> u64 {
        self.page_entries
    }

    /// Map pages the cache holds when full.
    pub fn capacity_pages(&self) -> u64 {
        self.pages.capacity() as u64
    }

    /// Bytes of LBA space the full cache maps.
    pub fn coverage_bytes(&self) -> u64 {
        self.capacity_pages() * self.page_entries * LOGICAL_BLOCK_BYTES
    }

    /// Map pages cached now.
    pub fn cached_pages(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Dirty map pages evicted so far (their write-back is not timed).
    pub fn dirty_evictions(&self) -> u64 {
        self.dirty_evictions
    }

    /// Looks `lpn`'s entry up for a read: a hit makes its page the most recent; a miss loads
    /// the page (the caller times the NAND read) as the most recent, evicting the least recent.
    pub fn lookup(&mut self, lpn: u64) -> Lookup {
        self.access(lpn, false)
    }

    /// Updates `lpn`'s entry for a write: as [`MapCache::lookup`], and the page becomes dirty.
    pub fn update(&mut self, lpn: u64) -> Lookup {
        self.access(lpn, true)
    }

    fn access(&mut self, lpn: u64, write: bool) -> Lookup {
        let page = self.page_of(lpn);
        if let Some(dirty) = self.pages.touch(page) {
            *dirty |= write;
            return Lookup::Hit;
        }
        if let Some((_, true)) = self.pages.insert(page, write) {
            self.dirty_evictions += 1;
        }
        Lookup::Miss
    }

    /// Cached map pages from least to most recent, with their dirty flags.
    #[cfg(test)]
    pub(super) fn order(&self) -> Vec<(u64, bool)> {
        self.pages
            .entries()
            .into_iter()
            .map(|(page, &dirty)| (page, dirty))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_cache_evicts_the_least_recent_page_and_counts_dirty_ones() {
        let mut c = MapCache::new(3 * 4096, 1024).unwrap();
        assert_eq!(c.capacity_pages(), 3);
        for lpn in [0, 1024, 2048] {
            assert_eq!(c.lookup(lpn), Lookup::Miss);
        }
        assert_eq!(c.lookup(5), Lookup::Hit);
        assert_eq!(c.order(), vec![(1, false), (2, false), (0, false)]);
        assert_eq!(c.update(1030), Lookup::Hit);
        assert_eq!(c.order(), vec![(2, false), (0, false), (1, true)]);
        assert_eq!(c.lookup(3072), Lookup::Miss); // evicts page 2, clean
        assert_eq!(c.lookup(4096), Lookup::Miss); // evicts page 0
        assert_eq!(c.order(), vec![(1, true), (3, false), (4, false)]);
        assert_eq!(c.dirty_evictions(), 0);
        assert_eq!(c.update(5120), Lookup::Miss); // evicts page 1, dirty
        assert_eq!(c.dirty_evictions(), 1);
        assert_eq!(c.order(), vec![(3, false), (4, false), (5, true)]);
        assert_eq!(
            MapCache::new(4095, 1024).unwrap_err().to_string(),
            "a map cache of 4095 bytes holds no map page of 1024 entries; expected at least 4096 \
             bytes and at least one entry a page"
        );
        assert!(MapCache::new(4096, 0).is_err());
    }
}
