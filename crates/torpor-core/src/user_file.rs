//! Opening and reading the files a user names, within bounds.
//!
//! Every file torpor reads comes through here, so that each refusal is the same one line
//! whatever the format:
//!
//! 1. A directory, or anything that is not a regular file, a pipe or a character device, is
//!    refused by name ("is a directory; expected a device dump").
//! 2. A pipe (a FIFO, or `<(nvme id-ctrl ...)` from the shell) is opened without waiting for a
//!    writer, then read normally: a FIFO that nobody writes to ends at once instead of
//!    blocking for ever, and a whole-file read of one that gave nothing says so (not "empty
//!    file" or a missing table). A file that must be regular ([`require_regular`]: a sweep's
//!    base scenario) is refused as a FIFO before anything is opened.
//! 3. A whole-file read stops one byte after its limit, so `/dev/zero` or a 4 GB file named by
//!    mistake costs at most the limit: the error says the limit and what was being read.
//! 4. Text is decoded by its byte-order mark: UTF-8 with or without one, UTF-16 in either byte
//!    order. Anything else must be UTF-8: strictly, the first byte that is not is reported with
//!    its line and column; leniently (device dumps, whose tables are ASCII while a localized
//!    Windows build prints other lines in its code page), such bytes become U+FFFD and a note
//!    says how many and where the first was.
//!
//! Streamed traces use [`open`] and [`read_line`], which bound each line instead of the file.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::InputError;

/// The largest device dump (`nvme id-ctrl -o json`, `smartctl -a`) or preset read whole:
/// real ones are a few KiB.
pub const MAX_DUMP_BYTES: u64 = 1 << 20;

/// The largest scenario file read whole.
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

/// The longest line of a streamed trace. An iolog line holds a file name (Linux's `PATH_MAX`
/// is 4096 bytes) and a few numbers; a line longer than this is not a trace line.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// How a text file was encoded, when it was not plain UTF-8 (shown to the user as a note).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    /// A note for the user when decoding was needed, `None` for plain UTF-8.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Encoding::Utf8 => None,
            Encoding::Utf8Bom => Some("the file starts with a UTF-8 byte-order mark; skipped"),
            Encoding::Utf16Le => Some("the file is UTF-16 (little-endian); decoded"),
            Encoding::Utf16Be => Some("the file is UTF-16 (big-endian); decoded"),
        }
    }
}

/// A text file read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextFile {
    pub text: String,
    pub encoding: Encoding,
    /// What decoding had to do, for the user to see (a byte-order mark skipped, UTF-16
    /// decoded, bytes that are not UTF-8 replaced).
    pub notes: Vec<String>,
}

/// What to do with bytes that are not UTF-8 (see the module doc, step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoding {
    Strict,
    Lenient,
}

/// Opens `path` for reading (`label` names it in errors, `what` says what it should be).
pub fn open(path: &Path, label: &str, what: &str) -> Result<File, InputError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

    let meta = std::fs::metadata(path).map_err(|e| io_error(label, &e))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(InputError::whole(
            label,
            format!("is a directory; expected {what}"),
        ));
    }
    let pipe = kind.is_fifo();
    if !(kind.is_file() || pipe || kind.is_char_device()) {
        return Err(InputError::whole(
            label,
            format!("is not a regular file; expected {what}"),
        ));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    if pipe {
        // Opening a FIFO for reading waits for a writer; O_NONBLOCK opens it at once.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_error(label, &e))?;
    if pipe {
        // Reads then wait for data as usual; with no writer at all they see the end at once.
        clear_nonblocking(&file).map_err(|e| io_error(label, &e))?;
    }
    Ok(file)
}

/// Refuses anything at `path` but a regular file (a FIFO, a device), for a file that is read
/// again or named relative to another and so cannot be a stream: nothing is opened, so
/// nothing waits for a writer.
pub fn require_regular(path: &Path, label: &str, what: &str) -> Result<(), InputError> {
    use std::os::unix::fs::FileTypeExt;

    let kind = std::fs::metadata(path)
        .map_err(|e| io_error(label, &e))?
        .file_type();
    let other = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "is a directory"
    } else if kind.is_fifo() {
        "is a FIFO (a named pipe), not a regular file"
    } else if kind.is_char_device() || kind.is_block_device() {
        "is a device, not a regular file"
    } else {
        "is not a regular file"
    };
    Err(InputError::whole(
        label,
        format!("{other}; expected {what}"),
    ))
}

fn clear_nonblocking(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the duration of both calls;
    // F_GETFL and F_SETFL read and set its status flags and touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// An OS error on `label` in words: "no such file", "permission denied", ...
pub fn io_error(label: &str, e: &std::io::Error) -> InputError {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => format!("cannot read: {e}"),
    };
    InputError::whole(label, what)
}

/// Reads the file at `path` whole, as text, refusing more than `limit` bytes.
/// A FIFO that gives no byte at all (no process had it open for writing, or the writer
/// wrote nothing) is an error saying so, not an empty file.
pub fn read_text(
    path: &Path,
    label: &str,
    what: &str,
    limit: u64,
    decoding: Decoding,
) -> Result<TextFile, InputError> {
    use std::os::unix::fs::FileTypeExt;

    let file = open(path, label, what)?;
    let pipe = file.metadata().is_ok_and(|m| m.file_type().is_fifo());
    let text = read_bounded(file, label, what, limit, decoding)?;
    if pipe && text.text.is_empty() {
        return Err(InputError::whole(
            label,
            format!(
                "a FIFO (named pipe) that gave nothing to read: no process was writing to it; \
                 expected {what}"
            ),
        ));
    }
    Ok(text)
}

/// Reads standard input whole, as [`read_text`] reads a file (`label` names it in errors).
pub fn read_stdin(
    label: &str,
    what: &str,
    limit: u64,
    decoding: Decoding,
) -> Result<TextFile, InputError> {
    read_bounded(std::io::stdin().lock(), label, what, limit, decoding)
}

/// Reads `source` to its end, refusing more than `limit` bytes, and decodes it.
fn read_bounded(
    source: impl Read,
    label: &str,
    what: &str,
    limit: u64,
    decoding: Decoding,
) -> Result<TextFile, InputError> {
    let mut bytes = Vec::new();
    source
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(label, &e))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::whole(
            label,
            format!(
                "larger than {} MiB, the limit for {what}; is this the right file?",
                limit >> 20
            ),
        ));
    }
    decode(label, bytes, decoding)
}

/// Decodes `bytes` as text by its byte-order mark (see the module doc, step 4).
pub fn decode(label: &str, bytes: Vec<u8>, decoding: Decoding) -> Result<TextFile, InputError> {
    let utf16 = |be: bool, body: &[u8]| -> Result<String, InputError> {
        if body.len() % 2 == 1 {
            return Err(InputError::whole(
                label,
                "UTF-16 text with an odd number of bytes: the file is cut short",
            ));
        }
        let units = body.chunks_exact(2).map(|p| {
            if be {
                u16::from_be_bytes([p[0], p[1]])
            } else {
                u16::from_le_bytes([p[0], p[1]])
            }
        });
        let mut text = String::with_capacity(body.len() / 2);
        for (i, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok(c) => text.push(c),
                Err(_) => {
                    return Err(InputError::at(
                        label,
                        InputError::line_of_offset(&text, text.len()),
                        format!(
                            "invalid UTF-16 (an unpaired surrogate at byte {})",
                            2 + 2 * i
                        ),
                    ))
                }
            }
        }
        Ok(text)
    };
    let mut notes = Vec::new();
    let (text, encoding) = match bytes.as_slice() {
        [0xEF, 0xBB, 0xBF, rest @ ..] => (
            utf8(label, rest.to_vec(), decoding, &mut notes)?,
            Encoding::Utf8Bom,
        ),
        [0xFF, 0xFE, rest @ ..] => (utf16(false, rest)?, Encoding::Utf16Le),
        [0xFE, 0xFF, rest @ ..] => (utf16(true, rest)?, Encoding::Utf16Be),
        _ => (utf8(label, bytes, decoding, &mut notes)?, Encoding::Utf8),
    };
    if let Some(note) = encoding.note() {
        notes.insert(0, note.to_string());
    }
    Ok(TextFile {
        text,
        encoding,
        notes,
    })
}

/// `bytes` as UTF-8. Strict: an error at the line and column of the first byte that is not.
/// Lenient: those bytes replaced, with a note in `notes`.
fn utf8(
    label: &str,
    bytes: Vec<u8>,
    decoding: Decoding,
    notes: &mut Vec<String>,
) -> Result<String, InputError> {
    let e = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e,
    };
    let bytes = e.as_bytes();
    let at = e.utf8_error().valid_up_to();
    if decoding == Decoding::Strict {
        return Err(not_utf8(label, &bytes[..at], bytes[at], 1));
    }
    let (line, column) = position(&bytes[..at], 1);
    let text = String::from_utf8_lossy(bytes).into_owned();
    let replaced = bytes
        .utf8_chunks()
        .filter(|c| !c.invalid().is_empty())
        .count();
    notes.push(format!(
        "{replaced} byte sequence(s) that are not UTF-8 were read as U+FFFD, the first at line \
         {line}, column {column} (0x{:02x}); the power-state table is ASCII, other lines are \
         only shown",
        bytes[at]
    ));
    Ok(text)
}

/// The error for a byte that is not UTF-8 after `before` (the valid text that precedes it),
/// counting lines from `first_line`.
fn not_utf8(label: &str, before: &[u8], byte: u8, first_line: usize) -> InputError {
    let (line, column) = position(before, first_line);
    InputError::at(
        label,
        line,
        format!("expected UTF-8 text; byte 0x{byte:02x} at column {column} is not"),
    )
}

/// The line and column of the byte that follows `before`, counting lines from `first_line`.
fn position(before: &[u8], first_line: usize) -> (usize, usize) {
    let newlines = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (first_line + newlines, before.len() - line_start + 1)
}

/// Reads one line of a streamed trace into `buf` (cleared first), newline included; returns
/// its length in bytes, 0 at the end. A line longer than [`MAX_LINE_BYTES`] or not UTF-8 is an
/// error at `line`; the reader never holds more than one bounded line.
pub fn read_line<R: BufRead>(
    reader: &mut R,
    buf: &mut String,
    label: &str,
    line: usize,
) -> Result<usize, InputError> {
    let mut bytes = std::mem::take(buf).into_bytes();
    read_line_bytes(reader, &mut bytes, label, line)?;
    match String::from_utf8(bytes) {
        Ok(text) => {
            *buf = text;
            Ok(buf.len())
        }
        Err(e) => {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            Err(not_utf8(label, &bytes[..at], bytes[at], line))
        }
    }
}

/// [`read_line`] without the UTF-8 check, for formats whose lines may carry arbitrary bytes
/// (an ftrace line quotes task names and marker text as the kernel got them): the caller
/// decodes only the fields it reads. Reuses `buf`'s allocation, so a stream of lines costs
/// no allocation once the longest line has been seen.
pub fn read_line_bytes<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    label: &str,
    line: usize,
) -> Result<usize, InputError> {
    buf.clear();
    loop {
        let chunk = reader
            .fill_buf()
            .map_err(|e| InputError::at(label, line, format!("cannot read the line: {e}")))?;
        if chunk.is_empty() {
            break;
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > MAX_LINE_BYTES {
            return Err(InputError::at(
                label,
                line,
                format!(
                    "the line is longer than {} KiB, the limit for one line of a trace; is \
                     this a text trace?",
                    MAX_LINE_BYTES >> 10
                ),
            ));
        }
        buf.extend_from_slice(&chunk[..take]);
        reader.consume(take);
        if done {
            break;
        }
    }
    Ok(buf.len())
}

/// Counts the lines left in `reader` without parsing them, reading in chunks (a replay cut by
/// the run's end says how much of its trace it did not reach). A last line without its newline
/// counts too.
pub fn count_lines_left<R: BufRead>(reader: &mut R, label: &str) -> Result<u64, InputError> {
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let chunk = reader.fill_buf().map_err(|e| {
            InputError::whole(label, format!("cannot read the rest of the trace: {e}"))
        })?;
        let Some(&end) = chunk.last() else {
            break;
        };
        lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        last = end;
        let n = chunk.len();
        reader.consume(n);
    }
    Ok(lines + u64::from(last != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_marks_choose_the_decoding() {
        let d = |b: &[u8]| decode("f", b.to_vec(), Decoding::Strict).unwrap();
        assert_eq!(d(b"ab\n").text, "ab\n");
        assert_eq!(d(b"ab\n").encoding, Encoding::Utf8);
        assert_eq!(d(b"\xEF\xBB\xBF{}").text, "{}");
        assert_eq!(d(b"\xEF\xBB\xBF{}").encoding, Encoding::Utf8Bom);
        // "{}" in UTF-16: 7B 00 7D 00 (LE), 00 7B 00 7D (BE).
        assert_eq!(d(b"\xFF\xFE\x7B\x00\x7D\x00").text, "{}");
        assert_eq!(d(b"\xFE\xFF\x00\x7B\x00\x7D").encoding, Encoding::Utf16Be);
        let e = decode("f", b"\xFF\xFE\x7B".to_vec(), Decoding::Strict).unwrap_err();
        assert!(e.message.contains("odd number of bytes"), "{e}");
    }

    #[test]
    fn the_first_byte_that_is_not_utf8_is_reported_by_line_and_column() {
        let e = decode("f", b"line one\nab\xFFc\n".to_vec(), Decoding::Strict).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f:2: expected UTF-8 text; byte 0xff at column 3 is not"
        );
        // Leniently: two bad bytes (0xFF on line 2, 0xA0 on line 3) replaced, and noted.
        let got = decode(
            "f",
            b"line one\nab\xFFc\n\xA0\n".to_vec(),
            Decoding::Lenient,
        )
        .unwrap();
        assert_eq!(got.text, "line one\nab\u{FFFD}c\n\u{FFFD}\n");
        assert_eq!(
            got.notes,
            vec![
                "2 byte sequence(s) that are not UTF-8 were read as U+FFFD, the first at line 2, \
                  column 3 (0xff); the power-state table is ASCII, other lines are only shown"
                    .to_string()
            ]
        );
    }

    #[test]
    fn lines_are_bounded_and_checked() {
        let mut buf = String::new();
        let mut r: &[u8] = b"a b\nc";
        assert_eq!(read_line(&mut r, &mut buf, "t", 1).unwrap(), 4);
        assert_eq!(buf, "a b\n");
        assert_eq!(read_line(&mut r, &mut buf, "t", 2).unwrap(), 1);
        assert_eq!(read_line(&mut r, &mut buf, "t", 3).unwrap(), 0);
        // One byte over the limit, with no newline, through a small buffer.
        let long = vec![b'x'; MAX_LINE_BYTES + 1];
        let mut r = std::io::BufReader::with_capacity(100, long.as_slice());
        let e = read_line(&mut r, &mut buf, "t", 7).unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(e.message.contains("longer than 64 KiB"), "{e}");
        // Exactly the limit is one line.
        let mut exact = vec![b'x'; MAX_LINE_BYTES - 1];
        exact.push(b'\n');
        let mut r = exact.as_slice();
        assert_eq!(read_line(&mut r, &mut buf, "t", 1).unwrap(), MAX_LINE_BYTES);
        let mut r: &[u8] = b"ok\n\xC3(\n";
        read_line(&mut r, &mut buf, "t", 4).unwrap();
        let e = read_line(&mut r, &mut buf, "t", 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t:5: expected UTF-8 text; byte 0xc3 at column 1 is not"
        );
    }

    #[test]
    fn directories_and_oversized_files_are_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("torpor-uf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let strict = Decoding::Strict;
        let e = read_text(&dir, "d", "a device dump", MAX_DUMP_BYTES, strict).unwrap_err();
        assert_eq!(e.to_string(), "d: is a directory; expected a device dump");
        let big = dir.join("big");
        std::fs::write(&big, vec![b'a'; (1 << 20) + 1]).unwrap();
        let e = read_text(&big, "big", "a device dump", MAX_DUMP_BYTES, strict).unwrap_err();
        assert!(e.message.starts_with("larger than 1 MiB"), "{e}");
        std::fs::write(&big, vec![b'a'; 1 << 20]).unwrap();
        assert!(read_text(&big, "big", "a device dump", MAX_DUMP_BYTES, strict).is_ok());
        let e = read_text(&dir.join("none"), "none", "x", 10, strict).unwrap_err();
        assert_eq!(e.to_string(), "none: no such file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dev_zero_costs_at_most_the_limit() {
        let e = read_text(
            Path::new("/dev/zero"),
            "z",
            "a scenario",
            1 << 20,
            Decoding::Strict,
        )
        .unwrap_err();
        assert!(e.message.starts_with("larger than 1 MiB"), "{e}");
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_by_name_instead_of_blocking() {
        let dir = std::env::temp_dir().join(format!("torpor-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let got = read_text(&fifo, "f", "a dump", 100, Decoding::Strict).unwrap_err();
        assert_eq!(
            got.to_string(),
            "f: a FIFO (named pipe) that gave nothing to read: no process was writing to it; \
             expected a dump"
        );
        let got = require_regular(&fifo, "f", "a scenario").unwrap_err();
        assert_eq!(
            got.to_string(),
            "f: is a FIFO (a named pipe), not a regular file; expected a scenario"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
