//! The UFS device's own side of a read (spec-storage §5, §6.3): its SRAM cache of the
//! logical-to-physical (L2P) map, the NAND array behind it, and the recommendations a device in
//! HPB device control mode sends the host. It is what makes a random read slower once the read
//! range outgrows the map cache, and what an HPB READ saves: torpor's issue 11 (UFS HPB).
//!
//! [`Ftl`] composes the parts, one file each:
//!
//! - `map_cache.rs`: the L2P map cache ([`MapCache`]) and its estimated page size and policy;
//! - `nand.rs`: the NAND array's dies and channels as parallel servers ([`NandArray`]);
//! - `reservations.rs`: the busy intervals those servers (and the link) keep instead of events;
//! - `lru.rs`: the least-recently-used order the map cache and the recommender share;
//! - `recommender.rs`: the device's HPB recommendations in device control mode
//!   ([`DcmRecommender`]);
//! - `calibration.rs`: the figures of the UFS 2.1 64 GB class ([`UFS21_64GB_CLASS`]), checked
//!   against the HPB cover letter's iozone curve.
//!
//! # What a read costs ([`Ftl::read`])
//!
//! 1. **Controller**: a fixed delay `t_c` ([`FtlConfig::controller_ns`]) for command decode,
//!    ECC decode and buffer handling. A delay, not a server: the controller's cores pipeline
//!    commands and are not the bottleneck at these rates (ASSUMPTION).
//! 2. **Map lookup** ([`MapCache`]): each map page holding an entry of the range is looked up;
//!    a miss first reads the map page from NAND (one `tR` plus the map page's transfer, on the
//!    unit that holds it), the missed pages in parallel. An HPB READ carrying a valid host entry
//!    skips the lookup entirely (spec-storage §6.3).
//! 3. **Data read** ([`NandArray`]): once every map page is in, each NAND page the read touches
//!    is read on its unit, in parallel across units.
//!
//! A read completes when its last data transfer ends (the host stage and the UniPro link of
//! `service.rs` come before and after it).
//!
//! # Placement (the physical layout after writes is unknown)
//!
//! - Data: LPNs fill NAND pages of `P` = [`FtlConfig::lpns_per_nand_page`] in order, and NAND
//!   pages are striped over the read units (`unit = (lpn / P) mod units`, channel first): how an
//!   FTL lays out data written sequentially, as iozone writes its files before the random phase.
//!   ASSUMPTION; random LPNs land on uniformly random units either way.
//! - Map pages: `unit = hash(map page) mod units` (Fibonacci hashing): the FTL writes map pages
//!   when it flushes them, wherever its write point is then, unrelated to the data's stripe.
//! - A read unit is a die, or a plane of a die when its planes read independently
//!   ([`NandGeometry::planes_per_die`]); units are numbered channel first.

mod calibration;
mod lru;
mod map_cache;
mod nand;
mod recommender;
pub(super) mod reservations;

pub use calibration::UFS21_64GB_CLASS;
pub use map_cache::{Lookup, MapCache, MapCacheError, DEVICE_ENTRY_BYTES, LOGICAL_BLOCK_BYTES};
pub use nand::{NandArray, NandGeometry, NandGeometryError};
pub use recommender::{DcmRecommender, Recommendation, RecommenderError, MAX_RESPONSE_ENTRIES};

use crate::time::Nanos;

/// Everything the device side of a read needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtlConfig {
    /// SRAM for the L2P map cache, bytes.
    pub map_cache_bytes: u64,
    /// Entries in one map page (`M`).
    pub map_page_entries: u64,
    /// LPNs in one NAND page (`P`).
    pub lpns_per_nand_page: u64,
    /// Controller delay per command (`t_c`), ns.
    pub controller_ns: u64,
    pub nand: NandGeometry,
}

/// An FTL configuration the model cannot run, with what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    #[error("0 LPNs a NAND page; expected at least 1")]
    NoLpnsPerNandPage,
    #[error(transparent)]
    MapCache(#[from] MapCacheError),
    #[error(transparent)]
    Nand(#[from] NandGeometryError),
}

/// Counters of the reads and writes seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FtlStats {
    pub reads: u64,
    /// Reads that skipped the lookup with a valid HPB entry.
    pub hpb_reads: u64,
    /// Map pages looked up by reads and found, or read from NAND.
    pub map_hits: u64,
    pub map_misses: u64,
    pub writes: u64,
    /// HPB READ BUFFERs served.
    pub map_reads: u64,
}

/// One read's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtlRead {
    /// When the last data transfer ends.
    pub done: Nanos,
    /// Map pages this read had to load from NAND (0 for a hit or an HPB READ): what tells the
    /// device to recommend an HPB activation ([`DcmRecommender`]).
    pub map_misses: u32,
}

/// The device side of reads: map cache, NAND array, controller delay.
#[derive(Clone, Debug)]
pub struct Ftl {
    config: FtlConfig,
    cache: MapCache,
    nand: NandArray,
    stats: FtlStats,
    last_now: Nanos,
}

/// Fibonacci hashing of a map page onto a read unit.
fn map_page_unit(page: u64, units: u32) -> u32 {
    ((page.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % units as u64) as u32
}

impl Ftl {
    /// The FTL at time 0, every cache and die empty; an error for a configuration with no
    /// NAND page, map page or read unit to work with.
    pub fn new(config: FtlConfig) -> Result<Ftl, FtlError> {
        if config.lpns_per_nand_page == 0 {
            return Err(FtlError::NoLpnsPerNandPage);
        }
        Ok(Ftl {
            config,
            cache: MapCache::new(config.map_cache_bytes, config.map_page_entries)?,
            nand: NandArray::new(config.nand)?,
            stats: FtlStats::default(),
            last_now: Nanos::ZERO,
        })
    }

    pub fn config(&self) -> &FtlConfig {
        &self.config
    }

    pub fn cache(&self) -> &MapCache {
        &self.cache
    }

    pub fn stats(&self) -> FtlStats {
        self.stats
    }

    /// The read unit holding `lpn`'s data.
    pub fn data_unit(&self, lpn: u64) -> u32 {
        ((lpn / self.config.lpns_per_nand_page) % self.config.nand.units() as u64) as u32
    }

    /// The read unit holding map page `page`.
    pub fn map_unit(&self, page: u64) -> u32 {
        map_page_unit(page, self.config.nand.units())
    }

    /// Reads `blocks` (at least 1) LPNs from `lpn`, arriving at `now` (taken as the previous
    /// call's `now` if earlier). After the controller delay, each map page the range touches is
    /// looked up (skipped when `hpb_entry_valid`), the missed ones read from NAND in parallel;
    /// once all are in, each NAND page the range touches is read, in parallel across units.
    ///
    /// With `hpb_entry_valid` no lookup is made for any block. ASSUMPTION: the Linux driver
    /// sends an HPB READ only when every block of the range lies in a valid, clean host
    /// sub-region (spec-storage §4.5), and the device's handling of the blocks after the first
    /// (the entry carried is the first block's) is not public.
    pub fn read(&mut self, now: Nanos, lpn: u64, blocks: u32, hpb_entry_valid: bool) -> FtlRead {
        let now = now.max(self.last_now);
        self.last_now = now;
        let last = lpn + blocks.max(1) as u64 - 1;
        self.stats.reads += 1;
        let start = now + Nanos(self.config.controller_ns);
        let (ready, map_misses) = if hpb_entry_valid {
            self.stats.hpb_reads += 1;
            (start, 0)
        } else {
            self.look_up(now, start, lpn, last)
        };
        let p = self.config.lpns_per_nand_page;
        let mut done = ready;
        for nand_page in lpn / p..=last / p {
            let first = (nand_page * p).max(lpn);
            let end = ((nand_page + 1) * p - 1).min(last);
            let bytes = (end - first + 1) * LOGICAL_BLOCK_BYTES;
            let unit = self.data_unit(first);
            done = done.max(self.nand.read(now, ready, unit, bytes));
        }
        FtlRead { done, map_misses }
    }

    /// Serves an HPB READ BUFFER for the `entries` LPNs from `lpn` arriving at `now`: after the
    /// controller delay, the map pages holding their entries are looked up as a read's are
    /// (ASSUMPTION: the device builds the host's entries from its own map, paging it through
    /// its SRAM cache as for any lookup), the missed ones read from NAND in parallel; returns
    /// when the last is in. The host's map then crosses the link (the caller's stage).
    pub fn read_map(&mut self, now: Nanos, lpn: u64, entries: u32) -> Nanos {
        let now = now.max(self.last_now);
        self.last_now = now;
        self.stats.map_reads += 1;
        let start = now + Nanos(self.config.controller_ns);
        let last = lpn + entries.max(1) as u64 - 1;
        self.look_up(now, start, lpn, last).0
    }

    /// Looks up every map page holding an entry of `[first, last]` at `start`, reading the
    /// missed ones from NAND in parallel: when the last is in, and how many missed.
    fn look_up(&mut self, now: Nanos, start: Nanos, first: u64, last: u64) -> (Nanos, u32) {
        let map_bytes = self.config.map_page_entries * DEVICE_ENTRY_BYTES;
        let mut ready = start;
        let mut misses = 0;
        for page in self.cache.page_of(first)..=self.cache.page_of(last) {
            if self.cache.lookup(page * self.config.map_page_entries) == Lookup::Hit {
                self.stats.map_hits += 1;
                continue;
            }
            self.stats.map_misses += 1;
            misses += 1;
            let unit = self.map_unit(page);
            ready = ready.max(self.nand.read(now, start, unit, map_bytes));
        }
        (ready, misses)
    }

    /// Records a write of `blocks` LPNs from `lpn`: each map page touched is updated (loaded
    /// if absent, untimed) and becomes dirty. Its timing stays with the service model.
    pub fn write(&mut self, lpn: u64, blocks: u32) {
        self.stats.writes += 1;
        let last = lpn + blocks.max(1) as u64 - 1;
        let entries = self.config.map_page_entries;
        for page in self.cache.page_of(lpn)..=self.cache.page_of(last) {
            self.cache.update(page * entries);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A made-up device worked by hand: 2 channels x 2 dies (4 units; channel = unit mod 2),
    /// tR 50 us, 400 MB/s (4096 B in 10.24 us), 20 us of controller, 2 map pages of 1024
    /// entries (4 KiB each), 4 LPNs a NAND page.
    pub(crate) fn hand() -> FtlConfig {
        FtlConfig {
            map_cache_bytes: 2 * 4096,
            map_page_entries: 1024,
            lpns_per_nand_page: 4,
            controller_ns: 20_000,
            nand: NandGeometry {
                channels: 2,
                dies_per_channel: 2,
                planes_per_die: 1,
                read_ns: 50_000,
                channel_bytes_per_s: 400_000_000,
            },
        }
    }

    #[test]
    fn a_miss_reads_the_map_page_first_a_hit_and_an_hpb_read_do_not() {
        let mut f = Ftl::new(hand()).unwrap();
        // Map page 0 hashes to unit 0; map page 1 to 0x9E3779B9 mod 4 = 1 (channel 1).
        assert_eq!((f.map_unit(0), f.map_unit(1)), (0, 1));
        // LPN 0 at 0, map page 0 not cached: 20 us controller; map read on unit 0, 20 -> 70
        // (tR) -> 80.24 (transfer); data on unit 0 (NAND page 0), 80.24 -> 130.24 -> 140.48.
        let r = f.read(Nanos(0), 0, 1, false);
        assert_eq!(
            r,
            FtlRead {
                done: Nanos(140_480),
                map_misses: 1
            }
        );
        // LPN 5 at 1 ms: map page 0 cached; data on unit 1 (NAND page 1): 20 + 50 + 10.24.
        let r = f.read(Nanos(1_000_000), 5, 1, false);
        assert_eq!(
            r,
            FtlRead {
                done: Nanos(1_080_240),
                map_misses: 0
            }
        );
        // LPN 2048 (map page 2, not cached) as an HPB READ at 2 ms: no lookup, no map read,
        // nothing loaded; data on unit 512 mod 4 = 0.
        let r = f.read(Nanos(2_000_000), 2048, 1, true);
        assert_eq!(
            r,
            FtlRead {
                done: Nanos(2_080_240),
                map_misses: 0
            }
        );
        assert_eq!(f.cache().cached_pages(), 1);
        // The same LPN as a normal read at 3 ms: map page 2 hashes to unit
        // (2 x 0x9E3779B97F4A7C15 mod 2^64) >> 32 = 0x3C6EF372, mod 4 = 2 (channel 0): map
        // read 3020 -> 3070 -> 3080.24; data on unit 0, 3080.24 -> 3140.48.
        assert_eq!(f.map_unit(2), 2);
        let r = f.read(Nanos(3_000_000), 2048, 1, false);
        assert_eq!(
            r,
            FtlRead {
                done: Nanos(3_140_480),
                map_misses: 1
            }
        );
        assert_eq!(
            f.stats(),
            FtlStats {
                reads: 4,
                hpb_reads: 1,
                map_hits: 1,
                map_misses: 2,
                writes: 0,
                map_reads: 0,
            }
        );
    }

    #[test]
    fn a_map_read_pages_the_entries_through_the_cache_without_a_data_read() {
        let mut f = Ftl::new(hand()).unwrap();
        // 2048 entries from LPN 1024: map pages 1 and 2 (1024 entries each), both missing.
        // Page 1 hashes to unit (0x9E3779B97F4A7C15 >> 32) = 0x9E3779B9 mod 4 = 1 (channel
        // 1), page 2 to unit 2 (channel 0, see above): different dies and channels, so both
        // read in parallel from 20 us (the controller): 20 + 50 tR + 10.24 transfer = 80.24.
        assert_eq!(f.map_unit(1), 1);
        assert_eq!(f.read_map(Nanos(0), 1024, 2048), Nanos(80_240));
        // Both pages are now cached: a second load costs the controller only.
        assert_eq!(f.read_map(Nanos(100_000), 1024, 2048), Nanos(120_000));
        let s = f.stats();
        assert_eq!(
            (s.map_reads, s.map_misses, s.map_hits, s.reads),
            (2, 2, 2, 0)
        );
    }

    #[test]
    fn a_long_read_splits_over_nand_pages_and_map_pages() {
        let mut f = Ftl::new(hand()).unwrap();
        // LPNs 1022..1029 (8 blocks): map pages 0 and 1, both missed, read in parallel on
        // units 0 (channel 0) and 1 (channel 1): 20 -> 70 -> 80.24. Then NAND pages 255
        // (LPNs 1022-1023, 8 KiB, unit 3), 256 (1024-1027, 16 KiB, unit 0) and 257 (1028-1029,
        // 8 KiB, unit 1), all ready at 80.24, reserved in that order.
        let r = f.read(Nanos(0), 1022, 8, false);
        // Unit 3 (channel 1): tR 80.24 -> 130.24, 8 KiB 130.24 -> 150.72.
        // Unit 0 (channel 0): tR 80.24 -> 130.24, 16 KiB 130.24 -> 171.2.
        // Unit 1 (channel 1): tR 80.24 -> 130.24, channel 1 busy until 150.72: 150.72 -> 171.2.
        assert_eq!(
            r,
            FtlRead {
                done: Nanos(171_200),
                map_misses: 2
            }
        );
    }

    #[test]
    fn a_configuration_without_a_nand_page_map_page_or_read_unit_is_refused_with_its_figures() {
        let refusal = |config: FtlConfig| Ftl::new(config).unwrap_err();
        let no_lpns = FtlConfig {
            lpns_per_nand_page: 0,
            ..hand()
        };
        assert_eq!(refusal(no_lpns), FtlError::NoLpnsPerNandPage);
        assert_eq!(
            refusal(no_lpns).to_string(),
            "0 LPNs a NAND page; expected at least 1"
        );
        // 1 KiB of SRAM against a map page of 1024 x 4 B.
        let small_cache = FtlConfig {
            map_cache_bytes: 1024,
            ..hand()
        };
        assert!(matches!(refusal(small_cache), FtlError::MapCache(_)));
        let no_channel = FtlConfig {
            nand: NandGeometry {
                channels: 0,
                ..hand().nand
            },
            ..hand()
        };
        assert_eq!(
            refusal(no_channel).to_string(),
            "NAND array of 0 channels x 2 dies x 1 planes at 400000000 bytes/s; expected every \
             dimension and the channel rate above 0"
        );
    }

    #[test]
    fn a_write_dirties_its_map_pages_without_nand_time() {
        let mut f = Ftl::new(hand()).unwrap();
        f.write(1020, 8); // map pages 0 and 1
        assert_eq!(f.cache().order(), vec![(0, true), (1, true)]);
        // A read of LPN 0 now hits: 20 + 60.24.
        assert_eq!(f.read(Nanos(0), 0, 1, false).done, Nanos(80_240));
        assert_eq!(f.stats().writes, 1);
    }
}
