//! A block IO request as devices see it: what, where, how big.

use serde::{Deserialize, Serialize};

/// The operation of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    Read,
    Write,
}

/// One request submitted to a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub op: IoOp,
    /// Byte offset on the device.
    pub offset: u64,
    pub bytes: u32,
}

/// Anything that services block IO: given a request submitted at `now`, says when it
/// completes. Devices keep their own power-state bookkeeping behind this call.
pub trait BlockDevice {
    fn submit(&mut self, now: crate::time::Nanos, req: &IoRequest) -> crate::time::Nanos;
}
