//! Idle decision sequences (`idle-decide/1`): a governor alone, driven by recorded inputs.
//!
//! Line 1 of a sequence is the platform (tick, capacity, states); every later line is one call of
//! the governor's `select` with what the kernel helpers return at that moment, followed (unless
//! the entry was rejected) by `reflect`. The outcome fields are inputs, so two implementations of
//! the same governor version must return the same decisions step for step: this is the contract
//! by which torpor's governors are checked against the kernel's. The format is specified in
//! docs/idle-decide.md.
//!
//! One step, as the cpuidle core runs it:
//! 1. Set the step's disabled states and the helpers' return values; `stop_tick = true`.
//! 2. `select` -> (index, stop_tick): the decision printed.
//! 3. The entered index is the step's `entered` (null = the selected one). -1 = rejected:
//!    `last_residency_ns = 0`, no `reflect`, though the tick flag is still set by `got_tick`.
//! 4. Otherwise `last_residency_ns = residency_ns` (as the kernel's u64 keeps it); after a
//!    polling state `poll_time_limit` takes the step's value; `got_tick` sets the flag that
//!    `tick_nohz_idle_got_tick()` tests and clears; the clock advances by `span_ns`; `reflect`.

use std::io::BufRead;

use serde::Deserialize;

use crate::cpuidle::{
    Device, GovernorName, IdleState, Kernel, Platform, MAX_STATES, NO_LATENCY_CONSTRAINT_NS,
};
use crate::error::InputError;
use crate::user_file::read_line;

/// The format name line 1 must carry.
pub const FORMAT: &str = "idle-decide/1";

/// `TICK_NSEC` at HZ=250, the header's default.
pub const DEFAULT_TICK_NS: i64 = 4_000_000;

/// `SCHED_CAPACITY_SCALE`: the biggest CPU's capacity.
pub const MAX_CAPACITY: u64 = 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderLine {
    format: String,
    #[serde(default)]
    tick_ns: Option<i64>,
    #[serde(default)]
    capacity: Option<u64>,
    states: Vec<StateLine>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateLine {
    #[serde(default)]
    name: Option<String>,
    exit_latency_ns: i64,
    target_residency_ns: i64,
    #[serde(default)]
    polling: bool,
}

/// One recorded `select` + `reflect`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub sleep_length_ns: i64,
    #[serde(default)]
    pub delta_tick_ns: Option<i64>,
    #[serde(default = "no_constraint")]
    pub latency_req_ns: i64,
    #[serde(default)]
    pub tick_stopped: bool,
    #[serde(default)]
    pub util: u64,
    #[serde(default)]
    pub nr_iowait: u32,
    #[serde(default)]
    pub disabled: Vec<usize>,
    #[serde(default)]
    pub entered: Option<i64>,
    pub residency_ns: i64,
    #[serde(default)]
    pub span_ns: Option<i64>,
    #[serde(default)]
    pub poll_time_limit: bool,
    #[serde(default)]
    pub got_tick: bool,
}

fn no_constraint() -> i64 {
    NO_LATENCY_CONSTRAINT_NS
}

/// One decision: what `select` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub step: u64,
    pub idx: usize,
    pub stop_tick: bool,
    /// The index the driver entered (-1 = rejected), for the readable table.
    pub entered: i64,
}

/// A sequence being read and run, one line at a time (constant memory).
pub struct Sequence<R> {
    reader: R,
    file: String,
    line_no: usize,
    buf: String,
    platform: Platform,
    dev: Device,
    kernel: Kernel,
    governor: Box<dyn crate::cpuidle::Governor>,
    step: u64,
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
    let h: HeaderLine = serde_json::from_str(text).map_err(|e| json_error(file, 1, &what, &e))?;
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
    let tick_ns = h.tick_ns.unwrap_or(DEFAULT_TICK_NS);
    if tick_ns <= 0 {
        return Err(InputError::at(
            file,
            1,
            format!(
                "expected a positive tick_ns (TICK_NSEC, e.g. 4000000 for HZ=250), got {tick_ns}"
            ),
        ));
    }
    let capacity = h.capacity.unwrap_or(MAX_CAPACITY);
    if capacity > MAX_CAPACITY {
        return Err(InputError::at(
            file,
            1,
            format!("expected a capacity in 0..={MAX_CAPACITY}, got {capacity}"),
        ));
    }
    if h.states.is_empty() || h.states.len() > MAX_STATES {
        return Err(InputError::at(
            file,
            1,
            format!(
                "expected 1 to {MAX_STATES} idle states (CPUIDLE_STATE_MAX), got {}",
                h.states.len()
            ),
        ));
    }
    let mut states = Vec::with_capacity(h.states.len());
    for (i, s) in h.states.into_iter().enumerate() {
        if s.exit_latency_ns < 0 || s.target_residency_ns < 0 {
            return Err(InputError::at(
                file,
                1,
                format!("state {i}: expected non-negative exit_latency_ns and target_residency_ns"),
            ));
        }
        if s.polling && i > 0 {
            // Only the first state of a cpuidle driver may poll (CPUIDLE_FLAG_POLLING is
            // state 0's: `cpuidle_poll_state_init` fills `drv->states[0]`).
            return Err(InputError::at(
                file,
                1,
                format!("state {i}: only state 0 may poll, got `\"polling\": true`"),
            ));
        }
        if let Some(prev) = states.last() {
            let prev: &IdleState = prev;
            if s.target_residency_ns < prev.target_residency_ns {
                return Err(InputError::at(
                    file,
                    1,
                    format!(
                        "expected states ordered by target residency, shallow to deep: state {i} \
                         ({} ns) is below state {} ({} ns)",
                        s.target_residency_ns,
                        i - 1,
                        prev.target_residency_ns
                    ),
                ));
            }
        }
        states.push(IdleState {
            name: s.name.unwrap_or_else(|| format!("state{i}")),
            exit_latency_ns: s.exit_latency_ns,
            target_residency_ns: s.target_residency_ns,
            polling: s.polling,
        });
    }
    Ok(Platform {
        states,
        tick_ns,
        capacity,
    })
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
        if platform.state_count() < governor_name.min_states() {
            return Err(InputError::at(
                file,
                line_no,
                format!(
                    "{} needs at least {} idle states; the platform has {}",
                    governor_name.canonical(),
                    governor_name.min_states(),
                    platform.state_count()
                ),
            ));
        }
        let mut dev = Device::new(platform.state_count());
        let governor = governor_name.build(&platform, &mut dev);
        Ok(Sequence {
            reader,
            file: file.to_string(),
            line_no,
            buf,
            platform,
            dev,
            kernel: Kernel::default(),
            governor,
            step: 0,
        })
    }

    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    pub fn governor_name(&self) -> &'static str {
        self.governor.name()
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
        self.check(&step)?;
        Ok(Some(self.run(&step)))
    }

    fn check(&self, step: &Step) -> Result<(), InputError> {
        let n = self.platform.state_count();
        let at = |m: String| InputError::at(&self.file, self.line_no, m);
        if let Some(&i) = step.disabled.iter().find(|&&i| i >= n) {
            return Err(at(format!(
                "expected disabled state indices below {n}, got {i}"
            )));
        }
        if let Some(e) = step.entered {
            if e < -1 || e >= n as i64 {
                return Err(at(format!(
                    "expected entered to be null, -1 (rejected) or a state index below {n}, got {e}"
                )));
            }
        }
        if step.util > self.platform.capacity {
            return Err(at(format!(
                "expected util in 0..={} (the capacity), got {}",
                self.platform.capacity, step.util
            )));
        }
        Ok(())
    }

    fn run(&mut self, step: &Step) -> Decision {
        let p = &self.platform;
        let k = &mut self.kernel;
        k.sleep_length_ns = step.sleep_length_ns;
        k.delta_tick_ns = step.delta_tick_ns.unwrap_or(if step.tick_stopped {
            step.sleep_length_ns
        } else {
            step.sleep_length_ns.min(p.tick_ns)
        });
        k.latency_req_ns = step.latency_req_ns;
        k.tick_stopped = step.tick_stopped;
        k.util = step.util;
        k.nr_iowait = step.nr_iowait;
        k.oracle_residency_ns = step.residency_ns;
        self.dev.disabled.iter_mut().for_each(|d| *d = false);
        for &i in &step.disabled {
            self.dev.disabled[i] = true;
        }

        let mut stop_tick = true;
        let idx = self.governor.select(p, &mut self.dev, k, &mut stop_tick);
        let entered = step.entered.unwrap_or(idx as i64);
        if step.got_tick {
            k.got_idle_tick = true;
        }
        if entered < 0 {
            self.dev.last_residency_ns = 0;
        } else {
            let entered_idx = entered as usize;
            self.dev.last_residency_ns = step.residency_ns as u64;
            if p.states[entered_idx].polling {
                self.dev.poll_time_limit = step.poll_time_limit;
            }
            k.clock_ns = k
                .clock_ns
                .wrapping_add(step.span_ns.unwrap_or(step.residency_ns) as u64);
            self.governor.reflect(p, &mut self.dev, k, entered_idx);
        }
        let d = Decision {
            step: self.step,
            idx,
            stop_tick,
            entered,
        };
        self.step += 1;
        d
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

/// The (index, stop_tick) decisions of `governor` on a whole sequence, for governor tests.
#[cfg(test)]
pub(crate) fn decisions(governor: &str, text: &str) -> Vec<(usize, bool)> {
    let mut seq = Sequence::new(text.as_bytes(), "seq.jsonl", governor).expect("header");
    let mut out = Vec::new();
    while let Some(d) = seq.next_decision().expect("step") {
        out.push((d.idx, d.stop_tick));
    }
    out
}

#[cfg(test)]
mod tests;
