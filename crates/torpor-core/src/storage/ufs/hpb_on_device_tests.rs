//! HPB and the FTL on the engine, through the UFS device: sequences worked by hand from the
//! service stages (service.rs), the FTL's timing (ftl/) and the driver's steps (docs/hpb.md),
//! and randomized interleavings checking that no HPB READ the device serves carries a stale
//! entry.

use super::device::tests::config as device_config;
use super::device::{FtlSetup, UfsConfig, UfsDevice, UfsEvent, UfsStats};
use super::ftl::tests::hand as hand_ftl;
use super::hpb_exchange::{HpbDynamics, HpbSetup};
use super::power::IdleTimers;
use crate::hpb::{Geometry, HcmParams, HpbDescriptors, IssuedWrites};
use crate::sim::{Ctx, EventQueue, Pcg32};
use crate::storage::io::{BlockDevice, IoOp, IoRequest, IoTicket, Owner};
use crate::time::Nanos;

/// Host stage at 300 MHz: 1000 cycles = 3333 ns; 4096 B over 2 x HS-G4 at eta 0.91
/// (2,122,265,600 B/s): 1930 ns; 8192 B: 3860 ns.
const HOST: u64 = 3333;
const LINK_4K: u64 = 1930;
const LINK_8K: u64 = 3860;

/// 4 MiB sub-regions (code 13, 1024 entries), 8 MiB regions (code 14), a 32 MiB LU (4
/// regions), two active regions, HPB 1.0 (one block a command).
fn geometry(control: u8) -> Geometry {
    Geometry::new(&HpbDescriptors {
        hpb_version: 0x0100,
        hpb_control: control,
        region_size: 14,
        subregion_size: 13,
        device_max_active_regions: 2,
        lu_max_active_regions: 2,
        pinned_start: 0,
        num_pinned: 0,
        max_data_size_single_cmd: None,
        num_blocks: 8192,
    })
    .unwrap()
}

/// device.rs's hand-worked device at its max level only (3333 ns host stage, 1930 ns a 4 KiB
/// transfer), no auto-hibern8, with the hand FTL of ftl/'s tests (2 channels x 2 dies, tR
/// 50 us, 4096 B in 10.24 us, 20 us of controller, 2 map pages of 1024 entries cached, 4 LPNs
/// a NAND page) and HPB on `geo`.
fn config(geo: Geometry, params: HcmParams, issued_writes: IssuedWrites) -> UfsConfig {
    dcm_config(geo, params, issued_writes, HpbDynamics::INSTANT)
}

/// [`config`] with the device's recommendation threshold and the workqueue's latency.
fn dcm_config(
    geo: Geometry,
    params: HcmParams,
    issued_writes: IssuedWrites,
    dynamics: HpbDynamics,
) -> UfsConfig {
    let mut cfg = device_config(None, None);
    cfg.min = cfg.max;
    cfg.idle = IdleTimers {
        clk_gating_delay: Nanos::from_ms(5000),
        auto_hibern8: None,
    };
    cfg.ftl = Some(FtlSetup {
        config: hand_ftl(),
        hpb: Some(HpbSetup {
            geometry: geo,
            params,
            issued_writes,
            dynamics,
        }),
    });
    cfg
}

fn io(op: IoOp, lpn: u64) -> IoRequest {
    IoRequest {
        op,
        offset: lpn * 4096,
        bytes: 4096,
        sync: true,
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Submit(u32),
    Dev(UfsEvent),
}

/// Submits `reqs` at their times until `end`; returns (index, completion) in completion order
/// and the device's stats.
fn drive(cfg: UfsConfig, reqs: &[(Nanos, IoRequest)], end: Nanos) -> (Vec<(u32, Nanos)>, UfsStats) {
    let mut dev = UfsDevice::new(cfg).unwrap();
    let mut q: EventQueue<Ev> = EventQueue::new();
    dev.start(&mut Ctx::new(&mut q, Ev::Dev));
    for (i, &(t, _)) in reqs.iter().enumerate() {
        q.schedule(t, Ev::Submit(i as u32));
    }
    let mut done = Vec::new();
    while let Some((now, ev)) = q.pop_until(end) {
        match ev {
            Ev::Submit(i) => {
                let req = reqs[i as usize].1;
                let ticket = IoTicket {
                    owner: Owner::Workload(i),
                    device: 0,
                    op: req.op,
                    bytes: req.bytes,
                    submitted: now,
                };
                dev.submit(&mut Ctx::new(&mut q, Ev::Dev), ticket, &req);
            }
            Ev::Dev(e) => {
                if let Some(t) = dev.on_event(&mut Ctx::new(&mut q, Ev::Dev), e) {
                    let Owner::Workload(i) = t.owner else {
                        unreachable!("only workload tickets are submitted")
                    };
                    done.push((i, now));
                }
            }
        }
    }
    (done, dev.finish(end))
}

fn at(us: u64) -> Nanos {
    Nanos::from_us(us)
}

#[test]
fn device_control_a_device_map_miss_loads_the_subregion_and_later_reads_skip_the_lookup() {
    // Map page 4 (LPNs 4096-5119) hashes to unit 1 (channel 1); LPN 4096's data is on unit
    // (4096 / 4) mod 4 = 0 (channel 0), LPNs 4100-4103 on unit 1025 mod 4 = 1.
    let reqs = [
        (at(0), io(IoOp::Read, 4096)),
        (at(200), io(IoOp::Read, 4100)),
        (at(400), io(IoOp::Write, 4100)),
        (at(1000), io(IoOp::Read, 4100)),
        (at(1200), io(IoOp::Read, 4101)),
    ];
    let cfg = config(geometry(1), HcmParams::default(), IssuedWrites::Kept);
    let (done, stats) = drive(cfg, &reqs, at(5000));
    // 0: region 2 inactive -> a normal READ (miss). Host 0 -> 3333; controller -> 23333; map
    // page 4 missing: unit 1, 23333 + 50000 tR + 10240 transfer = 83573; data on unit 0:
    // 83573 + 60240 = 143813; link -> 145743. The device recommends (2, 0).
    let t1 = HOST + 20_000 + 60_240 + 60_240 + LINK_4K;
    assert_eq!(t1, 145_743);
    // At t1 the host reads the response and the map work sends READ BUFFER 1 for (2, 0):
    // host t1 -> t1 + 3333; controller 20 us; map page 4 now cached, no NAND read; 1024 entries
    // x 8 B = 8192 B over the link. VALID at t2 = 172936, before the read at 200 us.
    // 1: HPB READ: 200000 + 3333 + 20000 (no lookup) + 60240 (unit 1) + 1930 = 285503.
    // 2: the write (slots): done long before 1000 us; it dirties LPN 4100's entry.
    // 3: LPN 4100 is dirty -> a normal READ; its map page is cached (the write loaded it):
    //    1000000 + 3333 + 20000 + 60240 + 1930 = 1085503, no response.
    // 4: LPN 4101 is clean -> HPB READ: 1200000 + 85503.
    let by_index = |i: u32| done.iter().find(|d| d.0 == i).unwrap().1;
    assert_eq!(by_index(0), Nanos(t1));
    assert_eq!(
        by_index(1),
        Nanos(200_000 + HOST + 20_000 + 60_240 + LINK_4K)
    );
    assert_eq!(by_index(3), Nanos(1_000_000 + 85_503));
    assert_eq!(by_index(4), Nanos(1_200_000 + 85_503));
    let hpb = stats.hpb.unwrap();
    let s = hpb.stats;
    assert_eq!((s.hit_cnt, s.miss_cnt), (2, 2));
    assert_eq!(
        (s.rcmd_noti_cnt, s.rcmd_active_cnt, s.rcmd_inactive_cnt),
        (1, 1, 0)
    );
    assert_eq!(s.map_req_cnt, 1);
    assert_eq!(hpb.counters.read_buffers_done, 1);
    assert_eq!(hpb.counters.stale_entries, 0);
    let f = stats.ftl.unwrap();
    // Reads: 4 data reads, 2 of them HPB; lookups: read 0 missed page 4, read 3 and the
    // READ BUFFER found it.
    assert_eq!(
        (f.reads, f.hpb_reads, f.map_misses, f.map_hits),
        (4, 2, 1, 2)
    );
    assert_eq!((f.map_reads, f.writes), (1, 1));
    // One sub-region of 1024 entries x 8 B = 2 pages held.
    assert_eq!(hpb.host_memory.map_bytes, 8192);
    // The READ BUFFER's own completion: t1 + 3333 + 20000 + 3860.
    assert_eq!(t1 + HOST + 20_000 + LINK_8K, 172_936);
}

#[test]
fn the_map_work_runs_after_the_workqueue_latency() {
    // As the device-control test above: read 0's response reaches the host at t1 = 145743 and
    // its READ BUFFER takes 3333 + 20000 + 3860 = 27193 ns once sent, so with a workqueue
    // latency d the sub-region is VALID at 172936 + d. Read 1 is prepared at 200 us: an HPB
    // READ when 172936 + d < 200000, i.e. d <= 27063 ns; else a normal READ (its map page is
    // cached either way, so it completes at 285503 ns in both cases).
    let reqs = [
        (at(0), io(IoOp::Read, 4096)),
        (at(200), io(IoOp::Read, 4100)),
    ];
    for (delay_ns, hits) in [(0, 1), (27_000, 1), (28_000, 0)] {
        let dynamics = HpbDynamics {
            map_work_delay: Nanos(delay_ns),
            ..HpbDynamics::INSTANT
        };
        let cfg = dcm_config(
            geometry(1),
            HcmParams::default(),
            IssuedWrites::Kept,
            dynamics,
        );
        let (done, stats) = drive(cfg, &reqs, at(5000));
        assert_eq!(done[1], (1, Nanos(285_503)), "delay {delay_ns}");
        let s = stats.hpb.unwrap().stats;
        assert_eq!(
            (s.hit_cnt, s.miss_cnt),
            (hits, 2 - hits),
            "delay {delay_ns}"
        );
        assert_eq!(s.map_req_cnt, 1);
    }
}

#[test]
fn the_device_recommends_a_region_after_its_threshold_of_misses() {
    // The hand FTL caches 2 map pages of 1024 LPNs (LRU); regions are 2048 LPNs (2 sub-regions,
    // one map page each). Reads 1 ms apart:
    // r0 4096: map page 4 missed, region 2 at 1 miss.          host: miss
    // r1 5120: page 5 missed, region 2 at 2 = the threshold: (2, 1) recommended and loaded.
    //                                                         host: miss
    // r2 5121: (2, 1) VALID.                                   host: HPB READ
    // r3 0:    page 0 missed (page 4, least recent, leaves), region 0 at 1.   host: miss
    // r4 4097: page 4 missed; region 2 is past its threshold: (2, 0) recommended at once.
    //                                                         host: miss
    // r5 4098: (2, 0) VALID.                                   host: HPB READ
    // Device lookups missed: pages 4, 5, 0, 4; the READ BUFFERs find theirs cached.
    let lpns = [4096, 5120, 5121, 0, 4097, 4098];
    let reqs: Vec<_> = (0..6)
        .map(|i| (at(1000 * i), io(IoOp::Read, lpns[i as usize])))
        .collect();
    let run = |threshold| {
        let dynamics = HpbDynamics {
            device_miss_threshold: threshold,
            ..HpbDynamics::INSTANT
        };
        let cfg = dcm_config(
            geometry(1),
            HcmParams::default(),
            IssuedWrites::Kept,
            dynamics,
        );
        drive(cfg, &reqs, at(10_000)).1
    };
    let stats = run(2);
    let s = stats.hpb.unwrap().stats;
    assert_eq!((s.hit_cnt, s.miss_cnt), (2, 4));
    assert_eq!(
        (s.rcmd_noti_cnt, s.rcmd_active_cnt, s.map_req_cnt),
        (2, 2, 2)
    );
    assert_eq!(stats.ftl.unwrap().map_misses, 4);
    // At the first miss (threshold 1): r0 loads (2, 0), r1 (2, 1), r3 (0, 0); only r0, r1 and
    // r3 are normal READs.
    let s = run(1).hpb.unwrap().stats;
    assert_eq!((s.hit_cnt, s.miss_cnt), (3, 3));
    assert_eq!((s.rcmd_noti_cnt, s.map_req_cnt), (3, 3));
}

#[test]
fn a_region_the_device_drops_needs_its_threshold_of_misses_again() {
    // Threshold 2, a budget of 2 regions, every read a device miss (each the first of its map
    // page, or of one the 2-page cache has dropped since): regions 0, 1 and 2 each reach 2
    // misses (their second read recommends its sub-region 1); region 2 entering evicts region
    // 0, the least recent, which the device recommends inactivating and counts from 0 again.
    // The last read, in region 0 (map page 0, gone from the cache), is its first miss since:
    // no recommendation (it would be the 4th had the count stayed at 2).
    let lpns = [0, 1024, 2048, 3072, 4096, 5120, 1];
    let reqs: Vec<_> = (0..7)
        .map(|i| (at(1000 * i), io(IoOp::Read, lpns[i as usize])))
        .collect();
    let dynamics = HpbDynamics {
        device_miss_threshold: 2,
        ..HpbDynamics::INSTANT
    };
    let cfg = dcm_config(
        geometry(1),
        HcmParams::default(),
        IssuedWrites::Kept,
        dynamics,
    );
    let (_, stats) = drive(cfg, &reqs, at(10_000));
    let s = stats.hpb.unwrap().stats;
    assert_eq!(
        (s.rcmd_noti_cnt, s.rcmd_active_cnt, s.rcmd_inactive_cnt),
        (3, 3, 1)
    );
    assert_eq!(stats.ftl.unwrap().map_misses, 7);
}

#[test]
fn host_control_activates_at_the_poll_after_the_threshold() {
    // HCM: the 8th read of sub-region (0, 0) queues its activation, which only the read-timeout
    // poll (every 200 ms from time 0) sends. Reads 1 ms apart from 0; one at 150 ms (before the
    // poll: still a miss) and one at 250 ms (after the READ BUFFER at 200 ms: a hit).
    let mut reqs: Vec<_> = (0..8).map(|i| (at(1000 * i), io(IoOp::Read, i))).collect();
    reqs.push((at(150_000), io(IoOp::Read, 8)));
    reqs.push((at(250_000), io(IoOp::Read, 9)));
    let cfg = config(geometry(0), HcmParams::default(), IssuedWrites::Kept);
    let (done, stats) = drive(cfg, &reqs, at(300_000));
    assert_eq!(done.len(), 10);
    let hpb = stats.hpb.unwrap();
    let s = hpb.stats;
    assert_eq!((s.hit_cnt, s.miss_cnt), (1, 9));
    assert_eq!((s.rcmd_active_cnt, s.map_req_cnt), (1, 1));
    // HCM gets no device responses.
    assert_eq!((s.rcmd_noti_cnt, hpb.counters.responses), (0, 0));
    assert_eq!(hpb.counters.read_buffers_done, 1);
    // The poll at 200 ms ran the map work once; no other kick.
    assert_eq!(hpb.counters.map_work_runs, 1);
}

/// Random reads and writes over the LU's first 3 regions, dense enough that writes land on
/// sub-regions whose READ BUFFER is in flight.
fn random_mix(seed: u64, n: usize) -> Vec<(Nanos, IoRequest)> {
    let mut rng = Pcg32::new(seed, 11);
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += rng.below(40_000);
            let op = if rng.below(4) == 0 {
                IoOp::Write
            } else {
                IoOp::Read
            };
            // Cluster on a few sub-regions: LPNs 0-31 of sub-regions 0-5.
            let lpn = rng.below(6) * 1024 + rng.below(32);
            (Nanos(t), io(op, lpn))
        })
        .collect()
}

#[test]
fn no_hpb_read_carries_a_stale_entry_in_random_interleavings() {
    let mut hits = 0;
    for seed in 0..20 {
        for control in [0, 1] {
            let params = HcmParams {
                activation_thld: 2,
                ..HcmParams::default()
            };
            let cfg = config(geometry(control), params, IssuedWrites::Kept);
            let (_, stats) = drive(cfg, &random_mix(seed, 400), Nanos::from_ms(1000));
            let hpb = stats.hpb.unwrap();
            assert_eq!(
                hpb.counters.stale_entries, 0,
                "seed {seed} control {control}"
            );
            hits += hpb.stats.hit_cnt;
        }
    }
    // The check is not empty: HPB READs were sent.
    assert!(hits > 300, "{hits} HPB READs");
}

#[test]
fn the_drivers_issued_write_race_reaches_the_device_as_stale_entries() {
    let stale: u64 = (0..20)
        .map(|seed| {
            let cfg = config(geometry(1), HcmParams::default(), IssuedWrites::Dropped);
            let (_, stats) = drive(cfg, &random_mix(seed, 400), Nanos::from_ms(1000));
            stats.hpb.unwrap().counters.stale_entries
        })
        .sum();
    assert!(stale > 0);
}

#[test]
fn requests_past_the_lu_are_served_without_hpb_and_counted() {
    // The LU has 8192 blocks: a read of LPN 8191 is inside, one of LPN 8192 (or a 2-block read
    // from 8191) past its end. Both past-the-end reads are normal reads, counted, never HPB.
    let two_blocks = IoRequest {
        bytes: 8192,
        ..io(IoOp::Read, 8191)
    };
    let reqs = [
        (at(0), io(IoOp::Read, 8191)),
        (at(1000), io(IoOp::Read, 8192)),
        (at(2000), two_blocks),
        (at(3000), io(IoOp::Write, 9000)),
    ];
    let cfg = config(geometry(1), HcmParams::default(), IssuedWrites::Kept);
    let (done, stats) = drive(cfg, &reqs, at(10_000));
    assert_eq!(done.len(), 4);
    let hpb = stats.hpb.unwrap();
    assert_eq!(hpb.counters.outside_lu, 3);
    // Only the read inside was seen by the driver: one eligible read, a miss.
    assert_eq!((hpb.stats.hit_cnt, hpb.stats.miss_cnt), (0, 1));
}

#[test]
fn an_open_ended_run_ends_with_its_workloads_despite_the_hcm_poll() {
    // Host control mode re-arms its read-timeout poll for ever (as the driver does); a run
    // without a deadline still ends at the last completion, not when time runs out.
    use crate::workload::{FioJob, RwMode, Workload};
    let mut dev = UfsDevice::new(config(
        geometry(0),
        HcmParams::default(),
        IssuedWrites::Kept,
    ))
    .unwrap();
    let mut job = FioJob::new("r", RwMode::RandRead);
    job.size = 32 << 20;
    job.number_ios = Some(100);
    let mut loads = vec![Workload::Job(job)];
    let io = crate::world::run_io(&mut dev, &mut loads, Nanos::MAX, 1).unwrap();
    assert_eq!(io.ios, 100);
    assert_eq!(io.per_workload[0].finished, Some(io.end));
    // 100 QD1 reads take at least 100 x 85.5 us (each an HPB READ at best) and far less than
    // the first poll at 200 ms with room to spare for misses: the run stopped with them.
    assert!(io.end >= Nanos(100 * 85_503) && io.end < Nanos::from_ms(200));
}
