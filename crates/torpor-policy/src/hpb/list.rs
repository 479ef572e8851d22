//! The driver's intrusive `list_head` membership, over indices: each region or sub-region is on a
//! given list at most once, can be found on it, added at either end, removed, and moved to the
//! tail in O(1), as `list_add`, `list_add_tail`, `list_del_init` and `list_move_tail` do. The
//! LRU, the to-activate list and the to-inactivate list are three of these.

const NONE: u32 = u32::MAX;

/// A doubly linked list threaded through per-index `prev`/`next` slots; an index not on the list
/// has both slots empty and is not the head (the `list_empty(&node)` test of the driver).
#[derive(Clone, Debug)]
pub(crate) struct IndexList {
    prev: Vec<u32>,
    next: Vec<u32>,
    on: Vec<bool>,
    head: u32,
    tail: u32,
    len: usize,
}

impl IndexList {
    /// An empty list able to hold the indices `0..capacity`.
    pub(crate) fn new(capacity: usize) -> Self {
        IndexList {
            prev: vec![NONE; capacity],
            next: vec![NONE; capacity],
            on: vec![false; capacity],
            head: NONE,
            tail: NONE,
            len: 0,
        }
    }

    pub(crate) fn contains(&self, i: u32) -> bool {
        self.on[i as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn front(&self) -> Option<u32> {
        (self.head != NONE).then_some(self.head)
    }

    /// `list_add_tail`; the caller checks membership first, as the driver does.
    pub(crate) fn push_back(&mut self, i: u32) {
        debug_assert!(!self.contains(i));
        let u = i as usize;
        self.prev[u] = self.tail;
        self.next[u] = NONE;
        if self.tail == NONE {
            self.head = i;
        } else {
            self.next[self.tail as usize] = i;
        }
        self.tail = i;
        self.on[u] = true;
        self.len += 1;
    }

    /// `list_add` (at the head).
    pub(crate) fn push_front(&mut self, i: u32) {
        debug_assert!(!self.contains(i));
        let u = i as usize;
        self.next[u] = self.head;
        self.prev[u] = NONE;
        if self.head == NONE {
            self.tail = i;
        } else {
            self.prev[self.head as usize] = i;
        }
        self.head = i;
        self.on[u] = true;
        self.len += 1;
    }

    /// `list_del_init`: a no-op for an index not on the list.
    pub(crate) fn remove(&mut self, i: u32) {
        if !self.contains(i) {
            return;
        }
        let u = i as usize;
        let (p, n) = (self.prev[u], self.next[u]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[u] = NONE;
        self.next[u] = NONE;
        self.on[u] = false;
        self.len -= 1;
    }

    pub(crate) fn pop_front(&mut self) -> Option<u32> {
        let i = self.front()?;
        self.remove(i);
        Some(i)
    }

    /// `list_move_tail`.
    pub(crate) fn move_to_back(&mut self, i: u32) {
        self.remove(i);
        self.push_back(i);
    }

    /// The members from head to tail.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.front(), move |&i| {
            let n = self.next[i as usize];
            (n != NONE).then_some(n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(l: &IndexList) -> Vec<u32> {
        l.iter().collect()
    }

    #[test]
    fn add_remove_move_keep_order_and_membership() {
        let mut l = IndexList::new(5);
        l.push_back(1);
        l.push_back(3);
        l.push_front(4);
        assert_eq!(items(&l), [4, 1, 3]);
        l.move_to_back(4);
        assert_eq!(items(&l), [1, 3, 4]);
        l.remove(3);
        l.push_front(3);
        assert_eq!(items(&l), [3, 1, 4]);
        l.remove(1);
        l.remove(1);
        assert_eq!(items(&l), [3, 4]);
        assert!(!l.contains(1) && l.contains(3));
        assert_eq!(l.pop_front(), Some(3));
        assert_eq!(l.pop_front(), Some(4));
        assert_eq!(l.pop_front(), None);
        assert!(l.is_empty());
        assert_eq!(l.len(), 0);
    }
}
