//! Runs a scenario: for each variant, builds its world (the drive with the policy's table,
//! the workloads), runs it, and fills one section of the [`Report`] per component. Every
//! variant sees identical input unless it changes the input itself (same workload, same seed),
//! so differences between variants are the settings' doing.
//!
//! Before anything runs, the work the scenario asks for is bounded from above
//! ([`crate::workload::estimate`]); above [`Limits::max_ios`] the scenario is refused with the
//! figure, so a mistyped duration costs an error, not a day. While it runs, a [`Watch`] sees
//! its progress every few thousand events and can stop it (Ctrl-C).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::cpu::system::{CpuRunSpec, CpuSystem, IrqMap};
use crate::cpu::task::{Dist, TaskSpec, Wake, DEFAULT_TIMER_SLACK};
use crate::cpu::CpuPlatform;
use crate::cpuidle::GovernorName;
use crate::error::{shown, InputError};
use crate::input::nvme_source::{self as source, DriveSpec};
use crate::input::ufs_preset;
use crate::output_file::{Bounded, OutputFile};
use crate::report::ToleranceChange;
use crate::report::{ApstSection, IoSection, NvmeSection, Report, TimelineSection, VariantReport};
use crate::report::{CpuSection, DevfreqParams, UfsSection};
use crate::scenario::CpuPlatformSpec;
use crate::scenario::Stopped;
use crate::scenario::UfsPlatformSpec;
use crate::scenario::{power_state_index, NvmePlatform, Scenario, ScenarioFile, DEFAULT_DURATION};
use crate::storage::io::BlockDevice;
use crate::storage::nvme::apst::{self, ApstConfig};
use crate::storage::nvme::device::NvmeDevice;
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::service::ServiceModel;
use crate::storage::nvme::tolerance;
use crate::storage::ufs::cpu_link::CpuLink;
use crate::storage::ufs::device::{BoostConfig, FtlSetup, UfsDevice};
use crate::storage::ufs::hpb_exchange::HpbSetup;
use crate::storage::ufs::scaling::TimerKind;
use crate::time::Nanos;
use crate::trace::ftrace_writer::MAX_TRACE_BYTES;
use crate::trace::ftrace_writer::{Form, FtraceWriter};
use crate::user_file::{self, Decoding, MAX_SCENARIO_BYTES};
use crate::view;
use crate::workload::fio_file::{self, JobFile};
use crate::workload::{self, estimate, FioJob, TraceReplay, Workload};
use crate::world;

/// The CPU time a fio thread spends per completion it reaps (io_getevents, its accounting,
/// io_submit of the next IO). ESTIMATE: 8 us, range 3-20 us on a phone's little core (two
/// system calls and fio's bookkeeping); no measurement found.
const FIO_IO_CPU: Nanos = Nanos(8_000);

/// Commands a UFS LU takes at once: the host's transfer request slots (UFSHCI `nutrs`, 32 on
/// UFS 2.x-4.x hosts), which bounds HPB's `inflight_map_req`.
const UFS_QUEUE_DEPTH: u32 = 32;

/// How much work a run may ask for before it is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most IOs a scenario's jobs may issue, all variants together (an upper bound
    /// computed before the run; replayed traces are bounded by their length instead).
    pub max_ios: u64,
}

impl Limits {
    /// 5 x 10^9 IOs: a few minutes on one core at the 30-40 M IOs/s `torpor bench` measures.
    pub const DEFAULT_MAX_IOS: u64 = 5_000_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ios: Self::DEFAULT_MAX_IOS,
        }
    }
}

/// Where a run is, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The variant running (0-based) and how many there are.
    pub variant: usize,
    pub variants: usize,
    pub name: &'a str,
    /// Simulated time reached in this variant, and where it ends (`None`: when its replay ends).
    pub now: Nanos,
    pub until: Option<Nanos>,
}

/// Watches a run: shown its progress every few thousand events and at each variant's start;
/// returning `false` stops the run ([`RunError::Interrupted`]).
pub trait Watch {
    fn tick(&mut self, progress: &Progress<'_>) -> bool;

    /// Asked while a scenario is read and checked, where there is no progress to show:
    /// `false` stops as from `tick`.
    fn go_on(&mut self) -> bool {
        true
    }
}

/// No watcher: the run goes to its end.
impl Watch for () {
    fn tick(&mut self, _: &Progress<'_>) -> bool {
        true
    }
}

/// Why a run produced no report.
#[derive(Debug)]
pub enum RunError {
    /// Bad input: the one-line error.
    Input(InputError),
    /// The watcher stopped it (the user pressed Ctrl-C).
    Interrupted,
}

impl From<InputError> for RunError {
    fn from(e: InputError) -> Self {
        RunError::Input(e)
    }
}

impl From<Stopped> for RunError {
    fn from(s: Stopped) -> Self {
        match s {
            Stopped::Input(e) => RunError::Input(e),
            Stopped::Interrupted => RunError::Interrupted,
        }
    }
}

/// Scenario `text` parsed, then each of `overrides` set, asking `watch` as it goes.
fn parse_watched(
    label: &str,
    text: &str,
    overrides: &[Override],
    watch: &mut dyn Watch,
) -> Result<ScenarioFile, RunError> {
    let mut file = ScenarioFile::parse_watched(label, text, &mut || watch.go_on())?;
    for (path, value) in overrides {
        file = file.with_field_watched(path, value.clone(), &mut || watch.go_on())?;
    }
    Ok(file)
}

/// A field of the scenario set from outside the file (a sweep's point, an API keyword): its
/// dotted path (`policy.apst.primary_timeout_ms`) and value.
pub type Override = (String, toml::Value);

/// Runs the scenario file at `path` with `overrides` applied; relative paths inside it
/// resolve against its directory.
pub fn run_file(
    path: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    let (text, label, base) = read_scenario(path)?;
    run_text(&text, &label, &base, overrides, limits, watch)
}

/// A scenario file's text, its label for errors, and the folder its paths resolve against.
fn read_scenario(path: &Path) -> Result<(String, String, PathBuf), InputError> {
    let label = path.display().to_string();
    let file = user_file::read_text(
        path,
        &label,
        "a scenario file",
        MAX_SCENARIO_BYTES,
        Decoding::Strict,
    )?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok((file.text, label, base))
}

/// `torpor qos`: each variant's PM QoS constraints over its run, from the scenario file at
/// `path` read as [`run_file`] reads it. Nothing is simulated.
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

/// [`run_file`] writing, for each variant of a CPU scenario, its idle trace as idlestat's
/// trace file `ftrace_dir/<variant>.trace` (the variant's name with characters other than
/// letters, digits, `.`, `-` and `_` made `_`); an NVMe scenario is refused.
pub fn run_file_traced(
    path: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
    ftrace_dir: &Path,
) -> Result<Report, RunError> {
    let label = path.display().to_string();
    let text = user_file::read_text(
        path,
        &label,
        "a scenario file",
        MAX_SCENARIO_BYTES,
        Decoding::Strict,
    )?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let file = parse_watched(&label, &text.text, overrides, watch)?;
    run_variants(&file, &base, limits, watch, Some(ftrace_dir))
}

/// The file a variant's trace goes to in the `--ftrace` folder.
fn trace_file_name(variant: &str) -> String {
    let name: String = variant
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}.trace")
}

/// Runs scenario `text` with `overrides` applied; `label` names it in errors, `base`
/// resolves its relative paths.
pub fn run_text(
    text: &str,
    label: &str,
    base: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    let file = parse_watched(label, text, overrides, watch)?;
    run_parsed(&file, base, limits, watch)
}

/// Runs every variant of a parsed scenario (e.g. one point of a sweep).
pub fn run_parsed(
    file: &ScenarioFile,
    base: &Path,
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Report, RunError> {
    run_variants(file, base, limits, watch, None)
}

/// Which kinds of platform a checked scenario's variants run, over all its variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Platforms {
    pub nvme: bool,
    pub ufs: bool,
    pub cpu: bool,
}

/// Checks scenario `text` with `overrides` applied as [`run_text`] does before the first
/// event: parsed, each variant's job file read, its drive, UFS device and CPUs built, and the
/// work bound; nothing is simulated (a replayed trace is read only when it runs). Returns
/// the kinds of platform it runs.
pub fn check_text(
    text: &str,
    label: &str,
    base: &Path,
    overrides: &[Override],
    limits: &Limits,
    watch: &mut dyn Watch,
) -> Result<Platforms, RunError> {
    let file = parse_watched(label, text, overrides, watch)?;
    let inputs = variant_runs(&file, base, None)?;
    check_work(&inputs, limits)?;
    let mut kinds = Platforms::default();
    for input in &inputs {
        if !watch.go_on() {
            return Err(RunError::Interrupted);
        }
        let s = input.scenario();
        if let Some(nvme) = &s.platform.nvme {
            input.nvme_rig(nvme)?;
            kinds.nvme = true;
        }
        if let Some(ufs) = &s.platform.ufs {
            input.ufs_rig(ufs)?;
            kinds.ufs = true;
        }
        if let Some(cpu) = &s.platform.cpu {
            input.cpu_spec(cpu)?;
            kinds.cpu = true;
        }
    }
    Ok(kinds)
}

/// Each variant of `file` as an [`Input`], its job file read.
fn variant_runs<'a>(
    file: &'a ScenarioFile,
    base: &'a Path,
    ftrace_dir: Option<&Path>,
) -> Result<Vec<VariantRun<'a>>, InputError> {
    let mut inputs: Vec<VariantRun> = (0..file.variants().len())
        .map(|variant| VariantRun {
            file,
            variant,
            base,
            ftrace: ftrace_dir.map(|dir| dir.join(trace_file_name(&file.variants()[variant].name))),
            fio: None,
        })
        .collect();
    for input in &mut inputs {
        input.fio = input.job_file()?;
    }
    Ok(inputs)
}

fn run_variants(
    file: &ScenarioFile,
    base: &Path,
    limits: &Limits,
    watch: &mut dyn Watch,
    ftrace_dir: Option<&Path>,
) -> Result<Report, RunError> {
    let inputs = variant_runs(file, base, ftrace_dir)?;
    if ftrace_dir.is_some() {
        for (i, input) in inputs.iter().enumerate() {
            if input.scenario().platform.cpu.is_none() {
                return Err(input
                    .at(
                        "platform",
                        "--ftrace writes the idle traces of CPU runs; this scenario runs a \
                         storage device, which has no cpu_idle events"
                            .into(),
                    )
                    .into());
            }
            if inputs[..i].iter().any(|o| o.ftrace == input.ftrace) {
                return Err(input
                    .at(
                        "variant",
                        format!(
                            "--ftrace: variant {} would write the same file as an earlier one; \
                             give the variants names that differ in letters or digits",
                            shown(&file.variants()[i].name)
                        ),
                    )
                    .into());
            }
            crate::trace::ftrace_writer::check_trace_size(input.max_ios()?)
                .map_err(|m| input.at(input.duration_key(), m))?;
        }
    }
    check_work(&inputs, limits)?;
    let mut variants = Vec::with_capacity(inputs.len());
    for input in &inputs {
        variants.push(input.run(watch)?);
    }
    Ok(Report {
        scenario: file.label().to_string(),
        variants,
    })
}

/// Refuses a scenario whose jobs could issue more than `limits.max_ios` IOs in all.
fn check_work(inputs: &[VariantRun], limits: &Limits) -> Result<(), InputError> {
    let mut total: u64 = 0;
    let mut largest = (0, 0); // (IOs, variant)
    for input in inputs {
        let ios = input.max_ios()?;
        total = total.saturating_add(ios);
        largest = largest.max((ios, input.variant));
    }
    if total <= limits.max_ios {
        return Ok(());
    }
    let input = &inputs[largest.1];
    let s = input.scenario();
    let path = input.duration_key();
    let span = input.until(s)?.unwrap_or(DEFAULT_DURATION);
    // What the count is of: CPU tasks' events, a device's IOs, or both.
    let (cpu, device) = inputs.iter().fold((false, false), |(c, d), i| {
        let p = &i.scenario().platform;
        (
            c || p.cpu.is_some(),
            d || p.nvme.is_some() || p.ufs.is_some(),
        )
    });
    let (units, verb) = match (cpu, device) {
        (true, false) => ("CPU events", "take"),
        (true, true) => ("IOs and CPU events", "take"),
        _ => ("IOs", "issue"),
    };
    Err(input.at(
        path,
        format!(
            "this scenario could {verb} up to {:.1e} {units} ({} variant(s); variant {} runs \
             {} and could {verb} {:.1e}), more than the limit of {:.1e} (minutes of wall time); \
             shorten `[run] duration` or raise the limit (`torpor run --max-ios N`)",
            total as f64,
            inputs.len(),
            shown(&input.file.variants()[input.variant].name),
            span,
            largest.0 as f64,
            limits.max_ios as f64,
        ),
    ))
}

/// One variant of the scenario being run: problems with what it names are reported at the
/// line that named it.
struct VariantRun<'a> {
    file: &'a ScenarioFile,
    variant: usize,
    base: &'a Path,
    /// Where this variant's idle trace goes (`--ftrace`).
    ftrace: Option<PathBuf>,
    /// The jobs of `[workload] fio`, read once before anything runs.
    fio: Option<JobFile>,
}

impl VariantRun<'_> {
    fn at(&self, path: &str, message: String) -> InputError {
        self.file.error_at(self.variant, path, message)
    }

    fn scenario(&self) -> &Scenario {
        &self.file.variants()[self.variant].scenario
    }

    /// Where a problem with the run's length is reported: its `[run] duration`, else its
    /// workload.
    fn duration_key(&self) -> &'static str {
        if self.scenario().run.duration.is_some() {
            "run.duration"
        } else {
            "workload"
        }
    }

    /// Reads `[workload] fio`, the job file: a problem with the file as a whole is reported at
    /// the scenario's line, one inside it at its own line. `[workload.iozone]`'s threads join
    /// its jobs (checked by the scenario's parse).
    fn job_file(&self) -> Result<Option<JobFile>, InputError> {
        let s = self.scenario();
        let iozone = s.workload.iozone.as_ref().map(|io| io.jobs());
        let Some(name) = &s.workload.fio else {
            return Ok(iozone.map(|jobs| JobFile {
                jobs,
                notes: Vec::new(),
            }));
        };
        let (full, label) = self.locate(name);
        let text = user_file::read_text(
            &full,
            &label,
            "a fio job file",
            MAX_SCENARIO_BYTES,
            Decoding::Strict,
        )
        .map_err(|e| self.named("workload.fio", name, e))?;
        let mut jobs = fio_file::parse(&label, &text.text)?;
        let beside = s.workload.jobs.len() + iozone.as_ref().map_or(0, Vec::len);
        let total = beside + jobs.jobs.len();
        if total > crate::workload::MAX_JOBS {
            return Err(self.at(
                "workload.fio",
                format!(
                    "`workload.fio`: {} defines {} jobs beside {} [[workload.job]]s{}: at most {} \
                     in one variant",
                    shown(name),
                    jobs.jobs.len(),
                    s.workload.jobs.len(),
                    iozone.as_ref().map_or(String::new(), |t| format!(
                        " and {} iozone threads",
                        t.len()
                    )),
                    crate::workload::MAX_JOBS
                ),
            ));
        }
        jobs.jobs.extend(iozone.into_iter().flatten());
        Ok(Some(jobs))
    }

    /// The jobs of the variant's job file, none without one.
    fn file_jobs(&self) -> &[FioJob] {
        self.fio.as_ref().map_or(&[], |f| &f.jobs)
    }

    /// An upper bound on the IOs this variant's jobs issue (its replay is not counted).
    fn max_ios(&self) -> Result<u64, InputError> {
        let s = self.scenario();
        let span = self.until(s)?.unwrap_or(Nanos::ZERO);
        // A preset that does not load is reported with its line when the variant runs.
        // With two devices, the workloads' device's.
        let nvme = match s.workload.device.as_deref() {
            Some("ufs") => None,
            _ => s.platform.nvme.as_ref(),
        };
        let service = match (nvme, &s.platform.ufs) {
            (Some(nvme), _) => match nvme.preset.as_deref().map(source::from_preset) {
                Some(Some(Ok(d))) => d.service,
                _ => ServiceModel::CLIENT_DEFAULT,
            },
            // The device stage alone: faster than the whole UFS path, so still a bound.
            (None, Some(ufs)) => match ufs_preset::find(&ufs.preset) {
                Some(Ok(p)) => ServiceModel {
                    read_4k_us: p.service.read_4k_ns as f64 / 1e3,
                    write_4k_us: p.service.write_4k_ns as f64 / 1e3,
                    read_mb_s: p.service.read_stream_bytes_per_s as f64 / 1e6,
                    write_mb_s: p.service.write_stream_bytes_per_s as f64 / 1e6,
                    parallelism: p.service.slots,
                },
                _ => ServiceModel::CLIENT_DEFAULT,
            },
            (None, None) => return Ok(cpu_events(s, span, Nanos::ZERO)),
        };
        let workflow = s.workload.apst_workflow.and_then(workload::apst_workflow);
        let jobs = workflow
            .iter()
            .chain(&s.workload.jobs)
            .chain(self.file_jobs())
            .map(|job| estimate::max_ios(job, span, &service))
            .fold(0, u64::saturating_add);
        // Beside CPUs, the tasks' wake-ups (their IO among them) over the run's duration.
        let tasks = match s.platform.cpu {
            Some(_) => cpu_events(
                s,
                self.until(s)?.unwrap_or(DEFAULT_DURATION),
                estimate::completion_gap(&service),
            ),
            None => 0,
        };
        Ok(jobs.saturating_add(tasks))
    }

    /// Where the file the scenario names `name` is, and how errors inside it call it: the
    /// path from where torpor runs, so that the user can open it.
    fn locate(&self, name: &str) -> (PathBuf, String) {
        let path = self.base.join(name);
        let label = path.display().to_string();
        (path, label)
    }

    /// Opens a file the scenario names at `path`, relative to the scenario; a problem with
    /// the file itself is reported at the scenario line that names it.
    fn open(&self, path: &str, name: &str, what: &str) -> Result<(File, String), InputError> {
        let (full, label) = self.locate(name);
        let file = user_file::open(&full, &label, what).map_err(|e| self.named(path, name, e))?;
        Ok((file, label))
    }

    /// `e`, a problem of the file `name` as a whole, reported at the scenario line `path`.
    fn named(&self, path: &str, name: &str, e: InputError) -> InputError {
        if e.line.is_some() {
            return e;
        }
        self.at(
            path,
            format!("`{path}`: {}: {}", crate::error::shown(name), e.message),
        )
    }

    /// The drive of `[platform.nvme]`, with its power overrides applied.
    fn drive(&self, p: &NvmePlatform) -> Result<DriveSpec, InputError> {
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
                if drive.preset.is_none() {
                    let d = ServiceModel::CLIENT_DEFAULT;
                    drive.notes.push(format!(
                        "service times are torpor's client-drive defaults ({} us 4 KiB read, \
                         {} us 4 KiB write): a device dump carries none",
                        d.read_4k_us, d.write_4k_us
                    ));
                }
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

    /// The variant's workloads, fresh (a replayed trace is read from its start).
    fn workloads(&self, s: &Scenario) -> Result<Vec<Workload>, InputError> {
        let w = &s.workload;
        let mut out = Vec::new();
        if let Some(n) = w.apst_workflow {
            out.push(Workload::Job(
                workload::apst_workflow(n).expect("validated 1..=7"),
            ));
        }
        out.extend(w.jobs.iter().cloned().map(Workload::Job));
        out.extend(self.file_jobs().iter().cloned().map(Workload::Job));
        if let Some(r) = &w.replay {
            let (file, label) = self.open(
                "workload.replay.file",
                &r.file,
                "a trace (a fio iolog or a block trace)",
            )?;
            let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 16, file));
            out.push(Workload::Replay(
                TraceReplay::new(reader, &label, r.format, r.action, r.options)
                    .map_err(|e| self.named("workload.replay.file", &r.file, e))?,
            ));
        }
        Ok(out)
    }

    /// A replayed log that held no read or write, read to its end, is refused: a run of it
    /// would report nothing, silently.
    fn check_replay_had_io(&self, io: &workload::IoReport) -> Result<(), InputError> {
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

    /// The IO is iozone's alone (no job, job file, replay or workflow beside it).
    fn only_iozone(&self, s: &Scenario) -> bool {
        let w = &s.workload;
        w.iozone.is_some()
            && w.jobs.is_empty()
            && w.fio.is_none()
            && w.replay.is_none()
            && w.apst_workflow.is_none()
    }

    /// How long to run: `[run] duration`, else until iozone's threads or the replay end, else
    /// the default.
    fn until(&self, s: &Scenario) -> Result<Option<Nanos>, InputError> {
        if let Some(d) = s.run.duration {
            return Ok(Some(d));
        }
        if self.only_iozone(s) {
            // iozone runs until its threads have read their files, as iozone does.
            return Ok(None);
        }
        if s.workload.replay.is_none() {
            return Ok(Some(DEFAULT_DURATION));
        }
        let endless = s.workload.apst_workflow.is_some()
            || s.workload
                .jobs
                .iter()
                .chain(self.file_jobs())
                .any(|j| j.time_based && j.runtime.is_none());
        if endless {
            return Err(self.at(
                "workload",
                "[run] duration: needed here: without it the run lasts as long as the replayed \
                 trace, but a time-based job beside it never ends on its own"
                    .into(),
            ));
        }
        Ok(None)
    }

    /// The CPUs of `[platform.cpu]`.
    fn cpu_platform(&self, p: &CpuPlatformSpec) -> Result<(CpuPlatform, String), InputError> {
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
    pub(crate) fn cpu_qos(
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
    fn cpu_spec(&self, p: &CpuPlatformSpec) -> Result<(CpuRunSpec, String), InputError> {
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
    fn add_job_threads(&self, spec: &mut CpuRunSpec, loads: &[Workload]) -> Result<(), InputError> {
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
    fn cpu_system<'t>(
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

    /// A variant on CPUs: the tasks, the governor, the cpuidle core, on the engine.
    fn run_cpu(
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

    fn run(&self, watch: &mut dyn Watch) -> Result<VariantReport, RunError> {
        let s = self.scenario();
        match (&s.platform.nvme, &s.platform.cpu, &s.platform.ufs) {
            (None, Some(cpu), None) => self.run_cpu(cpu, watch),
            (Some(nvme), _, None) => self.run_nvme(nvme, watch),
            (None, _, Some(ufs)) => self.run_ufs(ufs, watch),
            (Some(nvme), _, Some(ufs)) => self.run_two(nvme, ufs, watch),
            (None, None, None) => unreachable!("the scenario schema requires a platform"),
        }
    }

    /// The variant's report around its IO section, CPU section and events (filled in by the
    /// caller's device sections).
    fn report_of(
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

    /// A `[platform.nvme]` variant: the drive with `[policy.apst]`, under the variant's IO.
    fn run_nvme(
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
    fn run_ufs(
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
    fn run_two(
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

    /// The drive of `[platform.nvme]` with the table `[policy.apst]` makes the driver send.
    fn nvme_rig(&self, nvme: &NvmePlatform) -> Result<NvmeRig, InputError> {
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

    /// This variant's PM QoS timeline (`torpor qos`): the CPUs' limits and states, or the
    /// controller's tolerance and APST targets; a UFS scenario has no PM QoS to show.
    fn qos_view(&self) -> Result<view::qos::VariantQos, InputError> {
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
            .map_err(|(_, message)| self.at("qos.request", message))?;
        Ok(VariantQos {
            name,
            device: drive.label,
            timeline: Timeline::Nvme { steps },
        })
    }

    /// The variant's writes to the NVMe controller's latency tolerance, in time order (none
    /// beside CPUs, where `[[qos.request]]` acts on the CPUs).
    fn tolerance_writes(&self) -> Result<Vec<crate::scenario::qos::ToleranceWrite>, InputError> {
        if self.scenario().platform.cpu.is_some() {
            return Ok(vec![]);
        }
        crate::scenario::qos::resolve_nvme(&self.scenario().qos)
            .map_err(|(path, message)| self.at(&path, message))
    }

    /// The tables the scenario's writes to the controller's latency tolerance make the driver
    /// send (`[[qos.request]]` on `nvme0/power/pm_qos_latency_tolerance_us`).
    fn tolerance_changes(
        &self,
        ctrl: &NvmeController,
        params: &apst::ApstParams,
    ) -> Result<Vec<tolerance::TableChange>, InputError> {
        let writes = self.tolerance_writes()?;
        let writes: Vec<(Nanos, i64)> = writes.iter().map(|w| (w.at, w.value)).collect();
        // Every value passed the sysfs store's parsing; the driver refuses nothing else.
        tolerance::table_changes(ctrl, params, &writes)
            .map_err(|(_, message)| self.at("qos.request", message))
    }

    /// Runs the variant's workloads against `device` on the engine, watched, on the variant's
    /// CPUs when it has them (`idle_signals`: the device hears their idle entries and exits);
    /// returns the IO section, when the run ended (the duration, or when the replay drained),
    /// the CPU section and the events the engine handled.
    fn run_device<D: BlockDevice, D2: BlockDevice>(
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
    fn io_section(
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

    /// The device's FTL from the preset's `[ftl]`, with HPB when `[policy.hpb]` turns it on
    /// (HPB needs the FTL: an HPB READ skips the device's map lookup, which only the FTL
    /// models).
    fn ftl_setup(&self, preset: &ufs_preset::UfsPreset) -> Result<Option<FtlSetup>, InputError> {
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
    fn ufs_rig(&self, p: &UfsPlatformSpec) -> Result<UfsRig, InputError> {
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

/// An NVMe drive built for a variant, and what its report section says beside its stats.
struct NvmeRig {
    device: NvmeDevice,
    drive: DriveSpec,
    latency_scale: f64,
    transition_power_share: f64,
    apst: ApstSection,
}

impl NvmeRig {
    /// The drive's section of a run that ended at `end`.
    fn finish(mut self, end: Nanos) -> NvmeSection {
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

/// A UFS device and host built for a variant, and what its report section says beside its
/// stats.
struct UfsRig {
    device: UfsDevice,
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
    deferrable: bool,
}

impl UfsRig {
    /// The device's section of a run that ended at `end`.
    fn finish(mut self, end: Nanos) -> UfsSection {
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

/// The estimated events of a CPU variant's tasks over `span` ([`estimate::cpu_events`]),
/// counted as IOs are against `--max-ios`.
fn cpu_events(s: &Scenario, span: Nanos, completion_gap: Nanos) -> u64 {
    let Ok(tasks) = crate::cpu::task::resolve(&s.workload.tasks) else {
        return 0;
    };
    let hz = s.platform.cpu.as_ref().map_or(250, |c| c.hz);
    estimate::cpu_events(&tasks, hz, span, completion_gap)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Report, InputError> {
        run_in(text, Path::new("/nonexistent-dir"))
    }

    /// Runs `text` from `base`, unwatched, with the default limits and no overrides.
    fn run_at(text: &str, base: &Path) -> Result<Report, RunError> {
        run_text(text, "s.toml", base, &[], &Limits::default(), &mut ())
    }

    /// [`run_at`], bad input as its `InputError`.
    fn run_in(text: &str, base: &Path) -> Result<Report, InputError> {
        run_at(text, base).map_err(|e| match e {
            RunError::Input(e) => e,
            RunError::Interrupted => panic!("an unwatched run was interrupted"),
        })
    }

    const SN530: &str = "[platform.nvme]\npreset = \"wdc-pc-sn530-256gb\"\n";

    #[test]
    fn unknown_preset_is_reported_at_its_scenario_line() {
        let e = run("[platform.nvme]\npreset = \"no-such-drive\"\n[workload]\napst_workflow = 1\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
        assert!(e
            .message
            .contains("no built-in preset has the id \"no-such-drive\""));
    }

    #[test]
    fn missing_files_are_reported_at_the_key_that_names_them() {
        let e =
            run("[platform.nvme]\nfile = \"x.json\"\n[workload]\napst_workflow = 1\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
        assert_eq!(e.message, "`platform.nvme.file`: \"x.json\": no such file");
        let e = run(&format!("{SN530}[workload.replay]\nfile = \"t.log\"\n")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(4)));
    }

    #[test]
    fn a_missing_file_in_a_variant_is_reported_at_the_variants_line() {
        let e = run(&format!(
            "{SN530}[workload]\napst_workflow = 1\n[[variant]]\nname = \"a\"\n\
             [[variant]]\nname = \"b\"\n[variant.platform.nvme]\npreset = \"nope\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(10));
    }

    #[test]
    fn latency_scale_changes_the_drive_not_the_table() {
        // SN530, workflow 7, v5.14: the table still sends PS0 to PS3 after 100 ms (declared
        // latencies), but the drive enters PS3 in 2 x 3.9 ms, so it settles there after
        // 100 + 7.8 = 107.8 ms of idle, and wakes in 2 x 11 ms: every read after the first
        // waits 22 ms + 75 us of service = 22 075 us.
        let r = run(&format!(
            "{SN530}latency_scale = 2.0\n[workload]\napst_workflow = 7\n[run]\nduration = \"2s\"\n"
        ))
        .unwrap();
        let v = &r.variants[0];
        assert_eq!(v.io.all.max_us, 22_075.0);
        assert_eq!(v.io.all.p50_us, 22_075.0);
        let nvme = v.nvme.as_ref().unwrap();
        assert_eq!(nvme.apst.idle_schedule[0].reached_after_ms, 107.8);
        let e = run(&format!(
            "{SN530}latency_scale = 0.0\n[workload]\napst_workflow = 7\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn every_variant_sees_the_same_io() {
        // Workflow 2 never idles 100 ms, so no table changes the IO: identical counts.
        let r = run(&format!(
            "{SN530}[workload]\napst_workflow = 2\n[run]\nduration = \"1s\"\n\
             [[variant]]\nname = \"a\"\n[variant.policy.apst]\nalgorithm = \"legacy\"\n\
             [[variant]]\nname = \"b\"\n"
        ))
        .unwrap();
        assert_eq!(r.variants.len(), 2);
        assert_eq!(r.variants[0].io.ios, r.variants[1].io.ios);
        // 1000 writes of 15 us then 50 ms idle: cycles of 65 ms; in 1 s, 15 full cycles end at
        // 975 ms and the 16th burst (975 - 990 ms) completes too: 16 000 writes.
        assert_eq!(r.variants[0].io.ios, 16_000);
    }

    #[test]
    fn an_idle_power_override_sets_the_drives_idle_power() {
        // Workflow 7 under legacy never leaves PS0 (745 ms ITPT > 150 ms gaps): 200 reads of
        // 75 us in 30 s at ACTP 1800 mW, the rest idle in PS0 at the override, 500 mW:
        // (0.015 s x 1800 + 29.985 s x 500) / 30 s = 500.65 mW.
        let r = run(&format!(
            "{SN530}idle_power_mw = {{ PS0 = 500.0 }}\n[policy.apst]\nalgorithm = \"legacy\"\n\
             [workload]\napst_workflow = 7\n[run]\nduration = \"30s\"\n"
        ))
        .unwrap();
        let nvme = r.variants[0].nvme.as_ref().unwrap();
        assert!(
            (nvme.stats.avg_power_mw - 500.65).abs() < 1e-9,
            "{}",
            nvme.stats.avg_power_mw
        );
        let e = run(&format!(
            "{SN530}idle_power_mw = {{ PS7 = 5.0 }}\n[workload]\napst_workflow = 7\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(
            e.message.contains("no PS7 (it reports PS0-PS4)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn without_a_duration_a_replay_runs_to_its_end() {
        // Two reads of a v3 log, 2 s apart (timestamps in us). Legacy table on the SN530: PS0
        // -> PS3 after 745 ms (settled at 748.9 ms), PS3 -> PS4 only after 2200 ms more, so
        // the second read wakes the drive from PS3 (11 ms) and completes 75 us later: the run
        // ends at 2 s + 11 ms + 75 us.
        let dir = std::env::temp_dir().join(format!("torpor-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("t.iolog"),
            "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n\
             0 /dev/x read 0 4096\n2000000 /dev/x read 4096 4096\n2000001 /dev/x close\n",
        )
        .unwrap();
        let text = format!(
            "{SN530}[policy.apst]\nalgorithm = \"legacy\"\n[workload.replay]\nfile = \"t.iolog\"\n"
        );
        let r = run_in(&text, &dir).unwrap();
        assert_eq!(r.variants[0].duration_s, 2.011075);
        assert_eq!(r.variants[0].io.ios, 2);
        // A time-based job beside it would never end: the duration is then required.
        let e = run_in(
            &(text.clone() + "[[workload.job]]\nname = \"j\"\nrw = \"read\"\ntime_based = true\n"),
            &dir,
        )
        .unwrap_err();
        assert!(
            e.message.contains("[run] duration: needed"),
            "{}",
            e.message
        );
        // Cut at 1 s: the second read (line 5, read ahead) and the close (line 6) are not
        // reached; the first read completed.
        let cut = text.clone() + "[run]\nduration = \"1s\"\n";
        let r = run_in(&cut, &dir).unwrap();
        let w = &r.variants[0].io.workloads[0];
        assert_eq!((w.ios, w.lines_not_reached), (1, Some(2)));
        // Run to its end, nothing is left out.
        let r = run_in(&text, &dir).unwrap();
        assert_eq!(r.variants[0].io.workloads[0].lines_not_reached, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_scenario_asking_for_too_much_work_is_refused_at_its_duration() {
        // Workflow 1 (QD2 writes) on the SN530: 2 slots of 15 us 4 KiB writes give at most
        // 2 x (T / 15 us + 1) IOs. Ten years: 2 x 315 576 000 s / 15 us = 4.2e13 IOs.
        let text =
            format!("{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"315576000s\"\n");
        let e = match run_at(&text, Path::new(".")) {
            Err(RunError::Input(e)) => e,
            other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
        };
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("up to 4.2e13 IOs"), "{e}");
        assert!(e.message.contains("limit of 5.0e9"), "{e}");
        // One second is 2 x (1 s / 15 us + 1) = 133 334 IOs: refused under a limit of
        // 133 333, run under 133 334.
        let text = format!("{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"1s\"\n");
        let tight = |max_ios| {
            run_text(
                &text,
                "s.toml",
                Path::new("."),
                &[],
                &Limits { max_ios },
                &mut (),
            )
        };
        assert!(matches!(tight(133_333), Err(RunError::Input(_))));
        let r = tight(133_334).unwrap();
        assert!(r.variants[0].io.ios <= 133_334);
    }

    #[test]
    fn overrides_set_fields_by_dotted_path_as_a_sweep_does() {
        // Workflow 7 under v5.14 reaches PS3 in every 150 ms gap (slowest read 11 075 us); a
        // primary timeout of 200 ms keeps the drive in PS0 (every read 75 us).
        let text = format!("{SN530}[workload]\napst_workflow = 7\n[run]\nduration = \"2s\"\n");
        let run = |overrides: &[Override]| {
            run_text(
                &text,
                "s.toml",
                Path::new("."),
                overrides,
                &Limits::default(),
                &mut (),
            )
        };
        assert_eq!(run(&[]).unwrap().variants[0].io.all.max_us, 11_075.0);
        let longer = [(
            "policy.apst.primary_timeout_ms".to_string(),
            toml::Value::Integer(200),
        )];
        assert_eq!(run(&longer).unwrap().variants[0].io.all.max_us, 75.0);
        let wrong = [("policy.apst.nope".to_string(), toml::Value::Integer(1))];
        match run(&wrong) {
            Err(RunError::Input(e)) => assert!(e.message.contains("nope"), "{e}"),
            other => panic!("expected an error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn a_timeline_records_the_drives_states_and_requests_in_its_window() {
        // SN530 (PS0 idle 700 mW by its preset, ACTP 1800 mW, MP 3500 mW), workflow 7, v5.14:
        // transitions draw 700 + 0.5 x (3500 - 700) = 2100 mW. Read at 0 (75 us); idle from
        // 0.075 ms; PS3 entry at 100.075 ms (3.9 ms), settled 103.975 ms; the next read comes
        // 150 ms after the first completed, 150.075 ms, wakes PS3 (11 ms) to 161.075 ms, is
        // served to 161.15 ms; the same again from 261.15 ms: read at 311.15 ms, served from
        // 322.15 to 322.225 ms. The window ends at 400 ms.
        let text = format!(
            "{SN530}[workload]\napst_workflow = 7\n[run]\nduration = \"1s\"\ntimeline = \"400ms\"\n"
        );
        let r = run_at(&text, Path::new(".")).unwrap();
        let t = r.variants[0]
            .nvme
            .as_ref()
            .unwrap()
            .timeline
            .as_ref()
            .unwrap();
        assert_eq!(t.states.last().map(String::as_str), Some("transition"));
        let ms: Vec<f64> = t
            .timeline
            .t_s
            .iter()
            .map(|s| (s * 1e6).round() / 1e3)
            .collect();
        assert_eq!(
            ms,
            vec![
                0.0, 0.0, 0.075, 100.075, 103.975, 150.075, 161.075, 161.15, 261.15, 265.05,
                311.15, 322.15, 322.225
            ]
        );
        assert_eq!(
            t.timeline.state,
            vec![0, 0, 0, 5, 3, 5, 0, 0, 5, 3, 5, 0, 0]
        );
        let mw: Vec<f32> = t.timeline.power_mw.clone();
        assert_eq!(
            mw,
            vec![
                700.0, 1800.0, 700.0, 2100.0, 25.0, 2100.0, 1800.0, 700.0, 2100.0, 25.0, 2100.0,
                1800.0, 700.0
            ]
        );
        let requests: Vec<f64> = t
            .timeline
            .request_t_s
            .iter()
            .map(|s| (s * 1e6).round() / 1e3)
            .collect();
        assert_eq!(requests, vec![0.0, 150.075, 311.15]);
        assert_eq!(t.timeline.dropped, 0);
    }

    /// Runs `scenario` beside the job file `jobs` (as `jobs.fio`) in a fresh folder.
    fn run_with_job_file(scenario: &str, jobs: &str) -> Result<Report, InputError> {
        let dir =
            std::env::temp_dir().join(format!("torpor-fio-{}-{}", std::process::id(), jobs.len()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("jobs.fio"), jobs).unwrap();
        let r = run_in(scenario, &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    #[test]
    fn a_job_file_runs_beside_the_scenario_and_reports_as_fio_would() {
        // SN530 under the default table: rate_iops=100 for runtime=2 (seconds, fio's unit)
        // issues reads at 0, 10, ..., 1990 ms: 200 of them, none idle for the 100 ms the table
        // waits, so each takes the 75 us of a 4 KiB read. fio's runtime is the whole 2 s.
        let scenario = format!("{SN530}[workload]\nfio = \"jobs.fio\"\n[run]\nduration = \"3s\"\n");
        let r = run_with_job_file(
            &scenario,
            "[global]\nioengine=libaio\ndirect=1\nruntime=2\n[paced]\nrw=randread\nrate_iops=100\n",
        )
        .unwrap();
        let io = &r.variants[0].io;
        assert_eq!(io.ios, 200);
        let fio = io.workloads[0].fio.as_ref().unwrap();
        assert_eq!(fio.runtime_ms, 2000);
        assert!(fio.write.is_none());
        let read = fio.read.as_ref().unwrap();
        assert_eq!((read.ios, read.bytes), (200, 200 * 4096));
        assert_eq!((read.clat_min_ns, read.clat_max_ns), (75_000, 75_000));
        assert_eq!(
            (read.clat_mean_ns, read.clat_stdev_ns),
            (75_000.0, Some(0.0))
        );
        assert!(
            io.notes
                .iter()
                .any(|n| n.contains("ioengine=libaio accepted")),
            "{:?}",
            io.notes
        );

        // rate_iops=5: reads 200 ms apart; after each the drive idles 100 ms and enters PS3
        // (3.9 ms), so every read but the first wakes it (11 ms) then takes 75 us: one of
        // 75 us, nine of 11 075 us. Mean 99 750 / 10 = 9975 us; squared deviations 9900^2 +
        // 9 x 1100^2 = 108 900 000 us^2, over n - 1 = 9: 12 100 000, stdev 3478.505 us.
        let r = run_with_job_file(
            &scenario,
            "[sleepy]\nrw=randread\nrate_iops=5\nruntime=2s\ndirect=1\n",
        )
        .unwrap();
        let read = r.variants[0].io.workloads[0]
            .fio
            .clone()
            .unwrap()
            .read
            .unwrap();
        assert_eq!(
            (read.ios, read.clat_min_ns, read.clat_max_ns),
            (10, 75_000, 11_075_000)
        );
        assert_eq!(read.clat_mean_ns, 9_975_000.0);
        let stdev = read.clat_stdev_ns.unwrap();
        assert!((stdev - 12_100_000f64.sqrt() * 1e3).abs() < 1e-6, "{stdev}");
    }

    #[test]
    fn job_file_errors_point_into_the_job_file_and_its_absence_at_the_scenario() {
        let scenario = format!("{SN530}[workload]\nfio = \"jobs.fio\"\n");
        let e = run_with_job_file(&scenario, "[a]\nrw=read\nbogus=1\n").unwrap_err();
        assert!(e.file.ends_with("jobs.fio"), "{e}");
        assert_eq!(e.line, Some(3));
        let e = run(&scenario).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(4)));
        assert_eq!(e.message, "`workload.fio`: \"jobs.fio\": no such file");
    }

    /// Counts its ticks and stops the run at the `stop_at`-th.
    struct StopAfter {
        ticks: usize,
        stop_at: usize,
        last: Option<(usize, Nanos)>,
    }

    impl Watch for StopAfter {
        fn tick(&mut self, p: &Progress<'_>) -> bool {
            self.ticks += 1;
            self.last = Some((p.variant, p.now));
            self.ticks < self.stop_at
        }
    }

    #[test]
    fn a_cpu_scenario_runs_its_tasks_under_each_variants_governor() {
        // The one-CPU test platform; cyclictest every 10 ms for 995 ms: 99 wake-ups. The
        // oracle sleeps in SLEEP (280 us exit) each time. ladder climbs from WFI to SLEEP at
        // its fourth select (the zeroed device's first residency counts as long): the wake-ups
        // at 10, 20 and 30 ms cost WFI's 1 us, the other 96 SLEEP's 280 us.
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cpu");
        // A real-time cyclictest (-p): no timer slack.
        let text = "[platform.cpu]\nfile = \"one-cpu.toml\"\n\
                    [[workload.task]]\nname = \"cyclictest\"\ncpu = 0\nperiod = \"10ms\"\nrun = \"5us\"\n\
                    timer_slack = \"0us\"\n\
                    [run]\nduration = \"995ms\"\n\
                    [[variant]]\nname = \"oracle\"\n[variant.policy.cpuidle]\ngovernor = \"oracle\"\n\
                    [[variant]]\nname = \"ladder\"\n[variant.policy.cpuidle]\ngovernor = \"ladder\"\n";
        let r = run_in(text, &base).unwrap();
        let oracle = r.variants[0].cpu.as_ref().unwrap();
        assert_eq!(oracle.governor, "oracle");
        assert_eq!(oracle.tasks[0].wakeups, 99);
        assert_eq!(oracle.tasks[0].latency_max_ns, 280_000);
        assert_eq!(r.variants[0].io.ios, 0);
        let ladder = r.variants[1].cpu.as_ref().unwrap();
        assert_eq!(ladder.tasks[0].latency_min_ns, 1_000);
        assert_eq!(ladder.tasks[0].latency_max_ns, 280_000);
        assert_eq!(
            ladder.tasks[0].latency_sum_ns,
            3 * 1_000 + 96 * 280_000,
            "three 1 us wake-ups in WFI, then SLEEP"
        );
        // A normal task's timer fires at the end of its 50 us slack: each wake-up 50 us later
        // than intended, then SLEEP's exit.
        let normal = run_in(&text.replace("timer_slack = \"0us\"\n", ""), &base).unwrap();
        let oracle = normal.variants[0].cpu.as_ref().unwrap();
        assert_eq!(oracle.tasks[0].latency_max_ns, 330_000);
        assert_eq!(oracle.tasks[0].latency_min_ns, 330_000);
    }

    #[test]
    fn cpu_scenarios_are_checked_at_their_lines() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cpu");
        let task = "[[workload.task]]\nname = \"t\"\ncpu = 0\nperiod = \"10ms\"\nrun = \"5us\"\n";
        let cases = [
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n[policy.cpuidle]\ngovernor = \"teo@9\"\n{task}"),
                "s.toml:4: [policy.cpuidle] unknown governor \"teo@9\"",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\nhz = 5\n{task}"),
                "s.toml:3: [platform.cpu] hz: expected CONFIG_HZ in 24..=10000",
            ),
            (
                // Beyond 32 bits: the same words, the value as written.
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\nhz = 1099511627776\n{task}"),
                "s.toml:3: `platform.cpu.hz`: expected CONFIG_HZ in 24..=10000 (100, 250, 300 and 1000 are the kernel's choices), got 1099511627776",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}", task.replace("cpu = 0", "cpu = 3")),
                "s.toml:5: [[workload.task]] t: `cpu`:",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}", task.replace("run = ", "run_mean = \"1us\"\nrun = ")),
                "s.toml:8: [[workload.task]] t: `run`: expected one of `run` (fixed)",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{}wakes = \"nobody\"\n", task),
                "s.toml:8: [[workload.task]] t: `wakes`: no task is named \"nobody\"",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n[workload]\napst_workflow = 1\n{task}"),
                "IO (`apst_workflow`, `[[workload.job]]`, `fio`, `[workload.replay]`) \
                 needs a device",
            ),
            (
                format!("{SN530}[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"fixed\"\ncpus = [0]\n{task}"),
                "[platform.irq] mode: this scenario has two devices: say whose interrupts go \
                 where, in `[platform.irq.nvme]` and `[platform.irq.ufs]`",
            ),
            (
                format!("{SN530}[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"fixed\"\ncpus = [5]\n{task}"),
                "s.toml:7: [platform.irq]: the interrupt is mapped to CPU 5, which the platform \
                 does not have (it has [0])",
            ),
            (
                format!("[platform.cpu]\nfile = \"one-cpu.toml\"\n{task}[workload.task.io]\ndevice = \"nvme\"\nrw = \"read\"\n"),
                "s.toml:9: [[workload.task]] t: `io.device`: this scenario has no device \"nvme\": \
                 it has no device",
            ),
            (
                format!("{SN530}[platform.cpu]\nfile = \"one-cpu.toml\"\n[platform.irq]\nmode = \"sideways\"\n{task}"),
                "s.toml:6: [platform.irq] mode: expected \"managed\", \"fixed\" or \"round-robin\"",
            ),
            (
                format!("[platform.cpu]\npreset = \"qcom-msm8961\"\n{task}"),
                "s.toml:2: [platform.cpu] preset: no built-in CPU platform \"qcom-msm8961\"",
            ),
        ];
        for (text, want) in cases {
            let got = run_in(&text, &base).unwrap_err().to_string();
            assert!(got.contains(want), "{text}\n got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn ufshcd_holds_the_cpus_latency_while_its_clocks_are_up_when_asked() {
        // A bursty reader on the gs101 beside the UFS 4.0 class under ufshcd's defaults (no
        // suspension at the max level): each burst scales the host up, each idle stretch down.
        // With pm_qos_enable, every hold and release the device counts reaches the CPUs'
        // global list (one vote each); without it, none.
        let text = "[platform.cpu]\npreset = \"google-gs101\"\n\
                    [platform.ufs]\npreset = \"samsung-ufs40-class\"\n\
                    [policy.devfreq]\nprofile = \"ufshcd\"\n\
                    [[workload.job]]\nname = \"bursts\"\nrw = \"read\"\nbs = \"512k\"\n\
                    iodepth = 4\nthinktime = \"1s\"\nthinktime_blocks = 1024\ntime_based = true\n\
                    [run]\nduration = \"4s\"\n\
                    [[variant]]\nname = \"on\"\n\
                    [[variant]]\nname = \"off\"\n[variant.policy.devfreq]\npm_qos_enable = false\n";
        let r = run(text).unwrap();
        let votes = |v: &VariantReport| v.cpu.as_ref().unwrap().host_latency_votes;
        let counted = |v: &VariantReport| {
            let c = &v.ufs.as_ref().unwrap().stats.counters;
            c.cpu_latency_holds + c.cpu_latency_releases
        };
        let (on, off) = (&r.variants[0], &r.variants[1]);
        assert!(counted(on) >= 2, "the bursts scale the host up and down");
        assert_eq!(votes(on), counted(on));
        assert_eq!((votes(off), counted(off)), (0, 0));
    }

    #[test]
    fn a_watcher_sees_progress_and_can_stop_the_run() {
        // Workflow 1 for 10 s issues ~1.3 M IOs: hundreds of watch ticks (one per 4096 events).
        let text = format!(
            "{SN530}[workload]\napst_workflow = 1\n[run]\nduration = \"10s\"\n\
             [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n"
        );
        let mut w = StopAfter {
            ticks: 0,
            stop_at: usize::MAX,
            last: None,
        };
        run_text(
            &text,
            "s.toml",
            Path::new("."),
            &[],
            &Limits::default(),
            &mut w,
        )
        .unwrap();
        assert!(w.ticks > 200, "{}", w.ticks);
        let (variant, now) = w.last.unwrap();
        assert_eq!(variant, 1);
        assert!(now <= Nanos::from_secs(10));
        // Stopped at the third tick: the first variant's start, then two in its run.
        let mut w = StopAfter {
            ticks: 0,
            stop_at: 3,
            last: None,
        };
        let r = run_text(
            &text,
            "s.toml",
            Path::new("."),
            &[],
            &Limits::default(),
            &mut w,
        );
        assert!(matches!(r, Err(RunError::Interrupted)));
        assert_eq!(w.ticks, 3);
        assert_eq!(w.last.unwrap().0, 0);
    }
}
