//! Replaying a trace: turning a fio iolog's lines, or a block trace's requests, into IOs with
//! the times the trace asks for.
//!
//! Timing (the parsers' modules, [`crate::trace::fio_iolog`] and [`crate::trace::block`],
//! describe the formats):
//!
//! 1. iolog v3: an IO is due `(timestamp - first timestamp) × 100 / replay_time_scale` after
//!    the replay starts, the first timestamp being the log's first line (usually its `add`),
//!    as in fio's `delay_since_ttime`.
//! 2. iolog v2: IOs are due back to back; a `wait N` line makes everything after it due no
//!    sooner than `N` µs (scaled the same way) after the previous `wait` ended.
//! 3. Block traces: a request is due `t × 100 / replay_time_scale` after the replay starts,
//!    `t` being its time from the trace's zero (the trace's start for blkparse, DiskSim and
//!    MQSim, whose clocks start at 0; the first request for the mobile CSV, whose clock is the
//!    phone's).
//! 4. An IO is issued at its due time, or as soon as one of the `iodepth` slots frees up if all
//!    are busy then. Arrivals stay anchored to the trace: a late IO does not delay later ones.
//!    (fio measures each delay from the previous issue instead, so in fio lateness accumulates;
//!    axboe/fio#1537 reports exactly that drift.) `replay_time_scale` also scales v2 waits,
//!    which fio leaves unscaled.
//! 5. With `replay_no_stall` every IO is due at once: same IOs, order kept, timing dropped.
//!
//! Only reads and writes are sent: the device interface has nothing else. An iolog's `sync`,
//! `datasync` and `trim` lines and a block trace's discards and flushes are counted, not sent
//! (a write that asked for a preflush or FUA is sent as a plain write, and counted). All files
//! of a log, and all devices of a block trace, map onto the one simulated device, offsets
//! unchanged.

use serde::{Deserialize, Serialize};

use super::fio_job::{iodepth_too_deep, JobError, MAX_IODEPTH};
use crate::error::InputError;
use crate::storage::io::{IoOp, IoRequest};
use crate::time::{Nanos, HORIZON, HORIZON_TEXT};
use crate::trace::blkparse::{BlkparseReader, ReplayedAction};
use crate::trace::block::{
    open_trace, BlockCounts, BlockOp, BlockTraceReader, TraceFormat, TraceInput,
};
use crate::trace::disksim::{AsciiDialect, AsciiTraceReader};
use crate::trace::fio_iolog::{IologAction, IologCounts, IologReader, IologVersion};
use crate::trace::mobile_csv::MobileCsvReader;

/// The replay knobs, under fio's option names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayOptions {
    #[serde(default = "one")]
    pub iodepth: u32,
    /// Percentage of the trace's IO rate: 200 replays twice as fast, 50 at half speed.
    #[serde(default = "hundred")]
    pub replay_time_scale: u32,
    #[serde(default)]
    pub replay_no_stall: bool,
}

fn one() -> u32 {
    1
}
fn hundred() -> u32 {
    100
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            iodepth: 1,
            replay_time_scale: 100,
            replay_no_stall: false,
        }
    }
}

impl ReplayOptions {
    pub fn validate(&self) -> Result<(), JobError> {
        if self.iodepth == 0 {
            return Err(JobError {
                key: "iodepth",
                message: "expected at least 1 IO in flight".into(),
            });
        }
        if self.iodepth > MAX_IODEPTH {
            return Err(iodepth_too_deep(self.iodepth));
        }
        if self.replay_time_scale == 0 {
            return Err(JobError {
                key: "replay_time_scale",
                message: "expected a positive percentage (100 replays at the trace's speed)".into(),
            });
        }
        Ok(())
    }
}

/// What a replay's trace held, by kind, as far as it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceCounts {
    Iolog(IologCounts),
    Block(BlockCounts),
}

/// Where a replay's requests come from.
enum Source {
    Iolog {
        reader: IologReader<TraceInput>,
        first_timestamp_us: Option<u64>,
        /// v2: when the last `wait` ends, from the replay's start.
        wait_end: Nanos,
    },
    Block(Box<dyn BlockTraceReader>),
}

/// A trace being replayed: the next IO read ahead, and the trace's clock.
pub struct TraceReplay {
    source: Source,
    options: ReplayOptions,
    format: TraceFormat,
    pending: Option<(Nanos, IoRequest)>,
}

impl TraceReplay {
    /// Opens the trace in `input` (`file` is the name errors carry): in `format`, or the one
    /// its first line shows; `action` picks blkparse's replayed action (`Q` when absent) and
    /// is refused for the other formats.
    pub fn new(
        input: TraceInput,
        file: &str,
        format: Option<TraceFormat>,
        action: Option<ReplayedAction>,
        options: ReplayOptions,
    ) -> Result<Self, InputError> {
        options
            .validate()
            .map_err(|e| InputError::whole(file, e.to_string()))?;
        let (format, input) = open_trace(input, file, format)?;
        if action.is_some() && format != TraceFormat::Blkparse {
            return Err(InputError::whole(
                file,
                format!(
                    "`action` picks the blkparse action to replay, but this trace is in the \
                     {} format",
                    format.name()
                ),
            ));
        }
        let source = match format {
            TraceFormat::FioIolog => Source::Iolog {
                reader: IologReader::new(input, file)?,
                first_timestamp_us: None,
                wait_end: Nanos::ZERO,
            },
            TraceFormat::Blkparse => Source::Block(Box::new(BlkparseReader::new(
                input,
                file,
                action.unwrap_or_default(),
            ))),
            TraceFormat::Disksim => Source::Block(Box::new(AsciiTraceReader::new(
                input,
                file,
                AsciiDialect::Disksim,
            ))),
            TraceFormat::Mqsim => Source::Block(Box::new(AsciiTraceReader::new(
                input,
                file,
                AsciiDialect::Mqsim,
            ))),
            TraceFormat::MobileCsv => Source::Block(Box::new(MobileCsvReader::new(input, file)?)),
        };
        Ok(TraceReplay {
            source,
            options,
            format,
            pending: None,
        })
    }

    pub fn options(&self) -> &ReplayOptions {
        &self.options
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The trace's name as errors print it.
    pub fn file(&self) -> &str {
        match &self.source {
            Source::Iolog { reader, .. } => reader.file(),
            Source::Block(reader) => reader.file(),
        }
    }

    /// Lines (iolog) or requests (block trace) of each kind read so far.
    pub fn counts(&self) -> TraceCounts {
        match &self.source {
            Source::Iolog { reader, .. } => TraceCounts::Iolog(reader.counts()),
            Source::Block(reader) => TraceCounts::Block(reader.counts()),
        }
    }

    /// The next IO and when it is due, measured from the replay's start; `None` at the end.
    pub fn peek(&mut self) -> Result<Option<(Nanos, IoRequest)>, InputError> {
        while self.pending.is_none() {
            let scale = self.options.replay_time_scale;
            let (due, line, request) = match &mut self.source {
                Source::Iolog {
                    reader,
                    first_timestamp_us,
                    wait_end,
                } => {
                    let Some(entry) = reader.next_entry()? else {
                        return Ok(None);
                    };
                    let due = match (reader.version(), entry.timestamp_us) {
                        (IologVersion::V3, Some(t)) => {
                            let first = *first_timestamp_us.get_or_insert(t);
                            scaled_ns(u128::from(t - first) * 1_000, scale)
                        }
                        _ => *wait_end,
                    };
                    let request = match entry.action {
                        IologAction::Io(req) => Some(req),
                        IologAction::Wait { us } => {
                            *wait_end =
                                wait_end.saturating_add(scaled_ns(u128::from(us) * 1_000, scale));
                            None
                        }
                        IologAction::Sync | IologAction::Trim { .. } | IologAction::File => None,
                    };
                    (due, entry.line, request)
                }
                Source::Block(reader) => {
                    let Some(e) = reader.next_event()? else {
                        return Ok(None);
                    };
                    let op = match e.op {
                        BlockOp::Read => Some(IoOp::Read),
                        BlockOp::Write => Some(IoOp::Write),
                        BlockOp::Discard | BlockOp::Flush => None,
                    };
                    let request = match op {
                        Some(op) => Some(IoRequest {
                            op,
                            offset: e.offset_bytes,
                            bytes: u32::try_from(e.len_bytes).map_err(|_| {
                                InputError::at(
                                    reader.file(),
                                    e.line,
                                    format!(
                                        "a request of {} bytes; the simulated device takes at \
                                         most 4 GiB - 1 in one request",
                                        e.len_bytes
                                    ),
                                )
                            })?,
                            sync: e.sync,
                        }),
                        None => None,
                    };
                    (scaled_ns(u128::from(e.t_ns), scale), e.line, request)
                }
            };
            if due > HORIZON {
                return Err(InputError::at(
                    self.file(),
                    line,
                    format!(
                        "this line is due {} after the replay starts (at replay_time_scale \
                         {scale}), beyond {HORIZON_TEXT}",
                        shown_secs(due),
                    ),
                ));
            }
            if let Some(req) = request {
                let due = if self.options.replay_no_stall {
                    Nanos::ZERO
                } else {
                    due
                };
                self.pending = Some((due, req));
            }
        }
        Ok(self.pending)
    }

    /// Lines of the trace not reached: the IO read ahead (if any) and every line after it.
    pub fn count_unreached(&mut self) -> Result<u64, InputError> {
        let rest = match &mut self.source {
            Source::Iolog { reader, .. } => reader.count_rest()?,
            Source::Block(reader) => reader.count_rest()?,
        };
        Ok(u64::from(self.pending.is_some()) + rest)
    }

    /// Takes the IO [`Self::peek`] returned.
    pub fn take(&mut self) -> Option<(Nanos, IoRequest)> {
        self.pending.take()
    }
}

/// `ns` nanoseconds of trace time in replay time at `scale` percent (saturating:
/// [`TraceReplay::peek`] refuses anything past the horizon).
fn scaled_ns(ns: u128, scale: u32) -> Nanos {
    let ns = ns * 100 / u128::from(scale);
    Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// A time in seconds, for messages about times too large to print in nanoseconds.
fn shown_secs(t: Nanos) -> String {
    format!("{:.3e} s", t.as_secs_f64())
}
