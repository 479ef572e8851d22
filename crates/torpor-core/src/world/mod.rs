//! The composition root: every component of one run, on one clock and one queue.
//!
//! The world owns the components, defines the run's event type (one variant per component,
//! each carrying that component's own event kind) and routes every event to its owner. It is
//! the only code that knows how components connect:
//!
//! 1. The [`IoIssuer`] posts "due" events; when one fires, the world asks the issuer for every
//!    IO now due and submits each to the device.
//! 2. The device posts its own events (completions, timers, background work). When one
//!    completes a request, the world hands the ticket on: to the issuer at once when the run
//!    has no CPUs, else to the [`CpuSystem`] as an interrupt.
//! 3. The CPU system takes the interrupt on a CPU and wakes the waiting task or thread: a
//!    task's own IO stays inside the CPU system; an IO of one of the issuer's jobs whose thread
//!    runs on a CPU comes back out when that thread runs ([`CpuSystem::next_delivered`]), and
//!    the world hands it to the issuer, which records the latency and issues what is now due.
//! 4. IO that the CPUs' tasks submit while handling an event is drained from the CPU system
//!    and submitted to the device; each CPU's idle entries and exits, and its latency votes,
//!    travel the same way between the CPUs and the device ([`crate::cpu::system::Signal`]).
//!
//! A run may have CPUs alone ([`NoDevice`], no workloads), a device alone, CPUs with a device,
//! or two devices (with or without CPUs; [`World::with_second_device`]). Each request goes to
//! the device its ticket names ([`IoTicket::device`]: slot 0 or 1); both devices hear the
//! CPUs' idle signals. Components are held by value or by reference with their concrete types,
//! so dispatch is static; no event allocates.

use crate::cpu::system::{CpuEvent, CpuReport, CpuSystem, Signal};
use crate::error::InputError;
use crate::sim::{self, Ctx, EventQueue, Stop};
use crate::storage::io::{BlockDevice, CpuLatencyVote, IoRequest, IoTicket};
use crate::time::Nanos;
use crate::workload::{Due, IoIssuer, IoReport, Workload};

/// The event kind of a component that has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoEvent {}

/// The device of a run with CPUs alone: it is never given a request (a task's IO to a
/// device the scenario lacks is refused before the run).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDevice;

impl BlockDevice for NoDevice {
    type Event = NoEvent;

    fn submit<W>(&mut self, _: &mut Ctx<'_, W, NoEvent>, _: IoTicket, _: &IoRequest) {}

    fn on_event<W>(&mut self, _: &mut Ctx<'_, W, NoEvent>, event: NoEvent) -> Option<IoTicket> {
        match event {}
    }
}

/// One event of a run, tagged with the component it belongs to (`Second`: the device in slot
/// 1 of a run with two).
#[derive(Clone, Copy, Debug)]
pub enum Event<D, D2 = NoEvent> {
    Issuer(Due),
    Device(D),
    Second(D2),
    Cpu(CpuEvent),
}

/// What a run measured: the issuer's IO, the CPUs' report when the run had CPUs, and how many
/// events the engine handled (what `torpor bench` rates the whole system by).
pub struct Outcome {
    pub io: IoReport,
    pub cpu: Option<CpuReport>,
    pub events: u64,
}

/// Every component of one run.
pub struct World<'a, 't, D: BlockDevice, D2: BlockDevice = NoDevice> {
    queue: EventQueue<Event<D::Event, D2::Event>>,
    issuer: IoIssuer<'a>,
    device: &'a mut D,
    second: Option<&'a mut D2>,
    cpus: Option<CpuSystem<'t>>,
}

impl<'a, 't, D: BlockDevice> World<'a, 't, D> {
    /// A run of `workloads` against `device`, on `cpus` when given (completions then take an
    /// interrupt on a CPU before the workload sees them). `seed` seeds every random stream of
    /// the run.
    pub fn new(
        device: &'a mut D,
        cpus: Option<CpuSystem<'t>>,
        workloads: &'a mut [Workload],
        seed: u64,
    ) -> Result<Self, InputError> {
        let issuer = IoIssuer::new(workloads, seed)?;
        let queue = EventQueue::with_capacity(issuer.pending_hint() + 64);
        Ok(World {
            queue,
            issuer,
            device,
            second: None,
            cpus,
        })
    }

    /// Adds a second device, in slot 1: requests whose ticket names it go there, and the
    /// workloads' IO too when `workloads_to_second` (a task's IO names its own device).
    pub fn with_second_device<D2: BlockDevice>(
        self,
        second: &'a mut D2,
        workloads_to_second: bool,
    ) -> World<'a, 't, D, D2> {
        let issuer = match workloads_to_second {
            true => self.issuer.to_device(1),
            false => self.issuer,
        };
        World {
            queue: EventQueue::with_capacity(issuer.pending_hint() + 64),
            issuer,
            device: self.device,
            second: Some(second),
            cpus: self.cpus,
        }
    }
}

impl<'a, 't, D: BlockDevice, D2: BlockDevice> World<'a, 't, D, D2> {
    /// Runs from time zero until `until` or until every workload has finished.
    pub fn run(self, until: Nanos) -> Result<Outcome, InputError> {
        self.run_watched(until, |_| true)
    }

    /// [`Self::run`], showing `watch` the simulated time every few thousand events; `watch`
    /// returning `false` ends the run there ([`Stop::Interrupted`] in the report). A replay
    /// whose log turns out malformed stops the run with that log's [`InputError`].
    pub fn run_watched(
        self,
        until: Nanos,
        watch: impl FnMut(Nanos) -> bool,
    ) -> Result<Outcome, InputError> {
        let World {
            mut queue,
            mut issuer,
            device,
            second,
            mut cpus,
        } = self;
        let mut devices = Devices {
            first: device,
            second,
        };
        devices
            .first
            .start(&mut Ctx::new(&mut queue, Event::Device));
        if let Some(d) = devices.second.as_mut() {
            d.start(&mut Ctx::new(&mut queue, Event::Second));
        }
        if let Some(c) = cpus.as_mut() {
            c.start(&mut Ctx::new(&mut queue, Event::Cpu), until);
            pass_on(c, &mut devices, &mut queue);
        }
        issuer.start(&mut Ctx::new(&mut queue, Event::Issuer));
        // A run without a deadline ends with its workloads; CPUs alone have none to end.
        let open_ended = until == Nanos::MAX && issuer.has_workloads();
        let mut events = 0u64;
        let (stop, last) = sim::run(&mut queue, until, watch, |event, queue| {
            events += 1;
            match event {
                Event::Issuer(due) => {
                    let w = issuer.on_due(due);
                    pump(&mut issuer, &mut devices, queue, w)?;
                }
                Event::Device(e) => {
                    let done = devices
                        .first
                        .on_event(&mut Ctx::new(queue, Event::Device), e);
                    completed(done, &mut cpus, &mut issuer, &mut devices, queue)?;
                }
                Event::Second(e) => {
                    let done = devices
                        .second
                        .as_mut()
                        .expect("events of a second device come from it")
                        .on_event(&mut Ctx::new(queue, Event::Second), e);
                    completed(done, &mut cpus, &mut issuer, &mut devices, queue)?;
                }
                Event::Cpu(e) => cpus
                    .as_mut()
                    .expect("CPU events come from the CPU system")
                    .on_event(&mut Ctx::new(queue, Event::Cpu), e),
            }
            if let Some(c) = cpus.as_mut() {
                if c.has_output() {
                    while let Some(done) = c.next_delivered() {
                        let w = issuer.complete(queue.now(), done);
                        pump(&mut issuer, &mut devices, queue, w)?;
                    }
                    pass_on(c, &mut devices, queue);
                }
                while let Some(vote) = devices.next_cpu_latency_vote() {
                    c.latency_vote(&mut Ctx::new(queue, Event::Cpu), vote);
                }
            }
            if open_ended && issuer.all_finished() {
                // A device's own timers (a periodic driver work) would otherwise keep it
                // going for ever.
                queue.clear();
            }
            Ok(())
        })?;
        let end = match stop {
            Stop::Deadline => until,
            Stop::Drained | Stop::Interrupted => last,
        };
        Ok(Outcome {
            io: issuer.report(end, stop),
            events: events + cpus.as_ref().map_or(0, CpuSystem::folded_switches),
            cpu: cpus.map(|c| c.finish(end)),
        })
    }
}

/// The run's devices: slot 0, and slot 1 when it has two.
struct Devices<'a, D, D2> {
    first: &'a mut D,
    second: Option<&'a mut D2>,
}

impl<D: BlockDevice, D2: BlockDevice> Devices<'_, D, D2> {
    /// Hands `req` to the device its ticket names.
    #[inline]
    fn submit(
        &mut self,
        queue: &mut EventQueue<Event<D::Event, D2::Event>>,
        ticket: IoTicket,
        req: &IoRequest,
    ) {
        match (ticket.device, self.second.as_mut()) {
            (1, Some(d)) => d.submit(&mut Ctx::new(queue, Event::Second), ticket, req),
            _ => self
                .first
                .submit(&mut Ctx::new(queue, Event::Device), ticket, req),
        }
    }

    /// A host driver's next CPU latency vote (the run lets at most one device vote).
    fn next_cpu_latency_vote(&mut self) -> Option<CpuLatencyVote> {
        self.first
            .next_cpu_latency_vote()
            .or_else(|| self.second.as_mut()?.next_cpu_latency_vote())
    }
}

/// A device finished `done` (if anything): with CPUs its interrupt arrives on one, else (or
/// when no thread waits for it) its workload sees it at once and may issue more.
fn completed<D: BlockDevice, D2: BlockDevice>(
    done: Option<IoTicket>,
    cpus: &mut Option<CpuSystem<'_>>,
    issuer: &mut IoIssuer<'_>,
    devices: &mut Devices<'_, D, D2>,
    queue: &mut EventQueue<Event<D::Event, D2::Event>>,
) -> Result<(), InputError> {
    let done = done.and_then(|done| match cpus.as_mut() {
        None => Some(done),
        Some(c) => c.interrupt(&mut Ctx::new(queue, Event::Cpu), done),
    });
    if let Some(done) = done {
        let w = issuer.complete(queue.now(), done);
        pump(issuer, devices, queue, w)?;
    }
    Ok(())
}

/// Submits every IO workload `w` has due now.
fn pump<D: BlockDevice, D2: BlockDevice>(
    issuer: &mut IoIssuer<'_>,
    devices: &mut Devices<'_, D, D2>,
    queue: &mut EventQueue<Event<D::Event, D2::Event>>,
    w: u32,
) -> Result<(), InputError> {
    while let Some((ticket, req)) = issuer.next_io(w, &mut Ctx::new(queue, Event::Issuer))? {
        devices.submit(queue, ticket, &req);
    }
    Ok(())
}

/// Hands the devices what the CPU system produced while handling an event: its tasks' IO, and
/// the signals a device may act on (a CPU's idle entry or exit, which both devices hear).
fn pass_on<D: BlockDevice, D2: BlockDevice>(
    cpus: &mut CpuSystem<'_>,
    devices: &mut Devices<'_, D, D2>,
    queue: &mut EventQueue<Event<D::Event, D2::Event>>,
) {
    while let Some(signal) = cpus.next_signal() {
        match signal {
            Signal::Submit(ticket, req) => devices.submit(queue, ticket, &req),
            Signal::Idle { cpu, idle } => {
                devices
                    .first
                    .on_cpu_idle(&mut Ctx::new(queue, Event::Device), cpu, idle);
                if let Some(d) = devices.second.as_mut() {
                    d.on_cpu_idle(&mut Ctx::new(queue, Event::Second), cpu, idle);
                }
            }
        }
    }
}

/// Runs `workloads` against `device` with completions delivered directly: the common case.
pub fn run_io<D: BlockDevice>(
    device: &mut D,
    workloads: &mut [Workload],
    until: Nanos,
    seed: u64,
) -> Result<IoReport, InputError> {
    World::new(device, None, workloads, seed)?
        .run(until)
        .map(|o| o.io)
}

/// Runs `cpus` alone for `until`: their tasks, timers and idle states, no device. Returns the
/// CPUs' report, why the run stopped and how many events it handled.
pub fn run_cpus(
    cpus: CpuSystem<'_>,
    until: Nanos,
    watch: impl FnMut(Nanos) -> bool,
) -> (CpuReport, Stop, u64) {
    let mut none = NoDevice;
    let out = World::new(&mut none, Some(cpus), &mut [], 0)
        .expect("no workloads to check")
        .run_watched(until, watch)
        .expect("CPUs alone read no input");
    (out.cpu.expect("the run had CPUs"), out.io.stop, out.events)
}
