//! A LISA plat_info.yml as the platform `idle stats` reads (the reader in `input` knows
//! nothing of this command).

use super::{StatsCluster, StatsPlatform};
use crate::input::lisa_platform::LisaPlatform;

/// The platform `idle stats` reads: each frequency domain a cluster, each CPU its own
/// core (the file does not say which CPUs are SMT siblings; LISA's platforms have none),
/// and no C-state table (states named by index), with notes saying why.
pub(super) fn platform(lisa: &LisaPlatform) -> StatsPlatform {
    let names = lisa.idle_state_names(0);
    let mut notes = vec![format!(
        "topology from a LISA plat_info.yml: its {} frequency domains as clusters, each CPU \
         its own core",
        lisa.freq_domains.len()
    )];
    notes.push(if names.is_empty() {
        "the LISA plat_info.yml lists no idle states".to_string()
    } else {
        format!(
            "the LISA plat_info.yml names the idle states {} but gives no target \
             residencies: states are named by index, over and under are left out",
            names.join(", ")
        )
    });
    StatsPlatform {
        cluster: lisa
            .freq_domains
            .iter()
            .map(|d| StatsCluster {
                cpus: Some(d.clone()),
                cores: None,
                state: None,
            })
            .collect(),
        state: Vec::new(),
        notes,
    }
}
