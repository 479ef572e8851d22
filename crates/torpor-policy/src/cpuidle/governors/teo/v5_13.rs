//! `teo@5.13`: teo with bins and recent intercepts, mainline v5.13 .. v6.2 (spec-cpu.md §3.2).
//!
//! The sleep length comes first here: the candidate is the deepest enabled state whose target
//! residency fits before the next timer, and history only argues for something shallower.
//!
//! Update (at the start of `select`, see the parent module): decay, then one pulse to the
//! sleep length's bin (`hits`) or the measured duration's bin (`intercepts`, also remembered
//! in the ring of the last `NR_RECENT` wake-ups).
//!
//! Selection:
//! 1. Fetch the sleep length (it is also the duration that decides the tick). With one state
//!    there is no choice; if state 0 is enabled and state 1 does not fit before the timer,
//!    take state 0 at once.
//! 2. Walk states 1.. accumulating, over the bins below each state, the sums of intercepts,
//!    hits and recent intercepts. The candidate is the deepest enabled state whose target
//!    residency fits the sleep length (else the first enabled state); the latency limit is
//!    tracked only among those fitting states, defaulting to state 0.
//! 3. If the candidate is the first enabled state, take it. Otherwise look for a shallower
//!    state when the intercepts below the candidate outweigh everything at and above it
//!    (`2 * intercepts_below > total - hits_below`) or when most of the last nine wake-ups
//!    were intercepts below it (`recent_below > NR_RECENT / 2`).
//! 4. That search walks down from the candidate, summing intercepts and recent intercepts,
//!    and stops at the first state holding more than half of each triggering sum: it is
//!    chosen (with the middle of its bin as the expected duration) if enabled and, with the
//!    tick already stopped, its bin's middle is at least a tick; otherwise the last suitable
//!    state seen on the way down is chosen.
//! 5. Clamp to the latency limit's state.
//! 6. Keep the tick when the choice polls or the expected duration is under a tick (unless
//!    the tick is already stopped); then, if the choice does not fit before the next tick,
//!    step down to a state that does.
//!
//! ASSUMPTION (what "v5.13" means): the v5.13 release itself walked the alternative search
//! only down to the first enabled state and gave up at the first state failing the tick
//! test; "cpuidle: teo: Fix alternative idle state lookup" (c2ec772b8740, v5.14-rc5, tagged
//! as a fix of the v5.13 rework) made the search §3.2 describes, which is what every release
//! from v5.14 to v6.2 runs. This variant follows §3.2, i.e. the fixed search.

use super::common_v5_13::{find_shallower_state, TeoCpu, PULSE};
use super::v6_3::UtilAwareness;
use crate::cpuidle::{Device, Governor, Kernel, Platform};

/// `teo@5.13`: `struct teo_cpu` of v5.13 .. v6.2.
pub struct Teo513 {
    cpu: TeoCpu,
}

impl Teo513 {
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Teo513 { cpu: TeoCpu::new() }
    }
}

impl Governor for Teo513 {
    fn name(&self) -> &'static str {
        "teo@5.13"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        select(&mut self.cpu, None, platform, dev, kernel, stop_tick)
    }

    fn reflect(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        index: usize,
    ) {
        self.cpu.reflect(platform, dev, kernel, index);
    }
}

/// `teo_update` of v5.13 .. v6.5: one pulse, to a hit or to an intercept.
pub(super) fn update(cpu: &mut TeoCpu, platform: &Platform, dev: &Device) {
    let c = cpu.classify(platform, dev);
    let slot = cpu.take_recent_slot();
    cpu.record(slot, c.idx_timer, c.idx_duration);
    cpu.total = cpu.total.wrapping_add(PULSE);
}

/// `teo_select` of v5.13 .. v6.2, and of v6.3 .. v6.5 when `util` is given: v6.3 inserted its
/// util-awareness into this very function at two points, marked below.
pub(super) fn select(
    cpu: &mut TeoCpu,
    util: Option<&mut UtilAwareness>,
    platform: &Platform,
    dev: &mut Device,
    kernel: &mut Kernel,
    stop_tick: &mut bool,
) -> usize {
    let latency_req = kernel.latency_req();
    if dev.last_state_idx >= 0 {
        update(cpu, platform, dev);
        dev.last_state_idx = -1;
    }
    cpu.start_span(kernel);
    let (sleep_length_ns, delta_tick) = kernel.get_sleep_length();
    cpu.sleep_length_ns = sleep_length_ns;

    let states = &platform.states;
    let n = states.len();
    let tick_ns = platform.tick_ns;
    let tick_stopped = kernel.tick_stopped();
    // `teo_middle_of_bin` (s64).
    let middle_of_bin = |i: usize| {
        states[i]
            .target_residency_ns
            .wrapping_add(states[i + 1].target_residency_ns)
            / 2
    };

    let mut duration_ns = sleep_length_ns;
    let mut idx0 = 0;
    let idx = 'end: {
        if n < 2 {
            break 'end 0;
        }
        let mut first = None;
        if !dev.is_disabled(0) {
            first = Some(0);
            if states[1].target_residency_ns > duration_ns {
                break 'end 0;
            }
        }

        // v6.3: a utilized CPU with two states takes the first enabled non-polling one.
        let utilized = util.is_some_and(|u| u.check(kernel));
        if n < 3 && utilized {
            if let Some(i) = (0..n).find(|&i| !dev.is_disabled(i) && !states[i].polling) {
                break 'end i;
            }
        }

        let c = cpu.find_candidate(platform, dev, latency_req, first, |s| {
            s.target_residency_ns <= duration_ns
        });
        idx0 = c.idx0;
        let Some(candidate) = c.idx else {
            break 'end 0;
        };
        if candidate == idx0 {
            break 'end candidate;
        }

        // The alternative's expected duration is the middle of its bin; with the tick
        // stopped, a bin whose middle is under a tick is not worth it (`teo_time_ok`, the
        // s64 span compared with TICK_NSEC as u64).
        let time_ok = |i: usize| !tick_stopped || middle_of_bin(i) as u64 >= tick_ns as u64;
        let mut idx = cpu.shallower_alternative(dev, candidate, &c.below, time_ok);
        if idx != candidate {
            duration_ns = middle_of_bin(idx);
        }

        if idx > c.constraint_idx {
            idx = c.constraint_idx;
        }
        // v6.3: a utilized CPU goes one enabled non-polling state shallower; the expected
        // duration is left as it was, so the tick decision does not see the step down.
        if utilized {
            idx = find_shallower_state(platform, dev, idx, duration_ns, true);
        }
        idx
    };

    let mut idx = idx;
    if (states[idx].polling || duration_ns < tick_ns) && !tick_stopped {
        *stop_tick = false;
        if idx > idx0 && states[idx].target_residency_ns > delta_tick {
            idx = find_shallower_state(platform, dev, idx, delta_tick, false);
        }
    }
    idx
}
