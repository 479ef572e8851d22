//! Runs a scenario: builds the platform, the policy of each variant and the workload, runs the
//! engine, and gathers one [`Report`]. Every variant sees identical input (same workload, same
//! seed), so differences between variants are the policy's doing.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Serialize;

use crate::error::InputError;
use crate::metrics::LatencySummary;
use crate::scenario::Scenario;
use crate::storage::nvme::apst::{self, ApstConfig, ApstParams};
use crate::storage::nvme::device::{NvmeDevice, NvmeStats};
use crate::storage::nvme::idle_schedule::{idle_schedule, Reached};
use crate::storage::nvme::service::ServiceModel;
use crate::storage::nvme::source::{self, DriveSpec};
use crate::workload::{self, IologReplay, ReplayOptions, Workload};

/// Everything measured in one scenario run.
#[derive(Debug, Serialize)]
pub struct Report {
    pub scenario: String,
    pub device: String,
    pub duration_s: f64,
    pub seed: u64,
    pub notes: Vec<String>,
    pub variants: Vec<VariantReport>,
}

/// One policy's results.
#[derive(Debug, Serialize)]
pub struct VariantReport {
    pub name: String,
    pub apst: ApstParams,
    /// Why no table was sent, when the kernel would send none.
    pub apst_not_sent: Option<String>,
    pub apst_table: Option<serde_json::Value>,
    pub idle_schedule: Vec<Reached>,
    pub io: IoSummary,
    pub nvme: NvmeStats,
}

/// fio-style IO results.
#[derive(Debug, Serialize)]
pub struct IoSummary {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub all: LatencySummary,
    pub read: LatencySummary,
    pub write: LatencySummary,
}

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
    let scenario = Scenario::parse(label, text)?;
    let mut drive = load_drive(&scenario, base)?;
    if scenario.platform.nvme_file.is_some() {
        let d = ServiceModel::CLIENT_DEFAULT;
        drive.notes.push(format!(
            "service times are torpor's client-drive defaults ({} us 4 KiB read, {} us 4 KiB \
             write): a device dump carries none",
            d.read_4k_us, d.write_4k_us
        ));
    }
    let mut variants = Vec::new();
    for (name, params) in scenario.variant_params() {
        variants.push(run_variant(&scenario, base, &drive, name, params)?);
    }
    Ok(Report {
        scenario: label.to_string(),
        device: drive.label.clone(),
        duration_s: scenario.run.duration.as_secs_f64(),
        seed: scenario.run.seed,
        notes: drive.notes.clone(),
        variants,
    })
}

fn load_drive(scenario: &Scenario, base: &Path) -> Result<DriveSpec, InputError> {
    let p = &scenario.platform;
    match (&p.nvme, &p.nvme_file) {
        (Some(id), _) => match crate::storage::nvme::preset::find(id) {
            Some(found) => source::load(&found?.id, None),
            None => Err(InputError::whole(
                id,
                "[platform] nvme: no built-in preset has this id (see `torpor devices`)",
            )),
        },
        (None, Some(file)) => source::load(file, Some(base)),
        (None, None) => unreachable!("validated by Scenario::parse"),
    }
}

fn workloads(scenario: &Scenario, base: &Path) -> Result<Vec<Workload>, InputError> {
    let w = &scenario.workload;
    let mut out = Vec::new();
    if let Some(n) = w.apst_workflow {
        out.push(Workload::Job(
            workload::apst_workflow(n).expect("validated 1..=7"),
        ));
    }
    out.extend(w.jobs.iter().cloned().map(Workload::Job));
    if let Some(log) = &w.iolog {
        out.push(replay_file(&base.join(log), log, w.replay)?);
    }
    Ok(out)
}

/// Opens an iolog for streaming replay; `label` is the name the user wrote.
fn replay_file(path: &Path, label: &str, options: ReplayOptions) -> Result<Workload, InputError> {
    let file = File::open(path)
        .map_err(|e| InputError::whole(label, format!("cannot open the iolog: {e}")))?;
    let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 16, file));
    Ok(Workload::Replay(IologReplay::new(reader, label, options)?))
}

fn run_variant(
    scenario: &Scenario,
    base: &Path,
    drive: &DriveSpec,
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
    let mut device = NvmeDevice::new(&drive.controller, active, drive.service.clone());
    let mut loads = workloads(scenario, base)?;
    let io = workload::run_io(
        &mut device,
        &mut loads,
        scenario.run.duration,
        scenario.run.seed,
    )?;
    let nvme = device.finish(scenario.run.duration);
    let secs = scenario.run.duration.as_secs_f64();
    let mut all = io.read.clone();
    all.merge(&io.write);
    Ok(VariantReport {
        name,
        apst: params,
        apst_not_sent: not_sent,
        apst_table: table.map(|t| t.to_json_value()),
        idle_schedule: active
            .map(|t| idle_schedule(t, &drive.controller))
            .unwrap_or_default(),
        io: IoSummary {
            ios: io.ios,
            bytes: io.bytes,
            iops: io.ios as f64 / secs,
            all: all.summary(),
            read: io.read.summary(),
            write: io.write.summary(),
        },
        nvme,
    })
}
