//! Device control mode: recommendations, LRU, eviction, pinned regions, responses; and the read
//! and write paths they gate.

use super::*;
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
