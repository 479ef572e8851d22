//! The UFS device's own side of a read (spec-storage §5, §6.3): its SRAM cache of the
//! logical-to-physical (L2P) map, the NAND array behind it, and the recommendations a device in
//! HPB device control mode sends the host. It is what makes a random read slower once the read
//! range outgrows the map cache, and what an HPB READ saves: torpor's issue 11 (UFS HPB).
//!
//! # What a read costs ([`Ftl::read`])
//!
//! 1. **Controller**: a fixed delay `t_c` ([`FtlConfig::controller_ns`]) for command decode,
//!    ECC decode and buffer handling. A delay, not a server: the controller's cores pipeline
//!    commands and are not the bottleneck at these rates (ASSUMPTION).
//! 2. **Map lookup** ([`MapCache`]): every 4 KiB logical page (LPN) has a 4-byte entry on the
//!    device side (spec-storage §5: "4-byte entry per 4 KB"), stored in map pages of `M`
//!    entries, loaded from NAND on demand (Jeong et al., HotStorage 2017, the HPB paper: the
//!    table is 1/1024 of the capacity and mobile devices cannot hold it in their RAM). A read
//!    whose map page is cached costs nothing more; a miss first reads the map page from NAND
//!    (one `tR` plus the map page's transfer, on the die that holds it), and the page then
//!    replaces the least recently used one. An HPB READ carrying a valid host entry
//!    skips the lookup entirely (spec-storage §6.3).
//! 3. **Data read** ([`NandArray`]): each NAND page the read touches occupies its die for `tR`
//!    and then its channel for the transfer of the bytes read, at the channel's rate; the die
//!    stays busy until its transfer ends (the data sits in its page register). Different dies
//!    overlap; dies on one channel share that channel's transfers.
//!
//! A read completes when its last data transfer ends (the host stage and the UniPro link of
//! `service.rs` come before and after it).
//!
//! # Reservations instead of events
//!
//! `Ftl::read` answers with the completion time at once, as `UfsQueue::accept` does, so every
//! die and channel keeps the intervals it has promised ([`NandArray`]). A new operation takes
//! the earliest gap long enough for it at or after its ready time: a later call never moves an
//! earlier reservation. A device dispatching in real time would let a later read onto an idle
//! die and push a reserved data read back a little; the reservation schedule instead makes that
//! later read wait when the gap is too short. It is exact for one read at a time, and slightly
//! pessimistic under load with misses (a miss reserves its data read in the future): within the
//! bracket the calibration test checks.
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
//! - Writes: [`Ftl::write`] brings the written entries' map page into the cache (as most recent)
//!   and marks it dirty. No cost is modelled for loading it or for writing a dirty page back
//!   when it is evicted (no public figure; the evictions are counted).
//!
//! # Calibration: UFS 2.1 64 GB class ([`UFS21_64GB_CLASS`])
//!
//! The target is the HPB cover letter's iozone run (Daejun Park, Samsung, 2020-12-17, linux-scsi;
//! facts-ufs-hpb.json; spec-storage §4.12): 4 KiB random reads, 16 threads, UFS 2.1 64 GB,
//! MB/s by I/O range, HPB off: 1 GB 300.87, 4 GB 179.35, 8 GB 162.52, 16 GB 156.26, 32 GB
//! 153.25; HPB on 294.8, 293.51, 294.85, 293.45, 277.4.
//!
//! **Shape, by hand.** A miss adds one NAND read of about the data read's length. If the dies
//! are the bottleneck, requests per second fall as `1 / (1 + m)` with the miss ratio
//! `m = 1 − min(1, coverage / range)`. With a coverage of 1 GiB: 300.87 / (1 + 3/4) = 171.9 at
//! 4 GB (measured 179.35), / (1 + 7/8) = 160.5 at 8 GB (162.52), / (1 + 15/16) = 155.3 at
//! 16 GB (156.26), / (1 + 31/32) = 152.8 at 32 GB (153.25). The measured curve follows this:
//! the device is NAND-bound at 16 outstanding reads, a miss costs about one `tR`, and the map
//! cache covers about 1 GB (the inference of spec-storage §4.12).
//!
//! **Parameters.**
//! - `tR` = 58 µs: the oldest 3D TLC in the ISSCC 2021 table (Kioxia/WD 96-layer, 2018;
//!   facts-nand-timing.json), the generation closest to a UFS 2.1 part; older generations are
//!   not faster (HP white paper TLC ~75 µs, spec-storage §5). Range 45–75 µs.
//! - Channel: 400 MB/s. ESTIMATE, range 200–533: Toggle DDR 2.0 / ONFI 3 at 400 MT/s on an
//!   8-bit bus; the 96-layer die's own interface runs 533 MT/s (facts-nand-timing.json `io_gbps`
//!   0.533 per pin) and a 2016–18 mobile controller runs its bus no faster. 4 KiB in 10.24 µs.
//! - Read units: 2 channels × 4 dies × 1 plane = 8. ESTIMATE, range 6–16: the 1 GB figure,
//!   73,455 reads/s (300.87e6 / 4096) at `tR` + 10.24 µs = 68.24 µs each, needs 5.0 units busy
//!   all the time, and 16 outstanding reads over randomly chosen units keep about 63% of 8
//!   busy. 64 GB is 8 dies of 64 Gbit, or 4 dies of 128 Gbit whose 2 planes read
//!   independently; 2 dies of 256 Gbit could not reach the figure (2 / 68.24 µs = 29k reads/s
//!   even with both planes, 59k). Two channels of 400 MB/s carry 800 MB/s, near the preset's
//!   850 MB/s sequential read estimate (its own range 700–1000).
//! - Controller `t_c` = 90 µs: FITTED, the one parameter fitted to the seed: the value at
//!   which the closed loop below gives the 1 GB figure (300.87; 72.9 µs gives 316.8, 93 µs
//!   298.7, about −0.9 MB/s per µs). The other four ranges, and HPB on, are then predictions.
//!   Check: a cached 4 KiB read at queue depth 1 takes 5.000 µs of host stage (1000 cycles at
//!   200 MHz) + 90 + 68.24 + 3.860 µs of link (4096 B over 2 × HS-G3 at η 0.91) = 167.1 µs,
//!   inside the preset's QD1 estimate (ufs21-64gb-class.toml, 150 µs, range 120–200). Range
//!   43–123 µs (that estimate's range less the rest). Firmware and LDPC decode.
//! - Map cache: 1 MiB of SRAM = 256 map pages = 256 Ki entries × 4 B, covering 1 GiB. Spec
//!   §5 puts a DRAM-less controller's SRAM map cache at "hundreds of KB to a few MB"
//!   (facts-ufs-hpb.json: "hundreds of KB to ~1 MB"): 1 MiB sits inside both. Range
//!   0.75–1.5 MiB: the 1 GB point shows no loss and the 4 GB point about 3/4 misses.
//!
//! **Result** (the calibration test: 16 outstanding reads, host and link as fixed delays,
//! uniform random LPNs over the range, against the seed):
//!
//! | range | hit ratio | simulated, HPB off | seed off | simulated, HPB on | seed on |
//! |---|---|---|---|---|---|
//! | 1 GB | 1 | 301.8 | 300.87 | 300.4 | 294.8 |
//! | 4 GB | 1/4 | 179.4 | 179.35 | 302.1 | 293.51 |
//! | 8 GB | 1/8 | 168.1 | 162.52 | 300.7 | 294.85 |
//! | 16 GB | 1/16 | 162.9 | 156.26 | 300.9 | 293.45 |
//! | 32 GB | 1/32 | 160.0 | 153.25 | 301.1 | 277.4 |
//!
//! Off is within 4.4% of the seed at every range. The seed falls as `1 / (1 + m)` (0.509 from
//! 1 to 32 GB), the model a little less (0.530): with 16 reads outstanding and 98.86 µs of
//! fixed delay each, longer reads keep more of them at the dies, which are then busier. On is
//! 2–3% above the seed's
//! 294 (the host's HPB work, not modelled here, costs the seed 2% at 1 GB). The closed loop's
//! host stage and link are fixed delays (5.000 + 3.860 µs); as FIFO servers they are 37% and
//! 28% busy at these rates, not a bottleneck.
//!
//! The seed's HPB-on drop at 32 GB (277.4) is the host side's (its active-region budget and
//! map loading), not the device's: with a valid entry the device does no lookup at any range.
//!
//! # Device control mode recommendations ([`DcmRecommender`])
//!
//! The device's recommendation policy is not public (spec-storage §6.3; §7, item 6). The
//! model the spec suggests: a normal READ that missed the device's map cache in sub-region `(r, s)`
//! recommends activating `(r, s)`, once, until `r` is inactivated; the device tracks the
//! regions it has recommended in LRU order of recommendation and use, and when a new region
//! exceeds its active-region budget it recommends inactivating the least recent one. A
//! response carries at most 2 activations and 2 inactivations (spec-storage §4.2).

use std::collections::HashMap;

use crate::time::Nanos;

/// Bytes of one logical block, the unit of an L2P entry.
pub const LOGICAL_BLOCK_BYTES: u64 = 4096;

/// Bytes of a device-side L2P entry (spec-storage §5; the host's HPB entries are 8 bytes).
pub const DEVICE_ENTRY_BYTES: u64 = 4;

/// Most activations, and most inactivations, one HPB response carries (spec-storage §4.2).
pub const MAX_RESPONSE_ENTRIES: usize = 2;

/// "No slot" in the intrusive list.
const NIL: u32 = u32::MAX;

/// One cached key: its neighbours in recency order and its value.
#[derive(Clone, Debug)]
struct Slot<V> {
    key: u64,
    prev: u32,
    next: u32,
    value: V,
}

/// An LRU of at most `capacity` keys: a slab of slots linked in recency order (head = least
/// recent) and a map from key to slot. Every operation is O(1); memory grows with the keys
/// cached, never with the key space (a 64 GB LU has 16 Mi LPNs, 16 Ki map pages).
#[derive(Clone, Debug)]
struct Lru<V> {
    index: HashMap<u64, u32>,
    slots: Vec<Slot<V>>,
    head: u32,
    tail: u32,
    capacity: usize,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Lru<V> {
        Lru {
            index: HashMap::new(),
            slots: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity: capacity.max(1),
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let s = &self.slots[i as usize];
            (s.prev, s.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }

    fn push_tail(&mut self, i: u32) {
        {
            let s = &mut self.slots[i as usize];
            s.prev = self.tail;
            s.next = NIL;
        }
        match self.tail {
            NIL => self.head = i,
            t => self.slots[t as usize].next = i,
        }
        self.tail = i;
    }

    /// The value of `key`, which becomes the most recent; `None` when absent.
    fn touch(&mut self, key: u64) -> Option<&mut V> {
        let i = *self.index.get(&key)?;
        if self.tail != i {
            self.unlink(i);
            self.push_tail(i);
        }
        Some(&mut self.slots[i as usize].value)
    }

    /// Inserts an absent `key` as the most recent; when full, the least recent key is evicted
    /// first (its slot reused) and returned with its value.
    fn insert(&mut self, key: u64, value: V) -> Option<(u64, V)> {
        debug_assert!(!self.index.contains_key(&key));
        if self.slots.len() < self.capacity {
            let i = self.slots.len() as u32;
            self.slots.push(Slot {
                key,
                prev: NIL,
                next: NIL,
                value,
            });
            self.index.insert(key, i);
            self.push_tail(i);
            return None;
        }
        let i = self.head;
        self.unlink(i);
        let slot = &mut self.slots[i as usize];
        let old_key = std::mem::replace(&mut slot.key, key);
        let old_value = std::mem::replace(&mut slot.value, value);
        self.index.remove(&old_key);
        self.index.insert(key, i);
        self.push_tail(i);
        Some((old_key, old_value))
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    /// Keys from least to most recent.
    #[cfg(test)]
    fn keys(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.slots.len());
        let mut i = self.head;
        while i != NIL {
            out.push(self.slots[i as usize].key);
            i = self.slots[i as usize].next;
        }
        out
    }
}

/// Whether a lookup found the entry's map page in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    Miss,
}

/// The device's SRAM cache of L2P map pages (see the module documentation).
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
    pub fn new(capacity_bytes: u64, page_entries: u64) -> Result<MapCache, String> {
        let page_bytes = page_entries.saturating_mul(DEVICE_ENTRY_BYTES);
        if page_entries == 0 || capacity_bytes < page_bytes {
            return Err(format!(
                "a map cache of {capacity_bytes} bytes holds no map page of {page_entries} \
                 entries; expected at least {page_bytes} bytes and at least one entry a page"
            ));
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
        self.pages.capacity as u64
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
    fn order(&self) -> Vec<(u64, bool)> {
        self.pages
            .keys()
            .into_iter()
            .map(|k| {
                let i = self.pages.index[&k] as usize;
                (k, self.pages.slots[i].value)
            })
            .collect()
    }
}

/// The NAND array's shape and speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NandGeometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    /// Planes of a die that read independently of each other (1: the die is the unit).
    pub planes_per_die: u32,
    /// `tR`, ns: cell array to page register.
    pub read_ns: u64,
    /// Transfer rate of one channel, bytes per second.
    pub channel_bytes_per_s: u64,
}

impl NandGeometry {
    /// Read units (dies, or independent planes).
    pub fn units(&self) -> u32 {
        self.channels * self.dies_per_channel * self.planes_per_die
    }

    /// Time to move `bytes` over one channel, ns, rounded to the nearest.
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        let bps = self.channel_bytes_per_s.max(1) as u128;
        ((bytes as u128 * 1_000_000_000 + bps / 2) / bps) as u64
    }
}

/// Reserved busy intervals `[start, end)` of one die or channel, sorted and disjoint.
pub(super) type Busy = Vec<(u64, u64)>;

/// The earliest `t ≥ from` with `[t, t + len)` free in `busy`.
pub(super) fn earliest_gap(busy: &Busy, from: u64, len: u64) -> u64 {
    let mut t = from;
    // Disjoint intervals sorted by start are sorted by end too: skip those over by `from`.
    let first = busy.partition_point(|&(_, e)| e <= t);
    for &(s, e) in &busy[first..] {
        if e <= t {
            continue;
        }
        if s >= t + len {
            break;
        }
        t = e;
    }
    t
}

/// The end of the first interval of `busy` overlapping `[a, b)`, if any.
fn first_overlap_end(busy: &Busy, a: u64, b: u64) -> Option<u64> {
    busy.iter().find(|&&(s, e)| s < b && e > a).map(|&(_, e)| e)
}

pub(super) fn reserve(busy: &mut Busy, s: u64, e: u64) {
    let at = busy.partition_point(|&(bs, _)| bs < s);
    busy.insert(at, (s, e));
}

/// Drops the intervals that ended by `now`: only reservations still ahead are kept, so memory
/// is bounded by the operations in flight.
pub(super) fn prune(busy: &mut Busy, now: u64) {
    // Sorted by end as by start (disjoint): the ended ones are a prefix.
    let ended = busy.partition_point(|&(_, e)| e <= now);
    busy.drain(..ended);
}

/// The NAND array as parallel servers: each read unit and each channel keeps its reservations
/// (see the module documentation).
#[derive(Clone, Debug)]
pub struct NandArray {
    geometry: NandGeometry,
    units: Vec<Busy>,
    channels: Vec<Busy>,
}

impl NandArray {
    /// An idle array; an error for a zero dimension or rate.
    pub fn new(geometry: NandGeometry) -> Result<NandArray, String> {
        let g = geometry;
        if g.units() == 0 || g.channel_bytes_per_s == 0 {
            return Err(format!(
                "NAND array of {} channels x {} dies x {} planes at {} bytes/s; expected every \
                 dimension and the channel rate above 0",
                g.channels, g.dies_per_channel, g.planes_per_die, g.channel_bytes_per_s
            ));
        }
        Ok(NandArray {
            geometry,
            units: vec![Vec::new(); g.units() as usize],
            channels: vec![Vec::new(); g.channels as usize],
        })
    }

    pub fn geometry(&self) -> &NandGeometry {
        &self.geometry
    }

    /// Reads `bytes` from read unit `unit` (taken modulo the unit count), ready at `ready`, with
    /// nothing before `now` still to be scheduled (reservations that ended by then are
    /// dropped). The unit takes the earliest gap of `tR` + transfer at or after `ready` during
    /// which its channel can also carry the transfer once `tR` ends; the unit stays busy until
    /// the transfer ends, which is returned.
    pub fn read(&mut self, now: Nanos, ready: Nanos, unit: u32, bytes: u64) -> Nanos {
        let g = self.geometry;
        let unit = (unit % g.units()) as usize;
        let channel = unit % g.channels as usize;
        let (t_r, xfer) = (g.read_ns, g.transfer_ns(bytes));
        let (die, chan) = (&mut self.units[unit], &mut self.channels[channel]);
        prune(die, now.0);
        prune(chan, now.0);
        let mut t = ready.0.max(now.0);
        loop {
            t = earliest_gap(die, t, t_r + xfer);
            let c = earliest_gap(chan, t + t_r, xfer);
            let end = c + xfer;
            match first_overlap_end(die, t, end) {
                Some(e) => t = e,
                None => {
                    reserve(die, t, end);
                    reserve(chan, c, end);
                    return Nanos(end);
                }
            }
        }
    }
}

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

/// The UFS 2.1 64 GB class (module documentation, "Calibration").
pub const UFS21_64GB_CLASS: FtlConfig = FtlConfig {
    map_cache_bytes: 1 << 20,
    map_page_entries: 1024,
    // 16 KiB 3D TLC pages. ESTIMATE, range 8-16 KiB; no effect on 4 KiB reads.
    lpns_per_nand_page: 4,
    controller_ns: 90_000,
    nand: NandGeometry {
        channels: 2,
        dies_per_channel: 4,
        planes_per_die: 1,
        read_ns: 58_000,
        channel_bytes_per_s: 400_000_000,
    },
};

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
    pub fn new(config: FtlConfig) -> Result<Ftl, String> {
        if config.lpns_per_nand_page == 0 {
            return Err("0 LPNs a NAND page; expected at least 1".to_string());
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
    ) -> Result<DcmRecommender, String> {
        let ok = rgn_entries.is_power_of_two()
            && srgn_entries.is_power_of_two()
            && srgn_entries <= rgn_entries
            && rgn_entries / srgn_entries <= 64
            && max_active_regions > 0;
        if !ok {
            return Err(format!(
                "HPB geometry of {rgn_entries} entries a region, {srgn_entries} a sub-region, \
                 {max_active_regions} active regions; expected powers of two, a sub-region no \
                 larger than its region, at most 64 sub-regions a region, and a budget above 0"
            ));
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
pub(crate) mod tests {
    use super::*;
    use crate::sim::Pcg32;
    use crate::storage::ufs::service::{link_bytes_per_s, HOST_CYCLES_PER_COMMAND};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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

    fn geometry(channels: u32, dies_per_channel: u32) -> NandGeometry {
        NandGeometry {
            channels,
            dies_per_channel,
            ..hand().nand
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
    fn two_reads_on_one_die_serialise() {
        let mut a = NandArray::new(geometry(2, 2)).unwrap();
        // Both ready at 0 on unit 0: 0 -> 60.24, then 60.24 -> 120.48.
        assert_eq!(a.read(Nanos(0), Nanos(0), 0, 4096), Nanos(60_240));
        assert_eq!(a.read(Nanos(0), Nanos(0), 0, 4096), Nanos(120_480));
        // Unit 2 shares channel 0 with unit 0 but not the die: tR overlaps, and the transfer
        // finds channel 0 free at 50 (unit 0's transfers hold 50-60.24 and 110.24-120.48).
        assert_eq!(a.read(Nanos(0), Nanos(0), 2, 4096), Nanos(60_240 + 10_240));
    }

    #[test]
    fn sixteen_reads_on_sixteen_dies_overlap() {
        // 16 channels of one die: all sixteen in one tR + one transfer.
        let mut a = NandArray::new(geometry(16, 1)).unwrap();
        let done: Vec<u64> = (0..16)
            .map(|u| a.read(Nanos(0), Nanos(0), u, 4096).0)
            .collect();
        assert!(done.iter().all(|&d| d == 60_240), "{done:?}");
        // 4 channels of 4 dies: every tR ends at 50; each channel then carries its four
        // transfers one after another: 60.24, 70.48, 80.72, 90.96.
        let mut a = NandArray::new(geometry(4, 4)).unwrap();
        let mut done: Vec<u64> = (0..16)
            .map(|u| a.read(Nanos(0), Nanos(0), u, 4096).0)
            .collect();
        done.sort_unstable();
        let expect: Vec<u64> = [60_240, 70_480, 80_720, 90_960]
            .iter()
            .flat_map(|&d| [d; 4])
            .collect();
        assert_eq!(done, expect);
    }

    #[test]
    fn a_read_takes_an_earlier_gap_only_when_it_fits() {
        let mut a = NandArray::new(geometry(2, 2)).unwrap();
        // A read reserved ahead: unit 0 busy 200 -> 260.24.
        assert_eq!(a.read(Nanos(0), Nanos(200_000), 0, 4096), Nanos(260_240));
        // Ready at 0: fits in [0, 200) -> 60.24.
        assert_eq!(a.read(Nanos(0), Nanos(0), 0, 4096), Nanos(60_240));
        // Ready at 150: 150 + 60.24 runs into 200, so after 260.24 -> 320.48.
        assert_eq!(a.read(Nanos(0), Nanos(150_000), 0, 4096), Nanos(320_480));
    }

    #[test]
    fn a_transfer_waits_for_its_channel_and_holds_its_die() {
        let mut a = NandArray::new(geometry(2, 2)).unwrap();
        // Unit 0 (channel 0) at 100: die 100 -> 160.24, channel 150 -> 160.24.
        assert_eq!(a.read(Nanos(0), Nanos(100_000), 0, 4096), Nanos(160_240));
        // Unit 2 (channel 0) at 95: tR 95 -> 145, but 145 + 10.24 runs into channel 0's
        // 150 -> 160.24, so the transfer goes 160.24 -> 170.48, the die held until then.
        assert_eq!(a.read(Nanos(0), Nanos(95_000), 2, 4096), Nanos(170_480));
        // Unit 2 again, ready at 100: its die is held until 170.48 -> 230.72.
        assert_eq!(a.read(Nanos(0), Nanos(100_000), 2, 4096), Nanos(230_720));
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
        assert!(MapCache::new(4095, 1024).is_err());
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

    #[test]
    fn the_calibrated_cache_covers_1_gib_with_1_mib_inside_the_published_range() {
        let c = MapCache::new(
            UFS21_64GB_CLASS.map_cache_bytes,
            UFS21_64GB_CLASS.map_page_entries,
        )
        .unwrap();
        // 1 MiB / (1024 x 4 B) = 256 pages x 1024 entries x 4 KiB = 2^30 bytes.
        assert_eq!(c.capacity_pages(), 256);
        assert_eq!(c.coverage_bytes(), 1 << 30);
        // Spec-storage section 5: "hundreds of KB to a few MB".
        assert!((100_000..=4_000_000).contains(&UFS21_64GB_CLASS.map_cache_bytes));
    }

    /// The preset's host stage and link at its max level (ufs21-64gb-class.toml: 200 MHz,
    /// 2 lanes of HS-G3), ns: 1000 cycles / 200 MHz = 5000; 4096 B / 1061.1328 MB/s = 3860.
    fn host_and_link_ns() -> (u64, u64) {
        let host = HOST_CYCLES_PER_COMMAND * 1_000_000_000 / 200_000_000;
        let link = (4096.0 * 1e9 / link_bytes_per_s(2, 3).unwrap() as f64).round() as u64;
        (host, link)
    }

    #[test]
    fn the_calibrated_qd1_read_is_inside_the_presets_estimate() {
        let (host, link) = host_and_link_ns();
        assert_eq!((host, link), (5_000, 3_860));
        let mut f = Ftl::new(UFS21_64GB_CLASS).unwrap();
        // Load map page 0 first; then LPN 1 hits: 90 + 58 + 10.24 = 158.24 us in the device,
        // + 5 + 3.86 = 167.1 us, inside the preset's 120-200 us estimate of the QD1 4 KiB read.
        f.read(Nanos(0), 0, 1, false);
        let t = f.read(Nanos(1_000_000), 1, 1, false).done.0 - 1_000_000;
        assert_eq!(t, 158_240);
        assert_eq!(host + t + link, 167_100);
        assert!((120_000..=200_000).contains(&(host + t + link)));
    }

    /// Requests per second of `k` customers cycling through `units` FIFO read units, chosen
    /// uniformly, `ops` unit operations of `op_s` seconds a request, and `delay_s` of fixed
    /// delay: mean value analysis (Reiser and Lavenberg), exact for exponential service.
    /// With `deterministic`, the arrival waits for half the service of the operation under way
    /// instead of all of it (the residual of a fixed time): the usual approximate MVA for FIFO
    /// stations of constant service.
    fn mva(k: u32, units: f64, ops: f64, op_s: f64, delay_s: f64, deterministic: bool) -> f64 {
        let visits = ops / units;
        let (mut queue, mut busy, mut x) = (0.0, 0.0, 0.0);
        for n in 1..=k {
            let per_visit = if deterministic {
                op_s * (1.0 + queue - busy) + busy * op_s / 2.0
            } else {
                op_s * (1.0 + queue)
            };
            x = n as f64 / (units * visits * per_visit + delay_s);
            queue = x * visits * per_visit;
            busy = x * visits * op_s;
        }
        x
    }

    /// MB/s (1e6 B/s) of 16 outstanding 4 KiB reads of uniform random LPNs over `range_gib`:
    /// each reader resubmits when its read returns through the link, after the host stage
    /// (both fixed delays here). 20,000 reads warm the map cache; the next 100,000 count.
    fn closed_loop(range_gib: u64, hpb: bool) -> f64 {
        let (host, link) = host_and_link_ns();
        let mut f = Ftl::new(UFS21_64GB_CLASS).unwrap();
        let mut rng = Pcg32::new(range_gib, hpb as u64);
        let lpns = (range_gib << 30) / LOGICAL_BLOCK_BYTES;
        let mut due: BinaryHeap<Reverse<u64>> = (0..16).map(|_| Reverse(0)).collect();
        let (warm, count) = (20_000, 100_000);
        let mut t0 = 0;
        for i in 0..warm + count {
            let Reverse(t) = due.pop().unwrap();
            if i == warm {
                t0 = t;
            }
            let done = f.read(Nanos(t + host), rng.below(lpns), 1, hpb).done;
            due.push(Reverse(done.0 + link));
        }
        let t1 = due.peek().unwrap().0;
        count as f64 * 4096.0 / ((t1 - t0) as f64 * 1e-9) / 1e6
    }

    /// The seed (HPB cover letter, iozone 4 KiB random read, 16 threads, UFS 2.1 64 GB): range
    /// GB, MB/s with HPB off, with HPB on.
    const SEED: [(u64, f64, f64); 5] = [
        (1, 300.87, 294.8),
        (4, 179.35, 293.51),
        (8, 162.52, 294.85),
        (16, 156.26, 293.45),
        (32, 153.25, 277.4),
    ];

    #[test]
    fn the_calibration_reproduces_the_hpb_cover_letters_curve() {
        let c = UFS21_64GB_CLASS;
        let (host, link) = host_and_link_ns();
        let units = c.nand.units() as f64;
        let op_s = (c.nand.read_ns + c.nand.transfer_ns(4096)) as f64 * 1e-9;
        let delay_s = (c.controller_ns + host + link) as f64 * 1e-9;
        let coverage_gib = 1.0; // 1 MiB of 4-byte entries in 4 KiB map pages, tested above
        let mut off = Vec::new();
        for (gib, seed_off, seed_on) in SEED {
            let miss = 1.0 - (coverage_gib / gib as f64).min(1.0);
            let sim_off = closed_loop(gib, false);
            let sim_on = closed_loop(gib, true);
            off.push(sim_off);
            // The analytic bracket: exponential service queues more than NAND's fixed times
            // (a floor); FIFO stations of fixed service with no reservation losses queue less
            // (a ceiling); 3% for the channel contention neither counts.
            for (sim, ops) in [(sim_off, 1.0 + miss), (sim_on, 1.0)] {
                let lo = mva(16, units, ops, op_s, delay_s, false) * 4096.0 / 1e6;
                let hi = mva(16, units, ops, op_s, delay_s, true) * 4096.0 / 1e6;
                eprintln!("{gib} GiB ops {ops:.4}: sim {sim:.1} MB/s, MVA {lo:.1}..{hi:.1}");
                assert!(
                    (0.97 * lo..=1.03 * hi).contains(&sim),
                    "{gib} GiB: {sim} not in {lo}..{hi}"
                );
            }
            eprintln!("{gib} GiB: seed off {seed_off}, on {seed_on}");
            assert!(
                (sim_off / seed_off - 1.0).abs() < 0.05,
                "{gib} GiB off: {sim_off}"
            );
            // The seed's HPB-on drop at 32 GB is the host side's (module documentation).
            if gib < 32 {
                assert!(
                    (sim_on / seed_on - 1.0).abs() < 0.05,
                    "{gib} GiB on: {sim_on}"
                );
            }
        }
        // The shape: 32 GB over 1 GB, 153.25 / 300.87 = 0.509 in the seed.
        let ratio = off[4] / off[0];
        assert!((ratio - 153.25 / 300.87).abs() < 0.03, "{ratio}");
    }

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
        assert!(DcmRecommender::new(4096, 1000, 2).is_err());
        assert!(DcmRecommender::new(1 << 20, 1024, 2).is_err()); // 1024 sub-regions a region
        assert!(DcmRecommender::new(4096, 1024, 0).is_err());
    }
}
