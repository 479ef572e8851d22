//! What a wake-up costs on the way from its cause to the woken task running: the interrupt
//! and its handler, the IPI of a cross-CPU wake-up, the scheduler's wake-up and switch, and the
//! idle state's real exit and entry times (as opposed to the worst case a driver declares).
//!
//! Each cost is a per-event spread (`min_us`..`max_us`, drawn uniformly for each occurrence
//! from the CPU's own random stream) with its source, or marked an estimate; a figure fitted
//! to a measurement says which (`fitted`). A platform without a `[wakeup]` table pays nothing
//! on the path and exits its states in exactly their declared exit latency (today's model
//! before this table existed; every built-in preset has one).
//!
//! The governors keep seeing the declared `exit_latency`, as in the kernel; only the simulated
//! hardware and the measured residency use the real one.

use serde::{Deserialize, Serialize};

use crate::sim::Pcg32;

/// One cost: uniform in `[min_us, max_us]` per occurrence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    pub min_us: f64,
    pub max_us: f64,
    /// Where the figure comes from (a measurement, a paper, a kernel path reasoned out).
    pub source: String,
    /// The figure is an estimate (the range is its uncertainty as much as its spread).
    #[serde(default)]
    pub estimate: bool,
    /// The measurement it was fitted to, when it was (that figure then checks calibration,
    /// not prediction).
    #[serde(default)]
    pub fitted: Option<String>,
}

impl Cost {
    /// No cost at all.
    pub fn zero() -> Cost {
        Cost {
            min_us: 0.0,
            max_us: 0.0,
            source: "none".into(),
            estimate: false,
            fitted: None,
        }
    }

    fn check(&self, what: &str) -> Result<(), String> {
        let ok = |v: f64| v.is_finite() && (0.0..=MAX_COST_US).contains(&v);
        if !(ok(self.min_us) && ok(self.max_us) && self.min_us <= self.max_us) {
            return Err(format!(
                "[wakeup.{what}]: expected 0 <= min_us <= max_us <= {MAX_COST_US} (a path cost in \
                 microseconds), got {} / {}",
                self.min_us, self.max_us
            ));
        }
        Ok(())
    }

    /// The range in whole nanoseconds, for drawing per wake-up without float arithmetic.
    pub fn ns(&self) -> CostNs {
        CostNs {
            lo: us_to_ns(self.min_us),
            hi: us_to_ns(self.max_us),
        }
    }
}

/// A [`Cost`] in whole nanoseconds: `[lo, hi]`, uniform.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostNs {
    pub lo: u64,
    pub hi: u64,
}

impl CostNs {
    /// One occurrence (no draw from `rng` when the range is one value).
    #[inline]
    pub fn draw(&self, rng: &mut Pcg32) -> u64 {
        if self.hi > self.lo {
            self.lo + rng.below(self.hi - self.lo + 1)
        } else {
            self.lo
        }
    }
}

/// The real exit of a state that gives none of its own: a fraction of its declared exit
/// latency, uniform in `[min, max]` per exit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitFraction {
    pub min: f64,
    pub max: f64,
    pub source: String,
    #[serde(default)]
    pub estimate: bool,
}

/// The longest path cost a file may give: 100 ms (a cost beyond it is a unit mistake).
pub const MAX_COST_US: f64 = 100_000.0;

/// Microseconds to whole nanoseconds, rounded (without libm's `round`: this runs per wake-up).
#[inline]
fn us_to_ns(us: f64) -> u64 {
    (us * 1000.0 + 0.5) as u64
}

/// A platform's `[wakeup]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakePath {
    /// A timer interrupt: entry, the hrtimer handler, up to its wake-up call (also the tick's
    /// handling on an idle CPU).
    pub timer_irq: Cost,
    /// A device's completion interrupt: entry, the driver's handler and blk-mq's completion,
    /// up to the wake-up call.
    pub io_irq: Cost,
    /// A cross-CPU wake-up: from the sending CPU's call to the IPI arriving on the target
    /// (none when the target polls: the kernel sets its need-resched flag instead).
    pub ipi: Cost,
    /// The scheduler: `try_to_wake_up`, the enqueue and the context switch to the task.
    pub sched: Cost,
    /// States without `exit_us`: their real exit as a fraction of the declared one.
    pub exit: ExitFraction,
    #[serde(default)]
    pub notes: Vec<String>,
}

impl WakePath {
    /// The path of a platform that states none: free, and exits exactly as declared.
    pub fn declared() -> WakePath {
        WakePath {
            timer_irq: Cost::zero(),
            io_irq: Cost::zero(),
            ipi: Cost::zero(),
            sched: Cost::zero(),
            exit: ExitFraction {
                min: 1.0,
                max: 1.0,
                source: "the declared exit latency".into(),
                estimate: false,
            },
            notes: vec![],
        }
    }

    /// Checks every figure.
    pub fn check(&self) -> Result<(), String> {
        self.timer_irq.check("timer_irq")?;
        self.io_irq.check("io_irq")?;
        self.ipi.check("ipi")?;
        self.sched.check("sched")?;
        let f = &self.exit;
        if !(f.min.is_finite()
            && f.max.is_finite()
            && 0.0 <= f.min
            && f.min <= f.max
            && f.max <= 1.0)
        {
            return Err(format!(
                "[wakeup.exit]: expected 0 <= min <= max <= 1 (a fraction of the declared exit \
                 latency), got {} / {}",
                f.min, f.max
            ));
        }
        Ok(())
    }

    /// A real exit from a state declaring `declared_ns` and giving no exit of its own.
    pub fn exit_ns(&self, declared_ns: u64, rng: &mut Pcg32) -> u64 {
        let f = &self.exit;
        let frac = if f.max > f.min {
            f.min + (f.max - f.min) * rng.unit_f64()
        } else {
            f.min
        };
        (declared_ns as f64 * frac + 0.5) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_draws_within_its_range_and_a_fixed_one_draws_itself() {
        let mut rng = Pcg32::new(1, 2);
        let c = Cost {
            min_us: 10.0,
            max_us: 12.5,
            ..Cost::zero()
        };
        for _ in 0..1000 {
            let d = c.ns().draw(&mut rng);
            assert!((10_000..=12_500).contains(&d), "{d}");
        }
        let f = Cost {
            min_us: 3.0,
            max_us: 3.0,
            ..Cost::zero()
        };
        assert_eq!(f.ns().draw(&mut rng), 3_000);
        assert_eq!(
            c.ns(),
            CostNs {
                lo: 10_000,
                hi: 12_500
            }
        );
    }

    #[test]
    fn absurd_or_negative_costs_are_refused() {
        let mut p = WakePath::declared();
        p.ipi.min_us = -1.0;
        assert!(p.check().unwrap_err().contains("[wakeup.ipi]"));
        let mut p = WakePath::declared();
        p.sched.max_us = 1e9;
        assert!(p.check().is_err());
        let mut p = WakePath::declared();
        p.exit.max = 1.5;
        assert!(p.check().unwrap_err().contains("[wakeup.exit]"));
    }

    #[test]
    fn the_declared_path_exits_in_the_declared_latency() {
        let mut rng = Pcg32::new(1, 2);
        assert_eq!(WakePath::declared().exit_ns(280_000, &mut rng), 280_000);
    }
}
