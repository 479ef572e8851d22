//! Text traces inside a container, told by their first bytes: gzip (`1f 8b`), zstd
//! (`28 b5 2f fd`), or a systrace HTML page (`<!DOCTYPE html>` or `<html>`), whose first
//! `<script class="trace-data">` block holding text rather than JSON is the ftrace text.
//! Each is read as a stream (constant memory): the decompressor's window, or a 64 KiB window
//! over the page, so the line reader downstream sees plain text and bounds lines as usual.
//!
//! xz is not read (no streaming pure-Rust decoder is at hand): an xz file is refused with the
//! command that unpacks it.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use memchr::memmem;

use crate::error::InputError;
use crate::trace::trace_dat::ReadAt;

/// How a text trace is packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    Gzip,
    Zstd,
    SystraceHtml,
}

impl Packing {
    /// The name the report shows.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Gzip => "gzip",
            Packing::Zstd => "zstd",
            Packing::SystraceHtml => "systrace html",
        }
    }
}

/// The largest window a zstd frame may ask for (zstd's `--long` maximum by default).
const ZSTD_MAX_WINDOW: u64 = 128 << 20;

const XZ_MAGIC: &[u8] = b"\xfd7zXZ\x00";

/// The packing of `file` from its first bytes (read in place); `None` for plain text (or a
/// pipe, which cannot be read in place).
pub fn sniff(file: &File, label: &str) -> Result<Option<Packing>, InputError> {
    let mut head = [0u8; 512];
    let Ok(n) = ReadAt::read_at(file, &mut head, 0) else {
        return Ok(None);
    };
    let head = &head[..n];
    if head.starts_with(b"\x1f\x8b") {
        return Ok(Some(Packing::Gzip));
    }
    if head.starts_with(b"\x28\xb5\x2f\xfd") {
        return Ok(Some(Packing::Zstd));
    }
    if head.starts_with(XZ_MAGIC) {
        return Err(InputError::whole(
            label,
            "an xz-compressed file, which torpor does not read; unpack it first (`xz -dk FILE`) \
             or compress with gzip or zstd",
        ));
    }
    let text = head.trim_ascii_start();
    let lower: Vec<u8> = text.iter().take(16).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        return Ok(Some(Packing::SystraceHtml));
    }
    Ok(None)
}

/// The plain text of a packed `file` (`label` names it in errors).
pub fn open(file: File, packing: Packing, label: &str) -> Result<Box<dyn BufRead>, InputError> {
    unpack(file, packing).map_err(|e| InputError::whole(label, format!("cannot read: {e}")))
}

fn unpack(file: File, packing: Packing) -> Result<Box<dyn BufRead>, std::io::Error> {
    let file = BufReader::with_capacity(1 << 16, file);
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
        Packing::SystraceHtml => {
            Box::new(BufReader::with_capacity(1 << 16, SystraceText::new(file)))
        }
    })
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
