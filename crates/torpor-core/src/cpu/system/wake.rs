//! The wake-up path on the engine: how a wake-up's cause (a timer expiring, a device's
//! interrupt, another task's wake-up call) becomes the woken task running, and what each step
//! costs (`cpu::wake_path`).
//!
//! 1. The cause reaches a CPU: a timer fires on its task's CPU; a device interrupt on the CPU
//!    the interrupt map names; a cross-CPU wake-up as an IPI on the woken task's CPU, sent
//!    when the waker calls it and arriving `ipi` later (at once when the target polls: the
//!    kernel sets its need-resched flag and sends nothing).
//! 2. That CPU does the handler's kernel work as soon as it can: an idle CPU first leaves its
//!    state (the real exit, after completing an entry under way), a CPU already waking queues
//!    the work behind what it has, a running task is interrupted (its burst ends that much
//!    later).
//! 3. The woken task joins its CPU's run queue; when the CPU picks it, the scheduler's
//!    wake-up and switch (`sched`) pass before it runs.
//!
//! Each task's wake-up is stamped with its cause's time and the exit and interrupt time on
//! its path ([`WakeStamp`]); the rest of its latency is the scheduler's (the switch, and any
//! wait behind another task).

use super::{Cause, CpuEvent, CpuSystem, Mode, Traced};
use crate::cpu::task::Source;
use crate::qos::cpu_latency::QosTarget;
use crate::sim::Ctx;
use crate::time::Nanos;

/// How one wake-up travelled: its cause's time, and the parts of its latency known before the
/// task runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeStamp {
    /// When the cause happened (the timer's expiry, the device's completion, the waker's call).
    pub origin: Nanos,
    /// For an IO: submission to the device's completion.
    pub device_ns: u64,
    /// Time spent waiting for CPUs to leave idle states on the way.
    pub exit_ns: u64,
    /// Interrupt handlers and IPI delivery on the way.
    pub irq_ns: u64,
    /// The CPU whose task called the wake-up, if one did.
    pub by: Option<u32>,
    /// For an IO: the device (slot) that served it.
    pub device: u8,
}

impl<'t> CpuSystem<'t> {
    /// Step 2: CPU `c` does `cost_ns` of kernel work as soon as it can, waking first if idle
    /// (`cause` says why, for the cpuidle core's accounting). Returns how long the work waited
    /// for the CPU to leave its idle state, and when the work is done.
    pub(super) fn kernel_work<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        c: usize,
        cost_ns: u64,
        cause: Cause,
    ) -> (u64, Nanos) {
        let now = ctx.now();
        let woken = matches!(self.cpus[c].mode, Mode::Idle { .. });
        if woken {
            self.end_idle(ctx, c, cause);
        }
        let cpu = &mut self.cpus[c];
        match cpu.mode {
            Mode::Exiting { from: Some(_) } => {
                let exit_wait = cpu.out_at.0.saturating_sub(now.0);
                let start = cpu.kernel_until.max(now);
                cpu.kernel_until = start + Nanos(cost_ns);
                // Ready once, after the exit and this work (a CPU already on its way out is
                // re-armed only if the work moves its readiness).
                if woken || cost_ns > 0 {
                    self.arm_ready(ctx, c);
                }
                (exit_wait, start + Nanos(cost_ns))
            }
            Mode::Running { .. } | Mode::Switching { .. } => {
                // The interrupt takes the CPU from the running task (or from the switch).
                if cost_ns > 0 {
                    if let Some(due) = cpu.burst.due() {
                        cpu.burst
                            .arm(ctx, due + Nanos(cost_ns), |s| CpuEvent::BurstEnd(c, s));
                    }
                }
                (0, now + Nanos(cost_ns))
            }
            Mode::Exiting { from: None } | Mode::Idle { .. } => (0, now + Nanos(cost_ns)),
        }
    }

    /// Task `t`'s own wake-up source fired (its timer, or an interrupt standing for a device
    /// the run does not model): step 2 on its CPU, then step 3.
    pub(super) fn source_fired<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        t: usize,
        source: Source,
    ) {
        let now = ctx.now();
        let c = self.cpu_index(self.tasks[t].spec.cpu);
        let cost = match source {
            Source::Timer => self.costs[super::TIMER_IRQ],
            Source::Interrupt => self.costs[super::IO_IRQ],
        }
        .draw(&mut self.cpus[c].rng);
        let (exit_ns, done) = self.kernel_work(ctx, c, cost, Cause::Task);
        // Measured from when the task meant to wake, as cyclictest measures: the timer's
        // slack counts in its latency.
        let origin = self.tasks[t].intended;
        self.tasks[t].stamp = WakeStamp {
            origin,
            device_ns: 0,
            exit_ns,
            irq_ns: (done - now).0 - exit_ns,
            by: None,
            device: 0,
        };
        self.make_runnable(ctx, t);
    }

    /// Step 3: task `t` joins its CPU's run queue, its latency counted from its stamp's
    /// origin. A task already runnable stays as it is (the wake-up finds nothing to do).
    pub(super) fn make_runnable<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, t: usize) {
        if self.tasks[t].runnable {
            return;
        }
        let cpu = self.tasks[t].spec.cpu;
        let by = self.tasks[t].stamp.by;
        self.emit(ctx.now(), || Traced::Woken { task: t, cpu, by });
        let c = self.cpu_index(cpu);
        let task = &mut self.tasks[t];
        task.runnable = true;
        task.woken_at = task.stamp.origin;
        task.chain_origin = task.handed_origin.take().unwrap_or(task.stamp.origin);
        self.cpus[c].queue.push_back(t);
        if self.listens {
            self.util_enqueue(ctx, c, t);
        }
        if matches!(self.cpus[c].mode, Mode::Idle { .. }) {
            self.kernel_work(ctx, c, 0, Cause::Task);
        }
    }

    /// The task running on CPU `c` ended its burst and wakes task `w`: on the same CPU it
    /// joins the queue; elsewhere an IPI carries the wake-up.
    pub(super) fn wake_other<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, waker: usize, w: usize) {
        let now = ctx.now();
        let from = self.tasks[waker].spec.cpu;
        if self.tasks[w].runnable || self.tasks[w].ipi_at.is_some() {
            return;
        }
        self.tasks[w].handed_origin = Some(self.tasks[waker].chain_origin);
        self.tasks[w].stamp = WakeStamp {
            origin: now,
            by: Some(from),
            device: 0,
            ..WakeStamp::default()
        };
        let target = self.cpu_index(self.tasks[w].spec.cpu);
        if self.cpus[target].id == from {
            self.make_runnable(ctx, w);
            return;
        }
        let ipi = if self.polls(target) {
            0
        } else {
            self.tasks[waker].ipi_ns
        };
        self.send_ipi(ctx, w, now + Nanos(ipi));
    }

    /// An IPI for task `w` leaves now and arrives at `at` (handled at once when it takes no
    /// time, as the kernel's need-resched flag on a polling CPU is).
    pub(super) fn send_ipi<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, w: usize, at: Nanos) {
        self.tasks[w].stamp.irq_ns += (at - ctx.now()).0;
        if at == ctx.now() {
            self.ipi_arrived(ctx, w);
        } else {
            self.tasks[w].ipi_at = Some(at);
            ctx.schedule(at, CpuEvent::Ipi(w));
        }
    }

    /// The IPI for task `t` reached its CPU: step 2 (the CPU wakes; the handler's work is the
    /// scheduler's, counted at the switch), then step 3.
    pub(super) fn ipi_arrived<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, t: usize) {
        self.tasks[t].ipi_at = None;
        let c = self.cpu_index(self.tasks[t].spec.cpu);
        let (exit_ns, _) = self.kernel_work(ctx, c, 0, Cause::Task);
        self.tasks[t].stamp.exit_ns += exit_ns;
        self.make_runnable(ctx, t);
    }

    /// CPU `c` picked task `t`: the scheduler's wake-up and switch pass, then it runs.
    ///
    /// The switch's end is an event of its own only when something could happen before it.
    /// Every caller picks as the last thing it does for the event it handles; when nothing is
    /// left for the world to pass on (so nothing more is scheduled for this instant), nothing
    /// else is due until after the switch ends, the end is within the run and no completion
    /// waits for the task, no event can see the CPU switching: its end is handled at once,
    /// at its own time, with the same results (the burst's expiry is the next thing posted
    /// either way; counted as a handled event all the same).
    pub(super) fn switch_to<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, c: usize, t: usize) {
        if self.listens {
            self.util_pick(c, t);
        }
        let cost = self.costs[super::SCHED].draw(&mut self.cpus[c].rng);
        let now = ctx.now();
        if cost == 0 {
            self.start_task(ctx, c, t, now);
            return;
        }
        self.settle(c, now);
        self.mark(c, now, super::timeline::Lane::Kernel);
        let end = now + Nanos(cost);
        let unseen = end <= self.until
            && ctx.next_due().is_none_or(|next| next > end)
            && !self.has_output()
            && self.tasks[t].deliveries.is_empty();
        let cpu = &mut self.cpus[c];
        cpu.mode = Mode::Switching { task: t };
        if unseen {
            self.folded += 1;
            self.start_task(ctx, c, t, end);
        } else {
            cpu.burst.arm(ctx, end, |s| CpuEvent::BurstEnd(c, s));
        }
    }

    /// At the start of task `t`'s burst: the IPI its end will send to a task on another CPU,
    /// drawn now so that the wake-up is determined (and known to the oracle there).
    pub(super) fn draw_ipi(&mut self, t: usize) {
        let Some(w) = self.tasks[t].spec.wakes else {
            return;
        };
        if self.tasks[w].spec.cpu == self.tasks[t].spec.cpu {
            return;
        }
        let c = self.cpu_index(self.tasks[t].spec.cpu);
        self.tasks[t].ipi_ns = self.costs[super::IPI].draw(&mut self.cpus[c].rng);
    }

    /// CPU `c` sits in a polling state (a wake-up needs no IPI there).
    pub(super) fn polls(&self, c: usize) -> bool {
        match self.cpus[c].mode {
            Mode::Idle { state, .. } => self.cpus[c].view.states[state].polling,
            _ => false,
        }
    }

    /// The earliest time CPU `c` can be woken, as far as it is determined now (what the
    /// oracle knows): its tasks' timers and interrupts, IPIs in flight to it, the IPI a task
    /// elsewhere sends it at the end of a burst (the end of one under way, or of one a chain
    /// of wake-ups will start: each burst is drawn one ahead, and every cost on the way is at
    /// least its minimum), and the next change of the global latency limit (which kicks every
    /// idle CPU). A lower bound: the CPU never wakes earlier, so a state chosen for it is never
    /// too deep. A device's completion is not among them: the CPUs do not see a device's
    /// future.
    pub(super) fn next_determined_wake(&self, c: usize) -> Option<u64> {
        let id = self.cpus[c].id;
        let mut next: Option<u64> = None;
        let mut at = |t: Nanos| next = Some(next.map_or(t.0, |n| n.min(t.0)));
        for (t, task) in self.tasks.iter().enumerate() {
            if task.spec.cpu == id {
                if let Some((due, _)) = task.pending {
                    at(due);
                }
                if let Some(due) = task.ipi_at {
                    at(due);
                }
                continue;
            }
            let Some(w) = task.spec.wakes else { continue };
            if self.tasks[w].spec.cpu != id {
                continue;
            }
            if let Some(end) = self.earliest_burst_end(t, self.tasks.len()) {
                at(end + Nanos(self.ipi_lower_bound(t)));
            }
        }
        let global = self.qos_actions[self.qos_next..]
            .iter()
            .find(|a| a.target == QosTarget::CpuDmaLatency);
        if let Some(a) = global {
            at(a.at);
        }
        next
    }

    /// The earliest end of task `t`'s burst under way or next, following the chain of tasks
    /// that wake it at most `depth` links back (`None`: not determined, e.g. a task waiting
    /// for its IO).
    fn earliest_burst_end(&self, t: usize, depth: usize) -> Option<Nanos> {
        let task = &self.tasks[t];
        let c = self.cpu_index(task.spec.cpu);
        match self.cpus[c].mode {
            Mode::Running { task: r } if r == t => return self.cpus[c].burst.due(),
            Mode::Switching { task: r } if r == t => {
                return self.cpus[c]
                    .burst
                    .due()
                    .map(|d| d + self.cpus[c].at_speed(task.next_run));
            }
            _ => {}
        }
        let starts = if task.runnable {
            Some(self.cpus[c].out_at.max(self.cpus[c].kernel_until))
        } else if let Some(a) = task.ipi_at {
            Some(a)
        } else if let Some((due, _)) = task.pending {
            Some(due)
        } else if depth == 0 {
            None
        } else {
            // Woken by another task's burst end: the earliest over its wakers.
            self.tasks
                .iter()
                .enumerate()
                .filter(|(_, w)| w.spec.wakes == Some(t))
                .filter_map(|(r, _)| {
                    self.earliest_burst_end(r, depth - 1)
                        .map(|end| end + Nanos(self.ipi_lower_bound(r)))
                })
                .min()
        };
        starts.map(|s| s + self.cpus[c].at_speed(task.next_run))
    }

    /// The least IPI task `t`'s burst end can send: the one drawn for the burst under way, or
    /// the path's minimum; none to the same CPU.
    fn ipi_lower_bound(&self, t: usize) -> u64 {
        let task = &self.tasks[t];
        let Some(w) = task.spec.wakes else { return 0 };
        if self.tasks[w].spec.cpu == task.spec.cpu {
            return 0;
        }
        let c = self.cpu_index(task.spec.cpu);
        match self.cpus[c].mode {
            Mode::Running { task: r } if r == t => task.ipi_ns,
            _ => self.costs[super::IPI].lo,
        }
    }
}
