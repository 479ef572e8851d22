//! `torpor run --fio`: each variant's jobs as fio's normal output prints them, from the
//! numbers `report::fio` gives for a job (exact clat min/max/mean/stdev, the percentiles fio's
//! own histogram gives, the job's runtime as fio counts it).
//!
//! The layout follows fio's `stat.c` (axboe/fio, read for this module, with `lib/num2str.c`):
//!
//! 1. a job's header (`show_thread_status_normal`): torpor has no pid and no date, so it says
//!    `pid=0` and that the run is simulated; every job is in group 0, as in a job file
//!    without `stonewall` or `new_group`; a job that completed no IO prints nothing;
//! 2. per direction that completed IO (`show_ddir_status`): IOPS and bandwidth, as fio
//!    computes them in integers (`1000 x ios / runtime_ms`, `1000 x bytes / runtime_ms`),
//!    the `clat` line (`display_lat`: nsec, switched to usec or msec only when min, max and
//!    the deviation are all large enough) and the `clat percentiles` block
//!    (`show_clat_percentiles`: one unit for the block, values rounded up into it, as many
//!    per line as fit in 80 columns);
//! 3. the group's sums (`__show_run_stats`, `show_group_stats`): per direction, the aggregate
//!    bandwidth (all the jobs' bytes over the longest runtime), the lowest and highest job
//!    bandwidth, the bytes and the shortest and longest runtime;
//! 4. every scaled number through fio's `num2str` (below), with fio's defaults: `kb_base=1024`,
//!    4 significant figures, bytes per second.
//!
//! Lines about CPU use, IO depths and latency buckets are left out: the simulation does not
//! measure what they report.

use serde::Deserialize;

use crate::report::fio::{FioDirStats, FioJobStats};

/// fio's `sig_figs` default: the digits `num2str` keeps for IOPS and bandwidth.
const SIG_FIGS: usize = 4;
/// The directions fio prints, with their label in the group's lines.
const DIRECTIONS: [(Dir, &str); 2] = [(Dir::Read, "   READ"), (Dir::Write, "  WRITE")];

/// What this view reads of a run's report (its JSON form; other fields are not read).
#[derive(Clone, Debug, Deserialize)]
pub struct RunReport {
    pub variants: Vec<Variant>,
}

/// One variant: its name and its workloads.
#[derive(Clone, Debug, Deserialize)]
pub struct Variant {
    pub name: String,
    pub io: Io,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Io {
    pub workloads: Vec<Workload>,
}

/// A workload; only a job has `fio` (a replay has none).
#[derive(Clone, Debug, Deserialize)]
pub struct Workload {
    pub name: String,
    #[serde(default)]
    pub fio: Option<FioJobStats>,
}

#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
        }
    }

    fn of(self, job: &FioJobStats) -> Option<&FioDirStats> {
        match self {
            Dir::Read => job.read.as_ref(),
            Dir::Write => job.write.as_ref(),
        }
    }
}

/// The unit `num2str` appends (fio's `N2S_*`).
#[derive(Clone, Copy)]
enum Unit {
    None,
    Byte,
    BytePerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
        }
    }
}

/// The whole `--fio` output of a run: per variant a line naming it, then its jobs and their
/// group as fio prints them, then an empty line. `None` when no variant ran a job (fio's
/// output describes only jobs).
pub fn fio_text(report: &RunReport) -> Option<String> {
    let ran_a_job = report
        .variants
        .iter()
        .any(|v| v.io.workloads.iter().any(|w| w.fio.is_some()));
    if !ran_a_job {
        return None;
    }
    let mut lines = Vec::new();
    for v in &report.variants {
        lines.push(format!("variant {}:", v.name));
        variant_lines(v, &mut lines);
        lines.push(String::new());
    }
    Some(lines.join("\n"))
}

/// One variant's jobs (module doc, steps 1-2) and their group (step 3).
fn variant_lines(v: &Variant, out: &mut Vec<String>) {
    let jobs: Vec<(&str, &FioJobStats)> =
        v.io.workloads
            .iter()
            .filter_map(|w| Some((w.name.as_str(), w.fio.as_ref()?)))
            .collect();
    for &(name, job) in &jobs {
        if job.read.is_none() && job.write.is_none() {
            continue;
        }
        out.push(format!(
            "{name}: (groupid=0, jobs=1): err= 0: pid=0: simulated by torpor"
        ));
        for (dir, _) in DIRECTIONS {
            if let (Some(stats), runtime_ms @ 1..) = (dir.of(job), job.runtime_ms) {
                ddir_status(dir.name(), stats, runtime_ms, out);
            }
        }
    }
    group_stats(jobs.iter().map(|&(_, job)| job), out);
}

/// fio's `num2str`: `num` in at most `maxlen` digits, divided by 1000 (or 1024 with `pow2`)
/// until it fits, with the SI (or IEC) prefix of the divisions and `unit`. Its quirks kept:
///
/// 1. the divisions stop after six (fio bounds them by its prefix array's length); fio has no
///    prefix past P, and what it prints for 10^18 or more is undefined: here no prefix;
/// 2. with room for one digit or none after the integer part, the last remainder rounds the
///    integer up when it is at least half the divisor;
/// 3. otherwise the remainder's fraction is printed with the digits left over (`maxlen` -
///    integer digits - 1) after "0." of a `%.Nf`, so a fraction that rounds up to 1 prints
///    as zeros, its carry dropped (40 960 B prints `40.0kB`).
fn num2str(mut num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 6] = ["", "k", "M", "G", "T", "P"];
    const IEC: [&str; 6] = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];
    let (prefixes, thousand) = if pow2 { (IEC, 1024) } else { (SI, 1000) };
    let digits = |n: u64| n.to_string().len();
    let mut post = 0;
    let mut remainder = None;
    while post < prefixes.len() && digits(num) > maxlen {
        remainder = Some(num % thousand);
        num /= thousand;
        post += 1;
    }
    let prefix = |post: usize| prefixes.get(post).copied().unwrap_or("");
    let Some(modulo) = remainder else {
        return format!("{num}{}{}", prefix(post), unit.suffix());
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        if modulo >= thousand / 2 {
            num += 1;
        }
        return format!("{num}{}{}", prefix(post), unit.suffix());
    }
    let fraction = format!("{:.*}", room as usize - 1, modulo as f64 / thousand as f64);
    format!("{num}.{}{}{}", &fraction[2..], prefix(post), unit.suffix())
}

/// `x` as C's `%5.2f` prints it (a sample deviation that overflowed is NaN: `  nan`).
fn f5_2(x: f64) -> String {
    if x.is_nan() {
        format!("{:>5}", "nan")
    } else {
        format!("{x:5.2}")
    }
}

/// fio's `display_lat`: nsec, or usec or msec when min, max and the deviation are all large
/// enough (the integers divided down, the mean and deviation as fractions).
fn display_lat(name: &str, lo: u64, hi: u64, mean: f64, dev: f64) -> String {
    let (lo, hi, mean, dev, base) = if lo > 2_000_000 && hi > 99_999_999 && dev > 1_000_000.0 {
        (
            lo / 1_000_000,
            hi / 1_000_000,
            mean / 1e6,
            dev / 1e6,
            "msec",
        )
    } else if lo > 2000 && hi > 99_999 && dev > 1000.0 {
        (lo / 1000, hi / 1000, mean / 1e3, dev / 1e3, "usec")
    } else {
        (lo, hi, mean, dev, "nsec")
    };
    format!(
        "    {name} ({base}): min={}, max={}, avg={}, stdev={}",
        num2str(lo, 6, false, Unit::None),
        num2str(hi, 6, false, Unit::None),
        f5_2(mean),
        f5_2(dev),
    )
}

/// fio's `show_clat_percentiles` for `[percent, ns]` points (two decimals of percent): one
/// unit for the block (msec or usec when the lowest and highest values are large enough),
/// each value rounded up into it, in columns as wide as the highest value (at least 5), as
/// many per line as fit in 80 columns.
fn clat_percentiles(points: &[(f64, u64)], out: &mut Vec<String>) {
    const PRECISION: usize = 2;
    let (Some(lo), Some(hi)) = (
        points.iter().map(|p| p.1).min(),
        points.iter().map(|p| p.1).max(),
    ) else {
        return;
    };
    let (scale, divisor, unit) = if lo > 2_000_000 && hi > 99_999_999 {
        (2, 1_000_000, "msec")
    } else if lo > 2000 && hi > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let top = hi / divisor;
    let width = if top > 0 {
        top.to_string().len().max(5)
    } else {
        5
    };
    let per_line = (80 - 7) / (PRECISION + 10 + width);
    out.push(format!("    clat percentiles ({unit}):"));
    let mut line = String::from("     |");
    for (j, &(pct, ns)) in points.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            line = String::from("     |");
        }
        let value = (0..scale).fold(ns, |v, _| v.div_ceil(1000));
        let last = j == points.len() - 1;
        line += &format!(
            " {pct:w$.PRECISION$}th=[{value:width$}]{}",
            if last { "" } else { "," },
            w = PRECISION + 3,
        );
        if last || j % per_line == per_line - 1 {
            out.push(line.clone());
        }
    }
}

/// fio's `show_ddir_status` for one direction of a job that ran `runtime_ms` (> 0).
fn ddir_status(dir: &str, s: &FioDirStats, runtime_ms: u64, out: &mut Vec<String>) {
    let bw = per_second(s.bytes, runtime_ms);
    let iops = per_second(s.ios, runtime_ms);
    out.push(format!(
        "  {dir}: IOPS={}, BW={} ({})({}/{runtime_ms}msec)",
        num2str(iops, SIG_FIGS, false, Unit::None),
        num2str(bw, SIG_FIGS, true, Unit::BytePerSec),
        num2str(bw, SIG_FIGS, false, Unit::BytePerSec),
        num2str(s.bytes, SIG_FIGS, true, Unit::Byte),
    ));
    out.push(display_lat(
        "clat",
        s.clat_min_ns,
        s.clat_max_ns,
        s.clat_mean_ns,
        s.clat_stdev_ns.unwrap_or(f64::NAN),
    ));
    clat_percentiles(&s.clat_percentiles_ns, out);
}

/// `n` per `ms` milliseconds as a whole rate per second, rounded down (fio's integer
/// arithmetic).
fn per_second(n: u64, ms: u64) -> u64 {
    (u128::from(n) * 1000 / u128::from(ms)) as u64
}

/// fio's group sums (`__show_run_stats`) and their lines (`show_group_stats`), for group 0:
/// per direction, over the jobs that completed IO in it within a runtime.
fn group_stats<'a>(jobs: impl Iterator<Item = &'a FioJobStats> + Clone, out: &mut Vec<String>) {
    out.push(String::new());
    out.push("Run status group 0 (all jobs):".into());
    for (dir, label) in DIRECTIONS {
        let runs: Vec<(u64, u64)> = jobs
            .clone()
            .filter(|j| j.runtime_ms > 0)
            .filter_map(|j| Some((j.runtime_ms, dir.of(j)?.bytes)))
            .collect();
        let (Some(min_run), Some(max_run)) = (
            runs.iter().map(|r| r.0).min(),
            runs.iter().map(|r| r.0).max(),
        ) else {
            continue;
        };
        let bws = runs.iter().map(|&(ms, bytes)| per_second(bytes, ms));
        let (min_bw, max_bw) = (bws.clone().min().unwrap_or(0), bws.max().unwrap_or(0));
        let total: u64 = runs.iter().map(|r| r.1).sum();
        let agg = per_second(total, max_run);
        let both = |n, unit| {
            (
                num2str(n, SIG_FIGS, true, unit),
                num2str(n, SIG_FIGS, false, unit),
            )
        };
        let (agg_p, agg_si) = both(agg, Unit::BytePerSec);
        let (min_p, min_si) = both(min_bw, Unit::BytePerSec);
        let (max_p, max_si) = both(max_bw, Unit::BytePerSec);
        let (io_p, io_si) = both(total, Unit::Byte);
        out.push(format!(
            "{label}: bw={agg_p} ({agg_si}), {min_p}-{max_p} ({min_si}-{max_si}), \
             io={io_p} ({io_si}), run={min_run}-{max_run}msec"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_follows_fio() {
        // By fio's algorithm: fits in 4 digits -> as is; else divide by 1000/1024 until it
        // fits, keeping the remainder for maxlen - digits - 1 decimals.
        assert_eq!(num2str(100, 4, false, Unit::None), "100");
        // 409 600 / 1024 = 400 r 0: one decimal of room? 4 - 3 = 1: no decimals, no carry.
        assert_eq!(num2str(409_600, 4, true, Unit::BytePerSec), "400KiB/s");
        // 409 600 / 1000 = 409 r 600 >= 500: rounds up to 410.
        assert_eq!(num2str(409_600, 4, false, Unit::BytePerSec), "410kB/s");
        assert_eq!(num2str(1_536, 4, true, Unit::Byte), "1536B");
        // 15 360 / 1024 = 15 r 0: two digits, one decimal: "15.0".
        assert_eq!(num2str(15_360, 4, true, Unit::Byte), "15.0KiB");
        // 123 456 789 / 1000 = 123 456 r 789: six digits fit, no room: carry -> 123 457.
        assert_eq!(num2str(123_456_789, 6, false, Unit::None), "123457k");
        // 1 048 576 000 / 1024 = 1 024 000, / 1024 = 1000 r 0.
        assert_eq!(
            num2str(1_048_576_000, 4, true, Unit::BytePerSec),
            "1000MiB/s"
        );
    }

    #[test]
    fn num2str_drops_a_fractions_carry_and_stops_after_the_last_prefix() {
        // 40 960 / 1000 = 40 r 960: one decimal, 0.960 prints "1.0", whose "0" is kept and
        // whose carry is lost: 40.0k (fio prints the same for 40 KiB in SI units).
        assert_eq!(num2str(40_960, 4, false, Unit::Byte), "40.0kB");
        // 20 480 / 1000 = 20 r 480: 0.48 -> "0.5".
        assert_eq!(num2str(20_480, 4, false, Unit::BytePerSec), "20.5kB/s");
        // u64::MAX, 18 446 744 073 709 551 615, after six divisions by 1000 is 18 r 446: one
        // decimal, "18.4", and no prefix past P.
        assert_eq!(num2str(u64::MAX, 4, false, Unit::None), "18.4");
    }

    #[test]
    fn display_lat_switches_unit_only_when_spread_is_large() {
        // Constant 11 075 us: stdev 0 keeps nsec even though min and max are large.
        assert_eq!(
            display_lat("clat", 11_075_000, 11_075_000, 11_075_000.0, 0.0),
            "    clat (nsec): min=11075k, max=11075k, avg=11075000.00, stdev= 0.00"
        );
        // 3 ms to 150 ms, stdev 2 ms: msec.
        assert_eq!(
            display_lat("clat", 3_000_000, 150_000_000, 50e6, 2e6),
            "    clat (msec): min=3, max=150, avg=50.00, stdev= 2.00"
        );
        // A deviation that overflowed prints as C prints NaN, and keeps nsec.
        assert_eq!(
            display_lat("clat", 75_000, 75_000, 75_000.0, f64::NAN),
            "    clat (nsec): min=75000, max=75000, avg=75000.00, stdev=  nan"
        );
    }

    fn dir(ios: u64, bytes: u64, percentiles: Vec<(f64, u64)>) -> FioDirStats {
        FioDirStats {
            ios,
            bytes,
            clat_min_ns: 75_000,
            clat_max_ns: 11_075_000,
            clat_mean_ns: 9_975_000.0,
            clat_stdev_ns: Some(3_478_505.4),
            clat_percentiles_ns: percentiles,
        }
    }

    #[test]
    fn percentiles_round_up_into_one_unit_four_to_a_line() {
        // Values 75 264 and 11 075 584 ns: lo > 2000 and hi > 99 999, so usec, rounded up:
        // 76 and 11 076. hi is 5 digits: width 5, (80 - 7) / (2 + 10 + 5) = 4 per line.
        let points: Vec<(f64, u64)> = [1.0, 5.0, 10.0, 20.0, 30.0]
            .iter()
            .map(|&p| (p, if p <= 10.0 { 75_264 } else { 11_075_584 }))
            .collect();
        let mut out = Vec::new();
        clat_percentiles(&points, &mut out);
        assert_eq!(
            out,
            [
                "    clat percentiles (usec):",
                "     |  1.00th=[   76],  5.00th=[   76], 10.00th=[   76], 20.00th=[11076],",
                "     | 30.00th=[11076]",
            ]
        );
    }

    #[test]
    fn a_job_prints_its_directions_and_the_group_sums_them() {
        // Fixture of tests/test_fio.py (sleepy): 10 reads of 4 KiB in 2000 ms. IOPS 1000 x 10
        // / 2000 = 5; BW 1000 x 40 960 / 2000 = 20 480 B/s. Two such jobs in the group: io
        // 81 920 B = 80.0KiB (81.9kB), aggregate 81 920 B over the longest run (2000 ms) =
        // 40 960 B/s = 40.0KiB/s (40.0kB/s: the dropped carry).
        let job = FioJobStats {
            start_ns: 0,
            runtime_ms: 2000,
            read: Some(dir(10, 40_960, vec![(1.0, 75_264)])),
            write: None,
        };
        let workload = |name: &str| Workload {
            name: name.into(),
            fio: Some(job.clone()),
        };
        let report = RunReport {
            variants: vec![Variant {
                name: "v".into(),
                io: Io {
                    workloads: vec![workload("a"), workload("b")],
                },
            }],
        };
        let text = fio_text(&report).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "variant v:");
        assert_eq!(
            lines[1],
            "a: (groupid=0, jobs=1): err= 0: pid=0: simulated by torpor"
        );
        assert_eq!(
            lines[2],
            "  read: IOPS=5, BW=20.0KiB/s (20.5kB/s)(40.0KiB/2000msec)"
        );
        assert_eq!(
            lines[3],
            "    clat (usec): min=75, max=11075, avg=9975.00, stdev=3478.51"
        );
        assert_eq!(
            &lines[lines.len() - 3..],
            [
                "",
                "Run status group 0 (all jobs):",
                "   READ: bw=40.0KiB/s (40.0kB/s), 20.0KiB/s-20.0KiB/s (20.5kB/s-20.5kB/s), \
                 io=80.0KiB (81.9kB), run=2000-2000msec",
            ]
        );
        assert!(text.ends_with("msec\n"));
    }

    #[test]
    fn a_run_without_jobs_has_no_fio_text() {
        let report = RunReport {
            variants: vec![Variant {
                name: "replay".into(),
                io: Io {
                    workloads: vec![Workload {
                        name: "trace".into(),
                        fio: None,
                    }],
                },
            }],
        };
        assert_eq!(fio_text(&report), None);
    }
}
