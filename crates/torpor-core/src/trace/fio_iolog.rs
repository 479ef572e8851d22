//! Streaming reader for fio iologs, versions 2 and 3 (`write_iolog` / `read_iolog`).
//!
//! Read for this module: fio's `iolog.c` (`read_iolog`, `init_iolog_read`,
//! `delay_since_ttime`, `read_iolog_get`, `log_io_u`) and HOWTO.rst "Trace file format v2/v3",
//! axboe/fio at commit f5344384f7c7. The formats:
//!
//! * Line 1 is the header, `fio version 2 iolog` or `fio version 3 iolog` (fio compares a
//!   prefix, so trailing text is tolerated; so is it here).
//! * v2 lines are `filename action` for file actions (`add`, `open`, `close`) and
//!   `filename action offset length` for `read`, `write`, `sync`, `datasync`, `trim` and
//!   `wait`. Offsets and lengths are bytes.
//! * v3 lines carry a leading timestamp: microseconds since the logging job started (fio's
//!   `log_io_u` prints `utime_since_now(io_log_start_time)`). v3 forbids `wait`: the
//!   timestamps carry the timing.
//! * `wait offset length`: the HOWTO says "wait for `offset` microseconds, relative to the
//!   previous `wait`"; the length is ignored. (fio's code, `read_iolog_get`, instead compares
//!   the value with *milliseconds* since fio started, which is why users find v2 waits
//!   confusing: axboe/fio#247, #1568. torpor follows the documented meaning.)
//!
//! Where fio would log an error and skip a bad line, torpor stops with an [`InputError`]
//! naming the file and line, so a typo never silently changes the workload. The same goes for
//! v3 timestamps that go backwards (fio treats them as no delay) and for IO on a file that was
//! never `add`ed and `open`ed (fio's HOWTO requires both; fio itself crashes, axboe/fio#1567).
//!
//! The reader holds one line buffer (at most [`MAX_LINE_BYTES`]) and the names of the files the
//! log added (at most [`MAX_LOGGED_FILES`], looked up by hash), never the log.

use std::collections::HashMap;
use std::io::BufRead;

use crate::error::{shown, InputError};
#[cfg(doc)]
use crate::user_file::MAX_LINE_BYTES;
use crate::user_file::{count_lines_left, read_line};

/// The most distinct files one log may `add`: fio opens each, so real logs name a handful.
pub const MAX_LOGGED_FILES: usize = 1 << 20;
use crate::storage::io::{IoOp, IoRequest};

const HEADER_V2: &str = "fio version 2 iolog";
const HEADER_V3: &str = "fio version 3 iolog";

/// Which iolog format a file is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IologVersion {
    V2,
    V3,
}

/// What one line of an iolog asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IologAction {
    /// A read or a write.
    Io(IoRequest),
    /// v2 only: idle until `us` microseconds after the previous `wait` ended.
    Wait { us: u64 },
    /// `sync` or `datasync`: counted, not modelled (devices take only reads and writes).
    Sync,
    /// `trim`: counted, not modelled.
    Trim { offset: u64, bytes: u32 },
    /// `add`, `open` or `close`: bookkeeping only; every file maps onto the one device.
    File,
}

/// One parsed line: its action and, in v3, its timestamp in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IologEntry {
    pub timestamp_us: Option<u64>,
    pub action: IologAction,
    /// 1-based line number, for errors found later (e.g. by the replay).
    pub line: usize,
}

/// How many lines of each kind the reader has returned so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct IologCounts {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub trims: u64,
    pub waits: u64,
    pub file_actions: u64,
}

/// Pulls [`IologEntry`]s out of an iolog one line at a time.
pub struct IologReader<R> {
    reader: R,
    file: String,
    line_no: usize,
    buf: String,
    version: IologVersion,
    last_timestamp_us: Option<u64>,
    /// The files the log added, and whether each is open now.
    files: HashMap<String, bool>,
    counts: IologCounts,
}

impl<R: BufRead> IologReader<R> {
    /// Reads the header line. `file` is the name errors will carry.
    pub fn new(mut reader: R, file: &str) -> Result<Self, InputError> {
        let mut buf = String::new();
        read_line(&mut reader, &mut buf, file, 1)?;
        let version = if buf.starts_with(HEADER_V2) {
            IologVersion::V2
        } else if buf.starts_with(HEADER_V3) {
            IologVersion::V3
        } else {
            return Err(InputError::at(
                file,
                1,
                format!(
                    "expected the header `{HEADER_V2}` or `{HEADER_V3}`, got {}",
                    shown(buf.trim_end())
                ),
            ));
        };
        Ok(IologReader {
            reader,
            file: file.to_string(),
            line_no: 1,
            buf,
            version,
            last_timestamp_us: None,
            files: HashMap::new(),
            counts: IologCounts::default(),
        })
    }

    pub fn version(&self) -> IologVersion {
        self.version
    }

    pub fn counts(&self) -> IologCounts {
        self.counts
    }

    /// The name errors carry.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Counts the lines not read yet, without parsing them (a replay cut by the run's end
    /// says how much of the log it did not reach).
    pub fn count_rest(&mut self) -> Result<u64, InputError> {
        count_lines_left(&mut self.reader, &self.file)
    }

    /// The next entry, or `None` at the end of the log. Blank lines are skipped.
    pub fn next_entry(&mut self) -> Result<Option<IologEntry>, InputError> {
        loop {
            self.line_no += 1;
            if read_line(&mut self.reader, &mut self.buf, &self.file, self.line_no)? == 0 {
                return Ok(None);
            }
            if self.buf.trim().is_empty() {
                continue;
            }
            let entry = self
                .parse_line()
                .map_err(|m| InputError::at(&self.file, self.line_no, m))?;
            self.count(&entry.action);
            return Ok(Some(entry));
        }
    }

    fn count(&mut self, action: &IologAction) {
        let c = &mut self.counts;
        match action {
            IologAction::Io(IoRequest { op: IoOp::Read, .. }) => c.reads += 1,
            IologAction::Io(IoRequest {
                op: IoOp::Write, ..
            }) => c.writes += 1,
            IologAction::Wait { .. } => c.waits += 1,
            IologAction::Sync => c.syncs += 1,
            IologAction::Trim { .. } => c.trims += 1,
            IologAction::File => c.file_actions += 1,
        }
    }

    /// Parses `self.buf` (one non-blank line); the error is the message only.
    fn parse_line(&mut self) -> Result<IologEntry, String> {
        // Borrow the line out of `self` so the file table can be updated while it is read.
        let line = std::mem::take(&mut self.buf);
        let result = self.parse_fields(&line);
        self.buf = line;
        result
    }

    fn parse_fields(&mut self, line: &str) -> Result<IologEntry, String> {
        let mut fields = line.split_ascii_whitespace();
        let timestamp_us = match self.version {
            IologVersion::V2 => None,
            IologVersion::V3 => Some(self.parse_timestamp(fields.next())?),
        };
        let (Some(name), Some(act)) = (fields.next(), fields.next()) else {
            return Err(self.shape_hint());
        };
        let offset = fields.next();
        let length = fields.next();
        if let Some(extra) = fields.next() {
            return Err(format!(
                "unexpected extra field {}; {}",
                shown(extra),
                self.shape_hint()
            ));
        }
        let action = match (act, offset, length) {
            ("add" | "open" | "close", None, None) => {
                self.file_action(name, act)?;
                IologAction::File
            }
            ("add" | "open" | "close", _, _) => {
                return Err(format!(
                    "file action {} takes no offset or length",
                    shown(act)
                ));
            }
            ("read" | "write" | "sync" | "datasync" | "trim" | "wait", Some(o), Some(l)) => {
                self.io_action(name, act, parse_offset(o)?, parse_length(l)?)?
            }
            ("read" | "write" | "sync" | "datasync" | "trim" | "wait", _, _) => {
                return Err(format!(
                    "action {} needs an offset and a length in bytes",
                    shown(act)
                ));
            }
            _ if self.version == IologVersion::V2 && name.parse::<u64>().is_ok() => {
                return Err(format!(
                    "unknown action {}: this line starts with a timestamp, as in a version 3 \
                     iolog, but the header says `{HEADER_V2}`",
                    shown(act)
                ));
            }
            _ => {
                return Err(format!(
                    "unknown action {}; expected add, open, close, read, write, sync, \
                     datasync, trim or wait",
                    shown(act)
                ));
            }
        };
        Ok(IologEntry {
            timestamp_us,
            action,
            line: self.line_no,
        })
    }

    fn shape_hint(&self) -> String {
        match self.version {
            IologVersion::V2 => {
                "expected `filename action` or `filename action offset length`".into()
            }
            IologVersion::V3 => {
                "expected `timestamp filename action` or `timestamp filename action offset length`"
                    .into()
            }
        }
    }

    fn parse_timestamp(&mut self, field: Option<&str>) -> Result<u64, String> {
        let field = field.ok_or_else(|| self.shape_hint())?;
        let t: u64 = field.parse().map_err(|_| {
            format!(
                "expected a timestamp in microseconds (a whole number), got {}",
                shown(field)
            )
        })?;
        if let Some(last) = self.last_timestamp_us {
            if t < last {
                return Err(format!(
                    "timestamp {t} us goes back before the previous line's {last} us"
                ));
            }
        }
        self.last_timestamp_us = Some(t);
        Ok(t)
    }

    fn file_action(&mut self, name: &str, act: &str) -> Result<(), String> {
        match (act, self.files.get_mut(name)) {
            ("add", None) => {
                if self.files.len() == MAX_LOGGED_FILES {
                    return Err(format!(
                        "`add` of a file beyond the {MAX_LOGGED_FILES} distinct files one log \
                         may name"
                    ));
                }
                self.files.insert(name.to_string(), false);
            }
            ("add", Some(_)) => {} // fio ignores a re-add too
            ("open" | "close", Some(open)) => *open = act == "open",
            _ => {
                return Err(format!(
                    "`{act}` of file {}, which no earlier `add` line added",
                    shown(name)
                ))
            }
        }
        Ok(())
    }

    fn io_action(
        &self,
        name: &str,
        act: &str,
        offset: u64,
        length: u32,
    ) -> Result<IologAction, String> {
        if act == "wait" {
            return match self.version {
                IologVersion::V2 => Ok(IologAction::Wait { us: offset }),
                IologVersion::V3 => Err(
                    "`wait` is not allowed in a version 3 iolog: timestamps carry the timing"
                        .into(),
                ),
            };
        }
        if self.files.get(name) != Some(&true) {
            return Err(format!(
                "`{act}` on file {}, which was not added and opened before",
                shown(name)
            ));
        }
        if length == 0 && matches!(act, "read" | "write" | "trim") {
            return Err(format!(
                "a {act} of 0 bytes; expected a length of at least 1 byte"
            ));
        }
        if matches!(act, "read" | "write" | "trim")
            && offset.checked_add(u64::from(length)).is_none()
        {
            return Err(format!(
                "a {act} of {length} bytes at offset {offset} ends past the last byte a device \
                 can address (2^64 - 1)"
            ));
        }
        // Replayed as direct IO, as torpor runs every job: writes carry REQ_SYNC.
        Ok(match act {
            "read" => IologAction::Io(IoRequest {
                op: IoOp::Read,
                offset,
                bytes: length,
                sync: true,
            }),
            "write" => IologAction::Io(IoRequest {
                op: IoOp::Write,
                offset,
                bytes: length,
                sync: true,
            }),
            "trim" => IologAction::Trim {
                offset,
                bytes: length,
            },
            _ => IologAction::Sync,
        })
    }
}

fn parse_offset(field: &str) -> Result<u64, String> {
    field.parse().map_err(|_| {
        format!(
            "expected a byte offset (a whole number), got {}",
            shown(field)
        )
    })
}

fn parse_length(field: &str) -> Result<u32, String> {
    field.parse().map_err(|_| {
        format!(
            "expected a length in bytes (a whole number below 4 GiB), got {}",
            shown(field)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Result<Vec<IologAction>, InputError> {
        let mut r = IologReader::new(text.as_bytes(), "t.log")?;
        let mut out = Vec::new();
        while let Some(e) = r.next_entry()? {
            out.push(e.action);
        }
        Ok(out)
    }

    #[test]
    fn v2_lines_become_actions_in_order() {
        let got = entries(
            "fio version 2 iolog\n/d add\n/d open\n/d read 0 4096\n\n/d wait 1000 0\n/d trim 8 16\n/d datasync 0 0\n/d close\n",
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                IologAction::File,
                IologAction::File,
                IologAction::Io(IoRequest {
                    op: IoOp::Read,
                    offset: 0,
                    bytes: 4096,
                    sync: true
                }),
                IologAction::Wait { us: 1000 },
                IologAction::Trim {
                    offset: 8,
                    bytes: 16
                },
                IologAction::Sync,
                IologAction::File,
            ]
        );
    }

    #[test]
    fn io_after_close_is_refused_with_its_line() {
        let e = entries("fio version 2 iolog\n/d add\n/d open\n/d close\n/d write 0 512\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.log", Some(5)));
    }
}
