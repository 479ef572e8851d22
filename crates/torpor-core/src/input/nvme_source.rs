//! Where a drive description comes from: a built-in preset id, or the user's own
//! `nvme id-ctrl -o json` / `smartctl -a` dump.

use std::path::Path;

use serde::Serialize;

use super::nvme_estimate;
use super::nvme_preset as preset;
use crate::apst::psd::NvmeController;
use crate::error::InputError;
use crate::input;
use crate::storage::nvme::service::ServiceModel;
use crate::user_file::{self, Decoding, MAX_DUMP_BYTES};

/// A drive ready to simulate.
#[derive(Clone, Debug, Serialize)]
pub struct DriveSpec {
    /// Preset id, or the file name the user gave.
    pub label: String,
    /// What the input was read as: `preset`, or the tool whose output a dump was recognised as.
    pub format: &'static str,
    pub controller: NvmeController,
    pub service: ServiceModel,
    /// PS0's idle power when the drive reports none (a preset's sourced figure or estimate).
    pub ps0_idle: Option<preset::Estimate>,
    /// PS0's active power when the drive reports no ACTP, likewise.
    pub ps0_active: Option<preset::Estimate>,
    /// The built-in preset whose figures (PS0 powers, service times) the drive uses: the
    /// preset itself, or the one a dump was matched to (`matching_preset`).
    pub preset: Option<String>,
    /// Assumptions made while reading the input, for the user to see.
    pub notes: Vec<String>,
}

impl DriveSpec {
    /// The assumption a run makes of a dump matched to no preset: it is served by torpor's
    /// client-drive service times, since a dump carries none ([`from_dump`]'s rule 2). `None`
    /// when a preset gives the drive its service times.
    pub fn default_service_note(&self) -> Option<String> {
        let d = ServiceModel::CLIENT_DEFAULT;
        self.preset.is_none().then(|| {
            format!(
                "service times are torpor's client-drive defaults ({} us 4 KiB read, {} us 4 KiB \
                 write): a device dump carries none",
                d.read_4k_us, d.write_4k_us
            )
        })
    }
}

/// Loads `spec`: a preset id when one matches, else a device dump at that path.
pub fn load(spec: &Path) -> Result<DriveSpec, InputError> {
    if let Some(found) = spec.to_str().and_then(from_preset) {
        return found;
    }
    if spec == Path::new("-") {
        let file = user_file::read_stdin("<stdin>", DUMP, MAX_DUMP_BYTES, Decoding::Lenient)?;
        return from_text_file("<stdin>", file);
    }
    let label = spec.display().to_string();
    if !spec.exists() {
        return Err(InputError::whole(
            &label,
            format!(
                "no such file, and no built-in preset has this id; {}",
                preset::suggestion(&label)
            ),
        ));
    }
    read_dump(spec, &label)
}

/// Reads the device dump at `path` (`label` names it in errors), within
/// [`MAX_DUMP_BYTES`], decoding UTF-16, byte-order marks and stray bytes that are not UTF-8
/// (each noted).
pub fn read_dump(path: &Path, label: &str) -> Result<DriveSpec, InputError> {
    let file = user_file::read_text(path, label, DUMP, MAX_DUMP_BYTES, Decoding::Lenient)?;
    from_text_file(label, file)
}

/// What a dump should be, for errors about the file as a whole.
const DUMP: &str = "a device dump (`nvme id-ctrl -o json` or `smartctl -a` output)";

/// A drive from a dump already read, its decoding noted.
fn from_text_file(label: &str, file: user_file::TextFile) -> Result<DriveSpec, InputError> {
    let mut drive = from_dump(label, &file.text)?;
    let decoded = file.notes.iter().map(|n| format!("{label}: {n}"));
    drive.notes.splice(0..0, decoded);
    Ok(drive)
}

/// The built-in preset `id`, if there is one.
pub fn from_preset(id: &str) -> Option<Result<DriveSpec, InputError>> {
    preset::find(id).map(|found| {
        found.map(|p| DriveSpec {
            preset: Some(p.id.clone()),
            label: p.id,
            format: "preset",
            controller: p.controller,
            service: p.service,
            ps0_idle: p.ps0_idle,
            ps0_active: p.ps0_active,
            notes: vec![],
        })
    })
}

/// A drive from the text of the user's `nvme id-ctrl -o json` or `smartctl -a` output
/// (`label` names it in errors). A dump carries no timing and rarely PS0's idle or active
/// power, so:
/// 1. When a built-in preset describes the same drive (`matching_preset`), its PS0 powers
///    and service times are used, and a note names it.
/// 2. Otherwise PS0's idle and active power, where the drive reports none, come from the rule
///    every preset follows ([`nvme_estimate`]), with their range, and the client defaults
///    serve as service times.
pub fn from_dump(label: &str, text: &str) -> Result<DriveSpec, InputError> {
    let mut parsed = input::parse_controller(label, text)?;
    for (i, ps) in parsed.controller.power_states.iter().enumerate() {
        if ps.max_power_mw == 0.0 {
            let active = match ps.active_power_mw {
                Some(mw) if mw > 0.0 => format!(" (beside an active power of {mw} mW)"),
                _ => String::new(),
            };
            parsed.notes.push(format!(
                "PS{i} declares a maximum power of 0 W{active}: its power is unknown, and \
                 torpor counts it as 0 mW wherever MP is used; set `idle_power_mw` / \
                 `active_power_mw` in a scenario if you know better"
            ));
        }
    }
    let mut drive = DriveSpec {
        label: label.to_string(),
        format: parsed.format,
        controller: parsed.controller,
        service: ServiceModel::CLIENT_DEFAULT,
        ps0_idle: None,
        ps0_active: None,
        preset: None,
        notes: parsed.notes,
    };
    match matching_preset(&drive.controller, parsed.firmware.as_deref()) {
        Match::Same(p, how) => {
            drive.notes.push(format!(
                "{how}: PS0's idle and active power and the service times are the preset's \
                 (`torpor devices --json` shows their sources)",
            ));
            drive.service = p.service;
            drive.ps0_idle = p.ps0_idle;
            drive.ps0_active = p.ps0_active;
            drive.preset = Some(p.id);
        }
        Match::TableDiffers(p) => drive.notes.push(format!(
            "the model matches preset {} but the power-state table differs from the \
             preset's (another firmware or capacity): none of the preset's figures are used",
            p.id
        )),
        Match::None => {}
    }
    if drive.preset.is_none() {
        let ps0 = &drive.controller.power_states[0];
        if ps0.idle_power_mw.is_none() {
            drive.ps0_idle = nvme_estimate::ps0_idle(ps0.max_power_mw);
        }
        if ps0.active_power_mw.is_none() {
            drive.ps0_active = nvme_estimate::ps0_active(ps0.max_power_mw);
        }
    }
    Ok(drive)
}

/// How a dump relates to the built-in presets.
enum Match {
    /// A preset of the same drive, and a sentence saying how they match.
    Same(preset::NvmePreset, String),
    /// A preset of the same model whose power states differ: not the same drive.
    TableDiffers(preset::NvmePreset),
    None,
}

/// The built-in preset describing the drive of a dump, matched as far as a dump allows (a
/// preset records no PCI vendor id, so the model and the table decide):
/// 1. The model numbers agree: compared case-insensitively word by word, without capacity
///    words (`500GB`, `1TB`) and a preset's parenthesised remark, one model's words ending
///    the other's (a dump may lead with the vendor, `INTEL SSDPEKKW256G8`), and the shorter
///    holds a digit (a part number, not a bare `SSD`).
/// 2. The power-state tables are identical (each state's maximum, active and idle power,
///    NOPS, ENLAT and EXLAT): the figures a preset adds describe its table, and another
///    firmware or capacity that changes the table is another drive for APST.
/// 3. Among several, a preset of the same capacity, then of the same firmware, comes first.
///
/// The sentence names the preset, whether the capacity and firmware agree.
fn matching_preset(dump: &NvmeController, firmware: Option<&str>) -> Match {
    let words = model_words(&dump.model);
    let mut same_model: Vec<preset::NvmePreset> = preset::builtin()
        .filter_map(Result::ok)
        .filter(|p| same_model(&model_words(&p.model), &words))
        .collect();
    let rank = |p: &preset::NvmePreset| {
        (
            capacity_words(&p.model) != capacity_words(&dump.model),
            Some(p.firmware.as_str()) != firmware,
        )
    };
    same_model.sort_by_key(rank);
    let Some(i) = same_model
        .iter()
        .position(|p| same_table(&p.controller, dump))
    else {
        return match same_model.into_iter().next() {
            Some(p) => Match::TableDiffers(p),
            None => Match::None,
        };
    };
    let p = same_model.swap_remove(i);
    let capacity = match (capacity_words(&dump.model), capacity_words(&p.model)) {
        (ours, theirs) if ours == theirs => String::new(),
        (ours, theirs) => format!(
            ", other capacity ({} here, {} in the preset)",
            or_unnamed(&ours),
            or_unnamed(&theirs)
        ),
    };
    let firmware = match firmware {
        Some(fr) if fr == p.firmware => format!(", same firmware {fr}"),
        Some(fr) => format!(", firmware {fr} (the preset's: {})", p.firmware),
        None => ", firmware not in the dump".to_string(),
    };
    let how = format!(
        "matched built-in preset {}: same model{capacity}{firmware}, identical power-state table",
        p.id
    );
    Match::Same(p, how)
}

/// Step 1's words of a model number: lower case, without a parenthesised remark and without
/// capacity words.
fn model_words(model: &str) -> Vec<String> {
    let mut text = String::new();
    let mut depth = 0usize;
    for c in model.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace()
        .filter(|w| !is_capacity(w))
        .map(str::to_lowercase)
        .collect()
}

/// The capacity words of a model number (`500GB`), upper case.
fn capacity_words(model: &str) -> Vec<String> {
    model
        .split_whitespace()
        .filter(|w| is_capacity(w))
        .map(str::to_uppercase)
        .collect()
}

fn or_unnamed(words: &[String]) -> String {
    match words.is_empty() {
        true => "not named".to_string(),
        false => words.join(" "),
    }
}

/// `500GB`, `1TB`, `1.92TB`: digits (and a point) then GB or TB, any case.
fn is_capacity(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let Some(number) = lower
        .strip_suffix("gb")
        .or_else(|| lower.strip_suffix("tb"))
    else {
        return false;
    };
    !number.is_empty()
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// Step 1: one word list ends the other, and the shorter holds a digit.
fn same_model(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    !short.is_empty()
        && long.ends_with(short)
        && short
            .iter()
            .any(|w| w.contains(|c: char| c.is_ascii_digit()))
}

/// Step 2: the same descriptors, powers equal to the µW (the dumps' resolution is 100 µW).
fn same_table(a: &NvmeController, b: &NvmeController) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() < 1e-3;
    let close_opt = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => close(x, y),
        (x, y) => x.is_none() && y.is_none(),
    };
    a.power_states.len() == b.power_states.len()
        && a.power_states.iter().zip(&b.power_states).all(|(p, q)| {
            close(p.max_power_mw, q.max_power_mw)
                && p.non_operational == q.non_operational
                && p.entry_lat_us == q.entry_lat_us
                && p.exit_lat_us == q.exit_lat_us
                && close_opt(p.active_power_mw, q.active_power_mw)
                && close_opt(p.idle_power_mw, q.idle_power_mw)
        })
}
