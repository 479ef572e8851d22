//! The metadata of a trace.dat, read before any event: the initial format, the ring buffer's
//! headers, the event formats, the symbol tables, the options and where each CPU's data is.
//!
//! Version 6 (trace-cmd.dat.v6(5)) lays these out one after the other from the start of the
//! file, each piece preceded by its size; version 7 (trace-cmd.dat.v7(5), trace-cmd 3.4's
//! text) puts them in sections anywhere in the file, found through chains of OPTIONS
//! sections, each section with a 16-byte header (id, flags, description string id, size) and,
//! when flagged, compressed as one block (compressed size, decompressed size, data).
//!
//! Every size the file claims is checked before anything is allocated for it: against the end
//! of the file (a file cut short, or a size larger than the file, is an error naming the byte
//! where the piece starts), and against a limit per kind of piece (a format file, the symbol
//! table, a decompressed section), far above what real traces need.

use std::collections::HashSet;
use std::fs::File;

use super::codec::Codec;
use super::format::{
    parse_event_format, parse_event_header, parse_page_header, EventFormat, EventHeader, PageHeader,
};
use super::symbols::{Kallsyms, PrintkStrings};
use crate::error::{shown, InputError};
use crate::trace::ftrace::MAX_CPUS;

/// The bytes every trace.dat starts with: 0x17 0x08 0x44 and `tracing`.
pub const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// The largest event format file (real ones are a few KiB).
pub const MAX_FORMAT_BYTES: u64 = 1 << 20;
/// The most bytes of event formats in all (a kernel with every event has ~2 MiB).
pub const MAX_FORMATS_TOTAL_BYTES: u64 = 64 << 20;
/// The most event formats in one file (event ids are 16-bit).
pub const MAX_FORMATS: u32 = 1 << 16;
/// The largest `header_page` / `header_event` text.
pub const MAX_HEADER_TEXT_BYTES: u64 = 64 << 10;
/// The largest symbol table (a distribution kernel's `/proc/kallsyms` is ~10 MiB).
pub const MAX_KALLSYMS_BYTES: u64 = 128 << 20;
/// The largest `printk_formats`.
pub const MAX_PRINTK_BYTES: u64 = 16 << 20;
/// The largest option read (others are skipped unread).
pub const MAX_OPTION_BYTES: u64 = 1 << 20;
/// The largest decompressed metadata section (the symbol table is the largest).
pub const MAX_SECTION_BYTES: u64 = MAX_KALLSYMS_BYTES;
/// The most options in one list.
pub const MAX_OPTIONS: u32 = 1 << 16;
/// The most OPTIONS sections followed in a v7 file.
pub const MAX_OPTION_SECTIONS: usize = 1024;
/// Ring-buffer pages torpor reads: 1 KiB to 1 MiB (kernels use 4 KiB to 64 KiB).
pub const PAGE_BYTES: std::ops::RangeInclusive<u32> = 1 << 10..=1 << 20;

/// Positioned reads from the trace: a file, or bytes in memory (tests, fuzzing).
pub trait ReadAt {
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at the end.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
    fn size(&self) -> std::io::Result<u64>;
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len() as u64)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        (**self).read_at(buf, offset)
    }
    fn size(&self) -> std::io::Result<u64> {
        (**self).size()
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.as_slice().read_at(buf, offset)
    }
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len() as u64)
    }
}

/// The trace file: its reads, its length, its name and its byte order.
pub struct Src<R> {
    pub r: R,
    pub len: u64,
    pub file: String,
    pub big: bool,
}

impl<R: ReadAt> Src<R> {
    /// An error at byte `at` of the file.
    pub fn err(&self, at: u64, message: impl std::fmt::Display) -> InputError {
        InputError::whole(&self.file, format!("{message} (at byte {at})"))
    }

    /// Fills `buf` from `at`; `what` names the piece in the error when the file ends first.
    pub fn read(&self, at: u64, buf: &mut [u8], what: &str) -> Result<(), InputError> {
        let mut done = 0;
        while done < buf.len() {
            let n = self
                .r
                .read_at(&mut buf[done..], at + done as u64)
                .map_err(|e| self.err(at + done as u64, format!("cannot read {what}: {e}")))?;
            if n == 0 {
                return Err(self.err(
                    at,
                    format!(
                        "the file ends at byte {} inside {what}, which needs {} bytes",
                        self.len,
                        buf.len()
                    ),
                ));
            }
            done += n;
        }
        Ok(())
    }

    pub fn u(&self, bytes: &[u8]) -> u64 {
        read_uint(bytes, self.big)
    }
}

/// An unsigned number of 1 to 8 bytes in the file's byte order.
#[inline]
pub fn read_uint(bytes: &[u8], big: bool) -> u64 {
    // The common widths in one load each (this runs for every record and field).
    match (bytes.len(), big) {
        (2, false) => return u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        (4, false) => {
            return u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        }
        (8, false) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(bytes);
            return u64::from_le_bytes(b);
        }
        (4, true) => {
            return u64::from(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        }
        (8, true) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(bytes);
            return u64::from_be_bytes(b);
        }
        _ => {}
    }
    let mut v = 0u64;
    if big {
        for &b in bytes {
            v = v << 8 | u64::from(b);
        }
    } else {
        for &b in bytes.iter().rev() {
            v = v << 8 | u64::from(b);
        }
    }
    v
}

/// Where a cursor reads: the file, or a decompressed section held in memory.
enum Data<'a> {
    File(&'a dyn ReadAt),
    Mem(&'a [u8]),
}

/// A cursor over the file or a section, reporting errors with the position in the file.
struct Cur<'a> {
    data: Data<'a>,
    pos: u64,
    /// Where the readable bytes end (the file's or the section's end).
    end: u64,
    big: bool,
    file: &'a str,
    /// The file offset of position 0 (a section read into memory uncompressed).
    base: u64,
    /// For a decompressed section: the file offset of its compressed block.
    section_at: Option<u64>,
}

impl Cur<'_> {
    fn err(&self, at: u64, message: impl std::fmt::Display) -> InputError {
        let place = match self.section_at {
            None => format!("at byte {}", self.base + at),
            Some(s) => format!("at byte {s}, {at} bytes into the decompressed section"),
        };
        InputError::whole(self.file, format!("{message} ({place})"))
    }

    fn take(&mut self, n: u64, what: &str, max: u64) -> Result<Vec<u8>, InputError> {
        if n > max {
            return Err(self.err(
                self.pos,
                format!("{what} claims {n} bytes; expected at most {max}"),
            ));
        }
        if n > self.end.saturating_sub(self.pos) {
            return Err(self.err(
                self.pos,
                format!(
                    "{what} claims {n} bytes, but only {} remain{}",
                    self.end.saturating_sub(self.pos),
                    if self.section_at.is_none() {
                        ": the file is cut short or the size is bogus"
                    } else {
                        " in its section"
                    }
                ),
            ));
        }
        let mut buf = vec![0u8; n as usize];
        match self.data {
            Data::Mem(m) => {
                let s = self.pos as usize;
                buf.copy_from_slice(&m[s..s + n as usize]);
            }
            Data::File(r) => {
                let mut done = 0;
                while done < buf.len() {
                    let got = r
                        .read_at(&mut buf[done..], self.pos + done as u64)
                        .map_err(|e| self.err(self.pos, format!("cannot read {what}: {e}")))?;
                    if got == 0 {
                        return Err(self.err(self.pos, format!("the file ends inside {what}")));
                    }
                    done += got;
                }
            }
        }
        self.pos += n;
        Ok(buf)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), InputError> {
        if n > self.end.saturating_sub(self.pos) {
            return Err(self.err(
                self.pos,
                format!(
                    "{what} claims {n} bytes, but only {} remain: the file is cut short or the \
                     size is bogus",
                    self.end.saturating_sub(self.pos)
                ),
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn uint(&mut self, n: u64, what: &str) -> Result<u64, InputError> {
        let at = self.pos;
        let b = self
            .take(n, what, 8)
            .map_err(|_| self.err(at, format!("the data ends where {what} was expected")))?;
        Ok(read_uint(&b, self.big))
    }

    fn u16(&mut self, what: &str) -> Result<u16, InputError> {
        Ok(self.uint(2, what)? as u16)
    }
    fn u32(&mut self, what: &str) -> Result<u32, InputError> {
        Ok(self.uint(4, what)? as u32)
    }
    fn u64(&mut self, what: &str) -> Result<u64, InputError> {
        self.uint(8, what)
    }

    /// A NUL-terminated string of at most `max` bytes.
    fn cstr(&mut self, what: &str, max: usize) -> Result<String, InputError> {
        let at = self.pos;
        let mut out = Vec::new();
        loop {
            if self.pos >= self.end {
                return Err(self.err(at, format!("the data ends inside {what}")));
            }
            let b = self.take(1, what, 1)?[0];
            if b == 0 {
                break;
            }
            if out.len() >= max {
                return Err(self.err(
                    at,
                    format!("expected {what} ending in a NUL byte within {max} bytes"),
                ));
            }
            out.push(b);
        }
        String::from_utf8(out).map_err(|_| self.err(at, format!("expected {what} as UTF-8 text")))
    }

    /// `len` bytes of text (a format file, a symbol table).
    fn text(&mut self, len: u64, what: &str, max: u64) -> Result<String, InputError> {
        let at = self.pos;
        let bytes = self.take(len, what, max)?;
        String::from_utf8(bytes).map_err(|e| {
            self.err(
                at + e.utf8_error().valid_up_to() as u64,
                format!("expected {what} as UTF-8 text"),
            )
        })
    }

    /// A fixed tag such as `header_page\0`.
    fn expect(&mut self, tag: &[u8], what: &str) -> Result<(), InputError> {
        let at = self.pos;
        let got = self
            .take(tag.len() as u64, what, tag.len() as u64)
            .map_err(|_| self.err(at, format!("the data ends where {what} was expected")))?;
        if got != tag {
            return Err(self.err(
                at,
                format!(
                    "expected {what} {}, got {}",
                    shown(&String::from_utf8_lossy(tag)),
                    shown(&String::from_utf8_lossy(&got))
                ),
            ));
        }
        Ok(())
    }
}

/// One CPU's ring-buffer data in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    pub size: u64,
}

/// Everything read before the events.
pub struct Meta {
    pub version: u32,
    pub long_size: u8,
    pub page_size: u32,
    pub codec: Option<Codec>,
    pub page: PageHeader,
    pub record: EventHeader,
    pub formats: Vec<EventFormat>,
    pub kallsyms: Kallsyms,
    pub printk: PrintkStrings,
    /// The CPU count of the traced machine (the header's, or the highest CPU with data + 1).
    pub cpus: u32,
    /// CPUs with data, by CPU number.
    pub cpu_data: Vec<CpuData>,
    /// v7: each CPU's data is a series of compressed chunks.
    pub cpu_compressed: bool,
    /// The trace clock, when the file names it.
    pub clock: Option<String>,
    /// The OFFSET option: nanoseconds added to every timestamp.
    pub ts_offset: i64,
    /// The TSC2NSEC option: (multiplier, shift) turning counter ticks into nanoseconds.
    pub tsc2nsec: Option<(u32, u32)>,
    /// Trace instances other than the top one, not read.
    pub instances_skipped: u32,
}

/// The option ids of trace-cmd.dat.v7(5) (v6 files use the first ones too).
mod option {
    pub const DONE: u16 = 0;
    pub const BUFFER: u16 = 3;
    pub const TRACECLOCK: u16 = 4;
    pub const OFFSET: u16 = 7;
    pub const CPUCOUNT: u16 = 8;
    pub const TSC2NSEC: u16 = 14;
    pub const HEADER_INFO: u16 = 16;
    pub const FTRACE_EVENTS: u16 = 17;
    pub const EVENT_FORMATS: u16 = 18;
    pub const KALLSYMS: u16 = 19;
    pub const PRINTK: u16 = 20;
    pub const BUFFER_TEXT: u16 = 22;
}

/// The section flag of a compressed section.
const SECTION_COMPRESSED: u16 = 1;

/// Reads the metadata of the file behind `src` (its byte order not yet known).
pub fn read_meta<R: ReadAt>(src: &mut Src<R>) -> Result<Meta, InputError> {
    let mut head = [0u8; 10];
    let n = src
        .r
        .read_at(&mut head, 0)
        .map_err(|e| src.err(0, format!("cannot read: {e}")))?;
    if head[..n] != MAGIC[..n.min(MAGIC.len())] || n < MAGIC.len() {
        return Err(src.err(
            0,
            "expected a trace.dat: the bytes 0x17 0x08 0x44 and `tracing`",
        ));
    }
    let mut c = Cur {
        data: Data::File(&src.r),
        pos: MAGIC.len() as u64,
        end: src.len,
        big: false,
        file: &src.file,
        base: 0,
        section_at: None,
    };
    let version_at = c.pos;
    let version = c.cstr("the file version", 16)?;
    let version: u32 = match version.as_str() {
        "6" => 6,
        "7" => 7,
        other => {
            return Err(c.err(
                version_at,
                format!(
                    "expected file version 6 or 7 (trace-cmd.dat.v6(5), v7(5)), got {}",
                    shown(other)
                ),
            ))
        }
    };
    let endian_at = c.pos;
    let big = match c.uint(1, "the endianness byte")? {
        0 => false,
        1 => true,
        b => {
            return Err(c.err(
                endian_at,
                format!("expected the endianness byte 0 (little) or 1 (big), got {b}"),
            ))
        }
    };
    c.big = big;
    let long_at = c.pos;
    let long_size = c.uint(1, "the size of a long")? as u8;
    if long_size != 4 && long_size != 8 {
        return Err(c.err(
            long_at,
            format!("expected the size of a long, 4 or 8, got {long_size}"),
        ));
    }
    let page_at = c.pos;
    let page_size = c.u32("the page size")?;
    check_page_size(&c, page_at, page_size)?;
    let meta = if version == 6 {
        read_v6(&mut c, long_size, page_size)?
    } else {
        read_v7(&mut c, long_size, page_size)?
    };
    src.big = big;
    Ok(meta)
}

fn check_page_size(c: &Cur<'_>, at: u64, page_size: u32) -> Result<(), InputError> {
    if !PAGE_BYTES.contains(&page_size) {
        return Err(c.err(
            at,
            format!(
                "expected a ring-buffer page size from {} to {} bytes, got {page_size}",
                PAGE_BYTES.start(),
                PAGE_BYTES.end()
            ),
        ));
    }
    Ok(())
}

/// What HEADER INFO, FTRACE EVENT FORMATS, EVENT FORMATS, KALLSYMS and PRINTK hold (the same
/// in both versions, in sections for v7).
#[derive(Default)]
struct Pieces {
    page: Option<PageHeader>,
    record: Option<EventHeader>,
    formats: Vec<EventFormat>,
    format_bytes: u64,
    kallsyms: Kallsyms,
    printk: PrintkStrings,
}

fn header_info(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    c.expect(b"header_page\0", "the tag")?;
    let size = c.u64("the size of header_page")?;
    let at = c.pos;
    let text = c.text(size, "header_page", MAX_HEADER_TEXT_BYTES)?;
    p.page = Some(parse_page_header(&text).map_err(|m| c.err(at, m))?);
    c.expect(b"header_event\0", "the tag")?;
    let size = c.u64("the size of header_event")?;
    let at = c.pos;
    let text = c.text(size, "header_event", MAX_HEADER_TEXT_BYTES)?;
    p.record = Some(parse_event_header(&text).map_err(|m| c.err(at, m))?);
    Ok(())
}

fn one_format(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    let size = c.u64("the size of an event format")?;
    let at = c.pos;
    p.format_bytes = p.format_bytes.saturating_add(size);
    if p.format_bytes > MAX_FORMATS_TOTAL_BYTES {
        return Err(c.err(
            at,
            format!("expected at most {MAX_FORMATS_TOTAL_BYTES} bytes of event formats in all"),
        ));
    }
    let text = c.text(size, "an event format", MAX_FORMAT_BYTES)?;
    let format = parse_event_format(&text).map_err(|m| c.err(at, m))?;
    if p.formats.len() as u32 >= MAX_FORMATS {
        return Err(c.err(at, format!("expected at most {MAX_FORMATS} event formats")));
    }
    p.formats.push(format);
    Ok(())
}

fn ftrace_formats(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    let count = c.u32("the count of ftrace event formats")?;
    for _ in 0..count {
        one_format(c, p)?;
    }
    Ok(())
}

fn event_formats(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    let at = c.pos;
    let systems = c.u32("the count of event systems")?;
    if systems > MAX_FORMATS {
        return Err(c.err(at, format!("expected at most {MAX_FORMATS} event systems")));
    }
    for _ in 0..systems {
        c.cstr("an event system's name", 4096)?;
        let count = c.u32("the count of a system's event formats")?;
        for _ in 0..count {
            one_format(c, p)?;
        }
    }
    Ok(())
}

fn kallsyms(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    let size = c.u32("the size of the symbol table")?;
    let text = c.take(
        u64::from(size),
        "the symbol table (kallsyms)",
        MAX_KALLSYMS_BYTES,
    )?;
    p.kallsyms = Kallsyms::parse(&String::from_utf8_lossy(&text));
    Ok(())
}

fn printk(c: &mut Cur<'_>, p: &mut Pieces) -> Result<(), InputError> {
    let size = c.u32("the size of printk_formats")?;
    let text = c.take(u64::from(size), "printk_formats", MAX_PRINTK_BYTES)?;
    p.printk = PrintkStrings::parse(&String::from_utf8_lossy(&text));
    Ok(())
}

/// Options both versions share; `v6` for the v6 form of BUFFER (instances only).
#[derive(Default)]
struct Options {
    clock: Option<String>,
    ts_offset: i64,
    tsc2nsec: Option<(u32, u32)>,
    cpucount: Option<u32>,
    instances_skipped: u32,
    /// v7: the top instance's BUFFER option (offset, clock, page size, CPUs).
    top: Option<(u64, String, u32, Vec<CpuData>)>,
    text_buffer: bool,
    /// v7: section offsets by option id.
    sections: Vec<(u16, u64)>,
    /// v7: the offset of the next OPTIONS section (0: none).
    next: u64,
}

fn nul_text(b: &[u8]) -> String {
    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Reads one option's data (`id`, `size` read already) at the cursor.
fn one_option(
    c: &mut Cur<'_>,
    id: u16,
    size: u32,
    v7: bool,
    o: &mut Options,
) -> Result<(), InputError> {
    let at = c.pos;
    let size = u64::from(size);
    match id {
        option::TRACECLOCK
        | option::OFFSET
        | option::CPUCOUNT
        | option::TSC2NSEC
        | option::BUFFER
        | option::BUFFER_TEXT
        | option::DONE
        | option::HEADER_INFO..=option::PRINTK => {}
        _ => return c.skip(size, "an option"),
    }
    let data = c.take(size, "an option", MAX_OPTION_BYTES)?;
    let bad = |what: &str| c.err(at, format!("expected {what} in option {id}"));
    let word =
        |i: usize, n: usize| -> Option<u64> { data.get(i..i + n).map(|b| read_uint(b, c.big)) };
    match id {
        option::DONE => o.next = word(0, 8).ok_or_else(|| bad("an 8-byte offset"))?,
        option::TRACECLOCK => {
            // `[local] global counter ...`: the bracketed one is in use.
            let text = nul_text(&data);
            o.clock = text
                .split_whitespace()
                .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
                .map(str::to_string)
                .or_else(|| Some(text.trim().to_string()).filter(|t| !t.contains(' ')));
        }
        option::OFFSET => {
            let text = nul_text(&data);
            let t = text.trim();
            let parsed = match t.strip_prefix("0x") {
                Some(h) => i64::from_str_radix(h, 16).ok(),
                None => t.parse::<i64>().ok(),
            };
            o.ts_offset = o
                .ts_offset
                .saturating_add(parsed.ok_or_else(|| bad("a whole number of nanoseconds"))?);
        }
        option::CPUCOUNT => {
            o.cpucount = Some(word(0, 4).ok_or_else(|| bad("a 4-byte CPU count"))? as u32)
        }
        option::TSC2NSEC => {
            let mult = word(0, 4).ok_or_else(|| bad("a multiplier, a shift and an offset"))?;
            let shift = word(4, 4).ok_or_else(|| bad("a multiplier, a shift and an offset"))?;
            if shift >= 64 {
                return Err(bad("a shift below 64"));
            }
            o.tsc2nsec = Some((mult as u32, shift as u32));
        }
        option::BUFFER if v7 => buffer_option(c, at, &data, o)?,
        option::BUFFER => o.instances_skipped += 1,
        option::BUFFER_TEXT => {
            let name = data.get(8..).map(nul_text).unwrap_or_default();
            if name.is_empty() {
                o.text_buffer = true;
            } else {
                o.instances_skipped += 1;
            }
        }
        _ => o.sections.push((
            id,
            word(0, 8).ok_or_else(|| bad("an 8-byte section offset"))?,
        )),
    }
    Ok(())
}

/// v7's BUFFER option: offset, name, clock, page size, CPU count, then per CPU id, offset,
/// size. (Files of trace-cmd 3.0 have no page size; told apart by the option's length.)
fn buffer_option(c: &Cur<'_>, at: u64, data: &[u8], o: &mut Options) -> Result<(), InputError> {
    let bad = |what: &str| c.err(at, format!("expected {what} in a BUFFER option"));
    let offset = data
        .get(..8)
        .map(|b| read_uint(b, c.big))
        .ok_or_else(|| bad("an 8-byte offset"))?;
    let mut i = 8;
    let string = |i: &mut usize| -> Option<String> {
        let end = data.get(*i..)?.iter().position(|&b| b == 0)? + *i;
        let s = String::from_utf8_lossy(&data[*i..end]).into_owned();
        *i = end + 1;
        Some(s)
    };
    let name = string(&mut i).ok_or_else(|| bad("the instance name"))?;
    let clock = string(&mut i).ok_or_else(|| bad("the clock name"))?;
    if !name.is_empty() {
        o.instances_skipped += 1;
        return Ok(());
    }
    let word = |i: usize, n: usize| data.get(i..i + n).map(|b| read_uint(b, c.big));
    let rest = data.len() - i;
    let (page_size, count, cpus_at) = match (word(i, 4), word(i + 4, 4)) {
        (Some(p), Some(n)) if rest as u64 == 8 + n * 20 => (Some(p as u32), n, i + 8),
        _ => match word(i, 4) {
            Some(n) if rest as u64 == 4 + n * 20 => (None, n, i + 4),
            _ => return Err(bad("a page size, a CPU count and 20 bytes per CPU")),
        },
    };
    if count > u64::from(MAX_CPUS) {
        return Err(bad(&format!("at most {MAX_CPUS} CPUs")));
    }
    let mut cpus = Vec::with_capacity(count as usize);
    for k in 0..count as usize {
        let b = cpus_at + k * 20;
        cpus.push(CpuData {
            cpu: word(b, 4).unwrap_or(0) as u32,
            offset: word(b + 4, 8).unwrap_or(0),
            size: word(b + 12, 8).unwrap_or(0),
        });
    }
    o.top = Some((offset, clock, page_size.unwrap_or(0), cpus));
    Ok(())
}

fn read_v6(c: &mut Cur<'_>, long_size: u8, page_size: u32) -> Result<Meta, InputError> {
    let mut p = Pieces::default();
    header_info(c, &mut p)?;
    ftrace_formats(c, &mut p)?;
    event_formats(c, &mut p)?;
    kallsyms(c, &mut p)?;
    printk(c, &mut p)?;
    let size = c.u64("the size of the saved command lines")?;
    c.skip(size, "the saved command lines")?;
    let cpus_at = c.pos;
    let cpus = c.u32("the CPU count")?;
    if cpus == 0 || cpus > MAX_CPUS {
        return Err(c.err(
            cpus_at,
            format!("expected a CPU count from 1 to {MAX_CPUS}, got {cpus}"),
        ));
    }
    let mut o = Options::default();
    let mut tag_at = c.pos;
    let mut tag = c.take(10, "the data tag", 10)?;
    if tag == b"options  \0" {
        for n in 0.. {
            if n == MAX_OPTIONS {
                return Err(c.err(c.pos, format!("expected at most {MAX_OPTIONS} options")));
            }
            let id = c.u16("an option id")?;
            if id == option::DONE {
                break;
            }
            let size = c.u32("an option's size")?;
            one_option(c, id, size, false, &mut o)?;
        }
        tag_at = c.pos;
        tag = c.take(10, "the data tag", 10)?;
    }
    match tag.as_slice() {
        b"flyrecord\0" => {}
        b"latency  \0" => {
            return Err(c.err(
                tag_at,
                "this trace.dat holds a latency tracer's text, not per-CPU event data; \
                 expected a trace recorded with events (`trace-cmd record -e ...`)",
            ))
        }
        other => {
            return Err(c.err(
                tag_at,
                format!(
                    "expected `flyrecord` or `latency` after the header, got {}",
                    shown(&String::from_utf8_lossy(other))
                ),
            ))
        }
    }
    let mut cpu_data = Vec::new();
    for cpu in 0..cpus {
        let offset = c.u64("a CPU's data offset")?;
        let size = c.u64("a CPU's data size")?;
        if size > 0 {
            cpu_data.push(CpuData { cpu, offset, size });
        }
    }
    finish(c, p, o, 6, long_size, page_size, cpus, cpu_data, false)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    c: &Cur<'_>,
    p: Pieces,
    o: Options,
    version: u32,
    long_size: u8,
    page_size: u32,
    cpus: u32,
    cpu_data: Vec<CpuData>,
    cpu_compressed: bool,
) -> Result<Meta, InputError> {
    let (Some(page), Some(record)) = (p.page, p.record) else {
        return Err(c.err(
            0,
            "expected the ring buffer's headers (header_page, header_event)",
        ));
    };
    if page.data_offset >= page_size as usize {
        return Err(c.err(
            0,
            format!(
                "header_page puts the data at byte {} of a {page_size}-byte page",
                page.data_offset
            ),
        ));
    }
    for d in &cpu_data {
        if d.cpu >= cpus {
            return Err(c.err(
                0,
                format!(
                    "the file has data for CPU {} but says the machine has {cpus}",
                    d.cpu
                ),
            ));
        }
        if d.offset.checked_add(d.size).is_none_or(|e| e > c.end) {
            return Err(c.err(
                d.offset,
                format!(
                    "CPU {}'s data runs {} bytes from here, past the end of the file at byte {}: \
                     the file is cut short",
                    d.cpu, d.size, c.end
                ),
            ));
        }
    }
    Ok(Meta {
        version,
        long_size,
        page_size,
        codec: None,
        page,
        record,
        formats: p.formats,
        kallsyms: p.kallsyms,
        printk: p.printk,
        cpus,
        cpu_data,
        cpu_compressed,
        clock: o.clock,
        ts_offset: o.ts_offset,
        tsc2nsec: o.tsc2nsec,
        instances_skipped: o.instances_skipped,
    })
}

/// Where a section held in memory came from, for errors: the file offset of its content
/// (stored as is) or of its compressed block.
#[derive(Clone, Copy)]
enum Origin {
    File(u64),
    Block(u64),
}

/// The most compressed bytes a block of `size` bytes may take: zlib and zstd add at most a
/// few bytes per KiB to data they cannot compress.
pub fn compressed_bound(size: u64) -> u64 {
    size.saturating_mul(2).saturating_add(64 << 10)
}

/// A v7 section's content: its bytes (decompressed if flagged) and where they came from.
fn section(
    c: &Cur<'_>,
    at: u64,
    id: u16,
    what: &str,
    codec: Option<Codec>,
) -> Result<(Vec<u8>, Origin), InputError> {
    let mut h = Cur {
        data: match c.data {
            Data::File(r) => Data::File(r),
            Data::Mem(m) => Data::Mem(m),
        },
        pos: at,
        end: c.end,
        big: c.big,
        file: c.file,
        base: 0,
        section_at: None,
    };
    if at >= c.end {
        return Err(c.err(
            at,
            format!(
                "the {what} section is past the end of the file at byte {}",
                c.end
            ),
        ));
    }
    let got = h.u16("a section id")?;
    if got != id {
        return Err(h.err(
            at,
            format!("expected the {what} section (id {id}), got id {got}"),
        ));
    }
    let flags = h.u16("the section flags")?;
    h.u32("the section description")?;
    let size = h.u64("the section size")?;
    if size > h.end - h.pos {
        return Err(h.err(
            at,
            format!(
                "the {what} section claims {size} bytes, but the file ends {} bytes after its \
                 header: the file is cut short or the size is bogus",
                h.end - h.pos
            ),
        ));
    }
    h.end = h.pos + size;
    if flags & SECTION_COMPRESSED == 0 {
        let content = h.pos;
        let bytes = h.take(size, &format!("the {what} section"), MAX_SECTION_BYTES)?;
        return Ok((bytes, Origin::File(content)));
    }
    let Some(codec) = codec else {
        return Err(h.err(
            at,
            format!("the {what} section is flagged compressed, but the file names no compression"),
        ));
    };
    let block = h.pos;
    let zsize = h.u32("the compressed size")?;
    let usize_ = h.u32("the decompressed size")?;
    if u64::from(usize_) > MAX_SECTION_BYTES {
        return Err(h.err(
            block,
            format!(
                "the {what} section claims to decompress to {usize_} bytes; expected at most \
                 {MAX_SECTION_BYTES}"
            ),
        ));
    }
    let z = h.take(
        u64::from(zsize),
        &format!("the compressed {what} section"),
        size,
    )?;
    let mut out = Vec::new();
    codec
        .decompress(&z, usize_ as usize, &mut out)
        .map_err(|m| h.err(block, format!("in the {what} section, {m}")))?;
    Ok((out, Origin::Block(block)))
}

/// A reader of one metadata piece.
type PieceReader = fn(&mut Cur<'_>, &mut Pieces) -> Result<(), InputError>;

fn read_v7(c: &mut Cur<'_>, long_size: u8, page_size: u32) -> Result<Meta, InputError> {
    let codec_at = c.pos;
    let name = c.cstr("the compression name", 64)?;
    c.cstr("the compression version", 64)?;
    let codec = match name.as_str() {
        "none" | "" => None,
        other => Some(Codec::from_name(other).ok_or_else(|| {
            c.err(
                codec_at,
                format!(
                    "expected the compression `none`, `zlib` or `zstd` (the ones torpor reads), \
                     got {}",
                    shown(other)
                ),
            )
        })?),
    };
    let mut next = c.u64("the offset of the first options section")?;
    let mut o = Options::default();
    let mut seen = HashSet::new();
    while next != 0 {
        if !seen.insert(next) || seen.len() > MAX_OPTION_SECTIONS {
            return Err(c.err(
                next,
                "the options sections loop back or never end: expected a chain ending in 0",
            ));
        }
        let (bytes, block) = section(c, next, option::DONE, "OPTIONS", codec)?;
        let mut oc = mem_cur(c, &bytes, block);
        o.next = 0;
        for n in 0.. {
            if n == MAX_OPTIONS {
                return Err(oc.err(oc.pos, format!("expected at most {MAX_OPTIONS} options")));
            }
            let id = oc.u16("an option id")?;
            let size = oc.u32("an option's size")?;
            one_option(&mut oc, id, size, true, &mut o)?;
            if id == option::DONE {
                break;
            }
        }
        next = o.next;
    }
    let mut p = Pieces::default();
    for &(id, at) in &o.sections {
        let (what, read): (&str, PieceReader) = match id {
            option::HEADER_INFO => ("HEADER INFO", header_info),
            option::FTRACE_EVENTS => ("FTRACE EVENT FORMATS", ftrace_formats),
            option::EVENT_FORMATS => ("EVENT FORMATS", event_formats),
            option::KALLSYMS => ("KALLSYMS", kallsyms),
            _ => ("TRACE_PRINTK", printk),
        };
        let (bytes, block) = section(c, at, id, what, codec)?;
        read(&mut mem_cur(c, &bytes, block), &mut p)?;
    }
    let Some((offset, clock, buffer_page, cpus_data)) = o.top.take() else {
        return Err(c.err(
            0,
            if o.text_buffer {
                "this trace.dat holds a latency tracer's text, not per-CPU event data; expected \
                 a trace recorded with events (`trace-cmd record -e ...`)"
            } else {
                "expected a BUFFER option for the top trace instance: the file has no event data"
            },
        ));
    };
    let page_size = if buffer_page == 0 {
        page_size
    } else {
        check_page_size(c, 0, buffer_page)?;
        buffer_page
    };
    // The flyrecord section's header says whether the CPUs' data is compressed.
    let mut h = Cur {
        data: match c.data {
            Data::File(r) => Data::File(r),
            Data::Mem(m) => Data::Mem(m),
        },
        pos: offset,
        end: c.end,
        big: c.big,
        file: c.file,
        base: 0,
        section_at: None,
    };
    let id = h.u16("the BUFFER section id")?;
    if id != option::BUFFER {
        return Err(h.err(
            offset,
            format!(
                "expected the BUFFER FLYRECORD section (id {}), got id {id}",
                option::BUFFER
            ),
        ));
    }
    let flags = h.u16("the section flags")?;
    let compressed = flags & SECTION_COMPRESSED != 0;
    if compressed && codec.is_none() {
        return Err(h.err(
            offset,
            "the event data is flagged compressed, but the file names no compression",
        ));
    }
    let highest = cpus_data.iter().map(|d| d.cpu + 1).max().unwrap_or(0);
    let cpus = o.cpucount.unwrap_or(highest).max(1);
    if cpus > MAX_CPUS {
        return Err(c.err(0, format!("expected at most {MAX_CPUS} CPUs, got {cpus}")));
    }
    let mut cpu_data: Vec<CpuData> = cpus_data.into_iter().filter(|d| d.size > 0).collect();
    cpu_data.sort_by_key(|d| d.cpu);
    if cpu_data.windows(2).any(|w| w[0].cpu == w[1].cpu) {
        return Err(c.err(0, "the BUFFER option lists one CPU twice"));
    }
    o.clock = Some(clock);
    let mut m = finish(c, p, o, 7, long_size, page_size, cpus, cpu_data, compressed)?;
    m.codec = codec;
    Ok(m)
}

fn mem_cur<'a>(c: &Cur<'a>, bytes: &'a [u8], origin: Origin) -> Cur<'a> {
    let (base, section_at) = match origin {
        Origin::File(base) => (base, None),
        Origin::Block(block) => (0, Some(block)),
    };
    Cur {
        data: Data::Mem(bytes),
        pos: 0,
        end: bytes.len() as u64,
        big: c.big,
        file: c.file,
        base,
        section_at,
    }
}
