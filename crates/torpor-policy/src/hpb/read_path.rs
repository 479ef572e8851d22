//! Per-command preparation (`ufshpb_prep`, `ufshpb_iterate_rgn`, `ufshpb_test_ppn_dirty` in
//! v6.5; spec-storage §4.5-4.6): a WRITE or DISCARD marks the entries it covers dirty; a READ no
//! longer than the single-command limit is counted (HCM) and becomes an HPB READ when every
//! sub-region it touches has a usable map with no dirty entry in the range.

use super::lu::{HpbLu, IssuedWrites, MapLoadId, RgnState, SrgnState};
use crate::time::Nanos;

/// The block-layer operation of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// DISCARD / UNMAP: dirties like a write.
    Discard,
}

/// How the command goes to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepKind {
    /// A write or discard, sent unchanged (its entries are now dirty).
    Write,
    /// A read of zero blocks or longer than `max_single_cmd_blocks`: sent unchanged and counted
    /// neither as hit nor miss.
    NotEligible,
    /// An eligible read sent as a normal READ (`miss_cnt`).
    Miss,
    /// Sent as HPB READ (`hit_cnt`) carrying the first block's entry, from this map load.
    Hit { map_load: MapLoadId },
}

/// The outcome of [`HpbLu::prep`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prep {
    pub kind: PrepKind,
    /// HCM: the first region's read count exceeds `entries_per_srgn`; the caller schedules the
    /// normalization work ([`HpbLu::normalize`]) on the system workqueue.
    pub normalize: bool,
}

/// What one pass over the touched sub-regions does.
#[derive(Clone, Copy)]
enum Pass {
    SetDirty,
    CountRead(Nanos),
}

impl HpbLu {
    /// Prepares a command of `len` 4 KiB blocks from logical page `lpn` at time `now`.
    ///
    /// Steps (v6.5 `ufshpb_prep`): (1) a zero-length command is left alone; (2) a write or discard
    /// marks `[lpn, lpn+len)` dirty in every touched sub-region whose map is usable (§4.6) and,
    /// in HCM, clears that sub-region's read count and marks its region dirty; (3) a read longer
    /// than the single-command limit is left alone; (4) in HCM the read is counted once per
    /// touched sub-region, queuing an activation when a count becomes exactly `activation_thld`
    /// (or when the region carries the update flag), and asks for normalization when the first
    /// region's count exceeds `entries_per_srgn`; (5) it is a miss when any touched sub-region is
    /// not VALID in a non-INACTIVE region or has a dirty entry in the range, else (6) a hit.
    ///
    /// Panics when the range leaves the LU: the device rejects such commands before HPB sees them.
    pub fn prep(&mut self, now: Nanos, op: Op, lpn: u64, len: u32) -> Prep {
        assert!(
            lpn + len as u64 <= self.geo.num_blocks,
            "command beyond the LU's {} blocks",
            self.geo.num_blocks
        );
        let mut out = Prep {
            kind: PrepKind::NotEligible,
            normalize: false,
        };
        if len == 0 {
            return out;
        }
        if op != Op::Read {
            self.iterate(lpn, len, Pass::SetDirty);
            out.kind = PrepKind::Write;
            return out;
        }
        if len > self.geo.max_single_cmd_blocks {
            return out;
        }
        if self.is_hcm() {
            self.iterate(lpn, len, Pass::CountRead(now));
            let rgn = self.geo.pos(lpn).rgn;
            out.normalize = self.rgns[rgn as usize].reads > self.geo.entries_per_srgn;
        }
        out.kind = match self.clean_map_load(lpn, len) {
            Some(map_load) => {
                self.stats.hit_cnt += 1;
                PrepKind::Hit { map_load }
            }
            None => {
                self.stats.miss_cnt += 1;
                PrepKind::Miss
            }
        };
        out
    }

    /// The touched sub-regions of `[lpn, lpn+len)` as (region, sub-region, offset, entries).
    fn spans(&self, lpn: u64, len: u32) -> impl Iterator<Item = (u32, u32, u32, u32)> + '_ {
        let p = self.geo.pos(lpn);
        let mut cur = Some((p.rgn, p.srgn, p.off, len));
        std::iter::from_fn(move || {
            let (r, s, off, cnt) = cur?;
            let n = cnt.min(self.geo.srgn_entries(r, s) - off);
            cur = (cnt > n).then(|| {
                let (r2, s2) = if s + 1 == self.geo.srgns_per_rgn {
                    (r + 1, 0)
                } else {
                    (r, s + 1)
                };
                (r2, s2, 0, cnt - n)
            });
            Some((r, s, off, n))
        })
    }

    /// `ufshpb_iterate_rgn`.
    fn iterate(&mut self, lpn: u64, len: u32, pass: Pass) {
        let spans: Vec<_> = self.spans(lpn, len).collect();
        let hcm = self.is_hcm();
        for (r, s, off, n) in spans {
            let i = self.idx(r, s) as usize;
            let rgn_active = self.rgns[r as usize].state != RgnState::Inactive;
            match pass {
                Pass::SetDirty if rgn_active => {
                    let records = match self.srgns[i].state {
                        SrgnState::Valid => true,
                        SrgnState::Issued => self.issued_writes == IssuedWrites::Kept,
                        SrgnState::Unused | SrgnState::Invalid => false,
                    };
                    if records {
                        let mctx = self.srgns[i].mctx.as_mut();
                        mctx.expect("a VALID or ISSUED sub-region has a map")
                            .set_dirty(off, n);
                    }
                }
                Pass::CountRead(now) if rgn_active => {
                    // Rewind the region's read timer.
                    let rg = &mut self.rgns[r as usize];
                    rg.read_timeout = now + Nanos::from_ms(self.params.read_timeout_ms);
                    rg.read_timeout_expiries = self.params.read_timeout_expiries;
                }
                _ => {}
            }
            if !hcm {
                continue;
            }
            match pass {
                Pass::SetDirty => {
                    let reads = std::mem::take(&mut self.srgns[i].reads);
                    let rg = &mut self.rgns[r as usize];
                    rg.reads -= reads;
                    rg.dirty = true;
                }
                Pass::CountRead(_) => {
                    self.srgns[i].reads += 1;
                    self.rgns[r as usize].reads += 1;
                    let activate = self.srgns[i].reads == self.params.activation_thld;
                    // `activate || test_and_clear_bit(RGN_FLAG_UPDATE)`: the flag survives a
                    // read that activates by count.
                    if activate || std::mem::take(&mut self.rgns[r as usize].update) {
                        self.update_active_info(r, s);
                    }
                }
            }
        }
    }

    /// `ufshpb_test_ppn_dirty` inverted: the first sub-region's map load when every touched
    /// sub-region is usable and clean over the range.
    fn clean_map_load(&self, lpn: u64, len: u32) -> Option<MapLoadId> {
        let mut first = None;
        for (r, s, off, n) in self.spans(lpn, len) {
            let sr = &self.srgns[self.idx(r, s) as usize];
            if self.rgns[r as usize].state == RgnState::Inactive || sr.state != SrgnState::Valid {
                return None;
            }
            let mctx = sr.mctx.as_ref().expect("a VALID sub-region has a map");
            if mctx.any_dirty(off, n) {
                return None;
            }
            first = first.or(mctx.load);
        }
        first
    }
}
