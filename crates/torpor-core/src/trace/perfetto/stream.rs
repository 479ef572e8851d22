//! A trace file as a stream of `TracePacket`s: the `Trace` message is nothing but its
//! repeated field 1 (`packet`), so the file is read one packet at a time, never whole.
//! A packet's `compressed_packets` (field 50, zlib) or `zstd_compressed_packets` (field 133)
//! holds more packets, encoded as a `Trace` message; [`Packets::open_compressed`] reads them
//! through a streaming decompressor before the outer stream goes on.
//!
//! Bounds: a packet claims at most [`MAX_PACKET_BYTES`] (the buffer grows with the bytes
//! actually read, so a file that claims more than it has costs what it has), and one
//! compressed packet inflates to at most [`MAX_INFLATED_BYTES`] (a decompression bomb stops
//! there with an error).

use std::io::{BufRead, BufReader, Read};

use super::wire::varint;
use crate::error::InputError;

/// The largest packet read (Perfetto's writers split data into packets of at most a few
/// hundred KiB; its trace buffers are at most a few GiB in all).
pub const MAX_PACKET_BYTES: u64 = 64 << 20;

/// The most bytes one compressed packet may inflate to.
pub const MAX_INFLATED_BYTES: u64 = 1 << 30;

/// Where a packet lies: its offset in the file and, inside a compressed packet, its offset
/// in the decompressed data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub at: u64,
    pub inflated: Option<u64>,
}

/// The packets of a compressed packet being read.
struct Inner {
    reader: BufReader<std::io::Take<Box<dyn Read>>>,
    /// The compressed packet's offset in the file.
    at: u64,
    pos: u64,
    codec: &'static str,
}

/// Reads packets one by one from a trace file.
pub struct Packets<R> {
    outer: R,
    pos: u64,
    inner: Option<Inner>,
    file: String,
}

/// Why reading stopped, with the offset of the piece at fault in its stream.
struct Fault(u64, String);

impl<R: BufRead> Packets<R> {
    pub fn new(outer: R, file: &str) -> Packets<R> {
        Packets {
            outer,
            pos: 0,
            inner: None,
            file: file.to_string(),
        }
    }

    /// The name errors carry.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// An error at `place`, in the one-line form of binary traces.
    pub fn err(&self, place: Place, message: impl std::fmt::Display) -> InputError {
        let where_ = match place.inflated {
            None => format!("at byte {}", place.at),
            Some(i) => format!(
                "at byte {}, {i} bytes into its decompressed packets",
                place.at
            ),
        };
        InputError::whole(&self.file, format!("{message} ({where_})"))
    }

    /// Reads the next packet into `buf` and says where it lies, or `None` at the end of the
    /// file.
    pub fn next_packet(&mut self, buf: &mut Vec<u8>) -> Result<Option<Place>, InputError> {
        if let Some(inner) = &mut self.inner {
            match read_packet(&mut inner.reader, &mut inner.pos, buf, true) {
                Ok(Some(start)) => {
                    return Ok(Some(Place {
                        at: inner.at,
                        inflated: Some(start),
                    }));
                }
                Ok(None) => {
                    if inner.pos > MAX_INFLATED_BYTES {
                        let (at, codec) = (inner.at, inner.codec);
                        return Err(self.err(
                            Place { at, inflated: None },
                            format!(
                                "a {codec}-compressed packet inflates to more than \
                                 {MAX_INFLATED_BYTES} bytes"
                            ),
                        ));
                    }
                    self.inner = None;
                }
                Err(Fault(pos, m)) => {
                    let (at, codec) = (inner.at, inner.codec);
                    let place = Place {
                        at,
                        inflated: Some(pos),
                    };
                    return Err(self.err(place, format!("in {codec}-compressed packets, {m}")));
                }
            }
        }
        match read_packet(&mut self.outer, &mut self.pos, buf, false) {
            Ok(Some(at)) => Ok(Some(Place { at, inflated: None })),
            Ok(None) => Ok(None),
            Err(Fault(at, m)) => Err(self.err(Place { at, inflated: None }, m)),
        }
    }

    /// Reads the packets inside `data`, compressed by `codec` (`zlib` or `zstd`), before the
    /// rest of the file. `place` is the compressed packet's.
    pub fn open_compressed(
        &mut self,
        data: Vec<u8>,
        codec: &'static str,
        place: Place,
    ) -> Result<(), InputError> {
        if place.inflated.is_some() {
            return Err(self.err(
                place,
                "compressed packets inside compressed packets; Perfetto compresses once",
            ));
        }
        let raw = std::io::Cursor::new(data);
        let decoder: Box<dyn Read> = match codec {
            "zstd" => Box::new(
                ruzstd::decoding::StreamingDecoder::new_with_max_window_size(raw, ZSTD_MAX_WINDOW)
                    .map_err(|e| {
                        self.err(place, format!("the zstd frame header is not valid: {e}"))
                    })?,
            ),
            _ => Box::new(flate2::read::ZlibDecoder::new(raw)),
        };
        self.inner = Some(Inner {
            reader: BufReader::with_capacity(1 << 16, decoder.take(MAX_INFLATED_BYTES + 1)),
            at: place.at,
            pos: 0,
            codec,
        });
        Ok(())
    }
}

/// The largest window a zstd frame may ask for (zstd's `--long` maximum by default).
const ZSTD_MAX_WINDOW: u64 = 128 << 20;

/// One byte, or `None` at the end of the stream.
fn byte<B: BufRead>(r: &mut B, pos: u64, inflating: bool) -> Result<Option<u8>, Fault> {
    let b = match r.fill_buf() {
        Ok([]) => return Ok(None),
        Ok(buf) => buf[0],
        Err(e) => return Err(Fault(pos, read_failure(&e, inflating))),
    };
    r.consume(1);
    Ok(Some(b))
}

/// An error of the reader under the packets: a failed read of the file, or (inside
/// compressed packets, whose source is in memory) of the decompressor.
fn read_failure(e: &std::io::Error, inflating: bool) -> String {
    if inflating {
        format!("the data does not decompress: {e}")
    } else {
        format!("cannot read: {e}")
    }
}

/// A varint from the stream (`None`: the stream ended before its first byte).
fn read_varint<B: BufRead>(
    r: &mut B,
    pos: &mut u64,
    what: &str,
    inflating: bool,
) -> Result<Option<u64>, Fault> {
    let start = *pos;
    let mut bytes = [0u8; 10];
    for i in 0..10 {
        let Some(b) = byte(r, *pos, inflating)? else {
            if i == 0 {
                return Ok(None);
            }
            return Err(Fault(start, format!("the file ends inside {what}")));
        };
        *pos += 1;
        bytes[i] = b;
        if b & 0x80 == 0 {
            return varint(&bytes[..=i])
                .map(|(v, _)| Some(v))
                .map_err(|e| Fault(start, format!("{e} ({what})")));
        }
    }
    Err(Fault(
        start,
        format!("a varint longer than 10 bytes ({what})"),
    ))
}

/// Reads the next top-level packet into `buf`: its offset, or `None` at the end. Other
/// top-level fields (none is defined) are skipped.
fn read_packet<B: BufRead>(
    r: &mut B,
    pos: &mut u64,
    buf: &mut Vec<u8>,
    inflating: bool,
) -> Result<Option<u64>, Fault> {
    loop {
        let start = *pos;
        let Some(key) = read_varint(r, pos, "a field key of the trace", inflating)? else {
            return Ok(None);
        };
        let (number, wire) = (key >> 3, key & 7);
        let len = match wire {
            0 => {
                read_varint(r, pos, "a top-level varint", inflating)?
                    .ok_or_else(|| Fault(start, "the file ends inside a top-level field".into()))?;
                continue;
            }
            1 => 8,
            5 => 4,
            2 => read_varint(r, pos, "a packet's length", inflating)?
                .ok_or_else(|| Fault(start, "the file ends before a packet's length".into()))?,
            _ => {
                return Err(Fault(
                    start,
                    format!(
                        "expected a trace packet (field 1, bytes); got field {number} of wire \
                         type {wire}: this is not a Perfetto trace or it is damaged here"
                    ),
                ))
            }
        };
        if len > MAX_PACKET_BYTES {
            return Err(Fault(
                start,
                format!("a packet claims {len} bytes; expected at most {MAX_PACKET_BYTES}"),
            ));
        }
        buf.clear();
        let got = r
            .take(len)
            .read_to_end(buf)
            .map_err(|e| Fault(start, read_failure(&e, inflating)))? as u64;
        *pos += got;
        if got < len {
            return Err(Fault(
                start,
                format!("the file ends {got} bytes into a packet of {len} bytes"),
            ));
        }
        if number == 1 && wire == 2 {
            return Ok(Some(start));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packets(bytes: &[u8]) -> Result<Vec<(Place, Vec<u8>)>, InputError> {
        let mut p = Packets::new(bytes, "t");
        let mut out = Vec::new();
        let mut b = Vec::new();
        while let Some(place) = p.next_packet(&mut b)? {
            out.push((place, b.clone()));
        }
        Ok(out)
    }

    #[test]
    fn packets_in_order_with_their_offsets() {
        let got = packets(&[0x0a, 1, 0x08, 0x0a, 0, 0x0a, 2, 0x10, 1]).unwrap();
        let at: Vec<u64> = got.iter().map(|(p, _)| p.at).collect();
        assert_eq!(at, vec![0, 3, 5]);
        assert_eq!(got[2].1, vec![0x10, 1]);
    }

    #[test]
    fn cut_short_and_oversized_packets() {
        let e = packets(&[0x0a, 5, 1, 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: the file ends 2 bytes into a packet of 5 bytes (at byte 0)"
        );
        // 2^40 bytes claimed: refused before reading.
        let e = packets(&[0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]).unwrap_err();
        assert!(e.message.contains("claims 1099511627776 bytes"), "{e}");
        let e = packets(&[0x0a, 0x80]).unwrap_err();
        assert!(e.message.contains("inside a packet's length"), "{e}");
    }

    #[test]
    fn compressed_packets_inflate_in_place() {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&[0x0a, 1, 0x08, 0x0a, 1, 0x10]).unwrap();
        let data = z.finish().unwrap();
        let outer = [0x0a, 0, 0x0a, 1, 0x18];
        let mut p = Packets::new(&outer[..], "t");
        let mut b = Vec::new();
        let place = p.next_packet(&mut b).unwrap().unwrap();
        p.open_compressed(data, "zlib", place).unwrap();
        let mut seen = Vec::new();
        while let Some(place) = p.next_packet(&mut b).unwrap() {
            seen.push((place.at, place.inflated, b.clone()));
        }
        assert_eq!(
            seen,
            vec![
                (0, Some(0), vec![0x08]),
                (0, Some(3), vec![0x10]),
                (2, None, vec![0x18])
            ]
        );
        let mut p = Packets::new(&outer[..], "t");
        let place = p.next_packet(&mut b).unwrap().unwrap();
        p.open_compressed(vec![0x78, 0x9c, 0xff, 0xff], "zlib", place)
            .unwrap();
        let e = p.next_packet(&mut b).unwrap_err();
        assert!(e.message.contains("zlib-compressed packets"), "{e}");
    }
}
