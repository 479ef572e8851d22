//! Host control mode: read counters, the poll, throttling, thresholds, timeouts, normalization;
//! and the host-memory report.

use super::*;
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
