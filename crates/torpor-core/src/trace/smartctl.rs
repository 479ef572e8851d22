//! (being written) `smartctl -a` parser.
use super::Parsed;
use crate::error::InputError;

pub fn parse(file: &str, _text: &str) -> Result<Parsed, InputError> {
    Err(InputError::whole(file, "smartctl parser not written yet"))
}
