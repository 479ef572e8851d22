//! HPB geometry of one logical unit from its descriptor values (spec-storage §4.2-4.3;
//! `ufshpb_get_dev_info`, `ufshpb_get_geo_info`, `ufshpb_get_lu_info` and
//! `ufshpb_lu_parameter_init` in v6.5): how many L2P entries a region and a sub-region hold, how
//! a logical page number splits into (region, sub-region, offset), which regions are pinned, how
//! many regions the LRU may hold, and how long a read may be to become one HPB READ.

use std::ops::Range;

/// One HPB entry (a PPN) maps one 4 KiB logical block (`HPB_ENTRY_BLOCK_SIZE`).
pub const ENTRY_BLOCK_BYTES: u64 = 4096;
/// Bytes of one HPB entry in host memory and in the READ BUFFER data (`HPB_ENTRY_SIZE`).
pub const ENTRY_BYTES: u64 = 8;
/// Unit of `bHPBRegionSize` / `bHPBSubRegionSize`: size = 512 B × 2^value (`HPB_RGN_SIZE_UNIT`).
pub const SIZE_UNIT_BYTES: u64 = 512;
/// Host page size the map pages are allocated in (`PAGE_SIZE` on arm64/x86 4 KiB kernels).
pub const PAGE_BYTES: u64 = 4096;
/// HPB 1.0 converts only single-block reads (`HPB_LEGACY_CHUNK_HIGH`).
pub const LEGACY_MAX_SINGLE_CMD_BLOCKS: u32 = 1;
/// The HPB READ CDB carries the length in one byte (`HPB_MULTI_CHUNK_HIGH`).
pub const MULTI_MAX_SINGLE_CMD_BLOCKS: u32 = 255;
/// `wHPBVersion` of HPB 1.0 (`HPB_SUPPORT_LEGACY_VERSION`) and 2.0 (`HPB_SUPPORT_VERSION`).
pub const HPB_VERSION_1_0: u16 = 0x0100;
pub const HPB_VERSION_2_0: u16 = 0x0200;
/// Largest `bHPBRegionSize` whose entry count fits the driver's `u32 entries_per_rgn`
/// (512 × 2^34 / 4096 = 2^31).
pub const MAX_REGION_SIZE_CODE: u8 = 34;
/// Region and sub-region indices travel as big-endian 16-bit fields (READ BUFFER bytes 2-5,
/// response fields), so an LU may have at most 2^16 regions.
pub const MAX_REGIONS: u64 = 1 << 16;

/// Who decides which regions are active (`bHPBControl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlMode {
    /// 00h: the host activates from its read counters (HPB 2.0).
    Host,
    /// 01h: the device recommends in its responses.
    Device,
}

/// The descriptor, attribute and unit values HPB is configured from (spec-storage §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpbDescriptors {
    /// Device descriptor `wHPBVersion` (0x40).
    pub hpb_version: u16,
    /// Device descriptor `bHPBControl` (0x42).
    pub hpb_control: u8,
    /// Geometry descriptor `bHPBRegionSize` (0x48).
    pub region_size: u8,
    /// Geometry descriptor `bHPBSubRegionSize` (0x4A).
    pub subregion_size: u8,
    /// Geometry descriptor `wDeviceMaxActiveHPBRegions` (0x4B).
    pub device_max_active_regions: u16,
    /// Unit descriptor `wLUMaxActiveHPBRegions` (0x23).
    pub lu_max_active_regions: u16,
    /// Unit descriptor `wHPBPinnedRegionStartIdx` (0x25).
    pub pinned_start: u16,
    /// Unit descriptor `wNumHPBPinnedRegions` (0x27).
    pub num_pinned: u16,
    /// Attribute `bMAX_DATA_SIZE_FOR_HPB_SINGLE_CMD`; `None` when the query fails (HPB 2.0 then
    /// falls back to one block). HPB 1.0 never reads it.
    pub max_data_size_single_cmd: Option<u8>,
    /// The LU's logical block count (`qLogicalBlockCount`), in 4 KiB blocks.
    pub num_blocks: u64,
}

/// A descriptor set the model cannot use, with what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GeometryError(pub String);

/// Where a logical page lives in the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub rgn: u32,
    pub srgn: u32,
    /// Entry index inside the sub-region.
    pub off: u32,
}

/// The derived geometry of one HPB LU (spec-storage §4.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub mode: ControlMode,
    /// HPB 1.0 ("legacy") device.
    pub legacy: bool,
    pub rgn_bytes: u64,
    pub srgn_bytes: u64,
    pub entries_per_rgn: u32,
    pub entries_per_srgn: u32,
    /// Map bytes of a full sub-region: the READ BUFFER allocation length.
    pub srgn_mem_size: u32,
    pub srgns_per_rgn: u32,
    pub rgns_per_lu: u32,
    pub srgns_per_lu: u32,
    /// Entries of the LU's last sub-region when it is partial; 0 when it is full.
    pub last_srgn_entries: u32,
    /// Sub-regions of the last region (`((srgns_per_lu - 1) mod srgns_per_rgn) + 1`).
    pub last_rgn_srgn_cnt: u32,
    pub pages_per_srgn: u32,
    /// `wDeviceMaxActiveHPBRegions`: the driver only checks it is non-zero; the LU value bounds
    /// the LRU.
    pub device_max_active_rgns: u32,
    pub lu_max_active_rgns: u32,
    /// Pinned regions (always active, never in the LRU).
    pub pinned: Range<u32>,
    /// Regions the LRU may hold: `wLUMaxActiveHPBRegions - wNumHPBPinnedRegions`.
    pub max_lru_active: u32,
    /// Longest read, in 4 KiB blocks, that may become one HPB READ (`pre_req_max_tr_len`).
    pub max_single_cmd_blocks: u32,
    pub num_blocks: u64,
}

fn err<T>(msg: String) -> Result<T, GeometryError> {
    Err(GeometryError(msg))
}

impl Geometry {
    /// Derives the geometry, refusing what the driver refuses (unknown version, zero sizes, zero
    /// max active regions) and what it would mishandle (a sub-region smaller than one entry block
    /// or larger than its region, more pinned regions than active ones, pinned regions past the
    /// LU's end, region indices that do not fit 16 bits).
    pub fn new(d: &HpbDescriptors) -> Result<Geometry, GeometryError> {
        let legacy = match d.hpb_version {
            HPB_VERSION_1_0 => true,
            HPB_VERSION_2_0 => false,
            v => return err(format!("wHPBVersion 0x0100 or 0x0200, got 0x{v:04x}")),
        };
        let mode = match d.hpb_control {
            0 => ControlMode::Host,
            1 => ControlMode::Device,
            c => {
                return err(format!(
                    "bHPBControl 0 (host control) or 1 (device control), got {c}"
                ))
            }
        };
        if d.region_size == 0 || d.region_size > MAX_REGION_SIZE_CODE {
            return err(format!(
                "bHPBRegionSize in 1..={MAX_REGION_SIZE_CODE}, got {}",
                d.region_size
            ));
        }
        let rgn_bytes = SIZE_UNIT_BYTES << d.region_size;
        let srgn_min_code = (ENTRY_BLOCK_BYTES / SIZE_UNIT_BYTES).trailing_zeros() as u8;
        if d.subregion_size < srgn_min_code || d.subregion_size > d.region_size {
            return err(format!(
                "bHPBSubRegionSize in {srgn_min_code}..={} (one 4 KiB entry block up to the region \
                 size), got {}",
                d.region_size, d.subregion_size
            ));
        }
        let srgn_bytes = SIZE_UNIT_BYTES << d.subregion_size;
        if d.device_max_active_regions == 0 {
            return err("wDeviceMaxActiveHPBRegions > 0, got 0".into());
        }
        if d.lu_max_active_regions == 0 {
            return err("wLUMaxActiveHPBRegions > 0, got 0".into());
        }
        if d.num_blocks == 0 {
            return err("an HPB LU with at least one logical block, got 0".into());
        }
        let entries_per_rgn = rgn_bytes / ENTRY_BLOCK_BYTES;
        let entries_per_srgn = srgn_bytes / ENTRY_BLOCK_BYTES;
        let rgns_per_lu = d.num_blocks.div_ceil(entries_per_rgn);
        if rgns_per_lu > MAX_REGIONS {
            return err(format!(
                "at most {MAX_REGIONS} regions per LU (16-bit region index), got {rgns_per_lu}"
            ));
        }
        let srgns_per_rgn = entries_per_rgn / entries_per_srgn;
        let srgns_per_lu = d.num_blocks.div_ceil(entries_per_srgn);
        let pinned = d.pinned_start as u32..d.pinned_start as u32 + d.num_pinned as u32;
        if d.num_pinned > d.lu_max_active_regions {
            return err(format!(
                "wNumHPBPinnedRegions <= wLUMaxActiveHPBRegions ({}), got {}",
                d.lu_max_active_regions, d.num_pinned
            ));
        }
        if d.num_pinned > 0 && pinned.end as u64 > rgns_per_lu {
            return err(format!(
                "pinned regions {}..{} inside the LU's {rgns_per_lu} regions",
                pinned.start, pinned.end
            ));
        }
        let srgn_mem_size = entries_per_srgn * ENTRY_BYTES;
        let max_single_cmd_blocks = if legacy {
            LEGACY_MAX_SINGLE_CMD_BLOCKS
        } else {
            d.max_data_size_single_cmd
                .map_or(LEGACY_MAX_SINGLE_CMD_BLOCKS, |v| {
                    (v as u32 + 1).min(MULTI_MAX_SINGLE_CMD_BLOCKS)
                })
        };
        Ok(Geometry {
            mode,
            legacy,
            rgn_bytes,
            srgn_bytes,
            entries_per_rgn: entries_per_rgn as u32,
            entries_per_srgn: entries_per_srgn as u32,
            srgn_mem_size: srgn_mem_size as u32,
            srgns_per_rgn: srgns_per_rgn as u32,
            rgns_per_lu: rgns_per_lu as u32,
            srgns_per_lu: srgns_per_lu as u32,
            last_srgn_entries: (d.num_blocks % entries_per_srgn) as u32,
            last_rgn_srgn_cnt: ((srgns_per_lu - 1) % srgns_per_rgn) as u32 + 1,
            pages_per_srgn: srgn_mem_size.div_ceil(PAGE_BYTES) as u32,
            device_max_active_rgns: d.device_max_active_regions as u32,
            lu_max_active_rgns: d.lu_max_active_regions as u32,
            pinned: if d.num_pinned == 0 { 0..0 } else { pinned },
            max_lru_active: (d.lu_max_active_regions - d.num_pinned) as u32,
            max_single_cmd_blocks,
            num_blocks: d.num_blocks,
        })
    }

    /// `ufshpb_get_pos_from_lpn`: shifts and masks (every count is a power of two).
    pub fn pos(&self, lpn: u64) -> Pos {
        let rgn_shift = self.entries_per_rgn.trailing_zeros();
        let srgn_shift = self.entries_per_srgn.trailing_zeros();
        let in_rgn = (lpn & (self.entries_per_rgn as u64 - 1)) as u32;
        Pos {
            rgn: (lpn >> rgn_shift) as u32,
            srgn: in_rgn >> srgn_shift,
            off: in_rgn & (self.entries_per_srgn - 1),
        }
    }

    /// The first logical page of a sub-region.
    pub fn first_lpn(&self, rgn: u32, srgn: u32) -> u64 {
        rgn as u64 * self.entries_per_rgn as u64 + srgn as u64 * self.entries_per_srgn as u64
    }

    /// Sub-regions in region `rgn` (`srgn_cnt`).
    pub fn srgn_cnt(&self, rgn: u32) -> u32 {
        if rgn + 1 == self.rgns_per_lu {
            self.last_rgn_srgn_cnt
        } else {
            self.srgns_per_rgn
        }
    }

    /// The LU's partial last sub-region (`is_last`: set only when `last_srgn_entries != 0`).
    pub fn is_last(&self, rgn: u32, srgn: u32) -> bool {
        self.last_srgn_entries != 0 && rgn + 1 == self.rgns_per_lu && srgn + 1 == self.srgn_cnt(rgn)
    }

    /// Entries (dirty-bitmap bits) of a sub-region.
    pub fn srgn_entries(&self, rgn: u32, srgn: u32) -> u32 {
        if self.is_last(rgn, srgn) {
            self.last_srgn_entries
        } else {
            self.entries_per_srgn
        }
    }

    /// READ BUFFER allocation length: the map bytes the device returns for this sub-region.
    pub fn map_alloc_len(&self, rgn: u32, srgn: u32) -> u32 {
        self.srgn_entries(rgn, srgn) * ENTRY_BYTES as u32
    }

    pub fn is_pinned(&self, rgn: u32) -> bool {
        self.pinned.contains(&rgn)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The spec's example: 32 MB regions (v = 16), 4 MB sub-regions (v = 13), HPB 2.0, DCM.
    pub(crate) fn example() -> HpbDescriptors {
        HpbDescriptors {
            hpb_version: HPB_VERSION_2_0,
            hpb_control: 1,
            region_size: 16,
            subregion_size: 13,
            device_max_active_regions: 64,
            lu_max_active_regions: 32,
            pinned_start: 0,
            num_pinned: 0,
            max_data_size_single_cmd: Some(0x1f),
            // 1 GiB + 1 MiB: 32 full regions and a 33rd holding one partial sub-region.
            num_blocks: (1 << 30) / 4096 + 256,
        }
    }

    #[test]
    fn spec_example_32mb_regions_4mb_subregions() {
        let g = Geometry::new(&example()).unwrap();
        // 512 × 2^16 = 32 MiB; 512 × 2^13 = 4 MiB.
        assert_eq!((g.rgn_bytes, g.srgn_bytes), (32 << 20, 4 << 20));
        // 32 MiB / 4 KiB = 8192 entries; 4 MiB / 4 KiB = 1024; 1024 × 8 B = 8 KiB of map.
        assert_eq!((g.entries_per_rgn, g.entries_per_srgn), (8192, 1024));
        assert_eq!(
            (g.srgn_mem_size, g.srgns_per_rgn, g.pages_per_srgn),
            (8192, 8, 2)
        );
        // 262144 + 256 blocks: ceil(/8192) = 33 regions, ceil(/1024) = 257 sub-regions, the last
        // holding 256 entries, alone in region 32.
        assert_eq!((g.rgns_per_lu, g.srgns_per_lu), (33, 257));
        assert_eq!((g.last_srgn_entries, g.last_rgn_srgn_cnt), (256, 1));
        assert!(g.is_last(32, 0) && !g.is_last(31, 7));
        assert_eq!(g.map_alloc_len(32, 0), 256 * 8);
        assert_eq!(g.map_alloc_len(3, 5), 8192);
        assert_eq!((g.max_lru_active, g.max_single_cmd_blocks), (32, 32));
        // lpn 8192 × 5 + 1024 × 3 + 17 → region 5, sub-region 3, entry 17.
        let p = g.pos(8192 * 5 + 1024 * 3 + 17);
        assert_eq!((p.rgn, p.srgn, p.off), (5, 3, 17));
        assert_eq!(g.first_lpn(5, 3), 8192 * 5 + 1024 * 3);
    }

    #[test]
    fn full_last_subregion_is_not_last() {
        let d = HpbDescriptors {
            num_blocks: 8192 * 2 + 1024 * 3,
            ..example()
        };
        let g = Geometry::new(&d).unwrap();
        assert_eq!(
            (g.rgns_per_lu, g.last_srgn_entries, g.last_rgn_srgn_cnt),
            (3, 0, 3)
        );
        assert!(!g.is_last(2, 2));
        assert_eq!(g.srgn_entries(2, 2), 1024);
    }

    #[test]
    fn single_command_length_by_version() {
        let legacy = HpbDescriptors {
            hpb_version: HPB_VERSION_1_0,
            ..example()
        };
        assert_eq!(Geometry::new(&legacy).unwrap().max_single_cmd_blocks, 1);
        let len = |v| {
            let d = HpbDescriptors {
                max_data_size_single_cmd: v,
                ..example()
            };
            Geometry::new(&d).unwrap().max_single_cmd_blocks
        };
        // 00h = 4 KiB (1 block); FFh + 1 = 256, capped at 255; a failed query gives 1.
        assert_eq!(
            (len(Some(0)), len(Some(0xfe)), len(Some(0xff)), len(None)),
            (1, 255, 255, 1)
        );
    }

    #[test]
    fn pinned_regions_reduce_the_lru() {
        let d = HpbDescriptors {
            pinned_start: 2,
            num_pinned: 3,
            ..example()
        };
        let g = Geometry::new(&d).unwrap();
        assert_eq!((g.pinned.clone(), g.max_lru_active), (2..5, 29));
        assert!(g.is_pinned(4) && !g.is_pinned(5) && !g.is_pinned(1));
    }

    #[test]
    fn invalid_descriptors_say_what_was_expected() {
        let bad = |d: HpbDescriptors| Geometry::new(&d).unwrap_err().0;
        let e = example();
        assert_eq!(
            bad(HpbDescriptors {
                hpb_version: 0x0300,
                ..e
            }),
            "wHPBVersion 0x0100 or 0x0200, got 0x0300"
        );
        assert!(bad(HpbDescriptors {
            hpb_control: 2,
            ..e
        })
        .starts_with("bHPBControl"));
        assert!(bad(HpbDescriptors {
            region_size: 0,
            ..e
        })
        .starts_with("bHPBRegionSize"));
        assert_eq!(
            bad(HpbDescriptors {
                subregion_size: 2,
                ..e
            }),
            "bHPBSubRegionSize in 3..=16 (one 4 KiB entry block up to the region size), got 2"
        );
        assert!(bad(HpbDescriptors {
            subregion_size: 17,
            ..e
        })
        .starts_with("bHPBSubRegionSize"));
        assert!(bad(HpbDescriptors {
            lu_max_active_regions: 0,
            ..e
        })
        .starts_with("wLUMax"));
        assert!(bad(HpbDescriptors {
            device_max_active_regions: 0,
            ..e
        })
        .starts_with("wDevice"));
        assert!(bad(HpbDescriptors {
            num_pinned: 33,
            ..e
        })
        .starts_with("wNumHPBPinned"));
        assert!(bad(HpbDescriptors {
            pinned_start: 31,
            num_pinned: 3,
            ..e
        })
        .starts_with("pinned"));
        assert!(bad(HpbDescriptors { num_blocks: 0, ..e }).contains("at least one"));
        // 8 KiB regions (v = 4, two entries each): 2^17 + 1 blocks need 2^16 + 1 regions.
        let many = HpbDescriptors {
            region_size: 4,
            subregion_size: 3,
            num_blocks: 2 * (1 << 16) + 1,
            ..e
        };
        assert!(bad(many).starts_with("at most 65536 regions"));
    }
}
