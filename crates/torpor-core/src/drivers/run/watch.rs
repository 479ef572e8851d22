//! Progress and interruption: what a [`Watch`] sees of a run, and why a run produced no report
//! ([`RunError`]).

use crate::error::InputError;
use crate::scenario::Stopped;
use crate::time::Nanos;

/// Where a run is, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The variant running (0-based) and how many there are.
    pub variant: usize,
    pub variants: usize,
    pub name: &'a str,
    /// Simulated time reached in this variant, and where it ends (`None`: when its replay ends).
    pub now: Nanos,
    pub until: Option<Nanos>,
}

/// Watches a run: shown its progress every few thousand events and at each variant's start;
/// returning `false` stops the run ([`RunError::Interrupted`]).
pub trait Watch {
    fn tick(&mut self, progress: &Progress<'_>) -> bool;

    /// Asked while a scenario is read and checked, where there is no progress to show:
    /// `false` stops as from `tick`.
    fn go_on(&mut self) -> bool {
        true
    }
}

/// No watcher: the run goes to its end.
impl Watch for () {
    fn tick(&mut self, _: &Progress<'_>) -> bool {
        true
    }
}

/// Why a run produced no report.
#[derive(Debug)]
pub enum RunError {
    /// Bad input: the one-line error.
    Input(InputError),
    /// The watcher stopped it (the user pressed Ctrl-C).
    Interrupted,
}

impl From<InputError> for RunError {
    fn from(e: InputError) -> Self {
        RunError::Input(e)
    }
}

impl From<Stopped> for RunError {
    fn from(s: Stopped) -> Self {
        match s {
            Stopped::Input(e) => RunError::Input(e),
            Stopped::Interrupted => RunError::Interrupted,
        }
    }
}
