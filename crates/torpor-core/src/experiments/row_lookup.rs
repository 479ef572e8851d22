//! Finding the row a claim reads in the rows an experiment hands over, and the typed error
//! when it is not there (a programming error on the caller's side, reported, never a panic).

use std::fmt;

/// A row a claim reads is missing from the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRow {
    /// The row, in words ("config none, cpu 0").
    pub what: String,
}

impl MissingRow {
    pub fn new(what: impl Into<String>) -> Self {
        Self { what: what.into() }
    }
}

impl fmt::Display for MissingRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no row for {}", self.what)
    }
}

impl std::error::Error for MissingRow {}

/// The first of `rows` that `wanted` accepts, or the error naming it (`what`).
pub fn find<T>(
    rows: &[T],
    wanted: impl Fn(&T) -> bool,
    what: impl FnOnce() -> String,
) -> Result<&T, MissingRow> {
    rows.iter()
        .find(|r| wanted(r))
        .ok_or_else(|| MissingRow { what: what() })
}

/// A row's value the claim needs but the row leaves empty: the same error, naming the field.
pub fn present<T: Copy>(value: Option<T>, what: impl FnOnce() -> String) -> Result<T, MissingRow> {
    value.ok_or_else(|| MissingRow { what: what() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_row_is_named() {
        let rows = [1, 2, 3];
        assert_eq!(find(&rows, |r| *r == 2, || "two".into()), Ok(&2));
        let err = find(&rows, |r| *r == 4, || "four".into()).unwrap_err();
        assert_eq!(err.to_string(), "no row for four");
        assert_eq!(
            present::<f64>(None, || "x's y".into())
                .unwrap_err()
                .to_string(),
            "no row for x's y"
        );
    }
}
