//! What the CPU analyses (`idle stats`, `idle replay`) read a trace through, whatever its
//! format: ftrace text ([`FtraceReader`]) or a trace.dat ([`TraceDatReader`]), told apart by
//! content (the trace.dat magic bytes), never by the file's name.

use std::fs::File;
use std::io::BufRead;

use crate::error::InputError;
use crate::trace::ftrace::{Event, FtraceCounts, FtraceHeader, FtraceReader};
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

/// The trace.dat reader for `file` when its content is one (`None`: read it as text).
pub fn open_binary(file: &File, label: &str) -> Result<Option<TraceDatReader<File>>, InputError> {
    if !crate::trace::trace_dat::sniff(file) {
        return Ok(None);
    }
    let own = file
        .try_clone()
        .map_err(|e| crate::user_file::io_error(label, &e))?;
    TraceDatReader::new(own, label).map(Some)
}
