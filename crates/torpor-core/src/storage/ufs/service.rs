//! Service-time model of a UFS device behind a host whose clock and link gear scale
//! (spec-storage §2.5, §5): how long each command takes at the host's current level, and what a
//! scale operation costs. Every coefficient is calibrated from a preset's published figures at
//! the max level; the min level then follows from the host clock ratio and the gear's bandwidth.
//!
//! # Stages (each command passes all three; times in integer ns)
//!
//! 1. **Host controller**, one server, FIFO: `t_h = c_h / f` with `c_h` =
//!    [`HOST_CYCLES_PER_COMMAND`] cycles at the first clock's frequency `f` (the clock devfreq
//!    scales). It is the only stage the clock itself slows.
//! 2. **Device**, `N` slots served in parallel (FIFO, earliest free slot), as the NVMe model's
//!    `service.rs`: a command of `b` bytes holds a slot for
//!    `t_d(op, b) = t_4k(op) + (b − 4096)⁺ / r(op)`: the 4 KiB random time plus the rest of the
//!    transfer at the per-slot streaming rate `r`. NAND, FTL and the device's controller: no host
//!    clock or gear in it.
//! 3. **Link**, one server, FIFO in submission order: `t_l = b / B(g)` with
//!    `B(g) = lanes × rate_B(g) × 8/10 × η`: M-PHY Rate-B lane rate, 8b/10b line coding, and
//!    the UniPro/UPIU framing efficiency η = [`LINK_EFFICIENCY`]. A read crosses it after the
//!    device stage (DATA IN), a write before (DATA OUT, then the program).
//!
//! A read completes at the end of its transfer; a write when its slot time ends. A slot is free
//! again when its device time ends (a read's data then waits in the device's buffer for the
//! link). Each transfer takes the link's earliest idle gap long enough for it once its data is
//! ready, so a transfer ready sooner passes one whose data comes later (a device with an FTL
//! finishes reads out of order: strict submission order there cost a sixth of the throughput).
//!
//! With an FTL (`ftl/`) a read's device stage is the FTL's map lookup and NAND read instead of
//! a slot, and HPB's READ BUFFER and WRITE BUFFER commands pass the same host stage and link.
//!
//! Steady state with enough commands queued, requests of `b` bytes per second:
//! `min(N / t_d(op, b), B(g) / b, f / c_h)`; at queue depth 1 the latency is
//! `t_h + t_d(op, b) + t_l(b)`.
//!
//! # Calibration at the max level (`f_max`, `g_max`), from the preset ([`Calibration`])
//!
//! - `N = round(IOPS_read × (L1 − t_h − 4096 / B))`, at least 1 and at most the figures' queue
//!   depth: the slots that make the published random read IOPS at the QD1 latency estimate `L1`.
//! - `t_4k(read) = N / IOPS_read`, `t_4k(write) = N / IOPS_write`: the slots then reproduce both
//!   IOPS figures exactly; the QD1 read latency becomes `t_h + N / IOPS_read + 4096 / B`, within
//!   `L1`'s range (checked) instead of its central value, because `N` is whole.
//! - `r(op)` solves `N × S / t_d(op, S) = seq(op)` at `S` = [`SEQ_REFERENCE_BYTES`]:
//!   `r = (S − 4096) / (N × S / seq − t_4k)`.
//!
//! Refused (a preset error): a published figure the link, the host stage or the queue depth
//! cannot carry at the max level (`seq > B`, `IOPS × 4096 > B`, `IOPS > f_max / c_h`,
//! `IOPS > QD / L1`), which would make the model miss it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::ftl::reservations::{earliest_gap, prune, reserve, Busy};
use super::ftl::{Ftl, LOGICAL_BLOCK_BYTES};
use crate::storage::io::{IoOp, IoRequest};
use crate::time::Nanos;

/// Size of the requests behind random IOPS and the QD1 latency.
pub const SMALL_BYTES: u32 = 4096;

/// Request size at which the sequential figures are reproduced: ASSUMPTION, 512 KiB, ufshcd's
/// long-standing per-command maximum (`max_sectors` 1024) and the usual size of vendor
/// sequential tests, which do not state theirs.
pub const SEQ_REFERENCE_BYTES: u32 = 512 * 1024;

/// UniPro/UPIU framing efficiency of the link, η. ESTIMATE 0.91, range 0.90–0.95. The two
/// devices that sit at their link's limit bound it from below: Samsung eUFS 3.1 reads 2100 MB/s
/// on 2 × HS-G4 (2332 MB/s after 8b/10b, 0.900) and Samsung UFS 4.0 4200 MB/s on 2 × HS-G5
/// (4664 MB/s, 0.900) (facts-ufs-performance.json); the top of the range is UniPro's data frame
/// (up to 288 payload bytes for 8 bytes of header, trailer and acknowledgement, 0.97) less UPIU
/// headers and turnarounds.
pub const LINK_EFFICIENCY: f64 = 0.91;

/// Host-controller cycles per command, `c_h`. ESTIMATE 1000, range 300–3000, no public figure:
/// fetching the transfer request descriptor and command descriptor (UPIU, PRDT), sending the
/// COMMAND UPIU, taking the RESPONSE UPIU and raising the completion, a few hundred cycles of
/// state machine and DMA latency each. 3.3 µs at 300 MHz, 26.7 µs at 37.5 MHz.
pub const HOST_CYCLES_PER_COMMAND: u64 = 1000;

/// Highest HS gear torpor knows (UFS 4.0's HS-G5).
pub const MAX_GEAR: u8 = 5;

/// Payload bytes per second of one lane in HS gear `gear` (1..=5), Rate B, after 8b/10b:
/// spec-storage §5 (G1 1457.6 Mbit/s, doubling per gear; UFS 4.0's HS-G5 is 23.3 Gbit/s,
/// facts-ufs-performance.json). ASSUMPTION for G5: it keeps 8b/10b like G1–G4 (UFS 4.0's
/// 4200 MB/s over 2 × 23.3 Gbit/s fits it). `None` outside 1..=5.
pub fn lane_payload_bytes_per_s(gear: u8) -> Option<u64> {
    // 1457.6 Mbit/s × 8/10 / 8 bits = 145.76 MB/s.
    (1..=MAX_GEAR)
        .contains(&gear)
        .then(|| 145_760_000u64 << (gear - 1))
}

/// One of the host's two clock-scaling levels: the first clock's frequency and the link gear
/// used there (non-OPP mode: `{min_freq, max_freq}` of the first clock, gear down to
/// `min_gear` when scaling down).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HostLevel {
    pub freq_hz: u64,
    pub gear: u8,
}

/// The published figures the model reproduces at the max level (central values).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Calibration {
    pub seq_read_mb_s: f64,
    pub seq_write_mb_s: f64,
    pub rand_read_iops: f64,
    pub rand_write_iops: f64,
    /// Queue depth of the IOPS figures.
    pub iops_queue_depth: u32,
    /// 4 KiB random read latency at queue depth 1, µs: the central value and its range.
    pub read_4k_qd1_us: (f64, f64, f64),
    pub lanes: u8,
    pub max: HostLevel,
}

/// The calibrated coefficients (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UfsServiceModel {
    pub lanes: u8,
    /// `N`.
    pub slots: u32,
    /// `c_h`.
    pub host_cycles: u64,
    /// `t_4k(read)`, `t_4k(write)`, ns.
    pub read_4k_ns: u64,
    pub write_4k_ns: u64,
    /// `r(read)`, `r(write)`, bytes per second.
    pub read_stream_bytes_per_s: u64,
    pub write_stream_bytes_per_s: u64,
}

/// A published figure the service model cannot carry, with why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("HS gear {gear} is not 1..=5")]
    UnknownGear { gear: u8 },
    #[error(
        "sequential {what} {mb_s} MB/s is above the link's {link_mb_s:.1} MB/s at the max level \
         ({lanes} lanes of HS-G{gear}, efficiency {})",
        LINK_EFFICIENCY
    )]
    SequentialAboveLink {
        what: &'static str,
        mb_s: f64,
        link_mb_s: f64,
        lanes: u8,
        gear: u8,
    },
    #[error(
        "random {what} {iops} IOPS is above the {cap:.0} the link, the host stage \
         ({} cycles at {freq_hz} Hz) and queue depth {qd} at the QD1 latency allow",
        HOST_CYCLES_PER_COMMAND
    )]
    RandomAboveCap {
        what: &'static str,
        iops: f64,
        cap: f64,
        freq_hz: u64,
        qd: u32,
    },
    #[error(
        "{slots} slots give a QD1 read latency of {qd1_us:.1} us, outside the estimate's {low_us} \
         to {high_us} us"
    )]
    Qd1OutsideEstimate {
        slots: f64,
        qd1_us: f64,
        low_us: f64,
        high_us: f64,
    },
    #[error(
        "sequential {what} {mb_s} MB/s is slower than {slots} slots of random 4 KiB commands move \
         the same bytes; expected a faster sequential figure"
    )]
    SequentialTooSlow {
        what: &'static str,
        mb_s: f64,
        slots: f64,
    },
}

/// Nanoseconds for `bytes` at `bytes_per_s`, rounded to the nearest.
fn ns_for(bytes: u64, bytes_per_s: u64) -> u64 {
    let bps = bytes_per_s.max(1) as u128;
    ((bytes as u128 * 1_000_000_000 + bps / 2) / bps) as u64
}

impl UfsServiceModel {
    /// The coefficients that reproduce `c` at its max level; an error names the figure the
    /// model cannot carry.
    pub fn calibrate(c: &Calibration) -> Result<UfsServiceModel, CalibrationError> {
        let link = link_bytes_per_s(c.lanes, c.max.gear)
            .ok_or(CalibrationError::UnknownGear { gear: c.max.gear })? as f64;
        let host_s = HOST_CYCLES_PER_COMMAND as f64 / c.max.freq_hz as f64;
        let small = SMALL_BYTES as f64;
        let qd = c.iops_queue_depth.max(1);
        let (l1_central, l1_low, l1_high) = (
            c.read_4k_qd1_us.0 * 1e-6,
            c.read_4k_qd1_us.1 * 1e-6,
            c.read_4k_qd1_us.2 * 1e-6,
        );
        for (what, mb_s) in [("read", c.seq_read_mb_s), ("write", c.seq_write_mb_s)] {
            if mb_s * 1e6 > link {
                return Err(CalibrationError::SequentialAboveLink {
                    what,
                    mb_s,
                    link_mb_s: link / 1e6,
                    lanes: c.lanes,
                    gear: c.max.gear,
                });
            }
        }
        for (what, iops) in [("read", c.rand_read_iops), ("write", c.rand_write_iops)] {
            let cap = (link / small).min(1.0 / host_s).min(qd as f64 / l1_central);
            if iops > cap {
                return Err(CalibrationError::RandomAboveCap {
                    what,
                    iops,
                    cap,
                    freq_hz: c.max.freq_hz,
                    qd,
                });
            }
        }
        let device_read = l1_central - host_s - small / link;
        let slots = (c.rand_read_iops * device_read)
            .round()
            .clamp(1.0, qd as f64) as u32;
        let n = slots as f64;
        let read_4k = n / c.rand_read_iops;
        let write_4k = n / c.rand_write_iops;
        let l1_model = host_s + read_4k + small / link;
        if !(l1_low - 1e-9..=l1_high + 1e-9).contains(&l1_model) {
            return Err(CalibrationError::Qd1OutsideEstimate {
                slots: n,
                qd1_us: l1_model * 1e6,
                low_us: c.read_4k_qd1_us.1,
                high_us: c.read_4k_qd1_us.2,
            });
        }
        let seq = SEQ_REFERENCE_BYTES as f64;
        let stream = |t_4k: f64, mb_s: f64, what: &'static str| {
            let extra = n * seq / (mb_s * 1e6) - t_4k;
            if extra <= 0.0 {
                return Err(CalibrationError::SequentialTooSlow {
                    what,
                    mb_s,
                    slots: n,
                });
            }
            Ok(((seq - small) / extra).round() as u64)
        };
        Ok(UfsServiceModel {
            lanes: c.lanes,
            slots,
            host_cycles: HOST_CYCLES_PER_COMMAND,
            read_4k_ns: (read_4k * 1e9).round() as u64,
            write_4k_ns: (write_4k * 1e9).round() as u64,
            read_stream_bytes_per_s: stream(read_4k, c.seq_read_mb_s, "read")?,
            write_stream_bytes_per_s: stream(write_4k, c.seq_write_mb_s, "write")?,
        })
    }

    /// `t_h` at `freq_hz`.
    pub fn host_time(&self, freq_hz: u64) -> Nanos {
        let f = freq_hz.max(1) as u128;
        Nanos(((self.host_cycles as u128 * 1_000_000_000 + f / 2) / f) as u64)
    }

    /// `t_d(op, bytes)`.
    pub fn device_time(&self, op: IoOp, bytes: u32) -> Nanos {
        let (t_4k, rate) = match op {
            IoOp::Read => (self.read_4k_ns, self.read_stream_bytes_per_s),
            IoOp::Write => (self.write_4k_ns, self.write_stream_bytes_per_s),
        };
        let extra = bytes.saturating_sub(SMALL_BYTES) as u64;
        Nanos(t_4k + ns_for(extra, rate))
    }

    /// `t_l(bytes)` at `gear` (a gear outside 1..=5 is taken as G1).
    pub fn link_time(&self, bytes: u32, gear: u8) -> Nanos {
        let b = link_bytes_per_s(self.lanes, gear)
            .or_else(|| link_bytes_per_s(self.lanes, 1))
            .unwrap_or(1);
        Nanos(ns_for(bytes as u64, b))
    }

    /// Latency of one request on an idle device at `level`.
    pub fn qd1_latency(&self, op: IoOp, bytes: u32, level: HostLevel) -> Nanos {
        self.host_time(level.freq_hz)
            + self.device_time(op, bytes)
            + self.link_time(bytes, level.gear)
    }

    /// Requests per second the three stages carry at `level` with enough commands queued: the
    /// smallest of the stages' rates.
    pub fn saturated_rate(&self, op: IoOp, bytes: u32, level: HostLevel) -> f64 {
        let per_s = |t: Nanos| 1e9 / (t.0.max(1) as f64);
        (self.slots as f64 * per_s(self.device_time(op, bytes)))
            .min(per_s(self.link_time(bytes, level.gear)))
            .min(per_s(self.host_time(level.freq_hz)))
    }
}

/// `B(g)` in bytes per second, `None` for a gear outside 1..=5.
pub fn link_bytes_per_s(lanes: u8, gear: u8) -> Option<u64> {
    lane_payload_bytes_per_s(gear)
        .map(|lane| (lanes.max(1) as f64 * lane as f64 * LINK_EFFICIENCY).round() as u64)
}

/// The three stages' state: when the host stage and the link are next free, and the completion
/// times of the busy slots.
#[derive(Clone, Debug)]
pub struct UfsQueue {
    model: UfsServiceModel,
    /// The device's map cache and NAND (`ftl/`): when present, reads and HPB map commands
    /// are served by it instead of the slots (writes keep the slots).
    ftl: Option<Ftl>,
    host_free: Nanos,
    /// The link's reserved transfers (`ftl/reservations.rs`).
    link: Busy,
    busy_slots: BinaryHeap<Reverse<Nanos>>,
    last_now: Nanos,
}

/// A command as the device stage sees it.
#[derive(Clone, Copy, Debug)]
pub enum DeviceCmd<'a> {
    /// A block request; `hpb_entry_valid`: an HPB READ whose entry is current (the device
    /// skips its map lookup).
    Io {
        req: &'a IoRequest,
        hpb_entry_valid: bool,
    },
    /// HPB READ BUFFER: the entries of `entries` LPNs from `lpn`, `alloc_len` bytes back.
    ReadBuffer {
        lpn: u64,
        entries: u32,
        alloc_len: u32,
    },
    /// HPB WRITE BUFFER (inactivate a region): no data either way.
    WriteBuffer,
}

/// What accepting a command settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accepted {
    pub done: Nanos,
    /// Map pages a read had to load from NAND (always 0 without an FTL).
    pub map_misses: u32,
}

/// The 4 KiB logical blocks a request covers: its first LPN and how many.
pub fn lpn_range(req: &IoRequest) -> (u64, u32) {
    let first = req.offset / LOGICAL_BLOCK_BYTES;
    let end = (req.offset + req.bytes.max(1) as u64).div_ceil(LOGICAL_BLOCK_BYTES);
    (first, (end - first) as u32)
}

impl UfsQueue {
    pub fn new(model: UfsServiceModel) -> UfsQueue {
        UfsQueue {
            model,
            ftl: None,
            host_free: Nanos::ZERO,
            link: Busy::new(),
            busy_slots: BinaryHeap::with_capacity(model.slots.max(1) as usize),
            last_now: Nanos::ZERO,
        }
    }

    pub fn model(&self) -> &UfsServiceModel {
        &self.model
    }

    /// A queue whose reads (and HPB map commands) go through `ftl`.
    pub fn with_ftl(model: UfsServiceModel, ftl: Ftl) -> UfsQueue {
        UfsQueue {
            ftl: Some(ftl),
            ..UfsQueue::new(model)
        }
    }

    pub fn ftl(&self) -> Option<&Ftl> {
        self.ftl.as_ref()
    }

    /// Accepts `req` at `now` (taken as the previous call's `now` if earlier), served at
    /// `level` throughout, and returns its completion time. A caller that changes level
    /// passes the new one from then on; commands already accepted keep their times (the host
    /// drains them before a scale operation, spec-storage §2.5).
    pub fn accept(&mut self, now: Nanos, req: &IoRequest, level: HostLevel) -> Nanos {
        let cmd = DeviceCmd::Io {
            req,
            hpb_entry_valid: false,
        };
        self.accept_cmd(now, cmd, level).done
    }

    /// Accepts any command (see [`UfsQueue::accept`]). With an FTL, a read's device stage is
    /// [`Ftl::read`] from the end of its host stage, a READ BUFFER's is [`Ftl::read_map`] and
    /// then its map crosses the link, a WRITE BUFFER's is the controller delay; a write keeps
    /// its slot and updates the FTL's map (ASSUMPTION: reads and writes do not contend for the
    /// NAND, whose writes the slots stand for). Map commands need an FTL (panics without one:
    /// the device only builds HPB on a preset with `[ftl]`).
    pub fn accept_cmd(&mut self, now: Nanos, cmd: DeviceCmd<'_>, level: HostLevel) -> Accepted {
        let now = now.max(self.last_now);
        self.last_now = now;
        let m = self.model;
        let host_done = now.max(self.host_free) + m.host_time(level.freq_hz);
        self.host_free = host_done;
        let mut map_misses = 0;
        let done = match (cmd, self.ftl.as_mut()) {
            (
                DeviceCmd::Io {
                    req,
                    hpb_entry_valid,
                },
                ftl,
            ) => match (req.op, ftl) {
                (IoOp::Read, None) => {
                    let device_done = self.claim_slot(host_done, m.device_time(req.op, req.bytes));
                    self.link_transfer(now, device_done, req.bytes, level)
                }
                (IoOp::Read, Some(ftl)) => {
                    let (lpn, blocks) = lpn_range(req);
                    let read = ftl.read(host_done, lpn, blocks, hpb_entry_valid);
                    map_misses = read.map_misses;
                    self.link_transfer(now, read.done, req.bytes, level)
                }
                (IoOp::Write, ftl) => {
                    if let Some(ftl) = ftl {
                        let (lpn, blocks) = lpn_range(req);
                        ftl.write(lpn, blocks);
                    }
                    let data_out = self.link_transfer(now, host_done, req.bytes, level);
                    self.claim_slot(data_out, m.device_time(req.op, req.bytes))
                }
            },
            (
                DeviceCmd::ReadBuffer {
                    lpn,
                    entries,
                    alloc_len,
                },
                Some(ftl),
            ) => {
                let ready = ftl.read_map(host_done, lpn, entries);
                self.link_transfer(now, ready, alloc_len, level)
            }
            (DeviceCmd::WriteBuffer, Some(ftl)) => host_done + Nanos(ftl.config().controller_ns),
            (_, None) => panic!("HPB map commands need the device's FTL"),
        };
        Accepted { done, map_misses }
    }

    /// Moves `bytes` over the link once they are ready at `ready`, in the earliest idle gap
    /// long enough (a transfer ready sooner may pass one reserved later): when it ends.
    fn link_transfer(&mut self, now: Nanos, ready: Nanos, bytes: u32, level: HostLevel) -> Nanos {
        prune(&mut self.link, now.0);
        let len = self.model.link_time(bytes, level.gear).0;
        let start = earliest_gap(&self.link, ready.0, len);
        reserve(&mut self.link, start, start + len);
        Nanos(start + len)
    }

    /// The earliest slot free at or after `ready` (slots freed before `ready` are dropped);
    /// returns when the device time ends.
    fn claim_slot(&mut self, ready: Nanos, device: Nanos) -> Nanos {
        while let Some(&Reverse(free)) = self.busy_slots.peek() {
            if free > ready {
                break;
            }
            self.busy_slots.pop();
        }
        let start = if self.busy_slots.len() < self.model.slots.max(1) as usize {
            ready
        } else {
            let Reverse(free) = self.busy_slots.pop().expect("all slots busy");
            ready.max(free)
        };
        let done = start + device;
        self.busy_slots.push(Reverse(done));
        done
    }
}

/// Durations of the two parts of a scale operation the device and link take (the drain
/// before them is the host's): a UniPro power-mode change to another gear, and the clock
/// switch. Both ESTIMATES (spec-storage §2.5 and §7.4: not found in sources), in the preset
/// with their ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleCosts {
    pub gear_switch: Nanos,
    pub clock_switch: Nanos,
}

impl ScaleCosts {
    /// Time I/O stays stalled after the drain, for a scale up or down (`ufshcd_devfreq_scale`):
    /// the clock switch, plus a gear change when the gear differs between the levels (down:
    /// the gear first, then the clocks; up: the clocks, then the gear; the sum either way).
    pub fn stall(&self, from: HostLevel, to: HostLevel) -> Nanos {
        let gear = if from.gear != to.gear {
            self.gear_switch
        } else {
            Nanos::ZERO
        };
        gear + self.clock_part(from, to)
    }

    /// The clock switch's share of [`Self::stall`]: a scale-up's clocks have switched this long
    /// after its drain (its gear switch follows).
    pub fn clock_part(&self, from: HostLevel, to: HostLevel) -> Nanos {
        if from.freq_hz != to.freq_hz {
            self.clock_switch
        } else {
            Nanos::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: u32) -> IoRequest {
        IoRequest {
            op: IoOp::Read,
            offset: 0,
            bytes,
            sync: true,
        }
    }

    /// A made-up device worked by hand: 2 lanes of HS-G4 at 300 MHz, 37.5 MHz and HS-G1 at min.
    fn hand_model() -> (UfsServiceModel, HostLevel, HostLevel) {
        let c = Calibration {
            seq_read_mb_s: 2000.0,
            seq_write_mb_s: 1000.0,
            rand_read_iops: 100_000.0,
            rand_write_iops: 50_000.0,
            iops_queue_depth: 32,
            read_4k_qd1_us: (125.0, 100.0, 150.0),
            lanes: 2,
            max: HostLevel {
                freq_hz: 300_000_000,
                gear: 4,
            },
        };
        let min = HostLevel {
            freq_hz: 37_500_000,
            gear: 1,
        };
        (UfsServiceModel::calibrate(&c).unwrap(), c.max, min)
    }

    #[test]
    fn lane_rates_are_rate_b_after_8b10b() {
        // 1457.6 Mbit/s / 10 = 145.76 MB/s; G4 = 8 x G1; G5 = 16 x G1.
        assert_eq!(lane_payload_bytes_per_s(1), Some(145_760_000));
        assert_eq!(lane_payload_bytes_per_s(4), Some(1_166_080_000));
        assert_eq!(lane_payload_bytes_per_s(5), Some(2_332_160_000));
        assert_eq!(lane_payload_bytes_per_s(0), None);
        assert_eq!(lane_payload_bytes_per_s(6), None);
        // 2 x 1166.08e6 x 0.91 = 2122.2656e6.
        assert_eq!(link_bytes_per_s(2, 4), Some(2_122_265_600));
    }

    #[test]
    fn calibration_by_hand() {
        let (m, _, _) = hand_model();
        // B = 2122.2656 MB/s: 4096 B in 1.930 us; t_h = 1000 / 300 MHz = 3.333 us.
        // N = round(100000 x (125 - 3.333 - 1.930) us) = round(11.97) = 12.
        assert_eq!(m.slots, 12);
        // t_4k = 12 / 100000 = 120 us (read), 12 / 50000 = 240 us (write).
        assert_eq!((m.read_4k_ns, m.write_4k_ns), (120_000, 240_000));
        // r = (524288 - 4096) / (12 x 524288 / 2000e6 - 120e-6) = 520192 / 0.0030257 s
        //   = 171.9229 MB/s (read); write: 520192 / (0.00629146 - 0.00024) = 85.9615 MB/s.
        let r: f64 = 520_192.0 / (12.0 * 524_288.0 / 2000e6 - 120e-6);
        let w: f64 = 520_192.0 / (12.0 * 524_288.0 / 1000e6 - 240e-6);
        assert_eq!(m.read_stream_bytes_per_s, r.round() as u64);
        assert_eq!(m.write_stream_bytes_per_s, w.round() as u64);
        assert!((m.read_stream_bytes_per_s as f64 - 171.9229e6).abs() < 1e2);
        assert!((m.write_stream_bytes_per_s as f64 - 85.9615e6).abs() < 1e2);
    }

    #[test]
    fn the_min_level_slows_by_the_clock_and_gear_ratios_worked_by_hand() {
        let (m, max, min) = hand_model();
        // QD1 4 KiB read. Max: 3.333 + 120 + 1.930 = 125.263 us.
        // Min: t_h = 1000 / 37.5 MHz = 26.667 us; B(G1) = 2 x 145.76e6 x 0.91 = 265.2832 MB/s,
        // 4096 B in 15.440 us: 26.667 + 120 + 15.440 = 162.107 us. Ratio 1.2941.
        let hi = m.qd1_latency(IoOp::Read, 4096, max);
        let lo = m.qd1_latency(IoOp::Read, 4096, min);
        assert_eq!(hi, Nanos(3_333 + 120_000 + 1_930));
        assert_eq!(lo, Nanos(26_667 + 120_000 + 15_440));
        assert!((lo.0 as f64 / hi.0 as f64 - 1.2941).abs() < 1e-4);
        // Saturated 4 KiB reads. Max: slots 12 / 120 us = 100000/s (link 518k/s, host 300k/s).
        // Min: host 37500/s, link 265.2832e6 / 4096 = 64766/s, slots 100000/s -> 37500/s.
        assert!((m.saturated_rate(IoOp::Read, 4096, max) - 100_000.0).abs() < 1.0);
        assert!((m.saturated_rate(IoOp::Read, 4096, min) - 37_500.0).abs() < 1.0);
        // 512 KiB reads at min: the link, 265.2832e6 / 524288 = 505.99/s (slots give 2000e6/s /
        // 524288 = 3814.7/s, host 37500/s): 2000 MB/s falls to 265.3 MB/s, the gear ratio 1/8
        // times nothing else.
        let seq_min = m.saturated_rate(IoOp::Read, 524_288, min) * 524_288.0;
        assert!((seq_min - 265.2832e6).abs() < 1e3, "{seq_min}");
    }

    #[test]
    fn the_queue_runs_the_stages_in_order() {
        let (m, max, _) = hand_model();
        let mut q = UfsQueue::new(m);
        // One read at 0: host 3333, device 120000, link 1930.
        assert_eq!(q.accept(Nanos(0), &read(4096), max), Nanos(125_263));
        // A write at 1 ms: host 3333, link 1930, then 240 us in a slot.
        let w = IoRequest {
            op: IoOp::Write,
            offset: 0,
            bytes: 4096,
            sync: true,
        };
        assert_eq!(
            q.accept(Nanos(1_000_000), &w, max),
            Nanos(1_000_000 + 3_333 + 1_930 + 240_000)
        );
        // Thirteen reads at once at 2 ms: the host serialises them (3333 each), twelve slots;
        // the 13th waits for the first slot, freed at 2 ms + 3333 + 120000.
        let mut done = Vec::new();
        for _ in 0..13 {
            done.push(q.accept(Nanos(2_000_000), &read(4096), max));
        }
        let first_free = 2_000_000 + 3_333 + 120_000;
        assert_eq!(done[12], Nanos(first_free + 120_000 + 1_930));
    }

    #[test]
    fn figures_the_link_cannot_carry_are_refused() {
        let mut c = Calibration {
            seq_read_mb_s: 2200.0,
            seq_write_mb_s: 1000.0,
            rand_read_iops: 100_000.0,
            rand_write_iops: 50_000.0,
            iops_queue_depth: 32,
            read_4k_qd1_us: (125.0, 100.0, 150.0),
            lanes: 2,
            max: HostLevel {
                freq_hz: 300_000_000,
                gear: 4,
            },
        };
        let e = UfsServiceModel::calibrate(&c).unwrap_err().to_string();
        assert!(e.contains("above the link's 2122.3 MB/s"), "{e}");
        c.seq_read_mb_s = 2000.0;
        c.read_4k_qd1_us = (400.0, 300.0, 500.0);
        let e = UfsServiceModel::calibrate(&c).unwrap_err().to_string();
        assert!(e.contains("queue depth 32"), "{e}");
    }

    #[test]
    fn each_refusal_reads_as_one_sentence_with_its_figures() {
        use CalibrationError::*;
        let cases = [
            (UnknownGear { gear: 7 }, "HS gear 7 is not 1..=5"),
            (
                SequentialAboveLink {
                    what: "read",
                    mb_s: 2200.0,
                    link_mb_s: 2122.2656,
                    lanes: 2,
                    gear: 4,
                },
                "sequential read 2200 MB/s is above the link's 2122.3 MB/s at the max level (2 \
                 lanes of HS-G4, efficiency 0.91)",
            ),
            (
                RandomAboveCap {
                    what: "write",
                    iops: 50000.5,
                    cap: 12345.6,
                    freq_hz: 300_000_000,
                    qd: 32,
                },
                "random write 50000.5 IOPS is above the 12346 the link, the host stage (1000 \
                 cycles at 300000000 Hz) and queue depth 32 at the QD1 latency allow",
            ),
            (
                Qd1OutsideEstimate {
                    slots: 12.0,
                    qd1_us: 160.04,
                    low_us: 100.0,
                    high_us: 150.5,
                },
                "12 slots give a QD1 read latency of 160.0 us, outside the estimate's 100 to \
                 150.5 us",
            ),
            (
                SequentialTooSlow {
                    what: "write",
                    mb_s: 100.0,
                    slots: 12.0,
                },
                "sequential write 100 MB/s is slower than 12 slots of random 4 KiB commands move \
                 the same bytes; expected a faster sequential figure",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn a_scale_stalls_for_the_clock_and_the_gear_that_change() {
        let s = ScaleCosts {
            gear_switch: Nanos(700),
            clock_switch: Nanos(300),
        };
        let a = HostLevel {
            freq_hz: 37_500_000,
            gear: 1,
        };
        let b = HostLevel {
            freq_hz: 300_000_000,
            gear: 4,
        };
        assert_eq!(s.stall(a, b), Nanos(1000));
        assert_eq!(s.stall(b, a), Nanos(1000));
        assert_eq!(s.stall(a, HostLevel { gear: 4, ..a }), Nanos(700));
        assert_eq!(s.stall(a, a), Nanos::ZERO);
    }
}
