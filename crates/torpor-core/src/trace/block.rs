//! What every block-IO trace reduces to: a stream of [`BlockEvent`]s, each a request the host
//! issued (when, which operation, where, how much, with which flags), read one line at a time.
//!
//! The formats ([`TraceFormat`]) differ in their clocks and units; each reader converts to
//! nanoseconds and bytes (a sector is [`SECTOR_BYTES`], the unit of every block trace here, as
//! of the kernel's `sector_t`) and counts what it skipped, so a replay can say what it left
//! out. A file may be gzip-compressed whatever its format: [`open_trace`] recognises gzip by
//! its magic bytes and reads through it as a stream, then tells the format from the first line
//! unless the scenario named one.

use std::io::{BufRead, BufReader, Cursor, Read};

use serde::{Deserialize, Serialize};

use crate::error::{shown, InputError};
use crate::user_file::{count_lines_left, read_line, read_line_bytes};

/// Bytes in a sector, the unit of sector numbers and sizes in blkparse, DiskSim, MQSim and the
/// Pixel CSV (Linux's `SECTOR_SIZE`, whatever the device's logical block size).
pub const SECTOR_BYTES: u64 = 512;

/// What a request asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockOp {
    Read,
    Write,
    /// A discard (TRIM, or a secure erase, which blktrace marks the same way).
    Discard,
    /// A cache flush carrying no data.
    Flush,
}

/// One request of a block trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEvent {
    /// Time since the trace's zero (its start, or its first request where the trace's clock
    /// has no start of its own; each reader says which).
    pub t_ns: u64,
    pub op: BlockOp,
    /// 0 for a flush.
    pub offset_bytes: u64,
    /// 0 for a flush.
    pub len_bytes: u64,
    /// The kernel's REQ_SYNC (blkparse's `S`); formats that do not record it say `false`.
    pub sync: bool,
    /// Forced unit access (blkparse's second `F`): the write must reach media before it completes.
    pub fua: bool,
    /// A flush of the device's cache before this request (blkparse's leading `F` on a request
    /// with data).
    pub preflush: bool,
    /// Filesystem metadata (blkparse's `M`).
    pub meta: bool,
    /// 1-based line number in the (decompressed) trace.
    pub line: usize,
}

/// The trace formats a replay reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// fio's `write_iolog` output, v2 or v3 ([`crate::trace::fio_iolog`]).
    FioIolog,
    /// blkparse's default text output ([`crate::trace::blkparse`]).
    Blkparse,
    /// DiskSim's ASCII trace: arrival in milliseconds, flags in hex ([`crate::trace::disksim`]).
    Disksim,
    /// MQSim's ASCII trace: arrival in nanoseconds, 0 = write, 1 = read.
    Mqsim,
    /// The CSV of acsl-technion/MobileBlockIOTraces (`proces,device,rw_flag,sector,size,
    /// timestamp`; [`crate::trace::mobile_csv`]).
    MobileCsv,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::MobileCsv => "mobile-csv",
        }
    }
}

/// How many lines of each kind a block-trace reader has read so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockCounts {
    pub format: TraceFormat,
    /// Requests returned, by operation (a write with a preflush or FUA counts as a write).
    pub reads: u64,
    pub writes: u64,
    pub discards: u64,
    pub flushes: u64,
    /// Writes that asked for a flush before them (blkparse's leading `F`).
    pub preflush_writes: u64,
    /// Requests of the replayed kind carrying no sectors that are not flushes (blkparse: a
    /// passthrough command, or a request with no data), skipped.
    pub no_data: u64,
    /// blkparse: lines of the actions not replayed (completions, merges, plugs, ...).
    pub other_actions: u64,
    /// blkparse: message lines (`m   N ...`).
    pub messages: u64,
    /// blkparse's own lines: `Input file ... added` and the closing summary.
    pub report_lines: u64,
    /// Requests on a device other than the first request's: every device of the trace maps
    /// onto the one simulated device, offsets unchanged.
    pub on_other_devices: u64,
    /// Mobile CSV: requests stamped earlier than the one before them (the probe's per-CPU
    /// buffers deliver slightly out of order), issued at the previous request's time.
    pub out_of_order: u64,
    /// The largest such step back, in nanoseconds.
    pub max_step_back_ns: u64,
}

impl BlockCounts {
    pub fn new(format: TraceFormat) -> Self {
        BlockCounts {
            format,
            reads: 0,
            writes: 0,
            discards: 0,
            flushes: 0,
            preflush_writes: 0,
            no_data: 0,
            other_actions: 0,
            messages: 0,
            report_lines: 0,
            on_other_devices: 0,
            out_of_order: 0,
            max_step_back_ns: 0,
        }
    }

    /// Counts `e`, returned by a reader.
    pub fn count(&mut self, e: &BlockEvent) {
        match e.op {
            BlockOp::Read => self.reads += 1,
            BlockOp::Write => {
                self.writes += 1;
                self.preflush_writes += u64::from(e.preflush);
            }
            BlockOp::Discard => self.discards += 1,
            BlockOp::Flush => self.flushes += 1,
        }
    }
}

/// A block trace read as a stream of requests.
pub trait BlockTraceReader: Send {
    /// The next request, or `None` at the end of the trace.
    fn next_event(&mut self) -> Result<Option<BlockEvent>, InputError>;
    fn counts(&self) -> BlockCounts;
    /// The name errors carry.
    fn file(&self) -> &str;
    /// Counts the lines not read yet, without parsing them.
    fn count_rest(&mut self) -> Result<u64, InputError>;
}

/// The input of a replay: any buffered reader that can move to a worker thread.
pub type TraceInput = Box<dyn BufRead + Send>;

/// How many leading lines [`open_trace`] looks through for the first one that is not blank.
const SNIFF_LINES: usize = 64;

/// Opens a trace for reading: decompresses it if it starts with gzip's magic bytes, then takes
/// `format`, or tells it from the first line that is not blank ([`sniff`]). Returns the
/// format and a reader positioned at the trace's first byte.
pub fn open_trace(
    raw: TraceInput,
    file: &str,
    format: Option<TraceFormat>,
) -> Result<(TraceFormat, TraceInput), InputError> {
    let mut raw = raw;
    let gzip = {
        let head = raw
            .fill_buf()
            .map_err(|e| InputError::whole(file, format!("cannot read: {e}")))?;
        if is_blktrace_binary(head) {
            return Err(InputError::whole(
                file,
                "blktrace's binary output (a `NAME.blktrace.CPU` file); expected blkparse's \
                 text: replay the output of `blkparse -i NAME`",
            ));
        }
        head.starts_with(&[0x1f, 0x8b])
    };
    let mut input: TraceInput = if gzip {
        Box::new(BufReader::with_capacity(
            1 << 16,
            GzipLines {
                inner: flate2::bufread::MultiGzDecoder::new(raw),
            },
        ))
    } else {
        raw
    };
    if let Some(f) = format {
        return Ok((f, input));
    }
    // Read the leading lines (bounded like every trace line), then hand them back in front
    // of the rest of the stream.
    let mut head = Vec::new();
    let mut line = Vec::new();
    let mut found = None;
    for n in 1..=SNIFF_LINES {
        if read_line_bytes(&mut input, &mut line, file, n)? == 0 {
            break;
        }
        head.extend_from_slice(&line);
        if !line.trim_ascii().is_empty() {
            let text = String::from_utf8(line).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                InputError::at(
                    file,
                    n,
                    format!(
                        "expected a text trace; byte 0x{:02x} at column {} is not UTF-8",
                        e.as_bytes()[at],
                        at + 1
                    ),
                )
            })?;
            found = Some((n, text));
            break;
        }
    }
    let Some((n, first)) = found else {
        return Err(InputError::whole(
            file,
            "empty trace: expected a block trace (blkparse, DiskSim, MQSim, the mobile CSV) or \
             a fio iolog",
        ));
    };
    let Some(format) = sniff(&first) else {
        return Err(InputError::at(
            file,
            n,
            format!(
                "cannot tell the trace's format from this line, {}; expected blkparse's \
                 default output, a DiskSim or MQSim ASCII trace, the mobile CSV's header or \
                 a fio iolog header (or set `format` in `[workload.replay]`)",
                shown(first.trim_end())
            ),
        ));
    };
    Ok((format, Box::new(Cursor::new(head).chain(input))))
}

/// Whether `head` starts like a record of blktrace's binary files: `struct blk_io_trace` opens
/// with the magic `0x65617400` ORed with the format version, in the tracing machine's byte
/// order.
fn is_blktrace_binary(head: &[u8]) -> bool {
    let Some(word) = head.get(..4) else {
        return false;
    };
    let word = [word[0], word[1], word[2], word[3]];
    [u32::from_le_bytes(word), u32::from_be_bytes(word)]
        .iter()
        .any(|m| m & 0xffff_ff00 == 0x6561_7400)
}

/// A gzip stream's read errors in words ("invalid gzip header", "corrupt deflate stream"):
/// the line reader then reports them at the line being read.
struct GzipLines<R: BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
}

impl<R: BufRead> Read for GzipLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner
            .read(buf)
            .map_err(|e| std::io::Error::new(e.kind(), format!("the gzip stream is damaged ({e})")))
    }
}

/// The format a trace's first line that is not blank is in, if any:
///
/// * `fio version 2 iolog` / `fio version 3 iolog`: a fio iolog;
/// * `proces,device,rw_flag,...` (or `process,...`): the mobile CSV;
/// * `Input file ... added`, or `maj,min cpu seq secs.nsecs ...`: blkparse;
/// * five numbers: DiskSim if the arrival time has a decimal point (DiskSim's are
///   milliseconds, printed as floats), else MQSim (whose are whole nanoseconds). A DiskSim
///   trace with whole-millisecond times is therefore read as MQSim's unless `format` says
///   otherwise.
pub fn sniff(line: &str) -> Option<TraceFormat> {
    let t = line.trim();
    if t.starts_with("fio version ") {
        return Some(TraceFormat::FioIolog);
    }
    if t.starts_with("proces,device,") || t.starts_with("process,device,") {
        return Some(TraceFormat::MobileCsv);
    }
    if t.starts_with("Input file ") {
        return Some(TraceFormat::Blkparse);
    }
    let fields: Vec<&str> = t.split_ascii_whitespace().take(6).collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let decimal = |s: &str| match s.split_once('.') {
        Some((a, b)) => digits(a) && digits(b),
        None => false,
    };
    if fields.len() >= 5 {
        if let Some((maj, min)) = fields[0].split_once(',') {
            if digits(maj) && digits(min) && digits(fields[1]) && digits(fields[2]) {
                return decimal(fields[3]).then_some(TraceFormat::Blkparse);
            }
        }
    }
    if fields.len() == 5 && fields[1..4].iter().all(|f| digits(f)) {
        if decimal(fields[0]) {
            return Some(TraceFormat::Disksim);
        }
        if digits(fields[0]) && digits(fields[4]) {
            return Some(TraceFormat::Mqsim);
        }
    }
    None
}

/// `ns` as seconds with nanoseconds, for messages.
pub fn secs_text(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// A decimal number of `unit_ns`-nanosecond units (`"12.5"` ms, `"48746.442531"` s) in
/// nanoseconds, exactly where the digits allow and rounded to the nearest nanosecond beyond.
/// `None` for anything but digits with at most one decimal point, or a time past `u64`.
pub fn decimal_to_ns(text: &str, unit_ns: u64) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (text.ends_with('.')) {
        return None;
    }
    let whole = int.parse::<u64>().ok()?.checked_mul(unit_ns)?;
    // The fraction in units of 10^-18 of the unit, enough for any unit up to a second.
    let mut atto: u128 = 0;
    let mut scale: u128 = 1_000_000_000_000_000_000;
    let mut rest_half_up = false;
    for (i, b) in frac.bytes().enumerate() {
        if i == 18 {
            rest_half_up = b >= b'5';
            break;
        }
        scale /= 10;
        atto += u128::from(b - b'0') * scale;
    }
    let atto = atto + u128::from(rest_half_up);
    // atto × unit_ns / 10^18, rounded to the nearest nanosecond.
    let num = atto * u128::from(unit_ns);
    let den: u128 = 1_000_000_000_000_000_000;
    let frac_ns = u64::try_from((num + den / 2) / den).ok()?;
    whole.checked_add(frac_ns)
}

/// A format with one request per non-blank line (DiskSim/MQSim ASCII, the mobile CSV): what it
/// adds to [`LineTrace`], which reads the lines.
pub trait LineFormat: Send {
    /// Parses one line (`line` is its number, for messages naming earlier lines); counts what
    /// it notices into `counts`.
    fn parse(
        &mut self,
        text: &str,
        line: usize,
        counts: &mut BlockCounts,
    ) -> Result<BlockEvent, String>;
}

/// A trace read one line at a time, each non-blank line parsed by the format `F`.
pub struct LineTrace<R, F> {
    reader: R,
    file: String,
    line_no: usize,
    buf: String,
    counts: BlockCounts,
    format: F,
}

impl<R, F> LineTrace<R, F> {
    /// A reader past `line_no` lines already read (a header), `buf` its line buffer.
    pub(crate) fn new_at(
        reader: R,
        file: &str,
        line_no: usize,
        buf: String,
        counts: BlockCounts,
        format: F,
    ) -> Self {
        LineTrace {
            reader,
            file: file.to_string(),
            line_no,
            buf,
            counts,
            format,
        }
    }
}

impl<R: BufRead + Send, F: LineFormat> BlockTraceReader for LineTrace<R, F> {
    fn next_event(&mut self) -> Result<Option<BlockEvent>, InputError> {
        loop {
            self.line_no += 1;
            if read_line(&mut self.reader, &mut self.buf, &self.file, self.line_no)? == 0 {
                return Ok(None);
            }
            if self.buf.trim().is_empty() {
                continue;
            }
            let e = self
                .format
                .parse(&self.buf, self.line_no, &mut self.counts)
                .map_err(|m| InputError::at(&self.file, self.line_no, m))?;
            self.counts.count(&e);
            return Ok(Some(e));
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

/// The device number, start sector and size (in 512-byte sectors, at least 1) of a
/// line-per-request format, each a whole number.
pub(crate) fn sector_fields(
    device: &str,
    sector: &str,
    size: &str,
) -> Result<(u64, u64, u64), String> {
    let device: u64 = device
        .parse()
        .map_err(|_| format!("expected a device number, got {}", shown(device)))?;
    let sector: u64 = sector.parse().map_err(|_| {
        format!(
            "expected a start sector (a whole number of 512-byte sectors), got {}",
            shown(sector)
        )
    })?;
    let size: u64 = size.parse().map_err(|_| {
        format!(
            "expected a size in 512-byte sectors (a whole number), got {}",
            shown(size)
        )
    })?;
    if size == 0 {
        return Err("a request of 0 sectors; expected at least 1".into());
    }
    Ok((device, sector, size))
}

/// The request a line-per-request format describes once it has the line's fields: a device
/// other than the trace's first is counted (all go to the one simulated device); sectors
/// become bytes.
pub(crate) fn sector_request(
    t_ns: u64,
    op: BlockOp,
    (device, first_device): (u64, &mut Option<u64>),
    (sector, size): (u64, u64),
    line: usize,
    counts: &mut BlockCounts,
) -> Result<BlockEvent, String> {
    match *first_device {
        None => *first_device = Some(device),
        Some(d) if d != device => counts.on_other_devices += 1,
        Some(_) => {}
    }
    Ok(BlockEvent {
        t_ns,
        op,
        offset_bytes: sectors_to_bytes(sector, "a start sector")?,
        len_bytes: sectors_to_bytes(size, "a request")?,
        sync: false,
        fua: false,
        preflush: false,
        meta: false,
        line,
    })
}

/// `sectors` 512-byte sectors in bytes, refused past `u64`.
pub fn sectors_to_bytes(sectors: u64, what: &str) -> Result<u64, String> {
    sectors
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| format!("{what} of {sectors} sectors is beyond 2^64 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_become_nanoseconds_rounded_to_the_nearest() {
        assert_eq!(decimal_to_ns("0.000000001", 1_000_000_000), Some(1));
        assert_eq!(decimal_to_ns("12.5", 1_000_000), Some(12_500_000));
        assert_eq!(decimal_to_ns("7", 1_000_000), Some(7_000_000));
        // A float printed with noise past the nanosecond: 832636.2457430001 s.
        assert_eq!(
            decimal_to_ns("832636.2457430001", 1_000_000_000),
            Some(832_636_245_743_000)
        );
        assert_eq!(
            decimal_to_ns("1.9999999996", 1_000_000_000),
            Some(2_000_000_000)
        );
        assert_eq!(decimal_to_ns("0.0000004", 1_000_000), Some(0));
        assert_eq!(decimal_to_ns("0.0000005", 1_000_000), Some(1));
        for bad in ["", ".5", "5.", "1e3", "-1", "1.2.3", " 1"] {
            assert_eq!(decimal_to_ns(bad, 1), None, "{bad:?}");
        }
        assert_eq!(decimal_to_ns("18446744073709551616", 1), None);
    }

    #[test]
    fn the_first_line_tells_the_format() {
        let s = |l: &str| sniff(l);
        assert_eq!(s("fio version 3 iolog\n"), Some(TraceFormat::FioIolog));
        assert_eq!(
            s("proces,device,rw_flag,sector,size,timestamp"),
            Some(TraceFormat::MobileCsv)
        );
        assert_eq!(
            s("  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]"),
            Some(TraceFormat::Blkparse)
        );
        assert_eq!(
            s("Input file sda.blktrace.0 added"),
            Some(TraceFormat::Blkparse)
        );
        assert_eq!(s("938513000 4 264719034 16 0"), Some(TraceFormat::Mqsim));
        assert_eq!(s("0.250000 0 1024 8 1"), Some(TraceFormat::Disksim));
        assert_eq!(s("hello world"), None);
        assert_eq!(s("1 2 3 4"), None);
    }

    #[test]
    fn blktrace_binary_files_are_told_apart_from_text() {
        // The magic 0x65617400 | version 7, little-endian, then the rest of a record.
        let bin = [0x07u8, 0x74, 0x61, 0x65, 1, 0, 0, 0];
        let e = open_trace(Box::new(Cursor::new(bin.to_vec())), "sda.blktrace.0", None)
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap().contains("blktrace's binary output"));
        assert!(!is_blktrace_binary(b"  8,0    3"));
    }

    #[test]
    fn gzip_is_read_through_and_the_format_sniffed_after_blank_lines() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"\n\n5 0 8 8 1\n").unwrap();
        let bytes = gz.finish().unwrap();
        let (f, mut r) = open_trace(Box::new(Cursor::new(bytes)), "t.gz", None).unwrap();
        assert_eq!(f, TraceFormat::Mqsim);
        let mut all = String::new();
        r.read_to_string(&mut all).unwrap();
        assert_eq!(all, "\n\n5 0 8 8 1\n");
    }
}
