//! A trace's events as one table per event, for Python's `torpor.trace` (pandas DataFrames):
//! columns named as the kernel names the event's fields, beside each event's time (ns) and
//! CPU. Every format the analyses read is read here, told apart by content as they tell it:
//! trace.dat, Perfetto, ftrace text plain or packed (gzip, zstd, a systrace page).
//!
//! Values are the readers' (the same [`EventKind`]s the analyses see): `cpu_idle`'s exit is
//! its `state` 4294967295, as the kernel writes it; texts the kernel prints from numbers
//! (`prev_state`, timer functions, IPI masks, `tick_stop`'s dependency) are as printed.
//! Memory follows the events kept: at most [`MAX_EVENTS`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::InputError;
use crate::trace::ftrace::{EventKind, FtraceCounts, FtraceFormat};
use crate::trace::source::EventSource;

/// The most events read into tables (a few GB of DataFrames).
pub const MAX_EVENTS: usize = 100_000_000;

/// One column's values.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Column {
    Int(Vec<i64>),
    UInt(Vec<u64>),
    Str(Vec<String>),
}

/// One event's table.
#[derive(Debug, Default, PartialEq, Serialize)]
pub struct EventTable {
    pub time_ns: Vec<u64>,
    pub cpu: Vec<u32>,
    /// The event's fields in the kernel's order.
    pub fields: Vec<(&'static str, Column)>,
}

/// Every event table of a trace, what it was read as, and the reader's counts.
#[derive(Debug, Serialize)]
pub struct Tables {
    pub format: FtraceFormat,
    pub events: BTreeMap<&'static str, EventTable>,
    pub trace: FtraceCounts,
}

/// One field's value.
enum Val<'a> {
    I(i64),
    U(u64),
    S(&'a str),
}

/// An event's name and fields.
fn row<'a>(kind: &EventKind<'a>) -> (&'static str, Vec<(&'static str, Val<'a>)>) {
    use Val::{I, S, U};
    match *kind {
        EventKind::CpuIdle { state, cpu_id } => (
            "cpu_idle",
            vec![
                ("state", U(u64::from(state.unwrap_or(u32::MAX)))),
                ("cpu_id", U(cpu_id.into())),
            ],
        ),
        EventKind::CpuIdleMiss {
            cpu_id,
            state,
            below,
        } => (
            "cpu_idle_miss",
            vec![
                ("cpu_id", U(cpu_id.into())),
                ("state", U(state.into())),
                ("below", I(below.into())),
            ],
        ),
        EventKind::CpuFrequency { khz, cpu_id } => (
            "cpu_frequency",
            vec![("state", U(khz.into())), ("cpu_id", U(cpu_id.into()))],
        ),
        EventKind::SchedWakeup {
            comm,
            pid,
            target_cpu,
            new,
        } => (
            if new {
                "sched_wakeup_new"
            } else {
                "sched_wakeup"
            },
            vec![
                ("comm", S(comm)),
                ("pid", I(pid.into())),
                ("target_cpu", U(target_cpu.into())),
            ],
        ),
        EventKind::SchedWaking {
            comm,
            pid,
            target_cpu,
        } => (
            "sched_waking",
            vec![
                ("comm", S(comm)),
                ("pid", I(pid.into())),
                ("target_cpu", U(target_cpu.into())),
            ],
        ),
        EventKind::SchedSwitch {
            prev_pid,
            prev_state,
            next_pid,
        } => (
            "sched_switch",
            vec![
                ("prev_pid", I(prev_pid.into())),
                ("prev_state", S(prev_state)),
                ("next_pid", I(next_pid.into())),
            ],
        ),
        EventKind::HrtimerStart {
            hrtimer,
            function,
            expires_ns,
            softexpires_ns,
        } => (
            "hrtimer_start",
            vec![
                ("hrtimer", U(hrtimer)),
                ("function", S(function)),
                ("expires", U(expires_ns)),
                ("softexpires", U(softexpires_ns)),
            ],
        ),
        EventKind::HrtimerExpireEntry {
            hrtimer,
            function,
            now_ns,
        } => (
            "hrtimer_expire_entry",
            vec![
                ("hrtimer", U(hrtimer)),
                ("now", U(now_ns)),
                ("function", S(function)),
            ],
        ),
        EventKind::HrtimerCancel { hrtimer } => ("hrtimer_cancel", vec![("hrtimer", U(hrtimer))]),
        EventKind::TimerStart {
            timer,
            function,
            expires,
        } => (
            "timer_start",
            vec![
                ("timer", U(timer)),
                ("function", S(function)),
                ("expires", U(expires)),
            ],
        ),
        EventKind::TimerExpireEntry {
            timer,
            function,
            now,
        } => (
            "timer_expire_entry",
            vec![
                ("timer", U(timer)),
                ("now", U(now)),
                ("function", S(function)),
            ],
        ),
        EventKind::TimerCancel { timer } => ("timer_cancel", vec![("timer", U(timer))]),
        EventKind::TickStop {
            success,
            dependency,
        } => (
            "tick_stop",
            vec![
                ("success", I(success.into())),
                ("dependency", S(dependency)),
            ],
        ),
        EventKind::IrqHandlerEntry { irq, name } => (
            "irq_handler_entry",
            vec![("irq", U(irq.into())), ("name", S(name))],
        ),
        EventKind::IpiRaise {
            target_mask,
            reason,
        } => (
            "ipi_raise",
            vec![("target_cpus", S(target_mask)), ("reason", S(reason))],
        ),
        EventKind::IpiEntry { reason } => ("ipi_entry", vec![("reason", S(reason))]),
        EventKind::IpiExit { reason } => ("ipi_exit", vec![("reason", S(reason))]),
    }
}

impl EventTable {
    fn push(&mut self, ts: u64, cpu: u32, fields: Vec<(&'static str, Val<'_>)>) {
        if self.fields.is_empty() {
            self.fields = fields
                .iter()
                .map(|(n, v)| {
                    let c = match v {
                        Val::I(_) => Column::Int(Vec::new()),
                        Val::U(_) => Column::UInt(Vec::new()),
                        Val::S(_) => Column::Str(Vec::new()),
                    };
                    (*n, c)
                })
                .collect();
        }
        self.time_ns.push(ts);
        self.cpu.push(cpu);
        for ((_, col), (_, v)) in self.fields.iter_mut().zip(fields) {
            match (col, v) {
                (Column::Int(c), Val::I(x)) => c.push(x),
                (Column::UInt(c), Val::U(x)) => c.push(x),
                (Column::Str(c), Val::S(x)) => c.push(x.to_string()),
                _ => unreachable!("an event's fields keep their types"),
            }
        }
    }
}

/// The tables of the events `trace` gives (`label` names it in errors).
pub fn collect<S: EventSource>(mut trace: S, label: &str) -> Result<Tables, InputError> {
    let mut events: BTreeMap<&'static str, EventTable> = BTreeMap::new();
    let mut n = 0usize;
    while let Some(e) = trace.next_event()? {
        n += 1;
        if n > MAX_EVENTS {
            return Err(InputError::whole(
                label,
                format!("more than {MAX_EVENTS} events to put in tables; cut the trace first"),
            ));
        }
        let (name, fields) = row(&e.kind);
        events
            .entry(name)
            .or_default()
            .push(e.timestamp_ns, e.cpu, fields);
    }
    Ok(Tables {
        format: trace.header().format,
        events,
        trace: trace.counts(),
    })
}

/// The tables of the trace at `path` (`-`: standard input), in any format the analyses read.
pub fn read(path: &Path) -> Result<Tables, InputError> {
    collect(
        crate::trace::source::open(path)?,
        &crate::trace::source::label(path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ftrace::FtraceReader;

    #[test]
    fn events_become_columns_by_field_name() {
        let text = "cpus=2\n\
            <idle>-0 [001] 1.000000: cpu_idle: state=1 cpu_id=1\n\
            sh-5 [000] 1.000002: sched_switch: prev_comm=sh prev_pid=5 prev_prio=120 \
            prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
            <idle>-0 [001] 1.000003: cpu_idle: state=4294967295 cpu_id=1\n";
        let r = FtraceReader::new(std::io::Cursor::new(text), "t").unwrap();
        let t = collect(r, "t").unwrap();
        let idle = &t.events["cpu_idle"];
        assert_eq!(idle.time_ns, vec![1_000_000_000, 1_000_003_000]);
        assert_eq!(idle.cpu, vec![1, 1]);
        assert_eq!(
            idle.fields,
            vec![
                ("state", Column::UInt(vec![1, 4_294_967_295])),
                ("cpu_id", Column::UInt(vec![1, 1])),
            ]
        );
        let sw = &t.events["sched_switch"];
        assert_eq!(sw.fields[1], ("prev_state", Column::Str(vec!["S".into()])));
        assert_eq!(sw.fields[2], ("next_pid", Column::Int(vec![0])));
        assert_eq!(t.format, FtraceFormat::TraceCmd);
    }
}
