//! State-machine sequences built by hand from spec-storage §4.7-4.9 (each transition and its
//! trigger), counters on small hand-worked scenarios, and a randomized interleaving check that no
//! HPB READ carries a stale entry.
//!
//! The small LU used throughout: 16 KiB sub-regions (v = 5, 4 entries), 32 KiB regions (v = 6,
//! 8 entries, 2 sub-regions), 34 blocks: regions 0-3 full, region 4 one sub-region of 2 entries.
//! Two LRU slots; HPB 2.0 with bMAX_DATA_SIZE_FOR_HPB_SINGLE_CMD 3 (4 blocks).

use super::*;
use crate::sim::Pcg32;
use crate::time::Nanos;
use std::collections::HashMap;

fn desc(control: u8) -> HpbDescriptors {
    HpbDescriptors {
        hpb_version: geometry::HPB_VERSION_2_0,
        hpb_control: control,
        region_size: 6,
        subregion_size: 5,
        device_max_active_regions: 4,
        lu_max_active_regions: 2,
        pinned_start: 0,
        num_pinned: 0,
        max_data_size_single_cmd: Some(3),
        num_blocks: 34,
    }
}

fn lu_with(d: HpbDescriptors, params: HcmParams, w: IssuedWrites) -> HpbLu {
    HpbLu::new(Geometry::new(&d).unwrap(), params, w, Nanos::ZERO).0
}

fn dcm() -> HpbLu {
    lu_with(desc(1), HcmParams::default(), IssuedWrites::Kept)
}

fn hcm(params: HcmParams) -> HpbLu {
    lu_with(desc(0), params, IssuedWrites::Kept)
}

const T0: Nanos = Nanos::ZERO;

fn read(lu: &mut HpbLu, lpn: u64, len: u32) -> PrepKind {
    lu.prep(T0, Op::Read, lpn, len).kind
}

fn recommend(lu: &mut HpbLu, active: &[(u32, u32)], inactive: &[u32]) -> bool {
    let rsp = HpbResponse::RegionUpdate {
        active: active.to_vec(),
        inactive: inactive.to_vec(),
    };
    lu.on_response(&rsp).unwrap()
}

fn read_buffers(cmds: &[HpbCommand]) -> Vec<MapReq> {
    cmds.iter()
        .filter_map(|c| match c {
            HpbCommand::ReadBuffer(m) => Some(*m),
            HpbCommand::InactivateRegion { .. } => None,
        })
        .collect()
}

/// Recommends (DCM) and loads the sub-regions, completing every READ BUFFER.
fn load(lu: &mut HpbLu, srgns: &[(u32, u32)]) {
    for &s in srgns {
        recommend(lu, &[s], &[]);
        for m in read_buffers(&lu.map_work(T0)) {
            lu.map_req_done(&m);
        }
    }
}

fn hit(id: u64) -> PrepKind {
    PrepKind::Hit {
        map_load: MapLoadId(id),
    }
}

#[test]
fn dcm_recommendation_load_and_hpb_read() {
    let mut lu = dcm();
    assert_eq!(
        (lu.rgn_state(0), lu.srgn_state(0, 0)),
        (RgnState::Inactive, SrgnState::Unused)
    );
    assert_eq!(read(&mut lu, 0, 1), PrepKind::Miss);
    // Response: (0, 0) recommended → queued, map work asked for.
    assert!(recommend(&mut lu, &[(0, 0)], &[]));
    assert_eq!(lu.act_list(), [(0, 0)]);
    // Map work: region 0 enters the LRU, UNUSED → ISSUED with a READ BUFFER of 4 × 8 bytes.
    let cmds = lu.map_work(T0);
    let m = MapReq {
        id: MapLoadId(1),
        rgn: 0,
        srgn: 0,
        alloc_len: 32,
    };
    assert_eq!(cmds, [HpbCommand::ReadBuffer(m)]);
    assert_eq!(
        (lu.rgn_state(0), lu.srgn_state(0, 0)),
        (RgnState::Active, SrgnState::Issued)
    );
    assert_eq!((lu.lru(), lu.num_inflight_map_req()), (vec![0], 1));
    assert_eq!(read(&mut lu, 0, 1), PrepKind::Miss);
    // Completion: ISSUED → VALID.
    lu.map_req_done(&m);
    assert_eq!(
        (lu.srgn_state(0, 0), lu.num_inflight_map_req()),
        (SrgnState::Valid, 0)
    );
    assert_eq!(read(&mut lu, 0, 4), hit(1));
    // Lpn 2..6 reaches sub-region 1, still UNUSED.
    assert_eq!(read(&mut lu, 2, 4), PrepKind::Miss);
    // Five blocks exceed the 4-block single-command limit: neither hit nor miss.
    assert_eq!(read(&mut lu, 0, 5), PrepKind::NotEligible);
    let s = lu.stats();
    assert_eq!(
        (s.hit_cnt, s.miss_cnt, s.rcmd_noti_cnt, s.rcmd_active_cnt),
        (1, 3, 1, 1)
    );
    assert_eq!(
        (s.map_req_cnt, s.rcmd_inactive_cnt, s.umap_req_cnt),
        (1, 0, 0)
    );
}

#[test]
fn hpb_read_across_subregions_and_the_partial_last_one() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 1), (1, 0)]);
    // 6..10 spans (0,1) entries 2-3 and (1,0) entries 0-1: both VALID, carries (0,1)'s load.
    assert_eq!(read(&mut lu, 6, 4), hit(1));
    // The last sub-region has 2 entries (blocks 32, 33), its READ BUFFER 16 bytes.
    load(&mut lu, &[(4, 0)]);
    assert_eq!(read(&mut lu, 32, 2), hit(3));
    recommend(&mut lu, &[(4, 0)], &[]);
    let cmds = lu.map_work(T0);
    assert_eq!(read_buffers(&cmds)[0].alloc_len, 16);
}

#[test]
fn write_dirties_its_entries_until_the_next_load() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0)]);
    assert_eq!(lu.prep(T0, Op::Write, 1, 1).kind, PrepKind::Write);
    assert_eq!(read(&mut lu, 0, 1), hit(1));
    assert_eq!(read(&mut lu, 1, 1), PrepKind::Miss);
    assert_eq!(read(&mut lu, 0, 2), PrepKind::Miss);
    assert_eq!(read(&mut lu, 2, 2), hit(1));
    // A discard dirties like a write.
    lu.prep(T0, Op::Discard, 3, 1);
    assert_eq!(read(&mut lu, 3, 1), PrepKind::Miss);
    // Re-recommended: VALID → INVALID at once, then reloaded clean.
    recommend(&mut lu, &[(0, 0)], &[]);
    assert_eq!(lu.srgn_state(0, 0), SrgnState::Invalid);
    assert_eq!(read(&mut lu, 0, 1), PrepKind::Miss);
    let m = read_buffers(&lu.map_work(T0));
    assert_eq!(lu.srgn_state(0, 0), SrgnState::Issued);
    lu.map_req_done(&m[0]);
    assert_eq!(read(&mut lu, 1, 3), hit(2));
}

#[test]
fn write_while_issued_kept_by_torpor_lost_by_the_driver() {
    for (w, expect) in [
        (IssuedWrites::Kept, PrepKind::Miss),
        (IssuedWrites::Dropped, hit(1)),
    ] {
        let mut lu = lu_with(desc(1), HcmParams::default(), w);
        recommend(&mut lu, &[(0, 0)], &[]);
        let m = read_buffers(&lu.map_work(T0));
        lu.prep(T0, Op::Write, 1, 1);
        lu.map_req_done(&m[0]);
        // The map was captured before the write: the driver sends its stale entry for lpn 1.
        assert_eq!(read(&mut lu, 1, 1), expect, "{w:?}");
        assert_eq!(read(&mut lu, 0, 1), hit(1));
    }
}

#[test]
fn lru_is_activation_order_and_hits_do_not_refresh_it() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0), (1, 0)]);
    assert_eq!(lu.lru(), [0, 1]);
    for _ in 0..5 {
        assert_eq!(read(&mut lu, 0, 1), hit(1));
    }
    // Full LRU: region 2 evicts the head, region 0, despite its recent hits.
    load(&mut lu, &[(2, 0)]);
    assert_eq!(lu.lru(), [1, 2]);
    assert_eq!(
        (lu.rgn_state(0), lu.srgn_state(0, 0)),
        (RgnState::Inactive, SrgnState::Unused)
    );
    assert_eq!(read(&mut lu, 0, 1), PrepKind::Miss);
    // A re-recommendation of an LRU region moves it to the tail (`ufshpb_hit_lru_info`).
    load(&mut lu, &[(1, 1)]);
    assert_eq!(lu.lru(), [2, 1]);
    load(&mut lu, &[(3, 0)]);
    assert_eq!(lu.lru(), [1, 3]);
    // DCM eviction sends nothing to the device.
    assert_eq!(lu.stats().umap_req_cnt, 0);
}

#[test]
fn victim_selection_skips_regions_with_a_load_in_flight() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0), (1, 0)]);
    recommend(&mut lu, &[(0, 1)], &[]);
    let in_flight = read_buffers(&lu.map_work(T0));
    assert_eq!(lu.lru(), [1, 0]);
    recommend(&mut lu, &[(1, 1)], &[]);
    let in_flight_1 = read_buffers(&lu.map_work(T0));
    assert_eq!(lu.lru(), [0, 1]);
    // Both LRU regions have an ISSUED sub-region: no victim (-ENOMEM); the request stays at the
    // head of the list and the run stops.
    recommend(&mut lu, &[(2, 0), (3, 0)], &[]);
    assert_eq!(lu.map_work(T0), []);
    assert_eq!(lu.act_list(), [(2, 0), (3, 0)]);
    assert_eq!(lu.rgn_state(2), RgnState::Inactive);
    // Region 1's load completes: it is the only possible victim although region 0 is the head.
    lu.map_req_done(&in_flight_1[0]);
    let cmds = read_buffers(&lu.map_work(T0));
    assert_eq!(cmds.len(), 1);
    assert_eq!((cmds[0].rgn, lu.lru()), (2, vec![0, 2]));
    assert_eq!(lu.act_list(), [(3, 0)]);
    lu.map_req_done(&in_flight[0]);
}

#[test]
fn inactivation_waits_while_a_subregion_is_issued() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0)]);
    recommend(&mut lu, &[(0, 1)], &[]);
    let m = read_buffers(&lu.map_work(T0));
    // Inactivate region 0: its VALID sub-region turns INVALID at once; eviction is -EBUSY.
    assert!(recommend(&mut lu, &[], &[0]));
    assert_eq!(
        (lu.srgn_state(0, 0), lu.srgn_state(0, 1)),
        (SrgnState::Invalid, SrgnState::Issued)
    );
    assert_eq!(lu.map_work(T0), []);
    assert_eq!((lu.inact_list(), lu.lru()), (vec![0], vec![0]));
    lu.map_req_done(&m[0]);
    assert_eq!(lu.map_work(T0), []);
    assert_eq!(
        (lu.rgn_state(0), lu.srgn_state(0, 1)),
        (RgnState::Inactive, SrgnState::Unused)
    );
    assert!(lu.inact_list().is_empty() && lu.lru().is_empty());
    assert_eq!(lu.stats().rcmd_inactive_cnt, 1);
    assert_eq!(lu.host_memory().mapped_srgns, 0);
}

#[test]
fn active_and_inactive_for_one_region_in_one_response_inactivates() {
    let mut lu = dcm();
    recommend(&mut lu, &[(0, 0)], &[0]);
    assert!(lu.act_list().is_empty());
    assert_eq!(lu.inact_list(), [0]);
    let s = lu.stats();
    assert_eq!(
        (s.rcmd_noti_cnt, s.rcmd_active_cnt, s.rcmd_inactive_cnt),
        (1, 1, 1)
    );
    // A later activation takes the region off the to-inactivate list again.
    recommend(&mut lu, &[(0, 1)], &[]);
    assert!(lu.inact_list().is_empty());
}

#[test]
fn recommendation_during_a_load_waits_for_the_next_kick() {
    let mut lu = dcm();
    recommend(&mut lu, &[(0, 0)], &[]);
    let m = read_buffers(&lu.map_work(T0));
    recommend(&mut lu, &[(0, 0)], &[]);
    // ISSUED → -EAGAIN: stays queued; the completion does not kick the work.
    assert_eq!(lu.map_work(T0), []);
    assert_eq!(lu.act_list(), [(0, 0)]);
    lu.map_req_done(&m[0]);
    assert_eq!(lu.srgn_state(0, 0), SrgnState::Valid);
    let again = read_buffers(&lu.map_work(T0));
    assert_eq!((again[0].id, lu.stats().map_req_cnt), (MapLoadId(2), 2));
}

#[test]
fn pinned_regions_load_at_init_and_are_never_evicted() {
    let d = HpbDescriptors {
        pinned_start: 1,
        num_pinned: 2,
        lu_max_active_regions: 3,
        ..desc(1)
    };
    let (mut lu, init) = HpbLu::new(
        Geometry::new(&d).unwrap(),
        HcmParams::default(),
        IssuedWrites::Kept,
        T0,
    );
    assert_eq!(
        init,
        HpbInit {
            map_work: true,
            first_poll: None
        }
    );
    assert_eq!(
        (lu.rgn_state(1), lu.srgn_state(1, 0)),
        (RgnState::Pinned, SrgnState::Invalid)
    );
    assert_eq!(lu.act_list(), [(1, 0), (1, 1), (2, 0), (2, 1)]);
    // DCM has no in-flight limit: four READ BUFFERs in one run; pinned regions stay off the LRU.
    let m = read_buffers(&lu.map_work(T0));
    assert_eq!(m.len(), 4);
    assert!(lu.lru().is_empty());
    m.iter().for_each(|m| lu.map_req_done(m));
    assert_eq!(read(&mut lu, 8, 4), hit(1));
    // An inactivation recommendation invalidates the maps but does not evict.
    recommend(&mut lu, &[], &[1]);
    lu.map_work(T0);
    assert_eq!(
        (lu.rgn_state(1), lu.srgn_state(1, 0)),
        (RgnState::Pinned, SrgnState::Invalid)
    );
    assert_eq!(read(&mut lu, 8, 1), PrepKind::Miss);
    assert_eq!(lu.host_memory().mapped_srgns, 4);
    // One pinned region: `lu_pinned_end - lu_pinned_start` is 0, no map work at init.
    let one = HpbDescriptors { num_pinned: 1, ..d };
    let (_, init) = HpbLu::new(
        Geometry::new(&one).unwrap(),
        HcmParams::default(),
        IssuedWrites::Kept,
        T0,
    );
    assert!(!init.map_work);
}

#[test]
fn dev_reset_dcm_evicts_every_lru_region() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0), (1, 1)]);
    assert!(lu.on_response(&HpbResponse::DevReset).unwrap());
    assert_eq!(lu.srgn_state(0, 0), SrgnState::Invalid);
    assert_eq!(lu.inact_list(), [0, 1]);
    lu.map_work(T0);
    assert!(lu.lru().is_empty());
    assert_eq!(
        (lu.stats().rcmd_noti_cnt, lu.stats().rcmd_inactive_cnt),
        (3, 2)
    );
}

#[test]
fn invalid_responses_are_refused_uncounted() {
    let mut lu = dcm();
    let bad = |lu: &mut HpbLu, a: Vec<(u32, u32)>, i: Vec<u32>| {
        let rsp = HpbResponse::RegionUpdate {
            active: a,
            inactive: i,
        };
        lu.on_response(&rsp).unwrap_err().0
    };
    assert!(bad(&mut lu, vec![(0, 0); 3], vec![]).starts_with("at most 2 active"));
    assert!(bad(&mut lu, vec![], vec![]).contains("at least one field"));
    // Region 4 has a single sub-region.
    assert!(bad(&mut lu, vec![(4, 1)], vec![]).contains("region 4 sub-region 1"));
    assert!(bad(&mut lu, vec![], vec![5]).contains("got 5"));
    assert_eq!(lu.stats().rcmd_noti_cnt, 0);
}

// ---- host control mode ----

#[test]
fn hcm_activation_at_exactly_the_threshold_runs_at_the_poll() {
    let mut lu = hcm(HcmParams::default());
    for _ in 0..7 {
        assert_eq!(read(&mut lu, 0, 1), PrepKind::Miss);
    }
    assert!(lu.act_list().is_empty());
    read(&mut lu, 0, 1);
    assert_eq!(
        (lu.act_list(), lu.stats().rcmd_active_cnt),
        (vec![(0, 0)], 1)
    );
    // The 9th read does not re-queue; the reads themselves never run the map work.
    read(&mut lu, 0, 1);
    assert_eq!(lu.stats().rcmd_active_cnt, 1);
    assert_eq!(lu.reads(0, 0), (9, 9));
    assert_eq!(lu.rgn_state(0), RgnState::Inactive);
    // First poll at 200 ms: a list is non-empty → kick.
    let p = lu.read_timeout_work(Nanos::from_ms(200));
    assert_eq!(
        p,
        Poll {
            map_work: true,
            next_poll: Nanos::from_ms(400)
        }
    );
    let m = read_buffers(&lu.map_work(Nanos::from_ms(200)));
    assert_eq!((m[0].rgn, m[0].srgn), (0, 0));
    lu.map_req_done(&m[0]);
    assert_eq!(read(&mut lu, 0, 1), hit(1));
}

#[test]
fn hcm_one_map_request_in_flight() {
    let mut lu = hcm(HcmParams::default());
    for _ in 0..8 {
        read(&mut lu, 0, 1);
        read(&mut lu, 4, 1);
    }
    assert_eq!(lu.act_list(), [(0, 0), (0, 1)]);
    let m = read_buffers(&lu.map_work(T0));
    assert_eq!(m.len(), 1);
    // The second is throttled: UNUSED → (map allocated) → INVALID, back at the head.
    assert_eq!(lu.srgn_state(0, 1), SrgnState::Invalid);
    assert_eq!(lu.act_list(), [(0, 1)]);
    lu.map_req_done(&m[0]);
    let m2 = read_buffers(&lu.map_work(T0));
    assert_eq!((m2[0].srgn, lu.stats().map_req_cnt), (1, 2));
}

#[test]
fn hcm_write_clears_reads_and_dirty_regions_ignore_recommendations() {
    let mut lu = hcm(HcmParams::default());
    for _ in 0..8 {
        read(&mut lu, 0, 1);
    }
    let m = read_buffers(&lu.map_work(T0));
    lu.map_req_done(&m[0]);
    read(&mut lu, 4, 1);
    assert_eq!(lu.reads(0, 1), (1, 9));
    // The write resets sub-region 0's count (8) and marks region 0 dirty.
    lu.prep(T0, Op::Write, 0, 1);
    assert_eq!(lu.reads(0, 0), (0, 1));
    let before = lu.stats().rcmd_active_cnt;
    recommend(&mut lu, &[(0, 1)], &[]);
    assert_eq!(lu.stats().rcmd_active_cnt, before);
    // Recommendations for inactive regions are ignored too, and inactive fields always.
    recommend(&mut lu, &[(1, 0)], &[0]);
    assert_eq!(
        (lu.stats().rcmd_active_cnt, lu.stats().rcmd_inactive_cnt),
        (before, 0)
    );
    assert_eq!(lu.stats().rcmd_noti_cnt, 2);
    // Eight reads after the write re-queue the sub-region: the host's own refresh.
    for _ in 0..8 {
        read(&mut lu, 0, 1);
    }
    assert_eq!(lu.act_list(), [(0, 0)]);
    // Its reload is issued VALID → ISSUED and completes clean, clearing the region's flag.
    let m = read_buffers(&lu.map_work(T0));
    lu.map_req_done(&m[0]);
    assert_eq!(read(&mut lu, 0, 1), hit(2));
}

#[test]
fn hcm_read_timeout_expiries() {
    let p = HcmParams {
        read_timeout_ms: 400,
        read_timeout_expiries: 2,
        ..HcmParams::default()
    };
    let ms = Nanos::from_ms;
    let mut lu = hcm(p);
    for _ in 0..8 {
        read(&mut lu, 0, 1);
    }
    lu.map_work(T0); // region 0 active, timeout 400 ms, 2 expiries; load left in flight
                     // 200, 400: not strictly after the timeout. 600: one expiry, re-armed to 1000.
    for t in [200, 400, 600, 800, 1000] {
        let poll = lu.read_timeout_work(ms(t));
        assert!(!poll.map_work, "{t}");
    }
    // 1200 > 1000: the second expiry reaches 0 → queued for inactivation, kick.
    assert!(lu.read_timeout_work(ms(1200)).map_work);
    assert_eq!(
        (lu.inact_list(), lu.stats().rcmd_inactive_cnt),
        (vec![0], 1)
    );

    // A dirty region expires at its first timeout; a read rewinds the timer.
    let mut lu = hcm(p);
    for _ in 0..8 {
        read(&mut lu, 8, 1);
    }
    let m = read_buffers(&lu.map_work(T0));
    lu.map_req_done(&m[0]);
    lu.prep(T0, Op::Write, 9, 1);
    lu.prep(ms(300), Op::Read, 8, 1); // timeout now 700 ms
    assert!(!lu.read_timeout_work(ms(600)).map_work);
    assert!(lu.read_timeout_work(ms(800)).map_work);
    lu.map_work(ms(800));
    // HCM eviction sends WRITE BUFFER 01h.
    assert_eq!(
        (lu.rgn_state(1), lu.stats().umap_req_cnt),
        (RgnState::Inactive, 1)
    );
}

#[test]
fn hcm_eviction_thresholds() {
    let p = HcmParams {
        activation_thld: 2,
        eviction_thld_exit: 3,
        eviction_thld_enter: 4,
        ..HcmParams::default()
    };
    let mut lu = hcm(p);
    let activate = |lu: &mut HpbLu, lpn: u64, reads: u32| {
        for _ in 0..reads {
            read(lu, lpn, 1);
        }
        let cmds = lu.map_work(T0);
        read_buffers(&cmds).iter().for_each(|m| lu.map_req_done(m));
        cmds
    };
    activate(&mut lu, 0, 4); // region 0: 4 reads
    activate(&mut lu, 8, 2); // region 1: 2 reads
    assert_eq!(lu.lru(), [0, 1]);
    // Region 2 with 2 reads < enter (4): -EACCES, stays at the head.
    assert_eq!(activate(&mut lu, 16, 2), []);
    assert_eq!(lu.act_list(), [(2, 0)]);
    // Two more reads (no new activation: the count passed 2) make 4: admitted; region 0 has
    // 4 > exit (3) reads and is skipped, region 1 (2 reads) is the victim.
    let cmds = activate(&mut lu, 16, 2);
    assert_eq!(cmds[0], HpbCommand::InactivateRegion { rgn: 1 });
    assert_eq!(lu.lru(), [0, 2]);
}

#[test]
fn hcm_normalization_halves_counts_and_inactivates_unread_regions() {
    let mut lu = hcm(HcmParams::default());
    for _ in 0..8 {
        read(&mut lu, 0, 1);
    }
    lu.map_work(T0);
    // Region 0 holds 8 reads > 4 entries per sub-region: every read asks for normalization.
    assert!(lu.prep(T0, Op::Read, 4, 1).normalize);
    lu.normalize();
    assert_eq!((lu.reads(0, 0), lu.reads(0, 1)), ((4, 4), (0, 4)));
    lu.normalize();
    lu.normalize();
    assert_eq!(lu.reads(0, 0), (1, 1));
    assert!(lu.inact_list().is_empty());
    lu.normalize();
    assert_eq!(
        (lu.inact_list(), lu.stats().rcmd_inactive_cnt),
        (vec![0], 1)
    );
    // Queued again at the next pass while still active: counted again.
    lu.normalize();
    assert_eq!(lu.stats().rcmd_inactive_cnt, 2);
}

#[test]
fn hcm_dev_reset_flags_regions_for_reactivation() {
    let mut lu = hcm(HcmParams::default());
    for _ in 0..8 {
        read(&mut lu, 0, 1);
    }
    let m = read_buffers(&lu.map_work(T0));
    lu.map_req_done(&m[0]);
    assert!(!lu.on_response(&HpbResponse::DevReset).unwrap());
    let n = lu.stats().rcmd_active_cnt;
    read(&mut lu, 4, 1); // any sub-region of the flagged region
    assert_eq!(
        (lu.stats().rcmd_active_cnt, lu.act_list()),
        (n + 1, vec![(0, 1)])
    );
    read(&mut lu, 4, 1);
    assert_eq!(lu.stats().rcmd_active_cnt, n + 1);
}

#[test]
fn host_memory_follows_the_maps() {
    let mut lu = dcm();
    load(&mut lu, &[(0, 0), (0, 1), (1, 0)]);
    let mem = lu.host_memory();
    // 4 entries × 8 B = 32 B of map: one 4 KiB page per sub-region.
    assert_eq!((mem.mapped_srgns, mem.map_bytes), (3, 3 * 4096));
    // 2 active regions × 2 sub-regions × 1 page; the 512-page pool shrinks to 4.
    assert_eq!(
        (mem.max_map_bytes, mem.mempool_reserve_pages),
        (4 * 4096, 4)
    );
    load(&mut lu, &[(2, 0)]);
    let mem = lu.host_memory();
    assert_eq!((mem.mapped_srgns, mem.peak_map_bytes), (2, 3 * 4096));
}

// ---- randomized interleavings ----

/// The test's truth: a version per logical page, bumped by each write or discard, and the
/// versions each load captured when it was issued. An HPB READ entry is current when the version
/// its load captured is the page's version now.
struct Truth {
    version: Vec<u64>,
    captured: HashMap<MapLoadId, Vec<u64>>,
}

impl Truth {
    fn issue(&mut self, lu: &HpbLu, m: &MapReq) {
        let g = lu.geometry();
        let first = g.first_lpn(m.rgn, m.srgn) as usize;
        let n = g.srgn_entries(m.rgn, m.srgn) as usize;
        self.captured
            .insert(m.id, self.version[first..first + n].to_vec());
    }

    /// Stale entries among the pages an HPB READ covers.
    fn stale(&self, lu: &HpbLu, lpn: u64, len: u32, first_load: MapLoadId) -> usize {
        assert_eq!(lu.map_load_of(lpn), Some(first_load));
        let g = lu.geometry();
        (lpn..lpn + len as u64)
            .filter(|&l| {
                let p = g.pos(l);
                let load = lu
                    .map_load_of(l)
                    .expect("an HPB READ covers usable maps only");
                let at = (l - g.first_lpn(p.rgn, p.srgn)) as usize;
                self.captured[&load][at] != self.version[l as usize]
            })
            .count()
    }
}

/// One random interleaving of reads, writes, discards, device responses, map work, READ BUFFER
/// completions (in any order) and HCM polls; returns (HPB READs, stale entries they carried).
fn interleave(control: u8, pinned: u16, w: IssuedWrites, seed: u64) -> (u64, usize) {
    let d = HpbDescriptors {
        num_pinned: pinned,
        pinned_start: 1,
        ..desc(control)
    };
    let params = HcmParams {
        activation_thld: 2,
        eviction_thld_exit: 3,
        eviction_thld_enter: 4,
        ..HcmParams::default()
    };
    let geo = Geometry::new(&d).unwrap();
    let (rgns, blocks, max_len) = (geo.rgns_per_lu, geo.num_blocks, geo.max_single_cmd_blocks);
    let (mut lu, _) = HpbLu::new(geo, params, w, T0);
    let mut rng = Pcg32::new(seed, 11);
    let mut truth = Truth {
        version: vec![0; blocks as usize],
        captured: HashMap::new(),
    };
    let mut in_flight: Vec<MapReq> = Vec::new();
    let (mut now, mut eligible, mut stale) = (Nanos::ZERO, 0u64, 0usize);
    for _ in 0..4000 {
        now += Nanos::from_ms(rng.below(50));
        let mut cmds = Vec::new();
        match rng.below(12) {
            0..=4 => {
                let len = 1 + rng.below(max_len as u64 + 1) as u32;
                let lpn = rng.below(blocks - len as u64 + 1);
                let p = lu.prep(now, Op::Read, lpn, len);
                if len <= max_len {
                    eligible += 1;
                }
                if let PrepKind::Hit { map_load } = p.kind {
                    stale += truth.stale(&lu, lpn, len, map_load);
                }
                if p.normalize && rng.below(2) == 0 {
                    lu.normalize();
                }
            }
            5 => {
                let len = 1 + rng.below(6) as u32;
                let lpn = rng.below(blocks - len as u64 + 1);
                let op = if rng.below(2) == 0 {
                    Op::Write
                } else {
                    Op::Discard
                };
                lu.prep(now, op, lpn, len);
                for l in lpn..lpn + len as u64 {
                    truth.version[l as usize] += 1;
                }
            }
            6 | 7 => {
                let rsp = if rng.below(30) == 0 {
                    HpbResponse::DevReset
                } else {
                    let pick = |rng: &mut Pcg32| {
                        let r = rng.below(rgns as u64) as u32;
                        (r, rng.below(lu.geometry().srgn_cnt(r) as u64) as u32)
                    };
                    let n_act = rng.below(3);
                    let active = (0..n_act).map(|_| pick(&mut rng)).collect();
                    let n_inact = u64::from(n_act == 0 || rng.below(4) == 0);
                    let inactive = (0..n_inact)
                        .map(|_| rng.below(rgns as u64) as u32)
                        .collect();
                    HpbResponse::RegionUpdate { active, inactive }
                };
                if lu.on_response(&rsp).unwrap() {
                    cmds = lu.map_work(now);
                }
            }
            8 if !in_flight.is_empty() => {
                let m = in_flight.swap_remove(rng.below(in_flight.len() as u64) as usize);
                lu.map_req_done(&m);
            }
            9 if lu.is_hcm() => {
                if lu.read_timeout_work(now).map_work {
                    cmds = lu.map_work(now);
                }
            }
            _ => cmds = lu.map_work(now),
        }
        for m in read_buffers(&cmds) {
            truth.issue(&lu, &m);
            in_flight.push(m);
        }
        assert!(lu.lru().len() <= lu.geometry().max_lru_active as usize);
        assert_eq!(lu.num_inflight_map_req() as usize, in_flight.len());
        if lu.is_hcm() {
            assert!(in_flight.len() <= 1);
        }
    }
    let s = lu.stats();
    assert_eq!(s.hit_cnt + s.miss_cnt, eligible);
    (s.hit_cnt, stale)
}

/// (bHPBControl, pinned regions): DCM and HCM, with no LRU slot left in the last one.
const CONFIGS: [(u8, u16); 4] = [(1, 0), (1, 1), (0, 0), (0, 2)];

#[test]
fn no_hpb_read_carries_a_stale_entry() {
    for (control, pinned) in CONFIGS {
        let mut hits = 0;
        for seed in 0..16 {
            let (h, stale) = interleave(control, pinned, IssuedWrites::Kept, seed);
            assert_eq!(stale, 0, "control {control} pinned {pinned} seed {seed}");
            hits += h;
        }
        // The runs did exercise HPB READs (164 to 1631 per configuration over the 16 seeds).
        assert!(
            hits >= 100,
            "control {control} pinned {pinned}: {hits} hits"
        );
    }
}

#[test]
fn the_drivers_issued_write_race_sends_stale_entries() {
    // The same interleavings with the driver's behaviour: the check above can fail.
    let stale: usize = (0..16)
        .map(|seed| interleave(1, 0, IssuedWrites::Dropped, seed).1)
        .sum();
    assert!(stale > 0);
}
