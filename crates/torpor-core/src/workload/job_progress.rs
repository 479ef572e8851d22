//! A fio job's progress during a run: what it issued, where its sequential cursors are,
//! whether it is thinking. The rules are in [`super::fio_job`]'s module doc; the issuer
//! ([`super::issuer`]) asks it when the next IO is due and tells it what completed.

use super::fio_job::{FioJob, RwMode};
use super::issuer::Plan;
use crate::sim::Pcg32;
use crate::storage::io::{IoOp, IoRequest};
use crate::time::Nanos;

pub(super) struct JobState<'a> {
    job: &'a FioJob,
    rng: Pcg32,
    start: Nanos,
    /// `start + runtime`, when a runtime is set.
    stop_at: Option<Nanos>,
    issued: u64,
    issued_bytes: u64,
    /// Bytes issued per direction (index `op as usize`), for the rate gate.
    issued_dir_bytes: [u64; 2],
    /// Whether the job stopped because its `runtime` ran out (fio then counts the whole
    /// runtime as the job's, as its rate sleep runs to the end of it).
    runtime_ran_out: bool,
    /// Next sequential position per direction, in bytes from the region's start.
    cursor: [u64; 2],
    completed_since_stall: u64,
    stall_pending: bool,
    resume_at: Nanos,
    next: Option<IoRequest>,
}

impl<'a> JobState<'a> {
    pub(super) fn new(job: &'a FioJob, rng: Pcg32) -> Self {
        let start = job.startdelay.unwrap_or(Nanos::ZERO);
        JobState {
            job,
            rng,
            start,
            stop_at: job.runtime.map(|r| start.saturating_add(r)),
            issued: 0,
            issued_bytes: 0,
            issued_dir_bytes: [0; 2],
            runtime_ran_out: false,
            cursor: [0; 2],
            completed_since_stall: 0,
            stall_pending: false,
            resume_at: Nanos::ZERO,
            next: None,
        }
    }

    /// The next IO and its due time (possibly already past), or why there is none.
    pub(super) fn plan(&mut self, now: Nanos) -> Plan {
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
        if let Some(rate) = job.rate_bps(req.op as usize) {
            let bytes = u128::from(self.issued_dir_bytes[req.op as usize]);
            let gate = u64::try_from(bytes * 1_000_000_000 / u128::from(rate)).unwrap_or(u64::MAX);
            due = due.max(self.start.saturating_add(Nanos(gate)));
        }
        match self.stop_at {
            Some(stop) if due.max(now) >= stop => {
                self.runtime_ran_out = true;
                Plan::Done
            }
            _ => Plan::At(due, req),
        }
    }

    /// Whether the job stopped because its `runtime` ran out.
    pub(super) fn runtime_ran_out(&self) -> bool {
        self.runtime_ran_out
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
            // Jobs are direct IO (`direct=0` is refused): O_DIRECT writes carry REQ_SYNC.
            sync: true,
        }
    }

    /// Counts the planned IO as issued, then checks for a think time: fio does so after each
    /// issue (`handle_thinktime` in `do_io`), counting completed blocks.
    pub(super) fn commit(&mut self) {
        let Some(req) = self.next.take() else { return };
        let d = req.op as usize;
        self.issued += 1;
        self.issued_bytes += self.job.bs;
        self.issued_dir_bytes[d] += self.job.bs;
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
    pub(super) fn on_complete(&mut self, now: Nanos, inflight: u32) {
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
