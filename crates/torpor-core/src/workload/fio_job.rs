//! A fio-like IO job: the subset of fio's job options that shapes *when* and *where* IO is
//! issued, under fio's own option names so a job file translates line by line.
//!
//! Semantics follow fio's HOWTO.rst and `backend.c` (axboe/fio at f5344384f7c7, read for this
//! module); where torpor simplifies, the field's doc says so. In short:
//!
//! 1. The job starts `startdelay` after the run starts; `runtime` is counted from that start.
//! 2. It keeps up to `iodepth` IOs in flight. Each IO is `bs` bytes; its direction comes from
//!    `rw` (and `rwmixread` for mixed jobs); its offset is sequential (wrapping inside the
//!    region `[offset, offset + size)`) or uniformly random and `bs`-aligned in that region.
//! 3. `rate` (bytes/s) or `rate_iops` gates issue, per direction: an IO of a direction is not
//!    issued before `start + B / rate`, where `B` is the bytes that direction issued before it
//!    and `rate` is `rate`, else `rate_iops x bs` (fio's `__setup_rate` and linear
//!    `rate_process`, which catches up after a stall); with `rate_iops` the k-th IO (from 0)
//!    thus goes at `start + k / rate_iops`.
//! 4. `thinktime`: once `thinktime_blocks` IOs have *completed* since the last stall (fio's
//!    default `thinktime_blocks_type=complete`), the job stops issuing, waits for every IO in
//!    flight to complete (fio's `io_u_quiesce`), then idles for `thinktime`. IOs completing
//!    during that drain already count towards the next window, as in fio's `handle_thinktime`.
//!    With `iodepth > 1` the queue therefore runs full between stalls and empties before each
//!    stall; with `thinktime_blocks = 1` every completion stalls, so the depth never exceeds 1
//!    (the HOWTO's "effectively caps the queue depth").
//! 5. The job ends when `runtime` has elapsed, after `number_ios` IOs, or — unless
//!    `time_based` — once `size` bytes have been issued (fio's default `io_size = size`).
//!    IOs already in flight still complete and are measured.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time::{parse_duration, parse_size_bytes, Nanos};

/// fio's `rw=`: the direction and order of the job's IO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes; fio also spells it `readwrite`.
    #[serde(alias = "readwrite")]
    Rw,
    RandRw,
}

impl RwMode {
    /// Whether offsets are drawn at random rather than walked in order.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    /// Whether the job mixes reads and writes (and so consults `rwmixread`).
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::Rw | RwMode::RandRw)
    }
}

/// A fio-like job. Deserializes from a scenario's `[[job]]` table; sizes accept fio's strings
/// (`"4k"`) or plain byte counts, durations need their unit (`"150ms"`), unlike fio, which
/// would read a bare number as microseconds or seconds depending on the option.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioJob {
    pub name: String,
    pub rw: RwMode,
    /// Percentage of reads in a mixed job. Each IO's direction is drawn independently with
    /// this probability (fio additionally smooths the mix over `rwmixcycle`; torpor does not).
    #[serde(default = "default_rwmixread")]
    pub rwmixread: u8,
    /// Block size in bytes.
    #[serde(default = "default_bs", with = "size_serde")]
    pub bs: u64,
    #[serde(default = "one_u32")]
    pub iodepth: u32,
    /// Bytes per second, `[read, write]` (index `IoOp as usize`); one value caps each
    /// direction separately, as fio's `rate=1m` does; `"1m,2m"` gives each its own, `",2m"`
    /// only writes.
    #[serde(default, with = "per_dir_serde", skip_serializing_if = "unset")]
    pub rate: PerDir,
    /// IOs per second, `[read, write]`, written like `rate` (`100`, `"100,50"`).
    #[serde(default, with = "per_dir_serde", skip_serializing_if = "unset")]
    pub rate_iops: PerDir,
    /// Idle time after `thinktime_blocks` completions (see the module doc, step 4).
    #[serde(
        default,
        with = "opt_duration_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinktime: Option<Nanos>,
    #[serde(default = "one_u64")]
    pub thinktime_blocks: u64,
    #[serde(
        default,
        with = "opt_duration_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub runtime: Option<Nanos>,
    /// Keep looping over the region until `runtime` (or the run) ends instead of stopping
    /// after `size` bytes.
    #[serde(default)]
    pub time_based: bool,
    /// Size of the region IO falls in, in bytes.
    #[serde(default = "default_size", with = "size_serde")]
    pub size: u64,
    /// Start of the region, in bytes from the start of the device.
    #[serde(default, with = "size_serde")]
    pub offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    #[serde(
        default,
        with = "opt_duration_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub startdelay: Option<Nanos>,
    /// fio's `cpus_allowed`: the CPUs its thread may run on. Beside `[platform.cpu]` the
    /// job's thread runs on the first of them and its completions travel through the CPUs
    /// (an interrupt, a wake-up) before fio sees them; without CPUs it changes nothing.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "cpu_list_serde"
    )]
    pub cpus_allowed: Option<Vec<u32>>,
}

/// Parses fio's CPU list (`3`, `0-3`, `1,3,5-6`): ascending, each CPU once.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus: Vec<u32> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let num = |s: &str| {
            s.parse::<u32>().ok().filter(|&c| c < 4096).ok_or_else(|| {
                format!("expected a CPU list such as 3, 0-3 or 1,3 (CPUs 0-4095), got {text:?}")
            })
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if lo > hi {
            return Err(format!("expected a rising CPU range, got {part:?}"));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

mod cpu_list_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Vec<u32>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(cpus) => s.serialize_str(
                &cpus
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            One(u32),
            Text(String),
        }
        match Given::deserialize(d)? {
            Given::One(c) => super::parse_cpu_list(&c.to_string()),
            Given::Text(t) => super::parse_cpu_list(&t),
        }
        .map(Some)
        .map_err(serde::de::Error::custom)
    }
}

/// A value per direction, `[read, write]`, indexed by `IoOp as usize`.
pub type PerDir = [Option<u64>; 2];

fn unset(v: &PerDir) -> bool {
    *v == [None, None]
}

fn default_rwmixread() -> u8 {
    50
}
fn default_bs() -> u64 {
    4096
}
fn default_size() -> u64 {
    1 << 30
}
fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}

/// The deepest queue a job or a replay may keep: an NVMe I/O queue holds at most 65 536
/// commands (CAP.MQES is a 16-bit, 0-based count). Each IO in flight is an event in the
/// engine's queue, so this also bounds a run's memory (a few MB per workload at most).
pub const MAX_IODEPTH: u32 = 1 << 16;

/// A job option with an invalid value: which key, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {message}")]
pub struct JobError {
    pub key: &'static str,
    pub message: String,
}

impl FioJob {
    /// A job with fio's defaults for every option but `name` and `rw`.
    pub fn new(name: impl Into<String>, rw: RwMode) -> FioJob {
        FioJob {
            name: name.into(),
            rw,
            rwmixread: default_rwmixread(),
            bs: default_bs(),
            iodepth: 1,
            rate: [None, None],
            rate_iops: [None, None],
            thinktime: None,
            thinktime_blocks: 1,
            runtime: None,
            time_based: false,
            size: default_size(),
            offset: 0,
            number_ios: None,
            startdelay: None,
            cpus_allowed: None,
        }
    }

    /// Checks the values serde cannot: ranges and the relations between options.
    /// The caller turns the error into an [`crate::InputError`] with its file and line.
    pub fn validate(&self) -> Result<(), JobError> {
        let err = |key, message: &str| {
            Err(JobError {
                key,
                message: message.to_string(),
            })
        };
        if self.bs == 0 || self.bs > u64::from(u32::MAX) {
            return err("bs", "expected a block size between 1 byte and 4 GiB - 1");
        }
        if self.size < self.bs {
            return err("size", "expected a region at least one block (`bs`) large");
        }
        if self.offset.checked_add(self.size).is_none() {
            return err("offset", "expected `offset + size` to fit in 64 bits");
        }
        if self.rwmixread > 100 {
            return err("rwmixread", "expected a percentage between 0 and 100");
        }
        if self.iodepth == 0 {
            return err("iodepth", "expected at least 1 IO in flight");
        }
        if self.iodepth > MAX_IODEPTH {
            return Err(iodepth_too_deep(self.iodepth));
        }
        if self.thinktime_blocks == 0 {
            return err(
                "thinktime_blocks",
                "expected at least 1 block between think times",
            );
        }
        if self.rate.contains(&Some(0)) {
            return err("rate", "expected a positive rate, or no `rate` at all");
        }
        if self.rate_iops.contains(&Some(0)) {
            return err(
                "rate_iops",
                "expected a positive rate, or no `rate_iops` at all",
            );
        }
        if self
            .rate
            .iter()
            .zip(&self.rate_iops)
            .any(|(a, b)| a.is_some() && b.is_some())
        {
            return err(
                "rate_iops",
                "`rate` and `rate_iops` are mutually exclusive in a direction (as in fio)",
            );
        }
        if self.number_ios == Some(0) {
            return err(
                "number_ios",
                "expected a positive count, or no `number_ios` at all",
            );
        }
        if self.runtime == Some(Nanos::ZERO) {
            return err(
                "runtime",
                "expected a positive duration, or no `runtime` at all",
            );
        }
        Ok(())
    }

    /// The byte rate that gates direction `d` (`IoOp as usize`): `rate`, else `rate_iops x bs`.
    pub fn rate_bps(&self, d: usize) -> Option<u64> {
        self.rate[d].or_else(|| self.rate_iops[d].map(|r| r.saturating_mul(self.bs)))
    }

    /// Number of whole blocks in the region: the range random offsets are drawn from.
    pub fn blocks_in_region(&self) -> u64 {
        self.size / self.bs
    }
}

/// The error for an `iodepth` beyond [`MAX_IODEPTH`].
pub(super) fn iodepth_too_deep(asked: u32) -> JobError {
    JobError {
        key: "iodepth",
        message: format!(
            "at most {MAX_IODEPTH} IOs in flight (the deepest NVMe I/O queue), got {asked}"
        ),
    }
}

/// Sizes as fio writes them (`"4k"`, `"1g"`) or as a plain integer number of bytes.
pub(super) mod size_serde {
    use super::*;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(n),
            Raw::Text(t) => parse_size_bytes(&t).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "expected a size such as \"4k\", \"1m\" or a byte count, got {t:?}"
                ))
            }),
        }
    }
}

/// A per-direction value: an integer for both directions, or fio's text (`"1m"`,
/// `"1m,2m"`, `",2m"`).
mod per_dir_serde {
    use super::*;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Int(u64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(v: &PerDir, s: S) -> Result<S::Ok, S::Error> {
        let part = |x: Option<u64>| x.map(|n| n.to_string()).unwrap_or_default();
        s.serialize_str(&format!("{},{}", part(v[0]), part(v[1])))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PerDir, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok([Some(n), Some(n)]),
            Raw::Text(t) => {
                super::super::fio_file::per_direction(&t).map_err(serde::de::Error::custom)
            }
        }
    }
}

/// Durations written with their unit (`"150ms"`); printed back the same way.
mod opt_duration_serde {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Nanos>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_str(&n.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Nanos>, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}
