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

use crate::cpufreq::schedutil::SCHED_CAPACITY_SCALE;
use crate::sim::Pcg32;
use crate::storage::io::IoOp;
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
                Nanos(round_to_u64(-(mean.0 as f64) * u.ln()))
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

/// `x.round() as u64` for `x >= 0` (halves away from zero, saturating), without libm's
/// `round`: this runs per burst. The fractional part `x - trunc(x)` of a double is exact.
#[inline]
fn round_to_u64(x: f64) -> u64 {
    let whole = x as u64;
    if x - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
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
    /// Only by its own IO completing: it issues the next IO at the end of each burst (fio's
    /// psync loop: read, process, read).
    Io,
}

/// The synchronous IO a task issues to the run's device: one request at the end of each
/// burst its wake-up source started, then it sleeps until the request completes, and runs
/// one more burst (processing what it read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskIo {
    pub op: IoOp,
    /// Random offsets (fio's randread/randwrite), else sequential.
    pub random: bool,
    pub bs: u32,
    /// The region's first byte and its length (fio's `offset` and `size`).
    pub offset: u64,
    pub size: u64,
    /// The device it goes to: its slot in the run (0 in a run with one device).
    pub device: u8,
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
    /// Synchronous IO to the run's device, if the task does any.
    pub io: Option<TaskIo>,
    /// Its timers' slack (`prctl(PR_SET_TIMERSLACK)`): a sleep's timer fires this much after
    /// the time asked for when nothing else expires it sooner. The kernel gives a normal task
    /// 50 us (`init_task`'s `timer_slack_ns`) and a real-time task none (`hrtimer_nanosleep`
    /// and `do_nanosleep` drop it for `rt_task`).
    pub timer_slack: Nanos,
    /// The run's workload (a fio job) whose thread this task is: woken by each of the job's
    /// completions, it hands them to fio when it runs (with `wake` [`Wake::Io`], no `io`).
    pub job: Option<u32>,
    /// Its utilization clamps (`sched_setattr`'s `sched_util_min`/`sched_util_max`, or its
    /// cgroup's `cpu.uclamp.*`, as the effective values the scheduler uses).
    pub uclamp: Uclamp,
}

/// A task's effective utilization clamps, capacity units (0 ..= 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uclamp {
    pub min: u32,
    pub max: u32,
}

impl Uclamp {
    /// A CFS task that set none: no floor, no cap (`uclamp_none`).
    pub const NONE: Uclamp = Uclamp {
        min: 0,
        max: SCHED_CAPACITY_SCALE,
    };
}

/// The kernel's default timer slack of a normal (SCHED_OTHER) task.
pub const DEFAULT_TIMER_SLACK: Nanos = Nanos(50_000);

impl TaskSpec {
    /// A cyclictest thread with a real-time priority (`-p`, so no timer slack): a periodic
    /// timer every `interval`; a short burst; its latency is the time from the timer's expiry
    /// to the thread running.
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
            io: None,
            timer_slack: Nanos::ZERO,
            job: None,
            uclamp: Uclamp::NONE,
        }
    }
}

/// `[[workload.task]]` as a scenario writes it: durations with units, the wake-up given by
/// `period` (a periodic timer or interrupt), by `sleep` / `sleep_mean` / `sleep_min` +
/// `sleep_max` (a sleep after each burst), or by neither (woken by the task that names it in
/// `wakes`); the burst by `run` / `run_mean` / `run_min` + `run_max`.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    pub name: String,
    pub cpu: u32,
    pub period: Option<String>,
    pub phase: Option<String>,
    pub jitter: Option<String>,
    pub sleep: Option<String>,
    pub sleep_mean: Option<String>,
    pub sleep_min: Option<String>,
    pub sleep_max: Option<String>,
    /// `"timer"` (default) or `"interrupt"`.
    pub source: Option<String>,
    pub run: Option<String>,
    pub run_mean: Option<String>,
    pub run_min: Option<String>,
    pub run_max: Option<String>,
    /// The name of the task this one wakes at the end of each burst.
    pub wakes: Option<String>,
    /// us written (a 4-byte s32) to `/dev/cpu_dma_latency`, held open for the whole run (a
    /// PM QoS request: `scenario::qos`).
    pub cpu_dma_latency_us: Option<i64>,
    /// Synchronous IO to a device of the scenario (`[workload.task.io]`).
    pub io: Option<TaskIoFile>,
    /// Its timers' slack, default 50 us (a normal task); "0us" for a real-time task.
    pub timer_slack: Option<String>,
    /// Its utilization clamps, 0 ..= 1024 (`sched_setattr`'s `sched_util_min` / `_max`).
    pub uclamp_min: Option<i64>,
    pub uclamp_max: Option<i64>,
}

/// `[workload.task.io]`: fio's names for one synchronous request at a time.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskIoFile {
    /// The platform it goes to: `"nvme"` or `"ufs"`.
    pub device: String,
    /// `read`, `randread`, `write` or `randwrite`.
    pub rw: String,
    #[serde(default = "default_bs")]
    pub bs: String,
    #[serde(default = "default_size")]
    pub size: String,
    #[serde(default)]
    pub offset: Option<String>,
}

/// A task's clamps as `sched_setattr` checks them (`uclamp_validate`): each within
/// 0 ..= 1024, the floor no higher than the cap.
fn uclamp(task: usize, f: &TaskFile) -> Result<Uclamp, TaskError> {
    let err = |key, message: String| TaskError { task, key, message };
    let scale = i64::from(SCHED_CAPACITY_SCALE);
    let value = |key: &'static str, v: Option<i64>, default: u32| {
        match v {
        None => Ok(default),
        Some(v) if (0..=scale).contains(&v) => Ok(v as u32),
        Some(v) => Err(err(
            key,
            format!("expected a clamp from 0 to {scale} (capacity units, as sched_setattr takes it), got {v}"),
        )),
    }
    };
    let min = value("uclamp_min", f.uclamp_min, 0)?;
    let max = value("uclamp_max", f.uclamp_max, SCHED_CAPACITY_SCALE)?;
    if min > max {
        return Err(err(
            "uclamp_min",
            format!("expected uclamp_min ({min}) at most uclamp_max ({max})"),
        ));
    }
    Ok(Uclamp { min, max })
}

fn default_bs() -> String {
    "4k".into()
}

fn default_size() -> String {
    "1g".into()
}

/// The largest block one task's request may move: 16 MiB.
pub const MAX_TASK_BS: u64 = 16 << 20;

/// A problem with one task: its index, the key at fault, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskError {
    pub task: usize,
    pub key: &'static str,
    pub message: String,
}

fn duration(
    task: usize,
    key: &'static str,
    v: &Option<String>,
) -> Result<Option<Nanos>, TaskError> {
    v.as_deref()
        .map(|text| {
            crate::time::parse_duration(text).map_err(|e| TaskError {
                task,
                key,
                message: e.to_string(),
            })
        })
        .transpose()
}

/// A length given one of three ways: `fixed`, `mean` (exponential) or `min` + `max`
/// (uniform).
fn dist(
    task: usize,
    keys: [&'static str; 4],
    values: [&Option<String>; 4],
) -> Result<Option<Dist>, TaskError> {
    let fixed = duration(task, keys[0], values[0])?;
    let mean = duration(task, keys[1], values[1])?;
    let min = duration(task, keys[2], values[2])?;
    let max = duration(task, keys[3], values[3])?;
    let err = |key, message: String| Err(TaskError { task, key, message });
    match (fixed, mean, min, max) {
        (None, None, None, None) => Ok(None),
        (Some(f), None, None, None) => Ok(Some(Dist::Fixed(f))),
        (None, Some(m), None, None) => Ok(Some(Dist::Exponential(m))),
        (None, None, Some(lo), Some(hi)) if lo <= hi => Ok(Some(Dist::Uniform(lo, hi))),
        (None, None, Some(_), Some(_)) => {
            err(keys[3], format!("expected `{}` >= `{}`", keys[3], keys[2]))
        }
        _ => err(
            keys[0],
            format!(
                "expected one of `{}` (fixed), `{}` (exponential) or `{}` + `{}` (uniform)",
                keys[0], keys[1], keys[2], keys[3]
            ),
        ),
    }
}

/// `[workload.task.io]` checked (the device against the scenario's platforms by the caller).
fn task_io(task: usize, f: &TaskIoFile) -> Result<TaskIo, TaskError> {
    let err = |key, message: String| TaskError { task, key, message };
    let (op, random) = match f.rw.as_str() {
        "read" => (IoOp::Read, false),
        "randread" => (IoOp::Read, true),
        "write" => (IoOp::Write, false),
        "randwrite" => (IoOp::Write, true),
        other => {
            return Err(err(
                "io.rw",
                format!(
                    "expected read, randread, write or randwrite, got {}",
                    crate::error::shown(other)
                ),
            ))
        }
    };
    let size_of = |key, text: &str| {
        crate::time::parse_size_bytes(text).ok_or_else(|| {
            err(
                key,
                format!(
                    "expected a size in bytes with fio's suffixes (4k, 1m, 1g), got {}",
                    crate::error::shown(text)
                ),
            )
        })
    };
    let bs = size_of("io.bs", &f.bs)?;
    if bs == 0 || !bs.is_multiple_of(512) || bs > MAX_TASK_BS {
        return Err(err(
            "io.bs",
            format!("expected a multiple of 512 bytes up to 16m, got {bs}"),
        ));
    }
    let size = size_of("io.size", &f.size)?;
    if size < bs {
        return Err(err(
            "io.size",
            format!("expected at least one block ({bs} bytes), got {size}"),
        ));
    }
    let offset = match &f.offset {
        Some(o) => size_of("io.offset", o)?,
        None => 0,
    };
    if offset.checked_add(size).is_none() {
        return Err(err("io.offset", "offset + size overflows".into()));
    }
    Ok(TaskIo {
        op,
        random,
        bs: bs as u32,
        offset,
        size,
        // Placed when the run's devices are known.
        device: 0,
    })
}

/// Checks the scenario's tasks and builds them (CPU numbers are checked against the platform
/// when it is loaded).
pub fn resolve(files: &[TaskFile]) -> Result<Vec<TaskSpec>, TaskError> {
    let mut out = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let err = |key, message: String| TaskError {
            task: i,
            key,
            message,
        };
        if files[..i].iter().any(|g| g.name == f.name) {
            return Err(err(
                "name",
                format!("the name {:?} is already used", f.name),
            ));
        }
        let source = match f.source.as_deref() {
            None | Some("timer") => Source::Timer,
            Some("interrupt") => Source::Interrupt,
            Some(other) => {
                return Err(err(
                    "source",
                    format!("expected \"timer\" or \"interrupt\", got {other:?}"),
                ))
            }
        };
        let sleep = dist(
            i,
            ["sleep", "sleep_mean", "sleep_min", "sleep_max"],
            [&f.sleep, &f.sleep_mean, &f.sleep_min, &f.sleep_max],
        )?;
        let period = duration(i, "period", &f.period)?;
        let wake = match (period, sleep) {
            (Some(_), Some(_)) => {
                return Err(err(
                    "period",
                    "give `period` (periodic) or a sleep (`sleep`, ...), not both".into(),
                ))
            }
            (Some(p), None) if p.0 == 0 => {
                return Err(err("period", "expected a positive period".into()))
            }
            (Some(period), None) => Wake::Periodic {
                period,
                phase: duration(i, "phase", &f.phase)?.unwrap_or(period),
                jitter: duration(i, "jitter", &f.jitter)?.unwrap_or(Nanos::ZERO),
                source,
            },
            (None, Some(sleep)) => Wake::Sleep { sleep, source },
            (None, None) if f.io.is_some() => Wake::Io,
            (None, None) => Wake::ByTask,
        };
        let io = f.io.as_ref().map(|io| task_io(i, io)).transpose()?;
        let timer_slack =
            duration(i, "timer_slack", &f.timer_slack)?.unwrap_or(DEFAULT_TIMER_SLACK);
        if timer_slack > Nanos::from_ms(1000) {
            return Err(err(
                "timer_slack",
                format!("expected at most 1s of slack, got {} ns", timer_slack.0),
            ));
        }
        if !matches!(wake, Wake::Periodic { .. }) {
            for (key, v) in [("phase", &f.phase), ("jitter", &f.jitter)] {
                if v.is_some() {
                    return Err(err(key, "only a periodic task (`period`) has one".into()));
                }
            }
        }
        let run = dist(
            i,
            ["run", "run_mean", "run_min", "run_max"],
            [&f.run, &f.run_mean, &f.run_min, &f.run_max],
        )?
        .ok_or_else(|| err("run", "expected the burst length: `run = \"100us\"` (or `run_mean`, or `run_min` + `run_max`)".into()))?;
        if let Wake::Periodic { period, jitter, .. } = wake {
            if jitter > period {
                return Err(err(
                    "jitter",
                    format!(
                        "expected a jitter of at most the period ({} ns), got {} ns",
                        period.0, jitter.0
                    ),
                ));
            }
            if run.mean() > period {
                let key = match (&f.run, &f.run_mean) {
                    (Some(_), _) => "run",
                    (None, Some(_)) => "run_mean",
                    (None, None) => "run_max",
                };
                return Err(err(
                    key,
                    format!(
                        "the mean burst ({} ns) is longer than the period ({} ns): the task \
                         would never sleep; expected a burst shorter than the period",
                        run.mean().0,
                        period.0
                    ),
                ));
            }
        }
        let wakes = match &f.wakes {
            None => None,
            Some(name) => match files.iter().position(|g| &g.name == name) {
                Some(j) if j != i => Some(j),
                Some(_) => return Err(err("wakes", "a task cannot wake itself".into())),
                None => return Err(err("wakes", format!("no task is named {name:?}"))),
            },
        };
        let uclamp = uclamp(i, f)?;
        out.push(TaskSpec {
            name: f.name.clone(),
            cpu: f.cpu,
            wake,
            run,
            wakes,
            io,
            timer_slack,
            job: None,
            uclamp,
        });
    }
    for (i, t) in out.iter().enumerate() {
        if t.wake == Wake::ByTask && !out.iter().any(|o| o.wakes == Some(i)) {
            return Err(TaskError {
                task: i,
                key: "name",
                message: "never wakes: give it a `period` or a sleep, or name it in another \
                          task's `wakes`"
                    .into(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_agrees_with_libm_round_on_halves_edges_and_random_values() {
        let edges = [
            0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e300,
        ];
        let mut rng = Pcg32::new(3, 9);
        let random = (0..100_000).map(|i| {
            let scale = 10f64.powi(i % 19);
            rng.unit_f64() * scale
        });
        for x in edges.into_iter().chain(random) {
            assert_eq!(round_to_u64(x), x.round() as u64, "x = {x:e}");
        }
    }
}
