//! The generic IO run loop: workloads issue IOs to one [`BlockDevice`], completions come back
//! as events, and every IO's latency (completion − submission, fio's clat) is recorded.
//!
//! 1. Each workload owns `iodepth` slots. At most one "issue" event per workload is pending:
//!    it fires when the workload's next IO is due.
//! 2. When a workload is pumped (at its issue event, or after one of its IOs completes) it
//!    asks its source for the next IO's due time and issues every IO already due while it has
//!    a free slot; the device says when each completes, and a completion event is posted.
//! 3. A job may answer "blocked" (draining the queue before a think time) or "done".
//! 4. The run stops at `until` (events after it are not handled, so IOs completing later are
//!    not counted) or when no event is left, i.e. every workload has finished.
//!
//! Events are handled in time order, ties in the order they were posted, so a run is a pure
//! function of its inputs and seed. Nothing is allocated per IO.

use std::io::BufRead;

use super::fio_job::{FioJob, RwMode};
use super::replay::IologReplay;
use crate::error::InputError;
use crate::metrics::LatencyHistogram;
use crate::sim::{self, EventQueue, Pcg32, Stop};
use crate::storage::io::{BlockDevice, IoOp, IoRequest};
use crate::time::Nanos;
use crate::trace::fio_iolog::IologCounts;

/// One workload of a run. A replay's reader is `Send` so a whole run can move to a worker
/// thread (sweeps run scenarios in parallel).
pub enum Workload {
    Job(FioJob),
    Replay(IologReplay<Box<dyn BufRead + Send>>),
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
    /// IOs completed by `until`, and their bytes.
    pub ios: u64,
    pub bytes: u64,
    /// When the workload stopped issuing and its last IO completed, if it did within the run.
    pub finished: Option<Nanos>,
    /// For a replay: the log's lines by kind, including the syncs and trims not sent.
    pub iolog: Option<IologCounts>,
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
    /// The last handled event's time if every workload finished, else `until`.
    pub end: Nanos,
    pub stop: Stop,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// Workload `w`'s next IO may be due.
    Issue(u32),
    Complete {
        w: u32,
        op: IoOp,
        bytes: u32,
        submitted: Nanos,
    },
}

/// A source's answer to "when is your next IO due?".
enum Plan {
    /// This IO is due at that time.
    At(Nanos, IoRequest),
    /// Nothing until the IOs in flight complete.
    Blocked,
    Done,
}

/// Runs `workloads` against `device` from time zero until `until` or until all have finished.
/// Jobs draw random offsets and directions from PCG32 stream `index` seeded with `seed`.
/// A replay whose log turns out malformed stops the run with that log's [`InputError`].
pub fn run_io<D: BlockDevice>(
    device: &mut D,
    workloads: &mut [Workload],
    until: Nanos,
    seed: u64,
) -> Result<IoReport, InputError> {
    let mut runners = workloads
        .iter_mut()
        .enumerate()
        .map(|(i, w)| Runner::new(w, seed, i as u64))
        .collect::<Result<Vec<_>, _>>()?;
    // One completion per slot plus one issue event per workload; a huge `iodepth` from a user
    // file must not become a huge up-front allocation, so beyond 4096 the heap grows as needed.
    let slots: usize = runners
        .iter()
        .map(|r| (r.depth as usize).min(4096) + 1)
        .sum();
    let mut queue = EventQueue::with_capacity(slots);
    for (w, runner) in runners.iter_mut().enumerate() {
        queue.schedule(Nanos::ZERO, Event::Issue(w as u32));
        runner.issue_scheduled = true;
    }
    let (stop, last) = sim::run(&mut queue, until, |now, event, queue| {
        let w = match event {
            Event::Issue(w) => {
                runners[w as usize].issue_scheduled = false;
                w
            }
            Event::Complete {
                w,
                op,
                bytes,
                submitted,
            } => {
                runners[w as usize].complete(now, op, bytes, now - submitted);
                w
            }
        };
        runners[w as usize].pump(w, now, device, queue)
    })?;
    let end = if stop == Stop::Drained { last } else { until };
    Ok(report(runners, end, stop))
}

fn report(runners: Vec<Runner<'_>>, end: Nanos, stop: Stop) -> IoReport {
    let mut total = IoReport {
        read: LatencyHistogram::new(),
        write: LatencyHistogram::new(),
        per_workload: Vec::with_capacity(runners.len()),
        ios: 0,
        bytes: 0,
        end,
        stop,
    };
    for r in runners {
        let out = r.out;
        total.read.merge(&out.read);
        total.write.merge(&out.write);
        total.ios += out.ios;
        total.bytes += out.bytes;
        let iolog = match &r.source {
            Source::Replay(replay) => Some(replay.counts()),
            Source::Job(_) => None,
        };
        total.per_workload.push(WorkloadReport { iolog, ..out });
    }
    total
}

/// One workload's slots and measurements around its IO source.
struct Runner<'a> {
    source: Source<'a>,
    depth: u32,
    inflight: u32,
    issue_scheduled: bool,
    done: bool,
    out: WorkloadReport,
}

enum Source<'a> {
    Job(JobState<'a>),
    Replay(&'a mut IologReplay<Box<dyn BufRead + Send>>),
}

impl<'a> Runner<'a> {
    fn new(workload: &'a mut Workload, seed: u64, index: u64) -> Result<Self, InputError> {
        let (source, depth, name) = match workload {
            Workload::Job(job) => {
                job.validate().map_err(|e| {
                    InputError::whole(&format!("<job {}>", job.name), e.to_string())
                })?;
                (
                    Source::Job(JobState::new(job, Pcg32::new(seed, index))),
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
            issue_scheduled: false,
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
            },
        })
    }

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

    /// Issues every IO due by `now` while a slot is free; posts an issue event for the next.
    fn pump<D: BlockDevice>(
        &mut self,
        w: u32,
        now: Nanos,
        device: &mut D,
        queue: &mut EventQueue<Event>,
    ) -> Result<(), InputError> {
        while !self.done && !self.issue_scheduled && self.inflight < self.depth {
            match self.plan(now)? {
                Plan::Blocked => break,
                Plan::Done => {
                    self.done = true;
                    if self.inflight == 0 {
                        self.out.finished = Some(now);
                    }
                }
                Plan::At(t, _) if t > now => {
                    queue.schedule(t, Event::Issue(w));
                    self.issue_scheduled = true;
                }
                Plan::At(_, req) => {
                    self.commit();
                    let completes = device.submit(now, &req).max(now);
                    queue.schedule(
                        completes,
                        Event::Complete {
                            w,
                            op: req.op,
                            bytes: req.bytes,
                            submitted: now,
                        },
                    );
                    self.inflight += 1;
                    self.out.issued += 1;
                }
            }
        }
        Ok(())
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

/// A fio job's progress: what it issued, where its sequential cursors are, whether it is
/// thinking. The rules are in [`super::fio_job`]'s module doc.
struct JobState<'a> {
    job: &'a FioJob,
    rng: Pcg32,
    start: Nanos,
    /// `start + runtime`, when a runtime is set.
    stop_at: Option<Nanos>,
    issued: u64,
    issued_bytes: u64,
    /// IOs issued per direction (index `op as usize`), for the rate gate.
    issued_dir: [u64; 2],
    /// Next sequential position per direction, in bytes from the region's start.
    cursor: [u64; 2],
    completed_since_stall: u64,
    stall_pending: bool,
    resume_at: Nanos,
    next: Option<IoRequest>,
}

impl<'a> JobState<'a> {
    fn new(job: &'a FioJob, rng: Pcg32) -> Self {
        let start = job.startdelay.unwrap_or(Nanos::ZERO);
        JobState {
            job,
            rng,
            start,
            stop_at: job.runtime.map(|r| start.saturating_add(r)),
            issued: 0,
            issued_bytes: 0,
            issued_dir: [0; 2],
            cursor: [0; 2],
            completed_since_stall: 0,
            stall_pending: false,
            resume_at: Nanos::ZERO,
            next: None,
        }
    }

    /// The next IO and its due time (possibly already past), or why there is none.
    fn plan(&mut self, now: Nanos) -> Plan {
        let job = self.job;
        let ios_left = match job.number_ios {
            Some(n) => self.issued < n,
            None => true,
        };
        let bytes_left = job.time_based || self.issued_bytes + job.bs <= job.size;
        if !(ios_left && bytes_left) {
            return Plan::Done;
        }
        if self.stall_pending {
            return Plan::Blocked;
        }
        let req = match self.next {
            Some(req) => req,
            None => self.draw(),
        };
        self.next = Some(req);
        let mut due = self.start.max(self.resume_at);
        if let Some(rate) = job.rate_iops {
            let k = u128::from(self.issued_dir[req.op as usize]);
            let gate = u64::try_from(k * 1_000_000_000 / u128::from(rate)).unwrap_or(u64::MAX);
            due = due.max(self.start.saturating_add(Nanos(gate)));
        }
        match self.stop_at {
            Some(stop) if due.max(now) >= stop => Plan::Done,
            _ => Plan::At(due, req),
        }
    }

    /// Chooses the next IO's direction and offset.
    fn draw(&mut self) -> IoRequest {
        let job = self.job;
        let op = match job.rw {
            RwMode::Read | RwMode::RandRead => IoOp::Read,
            RwMode::Write | RwMode::RandWrite => IoOp::Write,
            RwMode::Rw | RwMode::RandRw => {
                if self.rng.below(100) < u64::from(job.rwmixread) {
                    IoOp::Read
                } else {
                    IoOp::Write
                }
            }
        };
        let within = if job.rw.is_random() {
            self.rng.below(job.blocks_in_region()) * job.bs
        } else {
            self.cursor[op as usize]
        };
        // `validate` bounds `bs` to u32 and `offset + size` to u64.
        IoRequest {
            op,
            offset: job.offset + within,
            bytes: job.bs as u32,
        }
    }

    /// Counts the planned IO as issued, then checks for a think time: fio does so after each
    /// issue (`handle_thinktime` in `do_io`), counting completed blocks.
    fn commit(&mut self) {
        let Some(req) = self.next.take() else { return };
        let d = req.op as usize;
        self.issued += 1;
        self.issued_bytes += self.job.bs;
        self.issued_dir[d] += 1;
        if !self.job.rw.is_random() {
            let next = self.cursor[d] + self.job.bs;
            self.cursor[d] = if next + self.job.bs > self.job.size {
                0
            } else {
                next
            };
        }
        self.check_thinktime();
    }

    /// ... and after each completion it reaps. The think time starts once the queue has
    /// drained (fio's `io_u_quiesce`): at the completion that leaves nothing in flight.
    fn on_complete(&mut self, now: Nanos, inflight: u32) {
        let Some(thinktime) = self.job.thinktime else {
            return;
        };
        self.completed_since_stall += 1;
        self.check_thinktime();
        if self.stall_pending && inflight == 0 {
            self.stall_pending = false;
            self.resume_at = now.saturating_add(thinktime);
        }
    }

    fn check_thinktime(&mut self) {
        if self.job.thinktime.is_some()
            && !self.stall_pending
            && self.completed_since_stall >= self.job.thinktime_blocks
        {
            self.stall_pending = true;
            self.completed_since_stall = 0;
        }
    }
}
