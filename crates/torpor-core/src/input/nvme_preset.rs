//! NVMe drive presets: one TOML file per drive under `presets/nvme/`, embedded at build time.
//!
//! A preset is a real drive's Identify Controller data (NPSS, APSTA, the power-state
//! descriptors as a `smartctl -a` or `nvme id-ctrl` dump printed them) plus a service-time
//! model, every number with its source. Files use the units of those dumps (W, µs); loading
//! converts power to mW once, here.
//!
//! ```toml
//! id = "samsung-970-evo-plus-1tb"      # = the file name without `.toml`
//! vendor = "Samsung"
//! model = "Samsung SSD 970 EVO Plus 1TB"
//! firmware = "2B2QEXM7"
//! npss = 4                              # index of the deepest state = power_state count - 1
//! apsta = true
//! apsta_source = "..."                  # where APSTA comes from (reported, inferred, assumed)
//! in_apst_commit = false                # named in Linux commit ebd8a93aa4f5
//! source = "..."                        # the dump the power states were transcribed from
//!
//! [[power_state]]                       # PS0, PS1, ... in order
//! ps = 0
//! max_power_w = 7.80
//! operational = true
//! entry_lat_us = 0
//! exit_lat_us = 0
//! # active_power_w, idle_power_w: optional, when the drive reports them
//!
//! [service]                             # ServiceModel's fields ...
//! read_4k_us = 52.6
//! # ...
//! [service.source]                      # ... and one source sentence for each
//! read_4k_us = "DERIVED: ..."
//! ```

use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::apst::psd::{NvmeController, PowerState};
use crate::error::{self, InputError};
use crate::storage::nvme::service::ServiceModel;

/// The preset directory (under `presets/`) holding NVMe drives.
const KIND: &str = "nvme";

/// Most power states a controller can describe (Identify Controller has 32 descriptors).
const MAX_POWER_STATES: usize = 32;

/// One drive, ready for the table builders and the drive model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvmePreset {
    pub id: String,
    pub vendor: String,
    pub model: String,
    pub firmware: String,
    /// The dump the power states come from: its type, repository/path/commit and URL.
    pub source: String,
    /// Where APSTA comes from and how sure it is.
    pub apsta_source: String,
    /// The drive is one of the five named in Linux commit ebd8a93aa4f5 (the v5.14 algorithm).
    pub in_apst_commit: bool,
    pub controller: NvmeController,
    pub service: ServiceModel,
    /// PS0's idle power where the drive reports none: a sourced figure or a labelled
    /// estimate, with its range.
    pub ps0_idle: Option<Estimate>,
    /// PS0's active power where the drive reports no ACTP, likewise.
    pub ps0_active: Option<Estimate>,
}

/// A number torpor cannot read from the drive, with how sure it is: the value simulated
/// (`central`), the ends of its plausible range, and where the figures come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub low_mw: f64,
    pub central_mw: f64,
    pub high_mw: f64,
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    id: String,
    vendor: String,
    model: String,
    firmware: String,
    npss: Spanned<u8>,
    apsta: bool,
    apsta_source: String,
    in_apst_commit: bool,
    source: String,
    power_state: Vec<PowerStateFile>,
    service: ServiceFile,
    #[serde(default)]
    estimate: EstimatesFile,
}

/// `[estimate]`: what the descriptors do not say.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EstimatesFile {
    ps0_idle_power_w: Option<RangeFile>,
    ps0_active_power_w: Option<RangeFile>,
}

/// `{ low, central, high, source }`, in W.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeFile {
    low: Spanned<f64>,
    central: Spanned<f64>,
    high: Spanned<f64>,
    source: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PowerStateFile {
    ps: Spanned<u8>,
    max_power_w: Spanned<f64>,
    operational: bool,
    entry_lat_us: u32,
    exit_lat_us: u32,
    active_power_w: Option<Spanned<f64>>,
    idle_power_w: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceFile {
    read_4k_us: Spanned<f64>,
    write_4k_us: Spanned<f64>,
    read_mb_s: Spanned<f64>,
    write_mb_s: Spanned<f64>,
    parallelism: Spanned<u32>,
    source: ServiceSources,
}

/// One source sentence per service number; required and non-empty so no number goes
/// unexplained.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServiceSources {
    read_4k_us: Spanned<String>,
    write_4k_us: Spanned<String>,
    read_mb_s: Spanned<String>,
    write_mb_s: Spanned<String>,
    parallelism: Spanned<String>,
}

/// Parses and checks one preset; `file` names it in errors.
pub fn parse_preset(file: &str, text: &str) -> Result<NvmePreset, InputError> {
    let raw: PresetFile = toml::from_str(text).map_err(|e| error::from_toml(file, text, &e))?;
    let at = |span: Range<usize>, msg: String| {
        InputError::at(file, InputError::line_of_offset(text, span.start), msg)
    };
    let power_states = power_states(&raw.power_state, &at)?;
    if power_states.is_empty() {
        return Err(InputError::whole(
            file,
            "expected at least one [[power_state]] table",
        ));
    }
    let npss = *raw.npss.get_ref();
    if usize::from(npss) + 1 != power_states.len() {
        let msg = format!(
            "`npss` is {npss} but {} power states are given; expected npss = count - 1",
            power_states.len()
        );
        return Err(at(raw.npss.span(), msg));
    }
    let service = service(&raw.service, &at)?;
    let ps0_idle = raw
        .estimate
        .ps0_idle_power_w
        .as_ref()
        .map(|r| {
            estimate(
                r,
                "estimate.ps0_idle_power_w",
                power_states[0].max_power_mw,
                &at,
            )
        })
        .transpose()?;
    let ps0_active = raw
        .estimate
        .ps0_active_power_w
        .as_ref()
        .map(|r| {
            estimate(
                r,
                "estimate.ps0_active_power_w",
                power_states[0].max_power_mw,
                &at,
            )
        })
        .transpose()?;
    Ok(NvmePreset {
        ps0_idle,
        ps0_active,
        controller: NvmeController {
            model: raw.model.clone(),
            npss,
            apsta: raw.apsta,
            power_states,
        },
        id: raw.id,
        vendor: raw.vendor,
        model: raw.model,
        firmware: raw.firmware,
        source: raw.source,
        apsta_source: raw.apsta_source,
        in_apst_commit: raw.in_apst_commit,
        service,
    })
}

/// Every built-in NVMe preset, sorted by id; a preset that fails to load yields its error.
pub fn builtin() -> impl Iterator<Item = Result<NvmePreset, InputError>> {
    super::embedded_of(KIND).map(|(id, text)| load_embedded(id, text))
}

/// The built-in preset `id`, if there is one.
pub fn find(id: &str) -> Option<Result<NvmePreset, InputError>> {
    super::embedded_of(KIND)
        .find(|(pid, _)| *pid == id)
        .map(|(id, text)| load_embedded(id, text))
}

/// What to add after "no built-in preset has this id": the closest NVMe ids, if any is close,
/// then where the list is (see `suggest_preset`).
pub fn suggestion(id: &str) -> String {
    super::suggest_preset(KIND, id)
}

/// A range in W as an [`Estimate`] in mW: low <= central <= high, none above `ceiling_mw`
/// (the state's maximum power), and a source sentence.
fn estimate(
    r: &RangeFile,
    key: &str,
    ceiling_mw: f64,
    at: &impl Fn(Range<usize>, String) -> InputError,
) -> Result<Estimate, InputError> {
    let low = power_mw(&r.low, &format!("{key}.low"), at)?;
    let central = power_mw(&r.central, &format!("{key}.central"), at)?;
    let high = power_mw(&r.high, &format!("{key}.high"), at)?;
    if !(low <= central && central <= high) {
        return Err(at(
            r.central.span(),
            format!("`{key}`: expected low <= central <= high, got {low} / {central} / {high} mW"),
        ));
    }
    if high > ceiling_mw {
        return Err(at(
            r.high.span(),
            format!("`{key}.high` is {high} mW, above the state's maximum power {ceiling_mw} mW"),
        ));
    }
    if r.source.get_ref().trim().is_empty() {
        return Err(at(
            r.source.span(),
            format!("`{key}.source`: expected where the figures come from"),
        ));
    }
    Ok(Estimate {
        low_mw: low,
        central_mw: central,
        high_mw: high,
        source: r.source.get_ref().trim().to_string(),
    })
}

fn load_embedded(id: &str, text: &str) -> Result<NvmePreset, InputError> {
    let file = format!("presets/{KIND}/{id}.toml");
    let preset = parse_preset(&file, text)?;
    if preset.id != id {
        let msg = format!(
            "`id` is \"{}\"; expected the file name, \"{id}\"",
            preset.id
        );
        return Err(InputError::at(
            &file,
            error::line_of_toml_key(text, "id").unwrap_or(1),
            msg,
        ));
    }
    Ok(preset)
}

fn power_states(
    raw: &[PowerStateFile],
    at: &impl Fn(Range<usize>, String) -> InputError,
) -> Result<Vec<PowerState>, InputError> {
    if raw.len() > MAX_POWER_STATES {
        let msg = format!(
            "expected at most {MAX_POWER_STATES} power states, found {}",
            raw.len()
        );
        return Err(at(raw[MAX_POWER_STATES].ps.span(), msg));
    }
    raw.iter()
        .enumerate()
        .map(|(i, p)| {
            if usize::from(*p.ps.get_ref()) != i {
                let msg = format!(
                    "`ps` is {}; expected {i} (power states in order from 0)",
                    p.ps.get_ref()
                );
                return Err(at(p.ps.span(), msg));
            }
            Ok(PowerState {
                max_power_mw: power_mw(&p.max_power_w, "max_power_w", at)?,
                non_operational: !p.operational,
                entry_lat_us: p.entry_lat_us,
                exit_lat_us: p.exit_lat_us,
                active_power_mw: p
                    .active_power_w
                    .as_ref()
                    .map(|w| power_mw(w, "active_power_w", at))
                    .transpose()?,
                idle_power_mw: p
                    .idle_power_w
                    .as_ref()
                    .map(|w| power_mw(w, "idle_power_w", at))
                    .transpose()?,
            })
        })
        .collect()
}

/// W → mW. Rounded to whole µW first so a printed `0.07` becomes exactly 70 mW (descriptors
/// have 0.0001 W resolution, so nothing real is lost).
fn power_mw(
    w: &Spanned<f64>,
    key: &str,
    at: &impl Fn(Range<usize>, String) -> InputError,
) -> Result<f64, InputError> {
    let v = *w.get_ref();
    if !v.is_finite() || v < 0.0 {
        return Err(at(
            w.span(),
            format!("`{key}` is {v}; expected a finite number of watts >= 0"),
        ));
    }
    Ok((v * 1e6).round() / 1e3)
}

fn service(
    raw: &ServiceFile,
    at: &impl Fn(Range<usize>, String) -> InputError,
) -> Result<ServiceModel, InputError> {
    let positive = |v: &Spanned<f64>, key: &str| {
        let x = *v.get_ref();
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(at(
                v.span(),
                format!("`service.{key}` is {x}; expected a finite number > 0"),
            ))
        }
    };
    let src = &raw.source;
    for (key, text) in [
        ("read_4k_us", &src.read_4k_us),
        ("write_4k_us", &src.write_4k_us),
        ("read_mb_s", &src.read_mb_s),
        ("write_mb_s", &src.write_mb_s),
        ("parallelism", &src.parallelism),
    ] {
        if text.get_ref().trim().is_empty() {
            return Err(at(
                text.span(),
                format!("`service.source.{key}` is empty; expected where the number comes from"),
            ));
        }
    }
    let parallelism = *raw.parallelism.get_ref();
    if parallelism == 0 {
        return Err(at(
            raw.parallelism.span(),
            "`service.parallelism` is 0; expected at least 1".into(),
        ));
    }
    Ok(ServiceModel {
        read_4k_us: positive(&raw.read_4k_us, "read_4k_us")?,
        write_4k_us: positive(&raw.write_4k_us, "write_4k_us")?,
        read_mb_s: positive(&raw.read_mb_s, "read_mb_s")?,
        write_mb_s: positive(&raw.write_mb_s, "write_mb_s")?,
        parallelism,
    })
}
