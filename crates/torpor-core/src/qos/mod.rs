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

pub mod cpu_latency;
pub mod freq;
pub mod latency_tolerance;

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
    /// (holder, value) in the order they were added; few enough that a scan beats a tree.
    requests: Vec<(Holder, i64)>,
    value: i64,
}

impl Constraints {
    pub fn new(aggregate: Aggregate, default: i64) -> Self {
        Constraints {
            aggregate,
            default,
            requests: Vec::new(),
            value: default,
        }
    }

    /// The effective constraint.
    pub fn value(&self) -> i64 {
        self.value
    }

    /// `holder`'s request, if it holds one.
    pub fn request(&self, holder: Holder) -> Option<i64> {
        self.requests
            .iter()
            .find(|(h, _)| *h == holder)
            .map(|&(_, v)| v)
    }

    /// Adds or updates `holder`'s request; true when the aggregate changed.
    pub fn set(&mut self, holder: Holder, value: i64) -> bool {
        match self.requests.iter_mut().find(|(h, _)| *h == holder) {
            Some(r) => r.1 = value,
            None => self.requests.push((holder, value)),
        }
        self.recompute()
    }

    /// Removes `holder`'s request (if any); true when the aggregate changed.
    pub fn remove(&mut self, holder: Holder) -> bool {
        self.requests.retain(|(h, _)| *h != holder);
        self.recompute()
    }

    fn recompute(&mut self) -> bool {
        let values = self.requests.iter().map(|&(_, v)| v);
        let new = match self.aggregate {
            Aggregate::Min => values.min(),
            Aggregate::Max => values.max(),
        }
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
