//! Device inputs: what a drive is, from a built-in preset or from the user's own dump
//! (`nvme id-ctrl -o json`, `smartctl -a`). Models never import this module; it builds their
//! descriptions. Event streams (iologs, later ftrace and blkparse) are in [`crate::trace`].
//! Each parser reports bad input as an [`InputError`] naming file and line.

pub mod cpu_preset;
pub mod lisa_platform;
pub mod nvme_cli;
pub mod nvme_estimate;
pub mod nvme_preset;
pub mod nvme_source;
pub mod smartctl;
pub mod sysfs_probe;
pub mod ufs_preset;
pub mod x86_idle_power;
pub mod yaml_block;

/// Every file under `presets/<kind>/`, embedded by `build.rs`.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/presets.rs"));
}

use crate::apst::psd::NvmeController;
use crate::error::InputError;

/// `big-endian` or `little-endian` when `bytes` read as UTF-16 of ASCII text without a
/// byte-order mark: a NUL before (after) every other byte of its first 64.
fn utf16_without_bom(bytes: &[u8]) -> Option<&'static str> {
    let head = &bytes[..bytes.len().min(64) & !1];
    if head.len() < 4 {
        return None;
    }
    let pairs = || head.chunks_exact(2);
    if pairs().all(|p| p[0] == 0 && p[1] != 0) {
        Some("big-endian")
    } else if pairs().all(|p| p[0] != 0 && p[1] == 0) {
        Some("little-endian")
    } else {
        None
    }
}

/// Reads a power-state table from `nvme id-ctrl -o json` output or `smartctl -a` text,
/// recognised by content:
///
/// 1. A NUL byte or a byte-order mark (U+FEFF) anywhere in the text is an error at its line:
///    neither tool prints one, so the file was damaged or spliced (a BOM at the very start is
///    removed earlier, when the file is decoded).
///    Text that reads as UTF-16 without a byte-order mark is named so.
/// 2. Blank text is an empty file. Text whose first non-blank character is `{` is nvme-cli
///    JSON; `[` is a TOML file (a scenario given by mistake) or a JSON array, each refused with
///    what to give instead.
/// 3. Text with smartctl's banner or its `Supported Power States` table is smartctl output.
/// 4. Recognised and refused with what to run instead: nvme-cli's human-readable `id-ctrl`
///    output, and a JSON object after other text (a warning printed on the same stream).
/// 5. Anything else is neither, and the error says what each would have looked like.
pub fn parse_controller(file: &str, text: &str) -> Result<Parsed, InputError> {
    if let Some((at, c)) = text
        .char_indices()
        .find(|&(_, c)| c == '\0' || c == '\u{feff}')
    {
        let line = InputError::line_of_offset(text, at);
        let column = text[..at].rfind('\n').map_or(at, |nl| at - nl - 1) + 1;
        if c == '\0' {
            if let Some(order) = utf16_without_bom(text.as_bytes()) {
                return Err(InputError::whole(
                    file,
                    format!(
                        "UTF-16 text ({order}, without a byte-order mark: every other byte is \
                         NUL); expected the UTF-8 text nvme-cli or smartctl prints: convert it \
                         (`iconv -f UTF-16 -t UTF-8`)"
                    ),
                ));
            }
        }
        let what = if c == '\0' {
            "a NUL byte"
        } else {
            "a byte-order mark (U+FEFF)"
        };
        return Err(InputError::at(
            file,
            line,
            format!("{what} at column {column}: expected the text nvme-cli or smartctl prints"),
        ));
    }
    let start = text.trim_start();
    if start.is_empty() {
        return Err(InputError::at(
            file,
            1,
            "empty file: expected `nvme id-ctrl -o json` or `smartctl -a` output",
        ));
    }
    if start.starts_with('{') {
        return nvme_cli::parse(file, text);
    }
    if start.starts_with('[') && toml::from_str::<toml::Table>(text).is_ok() {
        return Err(InputError::at(
            file,
            1,
            "a TOML file (a torpor scenario or platform?); expected `nvme id-ctrl -o json` or \
             `smartctl -a` output",
        ));
    }
    if start.starts_with('[') {
        let line = InputError::line_of_offset(text, text.len() - start.len());
        return Err(InputError::at(
            file,
            line,
            "a JSON array; expected the JSON object `nvme id-ctrl -o json` prints for one \
             controller",
        ));
    }
    if start.starts_with("smartctl") || text.contains("Supported Power States") {
        return smartctl::parse(file, text);
    }
    if let Some(n) = text
        .lines()
        .position(|l| l.trim_start().starts_with("NVME Identify Controller"))
    {
        return Err(InputError::at(
            file,
            n + 1,
            "nvme-cli's human-readable `id-ctrl` output; torpor reads its JSON: run \
             `nvme id-ctrl -o json /dev/nvmeX`",
        ));
    }
    if let Some(n) = text.lines().position(|l| l.starts_with('{')) {
        return Err(InputError::at(
            file,
            1,
            format!(
                "text before the JSON object that starts on line {}; remove it (a warning \
                 printed on the same stream? run `nvme id-ctrl -o json /dev/nvmeX 2>/dev/null`)",
                n + 1
            ),
        ));
    }
    Err(InputError::at(
        file,
        1,
        "neither `nvme id-ctrl -o json` output (a JSON object) nor `smartctl -a` output (its \
         banner or a `Supported Power States` table)",
    ))
}

/// How [`parse_controller`] names the formats it recognises, for the user to see.
pub const NVME_CLI_FORMAT: &str = "nvme id-ctrl -o json";
pub const SMARTCTL_FORMAT: &str = "smartctl -a";

/// A parsed controller, the format it was recognised as, and what the parser had to assume
/// (printed to the user).
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub controller: NvmeController,
    /// The firmware revision the dump names (`fr`, `Firmware Version:`), when it names one.
    pub firmware: Option<String>,
    pub format: &'static str,
    pub notes: Vec<String>,
}

/// What to add after "no built-in preset has this id" for a preset of `kind`: the closest ids, if
/// any is close (at most a third of the name mistyped, or every word of it found in the id), then
/// where the list is.
/// The embedded presets of `kind` (`nvme`, `cpu`, `ufs`) as (id, TOML text), sorted by id.
fn embedded_of(kind: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    embedded::PRESETS
        .iter()
        .filter(move |(k, _, _)| *k == kind)
        .map(|(_, id, text)| (*id, *text))
}

fn suggest_preset(kind: &str, id: &str) -> String {
    let wanted = id.to_ascii_lowercase();
    let words: Vec<&str> = wanted
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 3)
        .collect();
    let mut close: Vec<(usize, &str)> = embedded::PRESETS
        .iter()
        .filter(|(k, _, _)| *k == kind)
        .filter_map(|&(_, pid, _)| {
            let distance = edit_distance(&wanted, pid);
            let near = distance <= wanted.len().max(pid.len()) / 3;
            let by_words = !words.is_empty() && words.iter().all(|w| pid.contains(w));
            (near || by_words).then_some((distance, pid))
        })
        .collect();
    close.sort();
    match close.len() {
        0 => "see `torpor devices`".to_string(),
        _ => {
            let ids: Vec<String> = close
                .iter()
                .take(3)
                .map(|(_, p)| format!("{p:?}"))
                .collect();
            format!(
                "did you mean {}? (`torpor devices` lists them)",
                ids.join(" or ")
            )
        }
    }
}

/// Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}
