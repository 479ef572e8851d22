//! The UFS device and host of a variant ([`UfsRig`]): `[platform.ufs]`'s preset with
//! `[policy.devfreq]`, `[policy.boost]` and `[policy.hpb]`, tied to the CPUs when the variant
//! has them, and the device's report section.

use crate::error::{shown, InputError};
use crate::input::ufs_preset;
use crate::report::{DevfreqParams, UfsSection};
use crate::scenario::UfsPlatformSpec;
use crate::storage::ufs::cpu_link::CpuLink;
use crate::storage::ufs::device::{BoostConfig, FtlSetup, UfsDevice};
use crate::storage::ufs::hpb_exchange::HpbSetup;
use crate::time::Nanos;
use crate::ufshcd::scaling::TimerKind;

use super::variant::VariantRun;

/// Commands a UFS LU takes at once: the host's transfer request slots (UFSHCI `nutrs`, 32 on
/// UFS 2.x-4.x hosts), which bounds HPB's `inflight_map_req`.
const UFS_QUEUE_DEPTH: u32 = 32;

impl VariantRun<'_> {
    /// The device's FTL from the preset's `[ftl]`, with HPB when `[policy.hpb]` turns it on
    /// (HPB needs the FTL: an HPB READ skips the device's map lookup, which only the FTL
    /// models).
    pub(super) fn ftl_setup(
        &self,
        preset: &ufs_preset::UfsPreset,
    ) -> Result<Option<FtlSetup>, InputError> {
        let hpb = match &self.scenario().policy.hpb {
            Some(policy) => policy
                .resolve(preset.hpb_descriptors(), UFS_QUEUE_DEPTH)
                .map_err(|(path, message)| self.at(&path, message))?,
            None => None,
        };
        let Some(config) = preset.ftl_config() else {
            return match hpb {
                Some(_) => Err(self.at(
                    "policy.hpb",
                    format!(
                        "[policy.hpb]: the UFS preset {} has no [ftl] section (HPB skips the \
                         device's map lookup, which only a preset with an FTL models): remove \
                         the table or change the preset",
                        shown(&preset.id)
                    ),
                )),
                None => Ok(None),
            };
        };
        Ok(Some(FtlSetup {
            config,
            hpb: hpb.map(|r| HpbSetup {
                geometry: r.geometry,
                params: r.params,
                issued_writes: r.issued_writes,
                dynamics: r.dynamics,
            }),
        }))
    }

    /// The UFS device and host of `[platform.ufs]`, with `[policy.devfreq]`, `[policy.boost]`
    /// and `[policy.hpb]`.
    pub(super) fn ufs_rig(&self, p: &UfsPlatformSpec) -> Result<UfsRig, InputError> {
        let s = self.scenario();
        let preset = ufs_preset::find(&p.preset).unwrap_or_else(|| {
            Err(self.at(
                "platform.ufs.preset",
                format!(
                    "[platform.ufs] preset: no built-in UFS preset has the id {}; {}",
                    shown(&p.preset),
                    ufs_preset::suggestion(&p.preset)
                ),
            ))
        })?;
        let policy = &s.policy.devfreq;
        let scaling = policy.resolved(preset.min_level.freq_hz, preset.max_level.freq_hz, p.hz);
        let mut cfg = preset.device_config(scaling, policy.min_gear.or(policy.profile.min_gear()));
        // The parameters as the device runs them (the preset's clock table included).
        let scaling = cfg.scaling;
        let (min, max) = (cfg.min, cfg.max);
        let b = &s.policy.boost;
        let boost = (b.dev_freq_timeout_ms != 0).then_some(BoostConfig {
            timeout_ms: b.dev_freq_timeout_ms,
            notify: b.notify,
        });
        cfg.boost = boost;
        cfg.hz = p.hz;
        cfg.user_min_freq_hz = policy.min_freq;
        cfg.user_max_freq_hz = policy.max_freq;
        cfg.ftl = self.ftl_setup(&preset)?;
        let deferrable = scaling.is_some_and(|p| p.timer == TimerKind::Deferrable);
        // ASSUMPTION (stated in the notes): the monitor's timer stays on CPU 0, the boot CPU
        // that probes the host and arms it first (the kernel re-arms it wherever its unbound
        // work last ran).
        let link = s.platform.cpu.is_some().then_some(CpuLink {
            monitor_cpu: Some(0),
            cpu_latency_qos: policy.pm_qos_enable,
        });
        let notes = cfg.notes(link.as_ref());
        let mut device =
            UfsDevice::new(cfg).map_err(|e| self.at("platform.ufs.preset", e.to_string()))?;
        if let Some(link) = link {
            device = device.with_cpu_link(link);
        }
        Ok(UfsRig {
            device,
            id: preset.id.clone(),
            levels: (min, max),
            devfreq: scaling.map(|p| {
                let (down_at_or_below_pct, up_from_pct) = p.switching_loads();
                DevfreqParams {
                    profile: policy.profile,
                    polling_ms: p.polling_ms,
                    polling_period_ns: p.polling_period().0,
                    timer: p.timer,
                    upthreshold: p.ondemand.upthreshold,
                    downdifferential: p.ondemand.downdifferential,
                    rounding: p.rounding,
                    suspend_on_no_request: p.suspend_on_no_request,
                    hz: p.hz,
                    freq_range: p.range,
                    down_at_or_below_pct,
                    up_from_pct,
                }
            }),
            boost: (b.dev_freq_timeout_ms, b.notify),
            notes,
            deferrable,
        })
    }
}

/// A UFS device and host built for a variant, and what its report section says beside its
/// stats.
pub(super) struct UfsRig {
    pub(super) device: UfsDevice,
    id: String,
    /// The clock's lowest and highest levels.
    levels: (
        crate::storage::ufs::service::HostLevel,
        crate::storage::ufs::service::HostLevel,
    ),
    devfreq: Option<DevfreqParams>,
    /// `dev_freq_timeout_ms` and when devfreq learns of the boost.
    boost: (u32, crate::storage::ufs::device::BoostNotify),
    notes: Vec<String>,
    /// devfreq's monitor runs on a deferrable timer (it needs the CPUs' idle signals).
    pub(super) deferrable: bool,
}

impl UfsRig {
    /// The device's section of a run that ended at `end`.
    pub(super) fn finish(mut self, end: Nanos) -> UfsSection {
        let stats = self.device.finish(end);
        if let Some(outside) = stats.hpb.map(|h| h.counters.outside_lu).filter(|&n| n > 0) {
            self.notes.push(format!(
                "{outside} requests reached past the HPB LU's last block (the preset's \
                 num_blocks): served without HPB"
            ));
        }
        let (min, max) = self.levels;
        UfsSection {
            device: self.id,
            min_hz: min.freq_hz,
            max_hz: max.freq_hz,
            min_gear: min.gear,
            max_gear: max.gear,
            devfreq: self.devfreq,
            boost_timeout_ms: self.boost.0,
            boost_notify: self.boost.1,
            notes: self.notes,
            stats,
            energy_per_io_uj: None, // needs the variant's IO count: `with_system`
        }
    }
}
