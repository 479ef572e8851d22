//! fio job files: the INI subset people write for latency and power tests, read into
//! [`FioJob`]s so that `torpor run` issues what `fio jobs.fio` would.
//!
//! It lives with the workloads, not with the traces: a job file describes how IO is to be
//! issued (it becomes [`FioJob`]s), while `trace/` holds records of IO that happened.
//!
//! Parsing follows fio's `parse_jobs_ini` and `parse.c` (axboe/fio, read for this module):
//!
//! 1. A line whose first non-blank character is `;` or `#` is a comment; elsewhere, text from
//!    the first `;`, then from the first `#`, is cut (fio's `strip_blank_end`).
//! 2. `[name]` starts a job; `[global]` starts options that every job *after* it inherits (a
//!    later `[global]` adds to them for the jobs after it). An option outside a section is an
//!    error, as in fio.
//! 3. An option is `key=value` or a bare `key` (a boolean set to 1).
//! 4. Sizes take fio's suffixes with its default `kb_base=1024`: `k`/`kb` = 1024, `m`/`mb` =
//!    1024², ... and, by fio's compatibility rule, `KiB`/`MiB` = 1000, 1000²; `%` is a share
//!    of the device. Times are whole numbers with `us`/`usec`, `ms`/`msec`, `s`, `m`, `h`,
//!    `d`; a bare number is seconds for `runtime` and `startdelay`, microseconds for
//!    `thinktime`, as each option's fio definition says. fio takes an unknown suffix as
//!    microseconds (`runtime=10sec` is 10 µs); torpor refuses it, and fractions (`1.5s`,
//!    which fio truncates to 1 s).
//! 5. `numjobs=N` clones the job N times; fio names every clone after the job, and so does
//!    torpor (each clone still draws from its own random stream).
//! 6. `${VAR}` (environment) and fio's `$ncpus`-style keywords are not expanded: the line is
//!    refused, naming the variable.
//!
//! Options torpor reads but that cannot change the simulated drive (`ioengine`,
//! `cpus_allowed`, `hipri`, `filename`, `directory`) are accepted and each noted; so is what
//! torpor assumes where fio would do otherwise (no `direct=1`, no `size`). An unknown option
//! is an error naming its line and the options torpor reads.

use std::collections::HashMap;

use super::fio_job::{FioJob, PerDir, RwMode};
use crate::error::{shown, InputError};
use crate::time::{Nanos, HORIZON};

/// The options torpor reads from a job file, as the unknown-option error lists them.
pub const OPTIONS: [&str; 26] = [
    "name",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "iodepth",
    "numjobs",
    "rate",
    "rate_iops",
    "thinktime",
    "thinktime_blocks",
    "runtime",
    "timeout",
    "time_based",
    "startdelay",
    "size",
    "offset",
    "number_ios",
    "direct",
    "cpus_allowed",
    "hipri",
    "ioengine",
    "filename",
    "directory",
];

/// The most jobs a file may define once `numjobs` is expanded (the scenario's limit per
/// variant).
pub const MAX_FILE_JOBS: usize = super::MAX_JOBS;

/// A job file read: its jobs in file order (clones next to each other), and what was accepted
/// without effect or assumed, one note each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFile {
    pub jobs: Vec<FioJob>,
    pub notes: Vec<String>,
}

/// A share of the device (`size=50%`), which torpor's drive models cannot turn into bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Percent {
    pct: u64,
    line: usize,
}

/// One section's options so far: the job they build, where each key was set, and what only
/// becomes a note or an error once the section is complete.
#[derive(Clone, Debug)]
struct Template {
    job: FioJob,
    numjobs: u32,
    /// The line that last set each key (under the name [`FioJob::validate`] reports).
    lines: HashMap<&'static str, usize>,
    size_pct: Option<Percent>,
    offset_pct: Option<Percent>,
    direct: bool,
    size_given: bool,
    /// Accepted options with no effect: (line, text of the note).
    noted: Vec<(usize, String)>,
}

impl Template {
    /// fio's defaults: `rw=read`, `bs=4k`, `iodepth=1`, `numjobs=1`, buffered IO.
    fn new() -> Template {
        Template {
            job: FioJob::new("global", RwMode::Read),
            numjobs: 1,
            lines: HashMap::new(),
            size_pct: None,
            offset_pct: None,
            direct: false,
            size_given: false,
            noted: Vec::new(),
        }
    }
}

/// The section being read.
struct Section {
    name: String,
    line: usize,
    template: Template,
    global: bool,
}

/// Parses job file `text`; `label` names it in errors and notes.
pub fn parse(label: &str, text: &str) -> Result<JobFile, InputError> {
    let mut global = Template::new();
    let mut current: Option<Section> = None;
    let mut out = JobFile {
        jobs: Vec::new(),
        notes: Vec::new(),
    };
    let mut last_line = 1;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        last_line = n;
        let at = |m: String| InputError::at(label, n, m);
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let line = strip_comment(line);
        if line.is_empty() {
            continue;
        }
        if let Some(var) = variable(line) {
            return Err(at(format!(
                "`{var}`: fio expands it from the environment (or the machine) when it reads \
                 the file; torpor does not: write the value"
            )));
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(at(format!(
                    "expected a section header `[name]`, got {}",
                    shown(line)
                )));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(at("expected a section header `[name]` with a name".into()));
            }
            finish(label, current.take(), &mut global, &mut out)?;
            current = Some(Section {
                name: name.to_string(),
                line: n,
                // A `[global]` updates the options the jobs after it inherit.
                template: global.clone(),
                global: name == "global",
            });
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line.trim(), None),
        };
        if key == "include" || key.starts_with("include ") {
            return Err(at(
                "`include`: torpor reads one job file; put the included options in it".into(),
            ));
        }
        let Some(section) = current.as_mut() else {
            return Err(at(format!(
                "option `{key}` outside of a section: expected `[global]` or a `[job]` header \
                 before it (fio refuses it too)"
            )));
        };
        if section.global && key == "name" {
            return Err(at(
                "`name` in `[global]`: each job is named by its own section".into(),
            ));
        }
        apply(&mut section.template, key, value, n).map_err(at)?;
    }
    finish(label, current.take(), &mut global, &mut out)?;
    if out.jobs.is_empty() {
        return Err(InputError::at(
            label,
            last_line,
            "the file ends without a job: expected a `[name]` section with `rw=` and the \
             job's options (a `[global]` section alone defines none)",
        ));
    }
    Ok(out)
}

/// The line without its comment: fio cuts at the first `;`, then at the first `#`.
fn strip_comment(line: &str) -> &str {
    let line = line.split(';').next().unwrap_or_default();
    line.split('#').next().unwrap_or_default().trim_end()
}

/// A `${VAR}` or one of fio's `$keyword`s in the line, if any.
fn variable(line: &str) -> Option<&str> {
    let start = line.find('$')?;
    let rest = &line[start..];
    if rest.starts_with("${") {
        let end = rest.find('}').map_or(rest.len(), |e| e + 1);
        return Some(&rest[..end]);
    }
    let end = rest[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(rest.len(), |e| e + 1);
    Some(&rest[..end])
}

/// Closes `section`: `[global]` becomes the template of the jobs after it; a job is checked,
/// cloned `numjobs` times and its notes kept.
fn finish(
    label: &str,
    section: Option<Section>,
    global: &mut Template,
    out: &mut JobFile,
) -> Result<(), InputError> {
    let Some(Section {
        name,
        line,
        template: mut t,
        global: is_global,
    }) = section
    else {
        return Ok(());
    };
    if is_global {
        *global = t;
        return Ok(());
    }
    if !t.lines.contains_key("name") {
        t.job.name = name.clone();
    }
    let at_key = |key: &str| t.lines.get(key).copied().unwrap_or(line);
    for (what, pct) in [("size", t.size_pct), ("offset", t.offset_pct)] {
        let Some(p) = pct else { continue };
        if what == "size" && !t.job.time_based {
            return Err(InputError::at(
                label,
                p.line,
                format!(
                    "[{name}] size={}%: a share of the device, and torpor's drive models carry \
                     no capacity; without `time_based` it decides how much IO the job does: \
                     give bytes (size=1g)",
                    p.pct
                ),
            ));
        }
        out.notes.push(format!(
            "{label}:{}: [{name}] {what}={}%: the drive model carries no capacity; offsets are \
             drawn in torpor's default {} GiB region (they do not change the drive's service \
             times)",
            p.line,
            p.pct,
            FioJob::new("", RwMode::Read).size >> 30
        ));
    }
    t.job.validate().map_err(|e| {
        InputError::at(
            label,
            at_key(e.key),
            format!("[{name}] `{}`: {}", e.key, e.message),
        )
    })?;
    if !t.direct {
        out.notes.push(format!(
            "{label}:{line}: [{name}] no `direct=1`: fio would do buffered IO through the page \
             cache; torpor sends every IO to the drive, as with direct=1"
        ));
    }
    if !t.size_given && !t.job.time_based {
        out.notes.push(format!(
            "{label}:{line}: [{name}] no `size`: fio would cover the whole device; torpor's \
             drive models carry no capacity, so the job stops after {} GiB",
            t.job.size >> 30
        ));
    }
    for (l, note) in &t.noted {
        out.notes.push(format!("{label}:{l}: [{name}] {note}"));
    }
    let total = out.jobs.len() + t.numjobs as usize;
    if total > MAX_FILE_JOBS {
        return Err(InputError::at(
            label,
            at_key("numjobs"),
            format!(
                "[{name}] numjobs={}: at most {MAX_FILE_JOBS} jobs in all, counting clones \
                 ({} before this section)",
                t.numjobs,
                out.jobs.len()
            ),
        ));
    }
    out.jobs
        .extend(std::iter::repeat_n(t.job, t.numjobs as usize));
    Ok(())
}

/// Applies option `key` (with `value`, `None` for a bare key) read at `line`.
fn apply(t: &mut Template, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let need = || value.ok_or_else(|| format!("`{key}` needs a value (`{key}=...`)"));
    let canonical: &'static str = match key {
        "name" => {
            let v = need()?;
            if v.is_empty() {
                return Err("`name` needs a value (`name=...`)".into());
            }
            t.job.name = v.to_string();
            "name"
        }
        "rw" | "readwrite" => {
            t.job.rw = rw_mode(need()?)?;
            "rw"
        }
        "rwmixread" | "rwmixwrite" => {
            let pct = integer(key, need()?)?;
            if pct > 100 {
                return Err(format!(
                    "`{key}`: expected a percentage from 0 to 100, got {pct}"
                ));
            }
            t.job.rwmixread = if key == "rwmixread" { pct } else { 100 - pct } as u8;
            "rwmixread"
        }
        "bs" | "blocksize" => {
            let v = need()?;
            if v.contains(',') {
                return Err(format!(
                    "`{key}={v}`: one block size for reads and writes is read (torpor's jobs \
                     have one `bs`)"
                ));
            }
            t.job.bs = bytes(key, v)?;
            "bs"
        }
        "iodepth" => {
            t.job.iodepth = u32::try_from(integer(key, need()?)?)
                .map_err(|_| format!("`{key}`: expected at most {}", u32::MAX))?;
            "iodepth"
        }
        "numjobs" => {
            let n = integer(key, need()?)?;
            if n == 0 || n > MAX_FILE_JOBS as u64 {
                return Err(format!(
                    "`numjobs`: expected 1 to {MAX_FILE_JOBS} clones, got {n}"
                ));
            }
            t.numjobs = n as u32;
            "numjobs"
        }
        "rate" | "rate_iops" => {
            let v = need()?;
            // fio: 0 means no limit.
            let dirs = per_direction(v).map_err(|m| format!("`{key}={v}`: {m}"))?;
            let dirs: PerDir = dirs.map(|d| d.filter(|&x| x > 0));
            if key == "rate" {
                t.job.rate = dirs;
                "rate"
            } else {
                t.job.rate_iops = dirs;
                "rate_iops"
            }
        }
        "thinktime" => {
            let d = duration(key, need()?, Unit::Micros)?;
            t.job.thinktime = (d > Nanos::ZERO).then_some(d);
            "thinktime"
        }
        "thinktime_blocks" => {
            t.job.thinktime_blocks = integer(key, need()?)?;
            "thinktime_blocks"
        }
        "runtime" | "timeout" => {
            // fio: 0 means no limit.
            let d = duration(key, need()?, Unit::Seconds)?;
            t.job.runtime = (d > Nanos::ZERO).then_some(d);
            "runtime"
        }
        "startdelay" => {
            let v = need()?;
            if v.contains('-') || v.contains(':') {
                return Err(format!(
                    "`startdelay={v}`: a random delay from a range is not read; give one time"
                ));
            }
            let d = duration(key, v, Unit::Seconds)?;
            t.job.startdelay = (d > Nanos::ZERO).then_some(d);
            "startdelay"
        }
        "time_based" => {
            t.job.time_based = flag(key, value)?;
            "time_based"
        }
        "size" | "offset" => {
            let v = need()?;
            let (n, pct) = match v.strip_suffix('%') {
                Some(p) => (
                    0,
                    Some(Percent {
                        pct: integer(key, p)?,
                        line,
                    }),
                ),
                None => (bytes(key, v)?, None),
            };
            if let Some(p) = pct {
                if p.pct > 100 {
                    return Err(format!("`{key}={v}`: expected a share from 0% to 100%"));
                }
            }
            if key == "size" {
                t.size_pct = pct;
                t.size_given = true;
                if pct.is_none() {
                    t.job.size = n;
                }
                "size"
            } else {
                t.offset_pct = pct;
                t.job.offset = n;
                "offset"
            }
        }
        "number_ios" => {
            let n = integer(key, need()?)?;
            t.job.number_ios = (n > 0).then_some(n);
            "number_ios"
        }
        "direct" => {
            if !flag(key, value)? {
                return Err(
                    "`direct=0`: buffered IO goes through the page cache, which torpor does not \
                     model; write direct=1"
                        .into(),
                );
            }
            t.direct = true;
            "direct"
        }
        "cpus_allowed" => {
            let v = need()?;
            t.job.cpus_allowed = Some(crate::workload::fio_job::parse_cpu_list(v)?);
            t.noted.push((
                line,
                format!(
                    "cpus_allowed={v}: beside [platform.cpu] the job's thread runs on the first \
                     of these CPUs; without CPUs it has no effect"
                ),
            ));
            "cpus_allowed"
        }
        "ioengine" | "filename" | "directory" => {
            let v = need()?;
            let why = match key {
                "ioengine" => "torpor issues the job's IO from its own model, through no engine",
                _ => "IO goes to the scenario's drive",
            };
            t.noted.push((line, format!("{key}={v} accepted: {why}")));
            return Ok(());
        }
        "hipri" => {
            if flag(key, value)? {
                t.noted.push((
                    line,
                    "hipri accepted: completions are not polled (libaio has no polled path in \
                     mainline kernels, aio polling having given way to io_uring's IOPOLL, and \
                     torpor's UFS host has no poll queues): beside [platform.cpu] they \
                     interrupt a CPU"
                        .into(),
                ));
            }
            return Ok(());
        }
        _ => {
            return Err(format!(
                "unknown fio option `{key}` (torpor reads: {})",
                OPTIONS.join(", ")
            ))
        }
    };
    t.lines.insert(canonical, line);
    Ok(())
}

/// fio's `rw=`; the modes torpor's devices do not serve are named.
fn rw_mode(v: &str) -> Result<RwMode, String> {
    Ok(match v {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::Rw,
        "randrw" => RwMode::RandRw,
        _ if v.contains(':') => {
            return Err(format!(
                "`rw={v}`: the `:N` suffix (IOs per offset change) is not read; write the mode \
                 alone"
            ))
        }
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(format!(
                "`rw={v}`: trims are not modelled; expected read or write modes"
            ))
        }
        _ => {
            return Err(format!(
                "`rw`: expected read, write, randread, randwrite, rw (readwrite) or randrw, got \
                 {}",
                shown(v)
            ))
        }
    })
}

/// A boolean: a bare key is 1, else a whole number (0 is false).
fn flag(key: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None => Ok(true),
        Some(v) => match v.parse::<u64>() {
            Ok(n) => Ok(n != 0),
            Err(_) => Err(format!("`{key}`: expected 0 or 1, got {}", shown(v))),
        },
    }
}

/// The digits of `v` and the suffix after them; an error names what was expected.
fn split_number<'a>(key: &str, v: &'a str, what: &str) -> Result<(u64, &'a str), String> {
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, suffix) = v.split_at(end);
    if digits.is_empty() || suffix.starts_with('.') || suffix.starts_with(['x', 'X']) {
        return Err(format!("`{key}`: expected {what}, got {}", shown(v)));
    }
    let n = digits
        .parse::<u64>()
        .map_err(|_| format!("`{key}`: {} does not fit in 64 bits", shown(v)))?;
    Ok((n, suffix.trim()))
}

/// A whole number, with fio's size suffixes (fio reads integer options like sizes).
fn integer(key: &str, v: &str) -> Result<u64, String> {
    bytes(key, v)
}

/// A size with fio's suffixes (see the module doc, step 4); `%` is refused here.
fn bytes(key: &str, v: &str) -> Result<u64, String> {
    let what = "a whole number with an optional k, m, g, t, p suffix (fio's units)";
    let (n, suffix) = split_number(key, v, what)?;
    let (base, pow): (u64, u32) = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => (1024, 0),
        "k" | "kb" => (1024, 1),
        "m" | "mb" => (1024, 2),
        "g" | "gb" => (1024, 3),
        "t" | "tb" => (1024, 4),
        "p" | "pb" => (1024, 5),
        // fio's kb_base=1024 compatibility rule: the IEC prefixes count in thousands.
        "kib" => (1000, 1),
        "mib" => (1000, 2),
        "gib" => (1000, 3),
        "tib" => (1000, 4),
        "pib" => (1000, 5),
        _ => return Err(format!("`{key}`: expected {what}, got {}", shown(v))),
    };
    n.checked_mul(base.pow(pow))
        .ok_or_else(|| format!("`{key}`: {} does not fit in 64 bits", shown(v)))
}

/// `rate`'s and `rate_iops`'s value: one for both directions, or `READ,WRITE` (either may be
/// empty). Used by scenario `[[workload.job]]`s too.
pub fn per_direction(v: &str) -> Result<PerDir, String> {
    // fio drops a trailing comma: `1m,` is `1m` for both.
    let v = v.strip_suffix(',').unwrap_or(v);
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let one = |p: &str| -> Result<Option<u64>, String> {
        if p.is_empty() {
            Ok(None)
        } else {
            bytes("rate", p).map(Some).map_err(|_| {
                format!(
                    "expected a rate such as 100, 1m or READ,WRITE (fio's units), got {}",
                    shown(p)
                )
            })
        }
    };
    match parts.as_slice() {
        [both] if !both.is_empty() => {
            let x = one(both)?;
            Ok([x, x])
        }
        [read, write] => Ok([one(read)?, one(write)?]),
        _ if parts.len() > 2 => Err("a third value (trims) is not read; give READ,WRITE".into()),
        _ => Err("expected a rate such as 100, 1m or READ,WRITE".into()),
    }
}

/// The unit of a bare number of time, per option.
#[derive(Clone, Copy)]
enum Unit {
    Micros,
    Seconds,
}

/// A time with fio's suffixes; a bare number is in `unit`.
fn duration(key: &str, v: &str, unit: Unit) -> Result<Nanos, String> {
    let what = "a whole number of us, ms, s, m (minutes), h or d";
    let (n, suffix) = split_number(key, v, what)?;
    let scale: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => match unit {
            Unit::Micros => 1_000,
            Unit::Seconds => 1_000_000_000,
        },
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => {
            return Err(format!(
            "`{key}`: expected {what}, got {} (fio would take an unknown suffix as microseconds)",
            shown(v)
        ))
        }
    };
    n.checked_mul(scale)
        .filter(|&ns| ns <= HORIZON.0)
        .map(Nanos)
        .ok_or_else(|| {
            format!(
                "`{key}`: {} is longer than {}",
                shown(v),
                crate::time::HORIZON_TEXT
            )
        })
}

#[cfg(test)]
mod tests;
