//! `torpor qos`: each variant's PM QoS constraints over its run, read from the scenario as a
//! run reads it; nothing is simulated.

use std::path::Path;

use crate::error::InputError;
use crate::view;

use super::scenario_file::{parse_watched, read_scenario};
use super::variant::VariantRun;
use super::watch::{RunError, Watch};

/// `torpor qos`: each variant's PM QoS constraints over its run, from the scenario file at
/// `path` read as [`run_file`](super::run_file) reads it. Nothing is simulated.
pub fn qos_file(path: &Path, watch: &mut dyn Watch) -> Result<view::qos::QosView, RunError> {
    let (text, label, base) = read_scenario(path)?;
    let file = parse_watched(&label, &text, &[], watch)?;
    let variants = (0..file.variants().len())
        .map(|variant| {
            if !watch.go_on() {
                return Err(RunError::Interrupted);
            }
            VariantRun {
                file: &file,
                variant,
                base: &base,
                ftrace: None,
                fio: None,
            }
            .qos_view()
            .map_err(RunError::from)
        })
        .collect::<Result<_, _>>()?;
    Ok(view::qos::QosView {
        scenario: file.label().to_string(),
        variants,
    })
}

impl VariantRun<'_> {
    /// This variant's PM QoS timeline (`torpor qos`): the CPUs' limits and states, or the
    /// controller's tolerance and APST targets; a UFS scenario has no PM QoS to show.
    pub(super) fn qos_view(&self) -> Result<view::qos::VariantQos, InputError> {
        use view::qos::{cpu_timeline, nvme_timeline, Timeline, VariantQos};
        let s = self.scenario();
        let name = self.file.variants()[self.variant].name.clone();
        if let Some(p) = &s.platform.cpu {
            let (platform, device) = self.cpu_platform(p)?;
            let actions = self.cpu_qos(&platform, &device)?;
            let steps = cpu_timeline(&platform, &actions);
            return Ok(VariantQos {
                name,
                device,
                timeline: Timeline::Cpu { steps },
            });
        }
        let Some(nvme) = &s.platform.nvme else {
            return Err(self.at(
                "platform",
                "torpor qos shows CPU latency limits (`[platform.cpu]`) and an NVMe \
                 controller's latency tolerance (`[platform.nvme]`); `[platform.ufs]` takes no \
                 PM QoS requests"
                    .into(),
            ));
        };
        let drive = self.drive(nvme)?;
        let writes = self.tolerance_writes()?;
        let steps = nvme_timeline(&drive.controller, &s.policy.apst.resolved(), &writes)
            .map_err(|(_, refused)| self.at("qos.request", refused.to_string()))?;
        Ok(VariantQos {
            name,
            device: drive.label,
            timeline: Timeline::Nvme { steps },
        })
    }
}
