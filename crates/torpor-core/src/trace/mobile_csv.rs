//! Streaming reader for the CSV block traces of acsl-technion/MobileBlockIOTraces (block-layer
//! IO of a Pixel 6a's UFS storage, captured with an eBPF probe).
//!
//! The format, from the repository's README and its files: a header line (spelled
//! `proces,device,rw_flag,sector,size,timestamp` in the files, `process` in the README; both
//! are accepted), then one request per line: the issuing task as `comm-pid` (the comm may be
//! `<...>` when the probe did not know it; read from the right so that a comma in it cannot
//! shift the columns), the device number (the kernel's `dev_t`, e.g. 8388608 = 8:0), `R` or
//! `W`, the start sector and the size in 512-byte sectors, and the time in seconds of the
//! monotonic clock, printed as a float (`832636.2457430001`: digits past the nanosecond are
//! float noise, so the time is rounded to the nearest nanosecond).
//!
//! Times are measured from the first request (the monotonic clock's zero is the phone's boot).
//! The probe's events reach user space through per-CPU buffers, so a request may be stamped
//! slightly before one printed above it (two rows of the Genshin Impact trace, at most 306 µs):
//! up to [`MAX_STEP_BACK_NS`] back, it is issued at the previous request's time and counted in
//! `out_of_order`; further back is an error at its line. The files are distributed gzipped;
//! [`crate::trace::block::open_trace`] reads them through.

use std::io::BufRead;

use super::block::{
    decimal_to_ns, secs_text, sector_fields, sector_request, BlockCounts, BlockEvent, BlockOp,
    LineFormat, LineTrace, TraceFormat,
};
use crate::error::{shown, InputError};
use crate::user_file::read_line;

/// The largest step back in time taken as delivery order rather than damage: 10 ms, thirty
/// times the largest seen in the published traces.
pub const MAX_STEP_BACK_NS: u64 = 10_000_000;

const HEADERS: [&str; 2] = [
    "proces,device,rw_flag,sector,size,timestamp",
    "process,device,rw_flag,sector,size,timestamp",
];

/// Pulls requests out of a MobileBlockIOTraces CSV one line at a time.
pub type MobileCsvReader<R> = LineTrace<R, MobileCsvFormat>;

/// What a mobile CSV line is read against: the trace so far.
pub struct MobileCsvFormat {
    first_t: Option<u64>,
    /// The latest time issued so far, and its line.
    last: Option<(u64, usize)>,
    first_device: Option<u64>,
}

impl<R: BufRead> LineTrace<R, MobileCsvFormat> {
    /// Reads the header line; `file` is the name errors carry.
    pub fn new(mut reader: R, file: &str) -> Result<Self, InputError> {
        let mut buf = String::new();
        let mut line_no = 0;
        loop {
            line_no += 1;
            if read_line(&mut reader, &mut buf, file, line_no)? == 0 {
                return Err(InputError::whole(
                    file,
                    format!("empty file: expected the header `{}`", HEADERS[0]),
                ));
            }
            if !buf.trim().is_empty() {
                break;
            }
        }
        let header = buf.trim();
        if !HEADERS.contains(&header) {
            return Err(InputError::at(
                file,
                line_no,
                format!(
                    "expected the header `{}`, got {}",
                    HEADERS[0],
                    shown(header)
                ),
            ));
        }
        let format = MobileCsvFormat {
            first_t: None,
            last: None,
            first_device: None,
        };
        let counts = BlockCounts::new(TraceFormat::MobileCsv);
        Ok(LineTrace::new_at(
            reader, file, line_no, buf, counts, format,
        ))
    }
}

impl LineFormat for MobileCsvFormat {
    fn parse(
        &mut self,
        text: &str,
        line_no: usize,
        counts: &mut BlockCounts,
    ) -> Result<BlockEvent, String> {
        let line = text.trim_end_matches(['\n', '\r']);
        let mut cols = line.rsplitn(6, ',');
        let (Some(time), Some(size), Some(sector), Some(rw), Some(device), Some(_process)) = (
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next(),
            cols.next(),
        ) else {
            return Err(format!(
                "fewer than 6 comma-separated columns; expected `{}`",
                HEADERS[0]
            ));
        };
        let op = match rw {
            "R" => BlockOp::Read,
            "W" => BlockOp::Write,
            _ => return Err(format!("expected rw_flag R or W, got {}", shown(rw))),
        };
        let (device, sector, size) = sector_fields(device, sector, size)?;
        let t = decimal_to_ns(time, 1_000_000_000).ok_or_else(|| {
            format!(
                "expected a timestamp in seconds (e.g. 48746.442531), got {}",
                shown(time)
            )
        })?;
        let first = *self.first_t.get_or_insert(t);
        if t < first {
            return Err(format!(
                "timestamp {} is before the first request's {}",
                secs_text(t),
                secs_text(first)
            ));
        }
        let mut t_ns = t - first;
        match self.last {
            Some((last, line)) if t_ns < last => {
                let back = last - t_ns;
                if back > MAX_STEP_BACK_NS {
                    return Err(format!(
                        "timestamp goes back {} before line {line}'s; at most {} is taken as \
                         the probe's delivery order",
                        secs_text(back),
                        secs_text(MAX_STEP_BACK_NS)
                    ));
                }
                counts.out_of_order += 1;
                counts.max_step_back_ns = counts.max_step_back_ns.max(back);
                t_ns = last;
            }
            _ => self.last = Some((t_ns, line_no)),
        }
        sector_request(
            t_ns,
            op,
            (device, &mut self.first_device),
            (sector, size),
            line_no,
            counts,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::block::BlockTraceReader;

    #[test]
    fn rows_read_from_the_right_and_time_from_the_first_request() {
        // Hand-written rows in the published layout; a comma inside the task name.
        let text = "proces,device,rw_flag,sector,size,timestamp\n\
                    a,b-1,8388608,R,100,8,10.5\n\
                    kworker/u16:6-22931,8388608,W,65006512,40,10.5000012\n\
                    x-2,8388609,R,0,1,10.5000010\n";
        let mut r = MobileCsvReader::new(text.as_bytes(), "t.csv").unwrap();
        let mut got = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            got.push((e.t_ns, e.op, e.offset_bytes, e.len_bytes, e.line));
        }
        assert_eq!(
            got,
            vec![
                (0, BlockOp::Read, 51_200, 4096, 2),
                (1_200, BlockOp::Write, 65_006_512 * 512, 20_480, 3),
                // 200 ns before the row above it: issued at that row's time.
                (1_200, BlockOp::Read, 0, 512, 4),
            ]
        );
        let c = r.counts();
        assert_eq!((c.out_of_order, c.max_step_back_ns), (1, 200));
        assert_eq!(c.on_other_devices, 1);
    }
}
