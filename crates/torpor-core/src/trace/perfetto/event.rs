//! Decoded events waiting to be merged across CPUs: [`EventKind`] with each text as an index
//! into one table of names ([`Names`]), so a queued event owns nothing and copies freely.

use std::collections::HashMap;

use crate::trace::ftrace::EventKind;

/// An index into [`Names`].
pub type Sym = u32;

/// Every distinct text the events carry (task names, prev_state letters, timer functions, IRQ
/// and IPI names), each stored once.
#[derive(Default)]
pub struct Names {
    map: HashMap<Box<str>, Sym>,
    list: Vec<Box<str>>,
    /// Texts cut to [`MAX_NAME_BYTES`].
    pub cut: u64,
    /// Texts past [`MAX_NAMES`], read as [`TOO_MANY`].
    pub overflow: u64,
}

/// The most distinct texts kept (real traces have a few thousand task names).
pub const MAX_NAMES: usize = 1 << 16;

/// The longest text kept (a kernel symbol is at most 512 bytes, `KSYM_NAME_LEN`).
pub const MAX_NAME_BYTES: usize = 512;

/// What a text past [`MAX_NAMES`] reads as.
pub const TOO_MANY: &str = "(too many names)";

impl Names {
    /// The index of `bytes` as text (invalid UTF-8 replaced), stored on first sight.
    pub fn intern(&mut self, bytes: &[u8]) -> Sym {
        let bytes = if bytes.len() > MAX_NAME_BYTES {
            self.cut += 1;
            &bytes[..MAX_NAME_BYTES]
        } else {
            bytes
        };
        let text = String::from_utf8_lossy(bytes);
        if let Some(&s) = self.map.get(text.as_ref()) {
            return s;
        }
        if self.list.len() >= MAX_NAMES {
            self.overflow += 1;
            return self.intern_str(TOO_MANY);
        }
        self.insert(text.as_ref())
    }

    /// The index of a text torpor makes itself (never counted as overflow).
    pub fn intern_str(&mut self, text: &str) -> Sym {
        match self.map.get(text) {
            Some(&s) => s,
            None => self.insert(text),
        }
    }

    fn insert(&mut self, text: &str) -> Sym {
        let s = self.list.len() as Sym;
        self.list.push(text.into());
        self.map.insert(text.into(), s);
        s
    }

    pub fn get(&self, s: Sym) -> &str {
        &self.list[s as usize]
    }
}

/// [`EventKind`] with its texts as [`Sym`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    CpuIdle {
        state: Option<u32>,
        cpu_id: u32,
    },
    CpuIdleMiss {
        cpu_id: u32,
        state: u32,
        below: bool,
    },
    CpuFrequency {
        khz: u32,
        cpu_id: u32,
    },
    SchedWakeup {
        comm: Sym,
        pid: i32,
        target_cpu: u32,
        new: bool,
    },
    SchedWaking {
        comm: Sym,
        pid: i32,
        target_cpu: u32,
    },
    SchedSwitch {
        prev_pid: i32,
        prev_state: Sym,
        next_pid: i32,
    },
    HrtimerStart {
        hrtimer: u64,
        function: Sym,
        expires_ns: u64,
        softexpires_ns: u64,
    },
    HrtimerExpireEntry {
        hrtimer: u64,
        function: Sym,
        now_ns: u64,
    },
    HrtimerCancel {
        hrtimer: u64,
    },
    TimerStart {
        timer: u64,
        function: Sym,
        expires: u64,
    },
    TimerExpireEntry {
        timer: u64,
        function: Sym,
        now: u64,
    },
    TimerCancel {
        timer: u64,
    },
    TickStop {
        success: bool,
        dependency: Sym,
    },
    IrqHandlerEntry {
        irq: u32,
        name: Sym,
    },
    IpiRaise {
        target_mask: Sym,
        reason: Sym,
    },
    IpiEntry {
        reason: Sym,
    },
    IpiExit {
        reason: Sym,
    },
}

impl Kind {
    /// Its index in [`crate::trace::ftrace::KNOWN`] (the event's name).
    pub fn known(&self) -> usize {
        match self {
            Kind::CpuIdle { .. } => 0,
            Kind::CpuIdleMiss { .. } => 1,
            Kind::CpuFrequency { .. } => 2,
            Kind::SchedWakeup { new: false, .. } => 3,
            Kind::SchedWakeup { new: true, .. } => 4,
            Kind::SchedSwitch { .. } => 5,
            Kind::HrtimerStart { .. } => 6,
            Kind::HrtimerExpireEntry { .. } => 7,
            Kind::HrtimerCancel { .. } => 8,
            Kind::TimerStart { .. } => 9,
            Kind::TimerExpireEntry { .. } => 10,
            Kind::TimerCancel { .. } => 11,
            Kind::TickStop { .. } => 12,
            Kind::IrqHandlerEntry { .. } => 13,
            Kind::IpiRaise { .. } => 14,
            Kind::IpiEntry { .. } => 15,
            Kind::IpiExit { .. } => 16,
            Kind::SchedWaking { .. } => 17,
        }
    }

    /// The event as the analyses read it, its texts borrowed from `names`.
    pub fn with(self, names: &Names) -> EventKind<'_> {
        let n = |s: Sym| names.get(s);
        match self {
            Kind::CpuIdle { state, cpu_id } => EventKind::CpuIdle { state, cpu_id },
            Kind::CpuIdleMiss {
                cpu_id,
                state,
                below,
            } => EventKind::CpuIdleMiss {
                cpu_id,
                state,
                below,
            },
            Kind::CpuFrequency { khz, cpu_id } => EventKind::CpuFrequency { khz, cpu_id },
            Kind::SchedWakeup {
                comm,
                pid,
                target_cpu,
                new,
            } => EventKind::SchedWakeup {
                comm: n(comm),
                pid,
                target_cpu,
                new,
            },
            Kind::SchedWaking {
                comm,
                pid,
                target_cpu,
            } => EventKind::SchedWaking {
                comm: n(comm),
                pid,
                target_cpu,
            },
            Kind::SchedSwitch {
                prev_pid,
                prev_state,
                next_pid,
            } => EventKind::SchedSwitch {
                prev_pid,
                prev_state: n(prev_state),
                next_pid,
            },
            Kind::HrtimerStart {
                hrtimer,
                function,
                expires_ns,
                softexpires_ns,
            } => EventKind::HrtimerStart {
                hrtimer,
                function: n(function),
                expires_ns,
                softexpires_ns,
            },
            Kind::HrtimerExpireEntry {
                hrtimer,
                function,
                now_ns,
            } => EventKind::HrtimerExpireEntry {
                hrtimer,
                function: n(function),
                now_ns,
            },
            Kind::HrtimerCancel { hrtimer } => EventKind::HrtimerCancel { hrtimer },
            Kind::TimerStart {
                timer,
                function,
                expires,
            } => EventKind::TimerStart {
                timer,
                function: n(function),
                expires,
            },
            Kind::TimerExpireEntry {
                timer,
                function,
                now,
            } => EventKind::TimerExpireEntry {
                timer,
                function: n(function),
                now,
            },
            Kind::TimerCancel { timer } => EventKind::TimerCancel { timer },
            Kind::TickStop {
                success,
                dependency,
            } => EventKind::TickStop {
                success,
                dependency: n(dependency),
            },
            Kind::IrqHandlerEntry { irq, name } => {
                EventKind::IrqHandlerEntry { irq, name: n(name) }
            }
            Kind::IpiRaise {
                target_mask,
                reason,
            } => EventKind::IpiRaise {
                target_mask: n(target_mask),
                reason: n(reason),
            },
            Kind::IpiEntry { reason } => EventKind::IpiEntry { reason: n(reason) },
            Kind::IpiExit { reason } => EventKind::IpiExit { reason: n(reason) },
        }
    }
}

/// One decoded event of a CPU, waiting for its turn.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub ts: u64,
    /// The file offset of its packet (the compressed packet's, inside one).
    pub at: u64,
    pub kind: Kind,
}
