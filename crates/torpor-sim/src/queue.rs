//! Time-ordered event queue: a binary heap keyed by `(time, sequence)`.
//!
//! The sequence number is the insertion order, which makes the order of simultaneous events
//! deterministic (first scheduled, first handled) instead of depending on heap internals.
//!
//! The earliest event sits outside the heap when it was scheduled as the earliest (a switch's
//! end, a burst's, an exit's: most of what a component schedules comes next): it is popped
//! without sifting the heap, and the heap is touched only when a later event arrives or an
//! earlier one displaces it. The order is the same: `(time, sequence)` is unique.

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
    /// The earliest pending event when it arrived as such (earlier than every one in `heap`).
    front: Option<Entry<E>>,
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
            front: None,
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: Nanos::ZERO,
        }
    }

    /// Drops every pending event (the run has nothing left to do; components' own timers
    /// would otherwise keep an open-ended run going for ever).
    pub fn clear(&mut self) {
        self.front = None;
        self.heap.clear();
    }

    /// Creates a queue whose heap can hold `n` events without reallocating.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            front: None,
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
            now: Nanos::ZERO,
        }
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedules `event` at `at`. Scheduling in the past is a model bug.
    #[inline]
    pub fn schedule(&mut self, at: Nanos, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at:?} < {:?}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { at, seq, event };
        // A new event is later than every queued one of its time (its sequence is the
        // largest), so it goes first only if strictly earlier.
        match &self.front {
            None if self.heap.peek().is_none_or(|h| at < h.at) => self.front = Some(entry),
            _ => self.schedule_behind(entry),
        }
    }

    /// [`Self::schedule`] when the front is taken or the heap holds something earlier: the
    /// heap's part, out of line so that the common case stays small.
    #[inline(never)]
    fn schedule_behind(&mut self, entry: Entry<E>) {
        match &self.front {
            Some(f) if entry.at < f.at => {
                if let Some(old) = self.front.replace(entry) {
                    self.heap.push(old);
                }
            }
            _ => self.heap.push(entry),
        }
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        match &self.front {
            Some(f) => Some(f.at),
            None => self.heap.peek().map(|e| e.at),
        }
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let e = match self.front.take() {
            Some(f) => f,
            None => self.heap.pop()?,
        };
        self.now = e.at;
        Some((e.at, e.event))
    }

    /// Like [`Self::pop`], but only if the earliest event is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.peek_time()? > until {
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

    #[test]
    fn interleaved_schedules_and_pops_follow_time_then_insertion_order() {
        // A second method: every event pushed into a plain list, the earliest `(time, order)`
        // taken by a scan. Times on a coarse grid so that ties are common, each new event
        // sometimes the earliest, sometimes not.
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut rng = crate::Pcg32::new(7, 7);
        let mut next = 0u32;
        for _ in 0..5000 {
            if rng.below(3) > 0 || reference.is_empty() {
                let at = q.now().0 + rng.below(6) * 10;
                q.schedule(Nanos(at), next);
                reference.push((at, next));
                next += 1;
            } else {
                let (i, _) = reference
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, e)| **e)
                    .unwrap();
                let (at, id) = reference.remove(i);
                assert_eq!(q.peek_time(), Some(Nanos(at)));
                assert_eq!(q.pop(), Some((Nanos(at), id)));
            }
        }
    }
}
