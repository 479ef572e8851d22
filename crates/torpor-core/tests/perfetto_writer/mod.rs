//! A small protobuf encoder for Perfetto traces, written from the protobuf encoding
//! documentation and Perfetto's .proto files (field numbers as there), for tests and benches:
//! messages are built field by field, so a test states every byte it means.
#![allow(dead_code)]

/// Appends `v` as a varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One message being built.
#[derive(Clone, Debug, Default)]
pub struct Msg(pub Vec<u8>);

impl Msg {
    pub fn new() -> Msg {
        Msg(Vec::new())
    }

    fn key(&mut self, field: u32, wire: u8) {
        varint(&mut self.0, (u64::from(field) << 3) | u64::from(wire));
    }

    /// A varint field (int32 and int64 negatives sign-extended to 64 bits, as protobuf does).
    pub fn int(mut self, field: u32, v: i64) -> Msg {
        self.key(field, 0);
        varint(&mut self.0, v as u64);
        self
    }

    pub fn uint(mut self, field: u32, v: u64) -> Msg {
        self.key(field, 0);
        varint(&mut self.0, v);
        self
    }

    pub fn bytes(mut self, field: u32, b: &[u8]) -> Msg {
        self.key(field, 2);
        varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }

    pub fn str(self, field: u32, s: &str) -> Msg {
        self.bytes(field, s.as_bytes())
    }

    pub fn msg(self, field: u32, m: Msg) -> Msg {
        self.bytes(field, &m.0)
    }

    /// A packed repeated varint field.
    pub fn packed(self, field: u32, values: &[i64]) -> Msg {
        let mut b = Vec::new();
        for &v in values {
            varint(&mut b, v as u64);
        }
        self.bytes(field, &b)
    }
}

/// A `Trace` of these packets.
pub fn trace(packets: &[Msg]) -> Vec<u8> {
    let mut t = Msg::new();
    for p in packets {
        t = t.msg(1, p.clone());
    }
    t.0
}

/// An `FtraceEvent` at `ts` whose oneof field `field` holds `body`.
pub fn event(ts: u64, field: u32, body: Msg) -> Msg {
    Msg::new().uint(1, ts).uint(2, 42).msg(field, body)
}

/// A packet holding one CPU's `FtraceEventBundle`.
pub fn bundle(cpu: u32, events: Vec<Msg>) -> Msg {
    bundle_with(cpu, events, |b| b)
}

/// The same, with more bundle fields (`compact_sched`, `lost_events`) set by `more`.
pub fn bundle_with(cpu: u32, events: Vec<Msg>, more: impl FnOnce(Msg) -> Msg) -> Msg {
    let mut b = Msg::new().uint(1, u64::from(cpu));
    for e in events {
        b = b.msg(2, e);
    }
    Msg::new().uint(10, 1).msg(1, more(b))
}

pub fn cpu_idle(ts: u64, state: u32, cpu: u32) -> Msg {
    event(
        ts,
        13,
        Msg::new().uint(1, u64::from(state)).uint(2, u64::from(cpu)),
    )
}

pub fn sched_switch(ts: u64, prev_pid: i64, prev_state: i64, next_pid: i64) -> Msg {
    event(
        ts,
        4,
        Msg::new()
            .str(1, "prev")
            .int(2, prev_pid)
            .int(3, 120)
            .int(4, prev_state)
            .str(5, "next")
            .int(6, next_pid)
            .int(7, 120),
    )
}

/// A packet holding `packets`, zlib-compressed (`compressed_packets`, field 50).
pub fn zlib_packets(packets: &[Msg]) -> Msg {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&trace(packets)).unwrap();
    Msg::new().bytes(50, &z.finish().unwrap())
}
