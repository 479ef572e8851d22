//! The compression codecs a trace.dat v7 may name in its header (`"zlib\0VERSION\0"`,
//! `"zstd\0VERSION\0"`, or `"none"`): trace-cmd compresses with zlib's `compress2` (a zlib
//! stream, RFC 1950) and with zstd's one-shot `ZSTD_compress` (one zstd frame, RFC 8878).
//!
//! Every block is decompressed into exactly the size the file declares for it, never more: the
//! output is capped one byte past that size, so a block that inflates without end (a
//! decompression bomb) costs at most its declared size, which the caller has bounded.

use std::io::Read;

/// A codec trace-cmd writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Zlib,
    Zstd,
}

impl Codec {
    /// The codec of the header's algorithm name; `None` for a name torpor cannot read.
    pub fn from_name(name: &str) -> Option<Codec> {
        match name {
            "zlib" => Some(Codec::Zlib),
            "zstd" => Some(Codec::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
        }
    }

    /// Decompresses `input` into `out` (cleared first), which must come out exactly
    /// `expected` bytes long; the error says what went wrong, without a location.
    pub fn decompress(
        self,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        out.clear();
        out.reserve_exact(expected);
        let cap = expected as u64 + 1;
        let got = match self {
            Codec::Zlib => flate2::read::ZlibDecoder::new(input)
                .take(cap)
                .read_to_end(out)
                .map_err(|e| format!("the zlib data does not decompress: {e}"))?,
            Codec::Zstd => {
                // The window a frame may ask for: its content, or zstd's usual 8 MiB.
                let window = (expected as u64).max(ZSTD_WINDOW_FLOOR);
                let decoder =
                    ruzstd::decoding::StreamingDecoder::new_with_max_window_size(input, window)
                        .map_err(|e| format!("the zstd frame header is not valid: {e}"))?;
                decoder
                    .take(cap)
                    .read_to_end(out)
                    .map_err(|e| format!("the zstd data does not decompress: {e}"))?
            }
        };
        if got != expected {
            return Err(format!(
                "the {} data decompresses to {}{} bytes, but its header says {expected}",
                self.name(),
                if got > expected { "more than " } else { "" },
                got.min(expected)
            ));
        }
        Ok(())
    }
}

/// The largest window a zstd frame may ask for beyond its content size: encoders declare
/// windows larger than small inputs (zstd's levels 1-19 use up to 8 MiB).
const ZSTD_WINDOW_FLOOR: u64 = 8 << 20;
