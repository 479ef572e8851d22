//! Reads a drive's power-state table from `smartctl -a` (or `-x`) text for an NVMe drive.
//!
//! What it models: the "Supported Power States" table smartmontools prints from the Identify
//! Controller power-state descriptors (specs/spec-storage.md §1.1), and the `Model Number:`
//! line, converted to an [`NvmeController`] in engine units (mW, µs).
//!
//! Format followed: smartmontools `src/nvmeprint.cpp` (repo `smartmontools/smartmontools`,
//! read at `f1d0da9c`, 2026-08; the layout is the same in the 7.3 dumps used as fixtures).
//! It prints one row per state, PS0..=min(NPSS, 31), as
//! `%2d %c %9s %8s %8s %3d %2d %2d %2d %8u %7u` under the header
//! `St Op     Max   Active     Idle   RL RT WL WT  Ent_Lat  Ex_Lat`:
//! state, `+` operational / `-` non-operational (NOPS), max power, active power, idle power,
//! the four relative ranks, ENLAT and EXLAT in µs. A power is printed as `N.NNW` (0.01 W
//! units), `N.NNNNW` (0.0001 W units), `-` (not reported) or `?` (reserved scale); its value
//! in watts is what is printed, whatever the unit.
//!
//! Two things the table cannot tell, reported in [`Parsed::notes`]:
//! - smartctl does not print APSTA; APST support is assumed (`apsta = true`).
//! - smartmontools decodes the Active/Idle scale from bits 1:0 of PSD bytes 22 and 18
//!   (`format_power(..., ps.idle_scale)` masks with 0x3), while NVMe puts the scale in bits
//!   7:6; those columns are taken as printed, with a note, whenever one is reported.
//!
//! Algorithm:
//! 1. Find the `Model Number:` line (the model; a note if absent) and `Firmware Version:`.
//! 2. Find the header line (`St Op …`); it must name exactly the eleven columns above.
//! 3. Read rows until a blank line or a line that does not start with a state number. Rows
//!    must be numbered 0, 1, 2, … and have eleven columns; every column is checked, even those
//!    torpor does not use (RL RT WL WT), because a misaligned column means a misread table.
//!    A table that ends the file is noted: smartctl prints more after it, so the output may
//!    have been cut inside the table.
//! 4. NPSS = the last state number.

use super::Parsed;
use crate::apst::psd::{NvmeController, PowerState, PS0_MUST_BE_OPERATIONAL};
use crate::error::InputError;

/// The column names, as smartmontools prints them.
const HEADER: [&str; 11] = [
    "St", "Op", "Max", "Active", "Idle", "RL", "RT", "WL", "WT", "Ent_Lat", "Ex_Lat",
];

/// The line smartmontools prints just above the header.
const TITLE: &str = "Supported Power States";

/// Identify Controller holds PS0..=PS31; smartctl prints no more.
const MAX_STATES: usize = 32;

const APSTA_NOTE: &str =
    "smartctl does not print APSTA; assumed 1 (the drive supports APST): check with `nvme id-ctrl`";

const ACTIVE_IDLE_NOTE: &str = "smartctl decodes the Active/Idle power scale from bits 1:0 of \
    the scale byte, where NVMe puts it in bits 7:6; the Active/Idle powers were taken as \
    printed: check them with `nvme id-ctrl` if they matter";

/// Parses `smartctl -a` text; `file` names the input in errors.
pub fn parse(file: &str, text: &str) -> Result<Parsed, InputError> {
    if text.trim().is_empty() {
        let message = "empty file: expected `smartctl -a` output for an NVMe drive";
        return Err(InputError::at(file, 1, message));
    }
    let mut notes = Vec::new();
    let model = match find_model(text) {
        Some((n, model)) if model.contains(char::is_control) => {
            return Err(InputError::at(
                file,
                n,
                format!(
                    "Model Number: expected printable text, got {}",
                    crate::error::shown(&model)
                ),
            ))
        }
        Some((_, model)) => model,
        None => {
            notes.push("no `Model Number:` line; model left empty".to_string());
            String::new()
        }
    };
    let mut lines = text.lines().enumerate().map(|(i, line)| (i + 1, line));
    let header_line = find_header(file, &mut lines)?;
    let power_states = read_rows(file, header_line, lines, &mut notes)?;
    notes.push(APSTA_NOTE.to_string());
    if power_states
        .iter()
        .any(|ps| ps.active_power_mw.is_some() || ps.idle_power_mw.is_some())
    {
        notes.push(ACTIVE_IDLE_NOTE.to_string());
    }
    let controller = NvmeController {
        model,
        npss: (power_states.len() - 1) as u8, // 1..=MAX_STATES rows: fits.
        apsta: true,
        power_states,
    };
    Ok(Parsed {
        controller,
        firmware: find_firmware(text),
        format: super::SMARTCTL_FORMAT,
        notes,
    })
}

/// Step 1: the text after `Model Number:`, trimmed, and its line.
fn find_model(text: &str) -> Option<(usize, String)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let model = line.trim_start().strip_prefix("Model Number:")?;
        Some((i + 1, model.trim().to_string()))
    })
}

/// The text after `Firmware Version:`, trimmed, when it is printable and not empty (only
/// used to tell the user which firmware a matched preset was read from).
fn find_firmware(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let fr = line.trim_start().strip_prefix("Firmware Version:")?.trim();
        (!fr.is_empty() && !fr.contains(char::is_control)).then(|| fr.to_string())
    })
}

/// Step 2: consumes lines up to and including the header; returns its line number.
fn find_header<'t>(
    file: &str,
    lines: &mut impl Iterator<Item = (usize, &'t str)>,
) -> Result<usize, InputError> {
    let mut title_line = None;
    for (n, line) in lines {
        let mut words = line.split_whitespace();
        if line.trim() == TITLE {
            title_line = Some(n);
        } else if (words.next(), words.next()) == (Some("St"), Some("Op")) {
            if !line.split_whitespace().eq(HEADER) {
                let message = format!(
                    "unexpected power-state table header; expected the columns `{}`",
                    HEADER.join(" ")
                );
                return Err(InputError::at(file, n, message));
            }
            return Ok(n);
        }
    }
    Err(match title_line {
        Some(n) => InputError::at(
            file,
            n + 1,
            format!(
                "expected the column header `{}` after `{TITLE}`",
                HEADER.join(" ")
            ),
        ),
        None => InputError::at(
            file,
            1,
            format!(
                "no `{TITLE}` table: expected `smartctl -a` output for an NVMe drive \
                 (SATA drives have none)"
            ),
        ),
    })
}

/// Step 3: the rows under the header.
fn read_rows<'t>(
    file: &str,
    header_line: usize,
    lines: impl Iterator<Item = (usize, &'t str)>,
    notes: &mut Vec<String>,
) -> Result<Vec<PowerState>, InputError> {
    let mut states = Vec::new();
    let mut ended = false;
    for (n, line) in lines {
        let starts_with_number = line
            .split_whitespace()
            .next()
            .is_some_and(|word| word.bytes().all(|b| b.is_ascii_digit()));
        if !starts_with_number {
            ended = true;
            break;
        }
        let row = Row {
            file,
            line: n,
            state: states.len(),
        };
        states.push(row.parse(line, notes)?);
    }
    if states.is_empty() {
        let message = "the power-state table has no rows; expected at least state 0";
        return Err(InputError::at(file, header_line + 1, message));
    }
    if !ended {
        // smartctl always prints more after the table (a blank line, then the LBA sizes).
        notes.push(format!(
            "the power-state table ends the file after PS{}: if the output was cut short, the \
             states after it are missing",
            states.len() - 1
        ));
    }
    Ok(states)
}

/// One table row being read: where it is and which state it must describe.
struct Row<'f> {
    file: &'f str,
    line: usize,
    state: usize,
}

impl Row<'_> {
    fn err(&self, message: String) -> InputError {
        InputError::at(self.file, self.line, message)
    }

    fn parse(&self, line: &str, notes: &mut Vec<String>) -> Result<PowerState, InputError> {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() != HEADER.len() {
            return Err(self.err(format!(
                "expected {} columns (`{}`), got {}",
                HEADER.len(),
                HEADER.join(" "),
                cols.len()
            )));
        }
        self.check_state_number(cols[0])?;
        let non_operational = match cols[1] {
            "+" => false,
            "-" if self.state == 0 => return Err(self.err(PS0_MUST_BE_OPERATIONAL.to_string())),
            "-" => true,
            other => {
                return Err(self.err(format!(
                    "PS{} Op: expected `+` (operational) or `-` (non-operational), got `{other}`",
                    self.state
                )))
            }
        };
        let max_power_mw = parse_watts_mw(cols[2]).ok_or_else(|| {
            self.err(format!(
                "PS{} Max: expected a power like `3.50W` or `0.0250W`, got `{}`",
                self.state, cols[2]
            ))
        })?;
        let active_power_mw = self.optional_power("Active", cols[3], notes)?;
        let idle_power_mw = self.optional_power("Idle", cols[4], notes)?;
        for (name, word) in HEADER[5..9].iter().zip(&cols[5..9]) {
            self.check_rank(name, word)?;
        }
        Ok(PowerState {
            max_power_mw,
            non_operational,
            entry_lat_us: self.latency_us("Ent_Lat", cols[9])?,
            exit_lat_us: self.latency_us("Ex_Lat", cols[10])?,
            active_power_mw,
            idle_power_mw,
        })
    }

    fn check_state_number(&self, word: &str) -> Result<(), InputError> {
        if self.state >= MAX_STATES {
            return Err(self.err(format!(
                "expected at most {MAX_STATES} power states (0..=31), got state `{word}`"
            )));
        }
        if word.parse::<usize>().ok() != Some(self.state) {
            return Err(self.err(format!(
                "expected state {} (rows numbered 0, 1, 2, … in order), got `{word}`",
                self.state
            )));
        }
        Ok(())
    }

    /// Active or Idle: a power, `-` (not reported) or `?` (reserved scale, noted).
    fn optional_power(
        &self,
        column: &str,
        word: &str,
        notes: &mut Vec<String>,
    ) -> Result<Option<f64>, InputError> {
        match word {
            "-" => Ok(None),
            "?" => {
                notes.push(format!(
                    "PS{} {column} power is `?` (reserved scale); treated as not reported",
                    self.state
                ));
                Ok(None)
            }
            _ => parse_watts_mw(word).map(Some).ok_or_else(|| {
                self.err(format!(
                    "PS{} {column}: expected a power like `1.80W`, or `-` (not reported), got `{word}`",
                    self.state
                ))
            }),
        }
    }

    /// RL, RT, WL, WT: 5-bit relative ranks.
    fn check_rank(&self, column: &str, word: &str) -> Result<(), InputError> {
        match word.parse::<u8>() {
            Ok(rank) if rank <= 31 && word.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
            _ => Err(self.err(format!(
                "PS{} {column}: expected a relative rank (0..=31), got `{word}`",
                self.state
            ))),
        }
    }

    fn latency_us(&self, column: &str, word: &str) -> Result<u32, InputError> {
        match word.parse::<u32>() {
            Ok(us) if word.bytes().all(|b| b.is_ascii_digit()) => Ok(us),
            _ => Err(self.err(format!(
                "PS{} {column}: expected an integer number of microseconds (0..={}), got `{word}`",
                self.state,
                u32::MAX
            ))),
        }
    }
}

/// `3.50W` → 3500 mW, `0.0250W` → 25 mW: two decimals are 0.01 W units, four are 0.0001 W
/// units, as smartmontools prints them. Computed in integer units so the result is exact.
fn parse_watts_mw(word: &str) -> Option<f64> {
    let (whole, fraction) = word.strip_suffix('W')?.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let units_per_watt = match fraction.len() {
        2 => 100,
        4 => 10_000,
        _ => return None,
    };
    let units = whole.parse::<u64>().ok()?.checked_mul(units_per_watt)?;
    let units = units.checked_add(fraction.parse::<u64>().ok()?)?;
    Some(units as f64 * 1000.0 / units_per_watt as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watts_convert_exactly_from_either_unit() {
        // 3.50 W = 350 × 0.01 W = 3500 mW; 0.0250 W = 250 × 0.0001 W = 25 mW.
        assert_eq!(parse_watts_mw("3.50W"), Some(3500.0));
        assert_eq!(parse_watts_mw("0.0250W"), Some(25.0));
        assert_eq!(parse_watts_mw("0.0050W"), Some(5.0));
        for bad in [
            "3.50", "3.5W", "3.500W", ".50W", "3.W", "-1.00W", "W", "3,50W",
        ] {
            assert_eq!(parse_watts_mw(bad), None, "{bad}");
        }
    }
}
