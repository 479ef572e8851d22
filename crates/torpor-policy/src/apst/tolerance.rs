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

use super::psd::NvmeController;
use crate::apst::{self, ApstConfig, ApstParams};
use crate::qos::latency_tolerance::{nvme_ps_max_latency_us, LatencyTolerance, RefusedTolerance};
use crate::time::Nanos;

/// One reprogramming: when, the new limit (`u64::MAX`: none) and what the builder produced.
#[derive(Clone, Debug, PartialEq)]
pub struct TableChange {
    pub at_ns: u64,
    /// The aggregate the callback received, µs (-1: no constraint).
    pub tolerance_us: i64,
    pub ps_max_latency_us: u64,
    pub config: ApstConfig,
}

/// The controller's side of its latency-tolerance file, one write at a time: the user request
/// and the `ps_max_latency_us` the callback last set (steps 1-2).
#[derive(Clone, Debug)]
pub struct ToleranceDriver {
    lt: LatencyTolerance,
    limit: u64,
}

impl ToleranceDriver {
    /// The controller just initialised under `params` (its `ps_max_latency_us` as the module
    /// parameter `default_ps_max_latency_us`).
    pub fn new(params: &ApstParams) -> ToleranceDriver {
        let lt = LatencyTolerance::for_nvme(params.max_latency_us());
        let limit = nvme_ps_max_latency_us(lt.value());
        ToleranceDriver { lt, limit }
    }

    /// The device's latency-tolerance aggregate, µs (-1: no constraint).
    pub fn tolerance_us(&self) -> i64 {
        self.lt.value()
    }

    /// The controller's `ps_max_latency_us` (`u64::MAX`: none).
    pub fn limit_us(&self) -> u64 {
        self.limit
    }

    /// A write of `value` (as `parse_sysfs` returns it): the new limit when it changed (the
    /// driver then rebuilds and sends the table, step 3); an error when the kernel refuses it.
    pub fn write(&mut self, value: i64) -> Result<Option<u64>, RefusedTolerance> {
        let Some(tolerance) = self.lt.update_user(value)? else {
            return Ok(None);
        };
        let new = nvme_ps_max_latency_us(tolerance);
        if new == self.limit {
            return Ok(None);
        }
        self.limit = new;
        Ok(Some(new))
    }
}

/// The table `params` builds on `ctrl` with the controller's limit at `limit_us` (step 3).
pub fn rebuilt(ctrl: &NvmeController, params: &ApstParams, limit_us: u64) -> ApstConfig {
    let rebuilt = ApstParams {
        ps_max_latency_us: Some(limit_us),
        ..params.clone()
    };
    apst::build(ctrl, &rebuilt)
}

/// The table changes that user-space writes `(time, value as `parse_sysfs` returns it)`, in
/// non-decreasing time, cause on `ctrl` under `params` (whose `ps_max_latency_us`, as the
/// module parameter `default_ps_max_latency_us`, makes the initial request). An error names
/// the write the kernel would refuse (its index and why).
pub fn table_changes(
    ctrl: &NvmeController,
    params: &ApstParams,
    writes: &[(Nanos, i64)],
) -> Result<Vec<TableChange>, (usize, RefusedTolerance)> {
    let mut driver = ToleranceDriver::new(params);
    let mut out = Vec::new();
    for (i, &(at, value)) in writes.iter().enumerate() {
        let Some(new) = driver.write(value).map_err(|e| (i, e))? else {
            continue;
        };
        out.push(TableChange {
            at_ns: at.0,
            tolerance_us: driver.tolerance_us(),
            ps_max_latency_us: new,
            config: rebuilt(ctrl, params, new),
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
