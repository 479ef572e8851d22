//! The active energy of a replay: each CPU's traced running time, charged at the traced
//! frequency's OPP power or at the OPP the `performance` governor holds, the same in every
//! column.

use serde::Serialize;

use crate::pstates::PstateTracker;

use super::layout::Layout;

/// A CPU's running time as the active energy charges it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CpuActive {
    pub cpu: u32,
    /// At a traced frequency the platform lists with a power, charged at that power.
    pub traced_ns: u64,
    /// At an unknown frequency (before the CPU's first `cpu_frequency` event).
    pub unknown_frequency_ns: u64,
    /// At a traced frequency the platform lists no power for.
    pub unlisted_frequency_ns: u64,
    /// The OPP the unknown and unlisted time is charged at (the policy's maximum), kHz.
    pub fallback_khz: Option<u64>,
    /// `None` when the fallback OPP has no power and some time needs it.
    pub energy_mj: Option<f64>,
}

/// The running time of every CPU and how it was charged (the module doc gives the rule).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ActiveTime {
    /// `traced frequency`, `highest OPP` (no `cpu_frequency` events) or `traced frequency,
    /// else highest OPP`.
    pub rule: &'static str,
    pub cpu_frequency_events: u64,
    pub traced_ns: u64,
    pub unknown_frequency_ns: u64,
    pub unlisted_frequency_ns: u64,
    /// Over all CPUs; `None` when some CPU's is.
    pub energy_mj: Option<f64>,
    /// CPUs with running time, by number.
    pub per_cpu: Vec<CpuActive>,
}

/// Charges each CPU's running time in `tracker` (its P-state residency and its time at an
/// unknown frequency) at the power of its cluster's OPPs in `layout`.
pub(super) fn active_time(layout: &Layout, tracker: &PstateTracker) -> ActiveTime {
    let mut per_cpu = Vec::new();
    for cpu in 0..tracker.cpu_count() as u32 {
        let Some(table) = layout
            .cpu_cluster
            .get(cpu as usize)
            .copied()
            .flatten()
            .map(|k| &layout.clusters[k])
        else {
            continue;
        };
        let mut a = CpuActive {
            cpu,
            traced_ns: 0,
            unknown_frequency_ns: tracker.cpu_unknown(cpu).total_ns,
            unlisted_frequency_ns: 0,
            fallback_khz: table.held_khz,
            energy_mj: None,
        };
        // mW x ns = 1e-9 mJ.
        let mut mj = 0.0;
        for (khz, ns) in tracker.cpu_time_ns(cpu) {
            match table.active_mw(u64::from(khz)) {
                Some(mw) => {
                    a.traced_ns += ns;
                    mj += mw * ns as f64 * 1e-9;
                }
                None => a.unlisted_frequency_ns += ns,
            }
        }
        let fallback_ns = a.unknown_frequency_ns + a.unlisted_frequency_ns;
        let fallback_mw = table.held_khz.and_then(|khz| table.active_mw(khz));
        a.energy_mj = match fallback_mw {
            Some(mw) => Some(mj + mw * fallback_ns as f64 * 1e-9),
            None if fallback_ns == 0 => Some(mj),
            None => None,
        };
        if a.traced_ns + fallback_ns > 0 {
            per_cpu.push(a);
        }
    }
    let sum = |f: fn(&CpuActive) -> u64| per_cpu.iter().map(f).sum::<u64>();
    let (traced_ns, unknown_frequency_ns, unlisted_frequency_ns) = (
        sum(|a| a.traced_ns),
        sum(|a| a.unknown_frequency_ns),
        sum(|a| a.unlisted_frequency_ns),
    );
    let events = tracker.events();
    let rule = if events == 0 {
        "highest OPP"
    } else if unknown_frequency_ns + unlisted_frequency_ns == 0 {
        "traced frequency"
    } else {
        "traced frequency, else highest OPP"
    };
    // Without any running time there is nothing to charge, whatever the platform has.
    let energy_mj = per_cpu
        .iter()
        .try_fold(0.0, |total, a| a.energy_mj.map(|mj| total + mj));
    ActiveTime {
        rule,
        cpu_frequency_events: events,
        traced_ns,
        unknown_frequency_ns,
        unlisted_frequency_ns,
        energy_mj,
        per_cpu,
    }
}

/// What the active energy charged, and by which rule.
pub(super) fn active_note(a: &ActiveTime) -> String {
    let ms = |ns: u64| ns as f64 / 1e6;
    let fallback = "the OPP the performance governor holds (the policy's maximum), as torpor's \
                    simulation charges a running CPU without DVFS";
    let mut note = if a.cpu_frequency_events == 0 {
        format!(
            "active energy: the trace has no cpu_frequency events; the CPUs' running time \
             ({:.3} ms, each cpu_idle exit to the next entry) is charged at {fallback}",
            ms(a.unknown_frequency_ns + a.unlisted_frequency_ns + a.traced_ns)
        )
    } else {
        format!(
            "active energy: running time at the traced frequency's OPP power ({} cpu_frequency \
             events) for {:.3} ms; at {fallback} for {:.3} ms before a CPU's first \
             cpu_frequency event and {:.3} ms at frequencies the platform lists no power for",
            a.cpu_frequency_events,
            ms(a.traced_ns),
            ms(a.unknown_frequency_ns),
            ms(a.unlisted_frequency_ns)
        )
    };
    if a.energy_mj.is_none() {
        note += "; not available: the platform gives no power for the OPP needed";
    }
    note
}
