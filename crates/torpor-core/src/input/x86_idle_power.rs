//! Idle-state power on x86, where no driver publishes one: intel_idle leaves `power_usage`
//! unset, and acpi_idle's `_CST` power field is 0 on every capture torpor has seen. One rule
//! serves the x86 presets (their figures are written out in each file) and `torpor probe`.
//!
//! What it models: a package's power while all its CPUs sit in one kind of C-state, as a share
//! of the part's TDP, split evenly over its logical CPUs (so that every CPU in the state adds
//! up to the package figure, as a CPU-level state's power includes its share of the powered
//! cluster, docs/cpu-platform.md).
//!
//! The rule, per logical CPU, `f x TDP / n` with `f` by what the state does to the core:
//! 1. Polling (the cpuidle core's POLL: the CPU spins at its idle clock): 0.40 (0.20-0.60).
//! 2. Clock-gated (C1, C1E: MWAIT 0x0N; HLT): 0.15 (0.06-0.39).
//! 3. Caches flushed, clocks stopped, voltage kept (C3: MWAIT 0x1N): 0.06 (0.024-0.22).
//! 4. Core power-gated (C6 and deeper: MWAIT 0x2N and up; ACPI I/O-port states, which on
//!    AMD Zen enter CC6): 0.024 (0.005-0.034).
//!
//! The anchors, the only per-state package powers found published for client x86 parts:
//! - Intel's Core 2 Duo mobile datasheet (35 W TDP) gives each state's maximum package power:
//!   C1 13.5 W (0.39 of TDP), C2 12.9 W (0.37), C3 7.7 W (0.22), C4 1.2 W (0.034); reproduced
//!   at <http://smote.cs.berkeley.edu:8000/tracenv/wiki/PowerProportionalKernel>. These are
//!   the upper ends of rules 2-4.
//! - Legit Reviews measured a Core i7-4770K (Haswell, 84 W TDP) idling with Intel XTU's
//!   package power: 5 W with C6/C7 disabled (C1E/C3 the deepest, 0.060 of TDP) and 2 W with
//!   them (0.024),
//!   <http://www.legitreviews.com/what-enabling-c6c7-low-power-states-do-on-the-core-i7-4770k-haswell-cpu_2217/3>.
//!   These are rule 3's central value and rule 4's, and the
//!   lower ends of rules 2 and 3.
//! - Rule 2's central value is the geometric mean of its ends; rule 4's lower end is a fifth of
//!   its central value, for the package C8-C10 of mobile parts, which also gate most of the
//!   uncore (no measurement found); rule 1 has no measurement: spinning at the idle clock
//!   draws at least what a clock-gated core does at full voltage (rule 2's top, 0.39).

use crate::cpu::PowerMw;

/// What a C-state does to the core, as far as the rule tells states apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X86StateKind {
    Polling,
    ClockGated,
    CacheFlushed,
    PowerGated,
}

impl X86StateKind {
    /// (central, low, high) share of TDP (module doc, rules 1-4).
    fn share(self) -> (f64, f64, f64) {
        match self {
            X86StateKind::Polling => (0.40, 0.20, 0.60),
            X86StateKind::ClockGated => (0.15, 0.06, 0.39),
            X86StateKind::CacheFlushed => (0.06, 0.024, 0.22),
            X86StateKind::PowerGated => (0.024, 0.005, 0.034),
        }
    }

    fn words(self) -> &'static str {
        match self {
            X86StateKind::Polling => "polling",
            X86StateKind::ClockGated => "clock-gated",
            X86StateKind::CacheFlushed => "caches flushed",
            X86StateKind::PowerGated => "core power-gated",
        }
    }

    /// The kind of a state from what cpuidle's sysfs says of it (`desc`, e.g. `MWAIT 0x20`,
    /// `ACPI FFH MWAIT 0x0`, `ACPI HLT`, `ACPI IOPORT 0x414`) and whether it polls; `None`
    /// where the description does not tell.
    pub fn from_desc(desc: &str, polling: bool) -> Option<X86StateKind> {
        if polling {
            return Some(X86StateKind::Polling);
        }
        if let Some(hint) = desc.split("MWAIT 0x").nth(1) {
            let hex: String = hint.chars().take_while(char::is_ascii_hexdigit).collect();
            // MWAIT's hint: bits 7:4 are the target C-state minus 1.
            return match u32::from_str_radix(&hex, 16).ok()? >> 4 {
                0 => Some(X86StateKind::ClockGated),
                1 => Some(X86StateKind::CacheFlushed),
                _ => Some(X86StateKind::PowerGated),
            };
        }
        if desc.contains("HLT") {
            return Some(X86StateKind::ClockGated);
        }
        desc.contains("IOPORT").then_some(X86StateKind::PowerGated)
    }
}

/// The rule's estimate for one logical CPU of a part whose TDP is `tdp_mw` (from
/// `tdp_source`) and that has `cpus` logical CPUs.
pub fn estimate(kind: X86StateKind, tdp_mw: f64, cpus: usize, tdp_source: &str) -> PowerMw {
    let (central, low, high) = kind.share();
    let per_cpu = tdp_mw / cpus.max(1) as f64;
    let mw = |share: f64| (share * per_cpu * 1000.0).round() / 1000.0;
    PowerMw::Estimate {
        low: mw(low),
        central: mw(central),
        high: mw(high),
        source: format!(
            "ESTIMATE by the x86 rule ({}): {central} (range {low}-{high}) x TDP {} W / {cpus} \
             CPUs ({tdp_source}); anchors: Core 2 Duo datasheet per-state package power, \
             Haswell i7-4770K measured package power (docs/cpu-platform.md)",
            kind.words(),
            tdp_mw / 1000.0
        ),
    }
}

/// Whether `power` was written by this rule (its source says so).
pub fn is_x86_estimate(power: &PowerMw) -> bool {
    matches!(power, PowerMw::Estimate { source, .. } if source.starts_with("ESTIMATE by the x86 rule"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::cpu_preset::find;
    use X86StateKind::*;

    #[test]
    fn kinds_follow_the_mwait_hint_and_the_acpi_entry_method() {
        for (desc, polling, want) in [
            ("CPUIDLE CORE POLL IDLE", true, Some(Polling)),
            ("MWAIT 0x00", false, Some(ClockGated)),
            ("MWAIT 0x01", false, Some(ClockGated)),
            ("MWAIT 0x10", false, Some(CacheFlushed)),
            ("MWAIT 0x20", false, Some(PowerGated)),
            ("MWAIT 0x60", false, Some(PowerGated)),
            ("ACPI FFH MWAIT 0x21", false, Some(PowerGated)),
            ("ACPI FFH MWAIT 0x0", false, Some(ClockGated)),
            ("ACPI HLT", false, Some(ClockGated)),
            ("ACPI IOPORT 0x414", false, Some(PowerGated)),
            ("PSCI power down", false, None),
            ("MWAIT 0xzz", false, None),
        ] {
            assert_eq!(X86StateKind::from_desc(desc, polling), want, "{desc}");
        }
    }

    /// Each x86 preset state's kind, read from the preset's source (the intel_idle table's
    /// MWAIT hints; the 4750U's _CST entry methods), and the part's TDP and CPU count:
    /// (preset id, TDP in mW, logical CPUs, each state's name and kind).
    type PresetKinds = (
        &'static str,
        f64,
        usize,
        &'static [(&'static str, X86StateKind)],
    );

    const PRESETS: [PresetKinds; 4] = [
        (
            "intel-skylake-client",
            15_000.0,
            4,
            &[
                ("POLL", Polling),
                ("C1", ClockGated),
                ("C1E", ClockGated),
                ("C3", CacheFlushed),
                ("C6", PowerGated),
                ("C7s", PowerGated),
                ("C8", PowerGated),
                ("C9", PowerGated),
                ("C10", PowerGated),
            ],
        ),
        (
            "intel-haswell-broadwell-client",
            15_000.0,
            4,
            &[
                ("POLL", Polling),
                ("C1", ClockGated),
                ("C1E", ClockGated),
                ("C3", CacheFlushed),
                ("C6", PowerGated),
                ("C7s", PowerGated),
                ("C8", PowerGated),
                ("C9", PowerGated),
                ("C10", PowerGated),
            ],
        ),
        (
            "intel-alderlake",
            28_000.0,
            16,
            &[
                ("POLL", Polling),
                ("C1E", ClockGated),
                ("C6", PowerGated),
                ("C8", PowerGated),
                ("C10", PowerGated),
            ],
        ),
        (
            "amd-zen2-acpi-idle",
            15_000.0,
            16,
            &[
                ("POLL", Polling),
                ("C1", ClockGated),
                ("C2", PowerGated),
                ("C3", PowerGated),
            ],
        ),
    ];

    #[test]
    fn every_x86_preset_state_has_the_rules_power() {
        for (id, tdp_mw, cpus, kinds) in PRESETS {
            let p = find(id).unwrap().unwrap();
            let states: Vec<_> = p.clusters.iter().flat_map(|c| &c.states).collect();
            assert_eq!(states.len(), kinds.len(), "{id}");
            for (s, (name, kind)) in states.iter().zip(kinds) {
                assert_eq!(&s.name, name, "{id}");
                let Some(PowerMw::Estimate {
                    low,
                    central,
                    high,
                    source,
                }) = &s.power_mw
                else {
                    panic!("{id} {name}: expected an estimate, got {:?}", s.power_mw);
                };
                // By hand: share x TDP / CPUs.
                let (c, l, h) = kind.share();
                for (got, share) in [(central, c), (low, l), (high, h)] {
                    let want = share * tdp_mw / cpus as f64;
                    assert!((got - want).abs() < 0.001, "{id} {name}: {got} vs {want}");
                }
                assert!(source.starts_with("ESTIMATE by the x86 rule"), "{source}");
                assert!(source.contains(kind.words()), "{id} {name}: {source}");
            }
        }
    }

    #[test]
    fn the_estimate_splits_the_package_share_over_the_cpus() {
        // Power-gated on a 15 W part with 4 CPUs: 0.024 x 15 W / 4 = 90 mW per CPU.
        let PowerMw::Estimate {
            low, central, high, ..
        } = estimate(PowerGated, 15_000.0, 4, "a test")
        else {
            unreachable!()
        };
        assert_eq!((low, central, high), (18.75, 90.0, 127.5));
        assert!(is_x86_estimate(&estimate(Polling, 1.0, 1, "x")));
    }
}
