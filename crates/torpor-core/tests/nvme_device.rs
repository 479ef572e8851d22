//! The NVMe drive model executing APST tables, pinned by hand-computed timelines.
//!
//! Power-state tables are copied from published `smartctl -a` dumps (linuxhw/SMART, commit
//! 01dcccc489876e9716154cc312e66ddcde8ec53c):
//! - WDC PC SN530 256GB, firmware 21113012 (`NVMe/WDC/PC SN530/PC SN530 NVMe 256GB/923190B5ACAB`)
//! - Intel SSDPEKKW256G8 (760p), firmware 004C (`NVMe/Intel/SSDPEKKW256/SSDPEKKW256G8/9024078F78A6`)
//!
//! APST tables are written by hand from spec-storage §1.3/§1.4 (the kernel's legacy and v5.14
//! rules applied to those descriptors), not produced by the crate's builders. The service model
//! is a round test-only one (60 µs per 4 KiB read, 20 µs per 4 KiB write), not a drive preset.

use torpor_core::apst::psd::{NvmeController, PowerState};
use torpor_core::apst::{ApstTable, APST_ENTRIES};
use torpor_core::storage::io::{IoOp, IoRequest, TimedDevice};
use torpor_core::storage::nvme::device::{NvmeDevice, NvmeStats};
use torpor_core::storage::nvme::service::ServiceModel;
use torpor_core::Nanos;

const READ_4K: IoRequest = IoRequest {
    op: IoOp::Read,
    offset: 0,
    bytes: 4096,
    sync: true,
};

/// Service time of `READ_4K` in `service(_)`: 60 µs.
const READ_NS: u64 = 60_000;

fn ms(v: f64) -> Nanos {
    Nanos((v * 1e6).round() as u64)
}

fn ps(max_mw: f64, non_op: bool, enlat_us: u32, exlat_us: u32, actp_mw: Option<f64>) -> PowerState {
    PowerState {
        max_power_mw: max_mw,
        non_operational: non_op,
        entry_lat_us: enlat_us,
        exit_lat_us: exlat_us,
        active_power_mw: actp_mw,
        idle_power_mw: None,
    }
}

/// WDC PC SN530 256GB: PS0–2 operational (MP 3.50/2.40/1.90 W, ACTP 1.80/1.60/1.50 W, no IDLP);
/// PS3 non-op 0.0250 W ENLAT 3900 EXLAT 11000; PS4 non-op 0.0050 W ENLAT 5000 EXLAT 39000.
fn sn530() -> NvmeController {
    NvmeController {
        model: "PC SN530 NVMe WDC 256GB".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            ps(3500.0, false, 0, 0, Some(1800.0)),
            ps(2400.0, false, 0, 0, Some(1600.0)),
            ps(1900.0, false, 0, 0, Some(1500.0)),
            ps(25.0, true, 3900, 11000, None),
            ps(5.0, true, 5000, 39000, None),
        ],
    }
}

/// Intel SSDPEKKW256G8: PS0–2 operational (MP 9.00/4.60/3.80 W, no ACTP/IDLP); PS3 non-op
/// 0.0450 W ENLAT 2000 EXLAT 2000; PS4 non-op 0.0040 W ENLAT 6000 EXLAT 8000.
fn intel_760p() -> NvmeController {
    NvmeController {
        model: "SSDPEKKW256G8".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            ps(9000.0, false, 0, 0, None),
            ps(4600.0, false, 0, 0, None),
            ps(3800.0, false, 0, 0, None),
            ps(45.0, true, 2000, 2000, None),
            ps(4.0, true, 6000, 8000, None),
        ],
    }
}

fn service(parallelism: u32) -> ServiceModel {
    ServiceModel {
        read_4k_us: 60.0,
        write_4k_us: 20.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism,
    }
}

/// An enabled table from `(state, itps, itpt_ms)` triples, encoded as Linux writes an entry:
/// `(itps << 3) | (itpt_ms << 8)`.
fn table(entries: &[(usize, u64, u64)]) -> ApstTable {
    let mut t = ApstTable {
        apste: true,
        entries: [0; APST_ENTRIES],
    };
    for &(state, itps, itpt_ms) in entries {
        t.entries[state] = (itps << 3) | (itpt_ms << 8);
    }
    t
}

/// SN530 under v5.14 defaults: primary PS3 (3.9 + 11 = 14.9 ms ≤ 15 ms) at 100 ms, secondary
/// PS4 (5 + 39 = 44 ms ≤ 100 ms) at 2000 ms.
fn sn530_v514() -> ApstTable {
    table(&[(0, 3, 100), (1, 3, 100), (2, 3, 100), (3, 4, 2000)])
}

/// SN530 under the legacy rule: PS3 ceil(14900/20) = 745 ms, PS4 ceil(44000/20) = 2200 ms.
fn sn530_legacy() -> ApstTable {
    table(&[(0, 3, 745), (1, 3, 745), (2, 3, 745), (3, 4, 2200)])
}

fn sn530_device(t: Option<&ApstTable>, parallelism: u32) -> NvmeDevice {
    NvmeDevice::new(&sn530(), t, service(parallelism))
}

fn assert_mj(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-6,
        "energy {actual} mJ, expected {expected} mJ"
    );
}

fn state<'a>(stats: &'a NvmeStats, name: &str) -> &'a torpor_core::metrics::StateEnergy {
    stats
        .power_states
        .iter()
        .find(|s| s.name == name)
        .expect("state listed")
}

#[test]
fn v514_read_150ms_after_last_completion_waits_ps3_exit_latency() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    // First read at 0 completes at 60 µs; the drive is idle in PS0 from then.
    let first = d.accept(Nanos::ZERO, &READ_4K);
    assert_eq!(first, Nanos(READ_NS));
    // PS0's timer expires at 0.06 + 100 = 100.06 ms, PS3 entered by 100.06 + 3.9 = 103.96 ms.
    // A read at 0.06 + 150 = 150.06 ms wakes PS3: ready at 150.06 + 11 = 161.06 ms,
    // done at 161.06 + 0.06 = 161.12 ms.
    let done = d.accept(ms(150.06), &READ_4K);
    assert_eq!(done, ms(161.12));
    assert_eq!(d.last_wake_penalty(), Nanos::from_ms(11));
}

#[test]
fn legacy_read_150ms_after_last_completion_does_not_wait() {
    let t = sn530_legacy();
    let mut d = sn530_device(Some(&t), 1);
    d.accept(Nanos::ZERO, &READ_4K);
    // Legacy ITPT is 745 ms: after 150 ms idle the drive is still in PS0.
    // Done at 150.06 + 0.06 = 150.12 ms.
    assert_eq!(d.accept(ms(150.06), &READ_4K), ms(150.12));
    assert_eq!(d.last_wake_penalty(), Nanos::ZERO);
    let stats = d.finish(ms(200.0));
    assert_eq!((stats.transitions, stats.wakeups), (0, 0));
}

#[test]
fn read_arriving_exactly_at_itpt_expiry_finds_drive_still_operational() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    // Idle since 0; at exactly 100 ms the drive has been idle for ITPT, not longer.
    assert_eq!(
        d.accept(Nanos::from_ms(100), &READ_4K),
        Nanos(100_000_000 + READ_NS)
    );
    assert_eq!(d.finish(Nanos::from_ms(150)).transitions, 0);
}

#[test]
fn read_during_entry_is_ready_after_entry_end_plus_exit_latency() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    // Idle since 0: entry into PS3 runs 100 → 103.9 ms. A read at 101 ms is ready at
    // 103.9 + 11 = 114.9 ms (penalty 13.9 ms) and done at 114.96 ms.
    assert_eq!(d.accept(Nanos::from_ms(101), &READ_4K), ms(114.96));
    assert_eq!(d.last_wake_penalty(), ms(13.9));
    let stats = d.finish(Nanos::from_ms(200));
    assert_eq!((stats.transitions, stats.wakeups), (1, 1));
    // The entry never completed as a residency: PS3 was not settled into.
    assert_eq!(state(&stats, "PS3").entries, 0);
    assert_eq!(state(&stats, "PS3").time_ns, 0);
    // Transition time: 100 → 114.9 ms = 14.9 ms (entry then exit, one stretch).
    assert_eq!(stats.transition_ns, ms(14.9).0);
}

#[test]
fn chained_entry_reaches_ps4_and_a_read_pays_its_exit_latency() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    // PS3 reached at 103.9 ms; its own 2000 ms timer expires at 2103.9 ms; PS4 entry done at
    // 2103.9 + 5 = 2108.9 ms. A read at 3 s is ready at 3039 ms, done at 3039.06 ms.
    assert_eq!(d.accept(Nanos::from_secs(3), &READ_4K), ms(3039.06));
    assert_eq!(d.last_wake_penalty(), Nanos::from_ms(39));
    // Finish at 3.1 s: idle since 3039.06 ms for 60.94 ms < 100 ms, no third transition.
    let stats = d.finish(Nanos::from_ms(3100));
    assert_eq!((stats.transitions, stats.wakeups), (2, 1));
    // PS3 residency: 103.9 → 2103.9 ms = 2000 ms; PS4: 2108.9 → 3000 ms = 891.1 ms.
    assert_eq!(state(&stats, "PS3").time_ns, Nanos::from_ms(2000).0);
    assert_eq!(state(&stats, "PS4").time_ns, ms(891.1).0);
    assert_eq!(state(&stats, "PS4").entries, 1);
}

#[test]
fn second_io_during_exit_waits_for_the_same_ready_time() {
    let t = sn530_v514();
    // Parallelism 1: first read at 150 ms wakes PS3, ready 161 ms, done 161.06 ms; a second read
    // at 155 ms waits for ready (penalty 6 ms) and then for the slot: done 161.12 ms.
    let mut d = sn530_device(Some(&t), 1);
    assert_eq!(d.accept(Nanos::from_ms(150), &READ_4K), ms(161.06));
    assert_eq!(d.accept(Nanos::from_ms(155), &READ_4K), ms(161.12));
    assert_eq!(d.last_wake_penalty(), Nanos::from_ms(6));
    let stats = d.finish(Nanos::from_ms(200));
    assert_eq!(stats.wakeups, 1);
    assert_eq!(stats.wake_delayed_ios, 2);
    // 11 ms + 6 ms.
    assert_eq!(stats.wake_latency_total_ns, Nanos::from_ms(17).0);

    // Parallelism 2: both start at the ready time 161 ms and finish at 161.06 ms.
    let mut d = sn530_device(Some(&t), 2);
    assert_eq!(d.accept(Nanos::from_ms(150), &READ_4K), ms(161.06));
    assert_eq!(d.accept(Nanos::from_ms(155), &READ_4K), ms(161.06));
}

#[test]
fn one_second_idle_energy_under_v514() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    let stats = d.finish(Nanos::from_secs(1));
    // PS0 idle (no IDLP; capped at ACTP 1800 < MP): 100 ms × 1800 mW = 180 mJ.
    // Entry into PS3 at PS0's MP: 3.9 ms × 3500 mW = 13.65 mJ.
    // PS3 idle (no IDLP, no ACTP → MP): 896.1 ms × 25 mW = 22.4025 mJ.
    // Total 216.0525 mJ over 1 s → 216.0525 mW.
    assert_mj(stats.energy_mj, 216.0525);
    assert!((stats.avg_power_mw - 216.0525).abs() < 1e-6);
    assert_eq!(stats.duration_ns, 1_000_000_000);
    assert_mj(state(&stats, "PS0").energy_mj, 180.0);
    assert_mj(stats.transition_energy_mj, 13.65);
    assert_mj(state(&stats, "PS3").energy_mj, 22.4025);
    assert_eq!(state(&stats, "PS3").time_ns, ms(896.1).0);
    assert_eq!(stats.transition_ns, ms(3.9).0);
    assert_eq!((stats.transitions, stats.wakeups), (1, 0));
}

#[test]
fn energy_of_a_wake_and_read_timeline() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    d.accept(Nanos::from_ms(150), &READ_4K);
    let stats = d.finish(Nanos::from_ms(200));
    // 0 → 100 ms       PS0 idle        100 ms × 1800 mW = 180 mJ
    // 100 → 103.9 ms   entry           3.9 ms × 3500 mW = 13.65 mJ
    // 103.9 → 150 ms   PS3 idle       46.1 ms × 25 mW   = 1.1525 mJ
    // 150 → 161 ms     exit             11 ms × 3500 mW = 38.5 mJ
    // 161 → 161.06 ms  PS0 active     0.06 ms × 1800 mW = 0.108 mJ
    // 161.06 → 200 ms  PS0 idle      38.94 ms × 1800 mW = 70.092 mJ
    // Total 303.5025 mJ.
    assert_mj(stats.energy_mj, 303.5025);
    assert_mj(state(&stats, "PS0").energy_mj, 180.0 + 0.108 + 70.092);
    assert_eq!(state(&stats, "PS0").entries, 2);
    assert_eq!(stats.transition_ns, ms(14.9).0);
    assert_eq!(stats.busy_ns, READ_NS);
}

#[test]
fn transitions_count_every_entry_begun_and_wakeups_count_ios_that_found_the_drive_asleep() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    // A at 0 (done 0.06 ms); B at 50 ms: idle 49.94 ms < 100 ms, no transition (done 50.06).
    d.accept(Nanos::ZERO, &READ_4K);
    d.accept(Nanos::from_ms(50), &READ_4K);
    // C at 300 ms: PS3 entered at 150.06 → 153.96 ms (transition 1); wake, ready 311 ms,
    // done 311.06 ms.
    assert_eq!(d.accept(Nanos::from_ms(300), &READ_4K), ms(311.06));
    // Then idle to 3 s: PS3 entry at 411.06 → 414.96 ms (2), PS4 entry at 2414.96 → 2419.96
    // ms (3).
    let stats = d.finish(Nanos::from_secs(3));
    assert_eq!(stats.ios, 3);
    assert_eq!(stats.transitions, 3);
    assert_eq!(stats.wakeups, 1);
    assert_eq!(state(&stats, "PS3").entries, 2);
    assert_eq!(state(&stats, "PS4").entries, 1);
}

#[test]
fn parallelism_one_serialises_simultaneous_requests() {
    let mut d = sn530_device(None, 1);
    assert_eq!(d.accept(Nanos::ZERO, &READ_4K), Nanos(READ_NS));
    assert_eq!(d.accept(Nanos::ZERO, &READ_4K), Nanos(2 * READ_NS));
    let stats = d.finish(Nanos::from_ms(1));
    assert_eq!(stats.busy_ns, 2 * READ_NS);
}

#[test]
fn parallelism_two_overlaps_requests_and_charges_active_power_once() {
    let mut d = sn530_device(None, 2);
    assert_eq!(d.accept(Nanos::ZERO, &READ_4K), Nanos(READ_NS));
    assert_eq!(d.accept(Nanos::ZERO, &READ_4K), Nanos(READ_NS));
    let stats = d.finish(Nanos::from_ms(1));
    // Active 0.06 ms × 1800 mW = 0.108 mJ, then idle 0.94 ms × 1800 mW = 1.692 mJ.
    assert_eq!(stats.busy_ns, READ_NS);
    assert_mj(stats.energy_mj, 0.108 + 1.692);
}

#[test]
fn no_table_or_apste_zero_never_transitions() {
    let mut disabled = sn530_v514();
    disabled.apste = false;
    for t in [None, Some(&disabled)] {
        let mut d = sn530_device(t, 1);
        // 10 s idle, then a read: no wake, done 60 µs later.
        assert_eq!(
            d.accept(Nanos::from_secs(10), &READ_4K),
            Nanos(10_000_000_000 + READ_NS)
        );
        let stats = d.finish(Nanos::from_secs(11));
        assert_eq!((stats.transitions, stats.wakeups), (0, 0));
        assert_eq!(state(&stats, "PS0").time_ns, 11_000_000_000);
    }
}

#[test]
fn itpt_zero_disables_the_entry() {
    // PS0's entry has ITPS 3 but ITPT 0: the drive never leaves PS0.
    let t = table(&[(0, 3, 0)]);
    let mut d = sn530_device(Some(&t), 1);
    assert_eq!(
        d.accept(Nanos::from_secs(5), &READ_4K),
        Nanos(5_000_000_000 + READ_NS)
    );
    assert_eq!(d.finish(Nanos::from_secs(6)).transitions, 0);

    // PS3's entry disabled: the chain stops in PS3, so a read at 3 s pays PS3's 11 ms, not 39.
    let t = table(&[(0, 3, 100), (3, 4, 0)]);
    let mut d = sn530_device(Some(&t), 1);
    d.accept(Nanos::from_secs(3), &READ_4K);
    assert_eq!(d.last_wake_penalty(), Nanos::from_ms(11));
}

#[test]
fn finish_in_the_middle_of_an_entry_meters_the_partial_entry() {
    let t = sn530_v514();
    let mut d = sn530_device(Some(&t), 1);
    let stats = d.finish(Nanos::from_ms(102));
    // PS0 idle 100 ms × 1800 mW = 180 mJ; entry 100 → 102 ms: 2 ms × 3500 mW = 7 mJ.
    assert_mj(stats.energy_mj, 187.0);
    assert_eq!(stats.transition_ns, Nanos::from_ms(2).0);
    assert_eq!(stats.transitions, 1);
    assert_eq!(state(&stats, "PS3").entries, 0);
    // The drive carries on: a read at 102 ms still finds the entry (ends 103.9 ms) and is
    // ready at 114.9 ms.
    assert_eq!(d.accept(Nanos::from_ms(102), &READ_4K), ms(114.96));
}

#[test]
fn finish_while_requests_are_in_service_meters_up_to_the_end_only() {
    let mut d = sn530_device(None, 1);
    d.accept(Nanos::ZERO, &READ_4K);
    // At 30 µs the read is half done: 0.03 ms × 1800 mW = 0.054 mJ, all active.
    let stats = d.finish(Nanos::from_us(30));
    assert_eq!(stats.busy_ns, 30_000);
    assert_mj(stats.energy_mj, 0.054);
}

#[test]
fn entries_targeting_operational_missing_or_shallower_states_are_ignored() {
    // PS0 → PS1 (operational), PS1 → PS7 (not reported), PS4 → PS3 (not deeper), and an entry
    // for PS9 which the drive does not have: 4 ignored. PS2 → PS3 and PS3 → PS4 are valid.
    let t = table(&[
        (0, 1, 100),
        (1, 7, 100),
        (2, 3, 100),
        (3, 4, 2000),
        (4, 3, 50),
        (9, 3, 100),
    ]);
    let mut d = sn530_device(Some(&t), 1);
    let stats = d.finish(Nanos::from_secs(10));
    assert_eq!(stats.ignored_entries, 4);
    // The drive sits in PS0, whose entry was ignored.
    assert_eq!(stats.transitions, 0);
}

#[test]
fn intel_760p_v514_goes_straight_to_ps4_and_idles_at_max_power_without_idlp() {
    // v5.14 on the 760p: PS4 total 6 + 8 = 14 ms ≤ 15 ms → primary for PS0..PS3 at 100 ms.
    let t = table(&[(0, 4, 100), (1, 4, 100), (2, 4, 100), (3, 4, 100)]);
    let mut d = NvmeDevice::new(&intel_760p(), Some(&t), service(1));
    // Entry 100 → 106 ms; a read at 150 ms is ready at 158 ms, done 158.06 ms.
    assert_eq!(d.accept(Nanos::from_ms(150), &READ_4K), ms(158.06));
    assert_eq!(d.last_wake_penalty(), Nanos::from_ms(8));
    let stats = d.finish(Nanos::from_ms(158) + Nanos(READ_NS));
    // PS0 idle 100 ms × 9000 = 900 mJ; entry 6 ms × 9000 = 54 mJ; PS4 44 ms × 4 mW = 0.176
    // mJ; exit 8 ms × 9000 = 72 mJ; active (no ACTP → MP) 0.06 ms × 9000 = 0.54 mJ.
    assert_mj(stats.energy_mj, 900.0 + 54.0 + 0.176 + 72.0 + 0.54);
}

// A table programmed mid-run (`set_table`, as `nvme_set_latency_tolerance` reprograms it). The
// model's rule (device.rs step 7): the drive walks its chain to `now` under the old table; a
// settled drive's idle timer restarts at the change; an entry in progress completes first.

#[test]
fn a_new_table_while_idle_in_ps0_restarts_the_timer_at_the_change() {
    let (v514, legacy) = (sn530_v514(), sn530_legacy());
    let mut d = sn530_device(Some(&v514), 1);
    // Idle in PS0 since 0; at 50 ms the legacy table arrives (PS0 -> PS3 after 745 ms), so
    // the entry starts at 50 + 745 = 795 ms and ends 3.9 ms later, at 798.9 ms.
    d.set_table(ms(50.0), Some(&legacy));
    // At 790 ms the drive is still in PS0 (v5.14 alone would have put it in PS3 at 100 ms).
    let mut probe = d.clone();
    assert_eq!(probe.accept(ms(790.0), &READ_4K), ms(790.06));
    // At 900 ms it is settled in PS3: exit 11 ms, then 60 us of service.
    assert_eq!(d.accept(ms(900.0), &READ_4K), ms(911.06));
    let stats = d.finish(ms(1000.0));
    assert_eq!(
        (stats.transitions, stats.wakeups, stats.table_changes),
        (1, 1, 1)
    );
    // PS3 from 798.9 ms to the doorbell at 900 ms.
    assert_eq!(state(&stats, "PS3").time_ns, ms(101.1).0);
}

#[test]
fn a_new_table_while_settled_in_ps3_counts_ps3s_idle_time_from_the_change() {
    let v514 = sn530_v514();
    let quick = table(&[(0, 3, 100), (1, 3, 100), (2, 3, 100), (3, 4, 100)]);
    let mut d = sn530_device(Some(&v514), 1);
    // PS3 is reached at 100 + 3.9 = 103.9 ms. The new table at 500 ms sends PS3 to PS4 after
    // 100 ms counted from 500 ms: entry 600 -> 605 ms. A read at 700 ms waits PS4's 39 ms exit.
    d.set_table(ms(500.0), Some(&quick));
    assert_eq!(d.accept(ms(700.0), &READ_4K), ms(739.06));
    let stats = d.finish(ms(800.0));
    assert_eq!((stats.transitions, stats.wakeups), (2, 1));
    // PS3: 103.9 -> 600 ms; PS4: 605 -> 700 ms.
    assert_eq!(state(&stats, "PS3").time_ns, ms(496.1).0);
    assert_eq!(state(&stats, "PS4").time_ns, ms(95.0).0);
}

#[test]
fn a_new_table_during_an_entry_applies_once_the_entry_ends() {
    let v514 = sn530_v514();
    let quick = table(&[(0, 3, 100), (1, 3, 100), (2, 3, 100), (3, 4, 50)]);
    let mut d = sn530_device(Some(&v514), 1);
    // At 102 ms the drive is entering PS3 (100 -> 103.9 ms). PS3's timer then starts at
    // 103.9 ms under the new table: PS4 entry 153.9 -> 158.9 ms; a read at 200 ms is ready at
    // 239 ms.
    d.set_table(ms(102.0), Some(&quick));
    assert_eq!(d.accept(ms(200.0), &READ_4K), ms(239.06));
    assert_eq!(d.finish(ms(300.0)).transitions, 2);
}

#[test]
fn no_table_mid_run_stops_autonomous_transitions() {
    let v514 = sn530_v514();
    let mut d = sn530_device(Some(&v514), 1);
    d.set_table(ms(50.0), None);
    assert_eq!(d.accept(ms(1000.0), &READ_4K), ms(1000.06));
    assert_eq!(d.finish(ms(1000.06)).transitions, 0);
}

#[test]
fn transition_power_is_a_share_of_the_way_from_idle_to_max_power() {
    // The one-second idle of `one_second_idle_energy_under_v514`: PS0 idles at 1800 mW (ACTP
    // cap) with MP 3500 mW, and the 3.9 ms entry into PS3 is metered at 1800 + share x 1700:
    // share 0 -> 3.9 x 1800 = 7.02 mJ, 0.5 -> 3.9 x 2650 = 10.335 mJ, 1 -> 3.9 x 3500 = 13.65 mJ.
    for (share, mj) in [(0.0, 7.02), (0.5, 10.335), (1.0, 13.65)] {
        let t = sn530_v514();
        let mut d = sn530_device(Some(&t), 1).with_transition_share(share);
        let stats = d.finish(Nanos::from_secs(1));
        assert_mj(stats.transition_energy_mj, mj);
        // PS0 (180 mJ) and PS3 (22.4025 mJ) do not change.
        assert_mj(stats.energy_mj, 180.0 + mj + 22.4025);
    }
}

// A latency-tolerance write mid-run (storage::nvme::tolerance): the driver rebuilds the table
// with the new limit and the drive adopts it at the write (device.rs step 7).

#[test]
fn a_lowered_latency_tolerance_sends_a_table_without_ps3_and_auto_restores_v514() {
    use torpor_core::apst::tolerance::{device_schedule, table_changes};
    use torpor_core::apst::{ApstConfig, ApstParams};

    // v5.14 with its default limit (100 ms): PS3 at 100 ms, PS4 at 2000 ms (sn530_v514).
    // Writes: 10000 us at 300 ms (PS3's EXLAT 11 ms and PS4's 39 ms exceed it: APST stays
    // enabled with no target, as the kernel's "no non-operational states" case); the same
    // value again at 400 ms (no change, no command); `auto` at 1500 ms (the user request is
    // dropped: no limit, and v5.14's own tolerances give back PS3 at 100 ms and PS4 at 2 s).
    let writes = [(ms(300.0), 10_000), (ms(400.0), 10_000), (ms(1500.0), -1)];
    let changes = table_changes(&sn530(), &ApstParams::default(), &writes).unwrap();
    let empty = ApstTable {
        apste: true,
        entries: [0; APST_ENTRIES],
    };
    let got: Vec<_> = changes
        .iter()
        .map(|c| {
            (
                c.at_ns,
                c.tolerance_us,
                c.ps_max_latency_us,
                c.config.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (ms(300.0).0, 10_000, 10_000, ApstConfig::Sent(empty)),
            (ms(1500.0).0, -1, u64::MAX, ApstConfig::Sent(sn530_v514())),
        ]
    );
    let mut d =
        sn530_device(Some(&sn530_v514()), 1).with_scheduled_tables(device_schedule(&changes));
    // In PS3 since 103.9 ms; the table at 300 ms does not wake it, so a read at 500 ms pays
    // PS3's 11 ms exit: 511.06 ms.
    assert_eq!(d.accept(ms(500.0), &READ_4K), ms(511.06));
    // Back in PS0 with no target: a read at 1000 ms finds it operational (v5.14 would have
    // had it in PS3 since 614.96 ms and cost 11 ms).
    assert_eq!(d.accept(ms(1000.0), &READ_4K), ms(1000.06));
    // `auto` at 1500 ms: v5.14 again, PS0's timer from 1500 ms: PS3 entry 1600 -> 1603.9 ms; a
    // read at 1700 ms waits 11 ms.
    assert_eq!(d.accept(ms(1700.0), &READ_4K), ms(1711.06));
    let stats = d.finish(ms(1800.0));
    assert_eq!(
        (stats.transitions, stats.wakeups, stats.table_changes),
        (2, 2, 2)
    );
}

#[test]
fn a_tolerance_of_zero_disables_apst_and_a_negative_write_is_refused() {
    use torpor_core::apst::tolerance::table_changes;
    use torpor_core::apst::{ApstConfig, ApstParams};

    // 0 us: the builder sends APSTE = 0 with an all-zero table (apst.rs step 2).
    let changes = table_changes(&sn530(), &ApstParams::default(), &[(ms(10.0), 0)]).unwrap();
    assert_eq!(changes.len(), 1);
    match &changes[0].config {
        ApstConfig::Sent(t) => assert!(!t.apste && t.entries.iter().all(|&e| e == 0)),
        other => panic!("expected a sent table, got {other:?}"),
    }
    // The sysfs store refuses negatives other than `auto`'s -1; the error names the write.
    let bad = table_changes(
        &sn530(),
        &ApstParams::default(),
        &[(ms(1.0), 5), (ms(2.0), -7)],
    );
    assert_eq!(bad.unwrap_err().0, 1);
}
