//! Streaming reader for blkparse's default text output (`blkparse -i TRACE`, no `-f`/`-F`).
//!
//! Read for this module: blktrace's `blkparse_fmt.c` (`process_default`, `fill_rwbs`) and
//! `blkparse.c` (`handle_notify`, `dump_trace_fs`, `dump_io_stats`,
//! `show_device_and_cpu_stats`, `setup_file`), and the kernel's `__blk_add_trace`
//! (kernel/trace/blktrace.c). Every event line starts with the same header,
//! `"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s "`: device `major,minor`, CPU, sequence number,
//! seconds.nanoseconds since the trace's first event, pid, action, RWBS. Then, by action:
//!
//! * `Q` queued, `I` inserted, `D` issued, `B` bounced: `sector + sectors [process]`, or
//!   `[process]` alone when the request has no sectors (a flush); with `-t`, `(elapsed)` may
//!   come before the process; a passthrough (SCSI command) request prints its bytes and
//!   command bytes instead.
//! * `C` completed, `R` requeued: `sector + sectors [error]`.
//! * `M`/`F` merged, `G` got a request, `S` slept: `sector + sectors [process]`; `P` plug:
//!   `[process]`; `U`/`UT` unplug: `[process] depth`; `A` remap: `sector + sectors <- (maj,min)
//!   sector`; `X` split: `sector / sector [process]`.
//! * `m` message (blktrace notes, e.g. from a cgroup or the I/O scheduler): header with
//!   sequence 0, pid 0, RWBS `N`, then the free text.
//!
//! RWBS (`fill_rwbs`): an optional `F` (a cache flush: REQ_PREFLUSH, or a REQ_OP_FLUSH
//! request), then one of `D` discard, `W` write, `R` read or `N` (no data), then, in this
//! order, `F` forced unit access, `A` read-ahead, `S` sync, `M` metadata.
//!
//! Which action is the IO to replay: `Q` by default. A `Q` event is traced when a bio enters
//! the block layer (`submit_bio` -> `trace_block_bio_queue`), after partition remapping, so
//! its sector is on the traced disk, but before the host's I/O scheduler merges, splits or
//! delays it: it is the load the filesystem and the applications offered, with their own
//! timing. `D` (issue) is what the driver sent the device, after merging and scheduling; its
//! times carry the original device's queueing, so a replay of `D` re-imposes the old device's
//! pace on the simulated one. Both are offered (`action = "D"`).
//!
//! A flush appears at `Q` as a write with the leading `F` and no sectors (`FWS [jbd2]`): it is
//! returned as [`BlockOp::Flush`]. Other requests of the replayed action without sectors
//! (passthrough commands, `N` requests) are counted in `no_data` and skipped, as are the
//! other actions (`other_actions`) and messages. blkparse's own lines are skipped and counted
//! (`report_lines`): `Input file X added` (printed on standard output as each per-CPU file is
//! opened) and the closing summary (`CPU0 (8,0):` and `Total (8,0):` blocks of indented
//! counters, `Throughput (R/W): ...`, `Events (8,0): N entries`, `Skips: ...`, and, with `-s`,
//! one `name (pid)` block per process). Once the summary has started, only summary lines may
//! follow.
//!
//! blkparse prints events in time order (it merges the per-CPU files by timestamp), so a
//! replayed event stamped before the previous one means a damaged or hand-edited file: an
//! [`InputError`] at its line. Every device of the trace maps onto the one simulated device,
//! sectors unchanged; requests on devices other than the first are counted.

use std::io::BufRead;

use serde::{Deserialize, Serialize};

use super::block::{
    decimal_to_ns, secs_text, sectors_to_bytes, BlockCounts, BlockEvent, BlockOp, BlockTraceReader,
    TraceFormat,
};
use crate::error::{shown, InputError};
use crate::user_file::{count_lines_left, read_line};

/// Which blkparse action a replay issues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplayedAction {
    /// Queued: the bio as the filesystem submitted it.
    #[default]
    Q,
    /// Issued to the driver, after merging and scheduling.
    D,
}

impl ReplayedAction {
    fn letter(self) -> &'static str {
        match self {
            ReplayedAction::Q => "Q",
            ReplayedAction::D => "D",
        }
    }
}

/// Every action blkparse's default output prints (`dump_trace_fs`, `dump_trace_pc`,
/// `handle_notify`).
const ACTIONS: [&str; 16] = [
    "Q", "I", "M", "F", "G", "S", "R", "D", "C", "P", "U", "UT", "X", "B", "A", "m",
];

/// The request a line's RWBS field describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rwbs {
    /// `F` before the direction: a flush (preflush, or a flush request).
    flush: bool,
    /// `D`, `W`, `R` or `N`.
    dir: u8,
    fua: bool,
    sync: bool,
    meta: bool,
}

/// Parses an RWBS field (`fill_rwbs`).
fn parse_rwbs(field: &str) -> Result<Rwbs, String> {
    let b = field.as_bytes();
    let is_dir = |c: u8| matches!(c, b'D' | b'W' | b'R' | b'N');
    let flush = b.len() >= 2 && b[0] == b'F' && is_dir(b[1]);
    let rest = &b[usize::from(flush)..];
    let (Some(&dir), tail) = (rest.first(), rest.get(1..).unwrap_or_default()) else {
        return Err(rwbs_error(field));
    };
    if !is_dir(dir) {
        return Err(rwbs_error(field));
    }
    let mut r = Rwbs {
        flush,
        dir,
        fua: false,
        sync: false,
        meta: false,
    };
    // The flags come in fill_rwbs's order, each at most once.
    let mut next = 0;
    for &c in tail {
        let Some(at) = b"FASM"[next..].iter().position(|&f| f == c) else {
            return Err(rwbs_error(field));
        };
        next += at + 1;
        match c {
            b'F' => r.fua = true,
            b'S' => r.sync = true,
            b'M' => r.meta = true,
            _ => {} // A: read-ahead, not modelled
        }
    }
    Ok(r)
}

fn rwbs_error(field: &str) -> String {
    format!(
        "expected an RWBS field (an optional F, one of D W R N, then F A S M in that order), \
         got {}",
        shown(field)
    )
}

/// Pulls the replayed action's requests out of blkparse's output one line at a time.
pub struct BlkparseReader<R> {
    reader: R,
    file: String,
    action: ReplayedAction,
    line_no: usize,
    buf: String,
    in_summary: bool,
    last: Option<(u64, usize)>,
    first_device: Option<(u32, u32)>,
    counts: BlockCounts,
}

impl<R: BufRead> BlkparseReader<R> {
    /// `file` is the name errors carry.
    pub fn new(reader: R, file: &str, action: ReplayedAction) -> Self {
        BlkparseReader {
            reader,
            file: file.to_string(),
            action,
            line_no: 0,
            buf: String::new(),
            in_summary: false,
            last: None,
            first_device: None,
            counts: BlockCounts::new(TraceFormat::Blkparse),
        }
    }

    /// Parses `self.buf`; `Ok(None)` for a line skipped (and counted).
    fn parse_line(&mut self) -> Result<Option<BlockEvent>, String> {
        let line = std::mem::take(&mut self.buf);
        let result = self.parse_text(line.trim_end_matches(['\n', '\r']));
        self.buf = line;
        result
    }

    fn parse_text(&mut self, line: &str) -> Result<Option<BlockEvent>, String> {
        if line.trim().is_empty() {
            return Ok(None);
        }
        let mut fields = line.split_ascii_whitespace();
        let first = fields.next().unwrap_or_default();
        let Some(device) = parse_device(first) else {
            return self.report_line(line).map(|()| None);
        };
        if self.in_summary {
            return Err(
                "an event line after blkparse's closing summary; expected only summary lines \
                 (`CPU0 (8,0):`, indented counters, `Throughput`, `Events`, `Skips`) to the end"
                    .into(),
            );
        }
        let mut next = |what: &str| {
            fields.next().ok_or_else(|| {
                format!(
                    "the line ends before its {what}; expected blkparse's default output \
                     `maj,min cpu sequence secs.nsecs pid action rwbs ...`"
                )
            })
        };
        let cpu = next("CPU")?;
        let seq = next("sequence number")?;
        let time = next("timestamp")?;
        let pid = next("pid")?;
        let action = next("action")?;
        let rwbs = next("RWBS field")?;
        if cpu.parse::<u32>().is_err() {
            return Err(format!("expected a CPU number, got {}", shown(cpu)));
        }
        if seq.parse::<u64>().is_err() {
            return Err(format!("expected a sequence number, got {}", shown(seq)));
        }
        let t_ns = parse_time(time)?;
        if pid.parse::<u32>().is_err() {
            return Err(format!("expected a pid, got {}", shown(pid)));
        }
        if !ACTIONS.contains(&action) {
            return Err(format!(
                "unknown action {}; expected one of {}",
                shown(action),
                ACTIONS.join(" ")
            ));
        }
        if action == "m" {
            self.counts.messages += 1;
            return Ok(None);
        }
        let rwbs = parse_rwbs(rwbs)?;
        if action != self.action.letter() {
            self.counts.other_actions += 1;
            return Ok(None);
        }
        let rest: Vec<&str> = fields.take(3).collect();
        let range = match rest.as_slice() {
            [sector, "+", n, ..] => Some((
                parse_sectors(sector, "a start sector")?,
                parse_sectors(n, "a size in sectors")?,
            )),
            [sector, "+"] => {
                parse_sectors(sector, "a start sector")?;
                return Err("the line ends after `+`; expected `sector + sectors`".into());
            }
            _ => None,
        };
        if let Some((_, 0)) = range {
            return Err(
                "a request of 0 sectors; blkparse prints the range only when the \
                        request has sectors"
                    .into(),
            );
        }
        if range.is_none() {
            // No sector range: `[process]` or `(elapsed) [process]` for a request without
            // data, or a passthrough command's byte count.
            match rest.first() {
                Some(tok) if tok.starts_with('[') || tok.starts_with('(') => {}
                Some(tok) if tok.parse::<u64>().is_ok() => {}
                Some(tok) => {
                    return Err(format!(
                        "expected `sector + sectors [process]` or `[process]`, got {}",
                        shown(tok)
                    ))
                }
                None => {
                    return Err(
                        "the line ends after the RWBS field; expected `sector + sectors \
                         [process]` or `[process]`"
                            .into(),
                    )
                }
            }
        }
        if let Some((last, line)) = self.last {
            if t_ns < last {
                return Err(format!(
                    "time {} goes back before {}, the time of line {line}; blkparse prints \
                     events in time order",
                    secs_text(t_ns),
                    secs_text(last)
                ));
            }
        }
        self.last = Some((t_ns, self.line_no));
        let op = match (range, rwbs.dir) {
            (None, _) if rwbs.flush => BlockOp::Flush,
            (None, _) => {
                self.counts.no_data += 1;
                return Ok(None);
            }
            (Some(_), b'D') => BlockOp::Discard,
            (Some(_), b'W') => BlockOp::Write,
            (Some(_), b'R') => BlockOp::Read,
            (Some(_), _) => return Err("RWBS `N` (no data) on a request with sectors".into()),
        };
        match self.first_device {
            None => self.first_device = Some(device),
            Some(d) if d != device => self.counts.on_other_devices += 1,
            Some(_) => {}
        }
        let (offset_bytes, len_bytes) = match range {
            Some((sector, n)) => (
                sectors_to_bytes(sector, "a start sector")?,
                sectors_to_bytes(n, "a request")?,
            ),
            None => (0, 0),
        };
        Ok(Some(BlockEvent {
            t_ns,
            op,
            offset_bytes,
            len_bytes,
            sync: rwbs.sync,
            fua: rwbs.fua,
            preflush: rwbs.flush && range.is_some(),
            meta: rwbs.meta,
            line: self.line_no,
        }))
    }

    /// A line that is not an event: blkparse's own, or an error.
    fn report_line(&mut self, line: &str) -> Result<(), String> {
        let summary_heading = ["CPU", "Total (", "Throughput (", "Events (", "Skips:"]
            .iter()
            .any(|p| line.starts_with(p))
            || is_process_heading(line);
        let indented = line.starts_with([' ', '\t']);
        let ok = if self.in_summary {
            summary_heading || indented
        } else if summary_heading {
            self.in_summary = true;
            true
        } else {
            line.starts_with("Input file ") && line.ends_with(" added")
        };
        if ok {
            self.counts.report_lines += 1;
            return Ok(());
        }
        let first = line.split_ascii_whitespace().next().unwrap_or_default();
        Err(if self.in_summary {
            format!(
                "expected a line of blkparse's closing summary (`CPU0 (8,0):`, indented \
                 counters, `Throughput`, `Events`, `Skips`), got {}",
                shown(line)
            )
        } else {
            format!(
                "expected a blkparse event line starting with the device `maj,min`, got {}",
                shown(first)
            )
        })
    }
}

impl<R: BufRead + Send> BlockTraceReader for BlkparseReader<R> {
    fn next_event(&mut self) -> Result<Option<BlockEvent>, InputError> {
        loop {
            self.line_no += 1;
            if read_line(&mut self.reader, &mut self.buf, &self.file, self.line_no)? == 0 {
                return Ok(None);
            }
            if let Some(e) = self
                .parse_line()
                .map_err(|m| InputError::at(&self.file, self.line_no, m))?
            {
                self.counts.count(&e);
                return Ok(Some(e));
            }
        }
    }

    fn counts(&self) -> BlockCounts {
        self.counts
    }

    fn file(&self) -> &str {
        &self.file
    }

    fn count_rest(&mut self) -> Result<u64, InputError> {
        count_lines_left(&mut self.reader, &self.file)
    }
}

/// `8,0` -> (8, 0).
fn parse_device(field: &str) -> Option<(u32, u32)> {
    let (maj, min) = field.split_once(',')?;
    Some((maj.parse().ok()?, min.parse().ok()?))
}

/// `-s`'s per-process heading: `name (pid)` or `name (pid, ...)`.
fn is_process_heading(line: &str) -> bool {
    let Some(open) = line.rfind(" (") else {
        return false;
    };
    let inner = &line[open + 2..];
    let Some(inner) = inner.strip_suffix(')') else {
        return false;
    };
    let pid = inner.strip_suffix(", ...").unwrap_or(inner);
    open > 0 && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
}

/// `secs.nsecs` (`%5d.%09lu`) in nanoseconds.
fn parse_time(field: &str) -> Result<u64, String> {
    match field.split_once('.') {
        Some((_, ns)) if ns.len() == 9 => decimal_to_ns(field, 1_000_000_000),
        _ => None,
    }
    .ok_or_else(|| {
        format!(
            "expected a timestamp `seconds.nanoseconds` (nine digits after the point), got {}",
            shown(field)
        )
    })
}

fn parse_sectors(field: &str, what: &str) -> Result<u64, String> {
    field.parse().map_err(|_| {
        format!(
            "expected {what} (a whole number of 512-byte sectors), got {}",
            shown(field)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, action: ReplayedAction) -> Result<Vec<BlockEvent>, InputError> {
        let mut r = BlkparseReader::new(text.as_bytes(), "t.txt", action);
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push(e);
        }
        Ok(out)
    }

    #[test]
    fn rwbs_fields_decode_in_fill_rwbs_order() {
        let r = parse_rwbs("FWFSM").unwrap();
        assert_eq!(
            (r.flush, r.dir, r.fua, r.sync, r.meta),
            (true, b'W', true, true, true)
        );
        let r = parse_rwbs("RA").unwrap();
        assert_eq!((r.flush, r.dir, r.sync), (false, b'R', false));
        // A lone F is FUA after a direction, a flush before one.
        assert!(parse_rwbs("WF").unwrap().fua);
        assert!(parse_rwbs("FN").unwrap().flush);
        for bad in ["", "F", "X", "WSF", "WSS", "Wx", "RR"] {
            assert!(parse_rwbs(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn process_headings_of_dash_s() {
        assert!(is_process_heading("kjournald (697)"));
        assert!(is_process_heading("kworker/0:1 (12, ...)"));
        assert!(!is_process_heading("(697)"));
        assert!(!is_process_heading("Total (8,0):"));
    }

    #[test]
    fn d_events_with_elapsed_times_parse_as_the_replayed_action() {
        // `blkparse -t`: the time since the request was queued, in parentheses.
        let text = "  8,0    1       10     1.000000500  100  D   R 64 + 8 (     200) [fio]\n";
        let got = events(text, ReplayedAction::D).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].t_ns, got[0].offset_bytes, got[0].len_bytes),
            (1_000_000_500, 64 * 512, 8 * 512)
        );
        assert!(events(text, ReplayedAction::Q).unwrap().is_empty());
    }
}
