//! One variant of a scenario being run ([`VariantRun`]): where its problems are reported, the
//! files it names (opened relative to the scenario), its job file and workloads, and how long
//! it runs.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{shown, InputError};
use crate::scenario::{Scenario, ScenarioFile, DEFAULT_DURATION};
use crate::time::Nanos;
use crate::user_file::{self, Decoding, MAX_SCENARIO_BYTES};
use crate::workload::fio_file::{self, JobFile};
use crate::workload::{self, FioJob, TraceReplay, Workload};

/// The file a variant's trace goes to in the `--ftrace` folder.
pub(super) fn trace_file_name(variant: &str) -> String {
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

/// Each variant of `file` as a [`VariantRun`], its job file read.
pub(super) fn variant_runs<'a>(
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

/// One variant of the scenario being run: problems with what it names are reported at the
/// line that named it.
pub(super) struct VariantRun<'a> {
    pub(super) file: &'a ScenarioFile,
    pub(super) variant: usize,
    pub(super) base: &'a Path,
    /// Where this variant's idle trace goes (`--ftrace`).
    pub(super) ftrace: Option<PathBuf>,
    /// The jobs of `[workload] fio`, read once before anything runs.
    pub(super) fio: Option<JobFile>,
}

impl VariantRun<'_> {
    pub(super) fn at(&self, path: &str, message: String) -> InputError {
        self.file.error_at(self.variant, path, message)
    }

    pub(super) fn scenario(&self) -> &Scenario {
        &self.file.variants()[self.variant].scenario
    }

    /// Where a problem with the run's length is reported: its `[run] duration`, else its
    /// workload.
    pub(super) fn duration_key(&self) -> &'static str {
        if self.scenario().run.duration.is_some() {
            "run.duration"
        } else {
            "workload"
        }
    }

    /// Where the file the scenario names `name` is, and how errors inside it call it: the
    /// path from where torpor runs, so that the user can open it.
    pub(super) fn locate(&self, name: &str) -> (PathBuf, String) {
        let path = self.base.join(name);
        let label = path.display().to_string();
        (path, label)
    }

    /// Opens a file the scenario names at `path`, relative to the scenario; a problem with
    /// the file itself is reported at the scenario line that names it.
    pub(super) fn open(
        &self,
        path: &str,
        name: &str,
        what: &str,
    ) -> Result<(File, String), InputError> {
        let (full, label) = self.locate(name);
        let file = user_file::open(&full, &label, what).map_err(|e| self.named(path, name, e))?;
        Ok((file, label))
    }

    /// `e`, a problem of the file `name` as a whole, reported at the scenario line `path`.
    pub(super) fn named(&self, path: &str, name: &str, e: InputError) -> InputError {
        if e.line.is_some() {
            return e;
        }
        self.at(
            path,
            format!("`{path}`: {}: {}", crate::error::shown(name), e.message),
        )
    }

    /// Reads `[workload] fio`, the job file: a problem with the file as a whole is reported at
    /// the scenario's line, one inside it at its own line. `[workload.iozone]`'s threads join
    /// its jobs (checked by the scenario's parse).
    pub(super) fn job_file(&self) -> Result<Option<JobFile>, InputError> {
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
    pub(super) fn file_jobs(&self) -> &[FioJob] {
        self.fio.as_ref().map_or(&[], |f| &f.jobs)
    }

    /// The variant's workloads, fresh (a replayed trace is read from its start).
    pub(super) fn workloads(&self, s: &Scenario) -> Result<Vec<Workload>, InputError> {
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

    /// The IO is iozone's alone (no job, job file, replay or workflow beside it).
    pub(super) fn only_iozone(&self, s: &Scenario) -> bool {
        let w = &s.workload;
        w.iozone.is_some()
            && w.jobs.is_empty()
            && w.fio.is_none()
            && w.replay.is_none()
            && w.apst_workflow.is_none()
    }

    /// How long to run: `[run] duration`, else until iozone's threads or the replay end, else
    /// the default.
    pub(super) fn until(&self, s: &Scenario) -> Result<Option<Nanos>, InputError> {
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
}
