//! APST tables (NVMe Feature 0Ch). The table builders are being written; the table type is
//! fixed here because the drive model executes it.

use serde::Serialize;

/// Number of entries of the APST data structure (one per possible power state).
pub const APST_ENTRIES: usize = 32;

/// The Feature 0Ch payload: APSTE (CDW11 bit 0) and 32 little-endian 64-bit entries, entry `i`
/// describing power state `i` as `(itps << 3) | (itpt_ms << 8)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApstTable {
    pub apste: bool,
    pub entries: [u64; APST_ENTRIES],
}

impl ApstTable {
    /// ITPS of entry `ps`: the state to move to after the idle time.
    pub fn itps(&self, ps: usize) -> u8 {
        ((self.entries[ps] >> 3) & 0x1f) as u8
    }

    /// ITPT of entry `ps`, ms; 0 disables the transition.
    pub fn itpt_ms(&self, ps: usize) -> u32 {
        ((self.entries[ps] >> 8) & 0xff_ffff) as u32
    }
}
