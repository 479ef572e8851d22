//! The energy model of a CPU frequency domain: active power per operating point, as Linux v6.12
//! registers it (kernel/power/energy_model.c, include/linux/energy_model.h) and as a device tree
//! lets the OPP library compute it (drivers/opp/of.c `dev_pm_opp_calc_power`).
//!
//! Building a model (`em_create_perf_table`, `em_init_performance`, `em_compute_costs`):
//! 1. Each state has a frequency (kHz, strictly rising) and an active power in uW, above 0 and
//!    at most `EM_MAX_POWER` (64 W); anything else refuses the whole model.
//! 2. `performance = max_cap x freq / fmax` (integer division): the capacity the state gives,
//!    `max_cap` being the CPUs' `arch_scale_cpu_capacity` and `fmax` the highest state's
//!    frequency.
//! 3. From the highest state down, `cost = power x 10 / performance` (x 10 for resolution). A
//!    state whose cost is at least that of some higher state is *inefficient*: a higher frequency
//!    does the same work for less energy. cpufreq then skips it when it resolves schedutil's
//!    requests (`CPUFREQ_RELATION_LE`, see `policy`).
//!
//! `cost` is proportional to energy per unit of work: power x fmax / (freq x max_cap), the
//! `ps->cost` of `em_cpu_energy`'s derivation; v6.12 divides by the state's performance, which
//! is that ratio with the capacity folded in.
//!
//! Power from a device tree (`dev_pm_opp_calc_power`, used when the CPU node has a
//! `dynamic-power-coefficient` and its OPPs `opp-microvolt`): `P = C x V^2 x f` with C the
//! coefficient in uW/MHz/V^2, in integers: `uW = C x mV x mV x MHz / 1 000 000` where
//! `mV = opp-microvolt / 1000` and `MHz = Hz / 1 000 000`, both truncated. It is dynamic power
//! only: no leakage, no cluster or uncore share.
//!
//! Where a platform has neither measured powers nor a coefficient and voltages, presets estimate
//! with the same law, `P = C x V^2 x f`, from a coefficient and voltages borrowed from the same
//! core type elsewhere, each with a low, central and high value; [`estimate_mw`] gives the three
//! powers (docs/cpu-platform.md states the constants each preset uses).

/// `EM_MAX_POWER`: 64 W in uW.
pub const EM_MAX_POWER_UW: u64 = 64_000_000;

/// One performance state (`struct em_perf_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfState {
    pub freq_khz: u32,
    pub power_uw: u64,
    pub performance: u64,
    pub cost: u64,
    /// `EM_PERF_STATE_INEFFICIENT`.
    pub inefficient: bool,
}

/// A frequency domain's energy model (`struct em_perf_domain` with its table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnergyModel {
    states: Vec<PerfState>,
}

impl EnergyModel {
    /// Builds the model from `(kHz, uW)` states, rising in frequency, for CPUs of capacity
    /// `max_cap`; the error names the first state the kernel would refuse.
    pub fn new(table: &[(u32, u64)], max_cap: u64) -> Result<EnergyModel, String> {
        let Some(&(fmax, _)) = table.last() else {
            return Err("an energy model needs at least one state".into());
        };
        let mut prev = 0;
        for &(khz, uw) in table {
            if khz <= prev {
                return Err(format!("{khz} kHz: expected rising frequencies"));
            }
            if uw == 0 || uw > EM_MAX_POWER_UW {
                return Err(format!(
                    "{khz} kHz: expected a power in 1..={EM_MAX_POWER_UW} uW, got {uw}"
                ));
            }
            prev = khz;
        }
        let mut states: Vec<PerfState> = table
            .iter()
            .map(|&(khz, uw)| PerfState {
                freq_khz: khz,
                power_uw: uw,
                performance: max_cap * u64::from(khz) / u64::from(fmax),
                cost: 0,
                inefficient: false,
            })
            .collect();
        let mut prev_cost = u64::MAX;
        for s in states.iter_mut().rev() {
            if s.performance == 0 {
                return Err(format!(
                    "{} kHz: no performance at capacity {max_cap} (the kernel would divide by 0)",
                    s.freq_khz
                ));
            }
            s.cost = s.power_uw * 10 / s.performance;
            if s.cost >= prev_cost {
                s.inefficient = true;
            } else {
                prev_cost = s.cost;
            }
        }
        Ok(EnergyModel { states })
    }

    pub fn states(&self) -> &[PerfState] {
        &self.states
    }

    /// Per state, whether it is inefficient: what `em_cpufreq_update_efficiencies` marks in the
    /// cpufreq table.
    pub fn inefficient(&self) -> Vec<bool> {
        self.states.iter().map(|s| s.inefficient).collect()
    }

    /// The active power (mW) at `freq_khz`, if that is one of the states.
    pub fn power_mw(&self, freq_khz: u32) -> Option<f64> {
        self.states
            .iter()
            .find(|s| s.freq_khz == freq_khz)
            .map(|s| s.power_uw as f64 / 1000.0)
    }
}

/// `dev_pm_opp_calc_power`: the power (uW) of an OPP at `freq_khz` and `microvolt` for a
/// `dynamic-power-coefficient` of `dpc` (uW/MHz/V^2), in the kernel's integer steps.
pub fn dt_power_uw(dpc: u32, microvolt: u32, freq_khz: u32) -> u64 {
    let mv = u64::from(microvolt / 1000);
    let mhz = u64::from(freq_khz) * 1000 / 1_000_000;
    u64::from(dpc) * mv * mv * mhz / 1_000_000
}

/// A low, central and high value of one quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub low: f64,
    pub central: f64,
    pub high: f64,
}

/// The estimate rule: `P = C x V^2 x f` (mW) at `mhz`, for a coefficient `c` in uW/MHz/V^2 and a
/// voltage `volts` each given as a span; the power's span takes the low ends together and the
/// high ends together.
pub fn estimate_mw(c: Span, volts: Span, mhz: f64) -> Span {
    let p = |c: f64, v: f64| c * v * v * mhz / 1000.0;
    Span {
        low: p(c.low, volts.low),
        central: p(c.central, volts.central),
        high: p(c.high, volts.high),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dt_power_follows_the_kernels_integer_formula() {
        // gs101 little 300 MHz, 537 500 uV, C = 70: mV = 537 (truncated), MHz = 300;
        // 70 x 537 x 537 x 300 = 6 055 749 000 / 1e6 = 6055 uW.
        assert_eq!(dt_power_uw(70, 537_500, 300_000), 6055);
        // hi3660 A73 2362 MHz at 1.1 V, C = 550: 550 x 1100^2 x 2362 / 1e6 = 1 571 911 uW.
        assert_eq!(dt_power_uw(550, 1_100_000, 2_362_000), 1_571_911);
        // msm8916-like 998.4 MHz: MHz truncates to 998. 100 x 1000^2 x 998 / 1e6 = 99 800.
        assert_eq!(dt_power_uw(100, 1_000_000, 998_400), 99_800);
    }

    #[test]
    fn costs_and_inefficiency_by_hand() {
        // Three states at capacity 1024, fmax 2 000 000:
        //   1 000 000 kHz, 100 000 uW: performance 512, cost 1 000 000 / 512 = 1953
        //   1 500 000 kHz, 200 000 uW: performance 768, cost 2 000 000 / 768 = 2604
        //   2 000 000 kHz, 260 000 uW: performance 1024, cost 2 600 000 / 1024 = 2539
        // From the top: 2539 sets the bar; 2604 >= 2539 -> inefficient; 1953 < 2539 -> efficient.
        let em = EnergyModel::new(
            &[
                (1_000_000, 100_000),
                (1_500_000, 200_000),
                (2_000_000, 260_000),
            ],
            1024,
        )
        .unwrap();
        let got: Vec<(u64, u64, bool)> = em
            .states()
            .iter()
            .map(|s| (s.performance, s.cost, s.inefficient))
            .collect();
        assert_eq!(
            got,
            [(512, 1953, false), (768, 2604, true), (1024, 2539, false)]
        );
        assert_eq!(em.inefficient(), [false, true, false]);
        assert_eq!(em.power_mw(1_500_000), Some(200.0));
        // Second method: cost is proportional to power x fmax / freq, whose ordering is the same
        // (100 000 x 2 = 200 000; 200 000 x 4/3 = 266 667; 260 000).
        let ratio = |uw: f64, khz: f64| uw * 2_000_000.0 / khz;
        assert!(ratio(200_000.0, 1_500_000.0) > ratio(260_000.0, 2_000_000.0));
        assert!(ratio(100_000.0, 1_000_000.0) < ratio(260_000.0, 2_000_000.0));
    }

    #[test]
    fn equal_voltage_makes_the_lower_opp_inefficient_under_cv2f() {
        // With P = C V^2 f, cost ~ V^2: an OPP at the voltage of a higher one costs the same
        // per unit of work, so the kernel's ">=" marks it. 400 and 800 MHz at 0.9 V, 1 GHz at
        // 1.0 V, C = 100: 32 400, 64 800, 100 000 uW; performance 409, 819, 1024; cost 792, 791,
        // 976. 791 < 976 efficient; 792 >= 791 inefficient (integer rounding decides the tie).
        let em = EnergyModel::new(
            &[
                (400_000, dt_power_uw(100, 900_000, 400_000)),
                (800_000, dt_power_uw(100, 900_000, 800_000)),
                (1_000_000, dt_power_uw(100, 1_000_000, 1_000_000)),
            ],
            1024,
        )
        .unwrap();
        let costs: Vec<u64> = em.states().iter().map(|s| s.cost).collect();
        assert_eq!(costs, [792, 791, 976]);
        assert_eq!(em.inefficient(), [true, false, false]);
    }

    #[test]
    fn the_kernel_refuses_zero_power_and_falling_frequencies() {
        assert!(EnergyModel::new(&[(1, 0)], 1024)
            .unwrap_err()
            .contains("1..="));
        assert!(EnergyModel::new(&[(2, 5), (1, 5)], 1024)
            .unwrap_err()
            .contains("rising"));
        assert!(EnergyModel::new(&[], 1024).is_err());
        assert!(EnergyModel::new(&[(1, EM_MAX_POWER_UW + 1)], 1024).is_err());
    }

    #[test]
    fn the_estimate_rule_spans_its_constants() {
        // C 100 / 140 / 311 uW/MHz/V^2, V 0.9 / 1.0 / 1.1 V at 1000 MHz:
        // low 100 x 0.81 = 81 mW; central 140 mW; high 311 x 1.21 = 376.31 mW.
        let s = estimate_mw(
            Span {
                low: 100.0,
                central: 140.0,
                high: 311.0,
            },
            Span {
                low: 0.9,
                central: 1.0,
                high: 1.1,
            },
            1000.0,
        );
        assert!((s.low - 81.0).abs() < 1e-9);
        assert!((s.central - 140.0).abs() < 1e-9);
        assert!((s.high - 376.31).abs() < 1e-9);
    }
}
