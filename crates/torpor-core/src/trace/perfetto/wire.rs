//! The protobuf wire format, as far as Perfetto's trace messages use it: varints, 64-bit and
//! 32-bit fixed values, and length-delimited bytes (sub-messages, strings, packed arrays).
//!
//! Written from the protobuf encoding documentation: each field is a varint key
//! `(field_number << 3) | wire_type`, then its value (wire type 0: a varint of at most 10
//! bytes, 7 bits each, least significant first; 1: 8 bytes little-endian; 2: a varint length
//! then that many bytes; 5: 4 bytes little-endian). Wire types 3 and 4 (groups) are not used
//! by any message torpor reads and are refused. Nothing here allocates: a message is a byte
//! slice, and a claimed length is checked against the bytes actually there.

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// The value as an integer (varint or fixed), `None` for bytes.
    pub fn int(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Bytes(_) => None,
        }
    }
}

/// Reads a varint at the start of `buf`: its value and length, or why not.
pub fn varint(buf: &[u8]) -> Result<(u64, usize), &'static str> {
    let mut v: u64 = 0;
    for (i, &b) in buf.iter().enumerate().take(10) {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return Err("a varint longer than 64 bits");
        }
        v |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    if buf.len() >= 10 {
        Err("a varint longer than 10 bytes")
    } else {
        Err("the data ends inside a varint")
    }
}

/// The fields of one message, in order; an error ends the iteration.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Fields<'a> {
        Fields {
            buf,
            pos: 0,
            failed: false,
        }
    }

    /// Where in the message the next field starts.
    pub fn offset(&self) -> usize {
        self.pos
    }

    fn field(&mut self) -> Result<(u32, Value<'a>), String> {
        let rest = &self.buf[self.pos..];
        let (key, n) = varint(rest).map_err(|e| format!("{e} (a field key)"))?;
        let number = key >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return Err(format!("a field number of {number}; expected 1 to 2^29-1"));
        }
        let rest = &rest[n..];
        let (value, used) = match key & 7 {
            0 => {
                let (v, m) = varint(rest).map_err(|e| format!("{e} (field {number})"))?;
                (Value::Varint(v), m)
            }
            1 => {
                let b: [u8; 8] =
                    rest.get(..8)
                        .and_then(|s| s.try_into().ok())
                        .ok_or_else(|| {
                            format!("the data ends inside the 8-byte value of field {number}")
                        })?;
                (Value::Fixed64(u64::from_le_bytes(b)), 8)
            }
            2 => {
                let (len, m) =
                    varint(rest).map_err(|e| format!("{e} (field {number}'s length)"))?;
                let avail = rest.len() - m;
                if len > avail as u64 {
                    return Err(format!(
                        "field {number} claims {len} bytes, but its message has {avail} left"
                    ));
                }
                (Value::Bytes(&rest[m..m + len as usize]), m + len as usize)
            }
            5 => {
                let b: [u8; 4] =
                    rest.get(..4)
                        .and_then(|s| s.try_into().ok())
                        .ok_or_else(|| {
                            format!("the data ends inside the 4-byte value of field {number}")
                        })?;
                (Value::Fixed32(u32::from_le_bytes(b)), 4)
            }
            t => {
                return Err(format!(
                    "field {number} has wire type {t}; expected 0, 1, 2 or 5"
                ))
            }
        };
        self.pos += n + used;
        Ok((number as u32, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.field();
        self.failed = r.is_err();
        Some(r)
    }
}

/// Appends the varints of a repeated integer field's value to `out`: a packed array (bytes)
/// or one unpacked element. 32-bit fields keep their low bits (as protobuf parsers do).
pub fn push_varints(value: Value<'_>, out: &mut Vec<u64>) -> Result<(), String> {
    match value {
        Value::Bytes(mut b) => {
            while !b.is_empty() {
                let (v, n) = varint(b).map_err(|e| format!("{e} (in a packed array)"))?;
                out.push(v);
                b = &b[n..];
            }
            Ok(())
        }
        Value::Varint(v) => {
            out.push(v);
            Ok(())
        }
        _ => Err("a fixed-size value where a varint array was expected".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_from_the_encoding_documentation() {
        // 150 is 0x96 0x01 (the protobuf documentation's example); 1 is one byte.
        assert_eq!(varint(&[0x96, 0x01]), Ok((150, 2)));
        assert_eq!(varint(&[0x01, 0xff]), Ok((1, 1)));
        // u64::MAX: nine bytes of 0xff then 0x01.
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint(&max), Ok((u64::MAX, 10)));
        let mut over = max;
        over[9] = 0x02;
        assert!(varint(&over).is_err());
        assert!(varint(&[0x80, 0x80]).is_err());
        assert!(varint(&[0x80; 11]).is_err());
    }

    #[test]
    fn fields_of_each_wire_type() {
        // field 1 varint 150; field 2 bytes "ab"; field 3 fixed64 1; field 4 fixed32 2.
        let msg = [
            0x08, 0x96, 0x01, 0x12, 0x02, b'a', b'b', 0x19, 1, 0, 0, 0, 0, 0, 0, 0, 0x25, 2, 0, 0,
            0,
        ];
        let got: Vec<_> = Fields::new(&msg).collect::<Result<_, _>>().unwrap();
        assert_eq!(
            got,
            vec![
                (1, Value::Varint(150)),
                (2, Value::Bytes(b"ab")),
                (3, Value::Fixed64(1)),
                (4, Value::Fixed32(2)),
            ]
        );
    }

    #[test]
    fn claimed_lengths_are_checked_against_the_message() {
        // Field 2 claims 2^62 bytes; the message holds one.
        let msg = [
            0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, b'x',
        ];
        let e = Fields::new(&msg).next().unwrap().unwrap_err();
        assert!(e.contains("claims 4611686018427387904 bytes"), "{e}");
        // A group (wire type 3) and field number 0 are refused.
        assert!(Fields::new(&[0x0b]).next().unwrap().is_err());
        assert!(Fields::new(&[0x00, 0x00]).next().unwrap().is_err());
    }

    #[test]
    fn packed_and_unpacked_arrays() {
        let mut out = Vec::new();
        push_varints(Value::Bytes(&[1, 0x96, 0x01, 3]), &mut out).unwrap();
        push_varints(Value::Varint(7), &mut out).unwrap();
        assert_eq!(out, vec![1, 150, 3, 7]);
        assert!(push_varints(Value::Bytes(&[0x80]), &mut out).is_err());
    }
}
