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

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
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
    fn offsets_map_to_lines() {
        assert_eq!(InputError::line_of_offset("a\nb\nc", 0), 1);
        assert_eq!(InputError::line_of_offset("a\nb\nc", 2), 2);
        assert_eq!(InputError::line_of_offset("a\nb\nc", 4), 3);
    }
}
