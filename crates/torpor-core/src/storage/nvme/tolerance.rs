//! The host's side of a latency-tolerance change on an NVMe controller (v4.11+,
//! `drivers/nvme/host/core.c`): `nvme_set_latency_tolerance` turns the device's PM QoS
//! aggregate into `ps_max_latency_us` and, when that changed, `nvme_configure_apst` builds and
//! sends a new table (spec-storage §1.2).
//!
//! 1. At init the user request is `min(default_ps_max_latency_us, S32_MAX)`
//!    ([`LatencyTolerance::for_nvme`]); the controller's limit is what that maps to.
//! 2. Each write to `power/pm_qos_latency_tolerance_us`, in time order, updates the user
//!    request; when the aggregate moves, the callback maps it to a limit (`auto` and `any`:
//!    none).
//! 3. A limit different from the current one is stored and the table rebuilt by the same
//!    builder ([`apst::build`]) with it: sent (the drive adopts it then, device.rs step 7) or
//!    not sent (APSTA = 0: the drive keeps what it had). The same limit sends nothing.

use serde::Serialize;

use super::apst::{self, ApstConfig, ApstParams};
use super::psd::NvmeController;
use crate::qos::latency_tolerance::{nvme_ps_max_latency_us, LatencyTolerance};
use crate::time::Nanos;

/// One reprogramming: when, the new limit (`u64::MAX`: none) and what the builder produced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableChange {
    pub at_ns: u64,
    /// The aggregate the callback received, µs (-1: no constraint).
    pub tolerance_us: i64,
    pub ps_max_latency_us: u64,
    pub config: ApstConfig,
}

/// The table changes that user-space writes `(time, value as `parse_sysfs` returns it)`, in
/// non-decreasing time, cause on `ctrl` under `params` (whose `ps_max_latency_us`, as the
/// module parameter `default_ps_max_latency_us`, makes the initial request). An error names
/// the write the kernel would refuse (its index and why).
pub fn table_changes(
    ctrl: &NvmeController,
    params: &ApstParams,
    writes: &[(Nanos, i64)],
) -> Result<Vec<TableChange>, (usize, String)> {
    let mut lt = LatencyTolerance::for_nvme(params.max_latency_us());
    let mut limit = nvme_ps_max_latency_us(lt.value());
    let mut out = Vec::new();
    for (i, &(at, value)) in writes.iter().enumerate() {
        let Some(tolerance) = lt.update_user(value).map_err(|e| (i, e))? else {
            continue;
        };
        let new = nvme_ps_max_latency_us(tolerance);
        if new == limit {
            continue;
        }
        limit = new;
        let rebuilt = ApstParams {
            ps_max_latency_us: Some(new),
            ..params.clone()
        };
        out.push(TableChange {
            at_ns: at.0,
            tolerance_us: tolerance,
            ps_max_latency_us: new,
            config: apst::build(ctrl, &rebuilt),
        });
    }
    Ok(out)
}

/// What the drive adopts: the sent tables, each at its time.
pub fn device_schedule(changes: &[TableChange]) -> Vec<(Nanos, Option<apst::ApstTable>)> {
    changes
        .iter()
        .filter_map(|c| match &c.config {
            ApstConfig::Sent(t) => Some((Nanos(c.at_ns), Some(t.clone()))),
            ApstConfig::NotSent { .. } => None,
        })
        .collect()
}
