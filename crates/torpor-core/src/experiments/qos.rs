//! Seed 004's claims (Alex Shi, "[PATCH v2 0/3] per cpu resume latency", 2017-01-12):
//! cyclictest on cpu0 of a DragonBoard 410c without a limit, under the global limit
//! (`/dev/cpu_dma_latency`) and under cpu0's `pm_qos_resume_latency_us`, both below spc's
//! 280 us. The runs are the Python package's (`torpor reproduce qos`); their rows come here,
//! with the same rows again at each end of cyclictest's burst (an estimate), and go back as
//! verdicts with their robustness.

use serde::{Deserialize, Serialize};

use super::claim::{robustness, Claim, End, JudgedClaim};
use super::format::{percent, signed_percent};
use super::row_lookup::{find, present, MissingRow};

const SEED: &str = "004";
/// The three configurations, in the seed's order: no limit, the global one, cpu0's own.
const NONE: &str = "none";
const GLOBAL: &str = "global";
const PER_CPU: &str = "per-cpu";
/// The seed's cyclictest lines, us: (min, act, avg, max), without a limit ...
const SEED_LATENCY_NONE: [u32; 4] = [87, 209, 205, 239];
/// ... and under cpu0's limit (every wake-up from WFI).
const SEED_LATENCY_PER_CPU: [u32; 4] = [82, 91, 95, 110];
/// "Roughly halves": the ratio of the averages within [0.3, 0.7] (seed: 95 / 205 = 0.46).
const HALF_RANGE: (f64, f64) = (0.3, 0.7);
/// cyclictest's min and avg against the seed's: within 30 % either way.
const LATENCY_TOLERANCE: f64 = 0.30;
/// What the per-CPU run's figures were fitted to (`fitted_to`).
const FITTED_PATH: &str = "the qcom-msm8916 wake path's timer interrupt and scheduler costs, \
    fitted to the seed's WFI-only run (Min 82, Avg 95, Max 110 us)";

/// A CPU of a row, or the whole platform ("all").
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CpuOf {
    Cpu(u32),
    Platform(String),
}

impl std::fmt::Display for CpuOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuOf::Cpu(n) => write!(f, "cpu{n}"),
            CpuOf::Platform(name) => write!(f, "cpu {name:?}"),
        }
    }
}

/// A `runs` row of results.json: one configuration and CPU (or the platform).
#[derive(Clone, Debug, Deserialize)]
pub struct QosRow {
    pub config: String,
    pub cpu: CpuOf,
    /// cyclictest's latency, us (cpu0's rows only).
    pub lat_min_us: Option<f64>,
    pub lat_avg_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    /// Each idle state's share of the run, percent.
    pub residency_pct: std::collections::BTreeMap<String, f64>,
    pub energy_mj: f64,
}

/// The rows of the runs with cyclictest's burst at one end of its range.
#[derive(Clone, Debug, Deserialize)]
pub struct BurstEnd {
    pub burst_us: u32,
    pub runs: Vec<QosRow>,
}

/// What the Python side collects: the central runs' rows, cyclictest's burst there (an
/// estimate) and the rows at each end of its range.
#[derive(Clone, Debug, Deserialize)]
pub struct QosInputs {
    pub burst_us: u32,
    pub runs: Vec<QosRow>,
    pub burst_ends: Vec<BurstEnd>,
}

/// The verdicts. The reports quote no measure derived from the rows beyond them, so there are
/// no figures.
#[derive(Clone, Debug, Serialize)]
pub struct QosJudgement {
    pub claims: Vec<JudgedClaim>,
}

/// The claims on the central runs with their robustness over the burst's ends.
pub fn judge(inputs: QosInputs) -> Result<QosJudgement, MissingRow> {
    let ends = inputs
        .burst_ends
        .iter()
        .map(|end| {
            let claims = claims(&end.runs)?.into_iter().map(Some).collect();
            Ok((format!("cyclictest's burst at {} us", end.burst_us), claims))
        })
        .collect::<Result<Vec<End>, MissingRow>>()?;
    let basis = robust_basis(inputs.burst_us, &inputs.burst_ends);
    Ok(QosJudgement {
        claims: robustness(claims(&inputs.runs)?, &ends, &basis),
    })
}

/// What the robustness is checked against: the burst's ends (the first and last given).
fn robust_basis(burst_us: u32, ends: &[BurstEnd]) -> String {
    let (lo, hi) = (
        ends.first().map_or(burst_us, |e| e.burst_us),
        ends.last().map_or(burst_us, |e| e.burst_us),
    );
    format!(
        "cyclictest's burst (an estimate, {burst_us} us) at both ends of its {lo}-{hi} us \
         range; the wake path's costs are drawn over their ranges at every wake-up; the \
         estimated powers are not rerun at their ends (only their order is compared)"
    )
}

/// The six claims, in the report's order.
pub fn claims(rows: &[QosRow]) -> Result<Vec<Claim>, MissingRow> {
    Ok(vec![
        halves(rows, PER_CPU)?,
        halves(rows, GLOBAL)?,
        others_sleep(rows)?,
        energy(rows)?,
        latency(rows, NONE)?,
        latency(rows, PER_CPU)?,
    ])
}

fn row<'a>(rows: &'a [QosRow], config: &str, cpu: &CpuOf) -> Result<&'a QosRow, MissingRow> {
    find(
        rows,
        |r| r.config == config && r.cpu == *cpu,
        || format!("config {config}, {cpu}"),
    )
}

fn cpu0_avg(rows: &[QosRow], config: &str) -> Result<f64, MissingRow> {
    present(row(rows, config, &CpuOf::Cpu(0))?.lat_avg_us, || {
        format!("config {config}, cpu0's lat_avg_us")
    })
}

/// `state`'s share of the run on `cpu` under `config`, percent (0 when the row has none).
fn share(rows: &[QosRow], config: &str, cpu: u32, state: &str) -> Result<f64, MissingRow> {
    let r = row(rows, config, &CpuOf::Cpu(cpu))?;
    Ok(r.residency_pct.get(state).copied().unwrap_or(0.0))
}

/// Rule: cpu0's average latency under `config` over the unconstrained one lies within
/// [`HALF_RANGE`] (the seed's "roughly halves").
fn halves(rows: &[QosRow], config: &str) -> Result<Claim, MissingRow> {
    let base = cpu0_avg(rows, NONE)?;
    let got = cpu0_avg(rows, config)?;
    let ratio = if base != 0.0 { got / base } else { f64::NAN };
    let (lo, hi) = HALF_RANGE;
    let seed = f64::from(SEED_LATENCY_PER_CPU[2]) / f64::from(SEED_LATENCY_NONE[2]);
    let claim = Claim::new(
        SEED,
        format!("cpu0's average cyclictest latency roughly halves under the {config} limit"),
        format!("Avg 205 -> 95 us ({seed:.2}; per-CPU; 'similar' with cpu_dma_latency)"),
        format!(
            "{base:.1} -> {got:.1} us ({ratio:.3}; rule {lo}-{hi}). The WFI-only average is \
             calibration (the path is fitted to it); the unconstrained one is predicted"
        ),
        Some(lo <= ratio && ratio <= hi),
    );
    Ok(if config == PER_CPU {
        claim.fitted_to(format!("{FITTED_PATH} (the ratio's numerator)"))
    } else {
        claim
    })
}

/// Rule: under the per-CPU limit cpu1-3 each spend more than half the run in spc; under the
/// global one each spends more than half in WFI.
fn others_sleep(rows: &[QosRow]) -> Result<Claim, MissingRow> {
    let per = [1, 2, 3]
        .map(|c| share(rows, PER_CPU, c, "spc"))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let glob = [1, 2, 3]
        .map(|c| share(rows, GLOBAL, c, "WFI"))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let list = |xs: &[f64]| {
        xs.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok(Claim::new(
        SEED,
        "Under the per-CPU limit cpu1-3 still sleep in spc; under cpu_dma_latency they stay in WFI",
        "cpu1-3 ~9.9 s of 10 s in spc (per-CPU); 'nearly stay in WFI' (global)",
        format!(
            "spc % per-CPU: {}; WFI % global: {}",
            list(&per),
            list(&glob)
        ),
        Some(per.iter().all(|p| *p > 50.0) && glob.iter().all(|g| *g > 50.0)),
    ))
}

/// Rule: the whole platform's energy under the per-CPU limit is below the global limit's, and
/// no limit's is at most the per-CPU one's (the limit on one CPU costs only that CPU's deep
/// idle).
fn energy(rows: &[QosRow]) -> Result<Claim, MissingRow> {
    let all = CpuOf::Platform("all".into());
    let e = |config: &str| row(rows, config, &all).map(|r| r.energy_mj);
    let (none, global, per_cpu) = (e(NONE)?, e(GLOBAL)?, e(PER_CPU)?);
    Ok(Claim::new(
        SEED,
        "cpu_dma_latency keeps every CPU restless, a big power waste; the per-CPU limit costs \
         only cpu0",
        "no energy figure (idlestat residencies only)",
        format!(
            "platform energy: none {none:.1}, per-CPU {per_cpu:.1}, global {global:.1} mJ \
             (power figures are ESTIMATES; only their order is compared)"
        ),
        Some(none <= per_cpu && per_cpu < global),
    ))
}

/// Rule: cpu0's min and avg under `config` each within [`LATENCY_TOLERANCE`] of the seed's,
/// either way.
fn latency(rows: &[QosRow], config: &str) -> Result<Claim, MissingRow> {
    let r = row(rows, config, &CpuOf::Cpu(0))?;
    let [s_min, _, s_avg, s_max] = if config == PER_CPU {
        SEED_LATENCY_PER_CPU
    } else {
        SEED_LATENCY_NONE
    };
    let field =
        |v: Option<f64>, name: &str| present(v, || format!("config {config}, cpu0's {name}"));
    let min = field(r.lat_min_us, "lat_min_us")?;
    let avg = field(r.lat_avg_us, "lat_avg_us")?;
    let max = field(r.lat_max_us, "lat_max_us")?;
    let off_min = min / f64::from(s_min) - 1.0;
    let off_avg = avg / f64::from(s_avg) - 1.0;
    let mut what = if config == PER_CPU {
        "calibration: the timer interrupt and scheduler are fitted to this run".to_owned()
    } else {
        "prediction: spc's exit is the DT's 150 us, not fitted".to_owned()
    };
    let label = if config == NONE {
        "without a limit"
    } else {
        "under cpu0's resume-latency limit"
    };
    let wfi = share(rows, config, 0, "WFI")?;
    if off_min.abs() > LATENCY_TOLERANCE && share(rows, config, 0, "spc")? > 50.0 {
        what += &format!(
            "; cpu0 spent {wfi:.1} % of the run in WFI, so no wake-up skipped spc's exit, \
             where the seed's Min {s_min} us is one that did"
        );
    }
    let claim = Claim::new(
        SEED,
        format!("cyclictest's Min and Avg on the DragonBoard 410c {label}"),
        format!("Min {s_min} Avg {s_avg} Max {s_max} us"),
        format!(
            "Min {min:.0} ({}) Avg {avg:.0} ({}) Max {max:.0} us (rule: within {}); {what}",
            signed_percent(off_min, 0),
            signed_percent(off_avg, 0),
            percent(LATENCY_TOLERANCE, 0),
        ),
        Some(off_min.abs() <= LATENCY_TOLERANCE && off_avg.abs() <= LATENCY_TOLERANCE),
    );
    Ok(if config == PER_CPU {
        claim.fitted_to(FITTED_PATH)
    } else {
        claim
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cpu0 row with cyclictest's (min, avg, max) and its WFI share (the rest spc).
    fn cpu0(config: &str, lat: (f64, f64, f64), wfi_pct: f64) -> QosRow {
        QosRow {
            config: config.into(),
            cpu: CpuOf::Cpu(0),
            lat_min_us: Some(lat.0),
            lat_avg_us: Some(lat.1),
            lat_max_us: Some(lat.2),
            residency_pct: [("WFI".into(), wfi_pct), ("spc".into(), 100.0 - wfi_pct)].into(),
            energy_mj: 0.0,
        }
    }

    fn idle(config: &str, cpu: u32, spc_pct: f64) -> QosRow {
        QosRow {
            config: config.into(),
            cpu: CpuOf::Cpu(cpu),
            lat_min_us: None,
            lat_avg_us: None,
            lat_max_us: None,
            residency_pct: [("WFI".into(), 100.0 - spc_pct), ("spc".into(), spc_pct)].into(),
            energy_mj: 0.0,
        }
    }

    fn platform(config: &str, energy_mj: f64) -> QosRow {
        QosRow {
            config: config.into(),
            cpu: CpuOf::Platform("all".into()),
            lat_min_us: None,
            lat_avg_us: None,
            lat_max_us: None,
            residency_pct: Default::default(),
            energy_mj,
        }
    }

    /// The three configurations: cpu0's average `none_avg` without a limit, `limited_avg`
    /// under either; cpu1-3 in spc except under the global limit; the platform energies.
    fn rows(none_avg: f64, limited_avg: f64, energy: [f64; 3]) -> Vec<QosRow> {
        let mut rows = vec![];
        for (i, config) in [NONE, GLOBAL, PER_CPU].into_iter().enumerate() {
            let avg = if config == NONE {
                none_avg
            } else {
                limited_avg
            };
            let wfi = if config == NONE { 0.0 } else { 100.0 };
            rows.push(cpu0(config, (avg - 10.0, avg, avg + 10.0), wfi));
            for c in 1..=3 {
                rows.push(idle(config, c, if config == GLOBAL { 0.0 } else { 100.0 }));
            }
            rows.push(platform(config, energy[i]));
        }
        rows
    }

    #[test]
    fn halving_needs_the_ratio_of_the_averages_between_three_and_seven_tenths() {
        // 100 / 250 = 0.4: holds; 200 / 250 = 0.8: fails; 75 / 250 = 0.3, the bound: holds.
        let ok = |limited| halves(&rows(250.0, limited, [1.0, 3.0, 2.0]), GLOBAL).unwrap();
        assert_eq!(ok(100.0).ok, Some(true));
        assert!(ok(100.0)
            .torpor_value
            .starts_with("250.0 -> 100.0 us (0.400; rule 0.3-0.7)"));
        assert_eq!(ok(200.0).ok, Some(false));
        assert_eq!(ok(75.0).ok, Some(true));
        // The seed's own ratio, 95 / 205 = 0.4634.
        assert!(ok(100.0).seed_value.contains("(0.46;"));
        // Only the per-CPU ratio's numerator is fitted.
        assert!(!ok(100.0).fitted);
        let per = halves(&rows(250.0, 100.0, [1.0, 3.0, 2.0]), PER_CPU).unwrap();
        assert!(per.fitted);
    }

    #[test]
    fn idle_cpus_must_follow_each_limit_for_more_than_half_the_run() {
        let mut r = rows(250.0, 100.0, [1.0, 3.0, 2.0]);
        let claim = others_sleep(&r).unwrap();
        assert_eq!(claim.ok, Some(true));
        assert_eq!(
            claim.torpor_value,
            "spc % per-CPU: 100.0, 100.0, 100.0; WFI % global: 100.0, 100.0, 100.0"
        );
        // cpu2 under the per-CPU limit in spc for exactly half the run: not more than half.
        let cpu2 = r
            .iter_mut()
            .find(|x| x.config == PER_CPU && x.cpu == CpuOf::Cpu(2));
        *cpu2.unwrap() = idle(PER_CPU, 2, 50.0);
        assert_eq!(others_sleep(&r).unwrap().ok, Some(false));
    }

    #[test]
    fn energy_orders_none_per_cpu_global() {
        let verdict = |e| energy(&rows(250.0, 100.0, e)).unwrap().ok;
        // none 1 <= per-CPU 2 < global 3 (the energies in the order none, global, per-CPU).
        assert_eq!(verdict([1.0, 3.0, 2.0]), Some(true));
        assert_eq!(verdict([2.0, 3.0, 2.0]), Some(true));
        // per-CPU equal to global: not below it.
        assert_eq!(verdict([1.0, 2.0, 2.0]), Some(false));
    }

    #[test]
    fn latency_within_thirty_percent_of_the_seed_on_min_and_avg() {
        // Per-CPU: the seed's Min 82 Avg 95. 95 - 10 = 85 is +4 %, 95 is +0 %: holds.
        let r = rows(246.0, 95.0, [1.0, 3.0, 2.0]);
        let c = latency(&r, PER_CPU).unwrap();
        assert_eq!(c.ok, Some(true));
        assert!(c
            .torpor_value
            .starts_with("Min 85 (+4%) Avg 95 (+0%) Max 105 us (rule: within 30%)"));
        assert!(c.fitted);
        // None: the seed's Min 87 Avg 205. Avg 246 is +20 %, min 236 is +171 %: fails, and
        // cpu0 never in WFI while mostly in spc says why.
        let c = latency(&r, NONE).unwrap();
        assert_eq!(c.ok, Some(false));
        assert!(c.torpor_value.starts_with("Min 236 (+171%) Avg 246 (+20%)"));
        assert!(c.torpor_value.ends_with(
            "; cpu0 spent 0.0 % of the run in WFI, so no wake-up skipped spc's exit, where the \
             seed's Min 87 us is one that did"
        ));
    }

    #[test]
    fn robustness_over_the_burst_ends_and_a_missing_row() {
        let central = rows(250.0, 100.0, [1.0, 3.0, 2.0]);
        // At the long burst the limited average reaches 200 / 250 = 0.8: halving fails there.
        let inputs = QosInputs {
            burst_us: 20,
            runs: central.clone(),
            burst_ends: vec![
                BurstEnd {
                    burst_us: 5,
                    runs: central.clone(),
                },
                BurstEnd {
                    burst_us: 50,
                    runs: rows(250.0, 200.0, [1.0, 3.0, 2.0]),
                },
            ],
        };
        let judged = judge(inputs).unwrap().claims;
        assert_eq!(judged[0].robust, Some(false));
        assert_eq!(
            judged[0].hinges_on.as_deref(),
            Some("holds at the central values; fails with cyclictest's burst at 50 us")
        );
        assert!(judged[0].robust_basis.starts_with(
            "cyclictest's burst (an estimate, 20 us) at both ends of its 5-50 us range;"
        ));
        let mut gone = central;
        gone.retain(|r| r.cpu != CpuOf::Platform("all".into()));
        let err = claims(&gone).unwrap_err();
        assert_eq!(err.to_string(), "no row for config none, cpu \"all\"");
    }
}
