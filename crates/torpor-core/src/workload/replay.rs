//! Replaying a fio iolog: turning its lines into IOs with the times the trace asks for.
//!
//! Timing (the parser's module, [`crate::trace::fio_iolog`], describes the formats):
//!
//! 1. v3: an IO is due `(timestamp - first timestamp) × 100 / replay_time_scale` after the
//!    replay starts, the first timestamp being the log's first line (usually its `add`), as in
//!    fio's `delay_since_ttime`.
//! 2. v2: IOs are due back to back; a `wait N` line makes everything after it due no sooner
//!    than `N` µs (scaled the same way) after the previous `wait` ended.
//! 3. An IO is issued at its due time, or as soon as one of the `iodepth` slots frees up if all
//!    are busy then. Arrivals stay anchored to the trace: a late IO does not delay later ones.
//!    (fio measures each delay from the previous issue instead, so in fio lateness accumulates;
//!    axboe/fio#1537 reports exactly that drift.) `replay_time_scale` also scales v2 waits,
//!    which fio leaves unscaled.
//! 4. With `replay_no_stall` every IO is due at once: same IOs, order kept, timing dropped.
//!
//! `sync`, `datasync` and `trim` lines are counted but not sent: the device interface has only
//! reads and writes. All files of a log map onto the one simulated device, offsets unchanged.

use std::io::BufRead;

use serde::{Deserialize, Serialize};

use super::fio_job::{iodepth_too_deep, JobError, MAX_IODEPTH};
use crate::error::InputError;
use crate::storage::io::IoRequest;
use crate::time::{Nanos, HORIZON, HORIZON_TEXT};
use crate::trace::fio_iolog::{IologAction, IologCounts, IologReader, IologVersion};

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

/// An iolog being replayed: the next IO read ahead, and the trace's clock.
pub struct IologReplay<R> {
    reader: IologReader<R>,
    options: ReplayOptions,
    first_timestamp_us: Option<u64>,
    /// v2: when the last `wait` ends, from the replay's start.
    wait_end: Nanos,
    pending: Option<(Nanos, IoRequest)>,
}

impl<R: BufRead> IologReplay<R> {
    /// Reads the header of the log in `reader`; `file` is the name errors carry.
    pub fn new(reader: R, file: &str, options: ReplayOptions) -> Result<Self, InputError> {
        options
            .validate()
            .map_err(|e| InputError::whole(file, e.to_string()))?;
        Ok(IologReplay {
            reader: IologReader::new(reader, file)?,
            options,
            first_timestamp_us: None,
            wait_end: Nanos::ZERO,
            pending: None,
        })
    }

    pub fn options(&self) -> &ReplayOptions {
        &self.options
    }

    /// The log's name as errors print it.
    pub fn file(&self) -> &str {
        self.reader.file()
    }

    /// Lines of each kind read so far (syncs and trims are only counted).
    pub fn counts(&self) -> IologCounts {
        self.reader.counts()
    }

    /// The next IO and when it is due, measured from the replay's start; `None` at the end.
    pub fn peek(&mut self) -> Result<Option<(Nanos, IoRequest)>, InputError> {
        while self.pending.is_none() {
            let Some(entry) = self.reader.next_entry()? else {
                return Ok(None);
            };
            let due = match (self.reader.version(), entry.timestamp_us) {
                (IologVersion::V3, Some(t)) => {
                    let first = *self.first_timestamp_us.get_or_insert(t);
                    self.scaled_us(t - first)
                }
                _ => self.wait_end,
            };
            if due > HORIZON {
                return Err(InputError::at(
                    self.reader.file(),
                    entry.line,
                    format!(
                        "this line is due {} after the replay starts (at replay_time_scale \
                         {}), beyond {HORIZON_TEXT}",
                        shown_secs(due),
                        self.options.replay_time_scale
                    ),
                ));
            }
            match entry.action {
                IologAction::Io(req) => {
                    let due = if self.options.replay_no_stall {
                        Nanos::ZERO
                    } else {
                        due
                    };
                    self.pending = Some((due, req));
                }
                IologAction::Wait { us } => {
                    self.wait_end = self.wait_end.saturating_add(self.scaled_us(us))
                }
                IologAction::Sync | IologAction::Trim { .. } | IologAction::File => {}
            }
        }
        Ok(self.pending)
    }

    /// Lines of the log not reached: the IO read ahead (if any) and every line after it.
    pub fn count_unreached(&mut self) -> Result<u64, InputError> {
        Ok(u64::from(self.pending.is_some()) + self.reader.count_rest()?)
    }

    /// Takes the IO [`Self::peek`] returned.
    pub fn take(&mut self) -> Option<(Nanos, IoRequest)> {
        self.pending.take()
    }

    /// `us` microseconds of trace time in replay time (saturating: [`Self::peek`] refuses
    /// anything past the horizon).
    fn scaled_us(&self, us: u64) -> Nanos {
        let ns = u128::from(us) * 1_000 * 100 / u128::from(self.options.replay_time_scale);
        Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// A time in seconds, for messages about times too large to print in nanoseconds.
fn shown_secs(t: Nanos) -> String {
    format!("{:.3e} s", t.as_secs_f64())
}
