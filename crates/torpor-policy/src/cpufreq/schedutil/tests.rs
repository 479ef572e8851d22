//! schedutil@6.12 on sequences worked out by hand from kernel/sched/cpufreq_schedutil.c.
//!
//! The policy of most tests: OPPs 500 / 1000 / 1500 / 2000 MHz, capacity 1024, transition
//! latency 500 us (default rate limit 500 + 250 = 750 us), HZ = 250 (tick 4 ms), frequency
//! invariant, so `raw = 2 000 000 x perf / 1024` kHz with `perf = util + util / 4`.

use super::*;
use crate::cpufreq::policy::PolicySpec;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn policy(cpus: usize, fast_switch: bool, capacity: u64) -> CpufreqPolicy {
    CpufreqPolicy::new(&PolicySpec {
        freqs_khz: vec![500_000, 1_000_000, 1_500_000, 2_000_000],
        inefficient: vec![],
        transition_latency_ns: 500_000,
        transition_delay_us: None,
        capacity,
        cpus,
        fast_switch,
        initial_khz: 2_000_000,
    })
}

fn tunables(rate_limit_us: Option<u32>) -> SchedutilTunables {
    SchedutilTunables {
        rate_limit_us,
        freq_invariant: true,
    }
}

/// A started governor (start, then limits) on `p`.
fn start(p: &mut CpufreqPolicy, rate_limit_us: Option<u32>) -> Schedutil {
    let mut s = Schedutil::new(p, 4 * MS, tunables(rate_limit_us));
    s.limits(p);
    s
}

fn cpu(util: u64, idle_calls: u64) -> CpuUtil {
    CpuUtil {
        util,
        idle_calls,
        ..CpuUtil::default()
    }
}

/// One update of CPU 0 of a one-CPU policy; the committed choice after it.
fn step(s: &mut Schedutil, p: &mut CpufreqPolicy, t: u64, c: CpuUtil, iowait: bool) -> u32 {
    s.update(
        p,
        &UtilUpdate {
            now_ns: t,
            cpu: 0,
            iowait,
            cpus: &[c],
        },
    );
    s.next_freq_khz()
}

#[test]
fn headroom_maps_80_percent_utilization_to_the_next_opp_up() {
    // The first update after start always evaluates (limits changed). Each later update waits
    // out the 750 us rate limit, and a new idle_calls count keeps the busy hold out of the way.
    // util 400: perf 400 + 100 = 500, raw 976 562 -> 1 000 000.
    // util 614: perf 614 + 153 = 767, raw 1 498 046 -> 1 500 000.
    // util 615: perf 615 + 153 = 768, raw exactly 1 500 000 -> 1 500 000 (at or above).
    // util 616: perf 616 + 154 = 770, raw 1 503 906 -> 2 000 000.
    // util 900: perf 1125, capped at 1024, raw 2 000 000.
    // util 0: raw 0 -> the lowest OPP.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(s.rate_limit_ns(), 750 * US);
    let want = [
        (400, 1_000_000),
        (614, 1_500_000),
        (615, 1_500_000),
        (616, 2_000_000),
        (900, 2_000_000),
        (0, 500_000),
    ];
    for (i, (util, khz)) in want.into_iter().enumerate() {
        let t = (i as u64 + 1) * MS;
        assert_eq!(
            step(&mut s, &mut p, t, cpu(util, i as u64 + 1), false),
            khz,
            "util {util}"
        );
        assert_eq!(p.cur_khz(), khz);
    }
}

#[test]
fn utilization_is_scaled_by_capacity_and_not_by_the_current_frequency() {
    // Capacity 512 (a little core): util 256 is half its capacity. perf 320,
    // raw = 2 000 000 x 320 / 512 = 1 250 000 -> 1 500 000, whatever the current frequency.
    let mut p = policy(1, false, 512);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(256, 1), false), 1_500_000);
    // Without frequency invariance the reference is cur + cur / 4: from 1 500 000,
    // 1 875 000 x 320 / 512 = 1 171 875 -> 1 500 000; from 500 000 (after a floor), 625 000 x 320
    // / 512 = 390 625 -> 500 000 (it can only climb as far as the current frequency allows).
    let mut p = policy(1, false, 512);
    let mut s = Schedutil::new(
        &p,
        4 * MS,
        SchedutilTunables {
            freq_invariant: false,
            ..tunables(None)
        },
    );
    s.limits(&mut p);
    p.driver_target(1_500_000, Relation::L);
    assert_eq!(step(&mut s, &mut p, MS, cpu(256, 1), false), 1_500_000);
    p.driver_target(500_000, Relation::L);
    assert_eq!(step(&mut s, &mut p, 2 * MS, cpu(256, 2), false), 500_000);
}

#[test]
fn the_rate_limit_counts_from_the_last_frequency_change() {
    // t = 1 ms: first evaluation, util 400 -> 1 000 000 (a change, the reference time).
    // t = 1.749 ms: util 900, 749 us after the change: not evaluated.
    // t = 1.750 ms: 750 us: evaluated -> 2 000 000.
    // t = 2.6 ms: util 900 again, 850 us later: evaluated, same choice, no change -- so the
    // reference stays at 1.75 ms, and t = 2.6 ms with util 0 is still allowed at t = 2.6 ms + 1.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(400, 1), false), 1_000_000);
    assert_eq!(
        step(&mut s, &mut p, MS + 749 * US, cpu(900, 2), false),
        1_000_000
    );
    assert_eq!(p.cur_khz(), 1_000_000);
    assert_eq!(
        step(&mut s, &mut p, MS + 750 * US, cpu(900, 3), false),
        2_000_000
    );
    assert_eq!(p.cur_khz(), 2_000_000);
    assert_eq!(
        step(&mut s, &mut p, 2600 * US, cpu(900, 4), false),
        2_000_000
    );
    assert_eq!(
        step(&mut s, &mut p, 2600 * US + 1, cpu(0, 5), false),
        500_000
    );
}

#[test]
fn iowait_boost_doubles_per_io_wakeup_and_halves_per_update_without_one() {
    // rate_limit_us = 0 evaluates every update; util 0 throughout, so the boost alone decides:
    // boost b gives perf = 1.25 b (capped at 1024), raw = 2 000 000 x perf / 1024.
    //   1 ms IO: 0 -> 128 (IOWAIT_BOOST_MIN): perf 160, raw 312 500 -> 500 000
    //   2 ms IO: 256: perf 320, raw 625 000 -> 1 000 000
    //   3 ms IO: 512: perf 640, raw 1 250 000 -> 1 500 000
    //   4 ms IO: 1024: perf 1024 -> 2 000 000
    //   5 ms IO: stays 1024 (capped) -> 2 000 000
    //   6 ms no IO: halved to 512 -> 1 500 000
    //   7 ms: 256 -> 1 000 000;  8 ms: 128 -> 500 000;  9 ms: 64 < 128 -> cleared, 500 000.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, Some(0));
    let steps = [
        (true, 128, 500_000),
        (true, 256, 1_000_000),
        (true, 512, 1_500_000),
        (true, 1024, 2_000_000),
        (true, 1024, 2_000_000),
        (false, 512, 1_500_000),
        (false, 256, 1_000_000),
        (false, 128, 500_000),
        (false, 0, 500_000),
    ];
    for (i, (io, boost, khz)) in steps.into_iter().enumerate() {
        let t = (i as u64 + 1) * MS;
        // A new idle_calls count each time: the busy hold stays out of the way.
        assert_eq!(step(&mut s, &mut p, t, cpu(0, i as u64), io), khz, "at {t}");
        assert_eq!(s.boost_of(0), (boost, false), "at {t}");
    }
}

#[test]
fn iowait_boost_doubles_once_per_evaluation_and_resets_after_a_tick() {
    // Default rate limit (750 us). 1 ms IO: first evaluation, boost 128 -> 500 000.
    // 1.1 ms IO: doubled to 256 and pending; not evaluated (rate limit).
    // 1.2 ms IO: already pending: no second doubling.
    // 1.8 ms, no IO: evaluated; pending, so not halved: 256 -> 1 000 000.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(0, 1), true), 500_000);
    step(&mut s, &mut p, 1100 * US, cpu(0, 2), true);
    assert_eq!(s.boost_of(0), (256, true));
    step(&mut s, &mut p, 1200 * US, cpu(0, 3), true);
    assert_eq!(s.boost_of(0), (256, true));
    assert_eq!(step(&mut s, &mut p, 1800 * US, cpu(0, 4), false), 1_000_000);
    assert_eq!(s.boost_of(0), (256, false));
    // More than a tick (4 ms) without an update: at 5.801 ms an IO wake-up restarts at 128
    // (pending), which the evaluation applies as is: 500 000.
    assert_eq!(step(&mut s, &mut p, 5801 * US, cpu(0, 5), true), 500_000);
    assert_eq!(s.boost_of(0), (128, false));
    // Exactly a tick later (9.801 ms), no IO: not more than a tick, so it halves: 64 -> cleared.
    step(&mut s, &mut p, 9801 * US, cpu(0, 6), false);
    assert_eq!(s.boost_of(0), (0, false));
    // A boost of 1024 followed by more than a tick (4 ms + 1 ns) without an update is dropped,
    // not decayed.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, Some(0));
    for i in 1..=4 {
        step(&mut s, &mut p, i * MS, cpu(0, i), true);
    }
    assert_eq!(s.boost_of(0), (1024, false));
    assert_eq!(step(&mut s, &mut p, 8 * MS + 1, cpu(0, 9), false), 500_000);
    assert_eq!(s.boost_of(0), (0, false));
}

#[test]
fn a_busy_cpu_keeps_its_frequency_until_it_idles_with_the_tick_stopped() {
    // rate limit 0. t1: util 900 -> 2 000 000 (first evaluation: limits update due, no hold).
    // t2: util 100 (perf 125, raw 244 140 -> 500 000), idle_calls still 0: busy, hold 2 000 000.
    // t3: util 100, idle_calls 1: the CPU idled with the tick stopped: 500 000.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, Some(0));
    assert_eq!(step(&mut s, &mut p, MS, cpu(900, 0), false), 2_000_000);
    assert_eq!(step(&mut s, &mut p, 2 * MS, cpu(100, 0), false), 2_000_000);
    assert_eq!(p.cur_khz(), 2_000_000);
    assert_eq!(step(&mut s, &mut p, 3 * MS, cpu(100, 1), false), 500_000);
    assert_eq!(p.cur_khz(), 500_000);
    // Raising is never held: util 900 with idle_calls unchanged -> 2 000 000.
    assert_eq!(step(&mut s, &mut p, 4 * MS, cpu(900, 1), false), 2_000_000);
}

#[test]
fn a_shared_policy_takes_the_busiest_cpu_and_holds_nothing() {
    // Two CPUs: CPU 0 util 100 (perf 125), CPU 1 util 600 (perf 750): raw from 750,
    // 1 464 843 -> 1 500 000.
    let mut p = policy(2, false, 1024);
    let mut s = start(&mut p, Some(0));
    let mut upd = |t, cpu, utils: [u64; 2], iowait| {
        let cpus = [cpu_of(utils[0]), cpu_of(utils[1])];
        s.update(
            &mut p,
            &UtilUpdate {
                now_ns: t,
                cpu,
                iowait,
                cpus: &cpus,
            },
        );
        (s.next_freq_khz(), s.boost_of(1))
    };
    assert_eq!(upd(MS, 0, [100, 600], false).0, 1_500_000);
    // CPU 1 drops to 100 while no CPU idled: the shared path has no busy hold -> 500 000.
    assert_eq!(upd(2 * MS, 0, [100, 100], false).0, 500_000);
    // An IO wake-up on CPU 1 boosts CPU 1 (128 -> raw 312 500 -> 500 000); its next one
    // (3.5 ms) doubles it to 256: perf 320 -> 1 000 000, though CPU 0 made neither update.
    assert_eq!(upd(3 * MS, 1, [0, 0], true), (500_000, (128, false)));
    assert_eq!(upd(3500 * US, 1, [0, 0], true), (1_000_000, (256, false)));
    // CPU 0 updates 4.1 ms after CPU 1's last update (7.6 ms): CPU 1 looks idle for more than
    // a tick, its boost is cleared, and the policy drops to 500 000.
    assert_eq!(upd(7600 * US, 0, [0, 0], false), (500_000, (0, false)));
}

/// A CPU of a shared policy: no idle_calls (the shared path does not read them).
fn cpu_of(util: u64) -> CpuUtil {
    cpu(util, 0)
}

#[test]
fn a_runnable_rt_task_asks_for_the_capacity() {
    // rt_runnable: the floor is the capacity, whatever the CFS utilization: 2 000 000.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    let rt = CpuUtil {
        rt_runnable: true,
        ..CpuUtil::default()
    };
    assert_eq!(step(&mut s, &mut p, MS, rt, false), 2_000_000);
}

#[test]
fn a_limits_change_bypasses_the_rate_limit_the_cache_and_the_busy_hold() {
    // Slow path. t = 1 ms: util 900 -> 2 000 000. At 1.1 ms the user caps at 1.6 GHz: the
    // limits resolve to 1 500 000 and sugov_limits moves the frequency there at once.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(900, 0), false), 2_000_000);
    p.store_scaling_max_freq(1_600_000);
    assert!(p.update_limits());
    let moved = s.limits(&mut p);
    assert_eq!(
        moved.map(|c| (c.from_khz, c.to_khz)),
        Some((2_000_000, 1_500_000))
    );
    // t = 1.2 ms: within the rate limit, same util (raw 2 000 000 = the cached raw), busy CPU,
    // lower result: evaluated anyway (need_freq_update), resolved within the new cap, not held,
    // committed. The driver is already there: no further change.
    assert_eq!(
        s.update(
            &mut p,
            &UtilUpdate {
                now_ns: 1200 * US,
                cpu: 0,
                iowait: false,
                cpus: &[cpu(900, 0)],
            }
        ),
        None
    );
    assert_eq!(s.next_freq_khz(), 1_500_000);
    // Fast switch: sugov_limits leaves the frequency alone; the next update switches.
    let mut p = policy(1, true, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(900, 0), false), 2_000_000);
    p.store_scaling_max_freq(1_600_000);
    p.update_limits();
    assert_eq!(s.limits(&mut p), None);
    assert_eq!(p.cur_khz(), 2_000_000);
    let c = s.update(
        &mut p,
        &UtilUpdate {
            now_ns: 1200 * US,
            cpu: 0,
            iowait: false,
            cpus: &[cpu(900, 0)],
        },
    );
    assert_eq!(
        c.map(|c| (c.from_khz, c.to_khz)),
        Some((2_000_000, 1_500_000))
    );
}

#[test]
fn without_a_limits_change_an_unchanged_raw_frequency_keeps_the_cached_choice() {
    // util 900 twice, rate limit 0: the second evaluation finds raw 2 000 000 cached and
    // returns the old choice without resolving, so nothing is committed (no driver call even on
    // the fast path).
    let mut p = policy(1, true, 1024);
    let mut s = start(&mut p, Some(0));
    assert!(s
        .update(
            &mut p,
            &UtilUpdate {
                now_ns: MS,
                cpu: 0,
                iowait: false,
                cpus: &[cpu(900, 1)],
            }
        )
        .is_some());
    assert_eq!(
        s.update(
            &mut p,
            &UtilUpdate {
                now_ns: 2 * MS,
                cpu: 0,
                iowait: false,
                cpus: &[cpu(900, 2)],
            }
        ),
        None
    );
}

#[test]
fn schedutil_skips_an_inefficient_opp() {
    // 1 000 000 marked inefficient by the energy model: util 400 (raw 976 562) resolves to the
    // next efficient OPP, 1 500 000, not 1 000 000 (CPUFREQ_RELATION_LE).
    let mut p = CpufreqPolicy::new(&PolicySpec {
        freqs_khz: vec![500_000, 1_000_000, 1_500_000, 2_000_000],
        inefficient: vec![false, true, false, false],
        transition_latency_ns: 500_000,
        transition_delay_us: None,
        capacity: 1024,
        cpus: 1,
        fast_switch: false,
        initial_khz: 2_000_000,
    });
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(400, 1), false), 1_500_000);
}

#[test]
fn random_updates_keep_every_request_in_the_table_the_limits_and_the_rate_limit() {
    // Properties of the kernel's algorithm over random sequences (shared and one-CPU policies,
    // both driver paths, random limits changes):
    // - every frequency the driver is asked for is a table frequency within [min, max];
    // - two changes of the choice are at least rate_limit_us apart unless the limits changed
    //   in between;
    // - the IO-wait boost is 0 or a power of two in 128..=1024.
    use crate::sim::Pcg32;
    for seed in 0..40u64 {
        let mut rng = Pcg32::new(seed, 7);
        let cpus = 1 + (seed % 3) as usize;
        let mut p = policy(cpus, seed % 2 == 0, 1024);
        let mut s = start(&mut p, None);
        let limit_ns = s.rate_limit_ns();
        let (mut t, mut last_change, mut limits_since) = (0u64, None::<u64>, true);
        let mut utils = vec![CpuUtil::default(); cpus];
        for _ in 0..400 {
            t += 1 + rng.below(3 * MS);
            if rng.below(20) == 0 {
                let cap = [700_000, 1_200_000, 2_000_000][rng.below(3) as usize];
                p.store_scaling_max_freq(cap);
                if p.update_limits() {
                    s.limits(&mut p);
                    limits_since = true;
                }
            }
            let cpu = rng.below(cpus as u64) as usize;
            utils[cpu] = CpuUtil {
                util: rng.below(1100),
                rt_runnable: rng.below(50) == 0,
                idle_calls: utils[cpu].idle_calls + rng.below(2),
                ..CpuUtil::default()
            };
            let before = s.next_freq_khz();
            let change = s.update(
                &mut p,
                &UtilUpdate {
                    now_ns: t,
                    cpu,
                    iowait: rng.below(4) == 0,
                    cpus: &utils,
                },
            );
            if let Some(c) = change {
                assert!(p.freq_table().contains(&c.to_khz), "seed {seed}");
                assert!(c.to_khz >= p.min_khz() && c.to_khz <= p.max_khz());
            }
            if s.next_freq_khz() != before {
                if let (Some(prev), false) = (last_change, limits_since) {
                    assert!(t - prev >= limit_ns, "seed {seed}: {} ns apart", t - prev);
                }
                last_change = Some(t);
                limits_since = false;
            }
            for j in 0..cpus {
                let (b, _) = s.boost_of(j);
                assert!(b == 0 || (b.is_power_of_two() && (128..=1024).contains(&b)));
            }
        }
    }
}

#[test]
fn a_clamp_floor_raises_and_a_clamp_cap_lowers_the_choice() {
    // util 100: perf 125, raw 244 140 -> 500 000. With uclamp_min 600 the floor wins: perf
    // 600, raw 1 171 875 -> 1 500 000. util 900 (perf 1125, past the capacity) under a cap of
    // 300: the ceiling is 300, raw 585 937 -> 1 000 000. A floor above the cap wins over it
    // (max(min, min(actual, max))): floor 700, cap 300, util 0: perf 700, raw 1 367 187 ->
    // 1 500 000. Each update 1 ms after the last (past the 750 us rate limit), with a new
    // idle_calls count so that the busy hold stays out of the way.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    let clamped = |util, idle_calls, min, max| CpuUtil {
        uclamp_min: min,
        uclamp_max: max,
        ..cpu(util, idle_calls)
    };
    assert_eq!(step(&mut s, &mut p, MS, cpu(100, 1), false), 500_000);
    let want = [
        (clamped(100, 2, 600, 1024), 1_500_000),
        (clamped(900, 3, 0, 300), 1_000_000),
        (clamped(0, 4, 700, 300), 1_500_000),
    ];
    for (i, (c, khz)) in want.into_iter().enumerate() {
        let t = (i as u64 + 2) * MS;
        assert_eq!(step(&mut s, &mut p, t, c, false), khz, "{c:?}");
    }
}

#[test]
fn a_cpu_held_down_by_its_cap_is_not_held_busy() {
    // The busy hold keeps 2 000 000 when the CPU never idled (same idle_calls) and the
    // utilization falls (util 200: perf 250, raw 488 281 -> 500 000). With a cap of 150 that
    // util 200 reaches, the rq is capped: no hold, the choice falls to the cap's 292 968 ->
    // 500 000.
    let mut p = policy(1, false, 1024);
    let mut s = start(&mut p, None);
    assert_eq!(step(&mut s, &mut p, MS, cpu(900, 7), false), 2_000_000);
    assert_eq!(step(&mut s, &mut p, 2 * MS, cpu(200, 7), false), 2_000_000);
    let capped = CpuUtil {
        uclamp_max: 150,
        ..cpu(200, 7)
    };
    assert_eq!(step(&mut s, &mut p, 3 * MS, capped, false), 500_000);
}
