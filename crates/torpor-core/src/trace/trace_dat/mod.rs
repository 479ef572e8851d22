//! Streaming reader for trace-cmd's binary `trace.dat`, versions 6 and 7 (plain, or with
//! zlib- or zstd-compressed sections and event data), into the events the text reader gives.
//!
//! Written from the format's documentation (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5) as of
//! trace-cmd 3.4) and the kernel's self-description the file carries (`header_page`,
//! `header_event`, each event's `format`). Where that documentation and the files trace-cmd
//! writes differ, the files win: a v7 section header's size is 8 bytes (documented so since
//! trace-cmd 3.4; earlier pages said 4), and trace-cmd 3.0's BUFFER option has no page size
//! (told apart by the option's length).
//!
//! Steps:
//! 1. The metadata (`layout`): version, byte order, page size, compression, the ring
//!    buffer's headers, the event formats (`format`), the symbol tables (`symbols`), the
//!    options (trace clock, OFFSET, TSC2NSEC, CPU count) and where each CPU's data lies.
//! 2. Per event format torpor decodes (the text reader's events, by name), its fields are
//!    found by name (`decode`); a format that lacks one is refused when a record of that
//!    event is met. Records of other events are counted by name and skipped.
//! 3. Each CPU's data is read page by page (`ring`); the CPUs' next records are merged by
//!    timestamp with a heap (ties go to the lower CPU, as `trace-cmd report` orders them).
//!    Timestamps become nanoseconds: TSC2NSEC's multiplier and shift when the file has them,
//!    then the OFFSET option added. A counter clock (`counter`, `x86-tsc`) without TSC2NSEC is
//!    refused, as the text reader refuses it.
//! 4. Lost events (page headers that say events were lost before them) are counted and shown,
//!    as are timestamps going backwards on one CPU and trace instances not read.
//!
//! **Errors.** Bad input is one [`InputError`] without a line: `FILE: what was expected (at
//! byte N)`, N the file offset of the piece at fault (inside compressed data: the offset of
//! its compressed block). An error a consumer raises at an event (an [`Event`]'s `line` is the
//! file offset of its record here) is moved to the same form by [`EventSource::locate`].
//!
//! **Memory** is flat in the trace's length: the metadata (formats and symbol tables, each
//! bounded), per CPU a buffer of a few pages or one decompressed chunk, and a heap of one entry
//! per CPU.

mod codec;
mod decode;
pub mod format;
mod layout;
mod ring;
mod symbols;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;

use serde::Serialize;

use self::decode::{Decoder, Env};
use self::layout::{read_meta, Meta, Src};
pub use self::layout::{ReadAt, MAGIC};
use self::ring::{CpuStream, Lost, Record, Ring};
use crate::error::InputError;
use crate::time::HORIZON;
use crate::trace::ftrace::{
    known_index, Event, FtraceCounts, FtraceFormat, FtraceHeader, KNOWN, MAX_EVENT_NAMES,
    OTHER_EVENTS,
};
use crate::trace::source::EventSource;

/// Clocks whose timestamps are nanoseconds (trace-cmd prints these as seconds).
const NANOSECOND_CLOCKS: &[&str] = &[
    "local", "global", "uptime", "perf", "mono", "mono_raw", "boot", "tai",
];

/// Whether `file` starts with the trace.dat magic (read in place: its position is unchanged;
/// a pipe, which cannot be read in place, is not a trace.dat).
pub fn sniff(file: &File) -> bool {
    let mut head = [0u8; 10];
    matches!(ReadAt::read_at(file, &mut head, 0), Ok(n) if n == head.len() && head == *MAGIC)
}

/// What the file said about itself, shown with the analyses' results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceDatInfo {
    pub version: u32,
    pub big_endian: bool,
    /// The traced user space's `long` in bytes.
    pub long_bytes: u8,
    pub page_bytes: u32,
    /// `zlib`, `zstd`, or `None` for plain data.
    pub compression: Option<&'static str>,
    /// The trace clock, when the file names it.
    pub clock: Option<String>,
    pub cpus_with_data: u32,
    pub pages: u64,
    pub event_formats: u32,
    /// Symbols in the file's kallsyms (function names of timer events).
    pub symbols: u64,
    /// Pages that said events were lost without a count (`lost_events` counts the rest).
    pub lost_uncounted_pages: u64,
    /// Trace instances other than the top one (not read).
    pub instances_skipped: u32,
}

/// The next record of an event torpor decodes.
struct Next {
    stream: usize,
    /// Its index in [`KNOWN`].
    known: usize,
    format: usize,
    ts: u64,
    rec: Record,
}

/// Pulls [`Event`]s out of a trace.dat, merged across CPUs in time order.
pub struct TraceDatReader<R: ReadAt> {
    src: Src<R>,
    meta: Meta,
    header: FtraceHeader,
    /// Per format: its index in [`KNOWN`] and decoder (or why it cannot decode).
    decoders: Vec<Option<(usize, Result<Decoder, String>)>>,
    /// Event id -> format index (`u32::MAX`: none).
    by_id: Vec<u32>,
    /// Where every record's `common_type` is.
    common_type: (usize, usize),
    kernel_long: usize,
    streams: Vec<CpuStream>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// The earliest record of all, when the stream just advanced still holds it (most records
    /// follow their CPU's previous one): it skips the heap.
    front: Option<(u64, usize)>,
    /// The stream whose record was returned last, to advance on the next call.
    last: Option<usize>,
    last_ts: Vec<u64>,
    zbuf: Vec<u8>,
    scratch: [String; 2],
    lost: Lost,
    /// Bytes the streams' buffers hold.
    held: usize,
    known: [u64; KNOWN.len()],
    unknown: Vec<u64>,
    /// Records whose event id has no format.
    no_format: u64,
    counts: FtraceCounts,
}

impl<R: ReadAt> TraceDatReader<R> {
    /// Reads the metadata and each CPU's first record from `r` (a file, or bytes in memory;
    /// `label` names it in errors).
    pub fn new(r: R, label: &str) -> Result<Self, InputError> {
        let len = r
            .size()
            .map_err(|e| InputError::whole(label, format!("cannot read: {e}")))?;
        let mut src = Src {
            r,
            len,
            file: label.to_string(),
            big: false,
        };
        let meta = read_meta(&mut src)?;
        let clock_ok = meta.tsc2nsec.is_some()
            || meta
                .clock
                .as_deref()
                .is_none_or(|c| NANOSECOND_CLOCKS.contains(&c));
        if !clock_ok {
            return Err(InputError::whole(
                label,
                format!(
                    "the trace was taken with the `{}` clock, whose timestamps are not \
                     nanoseconds, and the file has no TSC2NSEC option to convert them; record \
                     with a nanosecond clock (`trace-cmd record -C mono`)",
                    meta.clock.as_deref().unwrap_or("")
                ),
            ));
        }
        let common_type = meta
            .formats
            .iter()
            .find_map(|f| f.field("common_type"))
            .filter(|f| matches!(f.size, 1 | 2 | 4))
            .map(|f| (f.offset, f.size))
            .ok_or_else(|| {
                InputError::whole(
                    label,
                    "expected a `common_type` field of 1, 2 or 4 bytes in the event formats",
                )
            })?;
        let mut by_id = Vec::new();
        let mut decoders = Vec::with_capacity(meta.formats.len());
        for (i, f) in meta.formats.iter().enumerate() {
            let id = f.id as usize;
            if id >= layout::MAX_FORMATS as usize {
                return Err(InputError::whole(
                    label,
                    format!(
                        "the format of `{}` has ID {id}; expected an event id below {}",
                        f.name,
                        layout::MAX_FORMATS
                    ),
                ));
            }
            if by_id.len() <= id {
                by_id.resize(id + 1, u32::MAX);
            }
            by_id[id] = i as u32;
            decoders.push(known_index(f.name.as_bytes()).map(|k| (k, Decoder::new(KNOWN[k], f))));
        }
        let kernel_long = meta.page.commit.1;
        let codec = if meta.cpu_compressed {
            meta.codec
        } else {
            None
        };
        let mut zbuf = Vec::new();
        let mut lost = Lost::default();
        let mut held = 0;
        let mut streams = Vec::with_capacity(meta.cpu_data.len());
        {
            let mut ring = Ring {
                src: &src,
                page_size: meta.page_size as usize,
                page: meta.page,
                record: meta.record,
                codec,
                zbuf: &mut zbuf,
                lost: &mut lost,
                held: &mut held,
            };
            for d in &meta.cpu_data {
                streams.push(CpuStream::new(*d, &mut ring)?);
            }
        }
        let header = FtraceHeader {
            format: FtraceFormat::TraceDat,
            cpus: Some(meta.cpus),
            topology: None,
            states: None,
        };
        let unknown = vec![0; meta.formats.len()];
        let mut r = TraceDatReader {
            last_ts: vec![0; streams.len()],
            src,
            header,
            decoders,
            by_id,
            common_type,
            kernel_long,
            streams,
            heap: BinaryHeap::new(),
            front: None,
            last: None,
            zbuf,
            scratch: [String::new(), String::new()],
            lost,
            held,
            known: [0; KNOWN.len()],
            unknown,
            no_format: 0,
            counts: FtraceCounts::default(),
            meta,
        };
        for i in 0..r.streams.len() {
            r.advance(i)?;
        }
        Ok(r)
    }

    /// What the file said about itself.
    pub fn info(&self) -> TraceDatInfo {
        let m = &self.meta;
        TraceDatInfo {
            version: m.version,
            big_endian: self.src.big,
            long_bytes: m.long_size,
            page_bytes: m.page_size,
            compression: m.codec.map(|c| c.name()),
            clock: m.clock.clone(),
            cpus_with_data: self.streams.len() as u32,
            pages: self.streams.iter().map(|s| s.pages).sum(),
            event_formats: m.formats.len() as u32,
            symbols: m.kallsyms.len() as u64,
            lost_uncounted_pages: self.lost.uncounted,
            instances_skipped: m.instances_skipped,
        }
    }

    /// Moves stream `i` to its next record and queues it by time.
    fn advance(&mut self, i: usize) -> Result<(), InputError> {
        let codec = if self.meta.cpu_compressed {
            self.meta.codec
        } else {
            None
        };
        let mut ring = Ring {
            src: &self.src,
            page_size: self.meta.page_size as usize,
            page: self.meta.page,
            record: self.meta.record,
            codec,
            zbuf: &mut self.zbuf,
            lost: &mut self.lost,
            held: &mut self.held,
        };
        let s = &mut self.streams[i];
        s.advance(&mut ring)?;
        if let Some(rec) = s.rec {
            let ts = self.nanoseconds(rec.ts, rec.at)?;
            if ts < self.last_ts[i] {
                self.counts.backwards_timestamps += 1;
            }
            self.last_ts[i] = ts;
            // `front`, when set, is no later than anything in the heap.
            let key = (ts, i);
            match self.front {
                Some(f) if f < key => self.heap.push(Reverse(key)),
                Some(f) => {
                    self.heap.push(Reverse(f));
                    self.front = Some(key);
                }
                None => match self.heap.peek() {
                    Some(Reverse(min)) if *min < key => self.heap.push(Reverse(key)),
                    _ => self.front = Some(key),
                },
            }
        }
        Ok(())
    }

    /// A raw timestamp in nanoseconds (TSC2NSEC, then OFFSET), within [`HORIZON`].
    fn nanoseconds(&self, raw: u64, at: u64) -> Result<u64, InputError> {
        let ns = match self.meta.tsc2nsec {
            Some((mult, shift)) => ((u128::from(raw) * u128::from(mult)) >> shift) as i128,
            None => i128::from(raw),
        } + i128::from(self.meta.ts_offset);
        if ns < 0 || ns >= i128::from(HORIZON.0) {
            return Err(self.src.err(
                at,
                format!(
                    "a record's timestamp comes to {ns} ns, outside 0 to {} ns",
                    HORIZON.0
                ),
            ));
        }
        Ok(ns as u64)
    }

    /// The next event torpor reads, in time order, or `None` at the end.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        if let Some(i) = self.last.take() {
            self.advance(i)?;
        }
        let Some(Next {
            stream: i,
            known: k,
            format,
            ts,
            rec,
        }) = self.next_known()?
        else {
            return Ok(None);
        };
        self.last = Some(i);
        let TraceDatReader {
            src,
            meta,
            decoders,
            streams,
            scratch,
            kernel_long,
            known,
            counts,
            ..
        } = self;
        let Some(Some((_, decoder))) = decoders.get(format) else {
            return Ok(None);
        };
        let decoder = decoder.as_ref().map_err(|m| src.err(rec.at, m))?;
        let env = Env {
            big: src.big,
            kernel_long: *kernel_long,
            kallsyms: &meta.kallsyms,
            printk: &meta.printk,
            cpus: meta.cpus,
        };
        let stream = &streams[i];
        let kind = decoder
            .decode(stream.data(&rec), &env, scratch)
            .map_err(|m| src.err(rec.at, format!("in a `{}` record, {m}", KNOWN[k])))?;
        known[k] += 1;
        counts.events += 1;
        Ok(Some(Event {
            cpu: stream.cpu,
            timestamp_ns: ts,
            kind,
            line: rec.at as usize,
        }))
    }

    /// Pops records in time order, counting and skipping those of events torpor does not
    /// decode, up to the next one it does.
    fn next_known(&mut self) -> Result<Option<Next>, InputError> {
        while let Some((ts, i)) = self.front.take().or_else(|| self.heap.pop().map(|r| r.0)) {
            // A queued stream stands at its record until it is advanced.
            let Some(rec) = self.streams[i].rec else {
                continue;
            };
            let data = self.streams[i].data(&rec);
            let (o, n) = self.common_type;
            let Some(id) = data.get(o..o + n) else {
                return Err(self.src.err(
                    rec.at,
                    format!(
                        "a record of CPU {} holds {} bytes, too few for its event id",
                        self.streams[i].cpu,
                        data.len()
                    ),
                ));
            };
            let format = self
                .by_id
                .get(layout::read_uint(id, self.src.big) as usize)
                .copied()
                .unwrap_or(u32::MAX) as usize;
            match self.decoders.get(format) {
                Some(Some((k, _))) => {
                    return Ok(Some(Next {
                        stream: i,
                        known: *k,
                        format,
                        ts,
                        rec,
                    }))
                }
                Some(None) => self.unknown[format] += 1,
                None => self.no_format += 1,
            }
            self.advance(i)?;
        }
        Ok(None)
    }

    pub fn header(&self) -> &FtraceHeader {
        &self.header
    }

    /// The counts so far, with the file's own description.
    pub fn counts(&self) -> FtraceCounts {
        let mut c = self.counts.clone();
        c.lost_markers = self.lost.pages;
        c.lost_events = self.lost.events;
        c.known_events = KNOWN
            .iter()
            .zip(self.known)
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (*name, n))
            .collect();
        let mut unknown: BTreeMap<String, u64> = BTreeMap::new();
        for (f, &n) in self.meta.formats.iter().zip(&self.unknown) {
            if n == 0 {
                continue;
            }
            if unknown.len() < MAX_EVENT_NAMES || unknown.contains_key(&f.name) {
                *unknown.entry(f.name.clone()).or_insert(0) += n;
            } else {
                *unknown.entry(OTHER_EVENTS.to_string()).or_insert(0) += n;
            }
        }
        if self.no_format > 0 {
            unknown.insert("(event id without a format)".to_string(), self.no_format);
        }
        c.unknown_events = unknown;
        c.trace_dat = Some(self.info());
        c
    }
}

impl<R: ReadAt> EventSource for TraceDatReader<R> {
    fn header(&self) -> &FtraceHeader {
        TraceDatReader::header(self)
    }

    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        TraceDatReader::next_event(self)
    }

    fn counts(&self) -> FtraceCounts {
        TraceDatReader::counts(self)
    }

    /// A consumer's error at an event (its `line`: the record's file offset) as a byte offset.
    fn locate(&self, e: InputError) -> InputError {
        match e.line {
            Some(at) if e.file == self.src.file => {
                InputError::whole(&e.file, format!("{} (at byte {at})", e.message))
            }
            _ => e,
        }
    }
}

#[cfg(test)]
mod tests;
