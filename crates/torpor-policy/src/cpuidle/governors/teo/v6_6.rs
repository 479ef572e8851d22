//! `teo@6.6`: the 6.6 LTS teo, util-aware, mainline v6.6 .. v6.10 (spec-cpu.md §3.4).
//!
//! v6.6 turned the selection around: the candidate is the deepest enabled state, history may
//! lower it, and the sleep length (an expensive query) is fetched only afterwards, and not at
//! all when the choice is state 0 or a state so shallow that a timer could not change it.
//! Without a fetch the stored sleep length stays `KTIME_MAX`, so the next update treats the
//! timer as infinitely far. It also adds a hits-only bin beyond the deepest state for
//! platforms whose deepest state is shorter than a tick: "the CPU slept past a tick".
//!
//! Update:
//! 1. As v5.13 (decay, bins, ring slot advanced and its old intercept forgotten).
//! 2. If the deepest state's target residency is under a tick: decay `tick_hits` into `total`;
//!    if the sleep length reached a tick, the timer's bin is the virtual one past the deepest;
//!    if the measured duration reached a tick too, the pulse goes to `tick_hits` and the update
//!    ends there, leaving the ring slot holding the intercept bin it held nine updates ago.
//!    That slot is forgotten again nine updates later and `recent` (unsigned) can wrap to
//!    0xFFFFFFFF; this model keeps the quirk.
//! 3. Otherwise a hit or an intercept as in v5.13.
//!
//! Selection:
//! 1. Sleep length "unknown" (`KTIME_MAX`), `delta_tick` = half a tick. One state: take it.
//! 2. Read utilization. A utilized CPU with two states takes state 0 if it is enabled, does
//!    not poll and suits a stopped tick, or if state 1 is disabled (tick kept); otherwise
//!    state 1 with its own target residency as the expected duration.
//! 3. The candidate is the deepest enabled state (no timer yet); the latency limit state and
//!    the sums below the candidate are found on the way. No state enabled: state 0, tick kept.
//!    A single enabled state: take it, its target residency deciding the tick.
//! 4. The alternative search of v5.13 (intercepts and recent intercepts), with the tick test
//!    on the state's own target residency rather than its bin's middle.
//! 5. Clamp to the latency limit's state; a utilized CPU steps to the next enabled non-polling
//!    state below if that one suits a stopped tick.
//! 6. State 0, or a state under `RESIDENCY_THRESHOLD_NS` when state 0 polls: done, tick kept,
//!    no sleep length fetched.
//! 7. Fetch the sleep length; if the choice does not fit before the timer, step down to one
//!    that does (if it suits a stopped tick).
//! 8. A state shorter than a tick, while intercepts of all bins exceed 5/8 of `total`: expect
//!    half a tick, i.e. keep the tick.
//! 9. Stop the tick if the choice does not poll and the expected duration is at least a tick
//!    (or the tick is already stopped). Otherwise keep it, stepping down to a state that fits
//!    before the next tick (`delta_tick`, half a tick when it was not fetched).

use super::common_v5_13::{find_shallower_state, TeoCpu, DECAY_SHIFT, PULSE};
use super::v6_3::UTIL_THRESHOLD_SHIFT;
use crate::cpuidle::{Device, Governor, Kernel, Platform, KTIME_MAX};

/// Below this target residency (with a polling state 0) the timer is not worth asking about
/// (`gov.h`, 15 us).
const RESIDENCY_THRESHOLD_NS: i64 = 15_000;

/// `teo@6.6`: `struct teo_cpu` of v6.6 .. v6.10.
pub struct Teo66 {
    pub(super) cpu: TeoCpu,
    /// unsigned int: the "slept past a tick" bin, used when the deepest state is under a tick.
    pub(super) tick_hits: u32,
    /// unsigned long: `arch_scale_cpu_capacity() >> UTIL_THRESHOLD_SHIFT`, set at enable.
    util_threshold: u64,
}

impl Teo66 {
    pub fn new(platform: &Platform, _dev: &mut Device) -> Self {
        Teo66 {
            cpu: TeoCpu::new(),
            tick_hits: 0,
            util_threshold: platform.capacity >> UTIL_THRESHOLD_SHIFT,
        }
    }

    /// `teo_update` of v6.6 .. v6.10.
    pub(super) fn update(&mut self, platform: &Platform, dev: &Device) {
        let cpu = &mut self.cpu;
        let c = cpu.classify(platform, dev);
        let mut idx_timer = c.idx_timer;
        let slot = cpu.take_recent_slot();
        let tick_ns = platform.tick_ns;
        let deepest = &platform.states[platform.states.len() - 1];
        if deepest.target_residency_ns < tick_ns {
            self.tick_hits -= self.tick_hits >> DECAY_SHIFT;
            cpu.total = cpu.total.wrapping_add(self.tick_hits);
            if tick_ns <= cpu.sleep_length_ns {
                idx_timer = platform.states.len();
                if tick_ns as u64 <= c.measured_ns {
                    // The ring slot is deliberately not rewritten here (the kernel's quirk).
                    self.tick_hits = self.tick_hits.wrapping_add(PULSE);
                    cpu.total = cpu.total.wrapping_add(PULSE);
                    return;
                }
            }
        }
        cpu.record(slot, idx_timer, c.idx_duration);
        cpu.total = cpu.total.wrapping_add(PULSE);
    }
}

impl Governor for Teo66 {
    fn name(&self) -> &'static str {
        "teo@6.6"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        let latency_req = kernel.latency_req();
        if dev.last_state_idx >= 0 {
            self.update(platform, dev);
            dev.last_state_idx = -1;
        }
        let cpu = &mut self.cpu;
        cpu.start_span(kernel);
        cpu.sleep_length_ns = KTIME_MAX;

        let states = &platform.states;
        let n = states.len();
        let tick_ns = platform.tick_ns;
        let tick_stopped = kernel.tick_stopped();
        // `teo_state_ok`: with the tick stopped, only states of at least a tick are worth it.
        let state_ok = |i: usize| !tick_stopped || states[i].target_residency_ns >= tick_ns;
        let mut delta_tick = tick_ns / 2;
        let mut duration_ns;
        let mut idx0 = 0;

        // `break 'out_tick` keeps the tick at once; the value of the inner `'end` block goes
        // through the tick decision (the kernel's `end` label) with `duration_ns` set.
        let idx = 'out_tick: {
            if n < 2 {
                break 'out_tick 0;
            }
            let first = (!dev.is_disabled(0)).then_some(0);

            let cpu_utilized = kernel.cpu_util() > self.util_threshold;
            let mut idx = 'end: {
                if n < 3 && cpu_utilized {
                    if (first == Some(0) && !states[0].polling && state_ok(0)) || dev.is_disabled(1)
                    {
                        break 'out_tick 0;
                    }
                    duration_ns = states[1].target_residency_ns;
                    break 'end 1;
                }

                let c = cpu.find_candidate(platform, dev, latency_req, first, |_| true);
                idx0 = c.idx0;
                let Some(candidate) = c.idx else {
                    break 'out_tick 0;
                };
                if candidate == idx0 {
                    duration_ns = states[candidate].target_residency_ns;
                    break 'end candidate;
                }

                let tick_intercept_sum = cpu.state_bins[..n]
                    .iter()
                    .fold(0u32, |sum, bin| sum.wrapping_add(bin.intercepts));

                let mut idx = cpu.shallower_alternative(dev, candidate, &c.below, state_ok);
                if idx > c.constraint_idx {
                    idx = c.constraint_idx;
                }
                if cpu_utilized {
                    let i = find_shallower_state(platform, dev, idx, KTIME_MAX, true);
                    if state_ok(i) {
                        idx = i;
                    }
                }
                if idx == 0 {
                    break 'out_tick 0;
                }
                if states[0].polling && states[idx].target_residency_ns < RESIDENCY_THRESHOLD_NS {
                    break 'out_tick idx;
                }

                let (sleep_length_ns, delta_next) = kernel.get_sleep_length();
                duration_ns = sleep_length_ns;
                delta_tick = delta_next;
                cpu.sleep_length_ns = sleep_length_ns;
                if states[idx].target_residency_ns > duration_ns {
                    let i = find_shallower_state(platform, dev, idx, duration_ns, false);
                    if state_ok(i) {
                        idx = i;
                    }
                }
                if states[idx].target_residency_ns < tick_ns
                    && tick_intercept_sum > (cpu.total / 2).wrapping_add(cpu.total / 8)
                {
                    duration_ns = tick_ns / 2;
                }
                idx
            };

            if (!states[idx].polling && duration_ns >= tick_ns) || tick_stopped {
                return idx;
            }
            if idx > idx0 && states[idx].target_residency_ns > delta_tick {
                idx = find_shallower_state(platform, dev, idx, delta_tick, false);
            }
            idx
        };
        *stop_tick = false;
        idx
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
