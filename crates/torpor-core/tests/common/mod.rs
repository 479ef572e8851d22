//! Test devices shared by the integration tests. Each test crate uses a subset of them.
#![allow(dead_code)]

use torpor_core::storage::io::{IoRequest, TimedDevice};
use torpor_core::Nanos;

/// One queue with a fixed service time: an IO starts when it arrives or when the previous one
/// finishes, whichever is later. Records every submission.
pub struct SerialDevice {
    service: Nanos,
    free_at: Nanos,
    pub submits: Vec<(Nanos, IoRequest)>,
}

impl SerialDevice {
    pub fn new(service: Nanos) -> Self {
        SerialDevice {
            service,
            free_at: Nanos::ZERO,
            submits: Vec::new(),
        }
    }
    pub fn times_ns(&self) -> Vec<u64> {
        self.submits.iter().map(|(t, _)| t.0).collect()
    }
    pub fn offsets(&self) -> Vec<u64> {
        self.submits.iter().map(|(_, r)| r.offset).collect()
    }
}

impl TimedDevice for SerialDevice {
    fn accept(&mut self, now: Nanos, req: &IoRequest) -> Nanos {
        self.submits.push((now, *req));
        self.free_at = now.max(self.free_at) + self.service;
        self.free_at
    }
}
