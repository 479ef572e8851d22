//! The tracker alone, event by event; the hand-made trace through the parser is in
//! `idle_stats/tests.rs`.

use super::*;

const MHZ: u32 = 1000;

fn rows(t: &PstateTracker, cpu: u32) -> Vec<(u32, u64, u64)> {
    t.cpu_rows(cpu)
        .iter()
        .map(|r| (r.freq_khz, r.hits, (r.total_us * 1000.0) as u64))
        .collect()
}

#[test]
fn only_running_time_counts_and_an_idle_cpus_change_waits_for_its_exit() {
    let mut t = PstateTracker::new(0, Vec::new());
    t.cpu_frequency(100, 0, 500 * MHZ); // running (no cpu_idle yet): 500 MHz from 100
    t.cpu_idle(300, 0, true); // 200 ns at 500 MHz
    t.cpu_frequency(400, 0, 900 * MHZ); // idle: nothing recorded, 900 MHz at the exit
    t.cpu_idle(1000, 0, false); // 900 MHz from 1000
    t.cpu_idle(1250, 0, true); // 250 ns at 900 MHz
    assert_eq!(rows(&t, 0), [(500 * MHZ, 1, 200), (900 * MHZ, 1, 250)]);
    assert_eq!(t.dropped(), PstateDropped::default());
}

#[test]
fn a_second_entry_or_exit_changes_nothing() {
    // idlestat would count 100..300 twice (closing again at the second entry) and lose
    // 500..600 (reopening at the second exit): torpor counts 200 and 300.
    let mut t = PstateTracker::new(0, Vec::new());
    t.cpu_frequency(100, 0, 500 * MHZ);
    t.cpu_idle(300, 0, true);
    t.cpu_idle(350, 0, true);
    t.cpu_idle(500, 0, false);
    t.cpu_idle(600, 0, false);
    t.cpu_idle(800, 0, true);
    assert_eq!(rows(&t, 0), [(500 * MHZ, 2, 500)]);
}

#[test]
fn running_before_the_first_frequency_is_counted_apart() {
    let mut t = PstateTracker::new(0, Vec::new());
    t.cpu_idle(0, 3, true);
    t.cpu_idle(100, 3, false); // unknown frequency from 100 ...
    t.cpu_idle(160, 3, true); // ... 60 ns
    t.cpu_idle(200, 3, false); // unknown again from 200 ...
    t.cpu_frequency(230, 3, 1200 * MHZ); // ... 30 ns; 1.2 GHz from 230
    t.cpu_idle(300, 3, true); // 70 ns at 1.2 GHz
    let u = t.cpu_unknown(3);
    assert_eq!((u.cpu, u.intervals, u.total_ns), (3, 2, 90));
    assert_eq!(rows(&t, 3), [(1200 * MHZ, 1, 70)]);
    // CPUs 0 to 2 were never named: no rows, nothing unknown.
    assert!(t.cpu_rows(0).is_empty());
    assert_eq!(t.cpu_unknown(0).intervals, 0);
}

#[test]
fn zero_khz_ends_the_interval_and_open_ones_are_counted_at_the_end() {
    // idlestat's own trace files end with `cpu_frequency state=0` for every CPU.
    let mut t = PstateTracker::new(0, Vec::new());
    t.cpu_frequency(0, 0, 800 * MHZ);
    t.cpu_frequency(0, 1, 800 * MHZ);
    t.cpu_frequency(500, 0, 0); // cpu0: 500 ns at 800 MHz, then unknown
    assert_eq!(rows(&t, 0), [(800 * MHZ, 1, 500)]);
    assert!(rows(&t, 1).is_empty()); // cpu1's interval is still open
    assert_eq!(t.dropped().open_at_end, 1);
}

#[test]
fn intervals_of_no_length_are_counted_not_recorded() {
    let mut t = PstateTracker::new(0, Vec::new());
    t.cpu_frequency(100, 0, 500 * MHZ);
    t.cpu_idle(100, 0, true); // 0 ns
    t.cpu_idle(200, 0, false);
    t.cpu_idle(150, 0, true); // backwards: -50 ns
    assert!(rows(&t, 0).is_empty());
    assert_eq!(t.dropped().non_positive_intervals, 2);
    assert_eq!(t.dropped().open_at_end, 0);
}

#[test]
fn a_group_runs_at_its_running_cpus_highest_frequency() {
    // Group 0 holds CPUs 0 and 1. By hand (ns):
    //   0    cpu0 500 MHz running           group 500 from 0
    //   100  cpu1 800 MHz running           group 800: 500 for 100
    //   300  cpu1 idle                      group 500: 800 for 200
    //   400  cpu0 idle                      group none: 500 for 100
    //   450  cpu1 900 MHz while idle        nothing
    //   500  cpu0 exits (500 MHz)           group 500 from 500
    //   700  cpu1 exits (900 MHz)           group 900: 500 for 200
    //   900  cpu0 idle                      group still 900
    //   1000 cpu1 idle                      group none: 900 for 300
    // Group rows: 500 MHz 3 hits 400 ns; 800 MHz 1 hit 200 ns; 900 MHz 1 hit 300 ns. Second
    // method: the union of the CPUs' running time, 0..400 and 500..1000, is 900 ns = 400 + 200
    // + 300.
    let mut t = PstateTracker::new(1, vec![vec![0], vec![0]]);
    t.cpu_frequency(0, 0, 500 * MHZ);
    t.cpu_frequency(100, 1, 800 * MHZ);
    t.cpu_idle(300, 1, true);
    t.cpu_idle(400, 0, true);
    t.cpu_frequency(450, 1, 900 * MHZ);
    t.cpu_idle(500, 0, false);
    t.cpu_idle(700, 1, false);
    t.cpu_idle(900, 0, true);
    t.cpu_idle(1000, 1, true);
    let got: Vec<(u32, u64, u64)> = t
        .group_rows(0)
        .iter()
        .map(|r| (r.freq_khz, r.hits, (r.total_us * 1000.0) as u64))
        .collect();
    assert_eq!(
        got,
        [
            (500 * MHZ, 3, 400),
            (800 * MHZ, 1, 200),
            (900 * MHZ, 1, 300)
        ]
    );
    let union = 400 + 500;
    assert_eq!(got.iter().map(|r| r.2).sum::<u64>(), union);
}

#[test]
fn rows_beyond_the_limit_are_counted_with_their_time() {
    let mut t = PstateTracker::new(0, Vec::new());
    let n = MAX_FREQUENCIES as u32 + 2;
    for k in 0..n {
        // Each frequency for 10 ns, the last one left open.
        t.cpu_frequency(u64::from(k) * 10, 0, 100 + k);
    }
    assert_eq!(t.cpu_rows(0).len(), MAX_FREQUENCIES);
    let d = t.dropped();
    assert_eq!(
        (d.beyond_max_frequencies, d.beyond_max_frequencies_ns),
        (1, 10)
    );
    assert_eq!(t.events(), u64::from(n));
}

#[test]
fn a_repeated_frequency_is_another_hit_for_the_cpu_not_for_its_group() {
    // idlestat's cpu_change_pstate closes and reopens on every event of a running CPU;
    // record_group_freq changes nothing when the highest frequency stays.
    let mut t = PstateTracker::new(1, vec![vec![0]]);
    t.cpu_frequency(0, 0, 500 * MHZ);
    t.cpu_frequency(100, 0, 500 * MHZ);
    t.cpu_idle(300, 0, true);
    assert_eq!(rows(&t, 0), [(500 * MHZ, 2, 300)]);
    let group: Vec<u64> = t.group_rows(0).iter().map(|r| r.hits).collect();
    assert_eq!(group, [1]);
}

/// A group's frequency, kept from a count of its members at the highest one, is after every
/// event the highest running frequency recomputed over all its members (random events on
/// three CPUs with two frequencies, so ties and a last member leaving the highest are
/// frequent).
#[test]
fn a_groups_frequency_is_its_running_members_highest_after_every_event() {
    let mut t = PstateTracker::new(1, vec![vec![0]; 3]);
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for ts in 1..20_000 {
        let r = next();
        let cpu = (r % 3) as u32;
        match (r >> 8) % 4 {
            0 => t.cpu_frequency(ts, cpu, [0, 500, 900][((r >> 16) % 3) as usize] * MHZ),
            1 | 2 => t.cpu_idle(ts, cpu, true),
            _ => t.cpu_idle(ts, cpu, false),
        }
        let highest = t.cpus.iter().filter_map(CpuTrack::running_at).max();
        assert_eq!(t.groups[0].res.current, highest, "at {ts}");
    }
}
