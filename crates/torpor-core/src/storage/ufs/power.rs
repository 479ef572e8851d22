//! Power of a UFS device and its host link per host level and idle state, and the timers that
//! take an idle host from one state to the next (spec-storage §2.5 "Related but separate").
//!
//! # States and their power
//!
//! | state | when | power |
//! |---|---|---|
//! | busy | at least one command outstanding | device active + host\[level\] |
//! | idle | no command, clocks on, link up | device idle + host\[level\] |
//! | hibern8 | the auto-hibern8 timer expired, clocks still on | device hibern8 + host\[level\] |
//! | clock-gated | `clk_gating.delay_ms` expired: link in hibern8, host clocks off | device hibern8 |
//!
//! host\[level\] is the host controller, its M-PHY and clocks while the clocks run at that
//! level (the first clock's frequency and the level's gear). ASSUMPTIONS, labelled in the
//! presets: the device's active power is the same at both gears (its M-PHY share is not
//! separated); the host draws host\[level\] whether or not a command is in flight (its clock
//! tree dominates); a gated host draws nothing (leakage is not counted).
//!
//! # Idle timers (Linux defaults)
//!
//! - Clock gating: `clk_gating.delay_ms` = 150 (ufshcd.c, spec-storage §2.5). When the last
//!   command completes, `__ufshcd_release` queues the gate work
//!   `msecs_to_jiffies(delay_ms)` jiffies on, a timer on the timer wheel (`sim::timer_wheel`):
//!   150 ms at HZ=250 is 38 jiffies, so the work runs at the tick of the 39th jiffy after the
//!   one the host went idle in, 152 to 156 ms later. The gate work puts the link in hibern8
//!   first when it is not already there (Qualcomm hosts set
//!   `UFSHCD_CAP_HIBERN8_WITH_CLK_GATING`), then turns the clocks off.
//! - Auto-hibern8: the host controller's own idle timer, 150 ms by default since the sysfs
//!   `auto_hibern8` patch (Adrian Hunter, linux-kernel 2018: "Set a default value of 150 ms");
//!   `None` when the controller has none or it is disabled. A hardware timer: exact.
//!
//! Entering hibern8 is taken as instantaneous (its cost is within the exit estimate's range);
//! leaving it, for the first command after a hibern8 or clock-gated idle period, takes the
//! preset's hibern8 exit latency.

use crate::sim::Jiffies;
use crate::time::Nanos;

/// The host's idle timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleTimers {
    pub clk_gating_delay: Nanos,
    pub auto_hibern8: Option<Nanos>,
}

impl IdleTimers {
    /// `clk_gating.delay_ms` 150 and the 150 ms auto-hibern8 default (module documentation).
    pub const LINUX_DEFAULT: IdleTimers = IdleTimers {
        clk_gating_delay: Nanos::from_ms(150),
        auto_hibern8: Some(Nanos::from_ms(150)),
    };

    /// How long after the host goes idle at `since` the clock-gating work runs, on the
    /// kernel's jiffies `clock` (the delay taken in whole ms, rounded up: the kernel's
    /// `delay_ms` is an integer).
    pub fn gate_after(&self, clock: Jiffies, since: Nanos) -> Nanos {
        let ms = self.clk_gating_delay.0.div_ceil(1_000_000);
        clock.delayed_work(since, clock.from_ms(ms)) - since
    }

    /// How an idle period of `idle_for` splits between the idle states, in order, when the
    /// clocks gate `gate` into it ([`IdleTimers::gate_after`]).
    pub fn split(&self, idle_for: Nanos, gate: Nanos) -> IdleSplit {
        let h8 = self.auto_hibern8.map_or(gate, |t| t.min(gate));
        let idle = idle_for.min(h8);
        let hibern8 = idle_for.min(gate) - idle;
        IdleSplit {
            idle,
            hibern8,
            clock_gated: idle_for - idle - hibern8,
        }
    }
}

/// One idle period's time in each idle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleSplit {
    pub idle: Nanos,
    pub hibern8: Nanos,
    pub clock_gated: Nanos,
}

impl IdleSplit {
    /// The link ended the period in hibern8: the next command waits for the exit.
    pub fn needs_hibern8_exit(&self) -> bool {
        self.hibern8 > Nanos::ZERO || self.clock_gated > Nanos::ZERO
    }
}

/// The idle and busy states of the table in the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UfsState {
    Busy,
    Idle,
    Hibern8,
    ClockGated,
}

/// One device and host's power figures, mW (central values of the preset's estimates).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UfsPower {
    pub device_active_mw: f64,
    pub device_idle_mw: f64,
    pub device_hibern8_mw: f64,
    /// Host at the min level, at the max level.
    pub host_min_mw: f64,
    pub host_max_mw: f64,
    pub hibern8_exit: Nanos,
}

impl UfsPower {
    /// Power in `state` with the clocks at the max level (`max` true) or the min level.
    pub fn power_mw(&self, state: UfsState, max: bool) -> f64 {
        let host = if max {
            self.host_max_mw
        } else {
            self.host_min_mw
        };
        match state {
            UfsState::Busy => self.device_active_mw + host,
            UfsState::Idle => self.device_idle_mw + host,
            UfsState::Hibern8 => self.device_hibern8_mw + host,
            UfsState::ClockGated => self.device_hibern8_mw,
        }
    }

    /// Energy of an idle period split as `s` at a level, mJ, and the exit latency the next
    /// command pays.
    pub fn idle_period(&self, s: IdleSplit, max: bool) -> (f64, Nanos) {
        let mj = |t: Nanos, state| t.as_secs_f64() * self.power_mw(state, max);
        let energy = mj(s.idle, UfsState::Idle)
            + mj(s.hibern8, UfsState::Hibern8)
            + mj(s.clock_gated, UfsState::ClockGated);
        let exit = if s.needs_hibern8_exit() {
            self.hibern8_exit
        } else {
            Nanos::ZERO
        };
        (energy, exit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_time_splits_at_the_timers() {
        let ms = Nanos::from_ms;
        let t = IdleTimers::LINUX_DEFAULT;
        // Gating at 150 ms, HZ=250: 38 jiffies, fired at the 39th jiffy after the one the host
        // went idle in: from 0 ms, 156 ms; from 3 ms (jiffy 0 too), 153 ms into the period;
        // from 4 ms (jiffy 1), 156 ms again.
        let k = Jiffies::new(250);
        assert_eq!(t.gate_after(k, ms(0)), ms(156));
        assert_eq!(t.gate_after(k, ms(3)), ms(153));
        assert_eq!(t.gate_after(k, ms(4)), ms(156));
        // Auto-hibern8 (exact) at 150 ms, gating at 156 ms: 6 ms in hibern8 with the clocks on.
        assert_eq!(
            t.split(ms(400), ms(156)),
            IdleSplit {
                idle: ms(150),
                hibern8: ms(6),
                clock_gated: ms(244)
            }
        );
        assert!(!t.split(ms(150), ms(156)).needs_hibern8_exit());
        assert!(t.split(ms(151), ms(156)).needs_hibern8_exit());
        // A fractional delay counts in whole ms, rounded up: 149.2 ms is 150 ms.
        let frac = IdleTimers {
            clk_gating_delay: Nanos::from_us(149_200),
            ..t
        };
        assert_eq!(frac.gate_after(k, ms(0)), ms(156));
        // Auto-hibern8 at 10 ms, gating at 50 ms (a Qualcomm Linux release's tuning).
        let q = IdleTimers {
            clk_gating_delay: ms(50),
            auto_hibern8: Some(ms(10)),
        };
        assert_eq!(
            q.split(ms(30), ms(50)),
            IdleSplit {
                idle: ms(10),
                hibern8: ms(20),
                clock_gated: Nanos::ZERO
            }
        );
        // No auto-hibern8: the gate work enters hibern8 as it gates, at 50 ms here.
        let g = IdleTimers {
            auto_hibern8: None,
            ..q
        };
        assert_eq!(g.split(ms(60), ms(50)).clock_gated, ms(10));
        assert_eq!(g.split(ms(60), ms(50)).hibern8, Nanos::ZERO);
    }

    #[test]
    fn idle_energy_by_hand() {
        let p = UfsPower {
            device_active_mw: 1000.0,
            device_idle_mw: 30.0,
            device_hibern8_mw: 3.0,
            host_min_mw: 10.0,
            host_max_mw: 40.0,
            hibern8_exit: Nanos::from_us(500),
        };
        let q = IdleTimers {
            clk_gating_delay: Nanos::from_ms(50),
            auto_hibern8: Some(Nanos::from_ms(10)),
        };
        // Max level, 100 ms: 10 ms x 70 mW + 40 ms x 43 mW + 50 ms x 3 mW
        // = 0.7 + 1.72 + 0.15 = 2.57 mJ; the link is in hibern8: 500 us exit.
        let gate = Nanos::from_ms(50);
        let (mj, exit) = p.idle_period(q.split(Nanos::from_ms(100), gate), true);
        assert!((mj - 2.57).abs() < 1e-12, "{mj}");
        assert_eq!(exit, Nanos::from_us(500));
        // Min level, 5 ms: 5 ms x 40 mW = 0.2 mJ, no exit.
        let (mj, exit) = p.idle_period(q.split(Nanos::from_ms(5), gate), false);
        assert!((mj - 0.2).abs() < 1e-12);
        assert_eq!(exit, Nanos::ZERO);
        assert_eq!(p.power_mw(UfsState::Busy, false), 1010.0);
    }
}
