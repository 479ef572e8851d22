//! The engine: a handful of primitives (schedule, now, rng) from which components are built.
//!
//! Components (drives, CPUs, workloads) never see the heap; they receive the current time
//! and the queue to post future events on. Ties in time are broken by insertion order,
//! so a scenario run twice with the same seed produces the same event order and the same bytes.

mod queue;
mod rng;

pub use queue::EventQueue;
pub use rng::Pcg32;

use crate::time::Nanos;

/// A model that reacts to its own events. The run loop pops events in time order and hands
/// each to [`Model::handle`], which may schedule more.
pub trait Model {
    type Event;
    fn handle(&mut self, now: Nanos, event: Self::Event, queue: &mut EventQueue<Self::Event>);
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The next event lay beyond the time limit.
    Deadline,
    /// No events were left: the workload ended.
    Drained,
}

/// Runs `model` from the events already in `queue` until the queue is empty or the next event
/// lies after `until`. Returns why it stopped and the time of the last handled event.
pub fn run<M: Model>(
    model: &mut M,
    queue: &mut EventQueue<M::Event>,
    until: Nanos,
) -> (Stop, Nanos) {
    let mut last = queue.now();
    loop {
        match queue.peek_time() {
            None => return (Stop::Drained, last),
            Some(t) if t > until => return (Stop::Deadline, last),
            Some(_) => {}
        }
        let (now, ev) = queue.pop().expect("peeked");
        last = now;
        model.handle(now, ev, queue);
    }
}
