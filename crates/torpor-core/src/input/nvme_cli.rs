//! Reads a drive's power-state table from `nvme id-ctrl -o json` (nvme-cli 1.x and 2.x).
//!
//! What it models: the Identify Controller fields APST depends on — NPSS, APSTA, the model
//! number and the 32-byte power-state descriptors (PSDs, NVMe base spec; layout in
//! specs/spec-storage.md §1.1) — exactly as nvme-cli prints them, converted once to engine units
//! (mW, µs) in an [`NvmeController`].
//!
//! The JSON printers read (repo `linux-nvme/nvme-cli`), and what each puts in a `psds` entry:
//! - v1.16 (`deee9cae`, 2021-11), `nvme-print.c` `json_nvme_id_ctrl`: `max_power`, `flags`
//!   (PSD byte 3 as is: bit 0 MXPS, bit 1 NOPS), `entry_lat`, `exit_lat`, `read_tput`,
//!   `read_lat`, `write_tput`, `write_lat`, `idle_power`, `idle_scale`, `active_power`,
//!   `active_work_scale`. The two scale keys hold PSD bytes 18 and 22 as is; the power scale
//!   is their bits 7:6 (00 not reported, 01 = 0.0001 W, 10 = 0.01 W, 11 reserved).
//! - v2.0 (`5a36baba`, 2022-04): the same keys, but `active_work_scale` holds the 2-bit scale
//!   already shifted down (libnvme `nvme_psd_power_scale`, byte >> 6) while `idle_scale` is
//!   still the raw byte.
//! - v2.1 (`19159120`, 2022-08) to v2.5: `flags` kept; `idle_scale` and the new `active_scale`
//!   hold 2-bit scales; APW moves to `active_power_work`.
//! - v2.6 (`bd2f882a`, 2023-09) to v2.16 (`faf7326a`, 2025-11), `nvme-print-json.c`: `flags`
//!   is replaced by `max_power_scale` (MXPS, 0/1) and `non-operational_state` (NOPS, 0/1).
//!
//! Every version prints `npss`, `apsta` (the raw byte; bit 0 = APST supported, bits 7:1
//! reserved), `mn` (padded
//! with spaces to 40 characters) and `psds` with entries PS0..=NPSS.
//!
//! Algorithm:
//! 1. Check the syntax with serde_json, whose errors carry a line and column.
//! 2. Walk the accepted text again with a small scanner (`Scanner`) that records, for the root
//!    object and each `psds` element, every key's byte offset and its value's raw text.
//!    `serde_json::Value` keeps no positions, and a text search for a key name would be fooled
//!    by the same key in another object or inside a string; walking the real structure is
//!    neither. Reading each value from its own slice gives every semantic error the line of
//!    its key, and lets the message quote the value as written (`got -5`). As in serde_json,
//!    a repeated key's last value wins.
//! 3. Read `npss`, `apsta`, `mn` (and `fr` when it is a string); require NPSS+1 `psds`
//!    entries when NPSS ≤ 31. APSTA counts as "supported" when the byte is non-zero, as the
//!    kernel tests it (`if (!ctrl->apsta)`), not when bit 0 is set; reserved bits set are
//!    noted. A larger NPSS is accepted with the entries as given (nvme-cli then prints past
//!    the 32 real descriptors, so only the first 32 are kept): the APST builder refuses
//!    NPSS > 31 later, as the kernel does.
//! 4. For each entry, choose the encoding by its keys (list above) and convert:
//!    max power = MP × (MXPS ? 0.1 : 10) mW; idle and active power = value × scale, `None`
//!    when the scale says "not reported". Unknown keys are ignored (nvme-cli adds fields over
//!    time); reserved bits of `flags` are ignored, a reserved power scale is an error.

use super::Parsed;
use crate::apst::psd::{NvmeController, PowerState, PS0_MUST_BE_OPERATIONAL};
use crate::error::InputError;

/// The descriptors that exist in Identify Controller: PS0..=PS31.
const MAX_PSDS: usize = 32;

/// What the user should have given us, appended to whole-file complaints.
const EXPECTED_INPUT: &str = "expected the output of `nvme id-ctrl -o json`";

/// Parses `nvme id-ctrl -o json` output; `file` names the input in errors.
pub fn parse(file: &str, text: &str) -> Result<Parsed, InputError> {
    let doc = Doc { file, text };
    if text.trim().is_empty() {
        return Err(InputError::at(
            file,
            1,
            format!("empty file: {EXPECTED_INPUT}"),
        ));
    }
    doc.check_syntax()?;
    let root = doc.root()?;
    doc.unique_keys(&root)?;
    let psds = doc.psds(&root)?;
    for psd in &psds {
        doc.unique_keys(psd)?;
    }
    let npss = root.require(&doc, &NPSS)?;
    check_psd_count(&doc, &root, npss, psds.len())?;
    let apsta = root.require(&doc, &APSTA)?;
    let model = read_model(&doc, &root)?;
    let power_states = psds
        .iter()
        .take(MAX_PSDS)
        .map(|psd| read_psd(&doc, psd))
        .collect::<Result<Vec<_>, _>>()?;
    if power_states[0].non_operational {
        return Err(doc.err(
            psds[0].open_at,
            format!("psds[0]: {PS0_MUST_BE_OPERATIONAL}"),
        ));
    }
    let mut notes = Vec::new();
    if apsta & !1 != 0 {
        notes.push(format!(
            "APSTA is {apsta:#04x}: reserved bits are set{}; the kernel tests the whole byte, so \
             it programs APST for this drive",
            if apsta & 1 == 0 {
                " and bit 0 is clear"
            } else {
                ""
            }
        ));
    }
    Ok(Parsed {
        firmware: read_firmware(&root),
        controller: NvmeController {
            model,
            npss: npss as u8, // NPSS.max is 255: the cast cannot truncate.
            apsta: apsta != 0,
            power_states,
        },
        format: super::NVME_CLI_FORMAT,
        notes,
    })
}

/// The input, for turning byte offsets into `FILE:LINE` errors.
struct Doc<'t> {
    file: &'t str,
    text: &'t str,
}

impl<'t> Doc<'t> {
    fn err(&self, offset: usize, message: String) -> InputError {
        InputError::at(
            self.file,
            InputError::line_of_offset(self.text, offset),
            message,
        )
    }

    /// Step 1: serde_json validates the whole text and locates syntax errors.
    fn check_syntax(&self) -> Result<(), InputError> {
        let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(self.text) else {
            return Ok(());
        };
        let full = e.to_string();
        let what = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(w, _)| w);
        let message = match e.column() {
            0 => format!("invalid JSON ({what}); {EXPECTED_INPUT}"),
            column => format!("invalid JSON ({what}, column {column}); {EXPECTED_INPUT}"),
        };
        // A file cut short after its last newline fails on the empty line past the end:
        // point at the last line that exists instead.
        let line = e.line().clamp(1, self.text.lines().count().max(1));
        Err(InputError::at(self.file, line, message))
    }

    /// Refuses a key given twice in one object: JSON parsers differ on which one wins, and
    /// nvme-cli writes each once, so the file was edited or is not its output.
    fn unique_keys(&self, object: &Object<'t>) -> Result<(), InputError> {
        let mut seen = std::collections::HashMap::with_capacity(object.members.len());
        for m in &object.members {
            if let Some(first) = seen.insert(m.key.as_str(), m.key_at) {
                let message = format!(
                    "{}: given twice (first on line {}); expected each key once, as nvme-cli \
                     writes it",
                    object.name(&m.key),
                    InputError::line_of_offset(self.text, first)
                );
                return Err(self.err(m.key_at, message));
            }
        }
        Ok(())
    }

    /// The root object's members; the text is known to be valid JSON here.
    fn root(&self) -> Result<Object<'t>, InputError> {
        let mut scan = Scanner::new(self.text, 0);
        scan.skip_ws();
        let open_at = scan.pos;
        if scan.peek() != Some(b'{') {
            let raw = scan.value().unwrap_or_default();
            let message = format!(
                "expected a JSON object, got {}; {EXPECTED_INPUT}",
                shown(raw)
            );
            return Err(self.err(open_at, message));
        }
        let members = scan.members().ok_or_else(|| self.lost(open_at))?;
        Ok(Object {
            path: String::new(),
            open_at,
            members,
        })
    }

    /// The `psds` array as objects, or what this file is instead.
    fn psds(&self, root: &Object<'t>) -> Result<Vec<Object<'t>>, InputError> {
        let Some(member) = root.get("psds") else {
            return Err(self.err(root.open_at, missing_psds_message(root)));
        };
        let mut scan = Scanner::new(self.text, member.value_at);
        if scan.peek() != Some(b'[') {
            let message = format!(
                "psds: expected an array of power-state descriptors, got {}",
                shown(member.raw)
            );
            return Err(self.err(member.key_at, message));
        }
        let elements = scan.elements().ok_or_else(|| self.lost(member.value_at))?;
        elements
            .into_iter()
            .enumerate()
            .map(|(i, (at, raw))| self.psd_object(i, at, raw))
            .collect()
    }

    fn psd_object(&self, index: usize, at: usize, raw: &str) -> Result<Object<'t>, InputError> {
        let path = format!("psds[{index}]");
        let mut scan = Scanner::new(self.text, at);
        if scan.peek() != Some(b'{') {
            let message = format!(
                "{path}: expected an object (a power-state descriptor), got {}",
                shown(raw)
            );
            return Err(self.err(at, message));
        }
        let members = scan.members().ok_or_else(|| self.lost(at))?;
        Ok(Object {
            path,
            open_at: at,
            members,
        })
    }

    /// The scanner disagreed with serde_json about valid JSON: a bug, reported, not panicked.
    fn lost(&self, offset: usize) -> InputError {
        self.err(
            offset,
            "could not re-read this JSON value (a torpor bug; please report it)".into(),
        )
    }
}

/// Explains a root object without `psds`, naming the nvme-cli command it came from if known.
fn missing_psds_message(root: &Object<'_>) -> String {
    const OTHER_COMMANDS: [(&str, &str); 3] = [
        ("critical_warning", "nvme smart-log"),
        ("nsze", "nvme id-ns"),
        ("Devices", "nvme list"),
    ];
    match OTHER_COMMANDS
        .iter()
        .find(|(key, _)| root.get(key).is_some())
    {
        Some((key, command)) => format!(
            "this looks like `{command}` output (it has `{key}`), not `nvme id-ctrl`; \
             {EXPECTED_INPUT}, which has a `psds` array"
        ),
        None => format!("missing `psds` (the power-state descriptors); {EXPECTED_INPUT}"),
    }
}

/// nvme-cli prints psd[0..=npss]; with NPSS ≤ 31 the count must match.
fn check_psd_count(
    doc: &Doc<'_>,
    root: &Object<'_>,
    npss: u64,
    count: usize,
) -> Result<(), InputError> {
    let expected = npss as usize + 1;
    // Beyond 32 nvme-cli prints whatever follows the descriptors; the 32 real ones must be
    // there.
    let least = expected.min(MAX_PSDS);
    if count == expected || (expected > MAX_PSDS && count >= least) {
        return Ok(());
    }
    let at = root.get(NPSS.key).map_or(root.open_at, |m| m.key_at);
    let message = if expected > MAX_PSDS {
        format!(
            "npss is {npss}, so `psds` should list at least the {MAX_PSDS} descriptors that \
             exist (PS0..=PS31), but it has {count}"
        )
    } else {
        format!(
            "npss is {npss}, so `psds` should have {expected} entries (PS0..=PS{npss}), \
             but it has {count}"
        )
    };
    Err(doc.err(at, message))
}

fn read_model(doc: &Doc<'_>, root: &Object<'_>) -> Result<String, InputError> {
    const EXPECTED: &str = "a string (the model number)";
    let Some(m) = root.get("mn") else {
        return Err(doc.err(root.open_at, format!("missing `mn`; expected {EXPECTED}")));
    };
    match serde_json::from_str::<String>(m.raw) {
        Ok(mn) if mn.contains(char::is_control) => Err(doc.err(
            m.key_at,
            format!(
                "mn: expected printable text (the model number), got {}",
                crate::error::shown(&mn)
            ),
        )),
        Ok(mn) => Ok(mn.trim().to_string()),
        Err(_) => Err(doc.err(
            m.key_at,
            format!("mn: expected {EXPECTED}, got {}", shown(m.raw)),
        )),
    }
}

/// `fr`, trimmed, when it is a printable non-empty string; anything else is left out, not an
/// error (only used to tell the user which firmware a matched preset was read from).
fn read_firmware(root: &Object<'_>) -> Option<String> {
    let fr = serde_json::from_str::<String>(root.get("fr")?.raw).ok()?;
    let fr = fr.trim();
    (!fr.is_empty() && !fr.contains(char::is_control)).then(|| fr.to_string())
}

/// An integer key and the range nvme-cli can print for it.
struct Field {
    key: &'static str,
    max: u64,
    expected: &'static str,
}

const NPSS: Field = Field {
    key: "npss",
    max: u8::MAX as u64,
    expected: "an integer (NPSS, the 0-based index of the deepest power state)",
};
const APSTA: Field = Field {
    key: "apsta",
    max: u8::MAX as u64,
    expected: "an integer (the APSTA byte; bit 0 = APST supported)",
};
const MAX_POWER: Field = Field {
    key: "max_power",
    max: u16::MAX as u64,
    expected: "an integer number of max-power-scale units",
};
const FLAGS: Field = Field {
    key: "flags",
    max: u8::MAX as u64,
    expected: "an integer (PSD byte 3: bit 0 = max-power scale, bit 1 = non-operational)",
};
const MAX_POWER_SCALE: Field = Field {
    key: "max_power_scale",
    max: 1,
    expected: "0 (0.01 W units) or 1 (0.0001 W units)",
};
const NON_OPERATIONAL: Field = Field {
    key: "non-operational_state",
    max: 1,
    expected: "0 (operational) or 1 (non-operational)",
};
const ENTRY_LAT: Field = Field {
    key: "entry_lat",
    max: u32::MAX as u64,
    expected: "an integer number of microseconds",
};
const EXIT_LAT: Field = Field {
    key: "exit_lat",
    max: u32::MAX as u64,
    expected: "an integer number of microseconds",
};
const IDLE_POWER: Field = Field {
    key: "idle_power",
    max: u16::MAX as u64,
    expected: "an integer number of idle-power-scale units",
};
const ACTIVE_POWER: Field = Field {
    key: "active_power",
    max: u16::MAX as u64,
    expected: "an integer number of active-power-scale units",
};
/// nvme-cli 1.x and 2.0: PSD byte 18 as is.
const IDLE_SCALE_BYTE: Field = Field {
    key: "idle_scale",
    max: u8::MAX as u64,
    expected: "an integer (PSD byte 18; bits 7:6 = idle power scale)",
};
/// nvme-cli 2.1 and later: the 2-bit scale.
const IDLE_SCALE: Field = Field {
    key: "idle_scale",
    max: 2,
    expected: "0 (not reported), 1 (0.0001 W units) or 2 (0.01 W units)",
};
/// nvme-cli 1.x: PSD byte 22 as is; nvme-cli 2.0: the 2-bit scale (see [`active_scale`]).
const ACTIVE_WORK_SCALE: Field = Field {
    key: "active_work_scale",
    max: u8::MAX as u64,
    expected: "an integer (PSD byte 22; bits 7:6 = active power scale)",
};
/// nvme-cli 2.1 and later: the 2-bit scale.
const ACTIVE_SCALE: Field = Field {
    key: "active_scale",
    max: 2,
    expected: "0 (not reported), 1 (0.0001 W units) or 2 (0.01 W units)",
};

/// Converts one `psds` entry (step 4).
fn read_psd(doc: &Doc<'_>, psd: &Object<'_>) -> Result<PowerState, InputError> {
    let max_power = psd.require(doc, &MAX_POWER)?;
    let (mxps, non_operational) = read_mxps_nops(doc, psd)?;
    let entry_lat_us = psd.require(doc, &ENTRY_LAT)? as u32; // ENTRY_LAT.max is u32::MAX
    let exit_lat_us = psd.require(doc, &EXIT_LAT)? as u32; // EXIT_LAT.max is u32::MAX
    let (idle_scale, active_scale) = read_power_scales(doc, psd)?;
    let max_power_scale = if mxps {
        SCALE_100_MICRO_W
    } else {
        SCALE_10_MILLI_W
    };
    Ok(PowerState {
        max_power_mw: scaled_mw(max_power, max_power_scale),
        non_operational,
        entry_lat_us,
        exit_lat_us,
        active_power_mw: optional_power(doc, psd, &ACTIVE_POWER, active_scale)?,
        idle_power_mw: optional_power(doc, psd, &IDLE_POWER, idle_scale)?,
    })
}

/// MXPS and NOPS from `flags` (1.x … 2.5) or the two 2.6+ keys; both forms must agree.
fn read_mxps_nops(doc: &Doc<'_>, psd: &Object<'_>) -> Result<(bool, bool), InputError> {
    let flags = psd.read(doc, &FLAGS)?;
    let mxps = psd.read(doc, &MAX_POWER_SCALE)?;
    let nops = psd.read(doc, &NON_OPERATIONAL)?;
    let (mxps, nops) = match (flags, mxps, nops) {
        (None, None, None) => {
            let message = format!(
                "{}: missing `flags` (nvme-cli 1.x) or `max_power_scale` and \
                 `non-operational_state` (nvme-cli 2.x)",
                psd.path
            );
            return Err(doc.err(psd.open_at, message));
        }
        (Some(flags), None, None) => (flags & 1, (flags >> 1) & 1),
        (flags, Some(mxps), Some(nops)) => {
            if let Some(flags) = flags {
                check_flags_agree(doc, psd, flags, mxps, nops)?;
            }
            (mxps, nops)
        }
        (_, None, Some(_)) => return Err(psd.missing(doc, &MAX_POWER_SCALE)),
        (_, Some(_), None) => return Err(psd.missing(doc, &NON_OPERATIONAL)),
    };
    Ok((mxps == 1, nops == 1))
}

fn check_flags_agree(
    doc: &Doc<'_>,
    psd: &Object<'_>,
    flags: u64,
    mxps: u64,
    nops: u64,
) -> Result<(), InputError> {
    if flags & 1 == mxps && (flags >> 1) & 1 == nops {
        return Ok(());
    }
    let at = psd.get("flags").map_or(psd.open_at, |m| m.key_at);
    let message = format!(
        "{}: `flags` = {flags} (max-power scale bit {}, non-operational bit {}) contradicts \
         `max_power_scale` = {mxps} and `non-operational_state` = {nops}; expected one form \
         or two that agree",
        psd.path,
        flags & 1,
        (flags >> 1) & 1
    );
    Err(doc.err(at, message))
}

/// The 2-bit idle and active power scales (0 not reported, 1 = 0.0001 W, 2 = 0.01 W).
fn read_power_scales(
    doc: &Doc<'_>,
    psd: &Object<'_>,
) -> Result<(Option<u64>, Option<u64>), InputError> {
    // nvme-cli 2.1+ prints `active_scale`; 2.6+ also `max_power_scale`. Either marks the
    // versions whose `idle_scale` is already the 2-bit value.
    let two_bit = psd.get(ACTIVE_SCALE.key).is_some() || psd.get(MAX_POWER_SCALE.key).is_some();
    let idle = if two_bit {
        psd.read(doc, &IDLE_SCALE)?
    } else {
        psd.read(doc, &IDLE_SCALE_BYTE)?
            .map(|byte| scale_bits(doc, psd, &IDLE_SCALE_BYTE, byte))
            .transpose()?
    };
    let active = match psd.read(doc, &ACTIVE_SCALE)? {
        Some(scale) => Some(scale),
        None => active_scale(doc, psd)?,
    };
    Ok((idle, active))
}

/// `active_work_scale`: PSD byte 22 in nvme-cli 1.x, the 2-bit scale in nvme-cli 2.0.
///
/// The two cannot be told apart by their keys. A value of 1 or 2 with a non-zero
/// `active_power` is read as 2.0's scale: as a 1.x byte it would mean "active power not
/// reported" next to a reported active power, which only the 2.0 encoding explains.
fn active_scale(doc: &Doc<'_>, psd: &Object<'_>) -> Result<Option<u64>, InputError> {
    let Some(value) = psd.read(doc, &ACTIVE_WORK_SCALE)? else {
        return Ok(None);
    };
    let power = psd.read(doc, &ACTIVE_POWER)?.unwrap_or(0);
    if (1..=2).contains(&value) && power != 0 {
        return Ok(Some(value));
    }
    scale_bits(doc, psd, &ACTIVE_WORK_SCALE, value).map(Some)
}

/// Bits 7:6 of a raw scale byte; 3 is reserved.
fn scale_bits(
    doc: &Doc<'_>,
    psd: &Object<'_>,
    field: &Field,
    byte: u64,
) -> Result<u64, InputError> {
    let scale = byte >> 6;
    if scale <= 2 {
        return Ok(scale);
    }
    let at = psd.get(field.key).map_or(psd.open_at, |m| m.key_at);
    let message = format!(
        "{}: bits 7:6 of {byte} hold the reserved power scale 3; expected 0 (not reported), \
         1 (0.0001 W units) or 2 (0.01 W units)",
        psd.name(field.key)
    );
    Err(doc.err(at, message))
}

/// The 2-bit power scale codes (PSD IPS/APS; MXPS maps onto them): 2 = 0.01 W units,
/// 1 = 0.0001 W units.
const SCALE_10_MILLI_W: u64 = 2;
const SCALE_100_MICRO_W: u64 = 1;

/// `value` units of `scale` in mW: 0.01 W = 10 mW; 0.0001 W = 0.1 mW, applied as ÷ 10 so
/// results such as 250 → 25 mW are exact.
fn scaled_mw(value: u64, scale: u64) -> f64 {
    if scale == SCALE_100_MICRO_W {
        value as f64 / 10.0
    } else {
        value as f64 * 10.0
    }
}

/// Idle or active power: both the value and its scale, or neither.
fn optional_power(
    doc: &Doc<'_>,
    psd: &Object<'_>,
    field: &Field,
    scale: Option<u64>,
) -> Result<Option<f64>, InputError> {
    match (psd.read(doc, field)?, scale) {
        (None, None) => Ok(None),
        (Some(_), Some(0)) => Ok(None),
        (Some(value), Some(scale)) => Ok(Some(scaled_mw(value, scale))),
        (None, Some(_)) => Err(psd.missing(doc, field)),
        (Some(_), None) => {
            let at = psd.get(field.key).map_or(psd.open_at, |m| m.key_at);
            let message = format!(
                "{}: `{}` is given without its scale; expected both or neither",
                psd.path, field.key
            );
            Err(doc.err(at, message))
        }
    }
}

/// One JSON object's members and where it starts.
struct Object<'t> {
    /// `""` for the root, `psds[3]` for a descriptor: prefixes messages.
    path: String,
    open_at: usize,
    members: Vec<Member<'t>>,
}

impl<'t> Object<'t> {
    fn get(&self, key: &str) -> Option<&Member<'t>> {
        self.members.iter().rev().find(|m| m.key == key)
    }

    fn name(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The field's value if present; an error if present but not an integer in range.
    fn read(&self, doc: &Doc<'_>, field: &Field) -> Result<Option<u64>, InputError> {
        let Some(m) = self.get(field.key) else {
            return Ok(None);
        };
        match parse_uint(m.raw) {
            Some(v) if v <= field.max => Ok(Some(v)),
            _ => {
                let message = format!(
                    "{}: expected {} (0..={}), got {}",
                    self.name(field.key),
                    field.expected,
                    field.max,
                    shown(m.raw)
                );
                Err(doc.err(m.key_at, message))
            }
        }
    }

    fn require(&self, doc: &Doc<'_>, field: &Field) -> Result<u64, InputError> {
        self.read(doc, field)?
            .ok_or_else(|| self.missing(doc, field))
    }

    fn missing(&self, doc: &Doc<'_>, field: &Field) -> InputError {
        let what = if self.path.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.path)
        };
        let message = format!(
            "{what}missing `{}`; expected {} (0..={})",
            field.key, field.expected, field.max
        );
        doc.err(self.open_at, message)
    }
}

/// A non-negative JSON integer as nvme-cli prints it (digits only: no sign, fraction or
/// exponent), or `None`.
fn parse_uint(raw: &str) -> Option<u64> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok()
}

/// A value as written, on one line and at most 40 characters, for error messages.
fn shown(raw: &str) -> String {
    const LIMIT: usize = 40;
    let one_line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= LIMIT {
        return one_line;
    }
    let head: String = one_line.chars().take(LIMIT).collect();
    format!("{head}…")
}

/// One `"key": value` pair, as positions in the text.
struct Member<'t> {
    key: String,
    key_at: usize,
    value_at: usize,
    /// The value exactly as written.
    raw: &'t str,
}

/// Walks text that serde_json has already accepted, recording where keys and values are.
///
/// Every method returns `None` instead of panicking if the text is not what valid JSON
/// would be; callers turn that into an error.
struct Scanner<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Scanner<'t> {
    fn new(text: &'t str, pos: usize) -> Self {
        Scanner { text, pos }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Moves past the string that starts at `pos` (on its opening quote).
    fn skip_string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        self.pos += 1;
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
        None
    }

    /// Moves past one value of any kind and returns its text.
    fn value(&mut self) -> Option<&'t str> {
        self.skip_ws();
        let start = self.pos;
        match self.peek()? {
            b'"' => self.skip_string()?,
            b'{' | b'[' => self.skip_container()?,
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
            }
        }
        self.text.get(start..self.pos)
    }

    fn skip_container(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.skip_string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// The members of the object whose `{` is at `pos`.
    fn members(&mut self) -> Option<Vec<Member<'t>>> {
        let mut members = Vec::new();
        self.eat(b'{');
        if self.eat(b'}') {
            return Some(members);
        }
        loop {
            self.skip_ws();
            let key_at = self.pos;
            self.skip_string()?;
            let key = decode_key(self.text.get(key_at..self.pos)?);
            if !self.eat(b':') {
                return None;
            }
            self.skip_ws();
            let value_at = self.pos;
            let raw = self.value()?;
            members.push(Member {
                key,
                key_at,
                value_at,
                raw,
            });
            if self.eat(b'}') {
                return Some(members);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// The elements (offset, text) of the array whose `[` is at `pos`.
    fn elements(&mut self) -> Option<Vec<(usize, &'t str)>> {
        let mut elements = Vec::new();
        self.eat(b'[');
        if self.eat(b']') {
            return Some(elements);
        }
        loop {
            self.skip_ws();
            let at = self.pos;
            elements.push((at, self.value()?));
            if self.eat(b']') {
                return Some(elements);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
}

/// A key without its quotes; escapes (never seen in nvme-cli output) decoded by serde_json.
fn decode_key(quoted: &str) -> String {
    let inner = quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default();
    if !inner.contains('\\') {
        return inner.to_string();
    }
    serde_json::from_str(quoted).unwrap_or_else(|_| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_records_key_offsets_and_raw_values() {
        let text = "{\"a\" : [1, {\"b\":\"x}\"}],\n \"c\":-5 }";
        let members = Scanner::new(text, 0).members().expect("valid JSON");
        let keys: Vec<_> = members
            .iter()
            .map(|m| (m.key.as_str(), m.key_at, m.raw))
            .collect();
        // `"a"` opens at byte 1. The array `[1, {"b":"x}"}]` spans bytes 7..=21, then `,` (22),
        // `\n` (23), a space (24): `"c"` opens at byte 25. The `}` inside "x}" is not a close.
        assert_eq!(keys, vec![("a", 1, "[1, {\"b\":\"x}\"}]"), ("c", 25, "-5")]);
    }

    #[test]
    fn escaped_keys_are_decoded() {
        assert_eq!(
            decode_key(r#""non-operational_state""#),
            "non-operational_state"
        );
        assert_eq!(decode_key(r#""a\u0062""#), "ab");
    }

    #[test]
    fn only_plain_digits_are_integers() {
        assert_eq!(parse_uint("4294967295"), Some(4_294_967_295));
        for bad in [
            "-5",
            "3.5",
            "1e3",
            "\"12\"",
            "null",
            "",
            "99999999999999999999999",
        ] {
            assert_eq!(parse_uint(bad), None, "{bad}");
        }
    }
}
