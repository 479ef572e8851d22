//! What the CPU analyses (`idle stats`, `idle replay`) read a trace through, whatever its
//! format: ftrace text ([`FtraceReader`]), a trace.dat ([`TraceDatReader`]) or a Perfetto
//! trace ([`PerfettoReader`]), told apart by content (the trace.dat magic bytes, a first
//! Perfetto packet, a compressor's magic bytes), never by the file's name.
//!
//! [`open`] takes a path, `-` (standard input) or a pipe (a FIFO, `/dev/stdin`, `<(...)`):
//!
//! 1. A regular file's first bytes are read in place (`pread`), then the file is read from its
//!    start by the reader its content calls for.
//! 2. A pipe cannot be read twice: its first 4 KiB are read into memory, told apart the same
//!    way, then handed to the reader ahead of the rest of the pipe. Text (plain or packed) and
//!    Perfetto stream; a trace.dat is refused by name, as its per-CPU sections are read at
//!    their offsets, in turn, which only a file allows.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::error::InputError;
use crate::trace::ftrace::{Event, FtraceCounts, FtraceHeader, FtraceReader};
use crate::trace::packed_text::{self, Packing};
use crate::trace::perfetto::PerfettoReader;
use crate::trace::trace_dat::TraceDatReader;
use crate::user_file;

/// A stream of the events the analyses use, in time order per CPU.
pub trait EventSource {
    fn header(&self) -> &FtraceHeader;
    /// The next event, or `None` at the end of the trace.
    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError>;
    /// What was skipped, counted and noticed so far.
    fn counts(&self) -> FtraceCounts;
    /// Text traces: the known events outside `used` are checked up to their name only
    /// ([`FtraceReader::fields_only_of`]). Binary traces decode every record as before.
    fn fields_only_of(&mut self, _used: &[&str]) {}
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
    fn fields_only_of(&mut self, used: &[&str]) {
        FtraceReader::fields_only_of(self, used)
    }
}

/// A trace in one of the binary formats.
pub enum BinaryTrace {
    TraceDat(Box<TraceDatReader<File>>),
    Perfetto(Box<PerfettoReader<Box<dyn BufRead>>>),
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
            Box::new(BufReader::with_capacity(1 << 16, own)),
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

/// What a trace is described as where it is expected (the errors' "expected ...").
pub const WHAT: &str = "a trace (ftrace text, plain or packed, trace.dat or Perfetto)";

/// How much of a pipe is read ahead to tell its format (Perfetto's sniff reads 4 KiB).
const PIPE_HEAD_BYTES: u64 = 4096;

/// A trace of any format, opened by [`open`].
pub enum AnyTrace {
    /// Ftrace text, unpacked from `packing` where it was packed.
    Text {
        reader: Box<FtraceReader<Box<dyn BufRead>>>,
        packing: Option<Packing>,
    },
    Binary(BinaryTrace),
}

/// The name errors give a trace at `path`: `<stdin>` for `-`.
pub fn label(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.to_string_lossy().into_owned()
    }
}

/// Opens the trace at `path` (`-`: standard input) in whatever format its content says, as
/// the module doc says.
pub fn open(path: &Path) -> Result<AnyTrace, InputError> {
    let label = label(path);
    if path.as_os_str() == "-" {
        return open_stream(std::io::stdin().lock(), &label);
    }
    let file = user_file::open(path, &label, WHAT)?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return open_stream(file, &label);
    }
    if let Some(bin) = open_binary(&file, &label)? {
        return Ok(AnyTrace::Binary(bin));
    }
    let packing = packed_text::sniff(&file);
    let text: Box<dyn BufRead> = match packing {
        Some(p) => packed_text::open(file, p, &label)?,
        None => Box::new(BufReader::with_capacity(1 << 16, file)),
    };
    Ok(AnyTrace::Text {
        reader: Box::new(FtraceReader::new(text, &label)?),
        packing,
    })
}

/// Opens a trace read once, from its start: a pipe or standard input (module doc, step 2).
pub fn open_stream(mut input: impl Read + 'static, label: &str) -> Result<AnyTrace, InputError> {
    let mut head = Vec::with_capacity(PIPE_HEAD_BYTES as usize);
    (&mut input)
        .take(PIPE_HEAD_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| user_file::io_error(label, &e))?;
    if head.starts_with(crate::trace::trace_dat::MAGIC) {
        return Err(InputError::whole(
            label,
            "a trace.dat from a pipe; its per-CPU sections are read at their offsets, which \
             needs a regular file: save it to a file and name that",
        ));
    }
    let perfetto = crate::trace::perfetto::looks_like_trace(&head);
    let packing = packed_text::sniff_head(&head);
    let whole = Cursor::new(head).chain(input);
    if perfetto {
        let reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(1 << 16, whole));
        return Ok(AnyTrace::Binary(BinaryTrace::Perfetto(Box::new(
            PerfettoReader::new(reader, label),
        ))));
    }
    let text: Box<dyn BufRead> = match packing {
        Some(p) => packed_text::open(whole, p, label)?,
        None => Box::new(BufReader::with_capacity(1 << 16, whole)),
    };
    Ok(AnyTrace::Text {
        reader: Box::new(FtraceReader::new(text, label)?),
        packing,
    })
}

impl EventSource for AnyTrace {
    fn header(&self) -> &FtraceHeader {
        match self {
            AnyTrace::Text { reader, .. } => reader.header(),
            AnyTrace::Binary(b) => b.header(),
        }
    }
    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        match self {
            AnyTrace::Text { reader, .. } => reader.next_event(),
            AnyTrace::Binary(b) => b.next_event(),
        }
    }
    fn counts(&self) -> FtraceCounts {
        match self {
            AnyTrace::Text { reader, packing } => FtraceCounts {
                packed: packing.map(Packing::name),
                ..reader.counts()
            },
            AnyTrace::Binary(b) => b.counts(),
        }
    }
    fn fields_only_of(&mut self, used: &[&str]) {
        if let AnyTrace::Text { reader, .. } = self {
            reader.fields_only_of(used)
        }
    }
    fn locate(&self, e: InputError) -> InputError {
        match self {
            AnyTrace::Text { .. } => e,
            AnyTrace::Binary(b) => b.locate(e),
        }
    }
}
