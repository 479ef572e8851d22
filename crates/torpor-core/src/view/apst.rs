//! How a user sees or sets an APST table: everything `torpor apst` shows about one drive under
//! one policy, gathered in one value so the front end only renders it, and the printed forms
//! it is made of (nvme-cli's `get-feature -H` text, JSON, an `nvme set-feature` command, kernel
//! module parameters). The model (`storage::nvme::apst`) only builds tables.

use std::fmt::Write as _;

use serde::Serialize;

use crate::apst::psd::NvmeController;
use crate::apst::{
    self, ApstAlgorithm, ApstConfig, ApstParams, ApstTable, APST_DATA_LEN, APST_ENTRIES,
    NVME_FEAT_AUTO_PST, S32_MAX,
};
use crate::input::nvme_source::DriveSpec;
use crate::report::apst_table::table_json;
use crate::storage::nvme::idle_schedule::{idle_schedule, Reached};

/// The table the kernel would program, and its readings.
#[derive(Debug, Serialize)]
pub struct ApstView {
    pub device: DriveSpec,
    pub params: ApstParams,
    /// False when the kernel sends no Set Features at all (APSTA = 0, NPSS > 31).
    pub sent: bool,
    pub reason: Option<String>,
    /// `{"apste", "entries": [{"ps", "itps", "itpt_ms", "raw"} x 32]}` (all zero when not sent).
    pub table: serde_json::Value,
    /// The Set Features data buffer.
    pub table_bytes: Vec<u8>,
    /// As `nvme get-feature -f 0x0c -H` prints it.
    pub get_feature_text: String,
    /// One line per state with a transition.
    pub transitions: Vec<String>,
    pub idle_schedule: Vec<Reached>,
    pub nvme_cli_command: String,
    pub kernel_params: String,
    /// The same settings through sysfs on a running system ([`emit_sysfs`]).
    pub sysfs_commands: String,
}

/// Builds the table for `drive` under `params` and all its readings. `data_file` and
/// `nvme_device` only shape the printed `nvme set-feature` command.
pub fn view(drive: DriveSpec, params: ApstParams, data_file: &str, nvme_device: &str) -> ApstView {
    let config = apst::build(&drive.controller, &params);
    let (table, sent, reason) = match config {
        ApstConfig::Sent(t) => (t, true, None),
        ApstConfig::NotSent { reason } => (
            ApstTable {
                apste: false,
                entries: [0; APST_ENTRIES],
            },
            false,
            Some(reason),
        ),
    };
    ApstView {
        sent,
        reason,
        table: table_json(&table),
        table_bytes: table.to_bytes().to_vec(),
        get_feature_text: get_feature_text(&table),
        transitions: transitions(&table, &drive.controller),
        idle_schedule: idle_schedule(&table, &drive.controller),
        nvme_cli_command: emit_nvme_cli(&table, data_file, nvme_device),
        kernel_params: emit_kernel_params(&params),
        sysfs_commands: emit_sysfs(&params, nvme_device),
        params: params.resolved(),
        device: drive,
    }
}

/// Exactly what `nvme get-feature -f 0x0c -H` prints for `table`: the header line, the
/// APSTE line and the 32 "Auto PST Entries" blocks.
///
/// Layout matched: nvme-cli v2.9.1, `nvme-print-stdout.c`: `stdout_feature_show()` (header,
/// `"get-feature:%#0*x (%s), %s value:%#0*x"`: width 4 for a non-zero feature id, width 10
/// for a non-zero value and 8 for zero, where C's `#` adds no `0x` to a zero),
/// `stdout_feature_show_fields()` (APSTE line) and `stdout_auto_pst()` (entries; identical in
/// nvme-cli master as of v3.0-rc1; v2.8 and older print three spaces after `Entry[%2d]`).
/// The value Get Features returns in CDW0 is APSTE in bit 0.
pub fn get_feature_text(table: &ApstTable) -> String {
    let mut out = String::with_capacity(4096);
    let value = if table.apste {
        "0x00000001"
    } else {
        "00000000"
    };
    let _ = writeln!(
        out,
        "get-feature:{NVME_FEAT_AUTO_PST:#04x} (Autonomous Power State Transition), Current value:{value}"
    );
    let enabled = if table.apste { "Enabled" } else { "Disabled" };
    let _ = writeln!(
        out,
        "\tAutonomous Power State Transition Enable (APSTE): {enabled}"
    );
    out.push_str("\tAuto PST Entries\t.................\n");
    for ps in 0..APST_ENTRIES {
        let _ = writeln!(out, "\tEntry[{ps:2}]");
        out.push_str("\t.................\n");
        let _ = writeln!(
            out,
            "\tIdle Time Prior to Transition (ITPT): {} ms",
            table.itpt_ms(ps)
        );
        let _ = writeln!(
            out,
            "\tIdle Transition Power State   (ITPS): {}",
            table.itps(ps)
        );
        out.push_str("\t.................\n");
    }
    out
}

/// One line per power state of `ctrl` whose entry in `table` makes the drive move on, e.g.
/// `PS0 -> PS3 after 100 ms idle`. Empty when APSTE is 0; entries with ITPT 0 are skipped
/// because ITPT 0 disables the transition.
pub fn transitions(table: &ApstTable, ctrl: &NvmeController) -> Vec<String> {
    if !table.apste {
        return Vec::new();
    }
    let n = (ctrl.npss as usize + 1).min(APST_ENTRIES);
    (0..n)
        .filter(|&ps| table.itpt_ms(ps) != 0)
        .map(|ps| {
            format!(
                "PS{ps} -> PS{} after {} ms idle",
                table.itps(ps),
                table.itpt_ms(ps)
            )
        })
        .collect()
}

/// The nvme-cli command that programs `table` on `device`, reading the 256-byte buffer
/// ([`ApstTable::to_bytes`]) from `data_file`. Option names as in nvme-cli's `set_feature()`
/// (`nvme.c`, v1.x–v2.x long options; the short form of `--value` changed from `-v` to `-V`,
/// so the long forms are used).
///
/// The kernel does not know about such a write: it rebuilds and resends its own table on the
/// next reconfiguration (controller reset, resume with reset, or any change of the PM QoS
/// latency tolerance), undoing this command. Use [`emit_kernel_params`] to make it stick.
pub fn emit_nvme_cli(table: &ApstTable, data_file: &str, device: &str) -> String {
    format!(
        "nvme set-feature {} --feature-id={:#04x} --value={} --data-len={} --data={}",
        shell_word(device),
        NVME_FEAT_AUTO_PST,
        u8::from(table.apste),
        APST_DATA_LEN,
        shell_word(data_file)
    )
}

/// The `nvme_core` module parameters that make the kernel build the table `params` describes:
/// a kernel command line and the equivalent `/etc/modprobe.d` line, with comments for what
/// cannot be expressed.
pub fn emit_kernel_params(params: &ApstParams) -> String {
    let mut pairs = vec![(
        "default_ps_max_latency_us",
        params.max_latency_us().min(S32_MAX),
    )];
    match params.algorithm {
        // v5.14+ falls back to the legacy formula when the primary timeout is 0; v4.12–v5.13
        // kernels have no apst_* parameters and always build the legacy table; v4.11 kernels
        // build their own, which no later kernel can be told to.
        ApstAlgorithm::Legacy => pairs.push(("apst_primary_timeout_ms", 0)),
        ApstAlgorithm::V4_11 => {}
        ApstAlgorithm::V5_14 => pairs.extend([
            ("apst_primary_timeout_ms", params.primary_timeout_ms),
            ("apst_secondary_timeout_ms", params.secondary_timeout_ms),
            ("apst_primary_latency_tol_us", params.primary_latency_tol_us),
            (
                "apst_secondary_latency_tol_us",
                params.secondary_latency_tol_us,
            ),
        ]),
    }
    let cmdline: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("nvme_core.{k}={v}"))
        .collect();
    let options: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = String::new();
    out.push_str("# kernel command line\n");
    let _ = writeln!(out, "{}", cmdline.join(" "));
    out.push_str("# /etc/modprobe.d/nvme_core.conf\n");
    let _ = writeln!(out, "options nvme_core {}", options.join(" "));
    match params.algorithm {
        ApstAlgorithm::Legacy => out.push_str(
            "# apst_primary_timeout_ms=0 selects the legacy formula on v5.14+ kernels; \
             v4.12-v5.13 kernels always use it and have no apst_* parameters: omit it there\n",
        ),
        ApstAlgorithm::V4_11 => out.push_str(
            "# for a v4.11 kernel, which compares ENLAT + EXLAT with this limit; later kernels \
             compare EXLAT only and cannot be made to build the v4.11 table\n",
        ),
        ApstAlgorithm::V5_14 => {}
    }
    if params.max_latency_us() >= S32_MAX {
        let _ = writeln!(
            out,
            "# {S32_MAX} (S32_MAX) or more means no limit: the kernel caps the parameter at \
             S32_MAX, which the PM QoS latency tolerance reads as `any`"
        );
    }
    if params.no_deepest_ps {
        out.push_str(
            "# no_deepest_ps is NVME_QUIRK_NO_DEEPEST_PS, a per-device quirk from the kernel's \
             PCI/DMI tables, not a module parameter: it cannot be set here\n",
        );
    }
    out
}

/// The same settings applied to a running system through sysfs, as root, until the next boot.
///
/// The `nvme_core` parameters are writable at run time (mode 0644) but only read when the
/// kernel builds a table; a change of the controller's PM QoS latency tolerance makes it build
/// one at once (`nvme_set_latency_tolerance`, only when the value differs from the current
/// `ps_max_latency_us`). The controller's sysfs name is `nvme_device`'s (`/dev/nvme0n1` ->
/// `nvme0`).
pub fn emit_sysfs(params: &ApstParams, nvme_device: &str) -> String {
    let mut out = String::new();
    let module = |out: &mut String, name: &str, value: u64| {
        let _ = writeln!(
            out,
            "echo {value} > /sys/module/nvme_core/parameters/{name}"
        );
    };
    out.push_str(
        "# at run time, as root, until the next boot
",
    );
    match params.algorithm {
        ApstAlgorithm::V5_14 => {
            module(
                &mut out,
                "apst_primary_timeout_ms",
                params.primary_timeout_ms,
            );
            module(
                &mut out,
                "apst_secondary_timeout_ms",
                params.secondary_timeout_ms,
            );
            module(
                &mut out,
                "apst_primary_latency_tol_us",
                params.primary_latency_tol_us,
            );
            module(
                &mut out,
                "apst_secondary_latency_tol_us",
                params.secondary_latency_tol_us,
            );
        }
        ApstAlgorithm::Legacy => {
            out.push_str(
                "# (v5.14+ kernels; v4.12-v5.13 always build the legacy table)
",
            );
            module(&mut out, "apst_primary_timeout_ms", 0);
        }
        ApstAlgorithm::V4_11 => {
            out.push_str(
                "# (a v4.11 kernel: only the latency tolerance can be set)
",
            );
        }
    }
    let tolerance = if params.max_latency_us() >= S32_MAX {
        // Both `any` and `auto` reach the driver as "no limit".
        "any".to_string()
    } else {
        params.max_latency_us().to_string()
    };
    out.push_str(
        "# a new latency tolerance makes the kernel rebuild the table now (if it already \
         holds this value, write another first)\n",
    );
    let _ = writeln!(
        out,
        "echo {tolerance} > {}",
        shell_word(&format!(
            "/sys/class/nvme/{}/power/pm_qos_latency_tolerance_us",
            controller_name(nvme_device)
        ))
    );
    out
}

/// The controller's name under /sys/class/nvme for a device path: `/dev/nvme0n1` -> `nvme0`.
fn controller_name(nvme_device: &str) -> &str {
    let name = nvme_device.rsplit('/').next().unwrap_or(nvme_device);
    // A namespace (`nvme0n1`) belongs to controller `nvme0`.
    match name.strip_prefix("nvme").and_then(|rest| rest.find('n')) {
        Some(i) => &name[..4 + i],
        None => name,
    }
}

/// `s` as one POSIX shell word: unchanged when it has only safe characters, else single-quoted.
fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:=,@%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/dev/nvme0"), "/dev/nvme0");
        assert_eq!(shell_word("my apst.bin"), "'my apst.bin'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
