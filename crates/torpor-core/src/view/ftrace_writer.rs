//! Writes a simulated CPU run as the ftrace text a kernel would have produced: the events a
//! `cpu_idle`/scheduler/timer trace of the same machine shows, at the moments the kernel emits
//! them, in the kernel's `TP_printk` formats (v6.6: `include/trace/events/{power,sched,timer,
//! irq,ipi}.h`) and `trace` file layout (`kernel/trace/trace_output.c`).
//!
//! Two forms: the raw `trace` file (`# tracer: nop` header with `#P:N`), and idlestat's trace
//! file (`idlestat version`, `cpus=N`, the topology and each CPU's C-state table, then the
//! event lines, as `idlestat --trace -f FILE` stores them) so that `idlestat --import` reads
//! the platform from the file, not from the host's sysfs.
//!
//! When each event is written (spec-cpu.md §1.3 and §5):
//!
//! * `tick_stop` then `cpu_idle state=N` when the CPU enters a state (`tick_stop` only when this
//!   entry stopped a running tick, as `tick_nohz_stop_tick` traces it);
//! * `cpu_idle state=4294967295` when the driver's `enter` returns, i.e. after the exit latency.
//!   The interrupts that woke the CPU are handled once it is out: `irq_handler_entry` (the arch
//!   timer, or a task's device), `hrtimer_expire_entry` (the task's `hrtimer_wakeup`, or the
//!   tick's `tick_sched_timer`), `ipi_entry` for a wake-up from another CPU, `sched_wakeup` —
//!   all at the exit time, on the woken CPU, in the order they arrived. Then `cpu_idle_miss`
//!   (the core enables interrupts before it classifies the period), then `sched_switch` to the
//!   woken task;
//! * on a running CPU the same interrupt events are written when they happen. A wake-up from
//!   another CPU of a task whose CPU runs is a `sched_wakeup` on the waker's CPU; of an idle one,
//!   an IPI (`ipi_entry (Function call interrupts)`, arm64's `IPI_CALL_FUNC` for the wake list)
//!   and the `sched_wakeup` on the woken CPU — unless it is polling, which needs no IPI
//!   (`sched_wake_idle_without_ipi` on the waker's CPU);
//! * `hrtimer_start` (`mode=ABS` for periodic tasks, `REL` for sleeps) when a task arms its
//!   timer at the end of its burst, then `sched_switch` to the next task or to `swapper/N`.
//!
//! What is synthetic, as the simulation has no such thing: task pids are 1000 + the task's
//! index and every priority is 120; comms are the task names cut to 15 bytes; timer addresses,
//! the arch timer's irq number (11) and the device irqs (100 + the task's index, named after the
//! task) are made up; the irq-flags column is a fixed plausible value per event. ASSUMPTION:
//! timers have no slack (`softexpires` = `expires`), as for a real-time task.
//!
//! Where this differs from a kernel's `trace` file, on purpose: timestamps have nine decimals
//! (the simulation's nanoseconds; the kernel rounds to microseconds, `trace-cmd report -t` keeps
//! nine), so that intervals read back equal the run's own; and the raw header cannot give the
//! entry counts before the run ends, so its counts line says so. The idlestat form leaves out
//! `cpu_idle_miss`, which idlestat (matching `cpu_idle` as a substring of any line) would
//! misread as an idle event.
//!
//! Streaming, constant memory: each line is written as it is known; per CPU at most the few
//! interrupt events that arrive while it wakes wait for its exit.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::cpu::system::{CpuRunSpec, CpuTrace, Traced};
use crate::cpu::task::Source;
use crate::time::Nanos;

use crate::trace::ftrace::{CPU_IDLE_EXIT, IDLESTAT_STATES};

/// Which file to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The kernel's `trace` file.
    Raw,
    /// idlestat's trace file (`idlestat --import` reads it).
    Idlestat,
}

/// The version the idlestat header names: Debian's idlestat, whose reader this form was
/// checked against.
/// The largest trace one variant writes: a few seconds of the writer's output (it writes about
/// 250 MB/s), and more than `idle stats` needs to describe a run.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

/// Bytes of trace per CPU event of the work estimate
/// ([`crate::workload::estimate::cpu_events`]): the shipped CPU scenarios write 160 to 180
/// (more than one line of about 90 bytes per estimated event), so 200 errs high.
pub const TRACE_BYTES_PER_EVENT: u64 = 200;

/// Refuses, before it runs, a variant whose trace would pass [`MAX_TRACE_BYTES`] by the
/// estimate of its `events`; the writer stops at the limit if the estimate falls short.
pub fn check_trace_size(events: u64) -> Result<(), String> {
    let bytes = events.saturating_mul(TRACE_BYTES_PER_EVENT);
    if bytes <= MAX_TRACE_BYTES {
        return Ok(());
    }
    Err(format!(
        "--ftrace: this variant's idle trace would take about {:.1e} bytes ({:.1e} CPU events \
         at about {TRACE_BYTES_PER_EVENT} bytes each), more than the limit of 1 GiB per trace; \
         shorten `[run] duration`",
        bytes as f64, events as f64
    ))
}

const IDLESTAT_VERSION: &str = "0.8";
/// The arch timer's (made-up) irq number: it delivers both the tick and hrtimers.
const TIMER_IRQ: u32 = 11;
const FIRST_DEVICE_IRQ: usize = 100;
const FIRST_PID: usize = 1000;
/// `TASK_COMM_LEN` - 1.
const COMM_MAX: usize = 15;
const PRIO: u32 = 120;
const TASK_TIMER_BASE: u64 = 0xffff_ff80_1000_0000;
const TICK_TIMER_BASE: u64 = 0xffff_ff80_2000_0000;

/// An interrupt-side event that waits for its CPU to be out of idle.
#[derive(Clone, Copy, Debug)]
enum Pending {
    TimerIrq,
    TaskTimer(usize),
    TickTimer,
    DeviceIrq(usize),
    Ipi,
    Wakeup(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A task (`None`: the idle task, outside any state).
    Running(Option<usize>),
    Idle(usize),
    Exiting {
        state: usize,
        miss: Option<bool>,
    },
}

struct CpuLog {
    id: u32,
    polling: Vec<bool>,
    mode: Mode,
    pending: Vec<Pending>,
}

/// Where lines go: the output, the line buffer reused for every line, the first write error
/// (writing stops there; [`FtraceWriter::finish`] returns it).
struct Sink<W> {
    out: W,
    line: String,
    error: Option<io::Error>,
    lines: u64,
}

impl<W: Write> Sink<W> {
    /// Writes one event line on `cpu`: `%16s-%-7d [%03d] FLAGS %5lu.%09lu: EVENT: FIELDS`
    /// (trace_output.c's layout, with nanoseconds).
    fn line(
        &mut self,
        cpu: &CpuLog,
        comms: &[String],
        at: Nanos,
        flags: &str,
        event: &str,
        fields: std::fmt::Arguments<'_>,
    ) {
        if self.error.is_some() {
            return;
        }
        let (comm, pid) = match cpu.mode {
            Mode::Running(Some(t)) => (comms[t].as_str(), FIRST_PID + t),
            _ => ("<idle>", 0),
        };
        self.line.clear();
        let _ = writeln!(
            self.line,
            "{comm:>16}-{pid:<7} [{:03}] {flags} {:>5}.{:09}: {event}: {fields}",
            cpu.id,
            at.0 / 1_000_000_000,
            at.0 % 1_000_000_000
        );
        self.lines += 1;
        if let Err(e) = self.out.write_all(self.line.as_bytes()) {
            self.error = Some(e);
        }
    }
}

/// The idle task or a task, as `sched_switch` names it.
struct Who<'a> {
    task: Option<&'a str>,
    cpu: u32,
}

impl std::fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            Some(comm) => f.write_str(comm),
            None => write!(f, "swapper/{}", self.cpu),
        }
    }
}

/// The writer: give it to a CPU system's `traced`, run the world, then [`FtraceWriter::finish`].
pub struct FtraceWriter<W: Write> {
    sink: Sink<W>,
    form: Form,
    cpus: Vec<CpuLog>,
    /// CPU id -> index in `cpus`.
    index: Vec<usize>,
    comms: Vec<String>,
    /// Device irq names (the task name without spaces).
    irq_names: Vec<String>,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// `name` cut to at most `max` bytes on a character boundary.
fn cut(name: &str, max: usize) -> &str {
    let mut end = name.len().min(max);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

impl<W: Write> FtraceWriter<W> {
    /// Writes the header for the run `spec` describes. The idlestat form needs CPUs numbered
    /// 0 to N-1, at most 26 clusters and 16 states (its file's limits).
    pub fn new(mut out: W, spec: &CpuRunSpec, form: Form) -> io::Result<Self> {
        let ids = spec.platform.cpus();
        let ncpus = ids.last().map_or(0, |&m| m + 1);
        let mut index = vec![usize::MAX; ncpus as usize];
        let mut cpus = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            index[id as usize] = i;
            let cluster = spec.platform.cluster_of(id).expect("listed CPU");
            cpus.push(CpuLog {
                id,
                polling: cluster.states.iter().map(|s| s.polling).collect(),
                mode: Mode::Running(None),
                pending: Vec::new(),
            });
        }
        match form {
            Form::Raw => {
                writeln!(out, "# tracer: nop")?;
                writeln!(out, "#")?;
                writeln!(
                    out,
                    "# entries-in-buffer/entries-written: not known while streaming (torpor \
                     simulation)   #P:{ncpus}"
                )?;
                writeln!(out, "#")?;
                for l in [
                    "#                                _-----=> irqs-off/BH-disabled",
                    "#                               / _----=> need-resched",
                    "#                              | / _---=> hardirq/softirq",
                    "#                              || / _--=> preempt-depth",
                    "#                              ||| / _-=> migrate-disable",
                    "#                              |||| /     delay",
                    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
                    "#              | |         |   |||||     |         |",
                ] {
                    writeln!(out, "{l}")?;
                }
            }
            Form::Idlestat => {
                if ids.iter().enumerate().any(|(i, &id)| id as usize != i) {
                    return Err(invalid(format!(
                        "an idlestat trace needs CPUs numbered 0 to N-1; this platform has {ids:?}"
                    )));
                }
                if spec.platform.clusters.len() > 26 {
                    return Err(invalid(
                        "an idlestat trace names at most 26 clusters (A to Z)".into(),
                    ));
                }
                writeln!(out, "idlestat version = {IDLESTAT_VERSION}")?;
                writeln!(out, "cpus={ncpus}")?;
                for (k, c) in spec.platform.clusters.iter().enumerate() {
                    writeln!(out, "cluster{}:", char::from(b'A' + k as u8))?;
                    let mut members = c.cpus.clone();
                    members.sort_unstable();
                    for cpu in members {
                        writeln!(out, "\tcpu{cpu}")?;
                    }
                }
                for &id in &ids {
                    let states = &spec.platform.cluster_of(id).expect("listed CPU").states;
                    if states.len() > IDLESTAT_STATES {
                        return Err(invalid(format!(
                            "an idlestat trace lists at most {IDLESTAT_STATES} states per CPU"
                        )));
                    }
                    writeln!(out, "cpuid {id}:")?;
                    for i in 0..IDLESTAT_STATES {
                        match states.get(i) {
                            // idlestat reads one word per name.
                            Some(s) => writeln!(
                                out,
                                "\t{}\n\t{}",
                                s.name.replace(char::is_whitespace, "_"),
                                s.target_residency_us
                            )?,
                            None => writeln!(out, "\t(null)\n\t-1")?,
                        }
                    }
                }
            }
        }
        let comms = spec
            .tasks
            .iter()
            .map(|t| cut(&t.name, COMM_MAX).to_string())
            .collect();
        let irq_names = spec
            .tasks
            .iter()
            .map(|t| cut(&t.name, COMM_MAX).replace(char::is_whitespace, "_"))
            .collect();
        Ok(FtraceWriter {
            sink: Sink {
                out,
                line: String::with_capacity(256),
                error: None,
                lines: 0,
            },
            form,
            cpus,
            index,
            comms,
            irq_names,
        })
    }

    /// Event lines written so far.
    pub fn lines(&self) -> u64 {
        self.sink.lines
    }

    /// Flushes and returns the output, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.sink.error.take() {
            return Err(e);
        }
        self.sink.out.flush()?;
        Ok(self.sink.out)
    }

    fn cpu(&self, id: u32) -> usize {
        self.index[id as usize]
    }

    /// Writes one event line on CPU index `c`.
    fn write(
        &mut self,
        c: usize,
        at: Nanos,
        flags: &str,
        event: &str,
        fields: std::fmt::Arguments<'_>,
    ) {
        self.sink
            .line(&self.cpus[c], &self.comms, at, flags, event, fields);
    }

    fn write_pending(&mut self, c: usize, at: Nanos, p: Pending) {
        let id = self.cpus[c].id;
        match p {
            Pending::TimerIrq => self.write(
                c,
                at,
                "d.h1.",
                "irq_handler_entry",
                format_args!("irq={TIMER_IRQ} name=arch_timer"),
            ),
            Pending::TaskTimer(t) => self.write(
                c,
                at,
                "d.h1.",
                "hrtimer_expire_entry",
                format_args!(
                    "hrtimer={:016x} function=hrtimer_wakeup now={}",
                    TASK_TIMER_BASE + 0x100 * t as u64,
                    at.0
                ),
            ),
            Pending::TickTimer => self.write(
                c,
                at,
                "d.h1.",
                "hrtimer_expire_entry",
                format_args!(
                    "hrtimer={:016x} function=tick_sched_timer now={}",
                    TICK_TIMER_BASE + 0x100 * u64::from(id),
                    at.0
                ),
            ),
            Pending::DeviceIrq(t) => self.sink.line(
                &self.cpus[c],
                &self.comms,
                at,
                "d.h1.",
                "irq_handler_entry",
                format_args!("irq={} name={}", FIRST_DEVICE_IRQ + t, self.irq_names[t]),
            ),
            Pending::Ipi => self.write(
                c,
                at,
                "d.h1.",
                "ipi_entry",
                format_args!("(Function call interrupts)"),
            ),
            Pending::Wakeup(t) => self.sink.line(
                &self.cpus[c],
                &self.comms,
                at,
                "dnh2.",
                "sched_wakeup",
                format_args!(
                    "comm={} pid={} prio={PRIO} target_cpu={id:03}",
                    self.comms[t],
                    FIRST_PID + t
                ),
            ),
        }
    }

    /// Writes `p` on CPU index `c` now, or keeps it for its exit if the CPU is idle.
    fn interrupt(&mut self, c: usize, at: Nanos, p: Pending) {
        match self.cpus[c].mode {
            Mode::Running(_) => self.write_pending(c, at, p),
            Mode::Idle(_) | Mode::Exiting { .. } => self.cpus[c].pending.push(p),
        }
    }
}

impl<W: Write> CpuTrace for FtraceWriter<W> {
    fn on(&mut self, at: Nanos, event: Traced) {
        match event {
            Traced::TimerArmed {
                task,
                cpu,
                expires,
                absolute,
            } => {
                let c = self.cpu(cpu);
                self.write(
                    c,
                    at,
                    "d..1.",
                    "hrtimer_start",
                    format_args!(
                        "hrtimer={:016x} function=hrtimer_wakeup expires={} softexpires={} \
                         mode={}",
                        TASK_TIMER_BASE + 0x100 * task as u64,
                        expires.0,
                        expires.0,
                        if absolute { "ABS" } else { "REL" }
                    ),
                );
            }
            Traced::WakeSource { task, cpu, source } => {
                let c = self.cpu(cpu);
                match source {
                    Source::Timer => {
                        self.interrupt(c, at, Pending::TimerIrq);
                        self.interrupt(c, at, Pending::TaskTimer(task));
                    }
                    Source::Interrupt => self.interrupt(c, at, Pending::DeviceIrq(task)),
                }
            }
            Traced::Tick { cpu } => {
                let c = self.cpu(cpu);
                self.interrupt(c, at, Pending::TimerIrq);
                self.interrupt(c, at, Pending::TickTimer);
            }
            Traced::Woken { task, cpu, by } => {
                let c = self.cpu(cpu);
                let idle_in = match self.cpus[c].mode {
                    Mode::Running(_) => None,
                    Mode::Idle(s) | Mode::Exiting { state: s, .. } => Some(s),
                };
                match (idle_in, by) {
                    (None, Some(b)) => {
                        let w = self.cpu(b);
                        self.write_pending(w, at, Pending::Wakeup(task));
                    }
                    (None, None) => self.write_pending(c, at, Pending::Wakeup(task)),
                    (Some(s), Some(b)) if b != cpu => {
                        if self.cpus[c].polling[s] {
                            let w = self.cpu(b);
                            self.write(
                                w,
                                at,
                                "d..2.",
                                "sched_wake_idle_without_ipi",
                                format_args!("cpu={cpu}"),
                            );
                        } else {
                            self.cpus[c].pending.push(Pending::Ipi);
                        }
                        self.cpus[c].pending.push(Pending::Wakeup(task));
                    }
                    (Some(_), _) => self.cpus[c].pending.push(Pending::Wakeup(task)),
                }
            }
            Traced::IdleEnter {
                cpu,
                state,
                stops_tick,
            } => {
                let c = self.cpu(cpu);
                if stops_tick {
                    self.write(
                        c,
                        at,
                        "d..1.",
                        "tick_stop",
                        format_args!("success=1 dependency=NONE"),
                    );
                }
                self.write(
                    c,
                    at,
                    "d..1.",
                    "cpu_idle",
                    format_args!("state={state} cpu_id={cpu}"),
                );
                self.cpus[c].mode = Mode::Idle(state);
            }
            Traced::IdleExit {
                cpu, state, miss, ..
            } => {
                let c = self.cpu(cpu);
                self.cpus[c].mode = Mode::Exiting { state, miss };
            }
            Traced::Ready { cpu } => {
                let c = self.cpu(cpu);
                let Mode::Exiting { state, miss } = self.cpus[c].mode else {
                    return;
                };
                self.write(
                    c,
                    at,
                    "d..1.",
                    "cpu_idle",
                    format_args!("state={CPU_IDLE_EXIT} cpu_id={cpu}"),
                );
                let pending = std::mem::take(&mut self.cpus[c].pending);
                for &p in &pending {
                    self.write_pending(c, at, p);
                }
                // The buffer is reused: its capacity stays with the CPU.
                self.cpus[c].pending = pending;
                self.cpus[c].pending.clear();
                if let (Some(below), Form::Raw) = (miss, self.form) {
                    self.write(
                        c,
                        at,
                        "d..1.",
                        "cpu_idle_miss",
                        format_args!(
                            "cpu_id={cpu} state={state} type={}",
                            if below { "below" } else { "above" }
                        ),
                    );
                }
                self.cpus[c].mode = Mode::Running(None);
            }
            Traced::Switch { cpu, prev, next } => {
                let c = self.cpu(cpu);
                let who = |task: Option<usize>| Who {
                    task: task.map(|t| self.comms[t].as_str()),
                    cpu,
                };
                let pid = |task: Option<usize>| task.map_or(0, |t| FIRST_PID + t);
                // The idle task is preempted (R); a task ending its burst sleeps (S).
                let prev_state = if prev.is_some() { "S" } else { "R" };
                self.sink.line(
                    &self.cpus[c],
                    &self.comms,
                    at,
                    "d..2.",
                    "sched_switch",
                    format_args!(
                        "prev_comm={} prev_pid={} prev_prio={PRIO} prev_state={prev_state} ==> \
                         next_comm={} next_pid={} next_prio={PRIO}",
                        who(prev),
                        pid(prev),
                        who(next),
                        pid(next)
                    ),
                );
                self.cpus[c].mode = Mode::Running(next);
            }
            Traced::Frequency { cpu, khz } => {
                let c = self.cpu(cpu);
                self.write(
                    c,
                    at,
                    "d..1.",
                    "cpu_frequency",
                    format_args!("state={khz} cpu_id={cpu}"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
