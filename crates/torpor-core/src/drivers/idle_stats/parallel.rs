//! `torpor idle stats` on a regular file: the trace's event lines scanned in blocks on every
//! core, the report fed in trace order.
//!
//! The streaming reader ([`FtraceReader`]) reads one line at a time on one core; on a 100 MB
//! trace that is most of the command's time. Here the header is read by the streaming reader,
//! then the rest of the file is cut into blocks of [`BLOCK_BYTES`]; a block holds the lines that
//! start in it (the last one may run past its end). Workers scan blocks in parallel with the
//! same line checks as the streaming reader
//! ([`classify_line`](crate::trace::ftrace::classify_line), [`parse_kind`] for the
//! `cpu_idle` and `cpu_frequency` events the report reads; the other events are checked up to
//! their name, as the streaming reader does for the report), keep only those two events and
//! the counts, and the calling thread merges the blocks in file order:
//! the report sees the same events in the same order, so its figures are the streaming
//! reader's. What a block cannot know alone is stitched at the merge: line numbers (each block
//! counts its lines), timestamps going backwards across a block start (each block keeps each
//! CPU's first timestamp), and the order in which unknown event names were first met (which
//! decides which names the [`MAX_EVENT_NAMES`] cap keeps).
//!
//! Anything the streaming reader would report as an error or treat as the trace's cut-short
//! end hands the whole file back to it ([`run`] returns `None`): the error line then comes
//! from the one reader that defines it. So does a block with more than [`MAX_EVENT_NAMES`]
//! distinct unknown names (which ones the cap would keep depends on earlier blocks).
//!
//! The file is mapped ([`Mapped`]) and its blocks scanned in place, which spares the copy a
//! read makes (a tenth of the scan's time); a file that cannot be mapped goes to the streaming
//! reader. Memory is constant: a block's pages are unmapped once it is scanned, and at most
//! [`AHEAD_PER_WORKER`] blocks per worker are scanned ahead of the one being merged.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use super::{Analysis, IdleStats, StatsPlatform};
use crate::error::InputError;
use crate::trace::ftrace::{
    classify_any_layout, event_name_end, find_byte, kernel_layout, known_index, parse_kind,
    parse_u64, skip_blanks, trim_end, EventKind, FtraceCounts, FtraceReader, LineClass,
    CPUIDLE_STATE_MAX, CPU_IDLE_EXIT, KNOWN, MAX_CPUS, MAX_EVENT_NAMES, OTHER_EVENTS,
};
use crate::user_file::MAX_LINE_BYTES;

/// The block size: large enough that the line running past a block's end (at most
/// [`MAX_LINE_BYTES`]) and the per-block bookkeeping cost little, small enough that the
/// blocks in flight stay a few MiB.
pub(super) const BLOCK_BYTES: usize = 1 << 20;

/// How far around a page the kernel may map other pages already in the page cache when the
/// page is first read, which [`Mapped::release`] must cover: its `fault_around_bytes` (64 KiB
/// by default), or a whole 2 MiB folio mapped at once (a PMD), which a file written in large
/// pieces may sit in the page cache as. Released by smaller ranges, such a folio stays partly
/// mapped until the neighbouring blocks are released too, and the peak resident memory then
/// grew with the file (docs/idle-stats.md, Speed).
const FAULT_AROUND: usize = 2 << 20;

/// Blocks a worker may scan ahead of the block being merged.
const AHEAD_PER_WORKER: usize = 2;

/// One event the report reads: timestamp, `cpu_id`, what happened.
type Kept = (u64, u32, Change);

#[derive(Clone, Copy)]
enum Change {
    /// `cpu_idle`: the state ([`CPU_IDLE_EXIT`] for an exit).
    Idle(u32),
    /// `cpu_frequency`: the new frequency in kHz.
    Frequency(u32),
}

/// What one block held.
#[derive(Default)]
struct Scanned {
    kept: Vec<Kept>,
    /// Lines that start in the block.
    lines: usize,
    /// Known events by their index in [`KNOWN`].
    known: [u64; KNOWN.len()],
    /// Unknown event names in the order they were first met in the block, with their counts.
    unknown: Vec<(Box<str>, u64)>,
    /// Each unknown name's index in `unknown`.
    unknown_at: HashMap<Box<str>, usize>,
    /// Per CPU column, in the order first met: its first timestamp and that line (0-based in
    /// the block).
    first: Vec<(u32, u64, usize)>,
    /// Per CPU column: its last timestamp in the block.
    last: Vec<Option<u64>>,
    /// Timestamps going backwards within the block, and the first such line (0-based).
    backwards: u64,
    first_backwards: Option<usize>,
    /// The markers (`LOST`, `buffer started`, `is empty`).
    markers: FtraceCounts,
}

/// What the scan of one block needs to know of the trace.
#[derive(Clone, Copy)]
struct Limits {
    /// The header's CPU count, if any.
    cpus: Option<u32>,
    /// The CPUs the report's layout has (`cpu_id` must be below), if it has one.
    layout_cpus: Option<usize>,
}

/// The report of the trace in `file` (already opened; `label` names it), or `None` when the
/// file is not a regular file or the scan hands it back to the streaming reader (the module
/// doc says when). Errors are the header's, read by the streaming reader.
pub(super) fn run(
    file: &File,
    label: &str,
    platform: Option<&StatsPlatform>,
    platform_label: Option<&str>,
    block_bytes: usize,
) -> Result<Option<IdleStats>, InputError> {
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    let header = FtraceReader::new(BufReader::with_capacity(1 << 16, file), label)?;
    let mut analysis = Analysis::new(header.header(), label, platform, platform_label)?;
    let (body, first_line) = header.body_start();
    let limits = Limits {
        cpus: header.header().cpus,
        layout_cpus: analysis.layout.as_ref().map(|_| analysis.cpus.len()),
    };
    let body = body as usize;
    let len = len as usize;
    let blocks = (len.saturating_sub(body)).div_ceil(block_bytes);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, blocks.max(1));
    let ahead = workers * AHEAD_PER_WORKER;
    // A file that cannot be mapped (an empty one, some special file systems) is read by the
    // streaming reader.
    let Some(mapped) = Mapped::new(file, len) else {
        return Ok(None);
    };
    let bytes = mapped.bytes();

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let merged = (Mutex::new(0usize), Condvar::new());
    let mut merge = Merge::new(first_line);
    let complete = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Option<Scanned>)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop, merged, mapped) = (&next, &stop, &merged, &mapped);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= blocks || stop.load(Ordering::Relaxed) {
                    break;
                }
                {
                    let (lock, cv) = merged;
                    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                    while k >= *done + ahead && !stop.load(Ordering::Relaxed) {
                        done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                    }
                }
                let start = body + k * block_bytes;
                let end = (start + block_bytes).min(len);
                let scanned = scan_block(bytes, body, start, end, limits);
                mapped.release(start, end);
                if tx.send((k, scanned)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, Option<Scanned>> = BTreeMap::new();
        let mut k = 0;
        let mut complete = true;
        'merge: for (i, scanned) in rx {
            waiting.insert(i, scanned);
            while let Some(scanned) = waiting.remove(&k) {
                let Some(block) = scanned else {
                    complete = false;
                    break 'merge;
                };
                merge.block(&block, &mut analysis);
                k += 1;
                let (lock, cv) = &merged;
                *lock.lock().unwrap_or_else(|e| e.into_inner()) = k;
                cv.notify_all();
            }
        }
        if !complete {
            stop.store(true, Ordering::Relaxed);
            merged.1.notify_all();
        }
        complete
    });
    if !complete {
        return Ok(None);
    }
    Ok(Some(analysis.finish(merge.counts())))
}

/// The counts of the blocks merged so far, as the streaming reader would have them.
struct Merge {
    /// The line number of the next block's first line.
    line: usize,
    counts: FtraceCounts,
    known: [u64; KNOWN.len()],
    unknown: HashMap<Box<str>, u64>,
    last: Vec<Option<u64>>,
}

impl Merge {
    fn new(first_line: usize) -> Merge {
        Merge {
            line: first_line,
            counts: FtraceCounts::default(),
            known: [0; KNOWN.len()],
            unknown: HashMap::new(),
            last: Vec::new(),
        }
    }

    fn block(&mut self, b: &Scanned, analysis: &mut Analysis) {
        // A CPU's first timestamp in the block against its last one before the block.
        let mut first_backwards = b.first_backwards;
        for &(cpu, ts, line) in &b.first {
            if self
                .last
                .get(cpu as usize)
                .copied()
                .flatten()
                .is_some_and(|prev| ts < prev)
            {
                self.counts.backwards_timestamps += 1;
                first_backwards = Some(first_backwards.map_or(line, |l| l.min(line)));
            }
        }
        self.counts.backwards_timestamps += b.backwards;
        if self.counts.first_backwards_line.is_none() {
            self.counts.first_backwards_line = first_backwards.map(|l| self.line + l);
        }
        if self.last.len() < b.last.len() {
            self.last.resize(b.last.len(), None);
        }
        for (slot, ts) in self.last.iter_mut().zip(&b.last) {
            if ts.is_some() {
                *slot = *ts;
            }
        }
        for (total, n) in self.known.iter_mut().zip(b.known) {
            *total += n;
        }
        self.counts.events += b.known.iter().sum::<u64>();
        let m = &b.markers;
        self.counts.lost_markers += m.lost_markers;
        self.counts.lost_events += m.lost_events;
        self.counts.buffer_started_markers += m.buffer_started_markers;
        self.counts.empty_cpu_notes += m.empty_cpu_notes;
        // Names in the order first met: the first MAX_EVENT_NAMES names of the trace keep
        // their own count, as in the streaming reader.
        for (name, n) in &b.unknown {
            if let Some(total) = self.unknown.get_mut(name) {
                *total += n;
            } else if self.unknown.len() < MAX_EVENT_NAMES {
                self.unknown.insert(name.clone(), *n);
            } else {
                *self.unknown.entry(OTHER_EVENTS.into()).or_insert(0) += n;
            }
        }
        for &(ts, cpu_id, change) in &b.kept {
            match change {
                Change::Idle(state) => {
                    let state = (state != CPU_IDLE_EXIT).then_some(state);
                    analysis.cpu_idle(ts, state, cpu_id);
                }
                Change::Frequency(khz) => analysis.cpu_frequency(ts, khz, cpu_id),
            }
        }
        self.line += b.lines;
    }

    fn counts(self) -> FtraceCounts {
        let mut c = self.counts;
        c.unknown_events = self
            .unknown
            .into_iter()
            .map(|(k, v)| (k.into_string(), v))
            .collect();
        c.known_events = KNOWN
            .iter()
            .zip(self.known)
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (*name, n))
            .collect();
        c
    }
}

/// The file's bytes, mapped read-only: the blocks are scanned in place, without the copy a
/// read makes. The file must not shrink while mapped (a read of a page past its new end
/// stops the process with SIGBUS, as in every program that maps its input); appending is fine.
struct Mapped {
    at: *const u8,
    len: usize,
    /// The page size (at most [`FAULT_AROUND`]).
    page: usize,
}

// The mapping is read-only and lives until `run` returns, after every worker.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// `None` where the file cannot be mapped (it is then read by the streaming reader).
    fn new(file: &File, len: usize) -> Option<Mapped> {
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&p| p > 0 && FAULT_AROUND.is_multiple_of(p))?;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh read-only private mapping of `len` bytes of an open regular file.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return None;
        }
        Some(Mapped {
            at: at.cast(),
            len,
            page,
        })
    }

    /// Unmaps the pages a block's scan may have mapped, once it is done: those of its window
    /// (`[start, end)` and the line running past `end`), widened to [`FAULT_AROUND`] on both
    /// sides. The pages stay in the page cache, and the process's resident memory stays a few
    /// blocks whatever the file's size. A page unmapped while the next block's scan reads it
    /// is mapped again on its own.
    fn release(&self, start: usize, end: usize) {
        let from = start.saturating_sub(1) / FAULT_AROUND * FAULT_AROUND;
        let to = (end + MAX_LINE_BYTES)
            .next_multiple_of(FAULT_AROUND)
            .min(self.len.next_multiple_of(self.page));
        // SAFETY: whole pages inside the mapping (`FAULT_AROUND` is a multiple of the page
        // size); the mapping is private and never written, so dropping its pages loses nothing.
        unsafe {
            libc::madvise(
                self.at.add(from).cast_mut().cast(),
                to - from,
                libc::MADV_DONTNEED,
            )
        };
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes from `at`, mapped until `self` is dropped.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no slice of it outlives `self`.
        unsafe { libc::munmap(self.at.cast_mut().cast(), self.len) };
    }
}

/// Scans the lines that start in `[start, end)` of the file's `bytes` (the body starts at
/// `body`). `None` hands the file back.
fn scan_block(
    bytes: &[u8],
    body: usize,
    start: usize,
    end: usize,
    limits: Limits,
) -> Option<Scanned> {
    // One byte before the block says whether a line starts at its first byte; the window
    // runs far enough past the block's end to hold the longest line that may start in it.
    let from = if start > body { start - 1 } else { start };
    let until = (end + MAX_LINE_BYTES).min(bytes.len());
    let buf = &bytes[from..until];
    let mut pos = if start == body || buf[0] == b'\n' {
        start - from
    } else {
        match memchr::memchr(b'\n', &buf[start - from..]) {
            Some(nl) => start - from + nl + 1,
            // The line started in an earlier block, which scans it.
            None => return Some(Scanned::default()),
        }
    };
    let stop = end - from;
    let at_file_end = until == bytes.len();
    let mut s = Scanned::default();
    let mut line_ends = LineEnds::new(buf, pos);
    while pos < stop {
        let (line, next) = match line_ends.next() {
            Some(nl) => (&buf[pos..nl + 1], nl + 1),
            None if at_file_end => (&buf[pos..], buf.len()),
            // Longer than the window: the streaming reader's line-length error.
            None => return None,
        };
        if line.len() > MAX_LINE_BYTES {
            return None;
        }
        let last_line = at_file_end && next == buf.len();
        s.line(trim_end(line), last_line, limits)?;
        s.lines += 1;
        pos = next;
    }
    Some(s)
}

/// The offsets of the line ends (`\n`) in a block's window from a given offset on, in order.
/// The window is compared 64 bytes at a time, each chunk's line ends kept as a bitmask: a
/// `memchr` call per line (lines are about a hundred bytes) cost several times more in
/// setting up than in comparing.
struct LineEnds<'a> {
    buf: &'a [u8],
    /// The offset of the chunk `mask` covers.
    chunk: usize,
    /// The line ends in the chunk not yet given, bit `i` for the chunk's byte `i`.
    mask: u64,
}

impl<'a> LineEnds<'a> {
    fn new(buf: &'a [u8], from: usize) -> LineEnds<'a> {
        LineEnds {
            buf,
            chunk: from,
            mask: line_end_mask(buf.get(from..).unwrap_or_default()),
        }
    }
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.chunk += 64;
            if self.chunk >= self.buf.len() {
                return None;
            }
            self.mask = line_end_mask(&self.buf[self.chunk..]);
        }
        let at = self.chunk + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The line ends among the first 64 bytes of `bytes` (fewer at its end), bit `i` for byte `i`.
fn line_end_mask(bytes: &[u8]) -> u64 {
    match bytes.first_chunk::<64>() {
        Some(chunk) => line_end_mask64(chunk),
        None => line_end_mask_bytewise(bytes),
    }
}

/// [`line_end_mask`] one byte at a time, for at most 64 bytes.
fn line_end_mask_bytewise(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |m, (i, &b)| m | (u64::from(b == b'\n') << i))
}

#[cfg(target_arch = "x86_64")]
fn line_end_mask64(chunk: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let at = chunk.as_ptr().cast::<__m128i>();
    // SAFETY: SSE2 is part of every x86_64 CPU; the four unaligned 16-byte loads read the 64
    // bytes of `chunk`.
    unsafe {
        let nl = _mm_set1_epi8(b'\n' as i8);
        let part = |k: usize| {
            let hits = _mm_cmpeq_epi8(_mm_loadu_si128(at.add(k)), nl);
            u64::from(_mm_movemask_epi8(hits) as u16) << (16 * k)
        };
        part(0) | part(1) | part(2) | part(3)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn line_end_mask64(chunk: &[u8; 64]) -> u64 {
    line_end_mask_bytewise(chunk)
}

impl Scanned {
    /// One line, without its line end (`last_line`: the trace's last); `None` where the
    /// streaming reader would stop (or could, at the trace's last line).
    fn line(&mut self, line: &[u8], last_line: bool, limits: Limits) -> Option<()> {
        // `classify_line`'s two steps, the kernel's layout first, without building its
        // answer for an event line of that layout.
        let (cpu, ts, event_at) = match kernel_layout(line) {
            Some(event) => event,
            None => match classify_any_layout(line) {
                LineClass::Skip => return Some(()),
                LineClass::Marker(m) => {
                    self.markers.add_marker(m);
                    return Some(());
                }
                LineClass::NotEvent => return None,
                LineClass::Event { cpu, ts, event_at } => (cpu, ts.ok()?, event_at),
            },
        };
        if cpu >= limits.cpus.unwrap_or(MAX_CPUS) {
            return None;
        }
        let i = cpu as usize;
        if self.last.len() <= i {
            self.last.resize(i + 1, None);
        }
        match self.last[i] {
            None => self.first.push((cpu, ts, self.lines)),
            Some(prev) if ts < prev => {
                self.backwards += 1;
                self.first_backwards.get_or_insert(self.lines);
            }
            Some(_) => {}
        }
        self.last[i] = Some(ts);
        // The event name (`cpu_idle`, the most frequent, by one compare), and its fields only
        // where they are read: as [`event_name`] gives them (the line has no blanks at its
        // end, so they are what follows the colon and the blanks after it).
        let rest = &line[event_at..];
        let name_end = if rest.starts_with(b"cpu_idle:") {
            Some(8)
        } else {
            event_name_end(rest)
        };
        let (name, fields) = match name_end {
            Some(end) => (&rest[..end], end + 1),
            None => (&b""[..], 0),
        };
        let fields = || match name_end {
            Some(_) => &rest[skip_blanks(rest, fields)..],
            None => rest,
        };
        if name == b"cpu_idle" {
            let fields = fields();
            let (state, cpu_id) = match cpu_idle_fields(fields, limits.cpus) {
                Some(parsed) => parsed,
                None => match parse_kind(name, fields, limits.cpus) {
                    Ok(EventKind::CpuIdle { state, cpu_id }) => {
                        (state.unwrap_or(CPU_IDLE_EXIT), cpu_id)
                    }
                    _ => return None,
                },
            };
            if limits.layout_cpus.is_some_and(|n| cpu_id as usize >= n) {
                return None;
            }
            self.known[0] += 1;
            self.kept.push((ts, cpu_id, Change::Idle(state)));
        } else if let Some(k) = known_index(name) {
            // The report reads `cpu_frequency`; the other events are checked up to their
            // name, except on the last line, where the streaming reader tells whether one was
            // cut short.
            if name == b"cpu_frequency" || last_line {
                let fast = if name == b"cpu_frequency" {
                    cpu_frequency_fields(fields(), limits.cpus)
                } else {
                    None
                };
                let kind = match fast {
                    Some(kind) => kind,
                    None => parse_kind(name, fields(), limits.cpus).ok()?,
                };
                if let EventKind::CpuFrequency { khz, cpu_id } = kind {
                    if limits.layout_cpus.is_some_and(|n| cpu_id as usize >= n) {
                        return None;
                    }
                    self.kept.push((ts, cpu_id, Change::Frequency(khz)));
                }
            }
            self.known[k] += 1;
        } else {
            // Event names are ASCII identifiers; anything else counts under OTHER_EVENTS, as
            // in the streaming reader.
            let name = std::str::from_utf8(name).unwrap_or(OTHER_EVENTS);
            if let Some(&at) = self.unknown_at.get(name) {
                self.unknown[at].1 += 1;
            } else if self.unknown.len() < MAX_EVENT_NAMES {
                self.unknown_at.insert(name.into(), self.unknown.len());
                self.unknown.push((name.into(), 1));
            } else {
                return None;
            }
        }
        Some(())
    }
}

/// The fields of a `cpu_idle` line in the kernel's exact form, `state=N cpu_id=M`, as
/// (state, cpu_id); `None` for any other form (the caller then parses it as the streaming
/// reader does) or for values it would refuse. On this form [`parse_kind`]'s key search finds
/// the same two values.
fn cpu_idle_fields(fields: &[u8], cpus: Option<u32>) -> Option<(u32, u32)> {
    let (state, cpu_id) = state_and_cpu(fields, cpus)?;
    let state = if state == u64::from(CPU_IDLE_EXIT) || state < u64::from(CPUIDLE_STATE_MAX) {
        state as u32
    } else {
        return None;
    };
    Some((state, cpu_id))
}

/// [`cpu_idle_fields`] for `cpu_frequency`, whose fields have the same form: the event, or
/// `None` where [`parse_kind`] is to read them (and may refuse them).
fn cpu_frequency_fields(fields: &[u8], cpus: Option<u32>) -> Option<EventKind<'_>> {
    let (khz, cpu_id) = state_and_cpu(fields, cpus)?;
    let khz = u32::try_from(khz).ok()?;
    Some(EventKind::CpuFrequency { khz, cpu_id })
}

/// `state=N cpu_id=M` exactly, as (N, M) with M a CPU below `cpus` (or [`MAX_CPUS`]).
fn state_and_cpu(fields: &[u8], cpus: Option<u32>) -> Option<(u64, u32)> {
    let rest = fields.strip_prefix(b"state=")?;
    // A `cpu_idle` exit (half the events) by one compare: ten digits cost the most to parse.
    let (state, rest) = match rest.strip_prefix(b"4294967295 ") {
        Some(rest) => (u64::from(CPU_IDLE_EXIT), rest),
        None => {
            let space = find_byte(rest, b' ')?;
            (parse_u64(&rest[..space])?, &rest[space + 1..])
        }
    };
    let cpu_id = parse_u64(rest.strip_prefix(b"cpu_id=")?)?;
    let cpu_id = u32::try_from(cpu_id)
        .ok()
        .filter(|&c| c < cpus.unwrap_or(MAX_CPUS))?;
    Some((state, cpu_id))
}

#[cfg(test)]
mod tests;
