//! How much work a job asks for, known before it runs: an upper bound on the IOs it can issue,
//! from its options and the device's service times. `torpor run` refuses a scenario whose
//! bound is far beyond what finishes in minutes (a 10-year run of a saturating job would take
//! most of a year of wall time), unless the user raises the limit.
//!
//! A job issues no more IOs than the smallest of these bounds, each taken over its active time
//! (the run's span after `startdelay`, cut at `runtime`):
//!
//! 1. `number_ios`;
//! 2. unless `time_based`, `size / bs` (fio's default `io_size = size`);
//! 3. with `rate` or `rate_iops`, that rate for each direction the job issues (a direction
//!    without one is unbounded by it);
//! 4. with `thinktime`, `thinktime_blocks` per think time (each stall lasts at least that);
//! 5. the device's throughput: `min(iodepth, parallelism)` requests in service at once, each
//!    taking at least the device's service time for a `bs`-byte request of the faster
//!    direction the job issues (power-state exits only slow it down).
//!
//! A replayed trace is bounded by its length instead: it is streamed, one line at a time.
//!
//! CPU tasks are counted in events, against the same limit ([`cpu_events`]): a task wakes once
//! per cycle, whose mean length is estimated from each distribution's mean:
//!
//! 1. periodic: the period, or the mean burst when bursts are longer (they then run back to
//!    back);
//! 2. a sleep after each burst: the mean sleep plus the mean burst;
//! 3. woken by its own IO: the mean burst plus the shortest gap between two completions of
//!    the device (its fastest 4 KiB service time over its parallel slots);
//! 4. woken by another task: as often as the task that wakes it (the most often, when several
//!    do; never, when none does).
//!
//! Each wake-up is four events (the wake-up, the burst's end, the idle entry and its exit), and
//! each task adds its CPU's tick. A cycle is at least 1 ns, the engine's resolution: a mean of
//! "1ns" counts as what it asks for.

use super::fio_job::{FioJob, RwMode};
use crate::cpu::task::{TaskSpec, Wake};
use crate::storage::io::IoOp;
use crate::storage::nvme::service::ServiceModel;
use crate::time::Nanos;

/// An upper bound on the IOs `job` issues in a run of `span` against a drive timed by
/// `service` (the module doc lists the bounds). Whole numbers throughout, so the bound is exact.
pub fn max_ios(job: &FioJob, span: Nanos, service: &ServiceModel) -> u64 {
    let mut active = span - job.startdelay.unwrap_or(Nanos::ZERO);
    if let Some(runtime) = job.runtime {
        active = active.min(runtime);
    }
    let ns = u128::from(active.0);
    // `per` events, one every `every_ns`, from time zero: one more than the span holds.
    let paced = |per: u128, every_ns: u128| per * (ns / every_ns + 1);
    let mut bound = u128::MAX;
    if let Some(n) = job.number_ios {
        bound = bound.min(n.into());
    }
    if !job.time_based {
        bound = bound.min((job.size / job.bs).into());
    }
    let directions: &[usize] = match job.rw {
        RwMode::Read | RwMode::RandRead => &[IoOp::Read as usize],
        RwMode::Write | RwMode::RandWrite => &[IoOp::Write as usize],
        RwMode::Rw | RwMode::RandRw => &[IoOp::Read as usize, IoOp::Write as usize],
    };
    let rated: Option<Vec<u64>> = directions.iter().map(|&d| job.rate_bps(d)).collect();
    if let Some(rates) = rated {
        // The k-th IO of a direction goes at k x bs / rate.
        let per = |bps: u64| u128::from(bps) * ns / 1_000_000_000 / u128::from(job.bs.max(1)) + 1;
        bound = bound.min(rates.into_iter().map(per).sum());
    }
    if let Some(think) = job.thinktime.filter(|t| *t > Nanos::ZERO) {
        bound = bound.min(paced(job.thinktime_blocks.into(), think.0.into()));
    }
    let bytes = u32::try_from(job.bs).unwrap_or(u32::MAX);
    let fastest = match job.rw {
        RwMode::Read | RwMode::RandRead => service.service_time(IoOp::Read, bytes),
        RwMode::Write | RwMode::RandWrite => service.service_time(IoOp::Write, bytes),
        RwMode::Rw | RwMode::RandRw => service
            .service_time(IoOp::Read, bytes)
            .min(service.service_time(IoOp::Write, bytes)),
    };
    // A zero service time (a hand-written model) bounds nothing.
    if fastest > Nanos::ZERO {
        let in_service = job.iodepth.min(service.parallelism.max(1));
        bound = bound.min(paced(in_service.into(), fastest.0.into()));
    }
    u64::try_from(bound).unwrap_or(u64::MAX)
}

/// The shortest time between two completions `service` can deliver: its fastest 4 KiB
/// service time over its parallel slots (at least 1 ns).
pub fn completion_gap(service: &ServiceModel) -> Nanos {
    let fastest = service
        .service_time(IoOp::Read, 4096)
        .min(service.service_time(IoOp::Write, 4096));
    Nanos((fastest.0 / u64::from(service.parallelism.max(1))).max(1))
}

/// The estimated events of `tasks` over `span` on CPUs ticking at `hz` (the module doc lists
/// the rules); `completion_gap` is the device's ([`completion_gap`]), zero without one.
pub fn cpu_events(tasks: &[TaskSpec], hz: u32, span: Nanos, completion_gap: Nanos) -> u64 {
    let ticks = span.0 / (1_000_000_000 / u64::from(hz.max(1))).max(1);
    let own: Vec<Option<Nanos>> = tasks
        .iter()
        .map(|t| {
            let run = t.run.mean();
            match t.wake {
                Wake::Periodic { period, .. } => Some(period.max(run)),
                Wake::Sleep { sleep, .. } => Some(sleep.mean() + run),
                Wake::Io => Some(run + completion_gap),
                Wake::ByTask => None,
            }
        })
        .collect();
    // A woken task's cycle is its waker's; a chain of wakers is followed to its end (at most
    // one step per task, so a loop of tasks waking each other ends).
    let mut cycle = own.clone();
    for _ in 0..tasks.len() {
        for (waker, t) in tasks.iter().enumerate() {
            if let (Some(woken), Some(c)) = (t.wakes, cycle[waker]) {
                if own[woken].is_none() {
                    cycle[woken] = Some(cycle[woken].map_or(c, |w| w.min(c)));
                }
            }
        }
    }
    cycle
        .iter()
        .map(|c| match c {
            Some(c) => (span.0 / c.0.max(1))
                .saturating_mul(4)
                .saturating_add(ticks),
            None => ticks,
        })
        .fold(0, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVE: ServiceModel = ServiceModel {
        read_4k_us: 80.0,
        write_4k_us: 20.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism: 8,
    };

    #[test]
    fn a_saturating_job_is_bounded_by_the_drives_throughput() {
        // 4 KiB random reads at QD 32 on 8 parallel 80 us slots: 8 / 80 us = 100 000 IOs/s,
        // plus one per slot at the start: 10 s -> 1 000 008.
        let mut j = FioJob::new("r", RwMode::RandRead);
        j.iodepth = 32;
        j.time_based = true;
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1_000_008);
        // At QD 2 only two slots are used: 25 000 IOs/s.
        j.iodepth = 2;
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 250_002);
    }

    #[test]
    fn size_rate_thinktime_runtime_and_startdelay_each_bound_it() {
        let mut j = FioJob::new("w", RwMode::Write);
        j.size = 1 << 20; // 256 blocks of 4 KiB
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 256);
        j.time_based = true;
        j.rate_iops = [Some(100); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1001);
        j.rate_iops = [None; 2];
        j.thinktime = Some(Nanos::from_ms(50));
        j.thinktime_blocks = 10;
        // 10 s / 50 ms = 200 stalls (+1): 2010 IOs.
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 2010);
        j.runtime = Some(Nanos::from_secs(1));
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 210);
        j.startdelay = Some(Nanos::from_secs(20));
        // Starts after the run ends: only the throughput bound's first IO remains.
        assert_eq!(max_ios(&j, Nanos::from_secs(10), &DRIVE), 1);
    }

    #[test]
    fn a_mixed_job_counts_its_rate_twice_and_its_faster_direction() {
        let mut j = FioJob::new("m", RwMode::RandRw);
        j.time_based = true;
        // QD 1 on 20 us writes (faster than 80 us reads): 50 000 IOs/s.
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 50_001);
        j.rate_iops = [Some(10); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 22);
        // Only reads limited: the writes keep the throughput bound.
        j.rate_iops = [Some(10), None];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 50_001);
        // 40 KiB/s of 4 KiB reads and writes each: 10 per second per direction, as above.
        j.rate_iops = [None; 2];
        j.rate = [Some(40 << 10); 2];
        assert_eq!(max_ios(&j, Nanos::from_secs(1), &DRIVE), 22);
    }

    fn task(wake: Wake, run: crate::cpu::task::Dist) -> TaskSpec {
        let mut t = TaskSpec::cyclictest("t", 0, Nanos::from_ms(10));
        t.wake = wake;
        t.run = run;
        t
    }

    #[test]
    fn cpu_events_take_each_distributions_mean() {
        use crate::cpu::task::{Dist, Source};
        let periodic = Wake::Periodic {
            period: Nanos::from_ms(10),
            phase: Nanos::ZERO,
            jitter: Nanos::ZERO,
            source: Source::Timer,
        };
        let s = Nanos::from_secs(1);
        // 100 periods x 4 + 250 ticks.
        let cyclic = task(periodic, Dist::Fixed(Nanos::from_us(5)));
        assert_eq!(cpu_events(&[cyclic], 250, s, Nanos::ZERO), 650);
        // Bursts of 20 ms on a 10 ms period run back to back: 50 x 4 + 250.
        let long = task(periodic, Dist::Exponential(Nanos::from_ms(20)));
        assert_eq!(cpu_events(&[long], 250, s, Nanos::ZERO), 450);
        // 1 ns sleeps and 1 ns bursts, exponential: a 2 ns cycle, 600 s: 3e11 x 4 + 150 000.
        let tiny = Wake::Sleep {
            sleep: Dist::Exponential(Nanos(1)),
            source: Source::Timer,
        };
        let t = task(tiny, Dist::Exponential(Nanos(1)));
        assert_eq!(
            cpu_events(&[t], 250, Nanos::from_secs(600), Nanos::ZERO),
            1_200_000_150_000
        );
        // Uniform 1..3 ms sleeps (mean 2) and 1 ms bursts: 3 ms, 333 cycles in 1 s.
        let uniform = Wake::Sleep {
            sleep: Dist::Uniform(Nanos::from_ms(1), Nanos::from_ms(3)),
            source: Source::Interrupt,
        };
        let t = task(uniform, Dist::Fixed(Nanos::from_ms(1)));
        assert_eq!(cpu_events(&[t], 100, s, Nanos::ZERO), 333 * 4 + 100);
        // IO-woken: a 5 us burst plus a 20 us completion gap: 40 000 x 4 + 250.
        let io = task(Wake::Io, Dist::Fixed(Nanos::from_us(5)));
        assert_eq!(cpu_events(&[io], 250, s, Nanos::from_us(20)), 160_250);
    }

    #[test]
    fn a_woken_task_wakes_as_often_as_its_waker_and_never_without_one() {
        use crate::cpu::task::Dist;
        let mut ui = TaskSpec::cyclictest("ui", 0, Nanos::from_ms(1));
        ui.wakes = Some(1);
        let render = task(Wake::ByTask, Dist::Fixed(Nanos::from_us(100)));
        // Both 1000 x 4 + 250; an unwoken third only ticks.
        let idle = task(Wake::ByTask, Dist::Fixed(Nanos::from_us(100)));
        let s = Nanos::from_secs(1);
        assert_eq!(
            cpu_events(&[ui, render, idle], 250, s, Nanos::ZERO),
            2 * 4250 + 250
        );
    }

    #[test]
    fn the_completion_gap_is_the_fastest_request_over_the_slots() {
        // 20 us writes (faster than 80 us reads) over 8 slots: 2.5 us.
        assert_eq!(completion_gap(&DRIVE), Nanos(2_500));
    }
}
