//! The `haltpoll` governor (drivers/cpuidle/governors/haltpoll.c), v5.7+, with the v6.9 change
//! that resets a poll window shrunk below its starting size to 0.
//!
//! For KVM guests driven by cpuidle-haltpoll (state 0 polls, state 1 halts to the host): it
//! adapts how long the guest polls before halting (`dev.poll_limit_ns`, which the polling state
//! then uses as its time limit), the way KVM adapts host-side halt polling.
//!
//! Algorithm:
//! 1. `select`: a latency limit of 0 polls with the tick kept. With no poll window yet, halt
//!    (state 1, the tick may stop). After a poll that ran out its window, halt; after a poll that
//!    work ended, or after a halt, poll again with the tick kept.
//! 2. `reflect` records the entered state; after a halt it adjusts the window by how long the
//!    halt lasted (`block_ns` = the residency):
//!    - longer than the window but within `guest_halt_poll_ns`: grow it by `grow`, at least to
//!      `grow_start`, at most to `guest_halt_poll_ns` (polling would have caught this wake-up);
//!    - longer than `guest_halt_poll_ns` (and shrinking allowed): divide it by `shrink`, to 0
//!      when `shrink` is 0 or the result falls below `grow_start` (polling is wasted here).
//!
//! Kernel arithmetic kept: the new window is computed in a 32-bit `unsigned int`.

use crate::cpuidle::{Device, Governor, Kernel, Platform};

/// The module parameters (`/sys/module/haltpoll/parameters/guest_halt_poll_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HaltpollParams {
    /// The longest poll window (ns).
    pub guest_halt_poll_ns: u32,
    /// Divisor applied when a halt outlasts the longest window (0 = reset to 0).
    pub shrink: u32,
    /// Multiplier applied when a halt would have been caught by a longer window.
    pub grow: u32,
    /// The window a first grow starts from (ns).
    pub grow_start: u32,
    pub allow_shrink: bool,
}

impl Default for HaltpollParams {
    /// The kernel's defaults.
    fn default() -> Self {
        HaltpollParams {
            guest_halt_poll_ns: 200_000,
            shrink: 2,
            grow: 2,
            grow_start: 50_000,
            allow_shrink: true,
        }
    }
}

pub struct Haltpoll {
    params: HaltpollParams,
}

impl Haltpoll {
    /// The governor's `enable`: no poll window yet.
    pub fn new(_platform: &Platform, dev: &mut Device) -> Self {
        Self::with_params(dev, HaltpollParams::default())
    }

    pub fn with_params(dev: &mut Device, params: HaltpollParams) -> Self {
        dev.poll_limit_ns = 0;
        Haltpoll { params }
    }

    fn adjust_poll_limit(&self, dev: &mut Device, block_ns: u64) {
        let p = &self.params;
        let max = u64::from(p.guest_halt_poll_ns);
        if block_ns > dev.poll_limit_ns && block_ns <= max {
            let val = (dev.poll_limit_ns as u32)
                .wrapping_mul(p.grow)
                .max(p.grow_start)
                .min(p.guest_halt_poll_ns);
            dev.poll_limit_ns = u64::from(val);
        } else if block_ns > max && p.allow_shrink {
            // A divisor of 0 means "reset"; a window shrunk below its start is reset too.
            let val = match (dev.poll_limit_ns as u32).checked_div(p.shrink) {
                Some(v) if v >= p.grow_start => v,
                _ => 0,
            };
            dev.poll_limit_ns = u64::from(val);
        }
    }
}

impl Governor for Haltpoll {
    fn name(&self) -> &'static str {
        "haltpoll"
    }

    fn select(
        &mut self,
        _platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        if kernel.latency_req() == 0 {
            *stop_tick = false;
            return 0;
        }
        if dev.poll_limit_ns == 0 {
            return 1;
        }
        if dev.last_state_idx == 0 && dev.poll_time_limit {
            return 1;
        }
        *stop_tick = false;
        0
    }

    fn reflect(&mut self, _: &Platform, dev: &mut Device, _: &mut Kernel, index: usize) {
        dev.last_state_idx = index as i32;
        if index != 0 {
            self.adjust_poll_limit(dev, dev.last_residency_ns);
        }
    }
}
