//! A least-recently-used set of keys with a value each: what the device's map cache pages
//! through ([`MapCache`](super::MapCache)) and how the device ranks the regions it has
//! recommended for HPB ([`DcmRecommender`](super::DcmRecommender)). Both hold at most a fixed
//! number of keys from a key space far larger (a 64 GB LU has 16 Mi LPNs, 16 Ki map pages), and
//! both touch a key on every read, so every operation here is O(1) and memory follows the keys
//! held, never the key space.

use std::collections::HashMap;

/// "No slot" in the intrusive list.
const NIL: u32 = u32::MAX;

/// One cached key: its neighbours in recency order and its value.
#[derive(Clone, Debug)]
struct Slot<V> {
    key: u64,
    prev: u32,
    next: u32,
    value: V,
}

/// An LRU of at most `capacity` keys: a slab of slots linked in recency order (head = least
/// recent) and a map from key to slot.
#[derive(Clone, Debug)]
pub(super) struct Lru<V> {
    index: HashMap<u64, u32>,
    slots: Vec<Slot<V>>,
    head: u32,
    tail: u32,
    capacity: usize,
}

impl<V> Lru<V> {
    /// An empty LRU of at most `capacity` keys (at least 1).
    pub(super) fn new(capacity: usize) -> Lru<V> {
        Lru {
            index: HashMap::new(),
            slots: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity: capacity.max(1),
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let s = &self.slots[i as usize];
            (s.prev, s.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }

    fn push_tail(&mut self, i: u32) {
        {
            let s = &mut self.slots[i as usize];
            s.prev = self.tail;
            s.next = NIL;
        }
        match self.tail {
            NIL => self.head = i,
            t => self.slots[t as usize].next = i,
        }
        self.tail = i;
    }

    /// The value of `key`, which becomes the most recent; `None` when absent.
    pub(super) fn touch(&mut self, key: u64) -> Option<&mut V> {
        let i = *self.index.get(&key)?;
        if self.tail != i {
            self.unlink(i);
            self.push_tail(i);
        }
        Some(&mut self.slots[i as usize].value)
    }

    /// Inserts an absent `key` as the most recent; when full, the least recent key is evicted
    /// first (its slot reused) and returned with its value.
    pub(super) fn insert(&mut self, key: u64, value: V) -> Option<(u64, V)> {
        debug_assert!(!self.index.contains_key(&key));
        if self.slots.len() < self.capacity {
            let i = self.slots.len() as u32;
            self.slots.push(Slot {
                key,
                prev: NIL,
                next: NIL,
                value,
            });
            self.index.insert(key, i);
            self.push_tail(i);
            return None;
        }
        let i = self.head;
        self.unlink(i);
        let slot = &mut self.slots[i as usize];
        let old_key = std::mem::replace(&mut slot.key, key);
        let old_value = std::mem::replace(&mut slot.value, value);
        self.index.remove(&old_key);
        self.index.insert(key, i);
        self.push_tail(i);
        Some((old_key, old_value))
    }

    /// Keys held now.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Keys held when full.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Keys and values from least to most recent.
    #[cfg(test)]
    pub(super) fn entries(&self) -> Vec<(u64, &V)> {
        let mut out = Vec::with_capacity(self.slots.len());
        let mut i = self.head;
        while i != NIL {
            let slot = &self.slots[i as usize];
            out.push((slot.key, &slot.value));
            i = slot.next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_lru_evicts_the_least_recent_key_and_a_touch_makes_a_key_the_most_recent() {
        let mut lru = Lru::new(2);
        assert_eq!(lru.insert(1, 'a'), None);
        assert_eq!(lru.insert(2, 'b'), None);
        // Touching 1 leaves 2 the least recent: inserting 3 evicts it, with its value.
        assert_eq!(lru.touch(1).copied(), Some('a'));
        assert_eq!(lru.insert(3, 'c'), Some((2, 'b')));
        assert_eq!(lru.entries(), vec![(1, &'a'), (3, &'c')]);
        assert_eq!(lru.touch(2), None);
        // A touched value can change in place; the evicted slot was reused, not added.
        *lru.touch(1).unwrap() = 'z';
        assert_eq!(lru.entries(), vec![(3, &'c'), (1, &'z')]);
        assert_eq!((lru.len(), lru.capacity()), (2, 2));
        // A capacity of 0 holds one key.
        let mut one = Lru::new(0);
        assert_eq!(one.insert(7, ()), None);
        assert_eq!(one.insert(8, ()), Some((7, ())));
    }
}
