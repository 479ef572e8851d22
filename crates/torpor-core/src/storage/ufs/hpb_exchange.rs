//! HPB between the host driver and the device, on the engine: what the UFS device model
//! (`device.rs`) calls at each step of a command so that the host's HPB state (`hpb/`) and the
//! device's map cache (`ftl/`) see the same traffic (spec-storage §4.5-4.7, §6.3).
//!
//! 1. **Prepare** ([`HpbExchange::prep`], at `ufshcd_queuecommand`): the host's `ufshpb_prep`
//!    turns an eligible read into an HPB READ or counts a miss, and marks written entries
//!    dirty. The device remembers, per written LPN, how many READ BUFFERs had been issued
//!    before the write: an entry from a later load is current, one from an earlier load is
//!    stale. An HPB READ whose entry is stale is served as a normal read (its map looked up),
//!    and counted (`stale_entries`): only the driver's write race ([`IssuedWrites::Dropped`])
//!    can send one.
//! 2. **Respond** ([`HpbExchange::respond`], at the device stage): in device control mode a
//!    normal read that missed the device's map cache counts one miss against the region of its
//!    first block; once that region has `device_miss_threshold` misses (since the device last
//!    dropped it), the read gets the recommendations of [`DcmRecommender`] in its response, and
//!    every later miss in the region does too until the device recommends inactivating it. The
//!    host reads them at completion ([`HpbExchange::on_response`]), which queues the map work
//!    unless it is already queued (`queue_work` on a pending work does nothing).
//! 3. **Map work** ([`HpbExchange::map_work`]): it runs `map_work_delay` after it was queued
//!    (the HPB workqueue's latency); READ BUFFERs and WRITE BUFFERs that the device serves as
//!    commands of their own ([`HpbExchange::read_buffer`]); a READ BUFFER completion makes its
//!    sub-region VALID ([`HpbExchange::map_req_done`]).
//! 4. **Host control mode** ([`HpbExchange::poll`]): the read-timeout poll every
//!    `timeout_polling_interval_ms`; normalization asked for by a read runs at once.
//!
//! ESTIMATES ([`HpbDynamics`], no source gives them): the device's threshold (the real
//! heuristic is not public, spec-storage §6.3) and the workqueue's latency. ASSUMPTION: a
//! response's recommendations reach the host at the command's completion.
//!
//! Memory: the write record holds one entry per distinct LPN written while HPB is on (16 bytes
//! each): bounded by the LU's blocks, small for read-mostly traces.

use std::collections::HashMap;

use serde::Serialize;

use super::ftl::{DcmRecommender, RecommenderError};
use super::service::{lpn_range, Accepted, DeviceCmd};
use crate::hpb::{
    ControlMode, Geometry, HcmParams, HostMemory, HpbCommand, HpbInit, HpbLu, HpbResponse,
    HpbStats, IssuedWrites, MapReq, Op, Poll, PrepKind,
};
use crate::storage::io::{IoOp, IoRequest};
use crate::time::Nanos;

/// The host's HPB configuration for one LU.
#[derive(Clone, Debug)]
pub struct HpbSetup {
    pub geometry: Geometry,
    /// Host control mode's parameters (unused in device control mode).
    pub params: HcmParams,
    pub issued_writes: IssuedWrites,
    pub dynamics: HpbDynamics,
}

/// What decides how fast HPB warms up beyond the driver's own code: the device's
/// recommendation threshold and the HPB workqueue's latency (module documentation, steps 2
/// and 3). Both are ESTIMATES; the defaults are the central values of docs/hpb.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpbDynamics {
    /// Device control mode: misses of the device's map cache in a region before the device
    /// recommends its sub-regions (1: at the first miss). Range 1-128.
    pub device_miss_threshold: u32,
    /// From `queue_work(ufshpb_wq, &map_work)` to the work running. Range 0-10 ms.
    pub map_work_delay: Nanos,
}

impl HpbDynamics {
    /// The device recommends at the first miss and the map work runs the moment it is queued.
    pub const INSTANT: HpbDynamics = HpbDynamics {
        device_miss_threshold: 1,
        map_work_delay: Nanos::ZERO,
    };
}

impl Default for HpbDynamics {
    fn default() -> Self {
        HpbDynamics {
            device_miss_threshold: DEVICE_MISS_THRESHOLD,
            map_work_delay: Nanos::from_us(MAP_WORK_DELAY_US),
        }
    }
}

/// ESTIMATE (docs/hpb.md, "Warm-up"): 1, spec-storage §6.3's model (recommend at the first
/// miss), on which the preset's fitted active-region budget rests. Range 1-128: seed 003's
/// launches, which reach half their final HPB gain at cycle 3, point to 40-96.
pub const DEVICE_MISS_THRESHOLD: u32 = 1;
/// ESTIMATE (docs/hpb.md, "Warm-up"): the wake-up of an unbound workqueue's worker on an idle
/// CPU, tens of microseconds; range 0-10 ms (a CPU busy with an app launch delays the worker
/// by scheduler slices).
pub const MAP_WORK_DELAY_US: u64 = 50;

/// A response held for its command's completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RspId(u32);

/// What the exchange counts beyond the driver's `hpb_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExchangeCounters {
    /// HPB READs whose entry the device found stale (served as normal reads).
    pub stale_entries: u64,
    /// Responses that carried recommendations.
    pub responses: u64,
    /// READ BUFFERs and WRITE BUFFERs completed.
    pub read_buffers_done: u64,
    pub write_buffers_done: u64,
    /// Map-work runs.
    pub map_work_runs: u64,
    /// Requests reaching past the HPB LU's last block (a trace from a larger device), served
    /// without HPB: the driver never sees a command the device would reject.
    pub outside_lu: u64,
}

/// What the HPB side reports at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HpbReport {
    pub mode: &'static str,
    pub stats: HpbStats,
    pub host_memory: HostMemory,
    pub counters: ExchangeCounters,
    /// `hit_cnt / (hit_cnt + miss_cnt)`, 0 without eligible reads.
    pub hit_ratio: f64,
}

/// An HPB setup the exchange cannot run, with what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HpbExchangeError {
    /// Device control mode: the device's recommender cannot track the LU's regions.
    #[error(transparent)]
    Recommender(#[from] RecommenderError),
}

/// The host's HPB state with the device's side of the protocol (module documentation).
#[derive(Clone, Debug)]
pub struct HpbExchange {
    lu: HpbLu,
    init: HpbInit,
    recommender: Option<DcmRecommender>,
    /// LPN → READ BUFFERs issued before its last write.
    written: HashMap<u64, u64>,
    responses: Vec<Option<HpbResponse>>,
    free_responses: Vec<u32>,
    map_work_queued: bool,
    dynamics: HpbDynamics,
    /// Device control mode: per region, device map-cache misses since the device last
    /// dropped it (counted up to the threshold).
    rgn_misses: Vec<u32>,
    counters: ExchangeCounters,
}

impl HpbExchange {
    /// The LU at time 0, and in device control mode the device's recommender, whose budget is
    /// the host's LRU size (the LU's active regions less the pinned ones).
    pub fn new(setup: HpbSetup) -> Result<HpbExchange, HpbExchangeError> {
        let geo = setup.geometry;
        let recommender = match geo.mode {
            ControlMode::Device => Some(DcmRecommender::new(
                geo.entries_per_rgn as u64,
                geo.entries_per_srgn as u64,
                geo.max_lru_active,
            )?),
            ControlMode::Host => None,
        };
        let rgn_misses = match geo.mode {
            ControlMode::Device => vec![0; geo.rgns_per_lu as usize],
            ControlMode::Host => Vec::new(),
        };
        let (lu, init) = HpbLu::new(geo, setup.params, setup.issued_writes, Nanos::ZERO);
        Ok(HpbExchange {
            lu,
            init,
            recommender,
            written: HashMap::new(),
            responses: Vec::new(),
            free_responses: Vec::new(),
            map_work_queued: false,
            dynamics: setup.dynamics,
            rgn_misses,
            counters: ExchangeCounters::default(),
        })
    }

    /// When work queued at `now` on the HPB workqueue runs.
    pub fn map_work_at(&self, now: Nanos) -> Nanos {
        now + self.dynamics.map_work_delay
    }

    /// What to schedule at the start: the map work (pinned regions) and the first HCM poll.
    pub fn init(&mut self) -> HpbInit {
        self.map_work_queued = self.init.map_work;
        self.init
    }

    pub fn lu(&self) -> &HpbLu {
        &self.lu
    }

    /// Step 1 for a block request sent at `now`: whether it goes as an HPB READ with a current
    /// entry (the device then skips its map lookup).
    pub fn prep(&mut self, now: Nanos, req: &IoRequest) -> bool {
        let (lpn, blocks) = lpn_range(req);
        if !self.inside(lpn, blocks) {
            self.counters.outside_lu += 1;
            return false;
        }
        let op = match req.op {
            IoOp::Read => Op::Read,
            IoOp::Write => {
                let issued = self.lu.stats().map_req_cnt;
                for l in lpn..lpn + blocks as u64 {
                    self.written.insert(l, issued);
                }
                Op::Write
            }
        };
        let prep = self.lu.prep(now, op, lpn, blocks);
        if prep.normalize {
            self.lu.normalize();
        }
        let PrepKind::Hit { map_load } = prep.kind else {
            return false;
        };
        let current = (lpn..lpn + blocks as u64)
            .all(|l| self.written.get(&l).is_none_or(|&w| w < map_load.0));
        if !current {
            self.counters.stale_entries += 1;
        }
        current
    }

    fn inside(&self, lpn: u64, blocks: u32) -> bool {
        lpn + blocks as u64 <= self.lu.geometry().num_blocks
    }

    /// Step 2: the recommendations the device puts in `req`'s response, held for its
    /// completion.
    pub fn respond(&mut self, req: &IoRequest, accepted: Accepted) -> Option<RspId> {
        if req.op != IoOp::Read || accepted.map_misses == 0 {
            return None;
        }
        let (lpn, blocks) = lpn_range(req);
        if !self.inside(lpn, blocks) {
            return None;
        }
        let recommender = self.recommender.as_mut()?;
        let misses = &mut self.rgn_misses[recommender.position(lpn).0 as usize];
        *misses = (*misses + 1).min(self.dynamics.device_miss_threshold);
        if *misses < self.dynamics.device_miss_threshold {
            return None;
        }
        let rec = recommender.on_read_miss(lpn, blocks);
        for &r in &rec.inactivate {
            self.rgn_misses[r as usize] = 0;
        }
        if rec.is_empty() {
            return None;
        }
        self.counters.responses += 1;
        let rsp = HpbResponse::RegionUpdate {
            active: rec.activate,
            inactive: rec.inactivate,
        };
        Some(match self.free_responses.pop() {
            Some(i) => {
                self.responses[i as usize] = Some(rsp);
                RspId(i)
            }
            None => {
                self.responses.push(Some(rsp));
                RspId(self.responses.len() as u32 - 1)
            }
        })
    }

    /// The host reads response `id` at its command's completion: whether the map work is to
    /// be queued now.
    pub fn on_response(&mut self, id: RspId) -> bool {
        let rsp = self.responses[id.0 as usize]
            .take()
            .expect("a response is read once");
        self.free_responses.push(id.0);
        let kick = self
            .lu
            .on_response(&rsp)
            .expect("the device recommends only regions of the LU's own geometry");
        self.queue_map_work(kick)
    }

    fn queue_map_work(&mut self, kick: bool) -> bool {
        let queue = kick && !self.map_work_queued;
        self.map_work_queued |= queue;
        queue
    }

    /// Step 3: the map work runs at `now`; the commands it sends, in order.
    pub fn map_work(&mut self, now: Nanos) -> Vec<HpbCommand> {
        self.map_work_queued = false;
        self.counters.map_work_runs += 1;
        self.lu.map_work(now)
    }

    /// The device command a READ BUFFER is.
    pub fn read_buffer(&self, req: &MapReq) -> DeviceCmd<'static> {
        let geo = self.lu.geometry();
        DeviceCmd::ReadBuffer {
            lpn: geo.first_lpn(req.rgn, req.srgn),
            entries: geo.srgn_entries(req.rgn, req.srgn),
            alloc_len: req.alloc_len,
        }
    }

    pub fn map_req_done(&mut self, req: &MapReq) {
        self.counters.read_buffers_done += 1;
        self.lu.map_req_done(req);
    }

    pub fn write_buffer_done(&mut self) {
        self.counters.write_buffers_done += 1;
    }

    /// Step 4 (host control mode): the read-timeout poll at `now`; `map_work` is set only when
    /// the work was not already queued.
    pub fn poll(&mut self, now: Nanos) -> Poll {
        let poll = self.lu.read_timeout_work(now);
        Poll {
            map_work: self.queue_map_work(poll.map_work),
            next_poll: poll.next_poll,
        }
    }

    pub fn report(&self) -> HpbReport {
        let s = *self.lu.stats();
        let eligible = s.hit_cnt + s.miss_cnt;
        HpbReport {
            mode: match self.lu.geometry().mode {
                ControlMode::Device => "device",
                ControlMode::Host => "host",
            },
            stats: s,
            host_memory: self.lu.host_memory(),
            counters: self.counters,
            hit_ratio: if eligible == 0 {
                0.0
            } else {
                s.hit_cnt as f64 / eligible as f64
            },
        }
    }
}
