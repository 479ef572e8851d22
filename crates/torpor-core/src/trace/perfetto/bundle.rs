//! One `FtraceEventBundle` (a packet's field 1): the events one CPU's kernel buffer held, as
//! `FtraceEvent`s and in the compact scheduler encoding, decoded into [`Pending`] events.
//!
//! Written from Perfetto's `protos/perfetto/trace/ftrace/` (`ftrace_event_bundle.proto`,
//! `ftrace_event.proto` and the per-group files `power.proto`, `sched.proto`, `irq.proto`,
//! `ipi.proto`, `timer.proto`, `generic.proto`). Steps:
//! 1. The bundle's `cpu` (field 1), `lost_events` (3) and `ftrace_clock` (5).
//! 2. Each `event` (2): its `timestamp` (1, nanoseconds of the ftrace clock) and the one
//!    field of its `oneof` that names the event. The events torpor reads are decoded by field
//!    number, as the .proto files number them; a `generic` event (327: an event Perfetto has
//!    no message for, with named fields) is decoded by name and field names when it is
//!    `cpu_idle_miss` or `tick_stop`. Everything else is counted by name and skipped.
//! 3. `compact_sched` (4): arrays with one entry per `sched_switch` and per `sched_waking`,
//!    each kind's timestamps delta-encoded (the first absolute), task names an index into the
//!    bundle's `intern_table`. A compact switch does not carry the task switched out: it is the
//!    one the CPU's previous switch switched in, as the kernel's `prev_pid` would say; until a
//!    CPU's first switch, and after a bundle that says events were lost, it is unknown and the
//!    switch is skipped (counted). A compact waking carries what a `sched_waking` event does
//!    (pid, target CPU, priority, task name) and is read as one.
//! 4. The bundle's events are put in time order (stable: the kernel buffer's order for equal
//!    times; compact events after the others at the same instant).
//!
//! Texts the kernel prints from numbers are rebuilt as its `TP_printk` would print them:
//! `prev_state` with the letters of Linux 4.14+'s `TASK_REPORT` bits (`R` for none, `+` for
//! the preemption bit, `TASK_REPORT_MAX` = 0x100); `tick_stop`'s dependency with its
//! `TICK_DEP_MASK_*` names (include/linux/tick.h); `ipi_raise`'s target as 8 hex digits (the
//! proto keeps the mask's low 32 bits); a timer function through the trace's interned kernel
//! symbols (`symbolize_ksyms`), else as its hexadecimal value (counted).

use std::collections::{BTreeMap, HashMap};

use super::event::{Kind, Names, Pending, Sym};
use super::wire::{push_varints, Fields, Value};
use crate::trace::ftrace::{
    CPUIDLE_STATE_MAX, CPU_IDLE_EXIT, MAX_CPUS, MAX_EVENT_NAMES, OTHER_EVENTS,
};

/// `FtraceEvent` field numbers of the events torpor decodes (ftrace_event.proto).
mod field {
    pub const SCHED_SWITCH: u32 = 4;
    pub const CPU_FREQUENCY: u32 = 11;
    pub const CPU_IDLE: u32 = 13;
    pub const SCHED_WAKEUP: u32 = 17;
    pub const SCHED_WAKING: u32 = 20;
    pub const IPI_ENTRY: u32 = 21;
    pub const IPI_EXIT: u32 = 22;
    pub const IPI_RAISE: u32 = 23;
    pub const IRQ_HANDLER_ENTRY: u32 = 36;
    pub const SCHED_WAKEUP_NEW: u32 = 114;
    pub const GENERIC: u32 = 327;
    pub const HRTIMER_START: u32 = 551;
    pub const HRTIMER_CANCEL: u32 = 552;
    pub const HRTIMER_EXPIRE_ENTRY: u32 = 553;
    pub const TIMER_START: u32 = 555;
    pub const TIMER_CANCEL: u32 = 556;
    pub const TIMER_EXPIRE_ENTRY: u32 = 557;
}

/// Names of common events torpor skips, for the counts (others show their field number).
const SKIPPED_NAMES: &[(u32, &str)] = &[
    (3, "print"),
    (12, "cpu_frequency_limits"),
    (18, "sched_blocked_reason"),
    (19, "sched_cpu_hotplug"),
    (24, "softirq_entry"),
    (25, "softirq_exit"),
    (26, "softirq_raise"),
    (37, "irq_handler_exit"),
    (235, "task_newtask"),
    (236, "task_rename"),
    (237, "sched_process_exec"),
    (238, "sched_process_exit"),
    (239, "sched_process_fork"),
    (240, "sched_process_free"),
    (353, "sched_pi_setprio"),
    (491, "sched_migrate_task"),
    (554, "hrtimer_expire_exit"),
    (558, "timer_expire_exit"),
];

/// The `prev_state` bits of Linux 4.14+ and their letters (include/trace/events/sched.h).
const TASK_STATE_LETTERS: &[(u64, &str)] = &[
    (0x01, "S"),
    (0x02, "D"),
    (0x04, "T"),
    (0x08, "t"),
    (0x10, "X"),
    (0x20, "Z"),
    (0x40, "P"),
    (0x80, "I"),
];
const TASK_REPORT_MAX: u64 = 0x100;

/// `TICK_DEP_MASK_*` values and the names `tick_stop` prints (include/linux/tick.h).
const TICK_DEPS: &[(u64, &str)] = &[
    (0, "NONE"),
    (1, "POSIX_TIMER"),
    (2, "PERF_EVENTS"),
    (4, "SCHED"),
    (8, "CLOCK_UNSTABLE"),
    (16, "RCU"),
    (32, "RCU_EXP"),
];

/// What a bundle said about itself.
pub struct Head {
    pub cpu: u32,
    pub lost: bool,
    /// `ftrace_clock` when set (unset: the boot clock).
    pub clock: Option<u64>,
}

/// Decodes bundles; holds what carries over from one to the next.
#[derive(Default)]
pub struct Bundles {
    pub names: Names,
    /// Per CPU: the task the last switch switched in.
    running: HashMap<u32, i32>,
    prev_states: HashMap<u64, Sym>,
    arrays: [Vec<u64>; 13],
    intern: Vec<Sym>,
    /// Skipped events by field number, and generic events by name.
    pub skipped: HashMap<u32, u64>,
    pub skipped_generic: BTreeMap<String, u64>,
    /// Compact switches whose previous task was unknown.
    pub compact_without_prev: u64,
    /// Timer functions with no interned kernel symbol.
    pub unresolved_functions: u64,
    events: Vec<Pending>,
}

/// The fields 1 to 7 of a message (all the event messages torpor reads number theirs so),
/// the last of each kept, as protobuf does for a scalar; others ignored.
type Small<'a> = [Option<Value<'a>>; 8];

fn small(msg: &[u8]) -> Result<Small<'_>, String> {
    let mut m: Small<'_> = [None; 8];
    for f in Fields::new(msg) {
        let (n, v) = f?;
        if let Some(slot) = m.get_mut(n as usize) {
            *slot = Some(v);
        }
    }
    Ok(m)
}

fn int(m: &Small<'_>, n: usize, name: &str) -> Result<u64, String> {
    match m[n] {
        None => Ok(0),
        Some(v) => v
            .int()
            .ok_or_else(|| format!("`{name}` is bytes; expected an integer")),
    }
}

fn text<'a>(m: &Small<'a>, n: usize, name: &str) -> Result<&'a [u8], String> {
    match m[n] {
        None => Ok(b""),
        Some(Value::Bytes(b)) => Ok(b),
        Some(_) => Err(format!("`{name}` is a number; expected a string")),
    }
}

/// An `int32` field: its varint holds the value sign-extended to 64 bits.
fn i32_of(v: u64) -> i32 {
    v as i64 as i32
}

fn cpu_of(v: u64, what: &str) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|&c| c < MAX_CPUS)
        .ok_or_else(|| format!("{what} is {}; expected a CPU below {MAX_CPUS}", v as i64))
}

impl Bundles {
    /// Decodes one bundle into `out` (appended in time order). `symbols`: the interned kernel
    /// symbols of the bundle's packet sequence. Errors say what is wrong, without a place.
    pub fn decode(
        &mut self,
        bundle: &[u8],
        at: u64,
        symbols: Option<&HashMap<u64, Sym>>,
        out: &mut Vec<Pending>,
    ) -> Result<Head, String> {
        let mut head = Head {
            cpu: 0,
            lost: false,
            clock: None,
        };
        let mut has_cpu = false;
        for f in Fields::new(bundle) {
            match f? {
                (1, v) => {
                    let c = v.int().ok_or("the bundle's `cpu` is bytes")?;
                    head.cpu = cpu_of(c, "the bundle's `cpu`")?;
                    has_cpu = true;
                }
                (3, v) => head.lost = v.int().is_some_and(|v| v != 0),
                (5, v) => head.clock = v.int(),
                _ => {}
            }
        }
        if !has_cpu {
            return Err("an ftrace event bundle without its `cpu`".to_string());
        }
        if head.lost {
            self.running.remove(&head.cpu);
        }
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        for f in Fields::new(bundle) {
            match f? {
                (2, Value::Bytes(e)) => self.event(e, head.cpu, at, symbols, &mut events)?,
                (4, Value::Bytes(c)) => self.compact(c, head.cpu, at, &mut events)?,
                (2 | 4, _) => return Err("a bundle's event is a number".to_string()),
                _ => {}
            }
        }
        events.sort_by_key(|e| e.ts);
        out.extend_from_slice(&events);
        self.events = events;
        Ok(head)
    }

    fn event(
        &mut self,
        e: &[u8],
        cpu: u32,
        at: u64,
        symbols: Option<&HashMap<u64, Sym>>,
        out: &mut Vec<Pending>,
    ) -> Result<(), String> {
        let mut ts = 0;
        let mut body: Option<(u32, &[u8])> = None;
        for f in Fields::new(e) {
            match f.map_err(|m| format!("in an ftrace event, {m}"))? {
                (1, v) => ts = v.int().ok_or("an ftrace event's `timestamp` is bytes")?,
                (n, Value::Bytes(b)) if n != 2 && n != 5 => body = Some((n, b)),
                _ => {}
            }
        }
        let Some((number, body)) = body else {
            *self.skipped.entry(0).or_insert(0) += 1;
            return Ok(());
        };
        let kind = self
            .kind(number, body, symbols)
            .map_err(|m| format!("in a `{}` event, {m}", event_name(number)))?;
        if let Some(Kind::SchedSwitch { next_pid, .. }) = kind {
            self.running.insert(cpu, next_pid);
        }
        match kind {
            Some(kind) => out.push(Pending { ts, at, kind }),
            None if number == field::GENERIC => {}
            None => *self.skipped.entry(number).or_insert(0) += 1,
        }
        Ok(())
    }

    /// The event of `body` when torpor reads it (`None`: counted by the caller, or here for
    /// generic events).
    fn kind(
        &mut self,
        number: u32,
        body: &[u8],
        symbols: Option<&HashMap<u64, Sym>>,
    ) -> Result<Option<Kind>, String> {
        use field::*;
        if number == GENERIC {
            return self.generic(body);
        }
        let known = matches!(
            number,
            SCHED_SWITCH
                | CPU_FREQUENCY
                | CPU_IDLE
                | SCHED_WAKEUP
                | SCHED_WAKING
                | IPI_ENTRY
                | IPI_EXIT
                | IPI_RAISE
                | IRQ_HANDLER_ENTRY
                | SCHED_WAKEUP_NEW
                | HRTIMER_START
                | HRTIMER_CANCEL
                | HRTIMER_EXPIRE_ENTRY
                | TIMER_START
                | TIMER_CANCEL
                | TIMER_EXPIRE_ENTRY
        );
        if !known {
            return Ok(None);
        }
        let m = small(body)?;
        Ok(Some(match number {
            CPU_IDLE => {
                let state = int(&m, 1, "state")?;
                let cpu_id = cpu_of(int(&m, 2, "cpu_id")?, "`cpu_id`")?;
                Kind::CpuIdle {
                    state: idle_state(state)?,
                    cpu_id,
                }
            }
            CPU_FREQUENCY => Kind::CpuFrequency {
                khz: int(&m, 1, "state")? as u32,
                cpu_id: cpu_of(int(&m, 2, "cpu_id")?, "`cpu_id`")?,
            },
            SCHED_SWITCH => {
                let prev_pid = i32_of(int(&m, 2, "prev_pid")?);
                let next_pid = i32_of(int(&m, 6, "next_pid")?);
                let prev_state = self.prev_state(int(&m, 4, "prev_state")?);
                Kind::SchedSwitch {
                    prev_pid,
                    prev_state,
                    next_pid,
                }
            }
            SCHED_WAKEUP | SCHED_WAKEUP_NEW => Kind::SchedWakeup {
                comm: self.names.intern(text(&m, 1, "comm")?),
                pid: i32_of(int(&m, 2, "pid")?),
                target_cpu: cpu_of(int(&m, 5, "target_cpu")?, "`target_cpu`")?,
                new: number == SCHED_WAKEUP_NEW,
            },
            SCHED_WAKING => Kind::SchedWaking {
                comm: self.names.intern(text(&m, 1, "comm")?),
                pid: i32_of(int(&m, 2, "pid")?),
                target_cpu: cpu_of(int(&m, 5, "target_cpu")?, "`target_cpu`")?,
            },
            IRQ_HANDLER_ENTRY => Kind::IrqHandlerEntry {
                irq: int(&m, 1, "irq")? as u32,
                name: self.names.intern(text(&m, 2, "name")?),
            },
            IPI_RAISE => {
                let mask = format!("{:08x}", int(&m, 1, "target_cpus")? as u32);
                Kind::IpiRaise {
                    target_mask: self.names.intern_str(&mask),
                    reason: self.names.intern(text(&m, 2, "reason")?),
                }
            }
            IPI_ENTRY => Kind::IpiEntry {
                reason: self.names.intern(text(&m, 1, "reason")?),
            },
            IPI_EXIT => Kind::IpiExit {
                reason: self.names.intern(text(&m, 1, "reason")?),
            },
            HRTIMER_START => Kind::HrtimerStart {
                hrtimer: int(&m, 1, "hrtimer")?,
                function: self.function(int(&m, 2, "function")?, symbols),
                expires_ns: int(&m, 3, "expires")?,
                softexpires_ns: int(&m, 4, "softexpires")?,
            },
            HRTIMER_EXPIRE_ENTRY => Kind::HrtimerExpireEntry {
                hrtimer: int(&m, 1, "hrtimer")?,
                now_ns: int(&m, 2, "now")?,
                function: self.function(int(&m, 3, "function")?, symbols),
            },
            HRTIMER_CANCEL => Kind::HrtimerCancel {
                hrtimer: int(&m, 1, "hrtimer")?,
            },
            TIMER_START => Kind::TimerStart {
                timer: int(&m, 1, "timer")?,
                function: self.function(int(&m, 2, "function")?, symbols),
                expires: int(&m, 3, "expires")?,
            },
            TIMER_EXPIRE_ENTRY => Kind::TimerExpireEntry {
                timer: int(&m, 1, "timer")?,
                now: int(&m, 2, "now")?,
                function: self.function(int(&m, 3, "function")?, symbols),
            },
            _ => Kind::TimerCancel {
                timer: int(&m, 1, "timer")?,
            },
        }))
    }

    /// A `generic` event (`event_name` and named fields): `cpu_idle_miss` and `tick_stop` are
    /// read by their fields' names; others are counted by name.
    fn generic(&mut self, body: &[u8]) -> Result<Option<Kind>, String> {
        let mut name: &[u8] = b"";
        let mut values: [Option<u64>; 4] = [None; 4];
        const FIELDS: [&str; 4] = ["cpu_id", "state", "below", "success"];
        let mut dependency = None;
        for f in Fields::new(body) {
            match f? {
                (1, Value::Bytes(b)) => name = b,
                (2, Value::Bytes(field)) => {
                    let m = small(field)?;
                    let fname = text(&m, 1, "name")?;
                    let value = m[4].or(m[5]).and_then(Value::int);
                    if fname == b"dependency" {
                        dependency = value;
                    } else if let Some(i) = FIELDS.iter().position(|n| n.as_bytes() == fname) {
                        values[i] = value;
                    }
                }
                _ => {}
            }
        }
        let need = |i: usize| {
            values[i].ok_or_else(|| format!("the generic event has no integer `{}`", FIELDS[i]))
        };
        Ok(Some(match name {
            b"cpu_idle_miss" => {
                let state = need(1)?;
                if state >= u64::from(CPUIDLE_STATE_MAX) {
                    return Err(format!(
                        "expected a `cpu_idle_miss` state below {CPUIDLE_STATE_MAX}, got {state}"
                    ));
                }
                Kind::CpuIdleMiss {
                    cpu_id: cpu_of(need(0)?, "`cpu_id`")?,
                    state: state as u32,
                    below: need(2)? != 0,
                }
            }
            b"tick_stop" => {
                let dep = dependency.ok_or("the generic event has no integer `dependency`")?;
                let text = match TICK_DEPS.iter().find(|(v, _)| *v == dep) {
                    Some((_, n)) => n.to_string(),
                    None => format!("{dep:#x}"),
                };
                Kind::TickStop {
                    success: need(3)? != 0,
                    dependency: self.names.intern_str(&text),
                }
            }
            _ => {
                let name = String::from_utf8_lossy(name);
                let n = self.skipped_generic.len();
                let key = if n < MAX_EVENT_NAMES || self.skipped_generic.contains_key(name.as_ref())
                {
                    name.into_owned()
                } else {
                    OTHER_EVENTS.to_string()
                };
                *self.skipped_generic.entry(key).or_insert(0) += 1;
                return Ok(None);
            }
        }))
    }

    fn function(&mut self, v: u64, symbols: Option<&HashMap<u64, Sym>>) -> Sym {
        if let Some(&s) = symbols.and_then(|s| s.get(&v)) {
            return s;
        }
        self.unresolved_functions += 1;
        self.names.intern_str(&format!("{v:#x}"))
    }

    fn prev_state(&mut self, v: u64) -> Sym {
        if let Some(&s) = self.prev_states.get(&v) {
            return s;
        }
        let low = v & (TASK_REPORT_MAX - 1);
        let mut text: String = TASK_STATE_LETTERS
            .iter()
            .filter(|(bit, _)| low & bit != 0)
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("|");
        if low == 0 {
            text.push('R');
        }
        if v & TASK_REPORT_MAX != 0 {
            text.push('+');
        }
        let s = self.names.intern_str(&text);
        if self.prev_states.len() < 4096 {
            self.prev_states.insert(v, s);
        }
        s
    }

    /// The compact scheduler encoding of `cpu`'s switches and wakings.
    fn compact(
        &mut self,
        c: &[u8],
        cpu: u32,
        at: u64,
        out: &mut Vec<Pending>,
    ) -> Result<(), String> {
        for a in &mut self.arrays {
            a.clear();
        }
        self.intern.clear();
        for f in Fields::new(c) {
            let (n, v) = f.map_err(|m| format!("in `compact_sched`, {m}"))?;
            match (n, v) {
                (5, Value::Bytes(s)) => {
                    let s = self.names.intern(s);
                    self.intern.push(s);
                }
                (1..=12, v) => push_varints(v, &mut self.arrays[n as usize])
                    .map_err(|m| format!("in `compact_sched` field {n}, {m}"))?,
                _ => {}
            }
        }
        let a = &self.arrays;
        let n_switch = a[1].len();
        for (i, name) in [
            (2, "switch_prev_state"),
            (3, "switch_next_pid"),
            (6, "switch_next_comm_index"),
        ] {
            if a[i].len() != n_switch {
                return Err(format!(
                    "`compact_sched` has {n_switch} switch timestamps but {} `{name}`",
                    a[i].len()
                ));
            }
        }
        let mut ts: u64 = 0;
        for i in 0..n_switch {
            ts = ts
                .checked_add(self.arrays[1][i])
                .ok_or("`compact_sched`'s switch timestamps add up past 2^64 ns")?;
            let comm = self.arrays[6][i];
            if comm >= self.intern.len() as u64 {
                return Err(format!(
                    "a compact switch names task name {comm} of a table of {}",
                    self.intern.len()
                ));
            }
            let next_pid = i32_of(self.arrays[3][i]);
            let state = self.arrays[2][i];
            match self.running.insert(cpu, next_pid) {
                Some(prev_pid) => {
                    let prev_state = self.prev_state(state);
                    out.push(Pending {
                        ts,
                        at,
                        kind: Kind::SchedSwitch {
                            prev_pid,
                            prev_state,
                            next_pid,
                        },
                    });
                }
                None => self.compact_without_prev += 1,
            }
        }
        let n_waking = self.arrays[7].len();
        for (i, name) in [
            (8, "waking_pid"),
            (9, "waking_target_cpu"),
            (11, "waking_comm_index"),
        ] {
            if self.arrays[i].len() != n_waking {
                return Err(format!(
                    "`compact_sched` has {n_waking} waking timestamps but {} `{name}`",
                    self.arrays[i].len()
                ));
            }
        }
        let mut ts: u64 = 0;
        for i in 0..n_waking {
            ts = ts
                .checked_add(self.arrays[7][i])
                .ok_or("`compact_sched`'s waking timestamps add up past 2^64 ns")?;
            let index = self.arrays[11][i];
            let Some(&comm) = self.intern.get(index as usize) else {
                return Err(format!(
                    "a compact waking names task name {index} of a table of {}",
                    self.intern.len()
                ));
            };
            out.push(Pending {
                ts,
                at,
                kind: Kind::SchedWaking {
                    comm,
                    pid: i32_of(self.arrays[8][i]),
                    // An int32 in the proto, sent as a varint of its 64-bit two's complement.
                    target_cpu: cpu_of(self.arrays[9][i], "a compact waking's `target_cpu`")?,
                },
            });
        }
        Ok(())
    }
}

/// A `cpu_idle` state: `None` for the exit value, or a state below `CPUIDLE_STATE_MAX`.
fn idle_state(s: u64) -> Result<Option<u32>, String> {
    if s == u64::from(CPU_IDLE_EXIT) {
        Ok(None)
    } else if s < u64::from(CPUIDLE_STATE_MAX) {
        Ok(Some(s as u32))
    } else {
        Err(format!(
            "expected a `cpu_idle` state below {CPUIDLE_STATE_MAX} (the kernel's \
             CPUIDLE_STATE_MAX) or {CPU_IDLE_EXIT} (exit), got {s}"
        ))
    }
}

/// An `FtraceEvent` field's event name, for messages and counts.
pub fn event_name(number: u32) -> String {
    use field::*;
    let known = match number {
        SCHED_SWITCH => "sched_switch",
        CPU_FREQUENCY => "cpu_frequency",
        CPU_IDLE => "cpu_idle",
        SCHED_WAKEUP => "sched_wakeup",
        SCHED_WAKING => "sched_waking",
        IPI_ENTRY => "ipi_entry",
        IPI_EXIT => "ipi_exit",
        IPI_RAISE => "ipi_raise",
        IRQ_HANDLER_ENTRY => "irq_handler_entry",
        SCHED_WAKEUP_NEW => "sched_wakeup_new",
        GENERIC => "generic",
        HRTIMER_START => "hrtimer_start",
        HRTIMER_CANCEL => "hrtimer_cancel",
        HRTIMER_EXPIRE_ENTRY => "hrtimer_expire_entry",
        TIMER_START => "timer_start",
        TIMER_CANCEL => "timer_cancel",
        TIMER_EXPIRE_ENTRY => "timer_expire_entry",
        0 => return "(ftrace event without a body)".to_string(),
        n => match SKIPPED_NAMES.iter().find(|(f, _)| *f == n) {
            Some((_, name)) => name,
            None => return format!("(ftrace event field {n})"),
        },
    };
    known.to_string()
}
