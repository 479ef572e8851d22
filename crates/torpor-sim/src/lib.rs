//! The engine: one clock, one queue, and the primitives components are built from (the
//! bottom layer of torpor; it depends on no other part of it, which the crate boundary
//! enforces).
//!
//! `sim` knows no component. The composition root (torpor-core's `world`) owns every component of
//! a run, defines the run's event type as one variant per component, and routes each event to
//! its owner. A component sees the engine only through a [`Ctx`]: the current time and a way
//! to post *its own* events (the world supplies the wrapping into the run's event type, a plain
//! function, so dispatch stays static and nothing is allocated per event). Periodic monitors
//! and timeouts are [`Timer`]s: armed, re-armed or cancelled at will, a stale expiry is
//! recognised by its generation and ignored. A kernel timer on the timer wheel fires at its
//! bucket's rounded expiry, which [`Jiffies`] computes (`timer_wheel`).
//!
//! Ties in time are broken by insertion order, so a scenario run twice with the same seed
//! produces the same event order and the same bytes. Random streams are named
//! ([`stream_id`]): a component's draws depend on its own name and the seed, never on how many
//! other components a run has.

mod queue;
mod rng;
pub mod text;
pub mod time;
mod timer;
pub mod timer_wheel;

pub use queue::EventQueue;
pub use rng::{stream_id, Pcg32};
pub use timer::{Shot, Timer};
pub use timer_wheel::Jiffies;

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

    /// When the next pending event of the run (any component's) is due, if any: a component
    /// may do at once work whose end nothing can observe, when nothing else is due before it.
    #[inline]
    pub fn next_due(&self) -> Option<Nanos> {
        self.queue.peek_time()
    }
}

/// Pops the events of `queue` in time order and hands each to `handle`, which may schedule
/// more, until the queue is empty or the next event lies after `until`. Every
/// [`WATCH_EVERY`] events it shows `watch` the current time; `watch` returning `false` stops
/// the run ([`Stop::Interrupted`]). Returns why it stopped and the time of the last handled
/// event; stops early with the first error `handle` returns (e.g. a malformed line met
/// mid-replay).
///
/// An event at [`Nanos::MAX`] lies beyond every deadline: time saturates there, so a component
/// that reschedules itself "later" would otherwise run for ever at the same instant.
pub fn run<E, Err>(
    queue: &mut EventQueue<E>,
    until: Nanos,
    mut watch: impl FnMut(Nanos) -> bool,
    mut handle: impl FnMut(E, &mut EventQueue<E>) -> Result<(), Err>,
) -> Result<(Stop, Nanos), Err> {
    let until = until.min(Nanos(u64::MAX - 1));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ends_where_time_saturates() {
        // Each event schedules the next 1 ns later; from MAX - 3 the times are MAX - 3, MAX - 2,
        // MAX - 1, then MAX for ever (saturated): the run handles three and stops.
        let mut q = EventQueue::new();
        q.schedule(Nanos(u64::MAX - 3), ());
        let mut handled = 0;
        let (stop, last) = run(
            &mut q,
            Nanos::MAX,
            |_| true,
            |(), q| {
                handled += 1;
                let next = q.now() + Nanos(1);
                q.schedule(next, ());
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(
            (handled, stop, last),
            (3, Stop::Deadline, Nanos(u64::MAX - 1))
        );
    }

    #[test]
    fn the_watcher_is_asked_every_watch_every_events_and_can_stop_the_run() {
        let mut q = EventQueue::new();
        q.schedule(Nanos(0), ());
        let mut asked = Vec::new();
        let (stop, _) = run(
            &mut q,
            Nanos::MAX,
            |now| {
                asked.push(now);
                asked.len() < 3
            },
            |(), q| {
                let next = q.now() + Nanos(1);
                q.schedule(next, ());
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        // Events at 0, 1, 2, ...: the k-th watch comes after event k x 4096 - 1.
        let w = u64::from(WATCH_EVERY);
        assert_eq!(
            asked,
            vec![Nanos(w - 1), Nanos(2 * w - 1), Nanos(3 * w - 1)]
        );
        assert_eq!(stop, Stop::Interrupted);
    }
}
