//! idlestat's comparison report (`idlestat -r comparison -b BASELINE`) of a CPU run's idle
//! states, as seed 004 prints it: per CPU and state the average stay, the total, the entries,
//! the too-deep (over) and too-shallow (under) counts, and under each row its difference from
//! the baseline's same CPU and state. torpor keeps no per-period minimum or maximum, so those
//! two columns are left out.
//!
//! Durations are written idlestat's way: whole microseconds below 1 ms, then milliseconds and
//! seconds with two decimals; a difference carries its sign.

use serde::Deserialize;

/// One idle state of a CPU as the run's report gives it (its other fields are not read).
#[derive(Clone, Debug, Deserialize)]
pub struct StateCounts {
    pub name: String,
    pub time_ns: u64,
    pub entries: u64,
    pub above: u64,
    pub below: u64,
}

impl StateCounts {
    /// The average stay, ns (0 for a state never entered).
    fn avg_ns(&self) -> f64 {
        if self.entries == 0 {
            0.0
        } else {
            self.time_ns as f64 / self.entries as f64
        }
    }
}

/// One CPU of the report's `cpu.cpus`.
#[derive(Clone, Debug, Deserialize)]
pub struct CpuCounts {
    pub cpu: u32,
    pub states: Vec<StateCounts>,
}

/// Why a comparison cannot be written: the baseline lacks a CPU or state the run has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched(pub String);

impl std::fmt::Display for Unmatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the baseline has no {}", self.0)
    }
}

impl std::error::Error for Unmatched {}

const RULE: &str = "----------------------------------------------------------------";

/// The report's lines: `cpus` alone when `baseline` is `None` (the baseline's own table),
/// else with the difference rows; the baseline's CPUs and states pair with the run's in order.
pub fn lines(cpus: &[CpuCounts], baseline: Option<&[CpuCounts]>) -> Result<Vec<String>, Unmatched> {
    let mut out = vec![
        RULE.to_owned(),
        "| C-state  |      avg |    total |  hits |  over | under |".to_owned(),
        RULE.to_owned(),
    ];
    for (i, cpu) in cpus.iter().enumerate() {
        out.push(format!("| cpu{} |", cpu.cpu));
        out.push(RULE.to_owned());
        let base_cpu = match baseline {
            Some(b) => Some(
                b.get(i)
                    .ok_or_else(|| Unmatched(format!("cpu{}", cpu.cpu)))?,
            ),
            None => None,
        };
        for (k, s) in cpu.states.iter().enumerate() {
            out.push(format!(
                "| {:8} | {:>8} | {:>8} | {:5} | {:5} | {:5} |",
                s.name,
                duration(s.avg_ns()),
                duration(s.time_ns as f64),
                s.entries,
                s.above,
                s.below
            ));
            if let Some(base_cpu) = base_cpu {
                let b = base_cpu
                    .states
                    .get(k)
                    .ok_or_else(|| Unmatched(format!("state {} of cpu{}", s.name, cpu.cpu)))?;
                out.push(format!(
                    "|          | {:>8} | {:>8} | {:+5} | {:+5} | {:+5} |",
                    signed(s.avg_ns() - b.avg_ns()),
                    signed(s.time_ns as f64 - b.time_ns as f64),
                    s.entries as i64 - b.entries as i64,
                    s.above as i64 - b.above as i64,
                    s.below as i64 - b.below as i64
                ));
            }
        }
        out.push(RULE.to_owned());
    }
    Ok(out)
}

/// A duration in idlestat's units: `123us`, `1.23ms`, `1.23s`.
fn duration(ns: f64) -> String {
    let us = ns / 1e3;
    if us.abs() < 1000.0 {
        format!("{us:.0}us")
    } else if us.abs() < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// A difference with its sign (`+` for zero).
fn signed(ns: f64) -> String {
    let sign = if ns >= 0.0 { '+' } else { '-' };
    format!("{sign}{}", duration(ns.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, time_ns: u64, entries: u64, above: u64, below: u64) -> StateCounts {
        StateCounts {
            name: name.into(),
            time_ns,
            entries,
            above,
            below,
        }
    }

    #[test]
    fn durations_in_idlestat_units() {
        assert_eq!(duration(999_400.0), "999us");
        assert_eq!(duration(1_234_000.0), "1.23ms");
        assert_eq!(duration(2_500_000_000.0), "2.50s");
        assert_eq!(signed(0.0), "+0us");
        assert_eq!(signed(-1_500_000.0), "-1.50ms");
    }

    #[test]
    fn a_run_against_its_baseline() {
        // CPU 0: WFI 3 ms over 4 entries (750 us each), baseline 2 ms over 2 (1 ms each):
        // by hand avg -250 us, total +1.00 ms, hits +2, over -1, under +0.
        let run = [CpuCounts {
            cpu: 0,
            states: vec![state("WFI", 3_000_000, 4, 1, 2)],
        }];
        let base = [CpuCounts {
            cpu: 0,
            states: vec![state("WFI", 2_000_000, 2, 2, 2)],
        }];
        let out = lines(&run, Some(&base)).unwrap();
        assert_eq!(out[3], "| cpu0 |");
        assert_eq!(
            out[5],
            "| WFI      |    750us |   3.00ms |     4 |     1 |     2 |"
        );
        assert_eq!(
            out[6],
            "|          |   -250us |  +1.00ms |    +2 |    -1 |    +0 |"
        );
        assert_eq!(out.len(), 8);
        // Alone: no difference rows; a state never entered averages 0.
        let idle = [CpuCounts {
            cpu: 1,
            states: vec![state("spc", 0, 0, 0, 0)],
        }];
        assert_eq!(
            lines_alone(&idle)[5],
            "| spc      |      0us |      0us |     0 |     0 |     0 |"
        );
        // A baseline without the run's CPU is an error, not a panic.
        assert_eq!(
            lines(&idle, Some(&[])).unwrap_err(),
            Unmatched("cpu1".into())
        );
    }

    fn lines_alone(cpus: &[CpuCounts]) -> Vec<String> {
        lines(cpus, None).unwrap()
    }
}
