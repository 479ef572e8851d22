//! PM QoS for CPU latency: the global limit (`/dev/cpu_dma_latency`), each CPU's resume latency
//! (`cpuN/power/pm_qos_resume_latency_us`), and the value a governor reads from both.
//!
//! Models kernel/power/qos.c (the CPU latency QoS as named since v5.7, with v6.6's refusal of
//! negative values), drivers/base/power/sysfs.c (the resume-latency file's store, as encoded
//! since v4.14) and drivers/cpuidle/governor.c (`cpuidle_governor_latency_req`); spec-cpu.md §6.
//!
//! 1. **Global list** (`cpu_latency_constraints`): the minimum of its requests, in us; with none
//!    it is `PM_QOS_CPU_LATENCY_DEFAULT_VALUE` (2e9 us). A request made at -1
//!    (`PM_QOS_DEFAULT_VALUE`) stands at that default. Since v6.6 an add or update with any
//!    other negative value is ignored; an update to the request's current value does nothing.
//!    When the minimum changes the kernel kicks every idle CPU (`cpu_latency_qos_apply` ->
//!    `wake_up_all_idle_cpus`) so each selects again: the methods report the change and the
//!    CPU system does the kicking.
//! 2. **`/dev/cpu_dma_latency`**: `open` adds a request at -1, `close` removes it; a `write` of
//!    exactly 4 bytes is a binary s32 (native order: little-endian on every platform torpor
//!    models), any other length is hex text (`kstrtos32_from_user(.., 16, ..)`): "10" is 16 us,
//!    and "500\n", being 4 bytes, is read as binary (170 930 229 us).
//! 3. **Per CPU** (the CPU device's resume-latency list): the minimum of its requests, with none
//!    `PM_QOS_RESUME_LATENCY_NO_CONSTRAINT` (S32_MAX us). The sysfs file is ONE request of that
//!    list, made at S32_MAX when the CPU registers (`dev_pm_qos_expose_latency_limit`): every
//!    write replaces it, whoever writes. Kernel code may add requests of its own. The store
//!    reads an integer in base 0 (decimal, 0x hex, leading-0 octal) and refuses a negative
//!    value and S32_MAX itself; 0 means no constraint (S32_MAX); failing an integer, "n/a"
//!    means 0 (no latency allowed). A change wakes no CPU: the only notifier on a device's
//!    resume-latency list is genpd's, for devices in a PM domain, and it just marks the
//!    domain's timing stale; a CPU in a state reads the new value at its next idle entry.
//! 4. **The governor's limit** (`cpuidle_governor_latency_req`): the smaller of the CPU's
//!    resume latency and the global limit, in us, times 1000 as an s64 (ns). With nothing asked
//!    that is min(S32_MAX, 2e9) = 2e9 us = 2e12 ns.

use super::{Aggregate, Constraints, Holder};
use crate::time::Nanos;

/// `PM_QOS_DEFAULT_VALUE`: a request asked at this value stands at the list's default.
pub const PM_QOS_DEFAULT_VALUE: i32 = -1;

/// `PM_QOS_CPU_LATENCY_DEFAULT_VALUE` (2000 s in us): the global list's default and value with
/// no requests.
pub const CPU_LATENCY_DEFAULT_US: i32 = 2_000_000_000;

/// `PM_QOS_RESUME_LATENCY_NO_CONSTRAINT` (S32_MAX us).
pub const RESUME_LATENCY_NO_CONSTRAINT_US: i32 = i32::MAX;

/// The holder of each CPU's sysfs request: one request per file, whoever writes to it.
pub const SYSFS_HOLDER: Holder = Holder::MAX;

/// `kstrtos32_from_user` copies at most this many bytes (its buffer: sign, 32 binary digits,
/// newline, terminator, less the terminator).
const KSTRTO_S32_FROM_USER_MAX: usize = 34;

/// Which list a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosTarget {
    /// The global list, through the holder's own open `/dev/cpu_dma_latency`.
    CpuDmaLatency,
    /// CPU `cpu`'s resume-latency list (its sysfs file when the holder is [`SYSFS_HOLDER`]).
    ResumeLatency {
        cpu: u32,
    },
    /// `cpuN/cpufreq/scaling_min_freq` and `scaling_max_freq`: the sysfs requests (kHz) of
    /// the frequency QoS lists of CPU `cpu`'s cpufreq policy; the CPU system applies them to
    /// the policy, the latency lists ignore them.
    ScalingMinFreq {
        cpu: u32,
    },
    ScalingMaxFreq {
        cpu: u32,
    },
}

/// What a holder does to its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosOp {
    /// Make or change the request (us, as the kernel stores it: after the file's parsing).
    /// On `/dev/cpu_dma_latency` a holder without an open file opens it first.
    Set(i32),
    /// Drop the request (close the file).
    Remove,
}

/// At `at`, `holder` does `op` on `target`: one step of a run's PM QoS requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosAction {
    pub at: Nanos,
    pub holder: Holder,
    pub target: QosTarget,
    pub op: QosOp,
}

/// The global CPU latency list and every CPU's resume-latency list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuLatencyQos {
    global: Constraints,
    /// (CPU id, its resume-latency list), in the platform's order.
    resume: Vec<(u32, Constraints)>,
}

/// A value the kernel ignores since v6.6 (`cpu_latency_qos_value_invalid`).
fn ignored_since_v6_6(value_us: i32) -> bool {
    value_us < 0 && value_us != PM_QOS_DEFAULT_VALUE
}

impl CpuLatencyQos {
    /// No requests but each CPU's sysfs request, at no constraint.
    pub fn new(cpus: &[u32]) -> Self {
        let resume = cpus
            .iter()
            .map(|&cpu| {
                let none = i64::from(RESUME_LATENCY_NO_CONSTRAINT_US);
                let mut list = Constraints::new(Aggregate::Min, none);
                list.set(SYSFS_HOLDER, none);
                (cpu, list)
            })
            .collect();
        CpuLatencyQos {
            global: Constraints::new(Aggregate::Min, i64::from(CPU_LATENCY_DEFAULT_US)),
            resume,
        }
    }

    /// `cpu_latency_qos_limit()`, us.
    pub fn limit_us(&self) -> i32 {
        self.global.value() as i32
    }

    /// `holder`'s global request (us, after -1 became the default), if it holds one.
    pub fn request_us(&self, holder: Holder) -> Option<i32> {
        self.global.request(holder).map(|v| v as i32)
    }

    /// `cpu_latency_qos_add_request`: true when the limit changed (idle CPUs are kicked). A
    /// value the kernel ignores, or a holder that already holds a request (the kernel warns and
    /// returns), changes nothing.
    pub fn add_request(&mut self, holder: Holder, value_us: i32) -> bool {
        if ignored_since_v6_6(value_us) || self.global.request(holder).is_some() {
            return false;
        }
        self.global.set(holder, Self::global_value(value_us))
    }

    /// `cpu_latency_qos_update_request`: true when the limit changed. A holder without a
    /// request (the kernel warns), a value the kernel ignores, or the request's current value
    /// changes nothing.
    pub fn update_request(&mut self, holder: Holder, value_us: i32) -> bool {
        if ignored_since_v6_6(value_us) {
            return false;
        }
        match self.global.request(holder) {
            Some(current) if current != i64::from(value_us) => {
                self.global.set(holder, Self::global_value(value_us))
            }
            _ => false,
        }
    }

    /// `cpu_latency_qos_remove_request`: true when the limit changed.
    pub fn remove_request(&mut self, holder: Holder) -> bool {
        self.global.request(holder).is_some() && self.global.remove(holder)
    }

    fn global_value(value_us: i32) -> i64 {
        i64::from(if value_us == PM_QOS_DEFAULT_VALUE {
            CPU_LATENCY_DEFAULT_US
        } else {
            value_us
        })
    }

    /// `open("/dev/cpu_dma_latency")` by `holder`: a request at the default.
    pub fn open_dma_latency(&mut self, holder: Holder) -> bool {
        self.add_request(holder, PM_QOS_DEFAULT_VALUE)
    }

    /// `write(fd, bytes)` by `holder` on its open `/dev/cpu_dma_latency`: true when the limit
    /// changed; what the kernel would refuse (`-EINVAL`, `-ERANGE`) is an error saying what was
    /// expected.
    pub fn write_dma_latency(&mut self, holder: Holder, bytes: &[u8]) -> Result<bool, String> {
        let value = parse_dma_latency_write(bytes)?;
        Ok(self.update_request(holder, value))
    }

    /// `close(fd)`: the holder's request goes.
    pub fn close_dma_latency(&mut self, holder: Holder) -> bool {
        self.remove_request(holder)
    }

    fn resume_list(&mut self, cpu: u32) -> Option<&mut Constraints> {
        self.resume
            .iter_mut()
            .find(|(c, _)| *c == cpu)
            .map(|(_, list)| list)
    }

    /// `dev_pm_qos_raw_resume_latency(cpu)`, us: the CPU's aggregate, or no constraint for a
    /// CPU without QoS data.
    pub fn resume_latency_us(&self, cpu: u32) -> i32 {
        self.resume
            .iter()
            .find(|(c, _)| *c == cpu)
            .map_or(RESUME_LATENCY_NO_CONSTRAINT_US, |(_, list)| {
                list.value() as i32
            })
    }

    /// What `cpuN/power/pm_qos_resume_latency_us` holds (us; S32_MAX: no constraint).
    pub fn sysfs_request_us(&self, cpu: u32) -> i32 {
        self.resume
            .iter()
            .find(|(c, _)| *c == cpu)
            .and_then(|(_, list)| list.request(SYSFS_HOLDER))
            .map_or(RESUME_LATENCY_NO_CONSTRAINT_US, |v| v as i32)
    }

    /// `dev_pm_qos_add_request` / `dev_pm_qos_update_request` on the CPU's resume-latency list
    /// (-1: the default, no constraint); true when the CPU's aggregate changed. Unknown CPU:
    /// nothing happens.
    pub fn set_resume_request(&mut self, cpu: u32, holder: Holder, value_us: i32) -> bool {
        let value = if value_us == PM_QOS_DEFAULT_VALUE {
            RESUME_LATENCY_NO_CONSTRAINT_US
        } else {
            value_us
        };
        self.resume_list(cpu)
            .is_some_and(|list| list.set(holder, i64::from(value)))
    }

    /// `dev_pm_qos_remove_request`; true when the CPU's aggregate changed. The sysfs request
    /// lives as long as the CPU and is not removed.
    pub fn remove_resume_request(&mut self, cpu: u32, holder: Holder) -> bool {
        holder != SYSFS_HOLDER
            && self
                .resume_list(cpu)
                .is_some_and(|list| list.remove(holder))
    }

    /// A write of `text` to `cpuN/power/pm_qos_resume_latency_us`: true when the CPU's
    /// aggregate changed.
    pub fn store_resume_latency(&mut self, cpu: u32, text: &str) -> Result<bool, String> {
        let value = parse_resume_latency_store(text)?;
        Ok(self.set_resume_request(cpu, SYSFS_HOLDER, value))
    }

    /// Applies `action`; true when the global limit changed (the kernel then kicks every idle
    /// CPU). A change of one CPU's resume latency kicks nothing.
    pub fn apply(&mut self, action: &QosAction) -> bool {
        match (action.target, action.op) {
            (QosTarget::CpuDmaLatency, QosOp::Set(v)) => {
                let opened = self.request_us(action.holder).is_none()
                    && self.open_dma_latency(action.holder);
                self.update_request(action.holder, v) || opened
            }
            (QosTarget::CpuDmaLatency, QosOp::Remove) => self.close_dma_latency(action.holder),
            (QosTarget::ResumeLatency { cpu }, QosOp::Set(v)) => {
                self.set_resume_request(cpu, action.holder, v);
                false
            }
            (QosTarget::ResumeLatency { cpu }, QosOp::Remove) => {
                self.remove_resume_request(cpu, action.holder);
                false
            }
            (QosTarget::ScalingMinFreq { .. } | QosTarget::ScalingMaxFreq { .. }, _) => false,
        }
    }

    /// `cpuidle_governor_latency_req(cpu)`, ns.
    pub fn governor_latency_req_ns(&self, cpu: u32) -> i64 {
        i64::from(self.resume_latency_us(cpu).min(self.limit_us())) * 1000
    }
}

/// Why `kstrtos32` refused a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kstrto {
    /// `-EINVAL`: not an integer in the base (a trailing newline allowed).
    Invalid,
    /// `-ERANGE`: an integer outside the s32 range.
    Range,
}

/// `kstrtos32(s, base)` (lib/kstrtox.c): an optional sign, the digits of `base` (0: decimal, or
/// hex after "0x", or octal after a leading 0; 16 also takes a "0x" prefix), at most one
/// trailing newline, nothing else. The string ends at its first NUL, as a C string does.
fn kstrtos32(s: &[u8], base: u32) -> Result<i32, Kstrto> {
    let s = s.split(|&b| b == 0).next().unwrap_or_default();
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = i128::from(kstrtoull_digits(digits, base)?);
    let value = if negative { -magnitude } else { magnitude };
    i32::try_from(value).map_err(|_| Kstrto::Range)
}

/// The unsigned part of `kstrtoull`: radix fix-up, digits, overflow, the trailing newline.
fn kstrtoull_digits(s: &[u8], base: u32) -> Result<u64, Kstrto> {
    let is_x = |i: usize| s.get(i).is_some_and(|b| b.eq_ignore_ascii_case(&b'x'));
    let base = match base {
        0 if s.first() == Some(&b'0') => {
            if is_x(1) && s.get(2).is_some_and(u8::is_ascii_hexdigit) {
                16
            } else {
                8
            }
        }
        0 => 10,
        b => b,
    };
    let s = if base == 16 && s.first() == Some(&b'0') && is_x(1) {
        &s[2..]
    } else {
        s
    };
    let mut value: u64 = 0;
    let mut overflow = false;
    let mut used = 0;
    for &b in s {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => break,
        };
        if u32::from(digit) >= base {
            break;
        }
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        used += 1;
    }
    if overflow {
        return Err(Kstrto::Range);
    }
    if used == 0 {
        return Err(Kstrto::Invalid);
    }
    let rest = &s[used..];
    let rest = rest.strip_prefix(&b"\n"[..]).unwrap_or(rest);
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(Kstrto::Invalid)
    }
}

/// The request value a `write` of `bytes` to `/dev/cpu_dma_latency` asks for
/// (`cpu_latency_qos_write`), us.
pub fn parse_dma_latency_write(bytes: &[u8]) -> Result<i32, String> {
    if let Ok(binary) = <[u8; 4]>::try_from(bytes) {
        return Ok(i32::from_le_bytes(binary));
    }
    let text = &bytes[..bytes.len().min(KSTRTO_S32_FROM_USER_MAX)];
    kstrtos32(text, 16).map_err(|e| {
        let what = match e {
            Kstrto::Invalid => "",
            Kstrto::Range => " within the s32 range",
        };
        format!(
            "expected what /dev/cpu_dma_latency takes: 4 bytes (a binary s32, us) or a hex \
             number{what} (\"3e8\" or \"0x3e8\" is 1000 us)"
        )
    })
}

/// The request value a write of `text` to `cpuN/power/pm_qos_resume_latency_us` makes
/// (`pm_qos_resume_latency_us_store`), us.
pub fn parse_resume_latency_store(text: &str) -> Result<i32, String> {
    const EXPECTED: &str = "expected what pm_qos_resume_latency_us takes: 0 (no constraint), a \
                            latency of 1 to 2147483646 us, or \"n/a\" (no latency allowed)";
    match kstrtos32(text.as_bytes(), 0) {
        Ok(v) if v < 0 || v == RESUME_LATENCY_NO_CONSTRAINT_US => Err(format!(
            "{EXPECTED}; the kernel refuses a negative value and 2147483647 itself"
        )),
        Ok(0) => Ok(RESUME_LATENCY_NO_CONSTRAINT_US),
        Ok(v) => Ok(v),
        Err(_) if sysfs_streq(text, "n/a") => Ok(0),
        Err(Kstrto::Range) => Err(format!("{EXPECTED}; this is outside the s32 range")),
        Err(Kstrto::Invalid) => Err(EXPECTED.to_string()),
    }
}

/// `sysfs_streq`: equal but for one trailing newline on either side.
fn sysfs_streq(a: &str, b: &str) -> bool {
    a.strip_suffix('\n').unwrap_or(a) == b.strip_suffix('\n').unwrap_or(b)
}

#[cfg(test)]
mod tests;
