//! `[[qos.request]]` and a task's `cpu_dma_latency_us`: a CPU scenario's PM QoS requests over
//! time, resolved into the engine's [`QosAction`]s.
//!
//! 1. A task with `cpu_dma_latency_us = V` holds `/dev/cpu_dma_latency` open for the whole run
//!    with V written as a 4-byte s32, as cyclictest does (V = 0 unless `--latency`): one action
//!    at time 0, its holder named after the task.
//! 2. Each `[[qos.request]]` is one action at `at`: its `holder` (a name; the same name is the
//!    same file handle, a task's included) writes `value` to its `target` or, with
//!    `action = "remove"`, closes the file.
//! 3. A value reads as the file takes it: on `cpu_dma_latency` an integer is the 4-byte s32 a
//!    program writes and a string is the text `echo -n` writes (hex; exactly 4 characters are
//!    read as binary, as the kernel does); on `cpuN/power/pm_qos_resume_latency_us` the sysfs
//!    store's rules (`0` = no constraint, `"n/a"` = none allowed); on
//!    `cpuN/cpufreq/scaling_min_freq` and `scaling_max_freq` a frequency in kHz, as
//!    `store_scaling_min_freq` reads it (`sscanf("%u")`: an unsigned integer; the policy
//!    clamps it into its hardware range). A sysfs file has one request, whoever writes it, and
//!    cannot be closed.
//!
//! Errors name the key's path (`qos.request[2].value`) for the caller to turn into a line.

use serde::Deserialize;
use toml::Value;

use crate::cpu::task::TaskFile;
use crate::qos::cpu_latency::{
    parse_dma_latency_write, parse_resume_latency_store, QosAction, QosOp, QosTarget,
    PM_QOS_DEFAULT_VALUE, SYSFS_HOLDER,
};
use crate::qos::Holder;
use crate::time::{parse_duration, Nanos};

/// `[qos]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QosSpec {
    #[serde(default, rename = "request")]
    pub requests: Vec<QosRequestFile>,
}

/// One `[[qos.request]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QosRequestFile {
    pub at: String,
    pub holder: String,
    pub target: String,
    pub value: Option<Value>,
    /// `"set"` (default) or `"remove"`.
    pub action: Option<String>,
}

/// One resolved request, with the names `torpor qos` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedAction {
    pub action: QosAction,
    pub holder: String,
    /// The file, as the user knows it (`cpu_dma_latency`, `cpu0/power/...`).
    pub target: String,
    /// What was written, as written (`"remove"` for a close).
    pub written: String,
}

/// The most `[[qos.request]]`s one variant may hold (each is an event).
pub const MAX_REQUESTS: usize = 65_536;

const DMA: &str = "cpu_dma_latency";
const RESUME_FILE: &str = "power/pm_qos_resume_latency_us";
const SCALING_MIN_FILE: &str = "cpufreq/scaling_min_freq";
const SCALING_MAX_FILE: &str = "cpufreq/scaling_max_freq";

/// Refuses more than [`MAX_REQUESTS`] requests, at the first one past the bound.
fn check_count(spec: &QosSpec) -> Result<(), (String, String)> {
    if spec.requests.len() > MAX_REQUESTS {
        return Err((
            format!("qos.request[{MAX_REQUESTS}]"),
            format!(
                "[[qos.request]]: at most {MAX_REQUESTS} requests in one variant, got {}",
                spec.requests.len()
            ),
        ));
    }
    Ok(())
}

/// Refuses a request timed after the run's end `until` (it would never apply); requests
/// whose `at` does not parse are left to the resolvers. Err: (key path, message).
pub fn check_before_end(spec: &QosSpec, until: Nanos) -> Result<(), (String, String)> {
    for (i, r) in spec.requests.iter().enumerate() {
        if let Ok(at) = parse_duration(&r.at) {
            if at > until {
                return Err((
                    format!("qos.request[{i}].at"),
                    format!(
                        "[[qos.request]] `at`: {} is after the run's end ({until}): the request \
                         would never apply",
                        r.at
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Resolves the tasks' held files and the requests, in that order (a stable sort by time
/// follows in the engine). Err: (key path, message).
pub fn resolve(spec: &QosSpec, tasks: &[TaskFile]) -> Result<Vec<NamedAction>, (String, String)> {
    check_count(spec)?;
    // Holders are numbered in order of first appearance (a map: 65,536 distinct names must
    // not cost a scan each).
    let mut names: std::collections::HashMap<String, Holder> = std::collections::HashMap::new();
    let mut holder = |name: &str| -> Holder {
        let next = names.len() as Holder;
        *names.entry(name.to_string()).or_insert(next)
    };
    let mut out = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let Some(v) = t.cpu_dma_latency_us else {
            continue;
        };
        let value = i32::try_from(v).ok().filter(|v| *v >= 0).ok_or_else(|| {
            (
                format!("workload.task[{i}].cpu_dma_latency_us"),
                format!(
                    "[[workload.task]] {}: `cpu_dma_latency_us`: expected the latency the task \
                     writes to /dev/cpu_dma_latency, 0 to 2147483647 us (cyclictest: 0 unless \
                     --latency), got {v}",
                    t.name
                ),
            )
        })?;
        out.push(NamedAction {
            action: QosAction {
                at: Nanos::ZERO,
                holder: holder(&t.name),
                target: QosTarget::CpuDmaLatency,
                op: QosOp::Set(value),
            },
            holder: t.name.clone(),
            target: DMA.into(),
            written: v.to_string(),
        });
    }
    for (i, r) in spec.requests.iter().enumerate() {
        let here = |key: &str| format!("qos.request[{i}].{key}");
        let at = parse_duration(&r.at)
            .map_err(|e| (here("at"), format!("[[qos.request]] `at`: {e}")))?;
        if r.holder.is_empty() {
            return Err((
                here("holder"),
                "[[qos.request]] `holder`: expected a name (who holds the request)".into(),
            ));
        }
        let target = parse_target(&r.target).map_err(|m| (here("target"), m))?;
        let remove = match r.action.as_deref() {
            None | Some("set") => false,
            Some("remove") => true,
            Some(other) => {
                return Err((
                    here("action"),
                    format!(
                        "[[qos.request]] `action`: expected \"set\" (write `value`) or \
                         \"remove\" (close the file), got {}",
                        crate::error::shown(other)
                    ),
                ))
            }
        };
        let (op, written) = match (remove, &r.value, target) {
            (true, None, QosTarget::CpuDmaLatency) => (QosOp::Remove, "remove".to_string()),
            (
                true,
                None,
                QosTarget::ResumeLatency { .. }
                | QosTarget::ScalingMinFreq { .. }
                | QosTarget::ScalingMaxFreq { .. },
            ) => {
                return Err((
                    here("action"),
                    "[[qos.request]] `action = \"remove\"`: a sysfs file holds its value until \
                     it is written again; write `value = \"0\"` (no constraint)"
                        .into(),
                ))
            }
            (true, Some(_), _) => {
                return Err((
                    here("value"),
                    "[[qos.request]] `value`: `action = \"remove\"` closes the file and takes \
                     no value"
                        .into(),
                ))
            }
            (false, None, _) => {
                return Err((
                    here("value"),
                    "[[qos.request]]: expected `value`, what the holder writes to `target`".into(),
                ))
            }
            (false, Some(v), target) => {
                let (us, shown) = written_value(v, target).map_err(|m| (here("value"), m))?;
                (QosOp::Set(us), shown)
            }
        };
        let holder_id = if target != QosTarget::CpuDmaLatency {
            SYSFS_HOLDER
        } else {
            holder(&r.holder)
        };
        out.push(NamedAction {
            action: QosAction {
                at,
                holder: holder_id,
                target,
                op,
            },
            holder: r.holder.clone(),
            target: target_name(target),
            written,
        });
    }
    Ok(out)
}

/// The NVMe controller's latency-tolerance file, relative to its class device.
const TOLERANCE_FILE: &str = "power/pm_qos_latency_tolerance_us";

/// One write to an NVMe controller's `power/pm_qos_latency_tolerance_us`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToleranceWrite {
    pub at: Nanos,
    /// As [`crate::qos::latency_tolerance::parse_sysfs`] returns it (-1: `auto`).
    pub value: i64,
    pub holder: String,
    pub written: String,
}

/// An NVMe scenario's `[[qos.request]]`s: writes to the controller's latency tolerance
/// (`nvme0/power/pm_qos_latency_tolerance_us`, or its `/sys/class/nvme/` path), in time order
/// (ties in file order). A value is what `echo` writes there (a string: µs, `auto`, `any`) or
/// an integer of µs. The file is one request whoever writes it, and cannot be closed (write
/// `auto`). Err: (key path, message).
pub fn resolve_nvme(spec: &QosSpec) -> Result<Vec<ToleranceWrite>, (String, String)> {
    use crate::qos::latency_tolerance::parse_sysfs;
    check_count(spec)?;
    let mut out = Vec::with_capacity(spec.requests.len());
    for (i, r) in spec.requests.iter().enumerate() {
        let here = |key: &str| format!("qos.request[{i}].{key}");
        let at = parse_duration(&r.at)
            .map_err(|e| (here("at"), format!("[[qos.request]] `at`: {e}")))?;
        let path = r
            .target
            .strip_prefix("/sys/class/nvme/")
            .unwrap_or(&r.target);
        let controller = path
            .strip_prefix("nvme")
            .and_then(|rest| rest.strip_suffix(TOLERANCE_FILE))
            .and_then(|n| n.strip_suffix('/'))
            .and_then(|n| n.parse::<u32>().ok());
        if controller.is_some_and(|n| n != 0) {
            return Err((
                here("target"),
                format!(
                    "[[qos.request]] `target`: the scenario's drive is its one controller, \
                     nvme0; got {}",
                    crate::error::shown(&r.target)
                ),
            ));
        }
        if controller.is_none() {
            return Err((
                here("target"),
                format!(
                    "[[qos.request]] `target`: on `[platform.nvme]` the PM QoS file is the \
                     controller's \"nvme0/{TOLERANCE_FILE}\", got {}",
                    crate::error::shown(&r.target)
                ),
            ));
        }
        if r.action.as_deref().is_some_and(|a| a != "set") {
            return Err((
                here("action"),
                "[[qos.request]] `action`: a sysfs file holds its value until written again; \
                 write `value = \"auto\"` to drop the request"
                    .into(),
            ));
        }
        let (value, written) = match &r.value {
            Some(Value::String(text)) => (parse_sysfs(text), text.clone()),
            Some(Value::Integer(n)) => (parse_sysfs(&n.to_string()), n.to_string()),
            _ => (
                Err(
                    "expected a string as written to the file (\"10000\", \"auto\", \
                     \"any\") or a whole number of us"
                        .to_string(),
                ),
                String::new(),
            ),
        };
        let value = value.map_err(|m| (here("value"), format!("[[qos.request]] `value`: {m}")))?;
        out.push(ToleranceWrite {
            at,
            value,
            holder: r.holder.clone(),
            written,
        });
    }
    out.sort_by_key(|w| w.at);
    Ok(out)
}

/// The file a target names, as `torpor qos` shows it.
pub fn target_name(target: QosTarget) -> String {
    match target {
        QosTarget::CpuDmaLatency => DMA.into(),
        QosTarget::ResumeLatency { cpu } => format!("cpu{cpu}/{RESUME_FILE}"),
        QosTarget::ScalingMinFreq { cpu } => format!("cpu{cpu}/{SCALING_MIN_FILE}"),
        QosTarget::ScalingMaxFreq { cpu } => format!("cpu{cpu}/{SCALING_MAX_FILE}"),
    }
}

/// CPU `n` of `path` = `cpuN/FILE`.
fn cpu_file(path: &str, file: &str) -> Option<u32> {
    path.strip_prefix("cpu")
        .and_then(|rest| rest.strip_suffix(file))
        .and_then(|n| n.strip_suffix('/'))
        .and_then(|n| n.parse::<u32>().ok())
}

fn parse_target(text: &str) -> Result<QosTarget, String> {
    let path = text
        .strip_prefix("/dev/")
        .or_else(|| text.strip_prefix("/sys/devices/system/cpu/"))
        .unwrap_or(text);
    if path == DMA {
        return Ok(QosTarget::CpuDmaLatency);
    }
    if let Some(cpu) = cpu_file(path, RESUME_FILE) {
        return Ok(QosTarget::ResumeLatency { cpu });
    }
    if let Some(cpu) = cpu_file(path, SCALING_MIN_FILE) {
        return Ok(QosTarget::ScalingMinFreq { cpu });
    }
    if let Some(cpu) = cpu_file(path, SCALING_MAX_FILE) {
        return Ok(QosTarget::ScalingMaxFreq { cpu });
    }
    if path.contains("pm_qos_latency_tolerance_us") {
        return Err(format!(
            "[[qos.request]] `target`: {} is an NVMe controller's latency tolerance; it acts \
             on `[platform.nvme]`, and this scenario runs CPUs",
            crate::error::shown(text)
        ));
    }
    Err(format!(
        "[[qos.request]] `target`: expected \"cpu_dma_latency\", \
         \"cpuN/power/pm_qos_resume_latency_us\", \"cpuN/cpufreq/scaling_min_freq\" or \
         \"cpuN/cpufreq/scaling_max_freq\", got {}",
        crate::error::shown(text)
    ))
}

/// The request value `v` makes on `target` (us), and `v` as written.
fn written_value(v: &Value, target: QosTarget) -> Result<(i32, String), String> {
    let key = "[[qos.request]] `value`";
    match (target, v) {
        (QosTarget::CpuDmaLatency, Value::Integer(n)) => {
            let us = i32::try_from(*n)
                .ok()
                .filter(|&us| us >= 0 || us == PM_QOS_DEFAULT_VALUE)
                .ok_or_else(|| {
                    format!(
                        "{key}: expected a latency of 0 to 2147483647 us (or -1, the default) \
                         written as a 4-byte s32, got {n}; the kernel ignores other negative \
                         values"
                    )
                })?;
            Ok((us, n.to_string()))
        }
        (QosTarget::CpuDmaLatency, Value::String(s)) => {
            let us = parse_dma_latency_write(s.as_bytes()).map_err(|m| format!("{key}: {m}"))?;
            if us < 0 && us != PM_QOS_DEFAULT_VALUE {
                return Err(format!(
                    "{key}: {} reads as {us} us, a negative value the kernel ignores",
                    crate::error::shown(s)
                ));
            }
            Ok((us, format!("{s:?}")))
        }
        (QosTarget::ResumeLatency { .. }, Value::Integer(n)) => {
            let us =
                parse_resume_latency_store(&n.to_string()).map_err(|m| format!("{key}: {m}"))?;
            Ok((us, n.to_string()))
        }
        (QosTarget::ResumeLatency { .. }, Value::String(s)) => {
            let us = parse_resume_latency_store(s).map_err(|m| format!("{key}: {m}"))?;
            Ok((us, format!("{s:?}")))
        }
        (QosTarget::ScalingMinFreq { .. } | QosTarget::ScalingMaxFreq { .. }, v) => {
            let (text, shown) = match v {
                Value::Integer(n) => (n.to_string(), n.to_string()),
                Value::String(s) => (s.trim_end_matches('\n').to_string(), format!("{s:?}")),
                other => {
                    return Err(format!(
                        "{key}: expected a frequency in kHz (an integer or a string as written \
                         to the file), got a {}",
                        other.type_str()
                    ))
                }
            };
            // The store reads an unsigned int; torpor keeps the kHz in an s32 request value
            // (2147483647 kHz, far above any OPP, clamps to the table all the same).
            let khz = text
                .parse::<u64>()
                .ok()
                .filter(|&k| k <= u64::from(u32::MAX))
                .ok_or_else(|| {
                    format!(
                        "{key}: expected a frequency in kHz, an unsigned integer as \
                         scaling_min_freq / scaling_max_freq take it, got {}",
                        crate::error::shown(&text)
                    )
                })?;
            Ok((i32::try_from(khz).unwrap_or(i32::MAX), shown))
        }
        (_, other) => Err(format!(
            "{key}: expected an integer or a string as written to the file, got a {}",
            other.type_str()
        )),
    }
}
