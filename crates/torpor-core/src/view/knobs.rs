//! A scenario's policy settings as users apply them on a running Linux system: the kernel
//! command-line option and the sysfs write behind each `[policy.*]` field that has one, for
//! the setting a sweep recommends.
//!
//! APST's `nvme_core` parameters are [`super::apst`]'s (the table is built from all of them
//! at once, for one drive); this covers the other policies torpor models:
//!
//! 1. `policy.cpuidle.governor`: `cpuidle.governor=` on the kernel command line (v5.5+) or
//!    a write to `cpuidle/current_governor` (`cpuidle_sysfs_switch`, writable by default since
//!    v5.5). The kernel's name is the variant's without its version: a kernel has one teo.
//! 2. `policy.cpufreq.governor`: `cpufreq.default_governor=` (v5.9+) or each policy's
//!    `scaling_governor`.
//! 3. `policy.boost.dev_freq_timeout_ms`: the block disk's `dev_freq_timeout_ms`, an
//!    attribute of the 2025 RFC ("block: device frequency PM QoS tuning"), present only on a
//!    kernel carrying it.
//! 4. `policy.devfreq.pm_qos_enable` and `policy.devfreq.enabled`: ufshcd's `pm_qos_enable`
//!    (v6.9+) and `clkscale_enable`, attributes of the UFS host's platform device (Qualcomm
//!    device trees name it `<address>.ufshc`).

use toml::Value;

use crate::cpuidle::governors::GovernorName;

/// The lines that apply `path` = `value` on a running system (comments start with `#`), or
/// `None` when torpor knows no user-facing form of that field (it is then set only in a
/// scenario).
pub fn applied(path: &str, value: &Value) -> Option<Vec<String>> {
    let flag = |v: &Value| v.as_bool().map(u8::from);
    match path {
        "policy.cpuidle.governor" => cpuidle_governor(value.as_str()?),
        "policy.cpufreq.governor" => {
            let name = value.as_str()?;
            Some(vec![
                format!("# kernel command line: cpufreq.default_governor={name}"),
                format!(
                    "for p in /sys/devices/system/cpu/cpufreq/policy*; do echo {name} > \
                     $p/scaling_governor; done"
                ),
            ])
        }
        "policy.boost.dev_freq_timeout_ms" => Some(vec![
            "# the block layer's boost: a 2025 RFC, on kernels carrying its patches".into(),
            format!(
                "echo {} > /sys/block/sda/dev_freq_timeout_ms",
                value.as_integer()?
            ),
        ]),
        "policy.devfreq.pm_qos_enable" => {
            ufshcd_flag("ufshcd (v6.9+)", "pm_qos_enable", flag(value)?)
        }
        "policy.devfreq.enabled" => {
            ufshcd_flag("ufshcd's clock scaling", "clkscale_enable", flag(value)?)
        }
        _ => None,
    }
}

/// A flag among the attributes of the UFS host's platform device.
fn ufshcd_flag(what: &str, attribute: &str, on: u8) -> Option<Vec<String>> {
    Some(vec![
        format!("# {what}, on the UFS host's device"),
        format!("echo {on} > /sys/bus/platform/devices/*.ufshc/{attribute}"),
    ])
}

fn cpuidle_governor(name: &str) -> Option<Vec<String>> {
    let variant = GovernorName::parse(name).ok()?;
    if variant == GovernorName::Oracle {
        return Some(vec![
            "# the oracle is torpor's bound (it knows each idle period): no kernel has it".into(),
        ]);
    }
    let canonical = variant.canonical();
    let (kernel, version) = canonical.split_once('@').unwrap_or((canonical, ""));
    let mut lines = vec![
        format!("# kernel command line: cpuidle.governor={kernel}"),
        format!("echo {kernel} > /sys/devices/system/cpu/cpuidle/current_governor"),
    ];
    if !version.is_empty() {
        lines.push(format!(
            "# torpor ran {kernel} as v{version} built it; a kernel runs its own version's"
        ));
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_versioned_governor_is_applied_by_its_kernel_name() {
        let lines = applied("policy.cpuidle.governor", &Value::from("teo-util")).unwrap();
        assert_eq!(
            lines[1],
            "echo teo > /sys/devices/system/cpu/cpuidle/current_governor"
        );
        assert!(lines[2].contains("v6.3"), "{lines:?}");
        let menu = applied("policy.cpuidle.governor", &Value::from("menu")).unwrap();
        assert_eq!(menu.len(), 2, "{menu:?}");
    }

    #[test]
    fn flags_are_written_as_the_kernel_reads_them() {
        let off = applied("policy.devfreq.pm_qos_enable", &Value::from(false)).unwrap();
        assert!(off[1].starts_with("echo 0 > "), "{off:?}");
        let scaling = applied("policy.devfreq.enabled", &Value::from(true)).unwrap();
        assert_eq!(
            scaling,
            [
                "# ufshcd's clock scaling, on the UFS host's device",
                "echo 1 > /sys/bus/platform/devices/*.ufshc/clkscale_enable"
            ]
        );
        let boost = applied("policy.boost.dev_freq_timeout_ms", &Value::from(30)).unwrap();
        assert_eq!(boost[1], "echo 30 > /sys/block/sda/dev_freq_timeout_ms");
    }

    #[test]
    fn fields_without_a_user_form_and_wrong_types_have_none() {
        assert_eq!(
            applied("policy.devfreq.upthreshold", &Value::from(70)),
            None
        );
        assert_eq!(
            applied("policy.devfreq.pm_qos_enable", &Value::from(3)),
            None
        );
        assert_eq!(
            applied("policy.cpuidle.governor", &Value::from("nope")),
            None
        );
    }
}
