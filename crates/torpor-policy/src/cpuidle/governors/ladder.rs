//! The `ladder` governor (drivers/cpuidle/governors/ladder.c), v5.7+ (nanosecond form).
//!
//! Made for systems with a periodic tick: the CPU climbs one state deeper after a run of idle
//! periods long enough for the current state, and steps down after one that was too short. It
//! never touches `stop_tick` (the kernel names that argument `dummy`), so on a NO_HZ system the
//! idle loop always tries to stop the tick.
//!
//! The current rung is `dev.last_state_idx`. With a polling state 0 the ladder starts at 1
//! (`first`). Per state: a promotion threshold (time > exit latency of that state, 4 times in a
//! row) and a demotion threshold (time < its exit latency, once).
//!
//! Algorithm of one `select`:
//! 1. A latency limit of 0 sends the CPU to state 0 (and clears the counters of the old rung).
//! 2. `r` = the last residency minus the current rung's exit latency (s64; may be negative).
//! 3. Promotion: if a deeper state exists, is enabled, meets the latency limit and `r` beats
//!    the rung's promotion time, count one promotion (and reset the demotion count); at the
//!    rung's promotion count, move one deeper.
//! 4. If the rung itself is disabled or breaks the limit, walk down to the deepest state above
//!    `first` that meets the limit (or `first`) and move there.
//! 5. Demotion: if `r` falls below the rung's demotion time, count one demotion (and reset the
//!    promotion count); at the rung's demotion count, move one shallower.
//! 6. Otherwise stay.
//!
//! `reflect` moves the rung to the entered state unless it is state 0.
//!
//! Kernel arithmetic kept: the thresholds are u64, so `r` is compared as a u64 — a negative `r`
//! (after a rejected entry, `last_residency_ns` = 0) counts toward promotion and never toward
//! demotion. States below `first` keep zeroed thresholds (the kernel's per-CPU data starts zeroed
//! and `enable` skips them), which a latency limit of 0 can make the current rung.

use crate::cpuidle::{Device, Governor, Kernel, Platform};

/// Residencies above the promotion time needed in a row to move one state deeper.
const PROMOTION_COUNT: u32 = 4;
/// Residencies below the demotion time needed to move one state shallower.
const DEMOTION_COUNT: u32 = 1;

#[derive(Clone, Copy, Default)]
struct Rung {
    promotion_count: u32,
    demotion_count: u32,
    promotion_threshold: u32,
    demotion_threshold: u32,
    promotion_time_ns: u64,
    demotion_time_ns: u64,
}

pub struct Ladder {
    rungs: Vec<Rung>,
    first: usize,
}

impl Ladder {
    /// The governor's `enable`.
    pub fn new(platform: &Platform, dev: &mut Device) -> Self {
        let n = platform.state_count();
        let first = usize::from(platform.states[0].polling);
        let mut rungs = vec![Rung::default(); n];
        for (i, rung) in rungs.iter_mut().enumerate().skip(first) {
            let exit = platform.states[i].exit_latency_ns as u64;
            rung.promotion_threshold = PROMOTION_COUNT;
            rung.demotion_threshold = DEMOTION_COUNT;
            if i + 1 < n {
                rung.promotion_time_ns = exit;
            }
            if i > first {
                rung.demotion_time_ns = exit;
            }
        }
        dev.last_state_idx = first as i32;
        Ladder { rungs, first }
    }

    /// `ladder_do_selection`: forget the old rung's counts, stand on the new one.
    fn step_to(&mut self, dev: &mut Device, old: usize, new: usize) -> usize {
        self.rungs[old].promotion_count = 0;
        self.rungs[old].demotion_count = 0;
        dev.last_state_idx = new as i32;
        new
    }
}

impl Governor for Ladder {
    fn name(&self) -> &'static str {
        "ladder"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        _stop_tick: &mut bool,
    ) -> usize {
        let last = dev.last_state_idx as usize;
        let latency_req = kernel.latency_req();
        if latency_req == 0 {
            return self.step_to(dev, last, 0);
        }
        let states = &platform.states;
        let exit = |i: usize| states[i].exit_latency_ns;
        // u64 minus s64 in the kernel, stored in an s64: the same bits either way.
        let r = dev.last_residency_ns.wrapping_sub(exit(last) as u64) as i64;
        let n = platform.state_count();

        if last + 1 < n
            && !dev.is_disabled(last + 1)
            && (r as u64) > self.rungs[last].promotion_time_ns
            && exit(last + 1) <= latency_req
        {
            let rung = &mut self.rungs[last];
            rung.promotion_count += 1;
            rung.demotion_count = 0;
            if rung.promotion_count >= rung.promotion_threshold {
                return self.step_to(dev, last, last + 1);
            }
        }

        if last > self.first && (dev.is_disabled(last) || exit(last) > latency_req) {
            let mut i = last - 1;
            while i > self.first && exit(i) > latency_req {
                i -= 1;
            }
            return self.step_to(dev, last, i);
        }

        if last > self.first && (r as u64) < self.rungs[last].demotion_time_ns {
            let rung = &mut self.rungs[last];
            rung.demotion_count += 1;
            rung.promotion_count = 0;
            if rung.demotion_count >= rung.demotion_threshold {
                return self.step_to(dev, last, last - 1);
            }
        }
        last
    }

    fn reflect(&mut self, _: &Platform, dev: &mut Device, _: &mut Kernel, index: usize) {
        if index > 0 {
            dev.last_state_idx = index as i32;
        }
    }
}
