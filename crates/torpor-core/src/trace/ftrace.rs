//! Streaming reader for ftrace text: the kernel's `trace` file, `trace-cmd report` output and
//! idlestat's own trace files.
//!
//! Read for this module: the kernel's `kernel/trace/trace_output.c` (line layout) and the
//! `TP_printk` formats of `include/trace/events/{power,sched,timer,irq,ipi}.h`; idlestat 0.8's
//! `tracefile_{ftrace,tracecmd,idlestat}.c`, `topology.c` and `idlestat.c` (its trace-file
//! header, written by `idlestat_store`). The formats, told apart by their first line:
//!
//! * **raw `trace` file**: `# tracer: nop` and more `#` lines, one of which may say `#P:8` (the
//!   CPU count); the file may also start directly with events (`trace_pipe`). Event lines are
//!   `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS`, where the irq-flags column (`d..2`, or
//!   five characters on newer kernels) is present unless the `irq-info` option is off, and
//!   systrace adds a TGID column (`(  959)` or `(-----)`) after the PID.
//! * **`trace-cmd report`**: an optional `version = 6` line (trace-cmd 2.x), then `cpus=N`; event
//!   lines have no flags column and pad the event name (`cpu_idle:             state=...`).
//! * **idlestat's trace file**: `idlestat version = X`, `cpus=N`, the topology (`clusterA:`,
//!   `\tcore0`, `\t\tcpu0`, or `\tcpu0` under the cluster when cores have one CPU), then for
//!   each CPU `cpuid N:` and 16 pairs of lines, a C-state name (`(null)` for none) and its
//!   target residency in microseconds (`-1` for none), then the raw event lines.
//!
//! Timestamps become integer nanoseconds (up to nine decimals are exact); events the analyses
//! use become [`EventKind`]s, all others are counted by name and skipped.
//!
//! **Errors and warnings.** What stops the read with an [`InputError`] at its line: a line
//! that is not an event line (binary garbage, a `trace.dat` given instead of its report), a
//! known event whose fields do not parse (only the events an analysis reads, when it says
//! which: [`FtraceReader::fields_only_of`]), a CPU beyond the header's count, a `cpu_idle` state
//! that no kernel can emit (at least `CPUIDLE_STATE_MAX` = 10 and not the exit value), a line
//! longer than [`crate::user_file::MAX_LINE_BYTES`]. A user wants these loud: each means the file
//! is not the trace they think, and statistics over it would be silently wrong. What is only
//! counted and shown ([`FtraceCounts`]): a timestamp going backwards on one CPU (tools that
//! merge per-CPU buffers produce it, e.g. trappy's unsorted test trace, and the analyses drop
//! the one interval it spoils), a last line cut short (without its line end: a trace copied
//! while being written; or an event whose fields stop short, as trappy's test trace, cut by
//! hand, ends: the error would point at nothing the user can fix; a complete last line with
//! wrong content is as loud as anywhere else), the kernel's `CPU:N [LOST M EVENTS]` and `##### CPU N buffer started
//! ####` markers, `CPU N is empty` notes, and unknown events.
//!
//! Memory is constant: one line buffer reused for every line, a per-CPU timestamp
//! table bounded by the CPU count ([`MAX_CPUS`] at most) and at most [`MAX_EVENT_NAMES`]
//! distinct unknown-event names. Parsing borrows from the line buffer: no allocation per line.

use std::collections::HashMap;
use std::io::BufRead;

use memchr::memmem;
use serde::Serialize;

use crate::error::{shown, InputError};
use crate::user_file::read_line_bytes;

/// The most CPUs a trace may name: Linux's largest `CONFIG_NR_CPUS`.
pub use crate::cpu::MAX_CPUS;

/// The kernel's `CPUIDLE_STATE_MAX`: `cpu_idle` states are below it, or [`CPU_IDLE_EXIT`].
pub const CPUIDLE_STATE_MAX: u32 = 10;

/// The `state` of a `cpu_idle` event that leaves idle (`PWR_EVENT_EXIT`, -1 as unsigned).
pub const CPU_IDLE_EXIT: u32 = u32::MAX;

/// idlestat's `MAXCSTATE`: its trace files list this many states per CPU.
pub const IDLESTAT_STATES: usize = 16;

/// The most distinct unknown event names counted one by one; more are counted together.
pub const MAX_EVENT_NAMES: usize = 4096;

/// The name unknown events beyond [`MAX_EVENT_NAMES`] distinct names are counted under.
pub const OTHER_EVENTS: &str = "(other)";

/// Which tool wrote the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtraceFormat {
    /// The kernel's `trace` / `trace_pipe` text (systrace's ftrace text too).
    Raw,
    /// `trace-cmd report` output.
    TraceCmd,
    /// idlestat's own trace file (`idlestat --trace -f FILE`).
    Idlestat,
    /// trace-cmd's binary `trace.dat` ([`crate::trace::trace_dat`]).
    TraceDat,
    /// A Perfetto protobuf trace ([`crate::trace::perfetto`]).
    Perfetto,
}

/// Where one CPU sits, as idlestat's topology says: cluster (physical package), core, CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CpuPlace {
    pub cluster: u32,
    pub core: u32,
    pub cpu: u32,
}

/// One C-state of an idlestat trace's table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableState {
    pub name: Option<String>,
    pub target_residency_us: Option<u64>,
}

/// What the first lines said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FtraceHeader {
    pub format: FtraceFormat,
    /// The CPU count (`#P:N`, `cpus=N`), when the header gives one.
    pub cpus: Option<u32>,
    /// idlestat traces: the topology, every CPU below `cpus` exactly once.
    pub topology: Option<Vec<CpuPlace>>,
    /// idlestat traces: each CPU's C-state table, [`IDLESTAT_STATES`] entries.
    pub states: Option<Vec<Vec<TableState>>>,
}

/// One event the analyses use. Text fields borrow the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind<'a> {
    /// `cpu_idle`: `state` is `None` when the CPU leaves idle.
    CpuIdle {
        state: Option<u32>,
        cpu_id: u32,
    },
    /// `cpu_idle_miss` (v6.0+): the entered state was too deep (`below == false`, "above") or
    /// too shallow (`below == true`).
    CpuIdleMiss {
        cpu_id: u32,
        state: u32,
        below: bool,
    },
    /// `cpu_frequency`: the new frequency in kHz.
    CpuFrequency {
        khz: u32,
        cpu_id: u32,
    },
    /// `sched_wakeup` and `sched_wakeup_new` (`new`): traced once the task is runnable,
    /// `target_cpu` the CPU it was placed on.
    SchedWakeup {
        comm: &'a str,
        pid: i32,
        target_cpu: u32,
        new: bool,
    },
    /// `sched_waking`: traced by the waker as `try_to_wake_up` starts, on the waker's CPU,
    /// with the same fields as `sched_wakeup` (one event class in include/trace/events/sched.h)
    /// but before the scheduler picks the CPU: `target_cpu` is the task's CPU so far
    /// (`task_cpu(p)`), where it last ran, which the wake-up may move it from.
    SchedWaking {
        comm: &'a str,
        pid: i32,
        target_cpu: u32,
    },
    /// `sched_switch`, in the kernel's format or trace-cmd's compact one.
    SchedSwitch {
        prev_pid: i32,
        prev_state: &'a str,
        next_pid: i32,
    },
    /// `hrtimer_start`: expiry times are on the timer's clock, in nanoseconds.
    HrtimerStart {
        hrtimer: u64,
        function: &'a str,
        expires_ns: u64,
        softexpires_ns: u64,
    },
    HrtimerExpireEntry {
        hrtimer: u64,
        function: &'a str,
        now_ns: u64,
    },
    HrtimerCancel {
        hrtimer: u64,
    },
    /// `timer_start`: `expires` is in jiffies.
    TimerStart {
        timer: u64,
        function: &'a str,
        expires: u64,
    },
    TimerExpireEntry {
        timer: u64,
        function: &'a str,
        now: u64,
    },
    TimerCancel {
        timer: u64,
    },
    /// `tick_stop`: whether the tick was stopped, and what kept it if not.
    TickStop {
        success: bool,
        dependency: &'a str,
    },
    IrqHandlerEntry {
        irq: u32,
        name: &'a str,
    },
    /// `ipi_raise`: the target CPU mask as printed (`00000000,00000008`) and the reason.
    IpiRaise {
        target_mask: &'a str,
        reason: &'a str,
    },
    IpiEntry {
        reason: &'a str,
    },
    IpiExit {
        reason: &'a str,
    },
}

/// One parsed event line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// The CPU column (`[002]`).
    pub cpu: u32,
    pub timestamp_ns: u64,
    pub kind: EventKind<'a>,
    /// 1-based line number (for a trace.dat: the file offset of the record).
    pub line: usize,
}

/// Lines the reader skipped or warned about, for the user to see.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtraceCounts {
    /// Event lines returned as [`Event`]s.
    pub events: u64,
    /// The same, by event name.
    pub known_events: std::collections::BTreeMap<&'static str, u64>,
    /// Unknown events skipped, by name.
    pub unknown_events: std::collections::BTreeMap<String, u64>,
    /// Events whose timestamp is earlier than the previous one on the same CPU.
    pub backwards_timestamps: u64,
    /// The first such line.
    pub first_backwards_line: Option<usize>,
    /// The last line, without its line end, did not parse and was skipped: the file was cut
    /// short.
    pub truncated_last_line: bool,
    /// `CPU:N [LOST M EVENTS]` markers and the events they say were lost.
    pub lost_markers: u64,
    pub lost_events: u64,
    /// `##### CPU N buffer started ####` markers (events before them were overwritten).
    pub buffer_started_markers: u64,
    /// `CPU N is empty` notes of `trace-cmd report`.
    pub empty_cpu_notes: u64,
    /// A trace.dat's description of itself (version, compression, clock, pages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_dat: Option<crate::trace::trace_dat::TraceDatInfo>,
    /// A Perfetto trace's description of itself (packets, clock, losses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perfetto: Option<crate::trace::perfetto::PerfettoInfo>,
    /// What the text was unpacked from (`gzip`, `zstd`, `systrace html`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed: Option<&'static str>,
}

/// Pulls [`Event`]s out of ftrace text one line at a time.
pub struct FtraceReader<R> {
    reader: R,
    file: String,
    line_no: usize,
    /// Bytes read so far, up to the end of the line in `buf`.
    offset: u64,
    buf: Vec<u8>,
    /// A line read while looking at the header that is already the first event line.
    pending: bool,
    header: FtraceHeader,
    last_ts: Vec<u64>,
    unknown: HashMap<Box<str>, u64>,
    /// Events returned, by their index in [`KNOWN`].
    known: [u64; KNOWN.len()],
    /// Bit `i`: the fields of `KNOWN[i]` are parsed ([`Self::fields_only_of`]).
    parsed: u32,
    counts: FtraceCounts,
}

const TRACE_DAT_MAGIC: &[u8] = b"\x17\x08\x44tracing";

impl<R: BufRead> FtraceReader<R> {
    /// Reads the header. `file` is the name errors carry.
    pub fn new(reader: R, file: &str) -> Result<Self, InputError> {
        let mut r = FtraceReader {
            reader,
            file: file.to_string(),
            line_no: 0,
            offset: 0,
            buf: Vec::with_capacity(256),
            pending: false,
            header: FtraceHeader {
                format: FtraceFormat::Raw,
                cpus: None,
                topology: None,
                states: None,
            },
            last_ts: Vec::new(),
            unknown: HashMap::new(),
            known: [0; KNOWN.len()],
            parsed: u32::MAX,
            counts: FtraceCounts::default(),
        };
        r.read_header()?;
        Ok(r)
    }

    pub fn header(&self) -> &FtraceHeader {
        &self.header
    }

    pub fn counts(&self) -> FtraceCounts {
        let mut c = self.counts.clone();
        c.unknown_events = self
            .unknown
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        c.known_events = KNOWN
            .iter()
            .zip(self.known)
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (*name, n))
            .collect();
        c
    }

    /// From now on, the known events not named in `used` are checked up to their name only
    /// (the CPU column, timestamp and name every event line has): counted as today,
    /// their fields neither parsed nor checked, and not returned. An analysis that reads only
    /// some events (`idle stats`) need not refuse a trace for the fields of the others. The
    /// trace's last line is still parsed whole, so that one cut short is told apart as before.
    pub fn fields_only_of(&mut self, used: &[&str]) {
        self.parsed = KNOWN
            .iter()
            .enumerate()
            .filter(|(_, name)| used.contains(name))
            .fold(0, |mask, (i, _)| mask | 1 << i);
    }

    /// The name errors carry.
    pub fn file(&self) -> &str {
        &self.file
    }

    fn err(&self, message: impl Into<String>) -> InputError {
        InputError::at(&self.file, self.line_no, message)
    }

    /// Where the event lines start, after the header: the byte offset and the 1-based line
    /// number of the first line [`Self::next_event`] would read, so that another reader (the
    /// parallel scan of `torpor idle stats`) can take over from there.
    pub fn body_start(&self) -> (u64, usize) {
        if self.pending {
            (self.offset - self.buf.len() as u64, self.line_no)
        } else {
            (self.offset, self.line_no + 1)
        }
    }

    /// Reads the next line into `buf`; false at the end.
    fn next_line(&mut self) -> Result<bool, InputError> {
        self.line_no += 1;
        let n = read_line_bytes(&mut self.reader, &mut self.buf, &self.file, self.line_no)?;
        self.offset += n as u64;
        Ok(n > 0)
    }

    fn read_header(&mut self) -> Result<(), InputError> {
        if !self.next_line()? {
            return Err(InputError::whole(
                &self.file,
                "the file is empty; expected ftrace text (a `trace` file, `trace-cmd report` \
                 output or an idlestat trace)",
            ));
        }
        if self.buf.starts_with(TRACE_DAT_MAGIC) {
            return Err(self.err(
                "this is a binary trace.dat, which torpor reads from a file, not a stream (its \
                 CPUs' data lies at offsets): give its path, or convert it with `trace-cmd \
                 report FILE > FILE.txt`",
            ));
        }
        let first = trim_end(&self.buf);
        if first.starts_with(b"idlestat version") {
            self.header.format = FtraceFormat::Idlestat;
            self.expect_line("the `cpus=N` line of an idlestat trace")?;
            self.header.cpus = Some(self.cpus_line()?);
            self.idlestat_tables()?;
        } else if first.starts_with(b"version = ") {
            self.header.format = FtraceFormat::TraceCmd;
            self.expect_line("the `cpus=N` line of `trace-cmd report` output")?;
            self.header.cpus = Some(self.cpus_line()?);
        } else if first.starts_with(b"cpus=") {
            self.header.format = FtraceFormat::TraceCmd;
            self.header.cpus = Some(self.cpus_line()?);
        } else if first.starts_with(b"#") {
            self.header.format = FtraceFormat::Raw;
            loop {
                let line = trim_end(&self.buf);
                if !line.starts_with(b"#") {
                    self.pending = true;
                    break;
                }
                if let Some(at) = memmem::find(line, b"#P:") {
                    let digits = &line[at + 3..];
                    let n = leading_u64(digits)
                        .and_then(|(n, _)| u32::try_from(n).ok())
                        .filter(|&n| (1..=MAX_CPUS).contains(&n))
                        .ok_or_else(|| {
                            self.err(format!(
                                "expected a CPU count from 1 to {MAX_CPUS} after `#P:`"
                            ))
                        })?;
                    self.header.cpus = Some(n);
                }
                if !self.next_line()? {
                    break;
                }
            }
        } else if split_event_line(first).is_some() {
            // `trace_pipe` output: no header at all.
            self.pending = true;
        } else {
            return Err(self.err(format!(
                "expected ftrace text: a `# tracer` header, `version = 6` or `cpus=N` (trace-cmd \
                 report), `idlestat version` or an event line `TASK-PID [CPU] TIMESTAMP: EVENT: \
                 FIELDS`; got {}",
                shown(&String::from_utf8_lossy(first))
            )));
        }
        if let Some(n) = self.header.cpus {
            self.last_ts.reserve(n as usize);
        }
        Ok(())
    }

    fn expect_line(&mut self, what: &str) -> Result<(), InputError> {
        if self.next_line()? {
            Ok(())
        } else {
            Err(self.err(format!("the file ends where {what} was expected")))
        }
    }

    fn cpus_line(&self) -> Result<u32, InputError> {
        let line = trim_end(&self.buf);
        line.strip_prefix(b"cpus=")
            .and_then(parse_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| (1..=MAX_CPUS).contains(&n))
            .ok_or_else(|| {
                self.err(format!(
                    "expected `cpus=N` with N from 1 to {MAX_CPUS}, got {}",
                    shown(&String::from_utf8_lossy(line))
                ))
            })
    }

    /// idlestat's topology and C-state tables, after `cpus=N`.
    fn idlestat_tables(&mut self) -> Result<(), InputError> {
        let cpus = self.header.cpus.unwrap_or(0);
        let mut places: Vec<Option<CpuPlace>> = vec![None; cpus as usize];
        let mut cluster: Option<u32> = None;
        let mut core: Option<u32> = None;
        loop {
            self.expect_line("the topology or `cpuid 0:` of an idlestat trace")?;
            let line = trim_end(&self.buf);
            if let Some(rest) = line.strip_prefix(b"cluster") {
                match rest {
                    [c @ b'A'..=b'Z', b':'] => {
                        cluster = Some(u32::from(c - b'A'));
                        core = None;
                    }
                    _ => return Err(self.err("expected a cluster line `clusterA:` to `clusterZ:`")),
                }
            } else if let Some(rest) = line.strip_prefix(b"\tcore") {
                core = Some(parse_u32(rest).ok_or_else(|| self.err("expected `\\tcoreN`"))?);
                if cluster.is_none() {
                    return Err(self.err("a core line before any `clusterX:` line"));
                }
            } else if let Some(rest) = line
                .strip_prefix(b"\t\tcpu")
                .or_else(|| line.strip_prefix(b"\tcpu"))
            {
                let cpu = parse_u32(rest).ok_or_else(|| self.err("expected `\\t\\tcpuN`"))?;
                let Some(cl) = cluster else {
                    return Err(self.err("a cpu line before any `clusterX:` line"));
                };
                // Under a cluster without core lines, each CPU is its own core (idlestat's rule).
                let direct = !line.starts_with(b"\t\t");
                let co = if direct {
                    core = None;
                    cpu
                } else {
                    core.ok_or_else(|| self.err("a `\\t\\tcpuN` line outside any core"))?
                };
                let slot = places.get_mut(cpu as usize).ok_or_else(|| {
                    InputError::at(
                        &self.file,
                        self.line_no,
                        format!("cpu{cpu} is beyond the header's cpus={cpus}"),
                    )
                })?;
                if slot.is_some() {
                    return Err(self.err(format!("cpu{cpu} is listed twice in the topology")));
                }
                *slot = Some(CpuPlace {
                    cluster: cl,
                    core: co,
                    cpu,
                });
            } else if line.starts_with(b"cpuid ") {
                break;
            } else {
                return Err(self.err(format!(
                    "expected the topology (`clusterA:`, `\\tcore0`, `\\t\\tcpu0`) or `cpuid 0:`, \
                     got {}",
                    shown(&String::from_utf8_lossy(line))
                )));
            }
        }
        let mut topology = Vec::with_capacity(places.len());
        for (cpu, p) in places.into_iter().enumerate() {
            topology.push(p.ok_or_else(|| {
                self.err(format!(
                    "cpu{cpu} is in no cluster of the topology, which must list every CPU below \
                     cpus={cpus}"
                ))
            })?);
        }
        let mut tables = Vec::with_capacity(cpus as usize);
        for cpu in 0..cpus {
            if cpu > 0 {
                self.expect_line(&format!("`cpuid {cpu}:`"))?;
            }
            if trim_end(&self.buf) != format!("cpuid {cpu}:").as_bytes() {
                return Err(self.err(format!(
                    "expected `cpuid {cpu}:`, got {}",
                    shown(&String::from_utf8_lossy(trim_end(&self.buf)))
                )));
            }
            let mut table = Vec::with_capacity(IDLESTAT_STATES);
            for i in 0..IDLESTAT_STATES {
                self.expect_line(&format!("the name of state {i} of cpu{cpu}"))?;
                let name = String::from_utf8_lossy(trim(&self.buf)).into_owned();
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return Err(self.err(format!(
                        "expected the name of state {i} of cpu{cpu} (one word, `(null)` for \
                         none), got {}",
                        shown(&name)
                    )));
                }
                self.expect_line(&format!("the target residency of state {i} of cpu{cpu}"))?;
                let res = trim(&self.buf);
                let target_residency_us = if res == b"-1" {
                    None
                } else {
                    // The kernel's `unsigned int` of us bounds it, as in platform files.
                    let us = parse_u64(res).filter(|&us| us <= crate::cpuidle::MAX_STATE_US);
                    Some(us.ok_or_else(|| {
                        self.err(format!(
                            "expected the target residency of state {i} of cpu{cpu} in \
                             microseconds (-1 for none; at most {}, the kernel's unsigned \
                             int), got {}",
                            crate::cpuidle::MAX_STATE_US,
                            shown(&String::from_utf8_lossy(res))
                        ))
                    })?)
                };
                table.push(TableState {
                    name: (name != "(null)").then_some(name),
                    target_residency_us,
                });
            }
            tables.push(table);
        }
        self.header.topology = Some(topology);
        self.header.states = Some(tables);
        Ok(())
    }

    /// The next event the analyses use, or `None` at the end of the trace.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.next_line()? {
                return Ok(None);
            }
            match self.classify()? {
                Some((cpu, ts, event_at)) => {
                    let Some(known) = self.skip_unknown(event_at) else {
                        continue;
                    };
                    if self.parsed & 1 << known == 0 {
                        if self.at_end()? && self.cut_event(event_at) {
                            self.counts.truncated_last_line = true;
                            return Ok(None);
                        }
                        self.counts.events += 1;
                        self.known[known] += 1;
                        continue;
                    }
                    self.counts.events += 1;
                    self.known[known] += 1;
                    let line_no = self.line_no;
                    let line = trim_end(&self.buf);
                    let (name, fields) = event_name(&line[event_at..]);
                    let kind = match parse_kind(name, fields, self.header.cpus) {
                        Ok(kind) => kind,
                        Err(m) => {
                            let missing_field = m.contains(MISSING_FIELD);
                            let err = InputError::at(&self.file, line_no, m);
                            // Fields, not `self.at_end()`: `kind` borrows `self.buf`.
                            let at_end = match self.reader.fill_buf() {
                                Ok(more) => more.is_empty(),
                                Err(e) => {
                                    return Err(InputError::at(
                                        &self.file,
                                        line_no + 1,
                                        format!("cannot read the line: {e}"),
                                    ))
                                }
                            };
                            let cut = !self.buf.ends_with(b"\n") || missing_field;
                            if at_end && cut {
                                self.counts.events -= 1;
                                self.known[known] -= 1;
                                self.counts.truncated_last_line = true;
                                return Ok(None);
                            }
                            return Err(err);
                        }
                    };
                    return Ok(Some(Event {
                        cpu,
                        timestamp_ns: ts,
                        kind,
                        line: line_no,
                    }));
                }
                None => continue,
            }
        }
    }

    /// Whether the event of the line just read, the last one, was cut short: its fields do
    /// not parse, and the line has no line end or a field is missing (as in
    /// [`Self::next_event`]).
    fn cut_event(&self, event_at: usize) -> bool {
        let line = trim_end(&self.buf);
        let (name, fields) = event_name(&line[event_at..]);
        parse_kind(name, fields, self.header.cpus)
            .is_err_and(|m| m.contains(MISSING_FIELD) || !self.buf.ends_with(b"\n"))
    }

    /// Whether the line just read was cut short: the last one, without its line end (a
    /// complete last line with bad content is as wrong as the same line anywhere else).
    fn cut_short(&mut self) -> Result<bool, InputError> {
        Ok(!self.buf.ends_with(b"\n") && self.at_end()?)
    }

    /// Whether the line just read was the last one.
    fn at_end(&mut self) -> Result<bool, InputError> {
        let line = self.line_no + 1;
        match self.reader.fill_buf() {
            Ok(more) => Ok(more.is_empty()),
            Err(e) => Err(InputError::at(
                &self.file,
                line,
                format!("cannot read the line: {e}"),
            )),
        }
    }

    /// Checks the current line: `Some((cpu, timestamp, offset of the event name))` for an event
    /// line, `None` for a line to skip (counted), an error otherwise.
    fn classify(&mut self) -> Result<Option<(u32, u64, usize)>, InputError> {
        let (cpu, ts, event_at) = match classify_line(trim_end(&self.buf)) {
            LineClass::Skip => return Ok(None),
            LineClass::Marker(m) => {
                self.counts.add_marker(m);
                return Ok(None);
            }
            LineClass::NotEvent => {
                let got = shown(&String::from_utf8_lossy(trim_end(&self.buf)));
                // An indented line right after an idlestat header: its tables ran long.
                let after_tables = self.header.states.is_some()
                    && self.counts.events == 0
                    && self.buf.first().is_some_and(|b| b.is_ascii_whitespace());
                let err = self.err(if after_tables {
                    format!(
                        "expected an event line after the C-state tables, got {got}: idlestat \
                         writes exactly {IDLESTAT_STATES} states per CPU (a name and a target \
                         residency each, `(null)` and `-1` for those a CPU lacks)"
                    )
                } else {
                    format!(
                        "expected an event line `TASK-PID [CPU] TIMESTAMP: EVENT: FIELDS`, got \
                         {got}"
                    )
                });
                if self.cut_short()? {
                    self.counts.truncated_last_line = true;
                    return Ok(None);
                }
                return Err(err);
            }
            LineClass::Event { cpu, ts, event_at } => (cpu, ts, event_at),
        };
        let ts = ts.map_err(|m| self.err(m))?;
        let limit = self.header.cpus.unwrap_or(MAX_CPUS);
        if cpu >= limit {
            return Err(self.err(cpu_beyond("CPU column", cpu, self.header.cpus)));
        }
        let i = cpu as usize;
        if self.last_ts.len() <= i {
            self.last_ts.resize(i + 1, 0);
        }
        if ts < self.last_ts[i] {
            self.counts.backwards_timestamps += 1;
            self.counts.first_backwards_line.get_or_insert(self.line_no);
        }
        self.last_ts[i] = ts;
        Ok(Some((cpu, ts, event_at)))
    }

    /// The index in [`KNOWN`] of the line's event; `None` for an unknown event, counted and
    /// skipped.
    fn skip_unknown(&mut self, event_at: usize) -> Option<usize> {
        let line = trim_end(&self.buf);
        let (name, _) = event_name(&line[event_at..]);
        if let Some(i) = known_index(name) {
            return Some(i);
        }
        // Event names are ASCII identifiers; anything else is counted under its lossy text.
        let name = std::str::from_utf8(name).unwrap_or(OTHER_EVENTS);
        if let Some(n) = self.unknown.get_mut(name) {
            *n += 1;
        } else if self.unknown.len() < MAX_EVENT_NAMES {
            self.unknown.insert(name.into(), 1);
        } else {
            *self.unknown.entry(OTHER_EVENTS.into()).or_insert(0) += 1;
        }
        None
    }
}

/// What one line is, before its event is looked at.
pub(crate) enum LineClass {
    /// Blank, or a `#` comment.
    Skip,
    /// A marker only counted.
    Marker(Marker),
    /// Not an event line: an error, unless it is the last line (cut short).
    NotEvent,
    /// An event line: its CPU column, its timestamp (or why it does not parse) and the offset
    /// of its event name.
    Event {
        cpu: u32,
        ts: Result<u64, String>,
        event_at: usize,
    },
}

/// The markers of [`FtraceCounts`].
pub(crate) enum Marker {
    BufferStarted,
    /// `CPU:N [LOST M EVENTS]`, with M when it parses.
    Lost(Option<u64>),
    EmptyCpu,
}

impl FtraceCounts {
    pub(crate) fn add_marker(&mut self, marker: Marker) {
        match marker {
            Marker::BufferStarted => self.buffer_started_markers += 1,
            Marker::Lost(n) => {
                self.lost_markers += 1;
                self.lost_events += n.unwrap_or(0);
            }
            Marker::EmptyCpu => self.empty_cpu_notes += 1,
        }
    }
}

/// Classifies one line (without its line end): the checks every reader of event lines shares.
pub(crate) fn classify_line(line: &[u8]) -> LineClass {
    if let Some((cpu, ts, event_at)) = kernel_layout(line) {
        return LineClass::Event {
            cpu,
            ts: Ok(ts),
            event_at,
        };
    }
    classify_any_layout(line)
}

/// [`classify_line`] for a line of any layout.
pub(crate) fn classify_any_layout(line: &[u8]) -> LineClass {
    let body = trim(line);
    if body.is_empty() {
        return LineClass::Skip;
    }
    if line.starts_with(b"#") {
        if memmem::find(line, b"buffer started").is_some() {
            return LineClass::Marker(Marker::BufferStarted);
        }
        return LineClass::Skip;
    }
    if body.starts_with(b"CPU:") {
        if let Some(at) = memmem::find(body, b"[LOST ") {
            let n = leading_u64(&body[at + 6..]).map(|(n, _)| n);
            return LineClass::Marker(Marker::Lost(n));
        }
    }
    if body.starts_with(b"CPU ") && body.ends_with(b" is empty") {
        return LineClass::Marker(Marker::EmptyCpu);
    }
    match split_event_line(line) {
        Some((cpu, ts, event_at)) => LineClass::Event { cpu, ts, event_at },
        None => LineClass::NotEvent,
    }
}

/// The index in [`KNOWN`] of an event name: one `match` (this runs on every event line).
pub(crate) fn known_index(name: &[u8]) -> Option<usize> {
    Some(match name {
        b"cpu_idle" => 0,
        b"cpu_idle_miss" => 1,
        b"cpu_frequency" => 2,
        b"sched_wakeup" => 3,
        b"sched_wakeup_new" => 4,
        b"sched_switch" => 5,
        b"hrtimer_start" => 6,
        b"hrtimer_expire_entry" => 7,
        b"hrtimer_cancel" => 8,
        b"timer_start" => 9,
        b"timer_expire_entry" => 10,
        b"timer_cancel" => 11,
        b"tick_stop" => 12,
        b"irq_handler_entry" => 13,
        b"ipi_raise" => 14,
        b"ipi_entry" => 15,
        b"ipi_exit" => 16,
        b"sched_waking" => 17,
        _ => return None,
    })
}

pub(crate) fn cpu_beyond(what: &str, cpu: u32, cpus: Option<u32>) -> String {
    match cpus {
        Some(n) => format!("{what} says CPU {cpu}, but the header says the trace has {n} CPUs"),
        None => format!("{what} says CPU {cpu}; expected a CPU below {MAX_CPUS}"),
    }
}

/// The events parsed into [`EventKind`]s.
pub(crate) const KNOWN: &[&str] = &[
    "cpu_idle",
    "cpu_idle_miss",
    "cpu_frequency",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_switch",
    "hrtimer_start",
    "hrtimer_expire_entry",
    "hrtimer_cancel",
    "timer_start",
    "timer_expire_entry",
    "timer_cancel",
    "tick_stop",
    "irq_handler_entry",
    "ipi_raise",
    "ipi_entry",
    "ipi_exit",
    "sched_waking",
];

/// The bytes of an event name, ASCII letters, digits and `_`, as a table: one load per byte
/// where the range checks cost several (this runs over every event line's name).
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_';
        b += 1;
    }
    table
};

/// The event name and its fields, from the text after the timestamp. A line without an
/// `EVENT:` token (the function tracer's `caller <-parent`) has the empty name.
pub(crate) fn event_name(rest: &[u8]) -> (&[u8], &[u8]) {
    match event_name_end(rest) {
        Some(end) => (&rest[..end], trim(&rest[end + 1..])),
        None => (b"", rest),
    }
}

/// The length of the event name at the start of `rest` ([`event_name`]'s name), `None` where
/// there is none: for a reader that needs the fields of a few events only.
pub(crate) fn event_name_end(rest: &[u8]) -> Option<usize> {
    let end = rest
        .iter()
        .position(|&b| !NAME_BYTES[usize::from(b)])
        .unwrap_or(rest.len());
    (rest.get(end) == Some(&b':')).then_some(end)
}

/// Splits an event line: the CPU, the timestamp (or why it does not parse) and the offset of
/// the text after the timestamp. `None` if the line has no `[CPU]` column followed by a
/// timestamp.
fn split_event_line(line: &[u8]) -> Option<(u32, Result<u64, String>, usize)> {
    // The CPU column: the first `[digits]` followed by a space. Task names (up to 16 bytes)
    // come before it and may hold anything, so the search looks for that exact shape.
    let mut from = 0;
    let (cpu, after) = loop {
        let open = from + find_byte(&line[from..], b'[')?;
        let mut close = open + 1;
        let mut cpu: u32 = 0;
        while let Some(d) = line.get(close).and_then(|b| digit(*b)) {
            // Only up to five digits are used; the wrapping keeps longer runs harmless.
            cpu = cpu.wrapping_mul(10).wrapping_add(d);
            close += 1;
        }
        if (2..=6).contains(&(close - open))
            && line.get(close) == Some(&b']')
            && line
                .get(close + 1)
                .is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            break (cpu, close + 1);
        }
        from = open + 1;
    };
    let (tok1, next) = token(line, after)?;
    let (stamp, next) = if tok1.ends_with(b":") && tok1[0].is_ascii_digit() {
        (tok1, next)
    } else {
        // The irq-flags column (`d..2`, `dNh1.`) stands before the timestamp.
        let (tok2, next) = token(line, next)?;
        if !(tok2.ends_with(b":") && tok2[0].is_ascii_digit()) {
            return None;
        }
        (tok2, next)
    };
    let stamp = &stamp[..stamp.len() - 1];
    Some((cpu, parse_timestamp(stamp), skip_blanks(line, next)))
}

/// An event line in the layout the kernel and trace-cmd print, `TASK-PID [CPU] FLAGS
/// SECS.FRACTION: ...` (the flags column optional), read in one pass: the CPU, the timestamp
/// in nanoseconds and the offset of the text after it. `None` for any other shape, or a value
/// out of range, which [`classify_line`]'s general checks then read (and explain). Where it
/// answers, those checks give the same answer: the line is not a comment or marker (it neither
/// starts with `#` nor, after blanks, with `CPU`), its first `[` opens the CPU column, the
/// token after it is the flags column unless it starts with a digit, and the timestamp token
/// is exactly `DIGITS.DIGITS:` with one to nine decimals.
pub(crate) fn kernel_layout(line: &[u8]) -> Option<(u32, u64, usize)> {
    let start = skip_blanks(line, 0);
    if line.first() == Some(&b'#') || line[start..].starts_with(b"CPU") {
        return None;
    }
    // The blanks before the task name hold no `[`.
    let open = start + find_byte(&line[start..], b'[')?;
    let (cpu, mut at) = match cpu_column3(line, open) {
        Some(cpu) => (cpu, open + 4),
        None => {
            let mut at = open + 1;
            let mut cpu: u32 = 0;
            while let Some(d) = line.get(at).and_then(|b| digit(*b)) {
                if at - open > 5 {
                    return None;
                }
                cpu = cpu * 10 + d;
                at += 1;
            }
            if at == open + 1
                || line.get(at) != Some(&b']')
                || !line.get(at + 1).is_some_and(is_blank)
            {
                return None;
            }
            (cpu, at)
        }
    };
    at = skip_blanks(line, at + 2);
    if !line.get(at)?.is_ascii_digit() {
        // The flags column.
        while line.get(at).is_some_and(|b| !is_blank(b)) {
            at += 1;
        }
        at = skip_blanks(line, at);
    }
    let secs_at = at;
    let mut secs: u64 = 0;
    while let Some(d) = line.get(at).and_then(|b| digit(*b)) {
        if at - secs_at == 19 {
            return None;
        }
        secs = secs * 10 + u64::from(d);
        at += 1;
    }
    if at == secs_at || line.get(at) != Some(&b'.') {
        return None;
    }
    at += 1;
    let frac_at = at;
    if let Some(frac) = micros_colon(line, frac_at) {
        let ts = secs.checked_mul(1_000_000_000)?.checked_add(frac * 1000)?;
        // The event name most often follows the one blank at once.
        let name_at = match line.get(frac_at + 8) {
            Some(b) if !is_blank(b) => frac_at + 8,
            _ => skip_blanks(line, frac_at + 8),
        };
        return Some((cpu, ts, name_at));
    }
    let mut frac: u64 = 0;
    while let Some(d) = line.get(at).and_then(|b| digit(*b)) {
        if at - frac_at == 9 {
            return None;
        }
        frac = frac * 10 + u64::from(d);
        at += 1;
    }
    if at == frac_at
        || line.get(at) != Some(&b':')
        || line.get(at + 1).is_some_and(|b| !is_blank(b))
    {
        return None;
    }
    let ts = secs
        .checked_mul(1_000_000_000)?
        .checked_add(frac * NS_SCALE[at - frac_at])?;
    Some((cpu, ts, skip_blanks(line, at + 1)))
}

/// [`kernel_layout`]'s CPU column in the kernel's form, three digits (`[%03d]`) and a blank:
/// the CPU, where the bytes after the `[` at `open` are that.
fn cpu_column3(line: &[u8], open: usize) -> Option<u32> {
    let &[a, b, c, b']', sep] = line.get(open + 1..open + 6)? else {
        return None;
    };
    let cpu = digit(a)? * 100 + digit(b)? * 10 + digit(c)?;
    is_blank(&sep).then_some(cpu)
}

/// [`kernel_layout`]'s timestamp decimals in the kernel's form, six digits (microseconds)
/// then `:` and a blank: their value, where the eight bytes at `at` are that. The digits are
/// checked and read as one word (the loop costs a few instructions per digit).
fn micros_colon(line: &[u8], at: usize) -> Option<u64> {
    const DIGITS: u64 = 0x0000_FFFF_FFFF_FFFF;
    const HIGH: u64 = 0xF0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030;
    let word = u64::from_le_bytes(line.get(at..at + 8)?.try_into().ok()?);
    let tail = word >> 48;
    if tail & 0xFF != u64::from(b':') || !is_blank(&((tail >> 8) as u8)) {
        return None;
    }
    // Six ASCII digits: each byte's high half is 3, and still is once 6 is added (a byte
    // above `9` carries into it; a carry out of a byte only happens from one that failed the
    // first test).
    let lo = word & DIGITS;
    if lo & HIGH != ZEROS || (lo + 0x0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    // The digits, first one lowest, as eight with two leading zeros; then pairs, fours and
    // the whole (the usual eight-digit word parse).
    let v = (lo - ZEROS) << 16;
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let v = ((v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32)))
        .wrapping_add(((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some(v)
}

fn is_blank(b: &u8) -> bool {
    *b == b' ' || *b == b'\t'
}

/// The offset of the first `needle` in `hay`, eight bytes at a time. The searches in a line's
/// columns and fields run over a few dozen bytes, where a `memchr` call costs more to set up
/// than it saves and a byte loop is slower than this.
pub(crate) fn find_byte(hay: &[u8], needle: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(needle);
    let mut chunks = hay.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        // A byte equal to the needle is zero here; the lowest flagged byte is the first zero
        // byte (a borrow can only flag bytes above it).
        let x = u64::from_le_bytes(word) ^ pattern;
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|p| at + p)
}

/// The value of an ASCII digit.
fn digit(b: u8) -> Option<u32> {
    let d = b.wrapping_sub(b'0');
    (d < 10).then_some(u32::from(d))
}

/// The offset of the first byte at or after `from` that is not a space or a tab: eight bytes
/// at a time up to the first byte that is not a space (the kernel pads task names with up to
/// 16 spaces, whose varying count a byte loop mispredicts on), then byte by byte.
pub(crate) fn skip_blanks(line: &[u8], mut from: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some(chunk) = line.get(from..from + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ SPACES;
        if x != 0 {
            from += (x.trailing_zeros() / 8) as usize;
            break;
        }
        from += 8;
    }
    while line.get(from).is_some_and(|b| *b == b' ' || *b == b'\t') {
        from += 1;
    }
    from
}

/// The whitespace-separated token starting at or after `from`, and the offset after it.
fn token(line: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let start = skip_blanks(line, from);
    let mut end = start;
    while line.get(end).is_some_and(|b| *b != b' ' && *b != b'\t') {
        end += 1;
    }
    (end > start).then(|| (&line[start..end], end))
}

/// What a fraction of `i` decimals is multiplied by to give nanoseconds.
const NS_SCALE: [u64; 10] = [
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

/// `SECONDS.FRACTION` (up to nine decimals) as nanoseconds.
fn parse_timestamp(text: &[u8]) -> Result<u64, String> {
    let bad = || {
        format!(
            "expected a timestamp in seconds with up to nine decimals (`538.064659:`), got {}; \
             traces taken with a counter clock (`x86-tsc`, `counter`) are not supported",
            shown(&String::from_utf8_lossy(text))
        )
    };
    let (secs, frac) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => return Err(bad()),
    };
    if frac.is_empty() || frac.len() > 9 {
        return Err(bad());
    }
    let secs = parse_u64(secs).ok_or_else(bad)?;
    // At most nine digits: the scale to nanoseconds cannot overflow.
    let ns = parse_u64(frac).ok_or_else(bad)? * NS_SCALE[frac.len()];
    secs.checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(ns))
        .ok_or_else(bad)
}

pub(crate) fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r' | b' ' | b'\t'))
        .map_or(0, |p| p + 1);
    &line[..end]
}

fn trim(line: &[u8]) -> &[u8] {
    let line = trim_end(line);
    let start = line
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(line.len());
    &line[start..]
}

#[inline]
pub(crate) fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut n: u64 = 0;
    if digits.len() < 20 {
        // Nineteen digits cannot overflow: no check per digit.
        for &d in digits {
            n = n * 10 + u64::from(digit(d)?);
        }
        return Some(n);
    }
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

fn parse_u32(digits: &[u8]) -> Option<u32> {
    parse_u64(digits).and_then(|n| u32::try_from(n).ok())
}

fn parse_i32(text: &[u8]) -> Option<i32> {
    match text.strip_prefix(b"-") {
        Some(d) => parse_u64(d).and_then(|n| i32::try_from(-i64::try_from(n).ok()?).ok()),
        None => parse_u64(text).and_then(|n| i32::try_from(n).ok()),
    }
}

/// The number at the start of `text` and the rest.
fn leading_u64(text: &[u8]) -> Option<(u64, &[u8])> {
    let n = text.iter().take_while(|b| b.is_ascii_digit()).count();
    Some((parse_u64(&text[..n])?, &text[n..]))
}

/// A kernel pointer as printed by `%p`: hexadecimal, with or without `0x`.
fn parse_hex(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"0x").unwrap_or(text);
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let s = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(s, 16).ok()
}

/// The value of `key=` in `fields`: the key starts the fields or follows a space; the value
/// runs to the next space.
///
/// The candidates are the start and the byte after each space, in order: the first one where
/// `key=` stands is the first occurrence of `key` that follows a space or starts the fields
/// (a substring search per key costs more on these short lines).
fn field<'a>(fields: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let value_at = |at: usize| -> Option<&'a [u8]> {
        let rest = &fields[at..];
        if rest.len() > key.len() && rest.starts_with(key) && rest[key.len()] == b'=' {
            let value = &rest[key.len() + 1..];
            let end = memchr::memchr(b' ', value).unwrap_or(value.len());
            Some(&value[..end])
        } else {
            None
        }
    };
    value_at(0).or_else(|| memchr::memchr_iter(b' ', fields).find_map(|sp| value_at(sp + 1)))
}

/// What [`field`] gives for each of `keys`, in one pass over the candidates instead of one
/// pass per key (`sched_switch`, the most frequent event in most traces, has three keys read
/// and up to ten fields).
fn fields_of<'a, const N: usize>(fields: &'a [u8], keys: [&[u8]; N]) -> [Option<&'a [u8]>; N] {
    let mut found = [None; N];
    let mut missing = N;
    let mut at = 0;
    while missing > 0 && at <= fields.len() {
        let rest = &fields[at..];
        let len = find_byte(rest, b' ').unwrap_or(rest.len());
        let token = &rest[..len];
        for (key, slot) in keys.iter().zip(found.iter_mut()) {
            if slot.is_none() && token.get(key.len()) == Some(&b'=') && token.starts_with(key) {
                *slot = Some(&token[key.len() + 1..]);
                missing -= 1;
            }
        }
        at += len + 1;
    }
    found
}

fn text(value: &[u8]) -> Option<&str> {
    std::str::from_utf8(value).ok()
}

/// Parses the fields of a known event; the error is the message only.
/// How [`parse_kind`] says a field is missing: a complete last line whose fields stop short
/// was cut by hand (trappy's test trace ends so), not written wrong.
const MISSING_FIELD: &str = "in the fields of";

pub(crate) fn parse_kind<'a>(
    name: &[u8],
    fields: &'a [u8],
    cpus: Option<u32>,
) -> Result<EventKind<'a>, String> {
    // Decoded only when an error message needs it: most lines parse.
    let event = Lossy(name);
    let need = |key: &str| -> Result<&'a [u8], String> {
        field(fields, key.as_bytes()).ok_or_else(|| {
            format!(
                "expected `{key}=` {MISSING_FIELD} `{event}`, got {}",
                shown(&String::from_utf8_lossy(fields))
            )
        })
    };
    let bad = |key: &str, what: &str| -> String {
        let got = field(fields, key.as_bytes()).unwrap_or(b"");
        format!(
            "expected {what} for `{key}` of `{event}`, got {}",
            shown(&String::from_utf8_lossy(got))
        )
    };
    let uint = |key: &str| -> Result<u64, String> {
        parse_u64(need(key)?).ok_or_else(|| bad(key, "a whole number"))
    };
    let cpu_field = |key: &str| -> Result<u32, String> {
        let n = parse_u64(need(key)?).ok_or_else(|| bad(key, "a CPU number"))?;
        match u32::try_from(n) {
            Ok(c) if c < cpus.unwrap_or(MAX_CPUS) => Ok(c),
            _ => Err(cpu_beyond(
                &format!("`{key}` of `{event}`"),
                n.min(u64::from(u32::MAX)) as u32,
                cpus,
            )),
        }
    };
    let ptr = |key: &str| -> Result<u64, String> {
        parse_hex(need(key)?).ok_or_else(|| bad(key, "a hexadecimal pointer"))
    };
    let word = |key: &str| -> Result<&'a str, String> {
        text(need(key)?).ok_or_else(|| bad(key, "UTF-8 text"))
    };
    // `(reason)` at the end of the fields, as ipi events print it.
    let reason = || -> Result<&'a str, String> {
        let open = memchr::memchr(b'(', fields);
        match (open, fields.last()) {
            (Some(o), Some(b')')) => text(&fields[o + 1..fields.len() - 1])
                .ok_or_else(|| format!("expected the reason of `{event}` as UTF-8 text")),
            _ => Err(format!(
                "expected `(reason)` in the fields of `{event}`, got {}",
                shown(&String::from_utf8_lossy(fields))
            )),
        }
    };
    Ok(match name {
        b"cpu_idle" => {
            let state = uint("state")?;
            let cpu_id = cpu_field("cpu_id")?;
            let state = if state == u64::from(CPU_IDLE_EXIT) {
                None
            } else if state < u64::from(CPUIDLE_STATE_MAX) {
                Some(state as u32)
            } else {
                return Err(format!(
                    "expected a `cpu_idle` state below {CPUIDLE_STATE_MAX} (the kernel's \
                     CPUIDLE_STATE_MAX) or {CPU_IDLE_EXIT} (exit), got {state}"
                ));
            };
            EventKind::CpuIdle { state, cpu_id }
        }
        b"cpu_idle_miss" => {
            let cpu_id = cpu_field("cpu_id")?;
            let state = uint("state")?;
            if state >= u64::from(CPUIDLE_STATE_MAX) {
                return Err(format!(
                    "expected a `cpu_idle_miss` state below {CPUIDLE_STATE_MAX}, got {state}"
                ));
            }
            let below = match need("type")? {
                b"below" => true,
                b"above" => false,
                _ => return Err(bad("type", "`above` or `below`")),
            };
            EventKind::CpuIdleMiss {
                cpu_id,
                state: state as u32,
                below,
            }
        }
        b"cpu_frequency" => EventKind::CpuFrequency {
            khz: u32::try_from(uint("state")?).map_err(|_| bad("state", "a frequency in kHz"))?,
            cpu_id: cpu_field("cpu_id")?,
        },
        b"sched_wakeup" | b"sched_wakeup_new" | b"sched_waking" => {
            // The comm may hold spaces: it runs from `comm=` to ` pid=`.
            let comm = match (
                fields.strip_prefix(b"comm="),
                memmem::find(fields, b" pid="),
            ) {
                (Some(_), Some(end)) => text(&fields[5..end]),
                _ => None,
            }
            .ok_or_else(|| {
                format!(
                    "expected `comm=NAME pid=N` in the fields of `{event}`, got {}",
                    shown(&String::from_utf8_lossy(fields))
                )
            })?;
            let pid = parse_i32(need("pid")?).ok_or_else(|| bad("pid", "a process id"))?;
            let target_cpu = cpu_field("target_cpu")?;
            if name == b"sched_waking" {
                EventKind::SchedWaking {
                    comm,
                    pid,
                    target_cpu,
                }
            } else {
                EventKind::SchedWakeup {
                    comm,
                    pid,
                    target_cpu,
                    new: name == b"sched_wakeup_new",
                }
            }
        }
        b"sched_switch" => {
            let [prev_pid, prev_state, next_pid] =
                fields_of(fields, [b"prev_pid", b"prev_state", b"next_pid"]);
            if let Some(prev_pid) = prev_pid {
                // The checks and their order as `need`, `word` and `bad` make them.
                let pid = |value: Option<&[u8]>, key: &str| -> Result<i32, String> {
                    parse_i32(value.map_or_else(|| need(key), Ok)?)
                        .ok_or_else(|| bad(key, "a process id"))
                };
                let prev_pid = pid(Some(prev_pid), "prev_pid")?;
                let prev_state = match prev_state {
                    Some(v) => text(v).ok_or_else(|| bad("prev_state", "UTF-8 text"))?,
                    None => word("prev_state")?,
                };
                EventKind::SchedSwitch {
                    prev_pid,
                    prev_state,
                    next_pid: pid(next_pid, "next_pid")?,
                }
            } else {
                compact_switch(fields).ok_or_else(|| {
                    format!(
                        "expected `prev_comm=... prev_pid=N ... next_pid=N` or trace-cmd's \
                         `COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]` in the fields of \
                         `sched_switch`, got {}",
                        shown(&String::from_utf8_lossy(fields))
                    )
                })?
            }
        }
        b"hrtimer_start" => EventKind::HrtimerStart {
            hrtimer: ptr("hrtimer")?,
            function: word("function")?,
            expires_ns: uint("expires")?,
            softexpires_ns: uint("softexpires")?,
        },
        b"hrtimer_expire_entry" => EventKind::HrtimerExpireEntry {
            hrtimer: ptr("hrtimer")?,
            function: word("function")?,
            now_ns: uint("now")?,
        },
        b"hrtimer_cancel" => EventKind::HrtimerCancel {
            hrtimer: ptr("hrtimer")?,
        },
        b"timer_start" => EventKind::TimerStart {
            timer: ptr("timer")?,
            function: word("function")?,
            expires: uint("expires")?,
        },
        b"timer_expire_entry" => EventKind::TimerExpireEntry {
            timer: ptr("timer")?,
            function: word("function")?,
            now: uint("now")?,
        },
        b"timer_cancel" => EventKind::TimerCancel {
            timer: ptr("timer")?,
        },
        b"tick_stop" => EventKind::TickStop {
            success: match need("success")? {
                b"1" => true,
                b"0" => false,
                _ => return Err(bad("success", "0 or 1")),
            },
            dependency: word("dependency")?,
        },
        b"irq_handler_entry" => EventKind::IrqHandlerEntry {
            irq: u32::try_from(uint("irq")?).map_err(|_| bad("irq", "an irq number"))?,
            name: word("name")?,
        },
        b"ipi_raise" => EventKind::IpiRaise {
            target_mask: word("target_mask")?,
            reason: reason()?,
        },
        b"ipi_entry" => EventKind::IpiEntry { reason: reason()? },
        b"ipi_exit" => EventKind::IpiExit { reason: reason()? },
        _ => return Err(format!("`{event}` is not an event torpor reads")),
    })
}

/// Bytes shown as text, invalid UTF-8 replaced, decoded when formatted.
#[derive(Clone, Copy)]
struct Lossy<'a>(&'a [u8]);

impl std::fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        String::from_utf8_lossy(self.0).fmt(f)
    }
}

/// trace-cmd's compact `sched_switch`: `prev:PID [PRIO] STATE ==> next:PID [PRIO]`.
fn compact_switch(fields: &[u8]) -> Option<EventKind<'_>> {
    let arrow = memmem::find(fields, b" ==> ")?;
    let (prev, next) = (&fields[..arrow], &fields[arrow + 5..]);
    let pid_of = |side: &[u8]| -> Option<i32> {
        let bracket = memmem::rfind(side, b" [")?;
        let colon = memchr::memrchr(b':', &side[..bracket])?;
        parse_i32(&side[colon + 1..bracket])
    };
    let state_at = memchr::memrchr(b']', prev)? + 1;
    Some(EventKind::SchedSwitch {
        prev_pid: pid_of(prev)?,
        prev_state: text(trim(&prev[state_at..]))?,
        next_pid: pid_of(next)?,
    })
}

#[cfg(test)]
mod tests;
