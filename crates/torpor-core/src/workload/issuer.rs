//! The host side of block IO: workloads issue IOs into per-workload slots, and every IO's
//! latency (completion − submission, fio's clat) is recorded when its completion reaches the
//! workload. A component of the world ([`crate::world`]): it posts only its own "due" events
//! and never calls a device; the world submits what it hands out and routes completions back.
//!
//! 1. Each workload owns `iodepth` slots. At most one "due" event per workload is pending: it
//!    fires when the workload's next IO is due.
//! 2. When the world pumps a workload (at its due event, or after one of its IOs completed),
//!    [`IoIssuer::next_io`] hands out every IO already due while a slot is free, one call each;
//!    for a future IO it posts the due event instead and hands out nothing.
//! 3. A job may answer "blocked" (draining the queue before a think time) or "done".
//! 4. Completions arriving after the run's end are not handled, so they are not counted.
//!
//! Nothing is allocated per IO.

use super::fio_job::FioJob;
use super::job_progress::JobState;
use super::replay::{TraceCounts, TraceReplay};
use crate::error::InputError;
use crate::metrics::LatencyHistogram;
use crate::sim::{stream_id, Ctx, Pcg32, Stop};
use crate::storage::io::{IoOp, IoRequest, IoTicket, Owner};
use crate::time::Nanos;
use crate::trace::block::BlockCounts;
use crate::trace::fio_iolog::IologCounts;

/// One workload of a run. A replay's reader is `Send` so a whole run can move to a worker
/// thread (sweeps run scenarios in parallel).
pub enum Workload {
    Job(FioJob),
    Replay(TraceReplay),
}

/// What one workload did.
#[derive(Clone, Debug)]
pub struct WorkloadReport {
    /// The job's name, or the replayed log's file name.
    pub name: String,
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    /// IOs submitted to the device.
    pub issued: u64,
    /// IOs completed by the end of the run, and their bytes.
    pub ios: u64,
    pub bytes: u64,
    /// When the workload stopped issuing and its last IO completed, if it did within the run.
    pub finished: Option<Nanos>,
    /// For an iolog replay: the log's lines by kind, including the syncs and trims not sent.
    pub iolog: Option<IologCounts>,
    /// For a block-trace replay: its requests by kind (discards and flushes are not sent)
    /// and the lines it skipped.
    pub block_trace: Option<BlockCounts>,
    /// For a job: whether its `runtime` stopped it (rather than its size, `number_ios` or the
    /// run's end), for fio's account of how long it ran.
    pub runtime_ran_out: bool,
}

/// What a whole run measured.
#[derive(Clone, Debug)]
pub struct IoReport {
    /// Latency of every completed read and write, all workloads together.
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    pub per_workload: Vec<WorkloadReport>,
    /// Completed IOs and their bytes.
    pub ios: u64,
    pub bytes: u64,
    /// The last handled event's time if every workload finished, else the run's end.
    pub end: Nanos,
    pub stop: Stop,
}

impl IoReport {
    /// A run that issued no IO (a CPU-only scenario) and lasted until `end`.
    pub fn empty(end: Nanos) -> IoReport {
        IoReport {
            read: LatencyHistogram::new(),
            write: LatencyHistogram::new(),
            per_workload: vec![],
            ios: 0,
            bytes: 0,
            end,
            stop: Stop::Deadline,
        }
    }
}

/// The issuer's own event: workload `w`'s next IO may be due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due(pub u32);

/// A source's answer to "when is your next IO due?".
pub(super) enum Plan {
    /// This IO is due at that time.
    At(Nanos, IoRequest),
    /// Nothing until the IOs in flight complete.
    Blocked,
    Done,
}

/// Every workload of a run with its slots and measurements.
pub struct IoIssuer<'a> {
    runners: Vec<Runner<'a>>,
    /// The device every workload's IO goes to (its slot in the run; 0 with one device).
    device: u8,
}

impl<'a> IoIssuer<'a> {
    /// Takes `workloads` for one run. Each job draws offsets and directions from its own
    /// PCG32 stream, named after the job (`job:NAME`, `#k` added for the k-th repeat of a
    /// name), so adding a workload changes no other workload's draws.
    pub fn new(workloads: &'a mut [Workload], seed: u64) -> Result<Self, InputError> {
        let mut names: Vec<String> = Vec::with_capacity(workloads.len());
        let mut runners = Vec::with_capacity(workloads.len());
        for w in workloads.iter_mut() {
            let stream = match w {
                Workload::Job(job) => {
                    let base = format!("job:{}", job.name);
                    let repeats = names.iter().filter(|n| **n == base).count();
                    names.push(base.clone());
                    if repeats == 0 {
                        base
                    } else {
                        format!("{base}#{repeats}")
                    }
                }
                // A replay draws nothing.
                Workload::Replay(_) => String::new(),
            };
            runners.push(Runner::new(w, seed, &stream)?);
        }
        Ok(IoIssuer { runners, device: 0 })
    }

    /// Sends every workload's IO to the run's device in slot `device` (a run with two devices).
    pub fn to_device(mut self, device: u8) -> Self {
        self.device = device;
        self
    }

    /// The run has workloads of its own (CPU tasks alone have none).
    pub fn has_workloads(&self) -> bool {
        !self.runners.is_empty()
    }

    /// Every workload has stopped issuing and seen its last IO complete.
    pub fn all_finished(&self) -> bool {
        self.runners.iter().all(|r| r.out.finished.is_some())
    }

    /// Events the run needs room for at once: one completion per slot and one due event per
    /// workload. A huge `iodepth` from a user file must not become a huge allocation, so each
    /// workload counts at most 4096 slots (the queue grows beyond that as needed).
    pub fn pending_hint(&self) -> usize {
        self.runners
            .iter()
            .map(|r| (r.depth as usize).min(4096) + 1)
            .sum()
    }

    /// Posts every workload's first due event, at time zero.
    pub fn start<W>(&mut self, ctx: &mut Ctx<'_, W, Due>) {
        for (w, runner) in self.runners.iter_mut().enumerate() {
            ctx.schedule(Nanos::ZERO, Due(w as u32));
            runner.due_posted = true;
        }
    }

    /// Workload `w`'s due event fired: it may issue again.
    #[inline]
    pub fn on_due(&mut self, Due(w): Due) -> u32 {
        self.runners[w as usize].due_posted = false;
        w
    }

    /// An IO of `ticket.workload` completed at `now` and reached its workload. Returns the
    /// workload, to be pumped.
    #[inline]
    pub fn complete(&mut self, now: Nanos, ticket: IoTicket) -> u32 {
        let Owner::Workload(w) = ticket.owner else {
            unreachable!("a task's IO completes inside the CPU system")
        };
        self.runners[w as usize].complete(now, ticket.op, ticket.bytes, now - ticket.submitted);
        w
    }

    /// The next IO workload `w` issues at `ctx.now()`, if one is due and a slot is free; else
    /// posts the workload's due event if its next IO lies in the future, and returns `None`.
    /// A replay whose log turns out malformed returns that log's [`InputError`].
    #[inline]
    pub fn next_io<W>(
        &mut self,
        w: u32,
        ctx: &mut Ctx<'_, W, Due>,
    ) -> Result<Option<(IoTicket, IoRequest)>, InputError> {
        self.runners[w as usize].next_io(w, self.device, ctx)
    }

    /// The measurements, with the run's `end` and why it stopped.
    pub fn report(self, end: Nanos, stop: Stop) -> IoReport {
        let mut total = IoReport {
            read: LatencyHistogram::new(),
            write: LatencyHistogram::new(),
            per_workload: Vec::with_capacity(self.runners.len()),
            ios: 0,
            bytes: 0,
            end,
            stop,
        };
        for r in self.runners {
            let out = r.out;
            total.read.merge(&out.read);
            total.write.merge(&out.write);
            total.ios += out.ios;
            total.bytes += out.bytes;
            let (iolog, block_trace, runtime_ran_out) = match &r.source {
                Source::Replay(replay) => match replay.counts() {
                    TraceCounts::Iolog(c) => (Some(c), None, false),
                    TraceCounts::Block(c) => (None, Some(c), false),
                },
                Source::Job(job) => (None, None, job.runtime_ran_out()),
            };
            total.per_workload.push(WorkloadReport {
                iolog,
                block_trace,
                runtime_ran_out,
                ..out
            });
        }
        total
    }
}

/// One workload's slots and measurements around its IO source.
struct Runner<'a> {
    source: Source<'a>,
    depth: u32,
    inflight: u32,
    due_posted: bool,
    done: bool,
    out: WorkloadReport,
}

enum Source<'a> {
    Job(JobState<'a>),
    Replay(&'a mut TraceReplay),
}

impl<'a> Runner<'a> {
    /// A runner for `workload`; a job draws from the PCG32 stream named `stream`.
    fn new(workload: &'a mut Workload, seed: u64, stream: &str) -> Result<Self, InputError> {
        let (source, depth, name) = match workload {
            Workload::Job(job) => {
                job.validate().map_err(|e| {
                    InputError::whole(&format!("<job {}>", job.name), e.to_string())
                })?;
                (
                    Source::Job(JobState::new(job, Pcg32::new(seed, stream_id(stream)))),
                    job.iodepth,
                    job.name.clone(),
                )
            }
            Workload::Replay(replay) => {
                let (depth, name) = (replay.options().iodepth, replay.file().to_string());
                (Source::Replay(replay), depth, name)
            }
        };
        Ok(Runner {
            source,
            depth,
            inflight: 0,
            due_posted: false,
            done: false,
            out: WorkloadReport {
                name,
                read: LatencyHistogram::new(),
                write: LatencyHistogram::new(),
                issued: 0,
                ios: 0,
                bytes: 0,
                finished: None,
                iolog: None,
                block_trace: None,
                runtime_ran_out: false,
            },
        })
    }

    #[inline]
    fn complete(&mut self, now: Nanos, op: IoOp, bytes: u32, latency: Nanos) {
        self.inflight -= 1;
        match op {
            IoOp::Read => self.out.read.record(latency),
            IoOp::Write => self.out.write.record(latency),
        }
        self.out.ios += 1;
        self.out.bytes += u64::from(bytes);
        if let Source::Job(job) = &mut self.source {
            job.on_complete(now, self.inflight);
        }
        if self.done && self.inflight == 0 {
            self.out.finished = Some(now);
        }
    }

    #[inline]
    fn next_io<W>(
        &mut self,
        w: u32,
        device: u8,
        ctx: &mut Ctx<'_, W, Due>,
    ) -> Result<Option<(IoTicket, IoRequest)>, InputError> {
        let now = ctx.now();
        while !self.done && !self.due_posted && self.inflight < self.depth {
            match self.plan(now)? {
                Plan::Blocked => break,
                Plan::Done => {
                    self.done = true;
                    if self.inflight == 0 {
                        self.out.finished = Some(now);
                    }
                }
                Plan::At(t, _) if t > now => {
                    ctx.schedule(t, Due(w));
                    self.due_posted = true;
                }
                Plan::At(_, req) => {
                    self.commit();
                    self.inflight += 1;
                    self.out.issued += 1;
                    let ticket = IoTicket {
                        owner: Owner::Workload(w),
                        device,
                        op: req.op,
                        bytes: req.bytes,
                        submitted: now,
                    };
                    return Ok(Some((ticket, req)));
                }
            }
        }
        Ok(None)
    }

    fn plan(&mut self, now: Nanos) -> Result<Plan, InputError> {
        match &mut self.source {
            Source::Job(job) => Ok(job.plan(now)),
            Source::Replay(replay) => Ok(match replay.peek()? {
                Some((due, req)) => Plan::At(due, req),
                None => Plan::Done,
            }),
        }
    }

    /// Marks the IO of the last [`Plan::At`] as issued.
    fn commit(&mut self) {
        match &mut self.source {
            Source::Job(job) => job.commit(),
            Source::Replay(replay) => {
                replay.take();
            }
        }
    }
}
