//! Text traces inside a container, told by their first bytes: gzip (`1f 8b`), zstd
//! (`28 b5 2f fd`), xz (`fd 37 7a 58 5a 00`), or a systrace HTML page (`<!DOCTYPE html>` or
//! `<html>`), whose first `<script class="trace-data">` block holding text rather than JSON is
//! the ftrace text. Each is read as a stream (constant memory): the decompressor's window, or a
//! 64 KiB window over the page, so the line reader downstream sees plain text and bounds lines
//! as usual.
//!
//! xz is decoded by `xz4rust` (pure Rust, a port of XZ Embedded), one stream after another as
//! `xz -d` reads concatenated files ([`XzText`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use memchr::memmem;
use xz4rust::{XzDecoder, XzError, XzNextBlockResult};

use crate::error::InputError;
use crate::trace::trace_dat::ReadAt;

/// How a text trace is packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    Gzip,
    Zstd,
    Xz,
    SystraceHtml,
}

impl Packing {
    /// The name the report shows.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Gzip => "gzip",
            Packing::Zstd => "zstd",
            Packing::Xz => "xz",
            Packing::SystraceHtml => "systrace html",
        }
    }
}

/// The largest window a zstd frame may ask for (zstd's `--long` maximum by default).
const ZSTD_MAX_WINDOW: u64 = 128 << 20;

/// The largest dictionary an xz stream may ask for: twice `xz -9`'s 64 MiB, as zstd's window.
const XZ_MAX_DICT: usize = 128 << 20;

/// An xz stream's header magic (the xz file format, 2.1.1.1).
const XZ_MAGIC: &[u8] = b"\xfd7zXZ\x00";

/// The packing of `file` from its first bytes (read in place); `None` for plain text (or a
/// pipe, which cannot be read in place: see [`sniff_head`]).
pub fn sniff(file: &File) -> Option<Packing> {
    let mut head = [0u8; 512];
    let n = ReadAt::read_at(file, &mut head, 0).ok()?;
    sniff_head(&head[..n])
}

/// The packing told by `head`, a trace's first bytes; `None` for plain text.
pub fn sniff_head(head: &[u8]) -> Option<Packing> {
    if head.starts_with(b"\x1f\x8b") {
        return Some(Packing::Gzip);
    }
    if head.starts_with(b"\x28\xb5\x2f\xfd") {
        return Some(Packing::Zstd);
    }
    if head.starts_with(XZ_MAGIC) {
        return Some(Packing::Xz);
    }
    let text = head.trim_ascii_start();
    let lower: Vec<u8> = text.iter().take(16).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        return Some(Packing::SystraceHtml);
    }
    None
}

/// The plain text of packed `input`, a file or a pipe (`label` names it in errors).
pub fn open(
    input: impl Read + 'static,
    packing: Packing,
    label: &str,
) -> Result<Box<dyn BufRead>, InputError> {
    unpack(input, packing).map_err(|e| InputError::whole(label, format!("cannot read: {e}")))
}

fn unpack(
    input: impl Read + 'static,
    packing: Packing,
) -> Result<Box<dyn BufRead>, std::io::Error> {
    let file = BufReader::with_capacity(1 << 16, input);
    Ok(match packing {
        Packing::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(file),
        )),
        Packing::Zstd => Box::new(BufReader::with_capacity(
            1 << 16,
            ruzstd::decoding::StreamingDecoder::new_with_max_window_size(file, ZSTD_MAX_WINDOW)
                .map_err(|e| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("not a valid zstd frame: {e}"),
                    )
                })?,
        )),
        Packing::Xz => Box::new(BufReader::with_capacity(1 << 16, XzText::new(file))),
        Packing::SystraceHtml => {
            Box::new(BufReader::with_capacity(1 << 16, SystraceText::new(file)))
        }
    })
}

/// The text of an xz file: its streams in turn, each followed by stream padding (zero bytes,
/// a multiple of four: the xz file format, 2.2), as `xz -d` reads concatenated files. A file
/// that ends inside a stream, damaged data (every header, block and the index carry a CRC32;
/// the content a CRC32 or CRC64 check), or bytes after a stream that are neither padding nor
/// another stream are an `InvalidData` error saying which. A stream whose content check is
/// SHA-256 is refused (xz4rust is built without it; xz's default is CRC64).
pub struct XzText<R> {
    inner: R,
    decoder: Box<XzDecoder<'static>>,
    /// Inside a stream (else between streams, or past the last).
    in_stream: bool,
    done: bool,
    /// Bytes of the file consumed so far, for errors.
    offset: u64,
}

impl<R: BufRead> XzText<R> {
    pub fn new(inner: R) -> Self {
        XzText {
            inner,
            decoder: XzDecoder::in_heap_with_alloc_dict_size(1 << 20, XZ_MAX_DICT),
            in_stream: true,
            done: false,
            offset: 0,
        }
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.offset += n as u64;
    }

    /// An error in the xz file; `at` adds the byte offset where it is known exactly (the
    /// decoder takes its input in blocks, so damage inside a stream has none).
    fn damaged(&self, what: String, at: bool) -> std::io::Error {
        let what = if at {
            format!("{what} (at byte {} of the xz file)", self.offset)
        } else {
            what
        };
        std::io::Error::new(std::io::ErrorKind::InvalidData, what)
    }

    /// After a stream: skips its padding, then starts the next stream or ends.
    fn between_streams(&mut self) -> std::io::Result<()> {
        let mut padding = 0u64;
        loop {
            let head = self.inner.fill_buf()?;
            let zeros = head.iter().take_while(|&&b| b == 0).count();
            let at_end = head.is_empty();
            let more = zeros < head.len();
            self.consume(zeros);
            padding += zeros as u64;
            if at_end || more {
                break;
            }
        }
        if !padding.is_multiple_of(4) {
            return Err(self.damaged(
                format!(
                    "expected xz stream padding in whole multiples of 4 bytes, got {padding} zero \
                     bytes"
                ),
                true,
            ));
        }
        let head = self.inner.fill_buf()?;
        if head.is_empty() {
            self.done = true;
        } else if XZ_MAGIC.starts_with(&head[..head.len().min(XZ_MAGIC.len())]) {
            self.decoder.reset();
            self.in_stream = true;
        } else {
            return Err(self.damaged(
                "expected another xz stream or the end of the file after an xz stream, found \
                 other bytes"
                    .into(),
                true,
            ));
        }
        Ok(())
    }
}

/// An xz4rust error in words.
fn xz_error(e: &XzError) -> String {
    match e {
        XzError::DictionaryTooLarge(bytes) => format!(
            "the xz data needs a dictionary of {bytes} bytes, more than the {} MiB torpor \
             allows; recompress with a preset up to `xz -9`",
            XZ_MAX_DICT >> 20
        ),
        XzError::Sha256NotSupported => {
            "the xz stream's content check is SHA-256, which torpor does not verify; recompress \
             with `xz --check=crc64` (xz's default)"
                .into()
        }
        XzError::BcjFilterNotSupported | XzError::DeltaFilterUnsupported => {
            "the xz stream uses a BCJ or delta filter, which a text trace has no use for; \
             recompress with plain `xz`"
                .into()
        }
        other => format!("the xz data is damaged or not xz ({other})"),
    }
}

impl<R: BufRead> Read for XzText<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.done {
                return Ok(0);
            }
            if !self.in_stream {
                self.between_streams()?;
                continue;
            }
            let input = self.inner.fill_buf()?;
            if input.is_empty() {
                return Err(self.damaged(
                    format!(
                        "the file ends inside an xz stream, after byte {}: it is cut short",
                        self.offset
                    ),
                    false,
                ));
            }
            match self.decoder.decode(input, out) {
                Ok(XzNextBlockResult::NeedMoreData(used, made)) => {
                    self.consume(used);
                    if made > 0 {
                        return Ok(made);
                    }
                }
                Ok(XzNextBlockResult::EndOfStream(used, made)) => {
                    self.consume(used);
                    self.in_stream = false;
                    if made > 0 {
                        return Ok(made);
                    }
                }
                Err(e) => return Err(self.damaged(xz_error(&e), false)),
            }
        }
    }
}

/// The ftrace text of a systrace page: the content of its first `trace-data` script block
/// that does not start with `{` (the JSON blocks), leading blank space skipped.
pub struct SystraceText<R> {
    inner: R,
    pending: Vec<u8>,
    state: State,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Looking for the next block's opening tag.
    Seeking,
    /// After an opening tag: its `>`, blank space, then the first byte tells text from JSON.
    Opening,
    Text,
    Done,
}

const TAG: &[u8] = b"class=\"trace-data\"";
const END: &[u8] = b"</script>";
/// Bytes read from the page at a time.
const CHUNK: usize = 64 << 10;

impl<R: Read> SystraceText<R> {
    pub fn new(inner: R) -> Self {
        SystraceText {
            inner,
            pending: Vec::with_capacity(2 * CHUNK),
            state: State::Seeking,
        }
    }

    /// Reads more of the page; false at its end.
    fn more(&mut self) -> std::io::Result<bool> {
        let at = self.pending.len();
        self.pending.resize(at + CHUNK, 0);
        let n = self.inner.read(&mut self.pending[at..])?;
        self.pending.truncate(at + n);
        Ok(n > 0)
    }

    /// Keeps only the last `keep` bytes of `pending` (a tag may straddle two reads).
    fn keep_tail(&mut self, keep: usize) {
        let cut = self.pending.len().saturating_sub(keep);
        self.pending.drain(..cut);
    }
}

impl<R: Read> Read for SystraceText<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.state {
                State::Done => return Ok(0),
                State::Seeking => match memmem::find(&self.pending, TAG) {
                    Some(at) => {
                        self.pending.drain(..at + TAG.len());
                        self.state = State::Opening;
                    }
                    None => {
                        self.keep_tail(TAG.len());
                        if !self.more()? {
                            return Err(std::io::Error::new(
                                std::io::ErrorKind::InvalidData,
                                "expected a systrace page with a `<script class=\"trace-data\">` \
                                 block of ftrace text, found none",
                            ));
                        }
                    }
                },
                State::Opening => {
                    let start = memchr::memchr(b'>', &self.pending).map(|gt| {
                        gt + 1
                            + self.pending[gt + 1..]
                                .iter()
                                .take_while(|b| b.is_ascii_whitespace())
                                .count()
                    });
                    match start {
                        Some(s) if s < self.pending.len() => {
                            let json = self.pending[s] == b'{';
                            self.pending.drain(..s);
                            self.state = if json { State::Seeking } else { State::Text };
                        }
                        _ => {
                            if self.pending.len() > CHUNK {
                                // Blank space without end: keep the tag's `>` found, if any.
                                let gt = memchr::memchr(b'>', &self.pending);
                                let keep = gt.map_or(self.pending.len(), |g| g + 1);
                                self.pending.truncate(keep);
                            }
                            if !self.more()? {
                                self.state = State::Done;
                            }
                        }
                    }
                }
                State::Text => {
                    if let Some(end) = memmem::find(&self.pending, END) {
                        if end == 0 {
                            self.state = State::Done;
                            continue;
                        }
                        let n = end.min(out.len());
                        out[..n].copy_from_slice(&self.pending[..n]);
                        self.pending.drain(..n);
                        return Ok(n);
                    }
                    let safe = self.pending.len().saturating_sub(END.len() - 1);
                    if safe > 0 {
                        let n = safe.min(out.len());
                        out[..n].copy_from_slice(&self.pending[..n]);
                        self.pending.drain(..n);
                        return Ok(n);
                    }
                    if !self.more()? {
                        // The page ends inside the block: what is left is text.
                        let n = self.pending.len().min(out.len());
                        out[..n].copy_from_slice(&self.pending[..n]);
                        self.pending.drain(..n);
                        if self.pending.is_empty() {
                            self.state = State::Done;
                        }
                        return Ok(n);
                    }
                }
            }
        }
    }
}
