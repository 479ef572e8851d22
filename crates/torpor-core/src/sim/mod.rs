//! The engine: one clock, one queue, and the primitives components are built from.
//!
//! `sim` knows no component. The composition root ([`crate::world`]) owns every component of
//! a run, defines the run's event type as one variant per component, and routes each event to
//! its owner. A component sees the engine only through a [`Ctx`]: the current time and a way
//! to post *its own* events (the world supplies the wrapping into the run's event type, a plain
//! function, so dispatch stays static and nothing is allocated per event). Periodic monitors
//! and timeouts are [`Timer`]s: armed, re-armed or cancelled at will, a stale expiry is
//! recognised by its generation and ignored.
//!
//! Ties in time are broken by insertion order, so a scenario run twice with the same seed
//! produces the same event order and the same bytes. Random streams are named
//! ([`stream_id`]): a component's draws depend on its own name and the seed, never on how many
//! other components a run has.

mod queue;
mod rng;
mod timer;

pub use queue::EventQueue;
pub use rng::{stream_id, Pcg32};
pub use timer::{Shot, Timer};

use crate::time::Nanos;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The next event lay beyond the time limit.
    Deadline,
    /// No events were left: the workload ended.
    Drained,
    /// The watcher asked the run to stop (the user pressed Ctrl-C).
    Interrupted,
}

/// How many events [`run`] handles between two calls of its watcher: rare enough to cost
/// nothing measurable, often enough (a few hundred microseconds of work) to stop at once.
pub const WATCH_EVERY: u32 = 4096;

/// A component's handle on the engine while it handles an event: the current time, and
/// scheduling of the component's own event kind `C`, wrapped into the run's event type `W`.
pub struct Ctx<'q, W, C> {
    queue: &'q mut EventQueue<W>,
    wrap: fn(C) -> W,
}

impl<'q, W, C> Ctx<'q, W, C> {
    /// A handle on `queue` for a component whose events become run events through `wrap`.
    #[inline]
    pub fn new(queue: &'q mut EventQueue<W>, wrap: fn(C) -> W) -> Self {
        Ctx { queue, wrap }
    }

    /// The time of the event being handled.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.queue.now()
    }

    /// Posts `event` for this component at `at` (not before now).
    #[inline]
    pub fn schedule(&mut self, at: Nanos, event: C) {
        self.queue.schedule(at, (self.wrap)(event));
    }
}

/// Pops the events of `queue` in time order and hands each to `handle`, which may schedule
/// more, until the queue is empty or the next event lies after `until`. Every
/// [`WATCH_EVERY`] events it shows `watch` the current time; `watch` returning `false` stops
/// the run ([`Stop::Interrupted`]). Returns why it stopped and the time of the last handled
/// event; stops early with the first error `handle` returns (e.g. a malformed line met
/// mid-replay).
pub fn run<E, Err>(
    queue: &mut EventQueue<E>,
    until: Nanos,
    mut watch: impl FnMut(Nanos) -> bool,
    mut handle: impl FnMut(E, &mut EventQueue<E>) -> Result<(), Err>,
) -> Result<(Stop, Nanos), Err> {
    let mut last = queue.now();
    let mut countdown = WATCH_EVERY;
    while let Some((now, ev)) = queue.pop_until(until) {
        last = now;
        handle(ev, queue)?;
        countdown -= 1;
        if countdown == 0 {
            countdown = WATCH_EVERY;
            if !watch(now) {
                return Ok((Stop::Interrupted, last));
            }
        }
    }
    let stop = if queue.peek_time().is_some() {
        Stop::Deadline
    } else {
        Stop::Drained
    };
    Ok((stop, last))
}
