//! The NAND array behind the device's controller: how long a read of data, or of a map page,
//! takes once the controller knows where it lies, and how reads on different dies overlap
//! while reads on one die or one channel wait for each other. Its figures for the calibrated
//! device are in `calibration.rs`.
//!
//! Each NAND page a read touches occupies its read unit for `tR` (cell array to page register)
//! and then its channel for the transfer of the bytes read, at the channel's rate; the unit
//! stays busy until its transfer ends (the data sits in its page register). Different units
//! overlap; units on one channel share that channel's transfers. A read unit is a die, or a
//! plane of a die when its planes read independently ([`NandGeometry::planes_per_die`]); units
//! are numbered channel first (`channel = unit mod channels`). Units and channels keep their
//! promised intervals (`reservations.rs`), so a read's completion is known when it is asked.

use super::reservations::{earliest_gap, first_overlap_end, prune, reserve, Busy};
use crate::time::Nanos;

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

/// A NAND array with no read unit, no channel or no channel rate.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "NAND array of {} channels x {} dies x {} planes at {} bytes/s; expected every dimension and \
     the channel rate above 0",
    .0.channels,
    .0.dies_per_channel,
    .0.planes_per_die,
    .0.channel_bytes_per_s
)]
pub struct NandGeometryError(pub NandGeometry);

/// The NAND array as parallel servers: each read unit and each channel keeps its reservations
/// (module documentation).
#[derive(Clone, Debug)]
pub struct NandArray {
    geometry: NandGeometry,
    units: Vec<Busy>,
    channels: Vec<Busy>,
}

impl NandArray {
    /// An idle array; an error for a zero dimension or rate.
    pub fn new(geometry: NandGeometry) -> Result<NandArray, NandGeometryError> {
        let g = geometry;
        if g.units() == 0 || g.channel_bytes_per_s == 0 {
            return Err(NandGeometryError(g));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand device's NAND (`ftl/mod.rs`'s tests): tR 50 us, 400 MB/s (4096 B in 10.24 us),
    /// one plane a die.
    fn geometry(channels: u32, dies_per_channel: u32) -> NandGeometry {
        NandGeometry {
            channels,
            dies_per_channel,
            planes_per_die: 1,
            read_ns: 50_000,
            channel_bytes_per_s: 400_000_000,
        }
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
}
