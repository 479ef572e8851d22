//! Service-time model of an NVMe drive in an operational power state.
//!
//! A request of `bytes` takes the drive's 4 KiB QD1 latency for its operation plus the time to
//! move the bytes beyond the first 4 KiB at the drive's sequential bandwidth. Up to
//! `parallelism` requests are serviced at once (the drive's internal channels/dies); more wait
//! for the earliest free slot. Every number comes from the preset, with its source there.

use serde::{Deserialize, Serialize};

use crate::storage::io::IoOp;
use crate::time::Nanos;

/// Timing parameters of one drive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceModel {
    /// Device latency of one 4 KiB random read at queue depth 1, µs.
    pub read_4k_us: f64,
    /// Device latency of one 4 KiB write at queue depth 1 (write-back buffered), µs.
    pub write_4k_us: f64,
    /// Sequential read bandwidth, MB/s (10^6 bytes per second).
    pub read_mb_s: f64,
    /// Sequential write bandwidth, MB/s.
    pub write_mb_s: f64,
    /// Requests serviced concurrently.
    pub parallelism: u32,
}

impl ServiceModel {
    /// Defaults for a client TLC drive when the user's dump carries no timing:
    /// - `read_4k_us` 75: ESTIMATE, middle of the 60-90 us typical 4 KiB QD1 random read
    ///   (tR 40-58 us plus controller, ECC and transfer; 970 EVO Plus spec-derived 52.6 us);
    /// - `write_4k_us` 15: ESTIMATE, middle of 10-20 us for write-back buffered QD1 writes
    ///   (970 EVO Plus spec: 60k IOPS, 16.7 us);
    /// - `read_mb_s` 2000 / `write_mb_s` 1000: ESTIMATE, not sourced; they only matter for
    ///   requests larger than 4 KiB;
    /// - `parallelism` 32: DERIVED, 970 EVO Plus 1TB QD32 600k IOPS / QD1 19k IOPS = 31.6.
    pub const CLIENT_DEFAULT: ServiceModel = ServiceModel {
        read_4k_us: 75.0,
        write_4k_us: 15.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism: 32,
    };

    /// Time the drive needs for one request once it is in an operational state.
    #[inline]
    pub fn service_time(&self, op: IoOp, bytes: u32) -> Nanos {
        let (lat_us, mb_s) = match op {
            IoOp::Read => (self.read_4k_us, self.read_mb_s),
            IoOp::Write => (self.write_4k_us, self.write_mb_s),
        };
        let extra_bytes = bytes.saturating_sub(4096) as f64;
        // MB/s = bytes/µs, so bytes / (MB/s) is µs.
        let us = lat_us + extra_bytes / mb_s;
        Nanos((us * 1e3).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_requests_take_the_qd1_latency_and_large_ones_add_transfer_time() {
        let m = ServiceModel {
            read_4k_us: 60.0,
            write_4k_us: 16.7,
            read_mb_s: 2000.0,
            write_mb_s: 1000.0,
            parallelism: 4,
        };
        assert_eq!(m.service_time(IoOp::Read, 4096), Nanos(60_000));
        assert_eq!(m.service_time(IoOp::Write, 512), Nanos(16_700));
        // 128 KiB write: 16.7 µs + (131072 - 4096) B / 1000 B/µs = 16.7 + 126.976 µs
        assert_eq!(m.service_time(IoOp::Write, 131_072), Nanos(143_676));
    }
}
