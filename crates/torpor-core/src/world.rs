//! The composition root: every component of one run, on one clock and one queue.
//!
//! The world owns the components, defines the run's event type (one variant per component,
//! each carrying that component's own event kind) and routes every event to its owner. It is
//! the only code that knows how components connect:
//!
//! 1. The [`IoIssuer`] posts "due" events; when one fires, the world asks the issuer for every
//!    IO now due and submits each to the device.
//! 2. The device posts its own events (completions, and for later devices timers and
//!    background work). When one completes a request, the world hands the ticket to the
//!    completion path.
//! 3. The [`CompletionPath`] decides when the issuer sees the completion: [`Direct`] passes it
//!    on at once; a CPU model can take an interrupt, wake a core, and deliver it later through
//!    events of its own.
//! 4. The issuer records the latency and the world pumps that workload again (step 1).
//!
//! Components are type parameters, so dispatch is static; no event allocates.

use crate::error::InputError;
use crate::sim::{self, Ctx, EventQueue, Stop};
use crate::storage::io::{BlockDevice, IoTicket};
use crate::time::Nanos;
use crate::workload::{Due, IoIssuer, IoReport, Workload};

/// How a completed request reaches the workload that issued it.
pub trait CompletionPath {
    /// The path's own event kind.
    type Event: Copy;

    /// The device completed `ticket` at `ctx.now()`. Returns it to deliver it now, or `None`
    /// after posting events that deliver it later.
    fn on_completion<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, Self::Event>,
        ticket: IoTicket,
    ) -> Option<IoTicket>;

    /// One of the path's own events is due; returns a completion to deliver, if any.
    fn on_event<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, Self::Event>,
        event: Self::Event,
    ) -> Option<IoTicket>;
}

/// Completions reach the workload the moment the device completes them (device-side
/// latency, as fio's clat on an idle host).
#[derive(Clone, Copy, Debug, Default)]
pub struct Direct;

/// The event kind of a component that has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoEvent {}

impl CompletionPath for Direct {
    type Event = NoEvent;

    #[inline]
    fn on_completion<W>(&mut self, _: &mut Ctx<'_, W, NoEvent>, t: IoTicket) -> Option<IoTicket> {
        Some(t)
    }

    fn on_event<W>(&mut self, _: &mut Ctx<'_, W, NoEvent>, event: NoEvent) -> Option<IoTicket> {
        match event {}
    }
}

/// One event of a run, tagged with the component it belongs to.
#[derive(Clone, Copy, Debug)]
pub enum Event<D, P> {
    Issuer(Due),
    Device(D),
    Path(P),
}

/// Every component of one run.
pub struct World<'a, D: BlockDevice, P: CompletionPath> {
    queue: EventQueue<Event<D::Event, P::Event>>,
    issuer: IoIssuer<'a>,
    device: &'a mut D,
    path: P,
}

impl<'a, D: BlockDevice, P: CompletionPath> World<'a, D, P> {
    /// A run of `workloads` against `device`, completions travelling by `path`. `seed` seeds
    /// every random stream of the run.
    pub fn new(
        device: &'a mut D,
        path: P,
        workloads: &'a mut [Workload],
        seed: u64,
    ) -> Result<Self, InputError> {
        let issuer = IoIssuer::new(workloads, seed)?;
        let queue = EventQueue::with_capacity(issuer.pending_hint());
        Ok(World {
            queue,
            issuer,
            device,
            path,
        })
    }

    /// Runs from time zero until `until` or until every workload has finished; returns the
    /// issuer's measurements and the completion path (with whatever it measured). A replay
    /// whose log turns out malformed stops the run with that log's [`InputError`].
    pub fn run(self, until: Nanos) -> Result<(IoReport, P), InputError> {
        self.run_watched(until, |_| true)
    }

    /// [`Self::run`], showing `watch` the simulated time every few thousand events; `watch`
    /// returning `false` ends the run there ([`Stop::Interrupted`] in the report).
    pub fn run_watched(
        self,
        until: Nanos,
        watch: impl FnMut(Nanos) -> bool,
    ) -> Result<(IoReport, P), InputError> {
        let World {
            mut queue,
            mut issuer,
            device,
            mut path,
        } = self;
        device.start(&mut Ctx::new(&mut queue, Event::Device));
        issuer.start(&mut Ctx::new(&mut queue, Event::Issuer));
        let open_ended = until == Nanos::MAX;
        let (stop, last) = sim::run(&mut queue, until, watch, |event, queue| {
            let w = match event {
                Event::Issuer(due) => issuer.on_due(due),
                Event::Device(e) => {
                    let Some(done) = device.on_event(&mut Ctx::new(queue, Event::Device), e) else {
                        return Ok(());
                    };
                    let Some(done) = path.on_completion(&mut Ctx::new(queue, Event::Path), done)
                    else {
                        return Ok(());
                    };
                    issuer.complete(queue.now(), done)
                }
                Event::Path(e) => {
                    let Some(done) = path.on_event(&mut Ctx::new(queue, Event::Path), e) else {
                        return Ok(());
                    };
                    issuer.complete(queue.now(), done)
                }
            };
            while let Some((ticket, req)) =
                issuer.next_io(w, &mut Ctx::new(queue, Event::Issuer))?
            {
                device.submit(&mut Ctx::new(queue, Event::Device), ticket, &req);
            }
            // A run without a deadline ends with its workloads: a device's own timers (a
            // periodic driver work) would otherwise keep it going for ever.
            if open_ended && issuer.all_finished() {
                queue.clear();
            }
            Ok(())
        })?;
        let end = match stop {
            Stop::Deadline => until,
            Stop::Drained | Stop::Interrupted => last,
        };
        Ok((issuer.report(end, stop), path))
    }
}

/// Runs `workloads` against `device` with completions delivered directly: the common case.
pub fn run_io<D: BlockDevice>(
    device: &mut D,
    workloads: &mut [Workload],
    until: Nanos,
    seed: u64,
) -> Result<IoReport, InputError> {
    World::new(device, Direct, workloads, seed)?
        .run(until)
        .map(|(io, _)| io)
}
