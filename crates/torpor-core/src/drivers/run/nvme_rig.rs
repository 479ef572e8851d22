//! The NVMe drive of a variant ([`NvmeRig`]): `[platform.nvme]`'s drive with its power
//! overrides, the table `[policy.apst]` makes the driver send, the tables latency-tolerance
//! writes make it send over the run, and the drive's report section.

use crate::apst::psd::NvmeController;
use crate::apst::tolerance;
use crate::apst::{self, ApstConfig};
use crate::error::{shown, InputError};
use crate::input::nvme_source::{self as source, DriveSpec};
use crate::report::ToleranceChange;
use crate::report::{ApstSection, NvmeSection, TimelineSection};
use crate::scenario::{power_state_index, NvmePlatform};
use crate::storage::nvme::device::NvmeDevice;
use crate::time::Nanos;

use super::variant::VariantRun;

impl VariantRun<'_> {
    /// The drive of `[platform.nvme]`, with its power overrides applied.
    pub(super) fn drive(&self, p: &NvmePlatform) -> Result<DriveSpec, InputError> {
        let mut drive = match (&p.preset, &p.file) {
            (Some(id), _) => source::from_preset(id).unwrap_or_else(|| {
                Err(self.at(
                    "platform.nvme.preset",
                    format!(
                        "`preset`: no built-in preset has the id {}; {}",
                        shown(id),
                        crate::input::nvme_preset::suggestion(id)
                    ),
                ))
            })?,
            (None, Some(name)) => {
                let (full, label) = self.locate(name);
                let mut drive = source::read_dump(&full, &label)
                    .map_err(|e| self.named("platform.nvme.file", name, e))?;
                drive.notes.extend(drive.default_service_note());
                drive
            }
            (None, None) => unreachable!("validated by ScenarioFile::parse"),
        };
        // PS0's idle and active power when the drive reports none: the preset's figures,
        // unless the scenario sets them (below).
        for (estimate, table, idle) in [
            (drive.ps0_idle.clone(), &p.idle_power_mw, true),
            (drive.ps0_active.clone(), &p.active_power_mw, false),
        ] {
            let (Some(e), Some(ps0)) = (estimate, drive.controller.power_states.first_mut()) else {
                continue;
            };
            let field = if idle {
                &mut ps0.idle_power_mw
            } else {
                &mut ps0.active_power_mw
            };
            if field.is_none() && !table.contains_key("PS0") {
                *field = Some(e.central_mw);
                // The source's first clause says what kind of figure it is; the whole source
                // is in the preset (`torpor devices --json`), or for a dump matching none
                // in what `torpor apst FILE --json` shows of it.
                let kind = e.source.split(':').next().unwrap_or_default();
                let sources = match &drive.preset {
                    Some(_) => "`torpor devices --json`".to_string(),
                    None => format!("`torpor apst {} --json`", drive.label),
                };
                drive.notes.push(format!(
                    "PS0 {} power {} mW, range {}-{} mW (the drive reports none; {kind}; \
                     sources: {sources})",
                    if idle { "idle" } else { "active" },
                    e.central_mw,
                    e.low_mw,
                    e.high_mw,
                ));
            }
        }
        let states = drive.controller.power_states.len();
        for (table, map, idle) in [
            ("idle_power_mw", &p.idle_power_mw, true),
            ("active_power_mw", &p.active_power_mw, false),
        ] {
            for (key, &mw) in map {
                let ps = power_state_index(key).expect("validated by ScenarioFile::parse");
                let Some(state) = drive.controller.power_states.get_mut(ps) else {
                    return Err(self.at(
                        &format!("platform.nvme.{table}.{key}"),
                        format!(
                            "`{table}`: the drive has no {key} (it reports PS0-PS{})",
                            states.saturating_sub(1)
                        ),
                    ));
                };
                if idle {
                    state.idle_power_mw = Some(mw);
                } else {
                    state.active_power_mw = Some(mw);
                }
                drive.notes.push(format!(
                    "{key} {} power set to {mw} mW by the scenario",
                    if idle { "idle" } else { "active" }
                ));
            }
        }
        Ok(drive)
    }

    /// The drive of `[platform.nvme]` with the table `[policy.apst]` makes the driver send.
    pub(super) fn nvme_rig(&self, nvme: &NvmePlatform) -> Result<NvmeRig, InputError> {
        let s = self.scenario();
        let drive = self.drive(nvme)?;
        let params = s.policy.apst.resolved();
        let config = apst::build(&drive.controller, &params);
        let (table, not_sent_reason) = match &config {
            ApstConfig::Sent(t) => (Some(t), None),
            ApstConfig::NotSent { reason } => (None, Some(reason.clone())),
        };
        let real = scaled_latencies(&drive.controller, nvme.latency_scale);
        // A table sent with APSTE = 0 makes the drive never transition on its own.
        let changes = self.tolerance_changes(&drive.controller, &params)?;
        let mut device = NvmeDevice::new(&real, table, drive.service.clone())
            .with_transition_share(nvme.transition_power_share)
            .with_scheduled_tables(tolerance::device_schedule(&changes));
        if let Some(window) = s.run.timeline {
            device = device.with_timeline(window, s.run.timeline_limit);
        }
        let apst = ApstSection {
            params,
            sent: table.is_some(),
            not_sent_reason,
            table: table.map(crate::report::apst_table::table_json),
            idle_schedule: vec![],
            latency_tolerance: changes.iter().map(ToleranceChange::from).collect(),
        };
        Ok(NvmeRig {
            device,
            drive,
            latency_scale: nvme.latency_scale,
            transition_power_share: nvme.transition_power_share,
            apst,
        })
    }

    /// The variant's writes to the NVMe controller's latency tolerance, in time order (none
    /// beside CPUs, where `[[qos.request]]` acts on the CPUs).
    pub(super) fn tolerance_writes(
        &self,
    ) -> Result<Vec<crate::scenario::qos::ToleranceWrite>, InputError> {
        if self.scenario().platform.cpu.is_some() {
            return Ok(vec![]);
        }
        crate::scenario::qos::resolve_nvme(&self.scenario().qos)
            .map_err(|(path, message)| self.at(&path, message))
    }

    /// The tables the scenario's writes to the controller's latency tolerance make the driver
    /// send (`[[qos.request]]` on `nvme0/power/pm_qos_latency_tolerance_us`).
    pub(super) fn tolerance_changes(
        &self,
        ctrl: &NvmeController,
        params: &apst::ApstParams,
    ) -> Result<Vec<tolerance::TableChange>, InputError> {
        let writes = self.tolerance_writes()?;
        let writes: Vec<(Nanos, i64)> = writes.iter().map(|w| (w.at, w.value)).collect();
        // Every value passed the sysfs store's parsing; the driver refuses nothing else.
        tolerance::table_changes(ctrl, params, &writes)
            .map_err(|(_, refused)| self.at("qos.request", refused.to_string()))
    }
}

/// An NVMe drive built for a variant, and what its report section says beside its stats.
pub(super) struct NvmeRig {
    pub(super) device: NvmeDevice,
    drive: DriveSpec,
    latency_scale: f64,
    transition_power_share: f64,
    apst: ApstSection,
}

impl NvmeRig {
    /// The drive's section of a run that ended at `end`.
    pub(super) fn finish(mut self, end: Nanos) -> NvmeSection {
        self.apst.idle_schedule = self.device.idle_schedule();
        let stats = self.device.finish(end);
        let timeline = self.device.take_timeline().map(|timeline| TimelineSection {
            states: stats
                .power_states
                .iter()
                .map(|s| s.name.clone())
                .chain(["transition".to_string()])
                .collect(),
            timeline,
        });
        let (energy_per_io_uj, transitions_per_hour) = NvmeSection::derived(&stats);
        NvmeSection {
            energy_per_io_uj,
            transitions_per_hour,
            device: self.drive.label,
            notes: self.drive.notes,
            latency_scale: self.latency_scale,
            transition_power_share: self.transition_power_share,
            timeline,
            apst: self.apst,
            stats,
        }
    }
}

/// The drive as it really behaves when its entry and exit latencies are `scale` times the
/// declared ones (rounded to whole microseconds, as descriptors state them).
fn scaled_latencies(ctrl: &NvmeController, scale: f64) -> NvmeController {
    let mut real = ctrl.clone();
    if scale != 1.0 {
        for ps in &mut real.power_states {
            ps.entry_lat_us = (ps.entry_lat_us as f64 * scale)
                .round()
                .min(u32::MAX as f64) as u32;
            ps.exit_lat_us = (ps.exit_lat_us as f64 * scale).round().min(u32::MAX as f64) as u32;
        }
    }
    real
}
