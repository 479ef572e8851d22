//! The events torpor analyses, decoded from a record's bytes by field name through the file's
//! own formats (never by fixed offsets: the layout changes between kernels), into the same
//! [`EventKind`] values the text reader produces, with the same checks.
//!
//! Where the text shows a value the record stores otherwise, the text is rebuilt as the
//! event's print fmt says: `prev_state` through the format's `__print_flags` table (the
//! masked value 0 prints `R`, the bit above the mask appends `+`, the kernel's convention),
//! `dependency` through its `__print_symbolic` table, a function pointer as the symbol that
//! holds it (`%ps`, from the file's kallsyms; `0x...` when none does), a string pointer from
//! the file's printk_formats, and a CPU bitmask as the kernel prints it (32-bit groups in hex,
//! most significant first, separated by commas).

use std::fmt::Write;

use super::format::{print_flags, print_symbolic, EventFormat, FieldDef, FlagTable, Layout};
use super::layout::read_uint;
use super::symbols::{Kallsyms, PrintkStrings};
use crate::error::shown;
use crate::trace::ftrace::{cpu_beyond, EventKind, CPUIDLE_STATE_MAX, CPU_IDLE_EXIT};

/// What a field must be to be read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A number of 1, 2, 4 or 8 bytes.
    Number,
    /// A string: a fixed `char` array or a `__data_loc`/`__rel_loc` one.
    Text,
    /// A dynamic array (a bitmask of longs).
    Dynamic,
}

/// A field located in the format.
#[derive(Clone, Debug)]
pub struct Field {
    name: &'static str,
    offset: usize,
    size: usize,
    signed: bool,
    layout: Layout,
}

fn find(fmt: &EventFormat, name: &'static str, want: Want) -> Result<Field, String> {
    let f: &FieldDef = fmt.field(name).ok_or_else(|| {
        format!(
            "the format of `{}` has no field `{name}`, which torpor reads",
            fmt.name
        )
    })?;
    let ok = match want {
        Want::Number => f.layout == Layout::Scalar && matches!(f.size, 1 | 2 | 4 | 8),
        Want::Text => f.layout == Layout::Array || (f.layout != Layout::Scalar && f.size == 4),
        Want::Dynamic => f.layout != Layout::Scalar && f.layout != Layout::Array && f.size == 4,
    };
    if !ok {
        let expected = match want {
            Want::Number => "a number of 1, 2, 4 or 8 bytes",
            Want::Text => "a string (a char array or a __data_loc one)",
            Want::Dynamic => "a __data_loc array",
        };
        return Err(format!(
            "the field `{name}` of `{}` ({} bytes at offset {}) is not {expected}",
            fmt.name, f.size, f.offset
        ));
    }
    Ok(Field {
        name,
        offset: f.offset,
        size: f.size,
        signed: f.signed,
        layout: f.layout,
    })
}

/// The file-wide things decoding needs.
pub struct Env<'a> {
    pub big: bool,
    /// The kernel's `long` in bytes (bitmask words).
    pub kernel_long: usize,
    pub kallsyms: &'a Kallsyms,
    pub printk: &'a PrintkStrings,
    pub cpus: u32,
}

impl Field {
    fn bytes<'d>(&self, data: &'d [u8], at: usize, len: usize) -> Result<&'d [u8], String> {
        data.get(at..at.saturating_add(len)).ok_or_else(|| {
            format!(
                "the record holds {} bytes, but its field `{}` needs bytes {at} to {}",
                data.len(),
                self.name,
                at.saturating_add(len)
            )
        })
    }

    fn uint(&self, data: &[u8], big: bool) -> Result<u64, String> {
        Ok(read_uint(self.bytes(data, self.offset, self.size)?, big))
    }

    /// The value sign-extended when the format says the field is signed.
    fn int(&self, data: &[u8], big: bool) -> Result<i64, String> {
        let v = self.uint(data, big)?;
        let bits = self.size as u32 * 8;
        Ok(if self.signed && bits < 64 {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        } else {
            v as i64
        })
    }

    /// The bytes of a string or dynamic array field.
    fn dynamic<'d>(&self, data: &'d [u8], big: bool) -> Result<&'d [u8], String> {
        match self.layout {
            Layout::Array => self.bytes(data, self.offset, self.size),
            _ => {
                let word = self.uint(data, big)?;
                let (mut at, len) = ((word & 0xffff) as usize, (word >> 16 & 0xffff) as usize);
                if self.layout == Layout::RelLoc {
                    at += self.offset + self.size;
                }
                self.bytes(data, at, len)
            }
        }
    }

    fn text<'d>(&self, data: &'d [u8], big: bool) -> Result<&'d str, String> {
        let b = self.dynamic(data, big)?;
        let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
        std::str::from_utf8(b).map_err(|_| {
            format!(
                "expected UTF-8 text for `{}`, got {}",
                self.name,
                shown(&String::from_utf8_lossy(b))
            )
        })
    }
}

/// Which of the wake-up events a [`Decoder::SchedWakeup`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeName {
    Wakeup,
    WakeupNew,
    Waking,
}

/// The decoder of one known event, its fields found in the format.
pub enum Decoder {
    CpuIdle {
        state: Field,
        cpu_id: Field,
    },
    CpuIdleMiss {
        cpu_id: Field,
        state: Field,
        below: Field,
    },
    CpuFrequency {
        state: Field,
        cpu_id: Field,
    },
    /// `sched_wakeup`, `sched_wakeup_new` and `sched_waking` (one event class).
    SchedWakeup {
        comm: Field,
        pid: Field,
        target_cpu: Field,
        name: WakeName,
    },
    SchedSwitch {
        prev_pid: Field,
        prev_state: Field,
        next_pid: Field,
        table: Option<FlagTable>,
    },
    HrtimerStart {
        hrtimer: Field,
        function: Field,
        expires: Field,
        softexpires: Field,
    },
    HrtimerExpireEntry {
        hrtimer: Field,
        function: Field,
        now: Field,
    },
    HrtimerCancel {
        hrtimer: Field,
    },
    TimerStart {
        timer: Field,
        function: Field,
        expires: Field,
    },
    TimerExpireEntry {
        timer: Field,
        function: Field,
        now: Field,
    },
    TimerCancel {
        timer: Field,
    },
    TickStop {
        success: Field,
        dependency: Field,
        table: Option<Vec<(u64, String)>>,
    },
    IrqHandlerEntry {
        irq: Field,
        name: Field,
    },
    IpiRaise {
        target_cpus: Field,
        reason: Field,
    },
    IpiEntry {
        reason: Field,
        exit: bool,
    },
}

impl Decoder {
    /// The decoder for the known event `name` (one of the text reader's names).
    pub fn new(name: &str, fmt: &EventFormat) -> Result<Decoder, String> {
        use Want::{Dynamic, Number, Text};
        let n = |f: &'static str| find(fmt, f, Number);
        Ok(match name {
            "cpu_idle" => Decoder::CpuIdle {
                state: n("state")?,
                cpu_id: n("cpu_id")?,
            },
            "cpu_idle_miss" => Decoder::CpuIdleMiss {
                cpu_id: n("cpu_id")?,
                state: n("state")?,
                below: n("below")?,
            },
            "cpu_frequency" => Decoder::CpuFrequency {
                state: n("state")?,
                cpu_id: n("cpu_id")?,
            },
            "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => Decoder::SchedWakeup {
                comm: find(fmt, "comm", Text)?,
                pid: n("pid")?,
                target_cpu: n("target_cpu")?,
                name: match name {
                    "sched_wakeup" => WakeName::Wakeup,
                    "sched_wakeup_new" => WakeName::WakeupNew,
                    _ => WakeName::Waking,
                },
            },
            "sched_switch" => Decoder::SchedSwitch {
                prev_pid: n("prev_pid")?,
                prev_state: n("prev_state")?,
                next_pid: n("next_pid")?,
                table: print_flags(&fmt.print_fmt, "prev_state"),
            },
            "hrtimer_start" => Decoder::HrtimerStart {
                hrtimer: n("hrtimer")?,
                function: n("function")?,
                expires: n("expires")?,
                softexpires: n("softexpires")?,
            },
            "hrtimer_expire_entry" => Decoder::HrtimerExpireEntry {
                hrtimer: n("hrtimer")?,
                function: n("function")?,
                now: n("now")?,
            },
            "hrtimer_cancel" => Decoder::HrtimerCancel {
                hrtimer: n("hrtimer")?,
            },
            "timer_start" => Decoder::TimerStart {
                timer: n("timer")?,
                function: n("function")?,
                expires: n("expires")?,
            },
            "timer_expire_entry" => Decoder::TimerExpireEntry {
                timer: n("timer")?,
                function: n("function")?,
                now: n("now")?,
            },
            "timer_cancel" => Decoder::TimerCancel { timer: n("timer")? },
            "tick_stop" => Decoder::TickStop {
                success: n("success")?,
                dependency: n("dependency")?,
                table: print_symbolic(&fmt.print_fmt, "dependency"),
            },
            "irq_handler_entry" => Decoder::IrqHandlerEntry {
                irq: n("irq")?,
                name: find(fmt, "name", Text)?,
            },
            "ipi_raise" => Decoder::IpiRaise {
                target_cpus: find(fmt, "target_cpus", Dynamic)?,
                reason: n("reason")?,
            },
            "ipi_entry" | "ipi_exit" => Decoder::IpiEntry {
                reason: n("reason")?,
                exit: name == "ipi_exit",
            },
            other => return Err(format!("`{other}` is not an event torpor decodes")),
        })
    }

    /// The event of one record; the error is what was wrong, without a location.
    pub fn decode<'a>(
        &'a self,
        data: &'a [u8],
        env: &Env<'a>,
        scratch: &'a mut [String; 2],
    ) -> Result<EventKind<'a>, String> {
        let big = env.big;
        let [s0, s1] = scratch;
        let cpu = |f: &Field, what: &str| -> Result<u32, String> {
            let v = f.uint(data, big)?;
            match u32::try_from(v) {
                Ok(c) if c < env.cpus => Ok(c),
                _ => Err(cpu_beyond(
                    what,
                    v.min(u64::from(u32::MAX)) as u32,
                    Some(env.cpus),
                )),
            }
        };
        let whole = |f: &Field, event: &str| -> Result<u64, String> {
            let v = f.int(data, big)?;
            u64::try_from(v).map_err(|_| {
                format!(
                    "expected a whole number for `{}` of `{event}`, got {v}",
                    f.name
                )
            })
        };
        let pid = |f: &Field| -> Result<i32, String> {
            let v = f.int(data, big)?;
            i32::try_from(v).map_err(|_| format!("expected a process id for `{}`, got {v}", f.name))
        };
        Ok(match self {
            Decoder::CpuIdle { state, cpu_id } => {
                let s = state.uint(data, big)?;
                let cpu_id = cpu(cpu_id, "`cpu_id` of `cpu_idle`")?;
                let exit = s == u64::from(CPU_IDLE_EXIT) || (state.size == 8 && s == u64::MAX);
                let state = if exit {
                    None
                } else if s < u64::from(CPUIDLE_STATE_MAX) {
                    Some(s as u32)
                } else {
                    return Err(format!(
                        "expected a `cpu_idle` state below {CPUIDLE_STATE_MAX} (the kernel's \
                         CPUIDLE_STATE_MAX) or {CPU_IDLE_EXIT} (exit), got {s}"
                    ));
                };
                EventKind::CpuIdle { state, cpu_id }
            }
            Decoder::CpuIdleMiss {
                cpu_id,
                state,
                below,
            } => {
                let cpu_id = cpu(cpu_id, "`cpu_id` of `cpu_idle_miss`")?;
                let s = state.uint(data, big)?;
                if s >= u64::from(CPUIDLE_STATE_MAX) {
                    return Err(format!(
                        "expected a `cpu_idle_miss` state below {CPUIDLE_STATE_MAX}, got {s}"
                    ));
                }
                EventKind::CpuIdleMiss {
                    cpu_id,
                    state: s as u32,
                    below: below.uint(data, big)? != 0,
                }
            }
            Decoder::CpuFrequency { state, cpu_id } => {
                let khz = state.uint(data, big)?;
                EventKind::CpuFrequency {
                    khz: u32::try_from(khz).map_err(|_| {
                        format!(
                            "expected a frequency in kHz for `state` of `cpu_frequency`, got {khz}"
                        )
                    })?,
                    cpu_id: cpu(cpu_id, "`cpu_id` of `cpu_frequency`")?,
                }
            }
            Decoder::SchedWakeup {
                comm,
                pid: p,
                target_cpu,
                name,
            } => {
                let comm = comm.text(data, big)?;
                let pid = pid(p)?;
                let target_cpu = cpu(target_cpu, "`target_cpu` of `sched_wakeup`")?;
                match name {
                    WakeName::Waking => EventKind::SchedWaking {
                        comm,
                        pid,
                        target_cpu,
                    },
                    _ => EventKind::SchedWakeup {
                        comm,
                        pid,
                        target_cpu,
                        new: *name == WakeName::WakeupNew,
                    },
                }
            }
            Decoder::SchedSwitch {
                prev_pid,
                prev_state,
                next_pid,
                table,
            } => {
                let v = prev_state.uint(data, big)?;
                EventKind::SchedSwitch {
                    prev_pid: pid(prev_pid)?,
                    prev_state: task_state(v, table.as_ref(), s0),
                    next_pid: pid(next_pid)?,
                }
            }
            Decoder::HrtimerStart {
                hrtimer,
                function,
                expires,
                softexpires,
            } => EventKind::HrtimerStart {
                hrtimer: hrtimer.uint(data, big)?,
                function: symbol(function.uint(data, big)?, env.kallsyms, s0),
                expires_ns: whole(expires, "hrtimer_start")?,
                softexpires_ns: whole(softexpires, "hrtimer_start")?,
            },
            Decoder::HrtimerExpireEntry {
                hrtimer,
                function,
                now,
            } => EventKind::HrtimerExpireEntry {
                hrtimer: hrtimer.uint(data, big)?,
                function: symbol(function.uint(data, big)?, env.kallsyms, s0),
                now_ns: whole(now, "hrtimer_expire_entry")?,
            },
            Decoder::HrtimerCancel { hrtimer } => EventKind::HrtimerCancel {
                hrtimer: hrtimer.uint(data, big)?,
            },
            Decoder::TimerStart {
                timer,
                function,
                expires,
            } => EventKind::TimerStart {
                timer: timer.uint(data, big)?,
                function: symbol(function.uint(data, big)?, env.kallsyms, s0),
                expires: whole(expires, "timer_start")?,
            },
            Decoder::TimerExpireEntry {
                timer,
                function,
                now,
            } => EventKind::TimerExpireEntry {
                timer: timer.uint(data, big)?,
                function: symbol(function.uint(data, big)?, env.kallsyms, s0),
                now: whole(now, "timer_expire_entry")?,
            },
            Decoder::TimerCancel { timer } => EventKind::TimerCancel {
                timer: timer.uint(data, big)?,
            },
            Decoder::TickStop {
                success,
                dependency,
                table,
            } => {
                let ok = match success.uint(data, big)? {
                    0 => false,
                    1 => true,
                    v => {
                        return Err(format!(
                            "expected 0 or 1 for `success` of `tick_stop`, got {v}"
                        ))
                    }
                };
                let dep = dependency.uint(data, big)?;
                let named = table
                    .as_ref()
                    .and_then(|t| t.iter().find(|(v, _)| *v == dep))
                    .map(|(_, n)| n.as_str());
                EventKind::TickStop {
                    success: ok,
                    dependency: match named {
                        Some(n) => n,
                        None => fill(s0, |s| {
                            let _ = write!(s, "{dep}");
                        }),
                    },
                }
            }
            Decoder::IrqHandlerEntry { irq, name } => {
                let v = irq.int(data, big)?;
                EventKind::IrqHandlerEntry {
                    irq: u32::try_from(v)
                        .map_err(|_| format!("expected an irq number for `irq`, got {v}"))?,
                    name: name.text(data, big)?,
                }
            }
            Decoder::IpiRaise {
                target_cpus,
                reason,
            } => {
                let mask = target_cpus.dynamic(data, big)?;
                EventKind::IpiRaise {
                    target_mask: fill(s0, |s| bitmask(mask, env.kernel_long, big, s)),
                    reason: string_at(reason.uint(data, big)?, env.printk, s1),
                }
            }
            Decoder::IpiEntry { reason, exit } => {
                let reason = string_at(reason.uint(data, big)?, env.printk, s0);
                if *exit {
                    EventKind::IpiExit { reason }
                } else {
                    EventKind::IpiEntry { reason }
                }
            }
        })
    }
}

/// `s` cleared and written by `f`, as a string borrowed for as long as `s` is.
fn fill(s: &mut String, f: impl FnOnce(&mut String)) -> &str {
    s.clear();
    f(s);
    s
}

/// `%ps`: the symbol holding `addr`, or the address in hex.
fn symbol<'a>(addr: u64, kallsyms: &'a Kallsyms, s: &'a mut String) -> &'a str {
    match kallsyms.name(addr) {
        Some(n) => n,
        None => fill(s, |s| {
            let _ = write!(s, "0x{addr:x}");
        }),
    }
}

/// A `const char *` recorded by address: its text from printk_formats, or the address.
fn string_at<'a>(addr: u64, printk: &'a PrintkStrings, s: &'a mut String) -> &'a str {
    match printk.get(addr) {
        Some(t) => t,
        None => fill(s, |s| {
            let _ = write!(s, "0x{addr:x}");
        }),
    }
}

/// `prev_state` as the print fmt's flag table names it (see the module doc); without a table,
/// the number.
fn task_state<'a>(value: u64, table: Option<&FlagTable>, s: &'a mut String) -> &'a str {
    fill(s, |s| {
        let Some(t) = table else {
            let _ = write!(s, "{value}");
            return;
        };
        let masked = value & t.mask;
        if masked == 0 {
            s.push('R');
        } else {
            let mut left = masked;
            for (bit, name) in &t.entries {
                if *bit != 0 && masked & bit == *bit {
                    if !s.is_empty() {
                        s.push_str(&t.delimiter);
                    }
                    s.push_str(name);
                    left &= !bit;
                }
            }
            if left != 0 {
                if !s.is_empty() {
                    s.push_str(&t.delimiter);
                }
                let _ = write!(s, "0x{left:x}");
            }
        }
        if t.mask != u64::MAX && value & (t.mask + 1) != 0 {
            s.push('+');
        }
    })
}

/// A bitmask of `long` words as the kernel prints it: 32-bit groups in hex, most significant
/// first, separated by commas.
fn bitmask(bytes: &[u8], long: usize, big: bool, s: &mut String) {
    // Byte k of `le` holds bits 8k..8k+7 of the mask.
    let mut le = Vec::with_capacity(bytes.len());
    for word in bytes.chunks(long.max(1)) {
        if big {
            le.extend(word.iter().rev());
        } else {
            le.extend_from_slice(word);
        }
    }
    let groups = le.len().div_ceil(4);
    for g in (0..groups).rev() {
        if g + 1 != groups {
            s.push(',');
        }
        let top = (g * 4 + 4).min(le.len());
        for k in (g * 4..top).rev() {
            let _ = write!(s, "{:02x}", le[k]);
        }
    }
}
