//! The engine: a handful of primitives (schedule, now, rng) from which components are built.
//!
//! Components (drives, CPUs, workloads) never see the heap's internals; [`run`] hands each
//! event, with the current time, to a handler that may post future events on the queue. Ties in time are broken by insertion order,
//! so a scenario run twice with the same seed produces the same event order and the same bytes.

mod queue;
mod rng;

pub use queue::EventQueue;
pub use rng::Pcg32;

use crate::time::Nanos;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The next event lay beyond the time limit.
    Deadline,
    /// No events were left: the workload ended.
    Drained,
}

/// Pops the events of `queue` in time order and hands each to `handle`, which may schedule
/// more, until the queue is empty or the next event lies after `until`. Returns why it stopped
/// and the time of the last handled event; stops early with the first error `handle` returns
/// (e.g. a malformed line met mid-replay).
pub fn run<E, Err>(
    queue: &mut EventQueue<E>,
    until: Nanos,
    mut handle: impl FnMut(Nanos, E, &mut EventQueue<E>) -> Result<(), Err>,
) -> Result<(Stop, Nanos), Err> {
    let mut last = queue.now();
    while let Some(t) = queue.peek_time() {
        if t > until {
            return Ok((Stop::Deadline, last));
        }
        let (now, ev) = queue.pop().expect("peeked");
        last = now;
        handle(now, ev, queue)?;
    }
    Ok((Stop::Drained, last))
}
