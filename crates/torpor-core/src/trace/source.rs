//! What the CPU analyses (`idle stats`, `idle replay`) read a trace through, whatever its
//! format: ftrace text ([`FtraceReader`]), a trace.dat ([`TraceDatReader`]) or a Perfetto
//! trace ([`PerfettoReader`]), told apart by content (the trace.dat magic bytes, a first
//! Perfetto packet), never by the file's name.

use std::fs::File;
use std::io::{BufRead, BufReader};

use crate::error::InputError;
use crate::trace::ftrace::{Event, FtraceCounts, FtraceHeader, FtraceReader};
use crate::trace::perfetto::PerfettoReader;
use crate::trace::trace_dat::TraceDatReader;

/// A stream of the events the analyses use, in time order per CPU.
pub trait EventSource {
    fn header(&self) -> &FtraceHeader;
    /// The next event, or `None` at the end of the trace.
    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError>;
    /// What was skipped, counted and noticed so far.
    fn counts(&self) -> FtraceCounts;
    /// An error a consumer raised at an event's `line`, as the user should read it (a
    /// trace.dat has byte offsets, not lines).
    fn locate(&self, e: InputError) -> InputError {
        e
    }
}

impl<R: BufRead> EventSource for FtraceReader<R> {
    fn header(&self) -> &FtraceHeader {
        FtraceReader::header(self)
    }
    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        FtraceReader::next_event(self)
    }
    fn counts(&self) -> FtraceCounts {
        FtraceReader::counts(self)
    }
}

/// A trace in one of the binary formats.
pub enum BinaryTrace {
    TraceDat(Box<TraceDatReader<File>>),
    Perfetto(Box<PerfettoReader<BufReader<File>>>),
}

/// The binary reader for `file` when its content is a trace.dat or a Perfetto trace (`None`:
/// read it as text).
pub fn open_binary(file: &File, label: &str) -> Result<Option<BinaryTrace>, InputError> {
    let dat = crate::trace::trace_dat::sniff(file);
    if !dat && !crate::trace::perfetto::sniff(file) {
        return Ok(None);
    }
    let own = file
        .try_clone()
        .map_err(|e| crate::user_file::io_error(label, &e))?;
    Ok(Some(if dat {
        BinaryTrace::TraceDat(Box::new(TraceDatReader::new(own, label)?))
    } else {
        BinaryTrace::Perfetto(Box::new(PerfettoReader::new(
            BufReader::with_capacity(1 << 16, own),
            label,
        )))
    }))
}

impl EventSource for BinaryTrace {
    fn header(&self) -> &FtraceHeader {
        match self {
            BinaryTrace::TraceDat(r) => r.header(),
            BinaryTrace::Perfetto(r) => r.header(),
        }
    }
    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        match self {
            BinaryTrace::TraceDat(r) => r.next_event(),
            BinaryTrace::Perfetto(r) => r.next_event(),
        }
    }
    fn counts(&self) -> FtraceCounts {
        match self {
            BinaryTrace::TraceDat(r) => r.counts(),
            BinaryTrace::Perfetto(r) => r.counts(),
        }
    }
    fn locate(&self, e: InputError) -> InputError {
        match self {
            BinaryTrace::TraceDat(r) => EventSource::locate(r.as_ref(), e),
            BinaryTrace::Perfetto(r) => EventSource::locate(r.as_ref(), e),
        }
    }
}
