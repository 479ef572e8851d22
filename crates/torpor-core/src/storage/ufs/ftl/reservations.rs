//! Reservations instead of events: how the NAND array's dies and channels ([`NandArray`]), and
//! the UniPro link after them (`service.rs`), answer an operation's completion time the moment
//! it is asked, as `UfsQueue::accept` does, without an event per stage.
//!
//! Every server keeps the intervals it has promised, sorted and disjoint. A new operation takes
//! the earliest gap long enough for it at or after its ready time: a later call never moves an
//! earlier reservation. A device dispatching in real time would let a later read onto an idle
//! die and push a reserved data read back a little; the reservation schedule instead makes that
//! later read wait when the gap is too short. It is exact for one read at a time, and slightly
//! pessimistic under load with misses (a miss reserves its data read in the future): within the
//! bracket the calibration test checks (`calibration.rs`).
//!
//! [`NandArray`]: super::NandArray

/// Reserved busy intervals `[start, end)` of one server (a die, a channel, the link), sorted
/// and disjoint.
pub(in crate::storage::ufs) type Busy = Vec<(u64, u64)>;

/// The earliest `t ≥ from` with `[t, t + len)` free in `busy`.
pub(in crate::storage::ufs) fn earliest_gap(busy: &Busy, from: u64, len: u64) -> u64 {
    let mut t = from;
    // Disjoint intervals sorted by start are sorted by end too: skip those over by `from`.
    let first = busy.partition_point(|&(_, e)| e <= t);
    for &(s, e) in &busy[first..] {
        if e <= t {
            continue;
        }
        if s >= t + len {
            break;
        }
        t = e;
    }
    t
}

/// The end of the first interval of `busy` overlapping `[a, b)`, if any.
pub(super) fn first_overlap_end(busy: &Busy, a: u64, b: u64) -> Option<u64> {
    busy.iter().find(|&&(s, e)| s < b && e > a).map(|&(_, e)| e)
}

/// Reserves `[s, e)`, which the caller found free.
pub(in crate::storage::ufs) fn reserve(busy: &mut Busy, s: u64, e: u64) {
    let at = busy.partition_point(|&(bs, _)| bs < s);
    busy.insert(at, (s, e));
}

/// Drops the intervals that ended by `now`: only reservations still ahead are kept, so memory
/// is bounded by the operations in flight.
pub(in crate::storage::ufs) fn prune(busy: &mut Busy, now: u64) {
    // Sorted by end as by start (disjoint): the ended ones are a prefix.
    let ended = busy.partition_point(|&(_, e)| e <= now);
    busy.drain(..ended);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_takes_the_first_gap_it_fits_and_pruning_keeps_what_is_ahead() {
        let mut busy: Busy = Vec::new();
        reserve(&mut busy, 30, 40);
        reserve(&mut busy, 10, 20);
        assert_eq!(busy, vec![(10, 20), (30, 40)]);
        // [0, 10) fits before the first; 11 long does not, nor does it fit in [20, 30).
        assert_eq!(earliest_gap(&busy, 0, 10), 0);
        assert_eq!(earliest_gap(&busy, 0, 11), 40);
        // From inside a reservation: after its end, where 5 fits before 30.
        assert_eq!(earliest_gap(&busy, 15, 5), 20);
        assert_eq!(first_overlap_end(&busy, 15, 35), Some(20));
        assert_eq!(first_overlap_end(&busy, 20, 30), None);
        // An interval that ends at `now` is over; one under way is kept.
        prune(&mut busy, 20);
        assert_eq!(busy, vec![(30, 40)]);
        prune(&mut busy, 35);
        assert_eq!(busy, vec![(30, 40)]);
    }
}
