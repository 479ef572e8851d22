//! Streaming reader for Perfetto's protobuf traces (`.perfetto-trace`, `.pftrace`), into the
//! events the ftrace text and trace.dat readers give, with nothing downloaded: a small
//! protobuf decoder of its own ([`wire`]) for the few messages torpor needs.
//!
//! Written from Perfetto's schema (`protos/perfetto/trace/trace.proto`, `trace_packet.proto`,
//! `ftrace/*.proto`, `interned_data/interned_data.proto`; the field numbers are those of
//! Perfetto v50+, all of them stable since they were added). Steps:
//! 1. The file is a `Trace`: a series of `packet` fields, read one at a time (`stream`);
//!    a `compressed_packets` (zlib) or `zstd_compressed_packets` packet is inflated as a
//!    stream and its packets read in place.
//! 2. Per packet: a packet sequence that clears its incremental state drops its interned
//!    kernel symbols, then its `interned_data.kernel_symbols` are added (timer functions,
//!    when the trace was taken with `symbolize_ksyms`); `previous_packet_dropped` and
//!    `ftrace_stats` (the kernel's overruns at the start and the end) are counted.
//! 3. An `ftrace_events` bundle is one CPU's events (`bundle`), decoded and queued per CPU.
//! 4. The CPUs' queues are merged by timestamp (ties: the lower CPU first, as for trace.dat).
//!    Bundles of different CPUs arrive interleaved, each CPU's in time order, so an event is
//!    handed out once every CPU that has had events either has a queued one or has already
//!    passed its time; a CPU that falls silent (deep idle, offline) holds the merge back until
//!    [`MAX_QUEUED`] events wait, then the earliest goes anyway, and events that arrive
//!    later than one already handed out are counted (`late_events`).
//!
//! **Errors.** Bad input is one [`InputError`] without a line: `FILE: what was expected (at
//! byte N)`, N the file offset of the packet at fault (inside compressed packets: the
//! compressed packet's, with the offset in its decompressed data). An error a consumer raises
//! at an event (an [`Event`]'s `line` is its packet's offset) is moved to the same form by
//! [`EventSource::locate`].
//!
//! **Memory** is flat in the trace's length: one packet (at most 64 MiB), the decompressor's
//! window, at most [`MAX_QUEUED`] queued events, and the tables of names and interned symbols
//! (each bounded).

mod bundle;
mod event;
mod stream;
pub mod wire;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::io::BufRead;

use serde::Serialize;

use self::bundle::{event_name, Bundles};
use self::event::{Pending, Sym};
use self::stream::{Packets, Place};
use self::wire::{Fields, Value};
use crate::error::InputError;
use crate::time::HORIZON;
use crate::trace::ftrace::{Event, FtraceCounts, FtraceFormat, FtraceHeader, KNOWN};
use crate::trace::source::EventSource;

pub use self::stream::{MAX_INFLATED_BYTES, MAX_PACKET_BYTES};

/// The most events queued for the merge across CPUs (about 40 MiB).
pub const MAX_QUEUED: usize = 1 << 20;

/// The most interned kernel symbols held over all packet sequences.
pub const MAX_SYMBOLS: usize = 1 << 20;

/// Whether `file` holds a Perfetto trace, from its first bytes (read in place: its position
/// is unchanged; a pipe, which cannot be read in place, is not one).
pub fn sniff(file: &std::fs::File) -> bool {
    let mut head = [0u8; 4096];
    match crate::trace::trace_dat::ReadAt::read_at(file, &mut head, 0) {
        Ok(n) => looks_like_trace(&head[..n]),
        Err(_) => false,
    }
}

/// Whether `head`, a file's first bytes, starts as a `Trace`: a `packet` field (key 0x0a)
/// whose length fits the file, and whose bytes, as far as `head` holds them, are well-formed
/// fields. Text never starts so: a line feed followed by the rest of a text line is not a
/// series of valid fields (checked below by refusing packets of printable text alone).
pub fn looks_like_trace(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else {
        return false;
    };
    let Ok((len, n)) = wire::varint(rest) else {
        return false;
    };
    let body = &rest[n..];
    let seen = &body[..body.len().min(len as usize)];
    if len == 0 || seen.is_empty() || len > MAX_PACKET_BYTES {
        return false;
    }
    if seen
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        return false;
    }
    let mut fields = Fields::new(seen);
    let complete = seen.len() as u64 == len;
    loop {
        match fields.next() {
            None => return true,
            Some(Ok(_)) => {}
            // A field cut off by the end of `head`, not by the packet, is fine.
            Some(Err(_)) => return !complete && fields.offset() > 0,
        }
    }
}

/// What the file said about itself, shown with the analyses' results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PerfettoInfo {
    pub packets: u64,
    /// Packets holding compressed packets (zlib or zstd).
    pub compressed_packets: u64,
    pub ftrace_bundles: u64,
    pub cpus_with_data: u32,
    /// The ftrace clock (`boot` unless a bundle names another).
    pub clock: &'static str,
    /// Bundles that say events were lost before them.
    pub lost_bundles: u64,
    /// Packets that say the packet before them on their sequence was dropped.
    pub dropped_packets: u64,
    /// Events the kernel overwrote or dropped, from `ftrace_stats` at the start and the end.
    pub kernel_overruns: Option<u64>,
    /// Compact `sched_switch`es skipped: the task switched out was not known yet.
    pub compact_switches_skipped: u64,
    /// Events that arrived after a later event of another CPU was handed out (the merge's
    /// queue was full).
    pub late_events: u64,
    /// Timer functions without an interned kernel symbol, shown as their number.
    pub unresolved_functions: u64,
    /// Interned kernel symbols beyond [`MAX_SYMBOLS`], dropped.
    pub symbols_dropped: u64,
    /// Texts cut to 512 bytes, and texts past 65,536 distinct ones.
    pub names_cut: u64,
    pub names_overflow: u64,
}

/// Pulls [`Event`]s out of a Perfetto trace, merged across CPUs in time order.
pub struct PerfettoReader<R> {
    packets: Packets<R>,
    bundles: Bundles,
    header: FtraceHeader,
    /// Per packet sequence: interned kernel symbols by id.
    symbols: HashMap<u32, HashMap<u64, Sym>>,
    symbols_held: usize,
    queues: Vec<VecDeque<Pending>>,
    /// CPUs that hold the merge back when their queue is empty: those that have had events,
    /// and those the trace's first `ftrace_stats` names.
    active: Vec<u32>,
    has_data: Vec<bool>,
    /// Per CPU: the latest time queued.
    known_until: Vec<u64>,
    /// The queues' first events by time.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// The earliest `known_until` of an active CPU with an empty queue (`None`: recompute).
    floor: Option<u64>,
    queued: usize,
    end: bool,
    decoded: Vec<Pending>,
    /// The packet being read (taken out while it is).
    packet: Vec<u8>,
    last_out: u64,
    /// Kernel overruns summed at the start and the end of the trace.
    overruns: [Option<u64>; 2],
    known: [u64; KNOWN.len()],
    counts: FtraceCounts,
    info: PerfettoInfo,
}

impl<R: BufRead> PerfettoReader<R> {
    /// A reader of the trace in `r` (`label` names it in errors). Nothing is read yet.
    pub fn new(r: R, label: &str) -> PerfettoReader<R> {
        PerfettoReader {
            packets: Packets::new(r, label),
            bundles: Bundles::default(),
            header: FtraceHeader {
                format: FtraceFormat::Perfetto,
                cpus: None,
                topology: None,
                states: None,
            },
            symbols: HashMap::new(),
            symbols_held: 0,
            queues: Vec::new(),
            active: Vec::new(),
            has_data: Vec::new(),
            known_until: Vec::new(),
            heap: BinaryHeap::new(),
            floor: None,
            queued: 0,
            end: false,
            decoded: Vec::new(),
            packet: Vec::new(),
            last_out: 0,
            overruns: [None, None],
            known: [0; KNOWN.len()],
            counts: FtraceCounts::default(),
            info: PerfettoInfo {
                clock: "boot",
                ..PerfettoInfo::default()
            },
        }
    }

    pub fn header(&self) -> &FtraceHeader {
        &self.header
    }

    /// The next event in time order, or `None` at the end of the trace.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        loop {
            if let Some(cpu) = self.ready() {
                let p = self.pop(cpu);
                let k = p.kind.known();
                self.known[k] += 1;
                self.counts.events += 1;
                return Ok(Some(Event {
                    cpu,
                    timestamp_ns: p.ts,
                    kind: p.kind.with(&self.bundles.names),
                    line: p.at as usize,
                }));
            }
            if self.end {
                return Ok(None);
            }
            self.read_packet()?;
        }
    }

    /// The CPU whose queued event goes next, if one may go now.
    fn ready(&mut self) -> Option<u32> {
        let &Reverse((ts, cpu)) = self.heap.peek()?;
        if self.end || self.queued >= MAX_QUEUED {
            return Some(cpu);
        }
        let floor = match self.floor {
            Some(f) => f,
            None => {
                let f = self
                    .active
                    .iter()
                    .filter(|&&c| self.queues[c as usize].is_empty())
                    .map(|&c| self.known_until[c as usize])
                    .min()
                    .unwrap_or(u64::MAX);
                self.floor = Some(f);
                f
            }
        };
        (ts <= floor).then_some(cpu)
    }

    fn pop(&mut self, cpu: u32) -> Pending {
        self.heap.pop();
        let q = &mut self.queues[cpu as usize];
        let p = q.pop_front().expect("a queued CPU has an event");
        self.queued -= 1;
        match q.front() {
            Some(next) => self.heap.push(Reverse((next.ts, cpu))),
            None => {
                let until = self.known_until[cpu as usize];
                self.floor = self.floor.map(|f| f.min(until));
            }
        }
        self.last_out = self.last_out.max(p.ts);
        p
    }

    /// Makes `cpu` (below [`crate::trace::ftrace::MAX_CPUS`]) one the merge waits for.
    fn activate(&mut self, cpu: u32) {
        let c = cpu as usize;
        if self.queues.len() <= c {
            self.queues.resize_with(c + 1, VecDeque::new);
            self.known_until.resize(c + 1, 0);
            self.has_data.resize(c + 1, false);
        }
        if !self.active.contains(&cpu) {
            self.active.push(cpu);
            self.floor = None;
        }
    }

    /// Queues the events just decoded for `cpu`.
    fn queue(&mut self, cpu: u32, place: Place) -> Result<(), InputError> {
        if self.decoded.is_empty() {
            return Ok(());
        }
        let c = cpu as usize;
        self.activate(cpu);
        let fresh = !self.has_data[c];
        if fresh {
            self.has_data[c] = true;
            self.info.cpus_with_data += 1;
        }
        let was_empty = self.queues[c].is_empty();
        for p in self.decoded.drain(..) {
            if p.ts >= HORIZON.0 {
                return Err(self.packets.err(
                    place,
                    format!(
                        "an event's timestamp is {} ns; expected below {} ns",
                        p.ts, HORIZON.0
                    ),
                ));
            }
            if !fresh && p.ts < self.known_until[c] {
                self.counts.backwards_timestamps += 1;
            }
            if p.ts < self.last_out {
                self.info.late_events += 1;
            }
            self.known_until[c] = self.known_until[c].max(p.ts);
            self.queues[c].push_back(p);
            self.queued += 1;
        }
        if was_empty {
            self.heap.push(Reverse((self.queues[c][0].ts, cpu)));
            self.floor = None;
        }
        Ok(())
    }

    /// Reads one packet and queues its events; at the end of the file, marks the end.
    fn read_packet(&mut self) -> Result<(), InputError> {
        let mut packet = std::mem::take(&mut self.packet);
        let read = self.packets.next_packet(&mut packet);
        let r = match read {
            Ok(Some(place)) => self.packet_fields(&packet, place),
            Ok(None) => {
                self.end = true;
                Ok(())
            }
            Err(e) => Err(e),
        };
        self.packet = packet;
        r
    }

    /// Reads one packet's fields and queues its events.
    fn packet_fields(&mut self, bytes: &[u8], place: Place) -> Result<(), InputError> {
        self.info.packets += 1;
        let mut bundle: Option<&[u8]> = None;
        let mut interned: Option<&[u8]> = None;
        let mut compressed: Option<(&[u8], &'static str)> = None;
        let mut seq = 0u32;
        let mut cleared = false;
        let mut stats: Option<&[u8]> = None;
        let mut fault: Option<String> = None;
        for f in Fields::new(bytes) {
            let (n, v) = match f {
                Ok(f) => f,
                Err(m) => {
                    fault = Some(format!("in a trace packet, {m}"));
                    break;
                }
            };
            match (n, v) {
                (1, Value::Bytes(b)) => bundle = Some(b),
                (10, v) => seq = v.int().unwrap_or(0) as u32,
                (12, Value::Bytes(b)) => interned = Some(b),
                (13, v) => cleared |= v.int().is_some_and(|f| f & 1 != 0),
                (41, v) => cleared |= v.int().is_some_and(|f| f != 0),
                (42, v) if v.int().is_some_and(|f| f != 0) => self.info.dropped_packets += 1,
                (34, Value::Bytes(b)) => stats = Some(b),
                (50, Value::Bytes(b)) => compressed = Some((b, "zlib")),
                (133, Value::Bytes(b)) => compressed = Some((b, "zstd")),
                _ => {}
            }
        }
        if let Some(m) = fault {
            return Err(self.packets.err(place, m));
        }
        if cleared {
            if let Some(old) = self.symbols.remove(&seq) {
                self.symbols_held -= old.len();
            }
        }
        let mut result = Ok(None);
        if let Some(b) = interned {
            result = self.intern_symbols(seq, b).map(|_| None);
        }
        if let (Ok(_), Some(b)) = (&result, stats) {
            result = self.ftrace_stats(b).map(|_| None);
        }
        if let (Ok(_), Some(b)) = (&result, bundle) {
            self.info.ftrace_bundles += 1;
            self.decoded.clear();
            result = self
                .bundles
                .decode(b, place.at, self.symbols.get(&seq), &mut self.decoded)
                .map(Some);
        }
        let compressed = compressed.map(|(b, codec)| (b.to_vec(), codec));
        let head = result.map_err(|m| self.packets.err(place, m))?;
        if let Some(head) = head {
            if head.lost {
                self.info.lost_bundles += 1;
            }
            if let Some(c) = head.clock.filter(|&c| c != 0) {
                self.info.clock = match c {
                    2 => "global",
                    3 => "local",
                    4 => "mono_raw",
                    _ => "unknown",
                };
            }
            self.queue(head.cpu, place)?;
        }
        if let Some((data, codec)) = compressed {
            self.info.compressed_packets += 1;
            self.packets.open_compressed(data, codec, place)?;
        }
        Ok(())
    }

    /// `interned_data.kernel_symbols` (field 26): `InternedString { iid = 1; str = 2; }`.
    fn intern_symbols(&mut self, seq: u32, interned: &[u8]) -> Result<(), String> {
        for f in Fields::new(interned) {
            let Value::Bytes(sym) = (match f? {
                (26, v) => v,
                _ => continue,
            }) else {
                return Err("a kernel symbol is a number; expected a message".to_string());
            };
            let (mut iid, mut name): (u64, &[u8]) = (0, b"");
            for g in Fields::new(sym) {
                match g? {
                    (1, v) => iid = v.int().unwrap_or(0),
                    (2, Value::Bytes(b)) => name = b,
                    _ => {}
                }
            }
            if self.symbols_held >= MAX_SYMBOLS {
                self.info.symbols_dropped += 1;
                continue;
            }
            let s = self.bundles.names.intern(name);
            if self
                .symbols
                .entry(seq)
                .or_default()
                .insert(iid, s)
                .is_none()
            {
                self.symbols_held += 1;
            }
        }
        Ok(())
    }

    /// `ftrace_stats`: its phase (1: start, 2: end) and per CPU (`cpu`, 1) `overrun` (3) and
    /// `dropped_events` (8), summed. The start's CPUs are the ones the merge waits for.
    fn ftrace_stats(&mut self, stats: &[u8]) -> Result<(), String> {
        let mut phase = 0;
        let mut lost = 0u64;
        let mut cpus = Vec::new();
        for f in Fields::new(stats) {
            match f? {
                (1, v) => phase = v.int().unwrap_or(0),
                (2, Value::Bytes(cpu)) => {
                    for g in Fields::new(cpu) {
                        match g? {
                            (1, v) => cpus.push(v.int().unwrap_or(0)),
                            (3 | 8, v) => lost = lost.saturating_add(v.int().unwrap_or(0)),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if phase == 1 {
            for c in cpus {
                let c = u32::try_from(c)
                    .ok()
                    .filter(|&c| c < crate::trace::ftrace::MAX_CPUS)
                    .ok_or_else(|| format!("`ftrace_stats` names CPU {c}; expected below 8192"))?;
                self.activate(c);
            }
        }
        if let Some(slot) = match phase {
            1 => Some(0),
            2 => Some(1),
            _ => None,
        } {
            self.overruns[slot] = Some(lost);
        }
        Ok(())
    }

    /// What the file said about itself so far.
    pub fn info(&self) -> PerfettoInfo {
        let mut i = self.info.clone();
        i.compact_switches_skipped = self.bundles.compact_without_prev;
        i.unresolved_functions = self.bundles.unresolved_functions;
        i.names_cut = self.bundles.names.cut;
        i.names_overflow = self.bundles.names.overflow;
        i.kernel_overruns = match self.overruns {
            [Some(start), Some(end)] => Some(end.saturating_sub(start)),
            [None, Some(end)] => Some(end),
            _ => None,
        };
        i
    }

    /// The counts so far, with the file's own description.
    pub fn counts(&self) -> FtraceCounts {
        let mut c = self.counts.clone();
        let info = self.info();
        c.lost_markers = info.lost_bundles;
        c.lost_events = info.kernel_overruns.unwrap_or(0);
        c.known_events = KNOWN
            .iter()
            .zip(self.known)
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (*name, n))
            .collect();
        let mut unknown: BTreeMap<String, u64> = self.bundles.skipped_generic.clone();
        for (&number, &n) in &self.bundles.skipped {
            *unknown.entry(event_name(number)).or_insert(0) += n;
        }
        c.unknown_events = unknown;
        c.perfetto = Some(info);
        c
    }
}

impl<R: BufRead> EventSource for PerfettoReader<R> {
    fn header(&self) -> &FtraceHeader {
        PerfettoReader::header(self)
    }

    fn next_event(&mut self) -> Result<Option<Event<'_>>, InputError> {
        PerfettoReader::next_event(self)
    }

    fn counts(&self) -> FtraceCounts {
        PerfettoReader::counts(self)
    }

    /// A consumer's error at an event (its `line`: its packet's file offset) as a byte offset.
    fn locate(&self, e: InputError) -> InputError {
        match e.line {
            Some(at) if e.file == self.packets.file() => {
                InputError::whole(&e.file, format!("{} (at byte {at})", e.message))
            }
            _ => e,
        }
    }
}

#[cfg(test)]
mod tests;
