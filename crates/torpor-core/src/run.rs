//! Runs a scenario: builds the platform, the policy of each variant and the workload, runs the
//! engine, and gathers one [`Report`]. Every variant sees identical input (same workload, same
//! seed), so differences between variants are the policy's doing.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{self, InputError};
use crate::report::{ApstSection, IoSection, NvmeSection, Report, VariantReport};
use crate::scenario::Scenario;
use crate::storage::nvme::apst::{self, ApstConfig, ApstParams};
use crate::storage::nvme::device::NvmeDevice;
use crate::storage::nvme::psd::NvmeController;
use crate::storage::nvme::service::ServiceModel;
use crate::storage::nvme::source::{self, DriveSpec};
use crate::workload::{self, IologReplay, Workload};
use crate::world;

/// Runs the scenario file at `path`; relative paths inside it resolve against its directory.
pub fn run_file(path: &Path) -> Result<Report, InputError> {
    let label = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::whole(&label, format!("cannot read the scenario: {e}")))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    run_text(&text, &label, &base)
}

/// Runs scenario `text`; `label` names it in errors, `base` resolves its relative paths.
pub fn run_text(text: &str, label: &str, base: &Path) -> Result<Report, InputError> {
    let input = Input { label, text, base };
    let scenario = Scenario::parse(label, text)?;
    let drive = input.drive(&scenario)?;
    let mut variants = Vec::new();
    for (name, params) in scenario.variant_params() {
        let loads = input.workloads(&scenario)?;
        variants.push(run_variant(&scenario, &drive, loads, name, params)?);
    }
    Ok(Report {
        scenario: label.to_string(),
        seed: scenario.run.seed,
        variants,
    })
}

/// The scenario text being run: problems with what it names are reported at its lines.
struct Input<'a> {
    label: &'a str,
    text: &'a str,
    base: &'a Path,
}

impl Input<'_> {
    fn at(&self, key: &str, message: String) -> InputError {
        InputError::new(self.label, error::line_of_toml_key(self.text, key), message)
    }

    /// Reads a file the scenario names under `key`, relative to the scenario.
    fn open(&self, key: &str, name: &str) -> Result<File, InputError> {
        File::open(self.base.join(name))
            .map_err(|e| self.at(key, format!("`{key}`: cannot open {name:?}: {e}")))
    }

    fn drive(&self, scenario: &Scenario) -> Result<DriveSpec, InputError> {
        let p = &scenario.platform;
        if let Some(id) = &p.nvme {
            return source::from_preset(id).unwrap_or_else(|| {
                Err(self.at(
                    "nvme",
                    format!("`nvme`: no built-in preset has the id {id:?} (see `torpor devices`)"),
                ))
            });
        }
        let name = p
            .nvme_file
            .as_deref()
            .expect("validated by Scenario::parse");
        let mut text = String::new();
        self.open("nvme_file", name)?
            .read_to_string(&mut text)
            .map_err(|e| {
                self.at(
                    "nvme_file",
                    format!("`nvme_file`: cannot read {name:?}: {e}"),
                )
            })?;
        let mut drive = source::from_dump(name, &text)?;
        let d = ServiceModel::CLIENT_DEFAULT;
        drive.notes.push(format!(
            "service times are torpor's client-drive defaults ({} us 4 KiB read, {} us 4 KiB \
             write): a device dump carries none",
            d.read_4k_us, d.write_4k_us
        ));
        Ok(drive)
    }

    /// The scenario's workloads, fresh for each variant (an iolog is re-read from its start).
    fn workloads(&self, scenario: &Scenario) -> Result<Vec<Workload>, InputError> {
        let w = &scenario.workload;
        let mut out = Vec::new();
        if let Some(n) = w.apst_workflow {
            out.push(Workload::Job(
                workload::apst_workflow(n).expect("validated 1..=7"),
            ));
        }
        out.extend(w.jobs.iter().cloned().map(Workload::Job));
        if let Some(log) = &w.iolog {
            let file = self.open("iolog", log)?;
            let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 16, file));
            out.push(Workload::Replay(IologReplay::new(reader, log, w.replay)?));
        }
        Ok(out)
    }
}

fn run_variant(
    scenario: &Scenario,
    drive: &DriveSpec,
    mut loads: Vec<Workload>,
    name: String,
    params: ApstParams,
) -> Result<VariantReport, InputError> {
    let config = apst::build(&drive.controller, &params);
    let (table, not_sent) = match &config {
        ApstConfig::Sent(t) => (Some(t), None),
        ApstConfig::NotSent { reason } => (None, Some(reason.clone())),
    };
    // APSTE = 0 programs an all-zero table: the drive never transitions on its own.
    let active = table.filter(|t| t.apste);
    let real = scaled_latencies(&drive.controller, scenario.platform.latency_scale);
    let mut device = NvmeDevice::new(&real, active, drive.service.clone());
    let io = world::run_io(
        &mut device,
        &mut loads,
        scenario.run.duration,
        scenario.run.seed,
    )?;
    let idle_schedule = device.idle_schedule();
    let stats = device.finish(scenario.run.duration);
    let duration = scenario.run.duration;
    Ok(VariantReport {
        name,
        duration_s: duration.as_secs_f64(),
        io: IoSection::new(&io, duration),
        nvme: Some(NvmeSection {
            device: drive.label.clone(),
            notes: drive.notes.clone(),
            latency_scale: scenario.platform.latency_scale,
            apst: ApstSection {
                params,
                sent: table.is_some(),
                not_sent_reason: not_sent,
                table: table.map(|t| t.to_json_value()),
                idle_schedule,
            },
            stats,
        }),
    })
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

    #[test]
    fn unknown_preset_is_reported_at_its_scenario_line() {
        let e = run("[platform]\nnvme = \"no-such-drive\"\n[workload]\napst_workflow = 1\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
        assert!(e
            .message
            .contains("no built-in preset has the id \"no-such-drive\""));
    }

    #[test]
    fn missing_files_are_reported_at_the_key_that_names_them() {
        let e =
            run("[platform]\nnvme_file = \"x.json\"\n[workload]\napst_workflow = 1\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
        assert!(e.message.starts_with("`nvme_file`: cannot open \"x.json\""));
        let e = run("[platform]\nnvme = \"wdc-pc-sn530-256gb\"\n[workload]\niolog = \"t.log\"\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(4)));
    }

    #[test]
    fn latency_scale_changes_the_drive_not_the_table() {
        // SN530, workflow 7, v5.14: the table still sends PS0 to PS3 after 100 ms (declared
        // latencies), but the drive enters PS3 in 2 x 3.9 ms, so it settles there after
        // 100 + 7.8 = 107.8 ms of idle, and wakes in 2 x 11 ms: every read after the first
        // waits 22 ms + 75 us of service = 22 075 us.
        let r = run(
            "[platform]\nnvme = \"wdc-pc-sn530-256gb\"\nlatency_scale = 2.0\n\
                     [workload]\napst_workflow = 7\n[run]\nduration = \"2s\"\nseed = 1\n",
        )
        .unwrap();
        let v = &r.variants[0];
        assert_eq!(v.io.all.max_us, 22_075.0);
        assert_eq!(v.io.all.p50_us, 22_075.0);
        assert_eq!(
            v.nvme.as_ref().unwrap().apst.idle_schedule[0].reached_after_ms,
            107.8
        );
        let e = run(
            "[platform]\nnvme = \"wdc-pc-sn530-256gb\"\nlatency_scale = 0.0\n\
                     [workload]\napst_workflow = 7\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn every_variant_sees_the_same_io() {
        // Workflow 2 never idles 100 ms, so no table changes the IO: identical counts.
        let r = run(
            "[platform]\nnvme = \"wdc-pc-sn530-256gb\"\n[workload]\napst_workflow = 2\n\
                     [run]\nduration = \"1s\"\nseed = 1\n[[variant]]\nname = \"a\"\n\
                     apst = { algorithm = \"legacy\" }\n[[variant]]\nname = \"b\"\n",
        )
        .unwrap();
        assert_eq!(r.variants.len(), 2);
        assert_eq!(r.variants[0].io.ios, r.variants[1].io.ios);
        // 1000 writes of 15 us then 50 ms idle: cycles of 65 ms; in 1 s, 15 full cycles end at
        // 975 ms and the 16th burst (975 - 990 ms) completes too: 16 000 writes.
        assert_eq!(r.variants[0].io.ios, 16_000);
    }
}
