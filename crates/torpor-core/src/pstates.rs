//! P-state residency from a trace: time at each frequency while a CPU is not idle, as
//! idlestat's `-p` report counts it, fed `cpu_frequency` and `cpu_idle` events in trace order.
//! `torpor idle stats` prints it; `torpor idle replay` charges each CPU's running time at the
//! power of the frequency it ran at.
//!
//! Read for this module: idlestat 0.8 (`idlestat.c`: `cpu_change_pstate`, `cpu_pstate_idle`,
//! `cpu_pstate_running`, `open_current_pstate`, `close_current_pstate`, `alloc_pstate`,
//! `record_group_freq`, `check_pstate_composite`, `output_pstates`; `topology.c`:
//! `core_get_highest_freq`, `cluster_get_highest_freq`, `dump_cpu_topo_info`;
//! `default_report.c`: `default_pstate_single_freq`). What idlestat does, and so torpor:
//!
//! 1. Each CPU has a current frequency (unknown until its first `cpu_frequency` event) and an
//!    idle flag. Only time while the CPU is **not idle** counts: an interval at a frequency
//!    opens when the CPU leaves idle (`cpu_idle` exit, `cpu_pstate_running`) or, while it runs,
//!    when its frequency changes; it closes when the CPU enters an idle state
//!    (`cpu_pstate_idle`) or its frequency changes again. A frequency change of an idle CPU only
//!    sets the frequency the CPU will run at when it wakes. An event repeating a running CPU's
//!    frequency (cpufreq emits one at every driver call) also closes its interval and opens the
//!    next: another hit at the same frequency.
//! 2. Each closed interval adds one hit and its length to its frequency's row: min, max, total
//!    and the average (total / hits). An interval of zero or negative length is not recorded.
//!    Rows are the frequencies met, in rising order (`alloc_pstate`), each shown once it has a
//!    hit.
//! 3. A **cluster** (and an SMT **core**) runs at the highest frequency among its CPUs that are
//!    running with a known frequency, and is at no P-state while none is: its intervals open and
//!    close whenever that highest frequency changes (`record_group_freq`).
//! 4. An interval still open when the trace ends is not recorded (idlestat's own trace files end
//!    with a `cpu_frequency` event of 0 kHz per CPU, written by `output_pstates`, which closes
//!    them; a 0 kHz event is read here as "frequency unknown from now on").
//!
//! Where torpor differs from idlestat, on purpose, each in cases real traces rarely hold:
//! idlestat follows a CPU's idle flag only from its first `cpu_frequency` event, so a CPU idle
//! at that moment counts as running for its cluster until its next `cpu_idle` event, and
//! frequency changes before that next event reopen the interval without recording it; torpor
//! knows the idle flag from the CPU's first `cpu_idle` event. idlestat closes the interval
//! again on a second entry without an exit (counting the time twice) and reopens it on a second
//! exit (losing the time since the first); torpor counts each running interval once. idlestat's
//! SMT core takes the highest frequency of all its CPUs, idle or not (`core_get_highest_freq`
//! does not look at the idle flag, `cluster_get_highest_freq` does); torpor applies the
//! cluster's rule to cores too, so a core's P-state time is time it ran. idlestat prints a
//! frequency below 1000 kHz with the unit `Hz`; torpor prints kHz.
//!
//! What idlestat leaves unsaid and torpor counts: running time at an **unknown frequency** (a
//! CPU that left idle before its first `cpu_frequency` event, until that event or its next
//! entry), per CPU, which is in no row; intervals of zero or negative length; intervals open at
//! the end.
//!
//! Memory is constant in the trace's length: per CPU, core and cluster a current frequency and
//! at most [`MAX_FREQUENCIES`] rows; per cluster and core the frequency each of its CPUs runs
//! at.

use serde::Serialize;

/// Distinct frequencies a CPU, core or cluster keeps a row for (real OPP tables have a few
/// dozen); intervals at further ones are counted in [`PstateDropped`] instead.
pub const MAX_FREQUENCIES: usize = 128;

/// One row of a section: a frequency with at least one interval. Times in microseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PstateRow {
    pub freq_khz: u32,
    pub min_us: f64,
    pub max_us: f64,
    pub avg_us: f64,
    pub total_us: f64,
    pub hits: u64,
}

/// A CPU's running time at an unknown frequency: it left idle before its first
/// `cpu_frequency` event (or after a 0 kHz one).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct UnknownFrequency {
    pub cpu: u32,
    pub intervals: u64,
    pub total_ns: u64,
}

/// What the P-state rows leave out, and why.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct PstateDropped {
    /// Intervals (of CPUs, cores and clusters) whose end is not after their start.
    pub non_positive_intervals: u64,
    /// CPU intervals at a known frequency still open when the trace ends.
    pub open_at_end: u64,
    /// Intervals at a frequency beyond a section's first [`MAX_FREQUENCIES`], and their time.
    pub beyond_max_frequencies: u64,
    pub beyond_max_frequencies_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct FreqAcc {
    khz: u32,
    hits: u64,
    total_ns: u64,
    min_ns: u64,
    max_ns: u64,
}

/// A CPU's, core's or cluster's rows and the interval it is in (idlestat's `struct
/// cpufreq_pstates`).
#[derive(Clone, Debug, Default)]
struct Residency {
    /// Rows by rising frequency.
    accs: Vec<FreqAcc>,
    /// The frequency it runs (or, for an idle CPU, will run) at.
    current: Option<u32>,
    /// Start of the open interval at `current`.
    since: Option<u64>,
    /// The row of the last recorded interval.
    last_at: usize,
}

impl Residency {
    /// Ends the open interval at `ts`, recording it.
    fn close(&mut self, ts: u64, dropped: &mut PstateDropped) {
        let (Some(since), Some(khz)) = (self.since.take(), self.current) else {
            return;
        };
        if ts <= since {
            dropped.non_positive_intervals += 1;
            return;
        }
        let d = ts - since;
        // Most intervals are at the frequency of the one before.
        let found = match self.accs.get(self.last_at) {
            Some(a) if a.khz == khz => Ok(self.last_at),
            _ => self.accs.binary_search_by_key(&khz, |a| a.khz),
        };
        let at = match found {
            Ok(i) => i,
            Err(_) if self.accs.len() >= MAX_FREQUENCIES => {
                dropped.beyond_max_frequencies += 1;
                dropped.beyond_max_frequencies_ns += d;
                return;
            }
            Err(i) => {
                self.accs.insert(
                    i,
                    FreqAcc {
                        khz,
                        hits: 0,
                        total_ns: 0,
                        min_ns: u64::MAX,
                        max_ns: 0,
                    },
                );
                i
            }
        };
        self.last_at = at;
        let a = &mut self.accs[at];
        a.hits += 1;
        a.total_ns += d;
        a.min_ns = a.min_ns.min(d);
        a.max_ns = a.max_ns.max(d);
    }

    /// Moves to `khz` at `ts`: ends the open interval and opens one at the new frequency.
    fn switch(&mut self, ts: u64, khz: Option<u32>, dropped: &mut PstateDropped) {
        self.close(ts, dropped);
        self.current = khz;
        self.since = khz.map(|_| ts);
    }

    fn rows(&self) -> Vec<PstateRow> {
        let us = |ns: u64| ns as f64 / 1000.0;
        self.accs
            .iter()
            .filter(|a| a.hits > 0)
            .map(|a| PstateRow {
                freq_khz: a.khz,
                min_us: us(a.min_ns),
                max_us: us(a.max_ns),
                avg_us: a.total_ns as f64 / a.hits as f64 / 1000.0,
                total_us: us(a.total_ns),
                hits: a.hits,
            })
            .collect()
    }
}

/// One CPU.
#[derive(Clone, Debug, Default)]
struct CpuTrack {
    res: Residency,
    idle: bool,
    /// Start of a running interval at an unknown frequency.
    unknown_since: Option<u64>,
    unknown: UnknownFrequency,
}

impl CpuTrack {
    /// The frequency it adds to its core and cluster: its own while it runs at a known one.
    fn running_at(&self) -> Option<u32> {
        if self.idle {
            None
        } else {
            self.res.current
        }
    }

    fn close_unknown(&mut self, ts: u64) {
        if let Some(since) = self.unknown_since.take() {
            if ts > since {
                self.unknown.intervals += 1;
                self.unknown.total_ns += ts - since;
            }
        }
    }
}

/// A cluster or a core: its rows, and the frequency each of its CPUs runs at.
#[derive(Clone, Debug, Default)]
struct GroupTrack {
    res: Residency,
    /// Per member CPU (by its slot in the group), the frequency it runs at (`None`: idle or
    /// unknown). The group's `res.current` is always the highest of these (`None` below any
    /// frequency).
    running: Vec<Option<u32>>,
    /// How many members are at that highest: a change of one member needs a look at the
    /// others only when it lowers the last one there.
    at_highest: usize,
}

impl GroupTrack {
    /// Its member in `slot` went from running at `before` to `after` (another frequency):
    /// the highest frequency among its running CPUs now.
    fn highest_after(
        &mut self,
        slot: usize,
        before: Option<u32>,
        after: Option<u32>,
    ) -> Option<u32> {
        self.running[slot] = after;
        let highest = self.res.current;
        if after > highest {
            self.at_highest = 1;
            after
        } else if after == highest {
            self.at_highest += 1;
            highest
        } else if before == highest && self.at_highest > 1 {
            self.at_highest -= 1;
            highest
        } else if before == highest {
            let highest = self.running.iter().copied().max().flatten();
            self.at_highest = self.running.iter().filter(|&&f| f == highest).count();
            highest
        } else {
            highest
        }
    }
}

/// The P-state residency being built: per CPU, and per group (cores and clusters, indexed as
/// the caller's layout indexes them).
#[derive(Clone, Debug, Default)]
pub struct PstateTracker {
    cpus: Vec<CpuTrack>,
    groups: Vec<GroupTrack>,
    /// Per CPU, the groups it belongs to, each with the CPU's slot in it.
    cpu_groups: Vec<Vec<(usize, usize)>>,
    dropped: PstateDropped,
    events: u64,
}

impl PstateTracker {
    /// A tracker for `groups` groups, CPU `c` belonging to `cpu_groups[c]` (CPUs beyond that
    /// list, or all of them when it is empty, belong to none).
    pub fn new(groups: usize, cpu_groups: Vec<Vec<usize>>) -> PstateTracker {
        let mut tracks = vec![GroupTrack::default(); groups];
        let cpu_groups = cpu_groups
            .into_iter()
            .map(|of| {
                of.into_iter()
                    .map(|g| {
                        let t: &mut GroupTrack = &mut tracks[g];
                        t.running.push(None);
                        t.at_highest += 1;
                        (g, t.running.len() - 1)
                    })
                    .collect()
            })
            .collect();
        PstateTracker {
            cpus: Vec::new(),
            groups: tracks,
            cpu_groups,
            dropped: PstateDropped::default(),
            events: 0,
        }
    }

    /// A `cpu_frequency` event: CPU `cpu` runs at `khz` from `ts` (0 kHz: unknown from `ts`).
    pub fn cpu_frequency(&mut self, ts: u64, cpu: u32, khz: u32) {
        self.events += 1;
        let khz = (khz > 0).then_some(khz);
        let dropped = &mut self.dropped;
        let t = track(&mut self.cpus, cpu);
        let before = t.running_at();
        if t.idle {
            t.res.current = khz;
            return;
        }
        t.close_unknown(ts);
        t.res.switch(ts, khz, dropped);
        if khz.is_none() {
            t.unknown_since = Some(ts);
        }
        self.regroup(ts, cpu, before);
    }

    /// A `cpu_idle` event of `cpu`: an entry (`entered`) or an exit. A second entry without an
    /// exit, or an exit of a running CPU, changes nothing.
    pub fn cpu_idle(&mut self, ts: u64, cpu: u32, entered: bool) {
        let dropped = &mut self.dropped;
        let t = track(&mut self.cpus, cpu);
        if t.idle == entered {
            return;
        }
        let before = t.running_at();
        t.idle = entered;
        if entered {
            t.close_unknown(ts);
            t.res.close(ts, dropped);
        } else if t.res.current.is_some() {
            t.res.since = Some(ts);
        } else {
            t.unknown_since = Some(ts);
        }
        self.regroup(ts, cpu, before);
    }

    /// `cpu`'s groups after it went from running at `before` to its current state.
    fn regroup(&mut self, ts: u64, cpu: u32, before: Option<u32>) {
        let after = self.cpus[cpu as usize].running_at();
        if before == after {
            return;
        }
        let Some(groups) = self.cpu_groups.get(cpu as usize) else {
            return;
        };
        for &(g, slot) in groups {
            let t = &mut self.groups[g];
            let highest = t.highest_after(slot, before, after);
            if highest != t.res.current {
                t.res.switch(ts, highest, &mut self.dropped);
            }
        }
    }

    /// `cpu_frequency` events fed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The rows of CPU `cpu`.
    pub fn cpu_rows(&self, cpu: u32) -> Vec<PstateRow> {
        self.cpus
            .get(cpu as usize)
            .map(|t| t.res.rows())
            .unwrap_or_default()
    }

    /// The rows of group `g`.
    pub fn group_rows(&self, g: usize) -> Vec<PstateRow> {
        self.groups[g].res.rows()
    }

    /// CPU `cpu`'s recorded time (ns) at each frequency, by rising frequency.
    pub fn cpu_time_ns(&self, cpu: u32) -> Vec<(u32, u64)> {
        self.cpus
            .get(cpu as usize)
            .map(|t| t.res.accs.iter().map(|a| (a.khz, a.total_ns)).collect())
            .unwrap_or_default()
    }

    /// CPU `cpu`'s running time at an unknown frequency.
    pub fn cpu_unknown(&self, cpu: u32) -> UnknownFrequency {
        let mut u = self
            .cpus
            .get(cpu as usize)
            .map(|t| t.unknown.clone())
            .unwrap_or_default();
        u.cpu = cpu;
        u
    }

    /// How many CPUs it has seen (the highest CPU number plus one).
    pub fn cpu_count(&self) -> usize {
        self.cpus.len()
    }

    /// What was left out, with the CPU intervals open at the end counted.
    pub fn dropped(&self) -> PstateDropped {
        let mut d = self.dropped.clone();
        d.open_at_end = self.cpus.iter().filter(|t| t.res.since.is_some()).count() as u64;
        d
    }
}

/// CPU `cpu`'s track, added (with those below it) on its first event.
fn track(cpus: &mut Vec<CpuTrack>, cpu: u32) -> &mut CpuTrack {
    let c = cpu as usize;
    if cpus.len() <= c {
        cpus.resize_with(c + 1, CpuTrack::default);
    }
    &mut cpus[c]
}

#[cfg(test)]
mod tests;
