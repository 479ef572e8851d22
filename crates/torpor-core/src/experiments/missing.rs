//! What a judgement reports when its inputs lack something a rule reads: a programming error
//! of whoever collected the rows (the Python side), said in words instead of a panic.

use std::fmt;

/// A row, table or value a claim's rule reads is absent from the judgement's inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing(pub String);

impl Missing {
    pub fn new(what: impl Into<String>) -> Self {
        Self(what.into())
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the judgement's inputs have no {}", self.0)
    }
}

impl std::error::Error for Missing {}
