//! (being written) `nvme id-ctrl -o json` parser.
use crate::error::InputError;
use crate::storage::nvme::psd::NvmeController;

pub fn parse(file: &str, _text: &str) -> Result<NvmeController, InputError> {
    Err(InputError::whole(file, "nvme-cli parser not written yet"))
}
