//! PM QoS: requests from many holders aggregated into one effective constraint.
//!
//! Models `struct pm_qos_constraints` of kernel/power/qos.c (v5.4+): each holder keeps at most
//! one request in a list; the list's value is the minimum (`Aggregate::Min`, latency limits,
//! maximum-frequency caps) or the maximum (`Aggregate::Max`, minimum-frequency floors) of its
//! requests, or the list's default when it holds none. Adding, updating or removing a request
//! reports whether the aggregate changed, as `pm_qos_update_target` returns 1, because the
//! kernel only notifies (and re-evaluates devfreq, kicks idle CPUs) on a change.
//!
//! Algorithm of every update:
//! 1. Apply the action to the holder's request (add, change the value, remove).
//! 2. Recompute the aggregate over the remaining requests (the default when none is left).
//! 3. Report whether it differs from the previous one.
//!
//! The kernel keeps the requests in a priority-sorted list (`plist`), so the aggregate is its
//! first or last node; here they are kept sorted by value in a counted map, which gives the
//! same aggregate in logarithmic time however many holders there are (a scenario may hold
//! 65,536).

pub mod cpu_latency;
pub mod freq;
pub mod latency_tolerance;

use std::collections::BTreeMap;

/// How requests combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// The smallest request wins (`PM_QOS_MIN`).
    Min,
    /// The largest request wins (`PM_QOS_MAX`).
    Max,
}

/// Who holds a request: a stable identity chosen by the caller (a task, a driver, a sysfs
/// file).
pub type Holder = u32;

/// One constraint list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraints {
    aggregate: Aggregate,
    default: i64,
    /// Each holder's request.
    requests: BTreeMap<Holder, i64>,
    /// How many requests hold each value, in value order (the kernel's sorted list).
    sorted: BTreeMap<i64, u32>,
    value: i64,
}

impl Constraints {
    pub fn new(aggregate: Aggregate, default: i64) -> Self {
        Constraints {
            aggregate,
            default,
            requests: BTreeMap::new(),
            sorted: BTreeMap::new(),
            value: default,
        }
    }

    /// The effective constraint.
    pub fn value(&self) -> i64 {
        self.value
    }

    /// `holder`'s request, if it holds one.
    pub fn request(&self, holder: Holder) -> Option<i64> {
        self.requests.get(&holder).copied()
    }

    /// Adds or updates `holder`'s request; true when the aggregate changed.
    pub fn set(&mut self, holder: Holder, value: i64) -> bool {
        if let Some(old) = self.requests.insert(holder, value) {
            self.unsort(old);
        }
        *self.sorted.entry(value).or_insert(0) += 1;
        self.recompute()
    }

    /// Removes `holder`'s request (if any); true when the aggregate changed.
    pub fn remove(&mut self, holder: Holder) -> bool {
        if let Some(old) = self.requests.remove(&holder) {
            self.unsort(old);
        }
        self.recompute()
    }

    /// Takes one request of `value` out of the sorted counts.
    fn unsort(&mut self, value: i64) {
        if let Some(n) = self.sorted.get_mut(&value) {
            *n -= 1;
            if *n == 0 {
                self.sorted.remove(&value);
            }
        }
    }

    fn recompute(&mut self) -> bool {
        let mut values = self.sorted.keys();
        let new = match self.aggregate {
            Aggregate::Min => values.next(),
            Aggregate::Max => values.next_back(),
        }
        .copied()
        .unwrap_or(self.default);
        let changed = new != self.value;
        self.value = new;
        changed
    }
}

/// Every order in which three holders can drop their requests, for the lists' tests.
#[cfg(test)]
pub(crate) const REMOVAL_ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_aggregate_and_removal_in_any_order_returns_to_the_default() {
        // Three holders on a MIN list with default 2e9 (the CPU latency list's, in us).
        let holders = [(1, 280), (2, 100), (3, 500)];
        for order in REMOVAL_ORDERS {
            let mut c = Constraints::new(Aggregate::Min, 2_000_000_000);
            for &(h, v) in &holders {
                c.set(h, v);
            }
            assert_eq!(c.value(), 100);
            // Remaining after each removal: the minimum of what is left, by hand.
            let mut left: Vec<(u32, i64)> = holders.to_vec();
            for &i in &order {
                let (h, _) = holders[i];
                let before = c.value();
                left.retain(|&(x, _)| x != h);
                let want = left.iter().map(|&(_, v)| v).min().unwrap_or(2_000_000_000);
                assert_eq!(c.remove(h), want != before, "order {order:?}");
                assert_eq!(c.value(), want);
            }
        }
    }

    #[test]
    fn an_update_reports_a_change_only_when_the_aggregate_moves() {
        let mut c = Constraints::new(Aggregate::Max, 0);
        assert!(c.set(7, 300_000));
        assert!(!c.set(8, 200_000)); // below the current maximum
        assert!(!c.set(7, 300_000)); // the same value again
        assert!(c.set(7, 100_000)); // 7 drops: 8's 200_000 now leads
        assert_eq!(c.value(), 200_000);
        assert!(!c.remove(99)); // no such holder
    }
}
