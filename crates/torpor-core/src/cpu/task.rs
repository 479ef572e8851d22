//! Tasks pinned to CPUs: what wakes them, how long they run, whom they wake.
//!
//! A task alternates between sleeping and running one burst. Three things make workloads out
//! of that:
//! - its wake-up: a periodic timer (cyclictest, a periodic job), a sleep of random length ended
//!   by a timer (`nanosleep`) or by a device interrupt, or another task's wake-up call (a frame
//!   pipeline's render thread, woken by the UI thread);
//! - its burst length (fixed, uniform or exponential);
//! - the task it wakes at the end of each burst, on its own CPU or another (a cross-CPU
//!   wake-up arrives as an IPI).
//!
//! Why the source matters: a timer is known to the kernel in advance, so the governor sees it
//! through the sleep length; an interrupt or an IPI is not, so only the governor's history
//! predicts it.

use crate::sim::Pcg32;
use crate::time::Nanos;

/// What ends a sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// An hrtimer on the task's CPU: part of the sleep length the governor reads.
    Timer,
    /// A device interrupt, or an IPI from another CPU: not announced.
    Interrupt,
}

/// A length drawn for each burst or sleep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Fixed(Nanos),
    /// Uniform in [low, high].
    Uniform(Nanos, Nanos),
    /// Exponential with this mean (memoryless arrivals).
    Exponential(Nanos),
}

impl Dist {
    pub fn sample(&self, rng: &mut Pcg32) -> Nanos {
        match *self {
            Dist::Fixed(n) => n,
            Dist::Uniform(lo, hi) => Nanos(lo.0 + rng.below(hi.0.saturating_sub(lo.0) + 1)),
            Dist::Exponential(mean) => {
                // Inverse transform; 1 - u lies in (0, 1], so the logarithm is finite.
                let u = 1.0 - rng.unit_f64();
                Nanos((-(mean.0 as f64) * u.ln()).round() as u64)
            }
        }
    }

    /// The mean length.
    pub fn mean(&self) -> Nanos {
        match *self {
            Dist::Fixed(n) | Dist::Exponential(n) => n,
            Dist::Uniform(lo, hi) => Nanos((lo.0 + hi.0) / 2),
        }
    }
}

/// How a task wakes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wake {
    /// At `phase + k * period` (plus a uniform delay below `jitter`), by `source`; a periodic
    /// timer keeps its grid whatever the bursts do, as cyclictest's absolute timers do.
    Periodic {
        period: Nanos,
        phase: Nanos,
        jitter: Nanos,
        source: Source,
    },
    /// A sleep of `sleep` after each burst, ended by `source`.
    Sleep { sleep: Dist, source: Source },
    /// Only when another task wakes it.
    ByTask,
}

/// One task.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    pub name: String,
    pub cpu: u32,
    pub wake: Wake,
    pub run: Dist,
    /// The task (index into the run's task list) this one wakes at the end of each burst.
    pub wakes: Option<usize>,
}

impl TaskSpec {
    /// A cyclictest thread: a periodic timer every `interval`; a short burst; its latency is
    /// the time from the timer's expiry to the thread running.
    pub fn cyclictest(name: &str, cpu: u32, interval: Nanos) -> TaskSpec {
        TaskSpec {
            name: name.to_string(),
            cpu,
            wake: Wake::Periodic {
                period: interval,
                phase: interval,
                jitter: Nanos::ZERO,
                source: Source::Timer,
            },
            // cyclictest reads the clock, records and re-arms: a few microseconds.
            run: Dist::Fixed(Nanos::from_us(5)),
            wakes: None,
        }
    }
}
