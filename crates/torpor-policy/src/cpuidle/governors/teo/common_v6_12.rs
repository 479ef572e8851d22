//! Pieces the post-util teo generations (v6.11 .. v7.0: `teo@6.12`, `teo@6.14`, `teo`,
//! `teo@7.0`) share word for word in the kernel, kept once so each version's file shows only its
//! own algorithm.
//!
//! What is here, in the order a `select` uses it:
//! 1. The per-bin metrics (`struct teo_bin`: `intercepts`, `hits`, both `unsigned int`) and the
//!    constants `PULSE`, `DECAY_SHIFT`, `RESIDENCY_THRESHOLD_NS` (gov.h) and
//!    `LATENCY_THRESHOLD_NS` (v6.14+).
//! 2. The candidate scan: the deepest enabled state is the first candidate; on the way the scan
//!    notes the first enabled state (`idx0`), the deepest enabled state meeting the latency limit
//!    (`constraint_idx`) and the metric sums of the bins below the candidate.
//! 3. The v6.11 .. v6.18 intercept lookup (`first_suitable_idx`): v6.19 and v7.0 have their own.
//! 4. `teo_find_shallower_state` without the polling filter: every caller from v6.11 on passes
//!    `no_poll = false` (v6.19 dropped the parameter).
//! 5. The common tail (`end:` / `out_tick:`): whether to keep the tick, and the shallower state
//!    that fits before the tick when it is kept.
//!
//! All metric arithmetic is the kernel's `unsigned int` arithmetic, so sums and doublings wrap
//! modulo 2^32 (`wrapping_*`); times are s64 (`i64`) and compared signed, as the kernel does.

use crate::cpuidle::{Device, Kernel, Platform};

/// Added to one metric per update.
pub(super) const PULSE: u32 = 1024;
/// Every update scales each metric by 7/8 (`m -= m >> DECAY_SHIFT`).
pub(super) const DECAY_SHIFT: u32 = 3;
/// gov.h: states shallower than this are cheap enough to pick without the sleep length.
pub(super) const RESIDENCY_THRESHOLD_NS: i64 = 15_000;
/// v6.14+: a latency limit below this forces shallow states whatever the timers say.
pub(super) const LATENCY_THRESHOLD_NS: i64 = RESIDENCY_THRESHOLD_NS / 2;

/// `struct teo_bin`: one per state index, disabled states included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bin {
    pub intercepts: u32,
    pub hits: u32,
}

/// What the candidate scan of `teo_select` found.
pub(super) struct Scan {
    /// The deepest enabled state; `None` when no state is enabled (the kernel's `idx == -1`).
    pub idx: Option<usize>,
    /// The first enabled state (0 unless state 0 is disabled).
    pub idx0: usize,
    /// The deepest enabled state whose exit latency meets the limit (0 if none does, even when
    /// state 0 is disabled).
    pub constraint_idx: usize,
    /// Intercepts of the bins below the candidate.
    pub idx_intercept_sum: u32,
    /// Hits of the bins below the candidate.
    pub idx_hit_sum: u32,
    /// Intercepts of every bin but the last (v6.12 adds the last one for its tick test).
    pub intercept_sum: u32,
}

/// The candidate scan over states 1 .. N-1 (the caller has handled N < 2).
pub(super) fn scan(platform: &Platform, dev: &Device, bins: &[Bin], latency_req: i64) -> Scan {
    let mut s = Scan {
        idx: (!dev.is_disabled(0)).then_some(0),
        idx0: 0,
        constraint_idx: 0,
        idx_intercept_sum: 0,
        idx_hit_sum: 0,
        intercept_sum: 0,
    };
    let mut hit_sum: u32 = 0;
    for i in 1..platform.state_count() {
        // The sums grow with every bin, enabled or not: a disabled state's events still count
        // as "below" a deeper candidate.
        s.intercept_sum = s.intercept_sum.wrapping_add(bins[i - 1].intercepts);
        hit_sum = hit_sum.wrapping_add(bins[i - 1].hits);
        if dev.is_disabled(i) {
            continue;
        }
        if s.idx.is_none() {
            s.idx0 = i;
        }
        s.idx = Some(i);
        if platform.states[i].exit_latency_ns <= latency_req {
            s.constraint_idx = i;
        }
        s.idx_intercept_sum = s.intercept_sum;
        s.idx_hit_sum = hit_sum;
    }
    s
}

/// The start every `teo_select` from v6.12 on shares: with fewer than two states, or none
/// enabled, state 0 with the tick kept; when the deepest enabled state is the first enabled one,
/// that state for its target residency (`end:` with half a tick as the tick's delta). Otherwise
/// the candidate and the scan, for the version's own steps.
pub(super) fn candidate(
    platform: &Platform,
    dev: &Device,
    bins: &[Bin],
    latency_req: i64,
) -> Result<(usize, Scan), Exit> {
    if platform.state_count() < 2 {
        return Err(Exit::OutTick(0));
    }
    let s = scan(platform, dev, bins, latency_req);
    let Some(idx) = s.idx else {
        return Err(Exit::OutTick(0));
    };
    if idx == s.idx0 {
        return Err(Exit::End {
            idx,
            duration_ns: platform.states[idx].target_residency_ns,
            idx0: s.idx0,
            delta_tick: platform.tick_ns / 2,
        });
    }
    Ok((idx, s))
}

/// `teo_state_ok()`: with the tick already stopped nothing will wake the CPU at the next tick,
/// so a state shallower than a tick period could be stuck in for long.
pub(super) fn state_ok(platform: &Platform, kernel: &Kernel, i: usize) -> bool {
    !kernel.tick_stopped() || platform.states[i].target_residency_ns >= platform.tick_ns
}

/// True when the intercepts below `idx` outweigh everything from `idx` up:
/// `2 * idx_intercept_sum > total - idx_hit_sum`, all `unsigned int` (both sides may wrap; the
/// subtraction does when a separately decayed `total` has fallen below the bin sums).
pub(super) fn intercepts_dominate(total: u32, scan: &Scan) -> bool {
    scan.idx_intercept_sum.wrapping_mul(2) > total.wrapping_sub(scan.idx_hit_sum)
}

/// The v6.11 .. v6.18 intercept lookup: walk down from the candidate, summing intercepts, to the
/// deepest state below which over half of the candidate's intercepts fell. A state that is
/// disabled or too shallow for a stopped tick gives way to the last suitable state walked
/// (`first_suitable_idx`, the candidate itself if none). The walk gives up at the first
/// too-shallow enabled state when nothing suitable was passed.
pub(super) fn intercept_lookup(
    platform: &Platform,
    dev: &Device,
    kernel: &Kernel,
    bins: &[Bin],
    idx: usize,
    idx_intercept_sum: u32,
) -> usize {
    let mut first_suitable_idx = idx;
    let mut intercept_sum: u32 = 0;
    for i in (0..idx).rev() {
        intercept_sum = intercept_sum.wrapping_add(bins[i].intercepts);
        if intercept_sum.wrapping_mul(2) > idx_intercept_sum {
            if state_ok(platform, kernel, i) && !dev.is_disabled(i) {
                return i;
            }
            return first_suitable_idx;
        }
        if dev.is_disabled(i) {
            continue;
        }
        if state_ok(platform, kernel, i) {
            first_suitable_idx = i;
            continue;
        }
        if first_suitable_idx == idx {
            break;
        }
    }
    idx
}

/// `teo_find_shallower_state(.., no_poll = false)`: the deepest enabled state below `idx` whose
/// target residency fits `duration_ns`, else the shallowest enabled one below `idx`, else `idx`.
pub(super) fn find_shallower_state(
    platform: &Platform,
    dev: &Device,
    mut idx: usize,
    duration_ns: i64,
) -> usize {
    for i in (0..idx).rev() {
        if dev.is_disabled(i) {
            continue;
        }
        idx = i;
        if platform.states[i].target_residency_ns <= duration_ns {
            break;
        }
    }
    idx
}

/// How a `teo_select` leaves: through `out_tick:` (keep the tick) or through `end:` with the
/// expected idle duration that decides the tick.
pub(super) enum Exit {
    OutTick(usize),
    End {
        idx: usize,
        duration_ns: i64,
        idx0: usize,
        /// `*delta_next` of the sleep-length call, or `TICK_NSEC / 2` if none was made.
        delta_tick: i64,
    },
}

/// The `end:` and `out_tick:` labels. The tick may stop only for a non-polling state expected to
/// last at least a tick (or when it is stopped already, which the idle loop keeps anyway); a
/// kept tick wakes the CPU within `delta_tick`, so a state whose target residency exceeds it is
/// traded for a shallower one that fits.
pub(super) fn finish(
    exit: Exit,
    platform: &Platform,
    dev: &Device,
    kernel: &Kernel,
    stop_tick: &mut bool,
) -> usize {
    let idx = match exit {
        Exit::OutTick(idx) => idx,
        Exit::End {
            idx,
            duration_ns,
            idx0,
            delta_tick,
        } => {
            let s = &platform.states[idx];
            if (!s.polling && duration_ns >= platform.tick_ns) || kernel.tick_stopped() {
                return idx;
            }
            if idx > idx0 && s.target_residency_ns > delta_tick {
                find_shallower_state(platform, dev, idx, delta_tick)
            } else {
                idx
            }
        }
    };
    *stop_tick = false;
    idx
}
