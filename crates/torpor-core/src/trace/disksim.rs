//! Streaming reader for the ASCII block traces of DiskSim and MQSim: one request per line,
//! five whitespace-separated fields, `time device sector size type`.
//!
//! The two simulators share the columns but not the clock or the type field:
//!
//! * DiskSim (its manual, "ASCII" input trace format): the arrival time is a float number of
//!   milliseconds from the start of the simulation; the device is an integer; the block number
//!   and the size are in 512-byte sectors; the last field is a hexadecimal flag word whose bit 0
//!   is set for a read and clear for a write (other bits: not modelled here).
//! * MQSim (`src/host/ASCII_Trace_Definition.h`, `IO_Flow_Trace_Based.cpp` at CMU-SAFARI/MQSim):
//!   the arrival time is a whole number in the workload's time unit, nanoseconds in the traces
//!   it ships; the type is `0` for a write and `1` for a read. MQSim takes any other type as a
//!   read and silently stops at the first line without five fields; torpor refuses both at
//!   their line. MQSim also refuses arrival times that go backwards, as torpor does for both.
//!
//! Times are measured from the trace's zero (both simulators start their clock at 0, so a
//! trace whose first request arrives at 938 ms starts with 938 ms of idleness). Every device
//! number maps onto the one simulated device, sectors unchanged (MQSim ignores the column
//! too); requests on devices other than the first are counted.

use std::io::BufRead;

use super::block::{
    decimal_to_ns, secs_text, sector_fields, sector_request, BlockCounts, BlockEvent, BlockOp,
    LineFormat, LineTrace, TraceFormat,
};
use crate::error::shown;

/// Which of the two simulators' conventions a trace follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsciiDialect {
    Disksim,
    Mqsim,
}

/// Pulls requests out of a DiskSim or MQSim ASCII trace one line at a time.
pub type AsciiTraceReader<R> = LineTrace<R, AsciiFormat>;

/// What a DiskSim or MQSim line is read against: the dialect and the trace so far.
pub struct AsciiFormat {
    dialect: AsciiDialect,
    last: Option<(u64, usize)>,
    first_device: Option<u64>,
}

impl<R: BufRead> LineTrace<R, AsciiFormat> {
    pub fn new(reader: R, file: &str, dialect: AsciiDialect) -> Self {
        let counts = BlockCounts::new(match dialect {
            AsciiDialect::Disksim => TraceFormat::Disksim,
            AsciiDialect::Mqsim => TraceFormat::Mqsim,
        });
        let format = AsciiFormat {
            dialect,
            last: None,
            first_device: None,
        };
        LineTrace::new_at(reader, file, 0, String::new(), counts, format)
    }
}

impl AsciiFormat {
    fn shape(&self) -> &'static str {
        match self.dialect {
            AsciiDialect::Disksim => {
                "expected `time_ms device sector sectors flags` (DiskSim's ASCII trace)"
            }
            AsciiDialect::Mqsim => {
                "expected `time_ns device sector sectors type` (MQSim's ASCII trace)"
            }
        }
    }
}

impl LineFormat for AsciiFormat {
    fn parse(
        &mut self,
        text: &str,
        line_no: usize,
        counts: &mut BlockCounts,
    ) -> Result<BlockEvent, String> {
        let fields: Vec<&str> = text.split_ascii_whitespace().take(6).collect();
        let [time, device, sector, size, kind] = fields[..] else {
            return Err(format!(
                "{} fields; {}",
                if fields.len() > 5 {
                    "more than 5"
                } else {
                    "fewer than 5"
                },
                self.shape()
            ));
        };
        let t_ns = match self.dialect {
            AsciiDialect::Disksim => decimal_to_ns(time, 1_000_000).ok_or_else(|| {
                format!(
                    "expected an arrival time in milliseconds (e.g. 12.5), got {}",
                    shown(time)
                )
            })?,
            AsciiDialect::Mqsim => time.parse().map_err(|_| {
                format!(
                    "expected an arrival time in nanoseconds (a whole number), got {}",
                    shown(time)
                )
            })?,
        };
        let (device, sector, size) = sector_fields(device, sector, size)?;
        let op = match self.dialect {
            AsciiDialect::Disksim => {
                let digits = kind
                    .strip_prefix("0x")
                    .or_else(|| kind.strip_prefix("0X"))
                    .unwrap_or(kind);
                let flags = u32::from_str_radix(digits, 16).map_err(|_| {
                    format!(
                        "expected the request flags in hexadecimal (bit 0: 1 = read, 0 = \
                         write), got {}",
                        shown(kind)
                    )
                })?;
                if flags & 1 == 1 {
                    BlockOp::Read
                } else {
                    BlockOp::Write
                }
            }
            AsciiDialect::Mqsim => match kind {
                "0" => BlockOp::Write,
                "1" => BlockOp::Read,
                _ => {
                    return Err(format!(
                        "expected the request type 0 (write) or 1 (read), got {}",
                        shown(kind)
                    ))
                }
            },
        };
        if let Some((last, line)) = self.last {
            if t_ns < last {
                return Err(format!(
                    "arrival time {} goes back before {}, the time of line {line}; arrival \
                     times must not decrease",
                    secs_text(t_ns),
                    secs_text(last)
                ));
            }
        }
        self.last = Some((t_ns, line_no));
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
    use crate::error::InputError;
    use crate::trace::block::BlockTraceReader;

    fn events(text: &str, d: AsciiDialect) -> Result<Vec<(u64, BlockOp, u64, u64)>, InputError> {
        let mut r = AsciiTraceReader::new(text.as_bytes(), "t.trace", d);
        let mut out = Vec::new();
        while let Some(e) = r.next_event()? {
            out.push((e.t_ns, e.op, e.offset_bytes, e.len_bytes));
        }
        Ok(out)
    }

    #[test]
    fn disksim_times_are_milliseconds_and_flags_hex() {
        // 0.5 ms, read (flags 0x1); 2.25 ms, write (flags 0x10: bit 0 clear).
        let got = events("0.5 0 8 16 1\n2.25 1 0 1 10\n", AsciiDialect::Disksim).unwrap();
        assert_eq!(
            got,
            vec![
                (500_000, BlockOp::Read, 4096, 8192),
                (2_250_000, BlockOp::Write, 0, 512)
            ]
        );
    }

    #[test]
    fn mqsim_types_other_than_0_and_1_are_refused() {
        let e = events("10 0 0 8 2\n", AsciiDialect::Mqsim).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.trace:1: expected the request type 0 (write) or 1 (read), got \"2\""
        );
        let e = events("10 0 0 8\n", AsciiDialect::Mqsim).unwrap_err();
        assert!(e.message.starts_with("fewer than 5 fields"), "{e}");
    }
}
