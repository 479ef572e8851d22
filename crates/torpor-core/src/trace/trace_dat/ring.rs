//! One CPU's ring-buffer data, read page by page: the kernel's `ring_buffer` page layout
//! (`header_page`: a timestamp, a commit word, the records) and record headers (`header_event`:
//! a 32-bit word of a 5-bit `type_len` and a 27-bit `time_delta`).
//!
//! Steps for each page:
//! 1. The page's timestamp starts the running time; the commit word's low 27 bits are the bytes
//!    of records on the page; bit 31 says events were lost before this page, bit 30 that their
//!    count is stored (as a kernel `long`) right after the records.
//! 2. Each record adds its `time_delta` to the running time, then by `type_len`: padding
//!    (the rest of the page when its delta is 0, else a discarded record whose length is in
//!    the next word), a time extend (the next word holds bits 27 and up of a delta), an
//!    absolute timestamp (the next word and the delta are the time's low 59 bits; the top 5
//!    bits are the running time's), or a data record of `type_len` words (0: its length in
//!    bytes, itself included, is the next word, rounded up to words).
//!
//! Memory: a buffer of a few pages (plain data) or of one decompressed chunk (v7 compressed
//! data, a series of blocks of 10 pages as trace-cmd writes them) per CPU.

use super::codec::Codec;
use super::format::{EventHeader, PageHeader};
use super::layout::{CpuData, ReadAt, Src};
use crate::error::InputError;

/// The largest decompressed chunk (trace-cmd writes 10 pages: 40 KiB to 640 KiB).
pub const MAX_CHUNK_BYTES: u32 = 16 << 20;

/// The most bytes of plain data read at once for one CPU.
const READ_AHEAD_BYTES: usize = 64 << 10;

/// The most bytes all CPUs' buffers may hold at once (a page or a chunk each, at least): far
/// above real traces (256 CPUs of 10 64 KiB pages is 160 MiB), it bounds a file that claims
/// thousands of CPUs of huge chunks.
pub const MAX_HELD_BYTES: usize = 256 << 20;

/// The commit word: bytes of records (its low 27 bits) and the lost-events flags.
const COMMIT_MASK: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;

/// Bits of a time-extend word and an absolute timestamp above the 27 of `time_delta`.
const TS_SHIFT: u32 = 27;
/// The top bits an absolute timestamp does not carry.
const TS_MSB: u64 = 0xf8 << 56;

/// What a stream needs from the file and its headers.
pub struct Ring<'a, R: ReadAt> {
    pub src: &'a Src<R>,
    pub page_size: usize,
    pub page: PageHeader,
    pub record: EventHeader,
    pub codec: Option<Codec>,
    /// Scratch for a compressed chunk's bytes.
    pub zbuf: &'a mut Vec<u8>,
    pub lost: &'a mut Lost,
    /// Bytes all CPUs' buffers hold.
    pub held: &'a mut usize,
}

/// Lost-event marks met in page headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// Pages whose header says events were lost before them.
    pub pages: u64,
    /// The events they say were lost, where the count is stored.
    pub events: u64,
    /// Pages that say so without a count.
    pub uncounted: u64,
}

/// The data record a stream stands at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The raw timestamp (the trace clock's units).
    pub ts: u64,
    /// The record's data in the stream's buffer.
    pub start: usize,
    pub end: usize,
    /// Where it is for errors: its file offset, or its compressed chunk's.
    pub at: u64,
}

/// One CPU's stream of records.
pub struct CpuStream {
    pub cpu: u32,
    /// The next byte of this CPU's data not yet in `buf`.
    next: u64,
    end: u64,
    /// Compressed data: chunks not yet read.
    chunks_left: u32,
    compressed: bool,
    buf: Vec<u8>,
    /// The file offset of `buf[0]` (plain data), or of the chunk it was decompressed from.
    buf_at: u64,
    /// Where the next page starts in `buf`.
    next_page: usize,
    /// The next record of the current page and the end of its records.
    pos: usize,
    data_end: usize,
    ts: u64,
    pub rec: Option<Record>,
    pub pages: u64,
}

impl CpuStream {
    /// A stream over `d`; compressed data starts with its chunk count.
    pub fn new<R: ReadAt>(d: CpuData, ring: &mut Ring<'_, R>) -> Result<CpuStream, InputError> {
        let mut s = CpuStream {
            cpu: d.cpu,
            next: d.offset,
            end: d.offset + d.size,
            chunks_left: 0,
            compressed: ring.codec.is_some(),
            buf: Vec::new(),
            buf_at: d.offset,
            next_page: 0,
            pos: 0,
            data_end: 0,
            ts: 0,
            rec: None,
            pages: 0,
        };
        if s.compressed {
            let mut w = [0u8; 4];
            ring.src.read(d.offset, &mut w, "a CPU's chunk count")?;
            s.chunks_left = ring.src.u(&w) as u32;
            s.next += 4;
            if u64::from(s.chunks_left) * 8 > d.size.saturating_sub(4) {
                return Err(ring.src.err(
                    d.offset,
                    format!(
                        "CPU {} claims {} compressed chunks in {} bytes",
                        d.cpu, s.chunks_left, d.size
                    ),
                ));
            }
        }
        Ok(s)
    }

    /// The data bytes of the current record.
    pub fn data(&self, r: &Record) -> &[u8] {
        &self.buf[r.start..r.end]
    }

    /// Moves to the next data record (`rec` is `None` at the end of the CPU's data).
    pub fn advance<R: ReadAt>(&mut self, ring: &mut Ring<'_, R>) -> Result<(), InputError> {
        let h = ring.record;
        loop {
            if self.pos + 4 > self.data_end {
                if !self.load_page(ring)? {
                    self.rec = None;
                    return Ok(());
                }
                continue;
            }
            let at = self.pos;
            let word = self.word(at, ring);
            let (type_len, delta) = if ring.src.big {
                (word >> 27, word & ((1 << 27) - 1))
            } else {
                (word & 31, word >> 5)
            };
            let delta = u64::from(delta);
            if type_len == h.padding {
                if delta == 0 || at + 8 > self.data_end {
                    // The rest of the page is empty.
                    self.pos = self.data_end;
                } else {
                    let len = self.word(at + 4, ring) as usize;
                    self.ts = self.ts.wrapping_add(delta);
                    self.pos = (at + 4).saturating_add(len);
                }
                continue;
            }
            let stamp = Some(type_len) == h.time_stamp;
            if type_len == h.time_extend || stamp {
                if at + 8 > self.data_end {
                    return Err(self.corrupt(ring, at, "a time record runs past the page's data"));
                }
                let high = u64::from(self.word(at + 4, ring)) << TS_SHIFT;
                if stamp {
                    self.ts = (high | delta) | (self.ts & TS_MSB);
                } else {
                    self.ts = self.ts.wrapping_add(high + delta);
                }
                self.pos = at + 8;
                continue;
            }
            if type_len > h.data_max {
                return Err(self.corrupt(
                    ring,
                    at,
                    &format!("a record has type {type_len}, which header_event does not define"),
                ));
            }
            let (start, len) = if type_len == 0 {
                if at + 8 > self.data_end {
                    return Err(self.corrupt(
                        ring,
                        at,
                        "a record's length word is past the page's data",
                    ));
                }
                let len = self.word(at + 4, ring) as usize;
                if len < 4 {
                    return Err(self.corrupt(
                        ring,
                        at,
                        &format!("a record's length word says {len} bytes, less than itself"),
                    ));
                }
                (at + 8, (len - 4 + 3) & !3)
            } else {
                (at + 4, type_len as usize * 4)
            };
            if start + len > self.data_end {
                return Err(self.corrupt(
                    ring,
                    at,
                    &format!("a record of {len} bytes runs past the page's data"),
                ));
            }
            self.ts = self.ts.wrapping_add(delta);
            self.pos = start + len;
            self.rec = Some(Record {
                ts: self.ts,
                start,
                end: start + len,
                at: self.at(at),
            });
            return Ok(());
        }
    }

    /// The file position of `buf[i]` (its chunk's, for compressed data).
    fn at(&self, i: usize) -> u64 {
        if self.compressed {
            self.buf_at
        } else {
            self.buf_at + i as u64
        }
    }

    fn word<R: ReadAt>(&self, i: usize, ring: &Ring<'_, R>) -> u32 {
        ring.src.u(&self.buf[i..i + 4]) as u32
    }

    fn corrupt<R: ReadAt>(&self, ring: &Ring<'_, R>, i: usize, what: &str) -> InputError {
        let place = if self.compressed {
            format!(
                "{} bytes into the decompressed chunk at byte {}",
                i, self.buf_at
            )
        } else {
            format!("at byte {}", self.at(i))
        };
        InputError::whole(
            &ring.src.file,
            format!(
                "corrupt ring-buffer data of CPU {}: {what} ({place})",
                self.cpu
            ),
        )
    }

    /// Makes the next page current; false at the end of the CPU's data.
    fn load_page<R: ReadAt>(&mut self, ring: &mut Ring<'_, R>) -> Result<bool, InputError> {
        let ps = ring.page_size;
        if self.next_page >= self.buf.len() && !self.refill(ring)? {
            // The CPU's data is done: its buffer goes.
            *ring.held -= self.buf.len();
            self.buf = Vec::new();
            return Ok(false);
        }
        let p = self.next_page;
        let avail = (self.buf.len() - p).min(ps);
        self.next_page = p + ps;
        self.pages += 1;
        let ph = ring.page;
        let header_end = ph.data_offset;
        if avail < header_end {
            return Err(self.corrupt(
                ring,
                p,
                &format!("the data ends {avail} bytes into a page, inside its header"),
            ));
        }
        let (to, tn) = ph.timestamp;
        let (co, cn) = ph.commit;
        self.ts = ring.src.u(&self.buf[p + to..p + to + tn]);
        let commit = ring.src.u(&self.buf[p + co..p + co + cn]);
        let size = (commit & COMMIT_MASK) as usize;
        let room = ph.data_size.min(ps - header_end);
        if size > room || header_end + size > avail {
            return Err(self.corrupt(
                ring,
                p,
                &format!(
                    "the page header's commit word says {size} bytes of records, but the page \
                     holds at most {}",
                    room.min(avail - header_end)
                ),
            ));
        }
        if commit & MISSED_EVENTS != 0 {
            ring.lost.pages += 1;
            let at = p + header_end + size;
            if commit & MISSED_STORED != 0 && at + cn <= p + avail {
                ring.lost.events += ring.src.u(&self.buf[at..at + cn]);
            } else {
                ring.lost.uncounted += 1;
            }
        }
        self.pos = p + header_end;
        self.data_end = self.pos + size;
        Ok(true)
    }

    /// Accounts for `buf` growing or shrinking to `want` bytes, within [`MAX_HELD_BYTES`].
    fn hold<R: ReadAt>(&self, ring: &mut Ring<'_, R>, want: usize) -> Result<(), InputError> {
        let held = *ring.held - self.buf.len() + want;
        if held > MAX_HELD_BYTES {
            return Err(ring.src.err(
                self.next,
                format!(
                    "the CPUs' ring-buffer data would take more than {MAX_HELD_BYTES} bytes of \
                     memory at once (CPU {} adds {want})",
                    self.cpu
                ),
            ));
        }
        *ring.held = held;
        Ok(())
    }

    /// Reads the next pages (plain) or chunk (compressed) into `buf`; false at the end.
    fn refill<R: ReadAt>(&mut self, ring: &mut Ring<'_, R>) -> Result<bool, InputError> {
        let ps = ring.page_size;
        self.next_page = 0;
        if !self.compressed {
            if self.next >= self.end {
                return Ok(false);
            }
            let want = ((self.end - self.next) as usize).min(READ_AHEAD_BYTES.max(ps) / ps * ps);
            self.hold(ring, want)?;
            self.buf.resize(want, 0);
            ring.src
                .read(self.next, &mut self.buf, "a CPU's ring-buffer pages")?;
            self.buf_at = self.next;
            self.next += want as u64;
            return Ok(true);
        }
        if self.chunks_left == 0 {
            return Ok(false);
        }
        let at = self.next;
        let mut h = [0u8; 8];
        if at + 8 > self.end {
            return Err(ring.src.err(
                at,
                format!("CPU {}'s data ends inside a chunk header", self.cpu),
            ));
        }
        ring.src.read(at, &mut h, "a chunk header")?;
        let zsize = ring.src.u(&h[..4]);
        let size = ring.src.u(&h[4..]) as u32;
        if size > MAX_CHUNK_BYTES || !(size as usize).is_multiple_of(ps) || size == 0 {
            return Err(ring.src.err(
                at,
                format!(
                    "a chunk of CPU {} claims to decompress to {size} bytes; expected whole \
                     {ps}-byte pages, at most {MAX_CHUNK_BYTES} bytes",
                    self.cpu
                ),
            ));
        }
        if zsize > self.end - at - 8 || zsize > super::layout::compressed_bound(u64::from(size)) {
            return Err(ring.src.err(
                at,
                format!(
                    "a chunk of CPU {} claims {zsize} compressed bytes, past the end of its data",
                    self.cpu
                ),
            ));
        }
        self.hold(ring, size as usize)?;
        ring.zbuf.resize(zsize as usize, 0);
        ring.src.read(at + 8, ring.zbuf, "a compressed chunk")?;
        let Some(codec) = ring.codec else {
            return Err(ring
                .src
                .err(at, "compressed event data without a compression"));
        };
        codec
            .decompress(ring.zbuf, size as usize, &mut self.buf)
            .map_err(|m| {
                ring.src
                    .err(at, format!("in a chunk of CPU {}, {m}", self.cpu))
            })?;
        self.buf_at = at;
        self.next = at + 8 + zsize;
        self.chunks_left -= 1;
        Ok(true)
    }
}
