//! Time-ordered event queue: a binary heap keyed by `(time, sequence)`.
//!
//! The sequence number is the insertion order, which makes the order of simultaneous events
//! deterministic (first scheduled, first handled) instead of depending on heap internals.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Nanos;

struct Entry<E> {
    at: Nanos,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest entry first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The pending events of one simulation and the current time.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: Nanos,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: Nanos::ZERO,
        }
    }

    /// Drops every pending event (the run has nothing left to do; components' own timers
    /// would otherwise keep an open-ended run going for ever).
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// Creates a queue whose heap can hold `n` events without reallocating.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
            now: Nanos::ZERO,
        }
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedules `event` at `at`. Scheduling in the past is a model bug.
    pub fn schedule(&mut self, at: Nanos, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at:?} < {:?}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.at)
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let e = self.heap.pop()?;
        self.now = e.at;
        Some((e.at, e.event))
    }

    /// Like [`Self::pop`], but only if the earliest event is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.heap.peek()?.at > until {
            return None;
        }
        self.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(Nanos(30), "c");
        q.schedule(Nanos(10), "a1");
        q.schedule(Nanos(20), "b");
        q.schedule(Nanos(10), "a2");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Nanos(10), "a1"),
                (Nanos(10), "a2"),
                (Nanos(20), "b"),
                (Nanos(30), "c")
            ]
        );
        assert_eq!(q.now(), Nanos(30));
    }
}
