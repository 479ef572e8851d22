//! LISA's platform description, `plat_info.yml` (`lisa.platforms.platinfo.PlatformInfo`,
//! written by `PlatformInfo.to_yaml_map`): what torpor can take from it, and what it lacks.
//!
//! Read from LISA's `lisa/platforms/platinfo.py` and `lisa/energy_model.py` (the key names and
//! the object layout) and a real file (Arm's Juno r0, LISA's `tests/assets/sched_load`). Steps:
//! 1. The file is block YAML ([`super::yaml_block`]) under `platform-info: conf:`; a file is one
//!    when that is its first key (told by content, beside torpor's TOML).
//! 2. `cpus-count` CPUs; `cpu-capacities: orig:` each CPU's `arch_scale_cpu_capacity()`
//!    (0..=1024; `rtapp` and `writeable` capacities are not read); `freq-domains`: lists of
//!    CPUs sharing a clock, which torpor takes as its clusters; `freqs`: each CPU's OPPs in kHz.
//! 3. `nrg-model` (a LISA `EnergyModel`), where present: per CPU node its `active_states`
//!    (frequency -> capacity and power, in the model's own units: LISA reads them from the
//!    kernel's or the DT's energy model, and the file does not say which unit) and its
//!    `idle_states` (name -> power), shallow to deep.
//!
//! What torpor needs and LISA's file lacks: each idle state's exit latency and target
//! residency (the cpuidle driver's `latency` and `residency`). So `idle stats` takes the
//! topology from the file and names the states by index (notes say why); `idle replay`, whose
//! governors need the latencies, refuses the file and says what to give instead.

use std::rc::Rc;

use super::yaml_block::{self, Node};
use crate::error::{shown, InputError};
use crate::trace::ftrace::MAX_CPUS;

/// One CPU's energy-model node.
#[derive(Clone, Debug, PartialEq)]
pub struct EmCpu {
    /// (frequency kHz, capacity, power), in the file's order.
    pub active: Vec<(u64, f64, f64)>,
    /// (state name, power), shallow to deep.
    pub idle: Vec<(String, f64)>,
}

/// What a `plat_info.yml` says about the CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct LisaPlatform {
    pub name: Option<String>,
    pub cpus: u32,
    pub capacities: Vec<u64>,
    pub freq_domains: Vec<Vec<u32>>,
    /// Per CPU: its OPPs, kHz (empty when the file lists none).
    pub freqs_khz: Vec<Vec<u64>>,
    /// Per CPU: its energy-model node, when the file has a model.
    pub energy_model: Option<Vec<EmCpu>>,
}

/// Whether `text` is a LISA platform file: its first key is `platform-info:`.
pub fn sniff(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---")
        .is_some_and(|l| l == "platform-info:")
}

fn int(n: &Node) -> Option<u64> {
    n.scalar()?.parse().ok()
}

fn float(n: &Node) -> Option<f64> {
    n.scalar()?.parse().ok().filter(|v: &f64| v.is_finite())
}

fn cpu(n: &Node, cpus: u32) -> Option<u32> {
    int(n)
        .and_then(|c| u32::try_from(c).ok())
        .filter(|&c| c < cpus)
}

impl LisaPlatform {
    /// Parses and checks a `plat_info.yml` (`file` names it in errors).
    pub fn parse(file: &str, text: &str) -> Result<LisaPlatform, InputError> {
        let root = yaml_block::parse(text).map_err(|(line, m)| InputError::at(file, line, m))?;
        let err = |m: String| InputError::whole(file, m);
        let conf = root
            .get("platform-info")
            .and_then(|p| p.get("conf"))
            .ok_or_else(|| err("expected `platform-info:` with a `conf:` mapping".into()))?;
        let cpus = conf
            .get("cpus-count")
            .and_then(|n| int(n))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| (1..=MAX_CPUS).contains(&n))
            .ok_or_else(|| err(format!("expected `cpus-count`, 1 to {MAX_CPUS}")))?;
        let per_cpu = |key: &str| -> Result<Vec<Option<Rc<Node>>>, InputError> {
            let mut out = vec![None; cpus as usize];
            if let Some(m) = conf.get(key) {
                for (k, v) in m.entries() {
                    let c = k.parse::<u32>().ok().filter(|&c| c < cpus).ok_or_else(|| {
                        err(format!(
                            "`{key}` names CPU {}; expected 0 to {}",
                            shown(k),
                            cpus - 1
                        ))
                    })?;
                    out[c as usize] = Some(v.clone());
                }
            }
            Ok(out)
        };
        let orig = conf
            .get("cpu-capacities")
            .and_then(|c| c.get("orig"))
            .ok_or_else(|| err("expected `cpu-capacities: orig:`, each CPU's capacity".into()))?;
        let mut capacities = vec![None; cpus as usize];
        for (k, v) in orig.entries() {
            let c = k.parse::<u32>().ok().filter(|&c| c < cpus);
            let cap = int(v).filter(|&v| v <= 1024);
            match (c, cap) {
                (Some(c), Some(cap)) => capacities[c as usize] = Some(cap),
                _ => {
                    return Err(err(format!(
                        "`cpu-capacities: orig:` has {}: {}; expected a CPU below {cpus} and a \
                         capacity from 0 to 1024",
                        shown(k),
                        shown(v.scalar().unwrap_or("(not a number)"))
                    )))
                }
            }
        }
        let capacities = capacities
            .into_iter()
            .enumerate()
            .map(|(c, v)| v.ok_or_else(|| err(format!("CPU {c} has no `cpu-capacities: orig`"))))
            .collect::<Result<Vec<_>, _>>()?;
        let mut freq_domains = Vec::new();
        let mut seen = vec![false; cpus as usize];
        for d in conf.get("freq-domains").map_or(&[][..], |d| d.items()) {
            let mut dom = Vec::new();
            for c in d.items() {
                let c = cpu(c, cpus).ok_or_else(|| {
                    err(format!(
                        "`freq-domains` lists a CPU outside 0 to {}",
                        cpus - 1
                    ))
                })?;
                if std::mem::replace(&mut seen[c as usize], true) {
                    return Err(err(format!("`freq-domains` lists CPU {c} twice")));
                }
                dom.push(c);
            }
            freq_domains.push(dom);
        }
        if freq_domains.is_empty() {
            return Err(err(
                "expected `freq-domains`, the lists of CPUs that share a clock".into(),
            ));
        }
        if let Some(c) = seen.iter().position(|s| !s) {
            return Err(err(format!("CPU {c} is in no `freq-domains` list")));
        }
        let freqs_khz = per_cpu("freqs")?
            .into_iter()
            .map(|f| {
                f.map_or(Ok(Vec::new()), |f| {
                    f.items()
                        .iter()
                        .map(|v| int(v).ok_or_else(|| err("`freqs` holds a non-integer".into())))
                        .collect()
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let energy_model = match conf.get("nrg-model") {
            Some(em) if **em != Node::Null => Some(energy_model(em, cpus).map_err(err)?),
            _ => None,
        };
        Ok(LisaPlatform {
            name: conf.get("name").and_then(|n| n.scalar()).map(String::from),
            cpus,
            capacities,
            freq_domains,
            freqs_khz,
            energy_model,
        })
    }

    /// The idle-state names each CPU's energy model lists (empty without a model).
    pub fn idle_state_names(&self, cpu: u32) -> Vec<&str> {
        self.energy_model
            .as_ref()
            .and_then(|em| em.get(cpu as usize))
            .map(|c| c.idle.iter().map(|(n, _)| n.as_str()).collect())
            .unwrap_or_default()
    }

    /// Why `idle replay` cannot run on this file, as the error says it.
    pub fn replay_refusal(&self) -> String {
        let names = self.idle_state_names(0);
        let states = if names.is_empty() {
            "no idle states at all".to_string()
        } else {
            format!("the idle states ({}) without", names.join(", "))
        };
        format!(
            "a LISA plat_info.yml gives {states} exit latencies or target residencies, which the \
             governors need; give a CPU platform TOML (docs/cpu-platform.md; `torpor probe` \
             writes one from the device's sysfs) or a preset id"
        )
    }
}

/// The `nrg-model`'s `cpu_nodes`: per CPU, its `active_states` (an omap of frequency ->
/// `[capacity, power]`) and `idle_states` (an omap of name -> power).
fn energy_model(em: &Node, cpus: u32) -> Result<Vec<EmCpu>, String> {
    let nodes = em
        .get("cpu_nodes")
        .ok_or("`nrg-model` has no `cpu_nodes`")?
        .items();
    let mut out: Vec<Option<EmCpu>> = vec![None; cpus as usize];
    for n in nodes {
        let c = n
            .get("cpu")
            .and_then(|c| cpu(c, cpus))
            .ok_or("an energy-model CPU node without a `cpu` below `cpus-count`")?;
        let pairs = |key: &str| -> Vec<(String, Rc<Node>)> {
            n.get(key)
                .map(|s| {
                    s.items()
                        .iter()
                        .flat_map(|i| i.entries().to_vec())
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut active = Vec::new();
        for (f, v) in pairs("active_states") {
            let khz = f
                .parse()
                .map_err(|_| format!("CPU {c}'s active state {f}: expected kHz"))?;
            match v.items() {
                [cap, power] => match (float(cap), float(power)) {
                    (Some(cap), Some(power)) => active.push((khz, cap, power)),
                    _ => return Err(format!("CPU {c}'s active state {f}: expected two numbers")),
                },
                _ => {
                    return Err(format!(
                        "CPU {c}'s active state {f}: expected capacity, power"
                    ))
                }
            }
        }
        let mut idle = Vec::new();
        for (name, v) in pairs("idle_states") {
            let p = float(&v).ok_or(format!("CPU {c}'s idle state {name}: expected a power"))?;
            idle.push((name, p));
        }
        out[c as usize] = Some(EmCpu { active, idle });
    }
    out.into_iter()
        .enumerate()
        .map(|(c, e)| e.ok_or(format!("the energy model has no node for CPU {c}")))
        .collect()
}

#[cfg(test)]
mod tests;
