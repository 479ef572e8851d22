//! The scenario schema: the one definition of what a scenario file may say.
//!
//! A scenario names a platform (a preset or the user's own device dump), a workload (fio-like
//! jobs, the APST workflows, an iolog replay), a policy, and run settings; `[[variant]]` tables
//! override policy fields so one file compares several policies on identical input. Every table
//! denies unknown keys, durations carry units, and errors name the file, the line and the key.
//! Python passes scenario text through and never re-states this schema.
//!
//! ```toml
//! [platform]
//! nvme = "wdc-pc-sn530-256gb"        # a built-in preset id, or
//! # nvme_file = "id-ctrl.json"       # nvme-cli JSON or smartctl -a text, relative to the scenario
//! latency_scale = 1.0                # real entry/exit latency = this x declared (default 1)
//!
//! [policy.apst]                      # any subset; the rest are the kernel defaults
//! algorithm = "v5.14"
//! primary_timeout_ms = 100
//!
//! [workload]
//! apst_workflow = 7                  # and/or [[workload.job]] tables, and/or iolog = "trace.log"
//!
//! [run]
//! duration = "60s"
//! seed = 1
//!
//! [[variant]]
//! name = "legacy"
//! apst = { algorithm = "legacy" }
//! ```

use serde::Deserialize;

use crate::error::{self, InputError};
use crate::storage::nvme::apst::{ApstAlgorithm, ApstParams};
use crate::time::{parse_duration, Nanos};
use crate::workload::{FioJob, ReplayOptions};

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub platform: Platform,
    #[serde(default)]
    pub policy: Policy,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub run: RunSpec,
    #[serde(default, rename = "variant")]
    pub variants: Vec<Variant>,
}

/// The simulated hardware.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Built-in NVMe preset id (`torpor devices`).
    pub nvme: Option<String>,
    /// The user's own `nvme id-ctrl -o json` or `smartctl -a` output, relative to the scenario.
    pub nvme_file: Option<String>,
    /// How the drive's real entry and exit latencies compare with the declared (maximum) ones:
    /// 1.0 takes the descriptors at their word, 0.5 wakes twice as fast. The kernel builds its
    /// table from the declared values either way; only the simulated drive changes.
    #[serde(default = "one")]
    pub latency_scale: f64,
}

fn one() -> f64 {
    1.0
}

/// Policy knobs; every field is optional and defaults to the kernel's default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub apst: ApstOverrides,
}

/// NVMe APST settings: the `nvme_core` module parameters and the controller's
/// `ps_max_latency_us` (set through the PM QoS latency tolerance).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApstOverrides {
    pub algorithm: Option<ApstAlgorithm>,
    pub ps_max_latency_us: Option<u64>,
    pub primary_timeout_ms: Option<u64>,
    pub secondary_timeout_ms: Option<u64>,
    pub primary_latency_tol_us: Option<u64>,
    pub secondary_latency_tol_us: Option<u64>,
    pub no_deepest_ps: Option<bool>,
}

impl ApstOverrides {
    /// Applies the fields that are set on top of `base`.
    pub fn apply(&self, base: &mut ApstParams) {
        if let Some(a) = self.algorithm {
            base.algorithm = a;
        }
        let set = |dst: &mut u64, src: Option<u64>| {
            if let Some(v) = src {
                *dst = v;
            }
        };
        set(&mut base.ps_max_latency_us, self.ps_max_latency_us);
        set(&mut base.primary_timeout_ms, self.primary_timeout_ms);
        set(&mut base.secondary_timeout_ms, self.secondary_timeout_ms);
        set(
            &mut base.primary_latency_tol_us,
            self.primary_latency_tol_us,
        );
        set(
            &mut base.secondary_latency_tol_us,
            self.secondary_latency_tol_us,
        );
        if let Some(v) = self.no_deepest_ps {
            base.no_deepest_ps = v;
        }
    }
}

/// What issues IO.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// One of the seven workflows of the APST commit message (1-7).
    pub apst_workflow: Option<u8>,
    /// fio-like jobs, with fio's option names.
    #[serde(default, rename = "job")]
    pub jobs: Vec<FioJob>,
    /// A fio iolog (v2 or v3) to replay, relative to the scenario.
    pub iolog: Option<String>,
    /// How to replay `iolog` (fio's replay options).
    #[serde(default)]
    pub replay: ReplayOptions,
}

/// Run settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Simulated time, with a unit (`"60s"`).
    #[serde(deserialize_with = "de_duration")]
    pub duration: Nanos,
    pub seed: u64,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            duration: Nanos::from_secs(60),
            seed: 1,
        }
    }
}

/// A named set of policy overrides compared against the others on the same input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub apst: ApstOverrides,
}

fn de_duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Nanos, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s).map_err(serde::de::Error::custom)
}

impl Scenario {
    /// Parses scenario text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, InputError> {
        let scenario: Scenario =
            toml::from_str(text).map_err(|e| error::from_toml(file, text, &e))?;
        scenario.validate(file, text)?;
        Ok(scenario)
    }

    /// The policy of each variant, in order: the base policy with each variant's overrides,
    /// or the base policy alone (named "base") when there are no variants.
    pub fn variant_params(&self) -> Vec<(String, ApstParams)> {
        let mut base = ApstParams::default();
        self.policy.apst.apply(&mut base);
        if self.variants.is_empty() {
            return vec![("base".to_string(), base)];
        }
        self.variants
            .iter()
            .map(|v| {
                let mut p = base.clone();
                v.apst.apply(&mut p);
                (v.name.clone(), p)
            })
            .collect()
    }

    fn validate(&self, file: &str, text: &str) -> Result<(), InputError> {
        let at =
            |key: &str, msg: String| InputError::new(file, error::line_of_toml_key(text, key), msg);
        match (&self.platform.nvme, &self.platform.nvme_file) {
            (Some(_), Some(_)) => {
                return Err(at(
                    "nvme_file",
                    "[platform]: give either `nvme` (a preset id) or `nvme_file`, not both".into(),
                ))
            }
            (None, None) => {
                return Err(at(
                    "[platform]",
                    "[platform]: expected `nvme = \"<preset id>\"` or `nvme_file = \"<path>\"`"
                        .into(),
                ))
            }
            _ => {}
        }
        let scale = self.platform.latency_scale;
        if !(scale.is_finite() && scale > 0.0 && scale <= 1000.0) {
            return Err(at(
                "latency_scale",
                format!("[platform] latency_scale: expected a factor in (0, 1000], got {scale}"),
            ));
        }
        if let Some(n) = self.workload.apst_workflow {
            if !(1..=7).contains(&n) {
                return Err(at(
                    "apst_workflow",
                    format!("[workload] apst_workflow: expected 1..=7, got {n}"),
                ));
            }
        }
        let w = &self.workload;
        if w.apst_workflow.is_none() && w.jobs.is_empty() && w.iolog.is_none() {
            return Err(at(
                "[workload]",
                "[workload]: expected `apst_workflow`, `[[workload.job]]` or `iolog`".into(),
            ));
        }
        for job in &w.jobs {
            job.validate().map_err(|e| {
                at(
                    e.key,
                    format!("[[workload.job]] {}: `{}`: {}", job.name, e.key, e.message),
                )
            })?;
        }
        w.replay.validate().map_err(|e| {
            at(
                e.key,
                format!("[workload.replay] `{}`: {}", e.key, e.message),
            )
        })?;
        if self.run.duration == Nanos::ZERO {
            return Err(at(
                "duration",
                "[run] duration: expected a positive duration such as \"60s\"".into(),
            ));
        }
        let mut names: Vec<&str> = self.variants.iter().map(|v| v.name.as_str()).collect();
        names.sort_unstable();
        if let Some(dup) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(at(
                "name",
                format!("[[variant]]: the name {:?} is used twice", dup[0]),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[platform]
nvme = "wdc-pc-sn530-256gb"

[policy.apst]
primary_timeout_ms = 50

[workload]
apst_workflow = 7

[run]
duration = "30s"
seed = 3

[[variant]]
name = "legacy"
apst = { algorithm = "legacy" }

[[variant]]
name = "v5.14"
"#;

    #[test]
    fn variants_inherit_the_base_policy_and_override_it() {
        let s = Scenario::parse("s.toml", GOOD).unwrap();
        assert_eq!(s.run.duration, Nanos::from_secs(30));
        let v = s.variant_params();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, "legacy");
        assert_eq!(v[0].1.algorithm, ApstAlgorithm::Legacy);
        assert_eq!(v[1].1.algorithm, ApstAlgorithm::V5_14);
        assert_eq!(v[1].1.primary_timeout_ms, 50);
        assert_eq!(v[1].1.secondary_timeout_ms, 2000);
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let bad = GOOD.replace("seed = 3", "seed = 3\nspeed = 2");
        let e = Scenario::parse("s.toml", &bad).unwrap_err();
        assert_eq!(e.file, "s.toml");
        assert_eq!(e.line, Some(14));
        assert!(e.message.contains("unknown field `speed`"), "{}", e.message);
    }

    #[test]
    fn duration_without_unit_is_refused_on_its_line() {
        let bad = GOOD.replace("\"30s\"", "\"30\"");
        let e = Scenario::parse("s.toml", &bad).unwrap_err();
        assert_eq!(e.line, Some(12));
        assert!(
            e.message.contains("expected a duration with a unit"),
            "{}",
            e.message
        );
    }

    #[test]
    fn workflow_out_of_range_is_refused_on_its_line() {
        let bad = GOOD.replace("apst_workflow = 7", "apst_workflow = 9");
        let e = Scenario::parse("s.toml", &bad).unwrap_err();
        assert_eq!(e.line, Some(9));
        assert!(e.message.contains("expected 1..=7, got 9"));
    }

    #[test]
    fn platform_needs_exactly_one_device() {
        let bad = GOOD.replace("nvme = \"wdc-pc-sn530-256gb\"", "");
        let e = Scenario::parse("s.toml", &bad).unwrap_err();
        assert_eq!(e.line, Some(2));
        let both = GOOD.replace(
            "nvme = \"wdc-pc-sn530-256gb\"",
            "nvme = \"a\"\nnvme_file = \"b\"",
        );
        assert_eq!(Scenario::parse("s.toml", &both).unwrap_err().line, Some(4));
    }

    #[test]
    fn unknown_algorithm_is_refused() {
        let bad = GOOD.replace("algorithm = \"legacy\"", "algorithm = \"v6.0\"");
        let e = Scenario::parse("s.toml", &bad).unwrap_err();
        assert_eq!(e.line, Some(17));
    }
}
