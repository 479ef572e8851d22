//! The one error type for bad input: which file, which line, what was expected.
//!
//! Every parser and schema check reports through [`InputError`], so the CLI can print a single
//! `torpor: error: FILE:LINE: what was expected` line whatever went wrong.

use std::fmt;

/// A problem with a user-supplied file (scenario, preset, trace, device dump).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file as the user named it (or a label such as `<preset wdc-pc-sn530-256gb>`).
    pub file: String,
    /// 1-based line number, when the problem has one.
    pub line: Option<usize>,
    /// What was expected, in one sentence.
    pub message: String,
}

impl InputError {
    pub fn new(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            line,
            message: message.into(),
        }
    }

    pub fn at(file: &str, line: usize, message: impl Into<String>) -> Self {
        Self::new(file, Some(line), message)
    }

    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        Self::new(file, None, message)
    }

    /// Converts a byte offset into `text` to a 1-based line number.
    pub fn line_of_offset(text: &str, offset: usize) -> usize {
        let end = offset.min(text.len());
        text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }
}

/// Where each line of a text starts, so that many byte offsets map to lines in O(log n) each
/// ([`InputError::line_of_offset`] scans from the start: fine once per error, quadratic when
/// a parser indexes every key of a large file).
#[derive(Debug, Clone)]
pub struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        let newlines = text.bytes().enumerate().filter(|&(_, b)| b == b'\n');
        LineStarts(
            std::iter::once(0)
                .chain(newlines.map(|(i, _)| i + 1))
                .collect(),
        )
    }

    /// The 1-based line holding byte `offset` (past the end: the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        // Lines starting at or before `offset`; the first always does.
        self.0.partition_point(|&start| start <= offset)
    }
}

/// A TOML syntax or schema error as one `InputError`: the line of the offending span and one
/// sentence, naming the key when the parser's message does not.
pub fn from_toml(file: &str, text: &str, e: &toml::de::Error) -> InputError {
    let mut message = e.message().trim().replace('\n', "; ");
    if message.is_empty() {
        // The parser gives no words when the text stops where a value should start.
        message = "the file ends where a value was expected".to_string();
    }
    let Some(span) = e.span() else {
        return InputError::whole(file, message);
    };
    let line = InputError::line_of_offset(text, span.start);
    let here = text.lines().nth(line - 1).map(str::trim).unwrap_or("");
    let context = if message.starts_with("missing field") {
        // Reported at the table that lacks it, or at the whole document.
        if here.starts_with('[') {
            format!(" in table `{here}`")
        } else {
            " at the top level".to_string()
        }
    } else {
        match here.split_once('=') {
            Some((key, _)) if !message.contains(&format!("`{}`", key.trim())) => {
                format!(" (key `{}`)", key.trim())
            }
            _ => String::new(),
        }
    };
    InputError::at(file, line, format!("{message}{context}"))
}

/// The 1-based line where `key` is first written in TOML `text`: as `key = ...`, or, for a key
/// written with its brackets (`"[workload]"`), as that table header.
pub fn line_of_toml_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            if key.starts_with('[') {
                t.starts_with(key)
            } else {
                t.split_once('=').is_some_and(|(k, _)| k.trim() == key)
            }
        })
        .map(|i| i + 1)
}

pub use torpor_sim::text::{shown, SHOWN_TOKEN_CHARS};

/// The longest message an error prints; the rest is cut and marked, so that no input, however
/// it is built, turns into a huge error line.
pub const SHOWN_MESSAGE_CHARS: usize = 400;

/// `text` with control characters escaped (`\n`, `\u{0}`), so that it prints on one line.
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
}

/// `text` on one line, cut after `max` characters with how much was left out.
fn bounded(text: &str, max: usize) -> String {
    let text = one_line(text);
    match text.char_indices().nth(max) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}... [{} more bytes cut]", &text[..cut], text.len() - cut),
    }
}

impl fmt::Display for InputError {
    /// One line whatever the file name or message hold: control characters are escaped and
    /// overlong parts are cut.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = bounded(&self.file, SHOWN_MESSAGE_CHARS);
        let message = bounded(&self.message, SHOWN_MESSAGE_CHARS);
        match self.line {
            Some(line) => write!(f, "{file}:{line}: {message}"),
            None => write!(f, "{file}: {message}"),
        }
    }
}

impl std::error::Error for InputError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_file_line_and_message() {
        let e = InputError::at("drive.json", 3, "expected a number for `exit_lat`");
        assert_eq!(
            e.to_string(),
            "drive.json:3: expected a number for `exit_lat`"
        );
        assert_eq!(
            InputError::whole("x.toml", "empty").to_string(),
            "x.toml: empty"
        );
    }

    #[test]
    fn errors_print_on_one_line_and_cut_what_is_too_long() {
        let e = InputError::at("a\nb.json", 2, "bad value `x\ny`");
        assert_eq!(e.to_string(), "a\\nb.json:2: bad value `x\\ny`");
        let long = "z".repeat(10_000);
        let shown_line = InputError::whole("f", format!("got {}", shown(&long))).to_string();
        // 60 characters of the token, quoted, then the mark with the full length.
        assert_eq!(
            shown_line,
            format!("f: got \"{}\"... (10000 bytes in all)", "z".repeat(60))
        );
        let huge = InputError::whole("f", long).to_string();
        assert_eq!(
            huge,
            format!("f: {}... [9600 more bytes cut]", "z".repeat(400))
        );
        assert_eq!(shown("ok"), "\"ok\"");
        assert_eq!(shown("\u{0}"), "\"\\0\"");
    }

    #[test]
    fn toml_errors_name_the_line_and_the_key() {
        let text = "a = 1\nb = \"x\"\nc = ";
        let e = toml::from_str::<toml::Value>(text).unwrap_err();
        let got = from_toml("f.toml", text, &e);
        assert_eq!((got.file.as_str(), got.line), ("f.toml", Some(3)));
        assert_eq!(
            got.message,
            "the file ends where a value was expected (key `c`)"
        );
        assert_eq!(line_of_toml_key("x = 1\n[t]\ny = 2\n", "y"), Some(3));
        assert_eq!(line_of_toml_key("x = 1\n[t]\ny = 2\n", "[t]"), Some(2));
        assert_eq!(line_of_toml_key("x = 1\n", "z"), None);
    }

    #[test]
    fn offsets_map_to_lines() {
        assert_eq!(InputError::line_of_offset("a\nb\nc", 0), 1);
        assert_eq!(InputError::line_of_offset("a\nb\nc", 2), 2);
        assert_eq!(InputError::line_of_offset("a\nb\nc", 4), 3);
    }

    #[test]
    fn the_line_table_agrees_with_the_scan_at_every_offset() {
        for text in ["", "\n", "a", "a\nb\nc", "\n\nab\n", "x\r\ny\n\nz"] {
            let starts = LineStarts::new(text);
            for offset in 0..=text.len() + 2 {
                assert_eq!(
                    starts.line_of(offset),
                    InputError::line_of_offset(text, offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }
}
