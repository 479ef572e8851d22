//! The oracle: not a kernel governor, the yardstick the others are measured against.
//!
//! It knows how long the coming idle period will last (`Kernel::oracle_residency_ns`), so its
//! choice is the best any governor could make with the same state table and latency limit.
//!
//! Algorithm:
//! 1. Walk the enabled states shallow to deep; stop at the first whose exit latency exceeds
//!    the latency limit.
//! 2. Keep the deepest walked state whose target residency fits in the coming residency; if
//!    none fits, the first enabled state (state 0 when every state is disabled, as the kernel's
//!    governors fall back).
//! 3. Stop the tick unless the chosen state polls or the idle period ends before the next tick
//!    (then the tick costs nothing: it would not fire).
//!
//! It learns nothing, so `reflect` is empty.
//!
//! In an idle-decide sequence it is told the step's residency. In a closed-loop run it knows
//! every timer and interrupt already set for a task of its CPU, not a wake-up by another task
//! (that depends on the other CPU's own future) nor the tick it keeps: there it can be wrong.

use crate::cpuidle::{Device, Governor, Kernel, Platform};

pub struct Oracle;

impl Oracle {
    pub fn new(_platform: &Platform, _dev: &mut Device) -> Self {
        Oracle
    }
}

impl Governor for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        let residency = kernel.oracle_residency_ns;
        let limit = kernel.latency_req();
        let mut chosen: Option<usize> = None;
        for (i, s) in platform.states.iter().enumerate() {
            if dev.is_disabled(i) {
                continue;
            }
            if s.exit_latency_ns > limit {
                break;
            }
            if chosen.is_none() || s.target_residency_ns <= residency {
                chosen = Some(i);
            }
        }
        let idx = chosen.unwrap_or(0);
        if platform.states[idx].polling || residency <= kernel.delta_tick_ns {
            *stop_tick = false;
        }
        idx
    }

    fn reflect(&mut self, _: &Platform, _: &mut Device, _: &mut Kernel, _: usize) {}
}
