//! Runs a scenario: for each variant, builds its world (the drive with the policy's table,
//! the workloads), runs it, and fills one section of the [`Report`] per component. Every
//! variant sees identical input unless it changes the input itself (same workload, same seed),
//! so differences between variants are the settings' doing.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::InputError;
use crate::input::nvme_source::{self as source, DriveSpec};
use crate::report::{ApstSection, IoSection, NvmeSection, Report, VariantReport};
use crate::scenario::{power_state_index, NvmePlatform, Scenario, ScenarioFile, DEFAULT_DURATION};
use crate::storage::nvme::apst::{self, ApstConfig};
use crate::storage::nvme::device::NvmeDevice;
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::service::ServiceModel;
use crate::time::Nanos;
use crate::user_file::{self, MAX_SCENARIO_BYTES};
use crate::view;
use crate::workload::{self, IologReplay, Workload};
use crate::world;

/// Runs the scenario file at `path`; relative paths inside it resolve against its directory.
pub fn run_file(path: &Path) -> Result<Report, InputError> {
    let label = path.display().to_string();
    let file = user_file::read_text(path, &label, "a scenario file", MAX_SCENARIO_BYTES)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    run_text(&file.text, &label, &base)
}

/// Runs scenario `text`; `label` names it in errors, `base` resolves its relative paths.
pub fn run_text(text: &str, label: &str, base: &Path) -> Result<Report, InputError> {
    let file = ScenarioFile::parse(label, text)?;
    run_parsed(&file, base)
}

/// Runs every variant of a parsed scenario (e.g. one point of a sweep).
pub fn run_parsed(file: &ScenarioFile, base: &Path) -> Result<Report, InputError> {
    let mut variants = Vec::with_capacity(file.variants().len());
    for (i, v) in file.variants().iter().enumerate() {
        let input = Input {
            file,
            variant: i,
            base,
        };
        variants.push(input.run(&v.name, &v.scenario)?);
    }
    Ok(Report {
        scenario: file.label().to_string(),
        variants,
    })
}

/// One variant of the scenario being run: problems with what it names are reported at the
/// line that named it.
struct Input<'a> {
    file: &'a ScenarioFile,
    variant: usize,
    base: &'a Path,
}

impl Input<'_> {
    fn at(&self, path: &str, message: String) -> InputError {
        self.file.error_at(self.variant, path, message)
    }

    /// Opens a file the scenario names at `path`, relative to the scenario; a problem with
    /// the file itself is reported at the scenario line that names it.
    fn open(&self, path: &str, name: &str, what: &str) -> Result<File, InputError> {
        user_file::open(&self.base.join(name), name, what).map_err(|e| self.named(path, name, e))
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
                        "`preset`: no built-in preset has the id {id:?} (see `torpor devices`)"
                    ),
                ))
            })?,
            (None, Some(name)) => {
                let mut drive = source::read_dump(&self.base.join(name), name)
                    .map_err(|e| self.named("platform.nvme.file", name, e))?;
                let d = ServiceModel::CLIENT_DEFAULT;
                drive.notes.push(format!(
                    "service times are torpor's client-drive defaults ({} us 4 KiB read, {} us \
                     4 KiB write): a device dump carries none",
                    d.read_4k_us, d.write_4k_us
                ));
                drive
            }
            (None, None) => unreachable!("validated by ScenarioFile::parse"),
        };
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

    /// The variant's workloads, fresh (an iolog is read from its start).
    fn workloads(&self, s: &Scenario) -> Result<Vec<Workload>, InputError> {
        let w = &s.workload;
        let mut out = Vec::new();
        if let Some(n) = w.apst_workflow {
            out.push(Workload::Job(
                workload::apst_workflow(n).expect("validated 1..=7"),
            ));
        }
        out.extend(w.jobs.iter().cloned().map(Workload::Job));
        if let Some(r) = &w.replay {
            let file = self.open("workload.replay.file", &r.file, "a fio iolog")?;
            let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 16, file));
            out.push(Workload::Replay(IologReplay::new(
                reader, &r.file, r.options,
            )?));
        }
        Ok(out)
    }

    /// How long to run: `[run] duration`, else until the replay ends, else the default.
    fn until(&self, s: &Scenario) -> Result<Option<Nanos>, InputError> {
        if let Some(d) = s.run.duration {
            return Ok(Some(d));
        }
        if s.workload.replay.is_none() {
            return Ok(Some(DEFAULT_DURATION));
        }
        let endless = s.workload.apst_workflow.is_some()
            || s.workload
                .jobs
                .iter()
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

    fn run(&self, name: &str, s: &Scenario) -> Result<VariantReport, InputError> {
        let drive = self.drive(&s.platform.nvme)?;
        let params = s.policy.apst.clone();
        let config = apst::build(&drive.controller, &params);
        let (table, not_sent) = match &config {
            ApstConfig::Sent(t) => (Some(t), None),
            ApstConfig::NotSent { reason } => (None, Some(reason.clone())),
        };
        let real = scaled_latencies(&drive.controller, s.platform.nvme.latency_scale);
        // A table sent with APSTE = 0 makes the drive never transition on its own.
        let mut device = NvmeDevice::new(&real, table, drive.service.clone());
        let mut loads = self.workloads(s)?;
        let until = self.until(s)?;
        let io = world::run_io(
            &mut device,
            &mut loads,
            until.unwrap_or(Nanos::MAX),
            s.run.seed,
        )?;
        // Without a duration the run lasts until the replay has drained.
        let end = until.unwrap_or(io.end);
        let idle_schedule = device.idle_schedule();
        let stats = device.finish(end);
        Ok(VariantReport {
            name: name.to_string(),
            duration_s: end.as_secs_f64(),
            seed: s.run.seed,
            io: IoSection::new(&io, end),
            nvme: Some(NvmeSection {
                device: drive.label,
                notes: drive.notes,
                latency_scale: s.platform.nvme.latency_scale,
                apst: ApstSection {
                    params,
                    sent: table.is_some(),
                    not_sent_reason: not_sent,
                    table: table.map(view::apst::table_json),
                    idle_schedule,
                },
                stats,
            }),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Report, InputError> {
        run_text(text, "s.toml", Path::new("/nonexistent-dir"))
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
        let r = run_text(&text, "s.toml", &dir).unwrap();
        assert_eq!(r.variants[0].duration_s, 2.011075);
        assert_eq!(r.variants[0].io.ios, 2);
        // A time-based job beside it would never end: the duration is then required.
        let e = run_text(
            &(text + "[[workload.job]]\nname = \"j\"\nrw = \"read\"\ntime_based = true\n"),
            "s.toml",
            &dir,
        )
        .unwrap_err();
        assert!(
            e.message.contains("[run] duration: needed"),
            "{}",
            e.message
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
