//! Block IO as devices see it: the request, the ticket that comes back with its completion,
//! and the device interface of the one engine.
//!
//! A device never answers a submission directly: it posts events of its own on the engine
//! (a completion, a timer, background work) and, when one of them completes a request, hands
//! the request's [`IoTicket`] back to the world, which routes it to whoever waits for it (the
//! issuing workload, or first a CPU's interrupt path).

use serde::{Deserialize, Serialize};

use crate::sim::Ctx;
use crate::time::Nanos;

/// The operation of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    Read,
    Write,
}

/// One request submitted to a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub op: IoOp,
    /// Byte offset on the device.
    pub offset: u64,
    pub bytes: u32,
    /// The kernel's REQ_SYNC: a write someone waits for (O_DIRECT, fsync, a sync flag in a
    /// block trace). Reads are synchronous by nature; a device that treats qualifying IO
    /// specially (the block layer's frequency boost) reads this beside the operation.
    pub sync: bool,
}

/// Who waits for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// One of the issuer's workloads (a fio job, a replay), by its index in the run.
    Workload(u32),
    /// A task on the CPUs that sleeps until its IO completes, by its index in the run.
    Task(u32),
}

/// What the submitter needs back when a request completes. Devices carry it untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoTicket {
    pub owner: Owner,
    /// Which of the run's devices serves it (0 in a run with one device): the world routes the
    /// request by it, and the CPUs pick the interrupt's CPU from that device's mapping.
    pub device: u8,
    pub op: IoOp,
    pub bytes: u32,
    pub submitted: Nanos,
}

/// A block device on the engine. `Event` is the device's own event kind; the world wraps it
/// into the run's event type and hands it back to [`BlockDevice::on_event`].
pub trait BlockDevice {
    type Event: Copy;

    /// The run starts at `ctx.now()` (time 0): a device with timers of its own (a devfreq
    /// monitor) arms them here. Most devices have none.
    fn start<W>(&mut self, _ctx: &mut Ctx<'_, W, Self::Event>) {}

    /// Accepts `req` at `ctx.now()`; the device posts whatever events it needs.
    fn submit<W>(&mut self, ctx: &mut Ctx<'_, W, Self::Event>, ticket: IoTicket, req: &IoRequest);

    /// One of the device's events is due; returns the ticket of the request it completes, if
    /// any.
    fn on_event<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, Self::Event>,
        event: Self::Event,
    ) -> Option<IoTicket>;

    /// CPU `cpu` entered (`idle`) or left an idle state at `ctx.now()`: a device whose host
    /// driver runs a deferrable timer on that CPU lets it wait while the CPU sleeps. Only
    /// runs with CPUs call it.
    fn on_cpu_idle<W>(&mut self, _ctx: &mut Ctx<'_, W, Self::Event>, _cpu: u32, _idle: bool) {}

    /// The host driver's next change to its CPU latency request (ufshcd's PM QoS vote), if
    /// one is waiting to be applied to the CPUs' global latency list.
    fn next_cpu_latency_vote(&mut self) -> Option<CpuLatencyVote> {
        None
    }
}

/// A host driver's request on the global CPU latency list (`cpu_latency_qos_update_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuLatencyVote {
    /// Hold the request at this many microseconds (ufshcd: 0, while its clocks are up).
    Hold(i32),
    /// Drop it back to "no constraint".
    Release,
}

/// A device that knows each request's completion time when it accepts it (a drive whose
/// service does not depend on anything that happens later). [`BlockDevice`] comes with it:
/// the completion is an event at that time.
pub trait TimedDevice {
    /// Accepts `req` at `now` (never earlier than the previous call's `now`) and returns when
    /// it completes. Streaming drivers call this directly, without the queue.
    fn accept(&mut self, now: Nanos, req: &IoRequest) -> Nanos;
}

/// The event of a [`TimedDevice`]: the request completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completes(pub IoTicket);

impl<T: TimedDevice> BlockDevice for T {
    type Event = Completes;

    #[inline]
    fn submit<W>(&mut self, ctx: &mut Ctx<'_, W, Completes>, ticket: IoTicket, req: &IoRequest) {
        let now = ctx.now();
        let done = self.accept(now, req).max(now);
        ctx.schedule(done, Completes(ticket));
    }

    #[inline]
    fn on_event<W>(&mut self, _: &mut Ctx<'_, W, Completes>, event: Completes) -> Option<IoTicket> {
        Some(event.0)
    }
}
