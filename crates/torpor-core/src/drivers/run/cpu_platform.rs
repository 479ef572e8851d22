//! The CPUs of a variant: `[platform.cpu]`'s platform, its tasks and PM QoS requests checked
//! against it, the interrupt map, fio job threads, and the CPU system ready for a world.

use crate::cpu::system::{CpuRunSpec, CpuSystem, IrqMap};
use crate::cpu::task::{Dist, TaskSpec, Wake, DEFAULT_TIMER_SLACK};
use crate::cpu::CpuPlatform;
use crate::cpuidle::GovernorName;
use crate::error::{shown, InputError};
use crate::scenario::CpuPlatformSpec;
use crate::time::Nanos;
use crate::user_file;
use crate::workload::Workload;

use super::variant::VariantRun;

/// The CPU time a fio thread spends per completion it reaps (io_getevents, its accounting,
/// io_submit of the next IO). ESTIMATE: 8 us, range 3-20 us on a phone's little core (two
/// system calls and fio's bookkeeping); no measurement found.
const FIO_IO_CPU: Nanos = Nanos(8_000);

impl VariantRun<'_> {
    /// The CPUs of `[platform.cpu]`.
    pub(super) fn cpu_platform(
        &self,
        p: &CpuPlatformSpec,
    ) -> Result<(CpuPlatform, String), InputError> {
        match (&p.preset, &p.file) {
            (Some(id), _) => crate::input::cpu_preset::find(id)
                .map(|r| r.map(|platform| (platform, format!("preset {id}"))))
                .unwrap_or_else(|| {
                    Err(self.at(
                        "platform.cpu.preset",
                        format!(
                            "[platform.cpu] preset: no built-in CPU platform {}{}",
                            shown(id),
                            crate::input::cpu_preset::suggestion(id)
                        ),
                    ))
                }),
            (None, Some(name)) => {
                let (full, label) = self.locate(name);
                let text = user_file::read_text(
                    &full,
                    &label,
                    "a CPU platform TOML (docs/cpu-platform.md)",
                    user_file::MAX_SCENARIO_BYTES,
                    user_file::Decoding::Strict,
                )
                .map_err(|e| self.named("platform.cpu.file", name, e))?;
                let platform = CpuPlatform::parse(&label, &text.text)?;
                Ok((platform, label))
            }
            (None, None) => unreachable!("the scenario schema requires preset or file"),
        }
    }

    /// The variant's PM QoS requests, each CPU they name checked against the platform.
    pub(super) fn cpu_qos(
        &self,
        platform: &CpuPlatform,
        label: &str,
    ) -> Result<Vec<crate::scenario::qos::NamedAction>, InputError> {
        let s = self.scenario();
        let named = crate::scenario::qos::resolve(&s.qos, &s.workload.tasks)
            .map_err(|(path, m)| self.at(&path, m))?;
        // Task-held requests come first, one per task that has one; the rest are the file's.
        let held = named.len() - s.qos.requests.len();
        for (i, n) in named.iter().enumerate().skip(held) {
            use crate::qos::cpu_latency::QosTarget;
            let key = format!("qos.request[{}].target", i - held);
            let (cpu, freq) = match n.action.target {
                QosTarget::CpuDmaLatency => continue,
                QosTarget::ResumeLatency { cpu } => (cpu, false),
                QosTarget::ScalingMinFreq { cpu } | QosTarget::ScalingMaxFreq { cpu } => {
                    (cpu, true)
                }
            };
            let Some(cluster) = platform.cluster_of(cpu) else {
                return Err(self.at(
                    &key,
                    format!(
                        "[[qos.request]] `target`: {label} has no CPU {cpu} (it has {:?})",
                        platform.cpus()
                    ),
                ));
            };
            if freq && cluster.opps.is_empty() {
                return Err(self.at(
                    &key,
                    format!(
                        "[[qos.request]] `target`: CPU {cpu} has no cpufreq policy: its cluster \
                         {:?} of {label} lists no OPPs",
                        cluster.name
                    ),
                ));
            }
        }
        Ok(named)
    }

    /// The variant's CPUs, tasks, governor and PM QoS requests, every CPU a task or the
    /// interrupt map names checked against the platform; and the platform's label.
    pub(super) fn cpu_spec(&self, p: &CpuPlatformSpec) -> Result<(CpuRunSpec, String), InputError> {
        let s = self.scenario();
        let (platform, label) = self.cpu_platform(p)?;
        let mut tasks =
            crate::cpu::task::resolve(&s.workload.tasks).expect("validated with the scenario");
        // Each task's IO goes to the device its `io.device` names.
        for (task, file) in tasks.iter_mut().zip(&s.workload.tasks) {
            if let (Some(io), Some(named)) = (task.io.as_mut(), &file.io) {
                io.device = s.device_slot(&named.device);
            }
        }
        for (i, t) in tasks.iter().enumerate() {
            if platform.cluster_of(t.cpu).is_none() {
                return Err(self.at(
                    &format!("workload.task[{i}].cpu"),
                    format!(
                        "[[workload.task]] {}: `cpu`: {} has no CPU {} (it has {:?})",
                        t.name,
                        label,
                        t.cpu,
                        platform.cpus()
                    ),
                ));
            }
        }
        let governor =
            GovernorName::parse(&s.policy.cpuidle.governor).expect("validated with the scenario");
        let qos = self.cpu_qos(&platform, &label)?;
        // Per device slot: the scenario's mapping, else the device's default (NVMe: blk-mq's
        // managed vectors; UFS: the host's one interrupt on the first CPU, the default
        // affinity).
        let devices = s.devices();
        let mut irq = Vec::with_capacity(devices.len());
        for device in &devices {
            let asked = match &s.platform.irq {
                Some(table) => table
                    .map_for(device, &devices)
                    .map_err(|(path, message)| self.at(&path, message))?,
                None => None,
            };
            let map = asked.unwrap_or_else(|| match *device {
                "ufs" => IrqMap::Fixed(platform.cpus()[0]),
                _ => IrqMap::Managed,
            });
            map.check(&platform.cpus()).map_err(|m| {
                let path = match &s.platform.irq {
                    Some(t) if t.mode.is_none() => format!("platform.irq.{device}.cpus"),
                    Some(_) => "platform.irq.cpus".into(),
                    None => "platform.cpu".into(),
                };
                self.at(&path, m.to_string())
            })?;
            irq.push(map);
        }
        let spec = CpuRunSpec {
            platform,
            governor,
            hz: p.hz,
            tasks,
            qos: qos.into_iter().map(|n| n.action).collect(),
            seed: s.run.seed,
            irq,
            cpufreq: s
                .policy
                .cpufreq
                .resolved()
                .expect("validated with the scenario"),
            rate_limit_us: s.policy.cpufreq.rate_limit_us,
        };
        Ok((spec, label))
    }

    /// A thread on the CPUs for each fio job with `cpus_allowed`: on the first CPU of the
    /// set, woken by the job's completions, running [`FIO_IO_CPU`] per wake-up.
    pub(super) fn add_job_threads(
        &self,
        spec: &mut CpuRunSpec,
        loads: &[Workload],
    ) -> Result<(), InputError> {
        let cpus = spec.platform.cpus();
        for (w, load) in loads.iter().enumerate() {
            let Workload::Job(job) = load else { continue };
            let Some(&cpu) = job.cpus_allowed.as_ref().and_then(|set| set.first()) else {
                continue;
            };
            if !cpus.contains(&cpu) {
                return Err(self.at(
                    "platform.cpu",
                    format!(
                        "fio job {}: `cpus_allowed` puts its thread on CPU {cpu}, which the \
                         platform does not have (it has {cpus:?})",
                        shown(&job.name)
                    ),
                ));
            }
            spec.tasks.push(TaskSpec {
                name: format!("fio:{}", job.name),
                cpu,
                wake: Wake::Io,
                run: Dist::Fixed(FIO_IO_CPU),
                wakes: None,
                io: None,
                timer_slack: DEFAULT_TIMER_SLACK,
                job: Some(w as u32),
                uclamp: crate::cpu::task::Uclamp::NONE,
            });
        }
        Ok(())
    }

    /// The variant's CPU system, ready to join a world (`idle_signals`: its idle entries and
    /// exits go to the device).
    pub(super) fn cpu_system<'t>(
        &self,
        spec: &CpuRunSpec,
        idle_signals: bool,
    ) -> Result<CpuSystem<'t>, InputError> {
        let mut system = CpuSystem::new(spec)
            .map_err(|m| self.at("platform.cpu", format!("[platform.cpu] {m}")))?;
        if idle_signals {
            system = system.with_idle_signals();
        }
        let run = &self.scenario().run;
        if let Some(window) = run.timeline {
            system = system.with_timeline(window, run.timeline_limit);
        }
        Ok(system)
    }
}
