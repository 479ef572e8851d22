//! Tasks that block on IO, and device interrupts on the CPUs.
//!
//! A task with IO submits one request at the end of a burst (a [`Signal::Submit`] the world
//! passes to the device) and sleeps. The device's completion is an interrupt on the CPU the
//! [`IrqMap`] names; its handler wakes the task, by an IPI when the task sits on another CPU.
//! The latency the task sees is decomposed as it travels: the device's service, the
//! interrupt (handlers and IPI), the idle exits it waited for, and the scheduler (the switch
//! and any wait behind another task).
//!
//! The host driver's CPU latency vote (ufshcd's PM QoS request) joins the global CPU latency
//! list like any other request: a change kicks the idle CPUs.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{CpuEvent, CpuSystem, Signal, WakeStamp};
use crate::cpu::task::TaskIo;
use crate::metrics::{LatencyHistogram, LatencySummary};
use crate::qos::cpu_latency::PM_QOS_DEFAULT_VALUE;
use crate::qos::Holder;
use crate::sim::Ctx;
use crate::storage::io::{CpuLatencyVote, IoRequest, IoTicket, Owner};
use crate::time::Nanos;

/// The holder of the host driver's request on the global CPU latency list.
const HOST_DRIVER_HOLDER: Holder = Holder::MAX - 1;

/// Which CPU takes a device's completion interrupt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum IrqMap {
    /// blk-mq's managed mapping with a queue per CPU (NVMe; UFS with MCQ): the submitting
    /// CPU's own queue's vector, so the completion lands where the task waits.
    #[default]
    Managed,
    /// Every interrupt on one CPU (a single-queue host such as UFS without MCQ; an interrupt
    /// whose affinity names one CPU, or a list of which the controller delivers to the first).
    Fixed(u32),
    /// In turn over these CPUs (x86's lowest-priority delivery, irqbalance's rotation).
    RoundRobin(Vec<u32>),
}

impl IrqMap {
    /// Every CPU the map names exists (`cpus`: the platform's).
    pub fn check(&self, cpus: &[u32]) -> Result<(), IrqMapError> {
        let named: &[u32] = match self {
            IrqMap::Managed => &[],
            IrqMap::Fixed(c) => std::slice::from_ref(c),
            IrqMap::RoundRobin(list) => list,
        };
        if matches!(self, IrqMap::RoundRobin(l) if l.is_empty()) {
            return Err(IrqMapError::NoCpus);
        }
        match named.iter().find(|c| !cpus.contains(c)) {
            Some(&cpu) => Err(IrqMapError::NoSuchCpu {
                cpu,
                cpus: cpus.to_vec(),
            }),
            None => Ok(()),
        }
    }
}

/// Why an interrupt mapping does not fit the platform.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrqMapError {
    #[error("[platform.irq] `cpus`: expected at least one CPU")]
    NoCpus,
    #[error(
        "[platform.irq]: the interrupt is mapped to CPU {cpu}, which the platform does not have \
         (it has {cpus:?})"
    )]
    NoSuchCpu { cpu: u32, cpus: Vec<u32> },
}

/// IO latency as tasks saw it, decomposed; each part a distribution.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IoPathStats {
    /// Submission to the task running again.
    pub total: LatencyHistogram,
    /// Submission to the device's completion.
    pub device: LatencyHistogram,
    /// Interrupt handlers and IPI delivery.
    pub irq: LatencyHistogram,
    /// Waiting for CPUs to leave idle states.
    pub exit: LatencyHistogram,
    /// The scheduler's wake-up and switch, and any wait behind another task.
    pub sched: LatencyHistogram,
}

impl IoPathStats {
    /// One request, whose waiter ran `wake_ns` after the device completed it.
    pub fn record(&mut self, stamp: &WakeStamp, wake_ns: u64) {
        let sched = wake_ns.saturating_sub(stamp.irq_ns + stamp.exit_ns);
        self.total.record(Nanos(stamp.device_ns + wake_ns));
        self.device.record(Nanos(stamp.device_ns));
        self.irq.record(Nanos(stamp.irq_ns));
        self.exit.record(Nanos(stamp.exit_ns));
        self.sched.record(Nanos(sched));
    }

    /// Each part's numbers (count, min, mean, p50, p90, p99, p99.9, max in us).
    pub fn summaries(&self) -> [(&'static str, LatencySummary); 5] {
        [
            ("total", self.total.summary()),
            ("device", self.device.summary()),
            ("irq", self.irq.summary()),
            ("exit", self.exit.summary()),
            ("sched", self.sched.summary()),
        ]
    }
}

impl Serialize for IoPathStats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("IoPathStats", 5)?;
        for (name, summary) in self.summaries() {
            st.serialize_field(name, &summary)?;
        }
        st.end()
    }
}

/// A wake-up latency distribution as a report shows it: its numbers, and cyclictest's
/// histogram (`-h`): the count per whole microsecond, non-empty bins only.
pub(super) fn latency_and_histogram<S: Serializer>(
    h: &LatencyHistogram,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for (lo_ns, count) in h.buckets() {
        let us = lo_ns / 1000;
        match bins.last_mut() {
            Some((last, n)) if *last == us => *n += count,
            _ => bins.push((us, count)),
        }
    }
    let mut st = s.serialize_struct("WakeLatency", 2)?;
    st.serialize_field("summary", &h.summary())?;
    st.serialize_field("histogram_us", &bins)?;
    st.end()
}

impl<'t> CpuSystem<'t> {
    /// The world passes on [`Signal`]s; with this, also every CPU's idle entries and exits
    /// (for a device whose driver runs a deferrable timer).
    pub fn with_idle_signals(mut self) -> Self {
        self.idle_signals = true;
        self
    }

    /// Whether a signal or a reaped completion waits for the world (checked after every
    /// event, so kept to one test of each queue).
    #[inline]
    pub fn has_output(&self) -> bool {
        !self.signals.is_empty() || !self.delivered.is_empty()
    }

    /// The next signal for the world to pass on.
    pub fn next_signal(&mut self) -> Option<Signal> {
        self.signals.pop_front()
    }

    /// The next completion a job's thread reaped, for the world to hand to its workload.
    pub fn next_delivered(&mut self) -> Option<IoTicket> {
        self.delivered.pop_front()
    }

    /// Task `t` submits its next request at `now` and sleeps until it completes.
    pub(super) fn submit_io(&mut self, now: Nanos, t: usize) {
        let task = &mut self.tasks[t];
        let Some(io) = task.spec.io else { return };
        let offset = next_offset(&io, &mut task.io_cursor, &mut task.rng);
        let ticket = IoTicket {
            owner: Owner::Task(t as u32),
            device: io.device,
            op: io.op,
            bytes: io.bs,
            submitted: now,
        };
        let req = IoRequest {
            op: io.op,
            offset,
            bytes: io.bs,
            // A task waits for it: the kernel marks such IO REQ_SYNC.
            sync: true,
        };
        self.signals.push_back(Signal::Submit(ticket, req));
    }

    /// The device completed `ticket` now: its interrupt arrives on a CPU. A task's request,
    /// or one of a fio job that has a thread on the CPUs, wakes its task through the wake-up
    /// path (the job's completion then waits in [`Self::next_delivered`] until its thread
    /// runs); any other workload's request costs its CPU the interrupt and is handed back at
    /// once.
    pub fn interrupt<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        ticket: IoTicket,
    ) -> Option<IoTicket> {
        let waiter = match ticket.owner {
            Owner::Task(t) => Some(t as usize),
            Owner::Workload(w) => match self.threads.get(w as usize).copied().flatten() {
                Some(t) => {
                    self.tasks[t].deliveries.push_back(ticket);
                    if self.tasks[t].runnable || self.tasks[t].ipi_at.is_some() {
                        // Already on its way: it reaps this one too when it runs.
                        return None;
                    }
                    Some(t)
                }
                None => None,
            },
        };
        // With no thread on the CPUs waiting for it, the interrupt still lands on one (under
        // the managed mapping, with no submitting CPU known, the first): that CPU wakes and
        // runs the handler, and the job sees the completion at once.
        let home = waiter.map_or(self.cpus[0].id, |t| self.tasks[t].spec.cpu);
        let now = ctx.now();
        let k = self.irq_cpu(home, ticket.device);
        let cost = self.costs[super::IO_IRQ].draw(&mut self.cpus[k].rng);
        let (exit_ns, done) = self.kernel_work(ctx, k, cost, super::Cause::Task);
        let Some(t) = waiter else {
            return Some(ticket);
        };
        let by = self.cpus[k].id;
        let task = &mut self.tasks[t];
        task.after_io = true;
        task.stamp = WakeStamp {
            origin: now,
            device_ns: (now - ticket.submitted).0,
            exit_ns,
            irq_ns: (done - now).0 - exit_ns,
            by: Some(by),
            device: ticket.device,
        };
        if by == home {
            self.make_runnable(ctx, t);
            return None;
        }
        // The handler's wake-up call on CPU k sends the IPI when the handler is done.
        let target = self.cpu_index(home);
        let ipi = if self.polls(target) {
            0
        } else {
            self.costs[super::IPI].draw(&mut self.cpus[k].rng)
        };
        let at = done + Nanos(ipi);
        self.tasks[t].stamp.irq_ns += ipi;
        self.tasks[t].ipi_at = Some(at);
        ctx.schedule(at, CpuEvent::Ipi(t));
        None
    }

    /// The CPU (index) taking the interrupt of a request that device `device` served,
    /// submitted from CPU `home`.
    fn irq_cpu(&mut self, home: u32, device: u8) -> usize {
        let id = match self.irq.get_mut(usize::from(device)) {
            None | Some((IrqMap::Managed, _)) => home,
            Some((IrqMap::Fixed(c), _)) => *c,
            Some((IrqMap::RoundRobin(list), next)) => {
                let c = list[*next % list.len()];
                *next = (*next + 1) % list.len();
                c
            }
        };
        self.cpu_index(id)
    }

    /// The host driver changes its CPU latency request now (`cpu_latency_qos_update_request`;
    /// the request is added on its first use, as `ufshcd_pm_qos_init` adds it at probe).
    pub fn latency_vote<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, vote: CpuLatencyVote) {
        let value = match vote {
            CpuLatencyVote::Hold(us) => us,
            CpuLatencyVote::Release => PM_QOS_DEFAULT_VALUE,
        };
        let changed = if self.qos.request_us(HOST_DRIVER_HOLDER).is_none() {
            self.qos.add_request(HOST_DRIVER_HOLDER, value)
        } else {
            self.qos.update_request(HOST_DRIVER_HOLDER, value)
        };
        self.host_votes += 1;
        if changed {
            self.limits_changed(ctx, true);
        }
    }
}

/// The offset of a task's next request: sequential from its cursor (wrapping at the region's
/// end), or a uniformly drawn block of the region.
fn next_offset(io: &TaskIo, cursor: &mut u64, rng: &mut crate::sim::Pcg32) -> u64 {
    let bs = u64::from(io.bs);
    let blocks = io.size / bs;
    let block = if io.random {
        rng.below(blocks)
    } else {
        let b = *cursor % blocks;
        *cursor = b + 1;
        b
    };
    io.offset + block * bs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_offsets_wrap_at_the_regions_end_and_random_ones_stay_inside() {
        let io = TaskIo {
            op: crate::storage::io::IoOp::Read,
            random: false,
            bs: 4096,
            offset: 1 << 20,
            size: 3 * 4096,
            device: 0,
        };
        let mut rng = crate::sim::Pcg32::new(1, 1);
        let mut cursor = 0;
        let got: Vec<u64> = (0..4)
            .map(|_| next_offset(&io, &mut cursor, &mut rng) - (1 << 20))
            .collect();
        assert_eq!(got, vec![0, 4096, 8192, 0]);
        let io = TaskIo { random: true, ..io };
        for _ in 0..100 {
            let o = next_offset(&io, &mut cursor, &mut rng);
            assert!((1 << 20..(1 << 20) + 3 * 4096).contains(&o) && o.is_multiple_of(4096));
        }
    }

    #[test]
    fn an_interrupt_mapped_to_a_missing_cpu_is_refused() {
        assert_eq!(
            IrqMap::Fixed(7).check(&[0, 1]),
            Err(IrqMapError::NoSuchCpu {
                cpu: 7,
                cpus: vec![0, 1]
            })
        );
        assert_eq!(
            IrqMap::RoundRobin(vec![]).check(&[0]),
            Err(IrqMapError::NoCpus)
        );
        assert!(IrqMap::RoundRobin(vec![0, 1]).check(&[0, 1]).is_ok());
    }
}
