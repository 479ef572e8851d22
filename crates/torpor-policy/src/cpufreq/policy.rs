//! A cpufreq policy: one frequency domain (a cluster's CPUs, which share a clock), as
//! `struct cpufreq_policy` and the cpufreq core keep it in Linux v6.12 (drivers/cpufreq/cpufreq.c,
//! include/linux/cpufreq.h, drivers/cpufreq/freq_table.c).
//!
//! What it holds: the driver's frequency table (kHz, ascending, as `freq_table_sorted ==
//! CPUFREQ_TABLE_SORTED_ASCENDING`), which entries the energy model marked inefficient, the
//! hardware limits (`cpuinfo.min_freq`/`max_freq`), the frequency QoS requests (`scaling_min_freq`
//! and `scaling_max_freq` are two of them), the effective limits (`policy->min`/`max`), the current
//! frequency and the transition latency.
//!
//! Limits (`cpufreq_set_policy`, run whenever a QoS aggregate changes):
//! 1. Read the QoS floor and cap (`freq_qos_read_value`).
//! 2. Verify them as `cpufreq_frequency_table_verify` does: clamp the cap into the hardware
//!    range, then the floor into [hardware min, cap]; if no table frequency lies in [floor, cap],
//!    the cap becomes the highest table frequency at or below it, and the clamps run again.
//! 3. Resolve the floor to the lowest table frequency at or above it (`CPUFREQ_RELATION_L`) and
//!    the cap to the highest at or below it (`CPUFREQ_RELATION_H`).
//! 4. The governor's `limits` callback runs next (the caller does that: see `Governor`).
//!
//! Resolving a target (`__resolve_freq`, `cpufreq_frequency_table_target`):
//! 1. Clamp the target into [min, max].
//! 2. `L`: the first table frequency at or above it, else the highest; `H`: the last at or below
//!    it, else the lowest; `C`: the closer of the two around it, the lower on a tie (the
//!    ascending-table walks `cpufreq_table_find_index_al`/`_ah`/`_ac`).
//! 3. With an efficient relation (`LE`/`HE`) and efficiencies available, the walk skips the
//!    inefficient entries; if its answer falls outside [min, max] it walks again over all of them.
//!    `cpufreq_driver_resolve_freq`, which schedutil calls, uses `LE`.

use crate::qos::freq::{FreqQos, NO_MAX_KHZ};
use crate::qos::Holder;

/// `CPUFREQ_ETERNAL` as `cpuinfo.transition_latency` holds it (unsigned -1): what cpufreq-dt sets
/// when no OPP gives a `clock-latency-ns`.
pub const CPUFREQ_ETERNAL_NS: u32 = u32::MAX;

/// The holder of the `scaling_min_freq` request (`policy->min_freq_req`).
pub const SCALING_MIN_HOLDER: Holder = Holder::MAX;
/// The holder of the `scaling_max_freq` request (`policy->max_freq_req`).
pub const SCALING_MAX_HOLDER: Holder = Holder::MAX - 1;

/// `CPUFREQ_RELATION_*`: which table frequency a target resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Lowest frequency at or above the target.
    L,
    /// Highest frequency at or below the target.
    H,
    /// `L`, among efficient frequencies if possible (`CPUFREQ_RELATION_LE`).
    Le,
    /// `H`, among efficient frequencies if possible (`CPUFREQ_RELATION_HE`).
    He,
    /// The closest frequency, the lower on a tie (`CPUFREQ_RELATION_C`).
    C,
    /// `C`, among efficient frequencies if possible (`CPUFREQ_RELATION_CE`).
    Ce,
}

impl Relation {
    fn efficient(self) -> bool {
        matches!(self, Relation::Le | Relation::He | Relation::Ce)
    }
}

/// A frequency the driver was asked to set: the hardware moves from `from_khz` to `to_khz` within
/// the policy's transition latency. `from_khz == to_khz` happens on a fast switch, which calls the
/// driver (and emits `cpu_frequency`) even when nothing changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreqChange {
    pub from_khz: u32,
    pub to_khz: u32,
}

/// What a policy is built from: the driver's table and the hardware's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    /// The driver's frequencies, kHz, strictly ascending, at least one.
    pub freqs_khz: Vec<u32>,
    /// Per entry, whether the energy model marked it inefficient (`CPUFREQ_INEFFICIENT_FREQ`);
    /// empty when no energy model is registered.
    pub inefficient: Vec<bool>,
    /// `cpuinfo.transition_latency`, ns ([`CPUFREQ_ETERNAL_NS`] when unknown).
    pub transition_latency_ns: u32,
    /// `policy->transition_delay_us` when the driver sets one (scmi-cpufreq does), else `None`.
    pub transition_delay_us: Option<u32>,
    /// `arch_scale_cpu_capacity()` of the policy's CPUs.
    pub capacity: u64,
    /// CPUs in the policy (`policy->cpus`); more than one makes schedutil take its shared path.
    pub cpus: usize,
    /// Whether the driver switches in the caller's context (`fast_switch_enabled`; cpufreq-dt
    /// does not, scmi-cpufreq and qcom-cpufreq-hw do).
    pub fast_switch: bool,
    /// The frequency the CPUs run at when the policy starts (`policy->cur` from the driver).
    pub initial_khz: u32,
}

/// One frequency domain's policy.
#[derive(Clone, Debug, PartialEq)]
pub struct CpufreqPolicy {
    freq_table: Vec<u32>,
    inefficient: Vec<bool>,
    efficiencies_available: bool,
    min_khz: u32,
    max_khz: u32,
    cur_khz: u32,
    qos: FreqQos,
    transition_latency_ns: u32,
    transition_delay_us: Option<u32>,
    capacity: u64,
    cpus: usize,
    fast_switch: bool,
}

impl CpufreqPolicy {
    /// The policy as `cpufreq_online` leaves it: the user's two requests at their defaults (no
    /// floor, no cap), the limits computed from them, running at `initial_khz`.
    ///
    /// # Panics
    /// On a spec the platform checks refuse (an empty or unordered table).
    pub fn new(spec: &PolicySpec) -> CpufreqPolicy {
        assert!(
            !spec.freqs_khz.is_empty() && spec.freqs_khz.windows(2).all(|w| w[0] < w[1]),
            "a policy needs an ascending frequency table"
        );
        let mut inefficient = spec.inefficient.clone();
        inefficient.resize(spec.freqs_khz.len(), false);
        let mut qos = FreqQos::default();
        qos.set_min(SCALING_MIN_HOLDER, 0);
        qos.set_max(SCALING_MAX_HOLDER, NO_MAX_KHZ);
        let mut policy = CpufreqPolicy {
            efficiencies_available: inefficient.iter().any(|&i| i),
            freq_table: spec.freqs_khz.clone(),
            inefficient,
            min_khz: spec.freqs_khz[0],
            max_khz: *spec.freqs_khz.last().unwrap(),
            cur_khz: spec.initial_khz,
            qos,
            transition_latency_ns: spec.transition_latency_ns,
            transition_delay_us: spec.transition_delay_us,
            capacity: spec.capacity,
            cpus: spec.cpus.max(1),
            fast_switch: spec.fast_switch,
        };
        policy.update_limits();
        policy
    }

    /// The frequency table, kHz ascending.
    pub fn freq_table(&self) -> &[u32] {
        &self.freq_table
    }

    /// `cpuinfo.min_freq`.
    pub fn cpuinfo_min_khz(&self) -> u32 {
        self.freq_table[0]
    }

    /// `cpuinfo.max_freq`: the reference frequency of capacity and frequency invariance.
    pub fn cpuinfo_max_khz(&self) -> u32 {
        *self.freq_table.last().unwrap()
    }

    /// `policy->min`.
    pub fn min_khz(&self) -> u32 {
        self.min_khz
    }

    /// `policy->max`.
    pub fn max_khz(&self) -> u32 {
        self.max_khz
    }

    /// `policy->cur`.
    pub fn cur_khz(&self) -> u32 {
        self.cur_khz
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// `policy_is_shared()`: more than one CPU in the policy.
    pub fn is_shared(&self) -> bool {
        self.cpus > 1
    }

    pub fn cpus(&self) -> usize {
        self.cpus
    }

    pub fn fast_switch(&self) -> bool {
        self.fast_switch
    }

    /// `cpuinfo.transition_latency`, ns.
    pub fn transition_latency_ns(&self) -> u32 {
        self.transition_latency_ns
    }

    /// `cpufreq_policy_transition_delay_us()`: the driver's own figure if it set one; else the
    /// transition latency in whole us plus half of it; else (a latency under 1 us) 1000 us. This
    /// is schedutil's default `rate_limit_us`.
    pub fn transition_delay_us(&self) -> u32 {
        if let Some(us) = self.transition_delay_us.filter(|&us| us > 0) {
            return us;
        }
        let latency_us = self.transition_latency_ns / 1000;
        if latency_us > 0 {
            latency_us + (latency_us >> 1)
        } else {
            1000
        }
    }

    /// `arch_freq_scale` as `topology_set_freq_scale` sets it from cpufreq: `(cur << 10) /
    /// cpuinfo.max_freq`. PELT scales running time by it (frequency invariance).
    pub fn freq_scale(&self) -> u64 {
        (u64::from(self.cur_khz) << 10) / u64::from(self.cpuinfo_max_khz())
    }

    /// The frequency QoS requests of the policy (`policy->constraints`). After changing them,
    /// call [`CpufreqPolicy::update_limits`] and, when it reports a change, the governor's
    /// `limits`.
    pub fn qos_mut(&mut self) -> &mut FreqQos {
        &mut self.qos
    }

    /// Writes `scaling_min_freq` (kHz); true when the QoS floor changed (the kernel then runs
    /// `cpufreq_set_policy`).
    pub fn store_scaling_min_freq(&mut self, khz: u32) -> bool {
        self.qos.set_min(SCALING_MIN_HOLDER, i64::from(khz))
    }

    /// Writes `scaling_max_freq` (kHz); true when the QoS cap changed.
    pub fn store_scaling_max_freq(&mut self, khz: u32) -> bool {
        self.qos.set_max(SCALING_MAX_HOLDER, i64::from(khz))
    }

    /// `cpufreq_set_policy`'s limits: verify the QoS floor and cap against the table and resolve
    /// them to table frequencies. True when `min` or `max` moved.
    pub fn update_limits(&mut self) -> bool {
        let clamp_u32 = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
        let (mut min, mut max) = (clamp_u32(self.qos.min_khz()), clamp_u32(self.qos.max_khz()));
        let (lo, hi) = (self.cpuinfo_min_khz(), self.cpuinfo_max_khz());
        // cpufreq_verify_within_cpu_limits: the cap first, then the floor under it.
        let within = |min: &mut u32, max: &mut u32| {
            *max = (*max).clamp(lo, hi);
            *min = (*min).clamp(lo, *max);
        };
        within(&mut min, &mut max);
        if !self.freq_table.iter().any(|&f| f >= min && f <= max) {
            max = self
                .freq_table
                .iter()
                .copied()
                .filter(|&f| f <= max)
                .max()
                .unwrap_or(0);
            within(&mut min, &mut max);
        }
        let old = (self.min_khz, self.max_khz);
        // The kernel writes the verified values into the policy, then resolves the floor
        // within them, then the cap.
        self.min_khz = min;
        self.max_khz = max;
        self.min_khz = self.resolve_freq(min, Relation::L);
        self.max_khz = self.resolve_freq(max, Relation::H);
        old != (self.min_khz, self.max_khz)
    }

    /// `__resolve_freq`: the table frequency `target_khz` maps to under `relation`, within the
    /// limits.
    pub fn resolve_freq(&self, target_khz: u32, relation: Relation) -> u32 {
        let target = target_khz.clamp(self.min_khz, self.max_khz);
        let efficient = self.efficiencies_available && relation.efficient();
        let idx = match self.find(target, relation, efficient) {
            Some(i) if !efficient || self.in_limits(i) => i,
            _ => self
                .find(target, relation, false)
                .expect("the table is not empty"),
        };
        self.freq_table[idx]
    }

    fn in_limits(&self, idx: usize) -> bool {
        let f = self.freq_table[idx];
        f >= self.min_khz && f <= self.max_khz
    }

    /// The ascending-table walks: `_al` for `L`, `_ah` for `H`, `_ac` for `C`, over all entries
    /// or only the efficient ones. `None` only when no entry is walked.
    fn find(&self, target: u32, relation: Relation, efficient: bool) -> Option<usize> {
        let walked = (0..self.freq_table.len()).filter(|&i| !(efficient && self.inefficient[i]));
        let mut best: Option<usize> = None;
        for i in walked {
            let f = self.freq_table[i];
            match relation {
                Relation::L | Relation::Le => {
                    if f >= target {
                        return Some(i);
                    }
                    best = Some(i);
                }
                Relation::H | Relation::He | Relation::C | Relation::Ce => {
                    if f == target {
                        return Some(i);
                    }
                    if f < target {
                        best = Some(i);
                        continue;
                    }
                    let Some(b) = best else { return Some(i) };
                    let closer_above = target - self.freq_table[b] > f - target;
                    let closest = matches!(relation, Relation::C | Relation::Ce);
                    return Some(if closest && closer_above { i } else { b });
                }
            }
        }
        best
    }

    /// `__cpufreq_driver_target`: resolve `target_khz` and set it unless it is the current
    /// frequency (drivers without `CPUFREQ_NEED_UPDATE_LIMITS`). The governors of the slow path
    /// (and performance, powersave) go through here.
    pub fn driver_target(&mut self, target_khz: u32, relation: Relation) -> Option<FreqChange> {
        let to = self.resolve_freq(target_khz, relation);
        if to == self.cur_khz {
            return None;
        }
        Some(self.set_cur(to))
    }

    /// `cpufreq_driver_fast_switch`: clamp into the limits and let the driver pick the lowest
    /// table frequency at or above it (the `CPUFREQ_RELATION_L` its `fast_switch` implements);
    /// the driver is called, and `cur` written, even when it does not change.
    pub fn fast_switch_to(&mut self, target_khz: u32) -> FreqChange {
        let to = self.resolve_freq(target_khz, Relation::L);
        self.set_cur(to)
    }

    /// `cpufreq_policy_apply_limits`: a current frequency above the cap goes down to it (`HE`),
    /// one below the floor up to it (`LE`).
    pub fn apply_limits(&mut self) -> Option<FreqChange> {
        if self.max_khz < self.cur_khz {
            self.driver_target(self.max_khz, Relation::He)
        } else if self.min_khz > self.cur_khz {
            self.driver_target(self.min_khz, Relation::Le)
        } else {
            None
        }
    }

    fn set_cur(&mut self, to_khz: u32) -> FreqChange {
        let change = FreqChange {
            from_khz: self.cur_khz,
            to_khz,
        };
        self.cur_khz = to_khz;
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hi3660's cluster0 table (hi3660.dtsi), with `ineff` marked inefficient.
    fn policy(ineff: &[u32]) -> CpufreqPolicy {
        let freqs = vec![533_000, 999_000, 1_402_000, 1_709_000, 1_844_000];
        CpufreqPolicy::new(&PolicySpec {
            inefficient: freqs.iter().map(|f| ineff.contains(f)).collect(),
            freqs_khz: freqs,
            transition_latency_ns: 300_000,
            transition_delay_us: None,
            capacity: 462,
            cpus: 4,
            fast_switch: false,
            initial_khz: 1_844_000,
        })
    }

    #[test]
    fn relation_l_takes_the_lowest_opp_at_or_above_the_target_within_the_limits() {
        let mut p = policy(&[]);
        // By hand from the table: 533 000 and below -> 533 000; just above an OPP -> the next.
        for (target, want) in [
            (0, 533_000),
            (533_000, 533_000),
            (533_001, 999_000),
            (1_402_000, 1_402_000),
            (1_800_000, 1_844_000),
            (9_999_999, 1_844_000),
        ] {
            assert_eq!(p.resolve_freq(target, Relation::L), want, "L {target}");
        }
        // H: the highest at or below.
        for (target, want) in [(0, 533_000), (998_999, 533_000), (1_709_000, 1_709_000)] {
            assert_eq!(p.resolve_freq(target, Relation::H), want, "H {target}");
        }
        // A cap of 1.5 GHz resolves down to 1 402 000 (RELATION_H); a floor of 1 GHz up to
        // 1 402 000 (RELATION_L); targets clamp into [1 402 000, 1 402 000].
        p.store_scaling_max_freq(1_500_000);
        p.store_scaling_min_freq(1_000_000);
        assert!(p.update_limits());
        assert_eq!((p.min_khz(), p.max_khz()), (1_402_000, 1_402_000));
        assert_eq!(p.resolve_freq(0, Relation::L), 1_402_000);
        assert_eq!(p.resolve_freq(2_000_000, Relation::L), 1_402_000);
    }

    #[test]
    fn a_floor_above_the_cap_yields_to_the_cap_and_limits_outside_the_table_clamp() {
        let mut p = policy(&[]);
        // Floor 1.8 GHz, cap 1 GHz: verify clamps the floor under the cap (1 000 000); no OPP in
        // [1 000 000, 1 000 000], so the cap becomes the highest OPP below, 999 000, and the
        // floor follows it.
        p.store_scaling_min_freq(1_800_000);
        p.store_scaling_max_freq(1_000_000);
        p.update_limits();
        assert_eq!((p.min_khz(), p.max_khz()), (999_000, 999_000));
        // A cap under the whole table: clamped up to cpuinfo.min_freq.
        p.store_scaling_min_freq(0);
        p.store_scaling_max_freq(100_000);
        p.update_limits();
        assert_eq!((p.min_khz(), p.max_khz()), (533_000, 533_000));
        // Another holder's higher cap does not lift the sysfs one: the lowest cap wins.
        p.qos_mut().set_max(7, 1_600_000);
        assert!(!p.update_limits());
        p.store_scaling_max_freq(u32::MAX);
        assert!(p.update_limits());
        assert_eq!(p.max_khz(), 1_402_000);
    }

    #[test]
    fn efficient_relations_skip_inefficient_opps_unless_that_leaves_the_limits() {
        // 999 000 marked inefficient: LE for 600 000 skips it to 1 402 000; L does not.
        let mut p = policy(&[999_000]);
        assert_eq!(p.resolve_freq(600_000, Relation::L), 999_000);
        assert_eq!(p.resolve_freq(600_000, Relation::Le), 1_402_000);
        // HE for 1 300 000 walks the efficient entries below it: 533 000.
        assert_eq!(p.resolve_freq(1_300_000, Relation::He), 533_000);
        // C: 1 200 000 lies 201 000 above 999 000 and 202 000 below 1 402 000 -> 999 000;
        // 1 201 000 is 202 000 / 201 000 -> 1 402 000; 1 200 500 is 201 500 both ways: the
        // lower. CE skips 999 000: 1 200 000 -> 1 402 000 (closer than 533 000).
        assert_eq!(p.resolve_freq(1_200_000, Relation::C), 999_000);
        assert_eq!(p.resolve_freq(1_201_000, Relation::C), 1_402_000);
        assert_eq!(p.resolve_freq(1_200_500, Relation::C), 999_000);
        assert_eq!(p.resolve_freq(1_200_000, Relation::Ce), 1_402_000);
        // Capped at 999 000, the efficient answer (1 402 000) is outside: walk again over all.
        p.store_scaling_max_freq(999_000);
        p.update_limits();
        assert_eq!(p.resolve_freq(600_000, Relation::Le), 999_000);
    }

    #[test]
    fn driver_target_skips_the_current_frequency_and_fast_switch_does_not() {
        let mut p = policy(&[]);
        assert_eq!(p.driver_target(1_844_000, Relation::L), None);
        assert_eq!(
            p.driver_target(1_000_000, Relation::L),
            Some(FreqChange {
                from_khz: 1_844_000,
                to_khz: 1_402_000
            })
        );
        assert_eq!(p.cur_khz(), 1_402_000);
        let same = p.fast_switch_to(1_402_000);
        assert_eq!((same.from_khz, same.to_khz), (1_402_000, 1_402_000));
        // Frequency scale at 1 402 000 of 1 844 000: 1402000 * 1024 / 1844000 = 778.5 -> 778.
        assert_eq!(p.freq_scale(), 778);
        // A cap below cur: apply_limits moves down to it.
        p.store_scaling_max_freq(999_000);
        p.update_limits();
        assert_eq!(p.apply_limits().map(|c| c.to_khz), Some(999_000));
    }

    #[test]
    fn the_default_rate_limit_is_the_transition_latency_and_a_half() {
        // 300 000 ns = 300 us -> 300 + 150 = 450 us.
        assert_eq!(policy(&[]).transition_delay_us(), 450);
        let spec = |ns, delay| PolicySpec {
            freqs_khz: vec![1_000_000],
            inefficient: vec![],
            transition_latency_ns: ns,
            transition_delay_us: delay,
            capacity: 1024,
            cpus: 1,
            fast_switch: true,
            initial_khz: 1_000_000,
        };
        // Under 1 us: 1000 us. CPUFREQ_ETERNAL: 4 294 967 us + 2 147 483 = 6 442 450 us.
        assert_eq!(
            CpufreqPolicy::new(&spec(999, None)).transition_delay_us(),
            1000
        );
        assert_eq!(
            CpufreqPolicy::new(&spec(CPUFREQ_ETERNAL_NS, None)).transition_delay_us(),
            6_442_450
        );
        // The driver's own figure wins.
        assert_eq!(
            CpufreqPolicy::new(&spec(500_000, Some(200))).transition_delay_us(),
            200
        );
    }
}
