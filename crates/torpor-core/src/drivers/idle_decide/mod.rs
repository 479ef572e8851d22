//! Idle decision sequences (`idle-decide/1`): a governor alone, driven by recorded inputs.
//!
//! Line 1 of a sequence is the platform (tick, capacity, states); every later line is one call of
//! the governor's `select` with what the kernel helpers return at that moment, followed (unless
//! the entry was rejected) by `reflect`. The outcome fields are inputs, so two implementations of
//! the same governor version must return the same decisions step for step: this is the contract
//! by which torpor's governors are checked against the kernel's. The format is specified in
//! docs/idle-decide.md.
//!
//! What a step does to the governor is the cpuidle core's protocol, [`crate::cpuidle::decide`];
//! this driver reads the file, one line at a time, and says where it is wrong.

use std::io::BufRead;

use crate::cpuidle::decide::{Header, Step, Stepper};
use crate::cpuidle::{GovernorName, Platform};
use crate::error::InputError;
use crate::user_file::read_line;

pub use crate::cpuidle::decide::{Decision, FORMAT};

/// A sequence being read and run, one line at a time (constant memory).
pub struct Sequence<R> {
    reader: R,
    file: String,
    line_no: usize,
    buf: String,
    stepper: Stepper,
}

fn json_error(file: &str, line: usize, what: &str, e: &serde_json::Error) -> InputError {
    let mut message = e.to_string();
    // serde_json appends " at line 1 column N" for the one-line document: the column helps.
    if let Some(i) = message.find(" at line 1 column ") {
        let column = &message[i + " at line 1 column ".len()..];
        message = format!("{} (column {column})", &message[..i]);
    }
    InputError::at(file, line, format!("expected {what}: {message}"))
}

/// Parses line 1 into the platform.
pub fn parse_header(file: &str, text: &str) -> Result<Platform, InputError> {
    let what = format!("the platform line ({{\"format\": \"{FORMAT}\", \"states\": [...]}})");
    let h: Header = serde_json::from_str(text).map_err(|e| json_error(file, 1, &what, &e))?;
    if h.format != FORMAT {
        return Err(InputError::at(
            file,
            1,
            format!(
                "expected \"format\": \"{FORMAT}\", got {}",
                crate::error::shown(&h.format)
            ),
        ));
    }
    h.platform().map_err(|m| InputError::at(file, 1, m))
}

impl<R: BufRead> Sequence<R> {
    /// Reads the platform line and builds the governor `name` on it.
    pub fn new(mut reader: R, file: &str, name: &str) -> Result<Self, InputError> {
        let governor_name = GovernorName::parse(name).map_err(|m| InputError::whole(file, m))?;
        let mut buf = String::new();
        let mut line_no = 0;
        // Blank lines carry nothing; skip them anywhere.
        loop {
            line_no += 1;
            if read_line(&mut reader, &mut buf, file, line_no)? == 0 {
                return Err(InputError::at(
                    file,
                    line_no,
                    "the file is empty; expected the platform line first",
                ));
            }
            if !buf.trim().is_empty() {
                break;
            }
        }
        let platform = parse_header(file, buf.trim_end()).map_err(|e| InputError {
            line: Some(line_no),
            ..e
        })?;
        let stepper =
            Stepper::new(governor_name, platform).map_err(|m| InputError::at(file, line_no, m))?;
        Ok(Sequence {
            reader,
            file: file.to_string(),
            line_no,
            buf,
            stepper,
        })
    }

    pub fn platform(&self) -> &Platform {
        self.stepper.platform()
    }

    pub fn governor_name(&self) -> &'static str {
        self.stepper.governor_name()
    }

    /// Reads and runs the next step; `None` at the end of the file.
    pub fn next_decision(&mut self) -> Result<Option<Decision>, InputError> {
        let step = loop {
            self.line_no += 1;
            if read_line(&mut self.reader, &mut self.buf, &self.file, self.line_no)? == 0 {
                return Ok(None);
            }
            let text = self.buf.trim();
            if text.is_empty() {
                continue;
            }
            let step: Step = serde_json::from_str(text)
                .map_err(|e| json_error(&self.file, self.line_no, "a step object", &e))?;
            break step;
        };
        self.stepper
            .check(&step)
            .map_err(|m| InputError::at(&self.file, self.line_no, m))?;
        Ok(Some(self.stepper.run(&step)))
    }
}

/// Where a sequence's decisions go wrong: the input, or the output (a closed pipe, a full disk).
#[derive(Debug)]
pub enum DecideError {
    Input(InputError),
    Output(std::io::Error),
}

impl From<InputError> for DecideError {
    fn from(e: InputError) -> Self {
        DecideError::Input(e)
    }
}

/// Runs the sequence in `reader` through `governor` and writes one decision per step to `out`:
/// JSON lines (`{"step": k, "idx": i, "stop_tick": b}`) or a table a person reads. Returns the
/// number of steps. Memory stays constant whatever the sequence's length.
pub fn write_decisions<R: BufRead, W: std::io::Write>(
    reader: R,
    file: &str,
    governor: &str,
    json: bool,
    out: &mut W,
) -> Result<u64, DecideError> {
    let mut seq = Sequence::new(reader, file, governor)?;
    let out_err = DecideError::Output;
    let mut steps = 0;
    while let Some(d) = seq.next_decision()? {
        // The table's title waits for the first decision: a sequence refused at its first
        // step leaves standard output empty.
        if steps == 0 && !json {
            write_table_title(&seq, out).map_err(out_err)?;
        }
        if json {
            writeln!(
                out,
                "{{\"step\": {}, \"idx\": {}, \"stop_tick\": {}}}",
                d.step, d.idx, d.stop_tick
            )
        } else {
            let states = &seq.platform().states;
            let entered = match d.entered {
                -1 => "rejected".to_string(),
                e if e as usize == d.idx => String::new(),
                e => states[e as usize].name.clone(),
            };
            let row = format!(
                "{:>8}  {:>3}  {:<12} {:<5} {}",
                d.step,
                d.idx,
                states[d.idx].name,
                if d.stop_tick { "stop" } else { "keep" },
                entered
            );
            writeln!(out, "{}", row.trim_end())
        }
        .map_err(out_err)?;
        steps += 1;
    }
    out.flush().map_err(out_err)?;
    Ok(steps)
}

fn write_table_title<R: BufRead, W: std::io::Write>(
    seq: &Sequence<R>,
    out: &mut W,
) -> std::io::Result<()> {
    let p = seq.platform();
    let names: Vec<&str> = p.states.iter().map(|s| s.name.as_str()).collect();
    writeln!(
        out,
        "# {} on {} states ({}), tick {} ns, capacity {}",
        seq.governor_name(),
        names.len(),
        names.join(", "),
        p.tick_ns,
        p.capacity
    )?;
    writeln!(
        out,
        "{:>8}  {:>3}  {:<12} {:<5} entered",
        "step", "idx", "state", "tick"
    )
}

#[cfg(test)]
mod tests;
