//! `teo@6.3` (alias `teo-util`): teo with util-awareness as merged, mainline v6.3 .. v6.5
//! (spec-cpu.md §3.3; Kajetan Puchalski's `9ce0f7c4bc64` and its companion "Optionally skip
//! polling states in teo_find_shallower_state()").
//!
//! The idea: a CPU that still carries noticeable utilization when it goes idle is likely to be
//! woken for more work soon, so latency should win over depth. "Noticeable" is a fixed
//! fraction of the CPU's capacity, `capacity >> UTIL_THRESHOLD_SHIFT` (1024 -> 16, ~1.56 %).
//!
//! Everything else is `teo@5.13` ([`super::v5_13`]), whose selection this variant runs with
//! two insertions:
//! 1. Steps 1-2 of v5.13 unchanged up to the early exit for a state 1 that does not fit before
//!    the timer; only then is utilization read (`sched_cpu_util() > util_threshold`).
//! 2. A utilized CPU on a platform with two states takes the first enabled non-polling state
//!    outright (if there is none, the normal selection runs).
//! 3. The normal v5.13 selection, up to and including the latency clamp.
//! 4. A utilized CPU then goes to the next enabled non-polling state below the choice (the
//!    first whose target residency fits the expected duration, normally the next one down);
//!    if there is none the choice stands, even though it is deeper. The expected duration is
//!    not lowered with it, so the tick may still be stopped for the shallower state (v6.6
//!    fixed this).
//! 5. The tick decision of v5.13.
//!
//! The update and `reflect` are v5.13's.

use super::common_v5_13::TeoCpu;
use super::v5_13;
use crate::cpuidle::{Device, Governor, Kernel, Platform};

/// The utilization threshold is the CPU's capacity shifted right by this much.
pub(super) const UTIL_THRESHOLD_SHIFT: u32 = 6;

/// The two fields v6.3 added to `struct teo_cpu`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct UtilAwareness {
    /// unsigned long: `arch_scale_cpu_capacity() >> UTIL_THRESHOLD_SHIFT`, set at enable.
    util_threshold: u64,
    /// Whether this select found the CPU utilized (written before it is read, each select).
    utilized: bool,
}

impl UtilAwareness {
    pub(super) fn new(capacity: u64) -> Self {
        UtilAwareness {
            util_threshold: capacity >> UTIL_THRESHOLD_SHIFT,
            utilized: false,
        }
    }

    /// `teo_cpu_is_utilized`, remembered as the kernel's `cpu_data->utilized`.
    pub(super) fn check(&mut self, kernel: &Kernel) -> bool {
        self.utilized = kernel.cpu_util() > self.util_threshold;
        self.utilized
    }
}

/// `teo@6.3`: `struct teo_cpu` of v6.3 .. v6.5.
pub struct Teo63 {
    cpu: TeoCpu,
    util: UtilAwareness,
}

impl Teo63 {
    pub fn new(platform: &Platform, _dev: &mut Device) -> Self {
        Teo63 {
            cpu: TeoCpu::new(),
            util: UtilAwareness::new(platform.capacity),
        }
    }
}

impl Governor for Teo63 {
    fn name(&self) -> &'static str {
        "teo@6.3"
    }

    fn select(
        &mut self,
        platform: &Platform,
        dev: &mut Device,
        kernel: &mut Kernel,
        stop_tick: &mut bool,
    ) -> usize {
        v5_13::select(
            &mut self.cpu,
            Some(&mut self.util),
            platform,
            dev,
            kernel,
            stop_tick,
        )
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
