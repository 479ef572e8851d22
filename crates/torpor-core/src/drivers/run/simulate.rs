//! A variant on the engine: its platform's world built (CPUs alone, a device, or two devices,
//! with or without CPUs), run under the watcher, and its report filled, section by section.

use crate::error::{shown, InputError};
use crate::output_file::{Bounded, OutputFile};
use crate::report::CpuSection;
use crate::report::{IoSection, VariantReport};
use crate::scenario::CpuPlatformSpec;
use crate::scenario::UfsPlatformSpec;
use crate::scenario::{NvmePlatform, DEFAULT_DURATION};
use crate::storage::io::BlockDevice;
use crate::time::Nanos;
use crate::view::ftrace_writer::MAX_TRACE_BYTES;
use crate::view::ftrace_writer::{Form, FtraceWriter};
use crate::workload::{self, Workload};
use crate::world;

use super::variant::VariantRun;
use super::watch::{Progress, RunError, Watch};

impl VariantRun<'_> {
    pub(super) fn run(&self, watch: &mut dyn Watch) -> Result<VariantReport, RunError> {
        let s = self.scenario();
        match (&s.platform.nvme, &s.platform.cpu, &s.platform.ufs) {
            (None, Some(cpu), None) => self.run_cpu(cpu, watch),
            (Some(nvme), _, None) => self.run_nvme(nvme, watch),
            (None, _, Some(ufs)) => self.run_ufs(ufs, watch),
            (Some(nvme), _, Some(ufs)) => self.run_two(nvme, ufs, watch),
            (None, None, None) => unreachable!("the scenario schema requires a platform"),
        }
    }

    /// A variant on CPUs: the tasks, the governor, the cpuidle core, on the engine.
    pub(super) fn run_cpu(
        &self,
        p: &CpuPlatformSpec,
        watch: &mut dyn Watch,
    ) -> Result<VariantReport, RunError> {
        let name = &self.file.variants()[self.variant].name;
        let s = self.scenario();
        let (spec, label) = self.cpu_spec(p)?;
        let until = s.run.duration.unwrap_or(DEFAULT_DURATION);
        let mut progress = Progress {
            variant: self.variant,
            variants: self.file.variants().len(),
            name,
            now: Nanos::ZERO,
            until: Some(until),
        };
        if !watch.tick(&progress) {
            return Err(RunError::Interrupted);
        }
        let tick = |now| {
            progress.now = now;
            watch.tick(&progress)
        };
        let (report, stop, events, written) = match &self.ftrace {
            None => {
                let system = self.cpu_system(&spec, false)?;
                let (report, stop, events) = world::run_cpus(system, until, tick);
                (report, stop, events, None)
            }
            Some(path) => {
                let shown_path = path.display().to_string();
                let io = |e: std::io::Error| InputError::whole(&shown_path, e.to_string());
                // Written beside the target and renamed over it once whole: an error or Ctrl-C
                // leaves no trace cut short.
                let out = Bounded::new(OutputFile::create(path).map_err(io)?, MAX_TRACE_BYTES);
                let out = std::io::BufWriter::new(out);
                let mut writer = FtraceWriter::new(out, &spec, Form::Idlestat).map_err(io)?;
                let system = self.cpu_system(&spec, false)?.traced(&mut writer);
                let (report, stop, events) = world::run_cpus(system, until, tick);
                let lines = writer.lines();
                let out = writer.finish().map_err(|e| match e.kind() {
                    std::io::ErrorKind::FileTooLarge => io(std::io::Error::other(format!(
                        "--ftrace: {e} (1 GiB per trace; the estimate of its size fell short); \
                         shorten `[run] duration`"
                    ))),
                    _ => io(e),
                })?;
                if stop != crate::sim::Stop::Interrupted {
                    let out = out.into_inner().map_err(|e| io(e.into_error()))?;
                    out.into_inner().commit().map_err(io)?;
                }
                (report, stop, events, Some((shown_path, lines)))
            }
        };
        if stop == crate::sim::Stop::Interrupted {
            return Err(RunError::Interrupted);
        }
        let mut cpu = CpuSection::new(&spec, label, report, &[]);
        if let Some((path, lines)) = written {
            cpu.notes.push(format!(
                "variant {}: its idle trace (idlestat's trace file, {lines} events) is {path}",
                shown(name)
            ));
        }
        Ok(VariantReport {
            name: name.to_string(),
            duration_s: until.as_secs_f64(),
            seed: s.run.seed,
            io: IoSection::new(&workload::IoReport::empty(until), until),
            nvme: None,
            cpu: Some(cpu),
            ufs: None,
            system: None,
            events,
        })
    }

    /// A `[platform.nvme]` variant: the drive with `[policy.apst]`, under the variant's IO.
    pub(super) fn run_nvme(
        &self,
        nvme: &NvmePlatform,
        watch: &mut dyn Watch,
    ) -> Result<VariantReport, RunError> {
        let mut rig = self.nvme_rig(nvme)?;
        let (io, end, cpu, events) =
            self.run_device(&mut rig.device, None::<&mut world::NoDevice>, watch, false)?;
        let mut report = self.report_of(end, io, cpu, events);
        report.nvme = Some(rig.finish(end));
        Ok(report.with_system())
    }

    /// A `[platform.ufs]` variant: the device and host with `[policy.devfreq]`,
    /// `[policy.boost]` and `[policy.hpb]`, under the variant's IO.
    pub(super) fn run_ufs(
        &self,
        ufs: &UfsPlatformSpec,
        watch: &mut dyn Watch,
    ) -> Result<VariantReport, RunError> {
        let mut rig = self.ufs_rig(ufs)?;
        let idle_signals = rig.deferrable;
        let (io, end, cpu, events) = self.run_device(
            &mut rig.device,
            None::<&mut world::NoDevice>,
            watch,
            idle_signals,
        )?;
        let mut report = self.report_of(end, io, cpu, events);
        report.ufs = Some(rig.finish(end));
        Ok(report.with_system())
    }

    /// A variant with both devices: the drive in slot 0, the UFS device in slot 1, each with
    /// its own policies, the workloads' IO on `[workload] device` and each task's on its own.
    pub(super) fn run_two(
        &self,
        nvme: &NvmePlatform,
        ufs: &UfsPlatformSpec,
        watch: &mut dyn Watch,
    ) -> Result<VariantReport, RunError> {
        let mut drive = self.nvme_rig(nvme)?;
        let mut host = self.ufs_rig(ufs)?;
        let idle_signals = host.deferrable;
        let (io, end, cpu, events) = self.run_device(
            &mut drive.device,
            Some(&mut host.device),
            watch,
            idle_signals,
        )?;
        let mut report = self.report_of(end, io, cpu, events);
        report.nvme = Some(drive.finish(end));
        report.ufs = Some(host.finish(end));
        Ok(report.with_system())
    }

    /// The variant's report around its IO section, CPU section and events (filled in by the
    /// caller's device sections).
    pub(super) fn report_of(
        &self,
        end: Nanos,
        io: IoSection,
        cpu: Option<CpuSection>,
        events: u64,
    ) -> VariantReport {
        let s = self.scenario();
        VariantReport {
            name: self.file.variants()[self.variant].name.to_string(),
            duration_s: end.as_secs_f64(),
            seed: s.run.seed,
            io,
            nvme: None,
            cpu,
            ufs: None,
            system: None,
            events,
        }
    }

    /// Runs the variant's workloads against `device` on the engine, watched, on the variant's
    /// CPUs when it has them (`idle_signals`: the device hears their idle entries and exits);
    /// returns the IO section, when the run ended (the duration, or when the replay drained),
    /// the CPU section and the events the engine handled.
    pub(super) fn run_device<D: BlockDevice, D2: BlockDevice>(
        &self,
        device: &mut D,
        second: Option<&mut D2>,
        watch: &mut dyn Watch,
        idle_signals: bool,
    ) -> Result<(IoSection, Nanos, Option<CpuSection>, u64), RunError> {
        let s = self.scenario();
        let mut loads = self.workloads(s)?;
        let (cpu, system) = match &s.platform.cpu {
            Some(p) => {
                let (mut spec, label) = self.cpu_spec(p)?;
                self.add_job_threads(&mut spec, &loads)?;
                let system = self.cpu_system(&spec, idle_signals)?;
                (Some((spec, label)), Some(system))
            }
            None => (None, None),
        };
        let until = self.until(s)?;
        let mut progress = Progress {
            variant: self.variant,
            variants: self.file.variants().len(),
            name: &self.file.variants()[self.variant].name,
            now: Nanos::ZERO,
            until,
        };
        if !watch.tick(&progress) {
            return Err(RunError::Interrupted);
        }
        // CPUs have no end of their own: with them a run lasts its duration.
        let until = match (until, &cpu) {
            (None, Some(_)) => Some(DEFAULT_DURATION),
            (until, _) => until,
        };
        progress.until = until;
        let world = world::World::new(device, system, &mut loads, s.run.seed)?;
        let until_ns = until.unwrap_or(Nanos::MAX);
        let tick = |now| {
            progress.now = now;
            watch.tick(&progress)
        };
        let out = match second {
            None => world.run_watched(until_ns, tick)?,
            Some(second) => {
                // The second device is the UFS one (slot 1).
                let to_second = s.workload.device.as_deref().map(|d| s.device_slot(d)) == Some(1);
                world
                    .with_second_device(second, to_second)
                    .run_watched(until_ns, tick)?
            }
        };
        let io = out.io;
        if io.stop == crate::sim::Stop::Interrupted {
            return Err(RunError::Interrupted);
        }
        self.check_replay_had_io(&io)?;
        // Without a duration the run lasts until the replay has drained.
        let end = until.unwrap_or(io.end);
        let cpu = match (cpu, out.cpu) {
            (Some((spec, label)), Some(report)) => {
                Some(CpuSection::new(&spec, label, report, &s.devices()))
            }
            _ => None,
        };
        Ok((self.io_section(&mut loads, &io, end)?, end, cpu, out.events))
    }

    /// The IO section of a device run that ended at `end`: per workload, a replay's lines not
    /// reached and a job's fio figures.
    pub(super) fn io_section(
        &self,
        loads: &mut [Workload],
        io: &workload::IoReport,
        end: Nanos,
    ) -> Result<IoSection, InputError> {
        let mut io_section = IoSection::new(io, end);
        let measured = loads.iter_mut().zip(&io.per_workload);
        for ((load, w), section) in measured.zip(&mut io_section.workloads) {
            match load {
                Workload::Replay(replay) => {
                    if io.stop == crate::sim::Stop::Deadline {
                        section.lines_not_reached = Some(replay.count_unreached()?);
                    }
                }
                Workload::Job(job) => {
                    section.fio = Some(crate::report::fio::job_stats(job, w, end))
                }
            }
        }
        if let Some(f) = &self.fio {
            io_section.notes.clone_from(&f.notes);
        }
        Ok(io_section)
    }

    /// A replayed log that held no read or write, read to its end, is refused: a run of it
    /// would report nothing, silently.
    pub(super) fn check_replay_had_io(&self, io: &workload::IoReport) -> Result<(), InputError> {
        let Some(r) = &self.scenario().workload.replay else {
            return Ok(());
        };
        if io.stop != crate::sim::Stop::Drained {
            return Ok(());
        }
        let held = io
            .per_workload
            .iter()
            .find_map(|w| match (w.iolog, w.block_trace) {
                (Some(c), _) if c.reads + c.writes == 0 => Some(format!(
                    "the log holds {} sync, {} trim, {} wait and {} file lines",
                    c.syncs, c.trims, c.waits, c.file_actions
                )),
                (_, Some(c)) if c.reads + c.writes == 0 => Some(format!(
                    "of the {} trace's requests: discards {}, flushes {}, without data {}; \
                     lines skipped: other actions {}, messages {}, blkparse's report {}",
                    c.format.name(),
                    c.discards,
                    c.flushes,
                    c.no_data,
                    c.other_actions,
                    c.messages,
                    c.report_lines
                )),
                _ => None,
            });
        match held {
            Some(held) => Err(self.at(
                "workload.replay.file",
                format!(
                    "`workload.replay.file`: {}: no read or write to replay ({held})",
                    shown(&r.file)
                ),
            )),
            None => Ok(()),
        }
    }
}
