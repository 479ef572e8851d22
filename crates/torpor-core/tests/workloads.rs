//! IO workloads against devices simple enough to work every expectation out by hand:
//! fio-like jobs, the seven APST workflows, fio iolog replay and its error reporting.

use std::io::{BufRead, BufReader, Read};

use torpor_core::sim::Stop;
use torpor_core::storage::io::{IoOp, IoRequest, TimedDevice};
use torpor_core::trace::fio_iolog::{IologCounts, IologReader};
use torpor_core::workload::{
    apst_workflow, FioJob, ReplayOptions, RwMode, TraceReplay, Workload, APST_WORKFLOW_TITLES,
};
use torpor_core::world::run_io;
use torpor_core::{InputError, Nanos};

mod common;
use common::SerialDevice;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// `channels` independent copies of [`SerialDevice`]; an IO goes to the one that frees first.
struct ParallelDevice {
    service: Nanos,
    free_at: Vec<Nanos>,
}

impl TimedDevice for ParallelDevice {
    fn accept(&mut self, now: Nanos, _req: &IoRequest) -> Nanos {
        let slot = self.free_at.iter_mut().min().expect("at least one channel");
        *slot = now.max(*slot) + self.service;
        *slot
    }
}

fn job(rw: RwMode) -> FioJob {
    FioJob::new("t", rw)
}

fn run_one<D: TimedDevice>(
    dev: &mut D,
    job: FioJob,
    until: Nanos,
) -> torpor_core::workload::IoReport {
    run_io(dev, &mut [Workload::Job(job)], until, 1).expect("valid job")
}

// ---------------------------------------------------------------- the seven workflows

#[test]
fn apst_workflows_match_the_commit_message() {
    let expected_idle_ms = [
        None,
        Some(50),
        Some(150),
        Some(500),
        Some(1500),
        Some(5000),
        Some(150),
    ];
    for n in 1..=7u8 {
        let j = apst_workflow(n).expect("workflows 1 to 7 exist");
        assert_eq!(j.bs, 4096, "workflow {n}: 4K packets");
        assert!(j.time_based, "workflow {n} repeats until the run ends");
        assert_eq!(
            j.thinktime,
            expected_idle_ms[usize::from(n - 1)].map(Nanos::from_ms),
            "workflow {n}"
        );
        let (rw, depth, blocks) = match n {
            1 => (RwMode::Write, 2, 1),
            2..=6 => (RwMode::Write, 1, 1000),
            _ => (RwMode::RandRead, 1, 1),
        };
        assert_eq!(
            (j.rw, j.iodepth, j.thinktime_blocks),
            (rw, depth, blocks),
            "workflow {n}"
        );
        assert!(j.validate().is_ok());
    }
    assert!(apst_workflow(0).is_none() && apst_workflow(8).is_none());
    assert_eq!(APST_WORKFLOW_TITLES.len(), 7);
}

#[test]
fn workflow_3_issues_exactly_1000_writes_per_160ms_cycle_on_a_10us_device() {
    // 1000 writes back to back at depth 1 take 1000 × 10 us = 10 ms; the think time starts at
    // the 1000th completion and lasts 150 ms, so cycle c starts at c × 160 ms.
    // until = 480 ms: cycles 0, 1, 2 complete (the last write ends at 320 + 10 = 330 ms); the
    // 4th cycle's first write is issued at 480 ms but completes at 480.01 ms, after `until`.
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, apst_workflow(3).unwrap(), Nanos::from_ms(480));
    assert_eq!(r.ios, 3000);
    assert_eq!(r.write.count(), 3000);
    assert_eq!(r.read.count(), 0);
    assert_eq!(r.per_workload[0].issued, 3001);
    assert_eq!(
        (r.write.min(), r.write.max()),
        (Some(Nanos::from_us(10)), Some(Nanos::from_us(10)))
    );
    let t = dev.times_ns();
    assert_eq!(t[999], 999 * 10 * US); // last write of cycle 0
    assert_eq!(t[1000], 160 * MS); // first of cycle 1
    assert_eq!(t[2000], 320 * MS);
    assert_eq!(t[3000], 480 * MS);
    assert_eq!((r.end, r.stop), (Nanos::from_ms(480), Stop::Deadline));
    assert_eq!(r.bytes, 3000 * 4096);
}

#[test]
fn workflow_1_keeps_two_writes_in_flight_on_a_two_channel_device() {
    // Two channels of 10 us: each pair issued at 10k us completes at 10(k+1) us. Pairs issued
    // at 0..=990 us complete by 1000 us = until (events at `until` are handled): 100 pairs.
    let mut dev = ParallelDevice {
        service: Nanos::from_us(10),
        free_at: vec![Nanos::ZERO; 2],
    };
    let r = run_one(&mut dev, apst_workflow(1).unwrap(), Nanos::from_ms(1));
    assert_eq!(r.ios, 200);
    assert_eq!(r.per_workload[0].issued, 202); // the pair issued at 1000 us is still in flight
    assert_eq!(r.write.max(), Some(Nanos::from_us(10)));
}

#[test]
fn workflow_7_issues_one_random_read_every_150ms_plus_its_service_time() {
    // Read k is issued at k × (150 ms + 10 us) = k × 150.01 ms: k = 0..=6 fit in 1 s
    // (6 × 150.01 = 900.06 ms), k = 7 would be at 1050.07 ms.
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, apst_workflow(7).unwrap(), Nanos::from_secs(1));
    assert_eq!(r.read.count(), 7);
    let expected: Vec<u64> = (0..7).map(|k| k * 150_010 * US).collect();
    assert_eq!(dev.times_ns(), expected);
    for (_, req) in &dev.submits {
        assert_eq!(
            (req.op, req.bytes, req.offset % 4096),
            (IoOp::Read, 4096, 0)
        );
        assert!(req.offset < 1 << 30);
    }
    assert_eq!(r.stop, Stop::Deadline);
}

// ---------------------------------------------------------------- job mechanics

#[test]
fn iodepth_2_on_a_one_slot_device_doubles_latency_at_steady_state() {
    // At 0 both A and B are submitted: A ends at 10 us (latency 10), B queues behind it and ends
    // at 20 us (latency 20). From then on each IO is submitted when the one ahead of the
    // in-flight one completes, i.e. one service time before the device is free: latency 20 us.
    // 1000 IOs: one of 10 us, 999 of 20 us; mean (10 + 999 × 20) / 1000 = 19.99 us. The device
    // never idles, so the last completion is at 1000 × 10 us = 10 ms.
    let mut j = job(RwMode::Write);
    j.iodepth = 2;
    j.number_ios = Some(1000);
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(1));
    assert_eq!(r.write.count(), 1000);
    assert_eq!(
        (r.write.min(), r.write.max()),
        (Some(Nanos::from_us(10)), Some(Nanos::from_us(20)))
    );
    assert_eq!(r.write.mean_ns(), Some(19_990.0));
    assert_eq!((r.end, r.stop), (Nanos::from_ms(10), Stop::Drained));
    assert_eq!(r.per_workload[0].finished, Some(Nanos::from_ms(10)));
}

#[test]
fn rate_iops_issues_the_kth_io_no_sooner_than_k_over_rate() {
    // 1000 IOPS: IO k at k ms. runtime 1 s: IOs 0..=999; the 1000th would be due at 1000 ms,
    // the end of the runtime, so the job ends. The last completes at 999 ms + 10 us.
    let mut j = job(RwMode::Read);
    j.rate_iops = [Some(1000); 2];
    j.runtime = Some(Nanos::from_secs(1));
    j.time_based = true;
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(10));
    let expected: Vec<u64> = (0..1000).map(|k| k * MS).collect();
    assert_eq!(dev.times_ns(), expected);
    assert_eq!((r.end, r.stop), (Nanos(999 * MS + 10 * US), Stop::Drained));
}

#[test]
fn rate_iops_caps_each_direction_of_a_mixed_job_separately() {
    // fio applies a single rate_iops value to reads and to writes: the k-th read (and the k-th
    // write) may not start before k × 10 ms at 100 IOPS, so neither exceeds 100 in 1 s.
    let mut j = job(RwMode::RandRw);
    j.rate_iops = [Some(100); 2];
    j.runtime = Some(Nanos::from_secs(1));
    j.time_based = true;
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(10));
    for op in [IoOp::Read, IoOp::Write] {
        let times: Vec<u64> = dev
            .submits
            .iter()
            .filter(|(_, q)| q.op == op)
            .map(|(t, _)| t.0)
            .collect();
        assert!(times.len() <= 100);
        for (k, t) in times.iter().enumerate() {
            assert!(*t >= k as u64 * 10 * MS, "{op:?} #{k} at {t} ns");
        }
    }
    assert!(r.read.count() > 0 && r.write.count() > 0);
}

#[test]
fn runtime_counts_from_the_end_of_startdelay_and_stops_issuing() {
    // Start at 5 ms; 10 us writes back to back; runtime 1 ms: IOs at 5000, 5010, ..., 5990 us
    // (100 IOs); the next would be due at 6000 us = 5 ms + 1 ms, so the job ends there.
    let mut j = job(RwMode::Write);
    j.runtime = Some(Nanos::from_ms(1));
    j.startdelay = Some(Nanos::from_ms(5));
    j.time_based = true;
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(1));
    assert_eq!(r.ios, 100);
    assert_eq!(dev.times_ns()[0], 5 * MS);
    assert_eq!(dev.times_ns()[99], 5990 * US);
    assert_eq!((r.end, r.stop), (Nanos::from_ms(6), Stop::Drained));
}

#[test]
fn thinktime_blocks_3_stalls_after_every_third_completion() {
    // 3 writes at 0, 10, 20 us; the third completes at 30 us; 1 ms idle; next burst at 1030 us,
    // completes at 1060 us; next at 2060 us.
    let mut j = job(RwMode::Write);
    j.thinktime = Some(Nanos::from_ms(1));
    j.thinktime_blocks = 3;
    j.number_ios = Some(9);
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(1));
    let us = [0, 10, 20, 1030, 1040, 1050, 2060, 2070, 2080];
    assert_eq!(dev.times_ns(), us.map(|u| u * US).to_vec());
    assert_eq!(r.end, Nanos::from_us(2090));
}

#[test]
fn thinktime_with_iodepth_2_drains_the_queue_before_idling() {
    // Depth 2, stall after 4 completions, 1 ms idle, one-slot 10 us device:
    //   0: A, B issued (A ends 10, B 20)     10: A done (1) -> C     20: B done (2) -> D
    //   30: C done (3) -> E                  40: D done (4) -> stall; E still in flight
    //   50: E done: the queue is empty, idle starts; E counts towards the next window (1)
    //   1050: F, G issued    1060: F done (2) -> H    1070: G done (3) -> I (9th IO, the last)
    let mut j = job(RwMode::Write);
    j.iodepth = 2;
    j.thinktime = Some(Nanos::from_ms(1));
    j.thinktime_blocks = 4;
    j.number_ios = Some(9);
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    run_one(&mut dev, j, Nanos::from_secs(1));
    let us = [0, 0, 10, 20, 30, 1050, 1050, 1060, 1070];
    assert_eq!(dev.times_ns(), us.map(|u| u * US).to_vec());
}

#[test]
fn random_offsets_are_block_aligned_inside_the_region_and_repeat_with_the_seed() {
    // 16 blocks of 4 KiB at 1 MiB; 16000 reads: each block expects 1000 hits, binomial
    // standard deviation sqrt(16000 × 1/16 × 15/16) ≈ 30.6, so ±200 is > 6 sigma.
    let mut j = job(RwMode::RandRead);
    j.size = 64 * 1024;
    j.offset = 1 << 20;
    j.number_ios = Some(16_000);
    j.time_based = true;
    let offsets = |seed: u64| {
        let mut dev = SerialDevice::new(Nanos::from_us(1));
        run_io(
            &mut dev,
            &mut [Workload::Job(j.clone())],
            Nanos::from_secs(10),
            seed,
        )
        .unwrap();
        dev.offsets()
    };
    let a = offsets(42);
    let mut hits = [0u32; 16];
    for &o in &a {
        assert_eq!(o % 4096, 0);
        assert!((1 << 20..(1 << 20) + 64 * 1024).contains(&o), "offset {o}");
        hits[((o - (1 << 20)) / 4096) as usize] += 1;
    }
    assert!(hits.iter().all(|&h| (800..=1200).contains(&h)), "{hits:?}");
    assert_eq!(a, offsets(42));
    assert_ne!(a, offsets(43));
}

#[test]
fn sequential_offsets_wrap_inside_the_region() {
    let mut j = job(RwMode::Write);
    j.size = 16 * 1024;
    j.offset = 1 << 20;
    j.number_ios = Some(6);
    j.time_based = true;
    let mut dev = SerialDevice::new(Nanos::from_us(1));
    run_one(&mut dev, j, Nanos::from_secs(1));
    let k = 1024;
    let m = 1 << 20;
    assert_eq!(
        dev.offsets(),
        vec![m, m + 4 * k, m + 8 * k, m + 12 * k, m, m + 4 * k]
    );
}

#[test]
fn mixed_sequential_job_keeps_one_cursor_per_direction() {
    // fio keeps the last position per data direction: reads walk 0, 4k, 8k, ... and so do
    // writes, whatever the interleaving.
    let mut j = job(RwMode::Rw);
    j.number_ios = Some(200);
    let mut dev = SerialDevice::new(Nanos::from_us(1));
    run_one(&mut dev, j, Nanos::from_secs(1));
    for op in [IoOp::Read, IoOp::Write] {
        let offs: Vec<u64> = dev
            .submits
            .iter()
            .filter(|(_, q)| q.op == op)
            .map(|(_, q)| q.offset)
            .collect();
        let expected: Vec<u64> = (0..offs.len() as u64).map(|i| i * 4096).collect();
        assert_eq!(offs, expected, "{op:?}");
    }
}

#[test]
fn without_time_based_a_job_stops_after_size_bytes() {
    // size 16 KiB / bs 4 KiB = 4 reads, then the job is done (fio's io_size defaults to size).
    let mut j = job(RwMode::Read);
    j.size = 16 * 1024;
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_one(&mut dev, j, Nanos::from_secs(1));
    assert_eq!(dev.offsets(), vec![0, 4096, 8192, 12288]);
    assert_eq!(
        (r.ios, r.end, r.stop),
        (4, Nanos::from_us(40), Stop::Drained)
    );
}

#[test]
fn runs_with_the_same_seed_are_identical() {
    let mut j = job(RwMode::RandRw);
    j.iodepth = 4;
    j.number_ios = Some(5000);
    let trace = |seed| {
        let mut dev = ParallelDevice {
            service: Nanos::from_us(7),
            free_at: vec![Nanos::ZERO; 3],
        };
        let mut rec = SerialRecorder {
            inner: &mut dev,
            log: Vec::new(),
        };
        let r = run_io(
            &mut rec,
            &mut [Workload::Job(j.clone())],
            Nanos::from_secs(1),
            seed,
        )
        .unwrap();
        (rec.log, r.read.summary(), r.write.summary(), r.end)
    };
    assert_eq!(trace(9), trace(9));
    assert_ne!(trace(9).0, trace(10).0);
}

/// Records submissions in front of another device.
struct SerialRecorder<'a, D> {
    inner: &'a mut D,
    log: Vec<(Nanos, IoRequest, Nanos)>,
}

impl<D: TimedDevice> TimedDevice for SerialRecorder<'_, D> {
    fn accept(&mut self, now: Nanos, req: &IoRequest) -> Nanos {
        let done = self.inner.accept(now, req);
        self.log.push((now, *req, done));
        done
    }
}

// ---------------------------------------------------------------- job schema

#[test]
fn a_fio_job_reads_from_toml_under_fios_option_names() {
    let text = r#"
        name = "apst-workflow-3"
        rw = "write"
        bs = "4k"
        thinktime = "150ms"
        thinktime_blocks = 1000
        time_based = true
    "#;
    let j: FioJob = toml::from_str(text).unwrap();
    assert_eq!(j, apst_workflow(3).unwrap());
    let j: FioJob =
        toml::from_str("name = \"x\"\nrw = \"readwrite\"\nbs = 512\nsize = \"1m\"").unwrap();
    assert_eq!(
        (j.rw, j.bs, j.size, j.rwmixread, j.iodepth),
        (RwMode::Rw, 512, 1 << 20, 50, 1)
    );
}

#[test]
fn a_fio_job_refuses_unknown_keys_and_durations_without_unit() {
    let unknown =
        toml::from_str::<FioJob>("name = \"x\"\nrw = \"read\"\nblocksize = \"4k\"").unwrap_err();
    assert!(unknown.to_string().contains("blocksize"), "{unknown}");
    let bare =
        toml::from_str::<FioJob>("name = \"x\"\nrw = \"read\"\nthinktime = \"150\"").unwrap_err();
    assert!(bare.to_string().contains("unit"), "{bare}");
    let bad_size =
        toml::from_str::<FioJob>("name = \"x\"\nrw = \"read\"\nbs = \"4q\"").unwrap_err();
    assert!(bad_size.to_string().contains("4q"), "{bad_size}");
}

#[test]
fn validation_names_the_offending_key() {
    type Spoil = fn(&mut FioJob);
    let cases: [(&str, Spoil); 7] = [
        ("bs", |j| j.bs = 0),
        ("size", |j| j.size = 1024),
        ("rwmixread", |j| j.rwmixread = 101),
        ("iodepth", |j| j.iodepth = 0),
        ("thinktime_blocks", |j| j.thinktime_blocks = 0),
        ("rate_iops", |j| j.rate_iops = [Some(0); 2]),
        ("rate", |j| j.rate = [None, Some(0)]),
    ];
    for (key, spoil) in cases {
        let mut j = job(RwMode::Read);
        spoil(&mut j);
        assert_eq!(j.validate().unwrap_err().key, key);
        let e = run_io(
            &mut SerialDevice::new(Nanos(1)),
            &mut [Workload::Job(j)],
            Nanos(1),
            0,
        )
        .unwrap_err();
        assert!(e.message.contains(key), "{e}");
    }
}

// ---------------------------------------------------------------- iolog replay

fn replay_file(path: &str, options: ReplayOptions) -> Workload {
    let full = format!("{}/tests/data/iolog/{path}", env!("CARGO_MANIFEST_DIR"));
    let f = std::fs::File::open(&full).expect("fixture exists");
    let reader: Box<dyn BufRead + Send> = Box::new(BufReader::new(f));
    Workload::Replay(TraceReplay::new(reader, path, None, None, options).expect("valid header"))
}

fn replay_times(
    path: &str,
    options: ReplayOptions,
) -> (Vec<u64>, SerialDevice, torpor_core::workload::IoReport) {
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let r = run_io(
        &mut dev,
        &mut [replay_file(path, options)],
        Nanos::from_secs(100),
        0,
    )
    .unwrap();
    (dev.times_ns(), dev, r)
}

#[test]
fn v2_replay_issues_back_to_back_and_honours_waits_relative_to_the_previous_wait() {
    // read at 0 (ends 10 us); write at 10 us; `wait 1000` ends at 1000 us -> read at 1000 us;
    // sync and trim are counted only; `wait 5000` ends at 1000 + 5000 = 6000 us -> write.
    let (t, dev, r) = replay_times("hand-v2.iolog", ReplayOptions::default());
    assert_eq!(t, vec![0, 10 * US, 1000 * US, 6000 * US]);
    assert_eq!(
        dev.submits[3].1,
        IoRequest {
            op: IoOp::Write,
            offset: 0,
            bytes: 512,
            sync: true
        }
    );
    assert_eq!(r.bytes, 3 * 4096 + 512);
    assert_eq!((r.end, r.stop), (Nanos::from_us(6010), Stop::Drained));
    let counts = r.per_workload[0]
        .iolog
        .expect("a replay reports its log's counts");
    assert_eq!(
        counts,
        IologCounts {
            reads: 2,
            writes: 2,
            syncs: 1,
            trims: 1,
            waits: 2,
            file_actions: 3
        }
    );
}

#[test]
fn v3_replay_issues_at_timestamps_relative_to_the_first_line() {
    // First timestamp 100 us. Reads due at 1100 - 100 = 1000 us (the second waits for the
    // single slot: 1010 us); writes due at 3000 us and 10000 us.
    let (t, _, r) = replay_times("hand-v3.iolog", ReplayOptions::default());
    assert_eq!(t, vec![1000 * US, 1010 * US, 3000 * US, 10_000 * US]);
    assert_eq!(r.per_workload[0].iolog.unwrap().syncs, 1);
    // replay_time_scale = 200: twice the trace's rate, every delay halved.
    let fast = ReplayOptions {
        replay_time_scale: 200,
        ..ReplayOptions::default()
    };
    assert_eq!(
        replay_times("hand-v3.iolog", fast).0,
        vec![500 * US, 510 * US, 1500 * US, 5000 * US]
    );
    // replay_no_stall: order kept, timing dropped.
    let no_stall = ReplayOptions {
        replay_no_stall: true,
        ..ReplayOptions::default()
    };
    assert_eq!(
        replay_times("hand-v3.iolog", no_stall).0,
        vec![0, 10 * US, 20 * US, 30 * US]
    );
}

#[test]
fn v3_log_from_fios_test_suite_replays_writes_at_their_timestamps() {
    // t0038.iolog: `add` at 30 us, writes at 10752, 10782, 10785, 10788, 10793, 10797, 10799,
    // 10802, 10806, 10809 us, each after a trim. With fio's iodepth=128 no write waits for a
    // slot, so each is issued at its timestamp - 30 us.
    let opts = ReplayOptions {
        iodepth: 128,
        ..ReplayOptions::default()
    };
    let (t, dev, r) = replay_times("fio-t0038-v3.iolog", opts);
    let ts = [
        10752, 10782, 10785, 10788, 10793, 10797, 10799, 10802, 10806, 10809,
    ];
    assert_eq!(t, ts.map(|u| (u - 30) * US).to_vec());
    assert!(dev
        .submits
        .iter()
        .all(|(_, q)| q.op == IoOp::Write && q.bytes == 4096));
    let counts = r.per_workload[0].iolog.unwrap();
    assert_eq!(
        (
            counts.writes,
            counts.trims,
            counts.reads,
            counts.file_actions
        ),
        (10, 10, 0, 3)
    );
}

fn parse_all(text: &[u8]) -> Result<u64, InputError> {
    let mut r = IologReader::new(text, "bad.iolog")?;
    let mut n = 0;
    while r.next_entry()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[test]
fn malformed_iologs_are_refused_with_file_and_line() {
    let v2 = "fio version 2 iolog\n/d add\n/d open\n";
    let v3 = "fio version 3 iolog\n10 /d add\n20 /d open\n";
    let cases: Vec<(String, usize, &str)> = vec![
        ("fio version 1 iolog\n/d add\n".into(), 1, "header"),
        (String::new(), 1, "header"),
        (format!("{v2}/d frob 0 4096\n"), 4, "unknown action"),
        (format!("{v2}/d read 0\n"), 4, "offset and a length"),
        (format!("{v2}/d read abc 4096\n"), 4, "byte offset"),
        (format!("{v2}/d write 0 4294967296\n"), 4, "length"),
        (format!("{v2}/d read 0 4096 9\n"), 4, "extra field"),
        (format!("{v2}/d add 0 0\n"), 4, "no offset"),
        (
            "fio version 2 iolog\n/d read 0 4096\n".into(),
            2,
            "not added",
        ),
        (
            "fio version 2 iolog\n\n/d add\n\n/d bogus\n".into(),
            5,
            "unknown action",
        ),
        (
            "fio version 2 iolog\n/d\n".into(),
            2,
            "expected `filename action`",
        ),
        (format!("{v3}15 /d read 0 4096\n"), 4, "goes back"),
        (format!("{v3}30 /d wait 100 0\n"), 4, "not allowed"),
        ("fio version 3 iolog\nten /d add\n".into(), 2, "timestamp"),
        (format!("{v3}/d read 0 4096\n"), 4, "timestamp"),
    ];
    for (text, line, needle) in cases {
        let e = parse_all(text.as_bytes()).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line),
            ("bad.iolog", Some(line)),
            "{text:?}: {e}"
        );
        assert!(e.message.contains(needle), "{text:?}: {e}");
        assert!(e.to_string().starts_with(&format!("bad.iolog:{line}: ")));
    }
    let not_utf8 = parse_all(b"fio version 2 iolog\n/d add\n\xff\xfe read\n").unwrap_err();
    assert_eq!(not_utf8.line, Some(3));
}

#[test]
fn a_malformed_line_met_during_replay_stops_the_run_with_its_line() {
    let text = "fio version 2 iolog\n/d add\n/d open\n/d read 0 4096\n/d raed 0 4096\n";
    let reader: Box<dyn BufRead + Send> = Box::new(text.as_bytes());
    let replay =
        TraceReplay::new(reader, "typo.iolog", None, None, ReplayOptions::default()).unwrap();
    let e = run_io(
        &mut SerialDevice::new(Nanos(1)),
        &mut [Workload::Replay(replay)],
        Nanos::MAX,
        0,
    )
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("typo.iolog", Some(5)));
}

#[test]
fn replay_options_refuse_zero_scale_and_depth() {
    for opts in [
        ReplayOptions {
            replay_time_scale: 0,
            ..ReplayOptions::default()
        },
        ReplayOptions {
            iodepth: 0,
            ..ReplayOptions::default()
        },
    ] {
        let reader: Box<dyn BufRead + Send> = Box::new(&b"fio version 3 iolog\n"[..]);
        assert!(TraceReplay::new(reader, "x.iolog", None, None, opts).is_err());
    }
}

/// Produces a version 3 iolog of `lines` lines on demand, one line at a time, so the test
/// holds at most one line of it: `0 /d add`, `0 /d open`, then reads every 10 us.
struct GeneratedLog {
    lines: u64,
    produced: u64,
    line: Vec<u8>,
    pos: usize,
}

impl Read for GeneratedLog {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.line.len() {
            if self.produced == self.lines {
                return Ok(0);
            }
            self.line.clear();
            let i = self.produced;
            let text = match i {
                0 => "fio version 3 iolog\n".to_string(),
                1 => "0 /d add\n".to_string(),
                2 => "0 /d open\n".to_string(),
                _ => format!("{} /d read {} 4096\n", 10 * (i - 2), 4096 * (i % 1000)),
            };
            self.line.extend_from_slice(text.as_bytes());
            self.pos = 0;
            self.produced += 1;
        }
        let n = out.len().min(self.line.len() - self.pos);
        out[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn a_200k_line_iolog_replays_from_a_stream() {
    // 200 000 lines: header, add, open, then 199 997 reads; read j (1-based) at 10·j us.
    // With a 1 us device each ends before the next is due: the last is issued at
    // 1 999 970 us and completes at 1 999 971 us.
    let log = GeneratedLog {
        lines: 200_000,
        produced: 0,
        line: Vec::new(),
        pos: 0,
    };
    let reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(4096, log));
    let replay =
        TraceReplay::new(reader, "<generated>", None, None, ReplayOptions::default()).unwrap();
    let mut dev = ParallelDevice {
        service: Nanos::from_us(1),
        free_at: vec![Nanos::ZERO],
    };
    let r = run_io(&mut dev, &mut [Workload::Replay(replay)], Nanos::MAX, 0).unwrap();
    assert_eq!(r.read.count(), 199_997);
    assert_eq!(r.read.max(), Some(Nanos::from_us(1)));
    assert_eq!((r.end, r.stop), (Nanos::from_us(1_999_971), Stop::Drained));
}

#[test]
fn a_job_and_a_replay_share_one_device() {
    // A 4-read job at time 0 and hand-v3.iolog (first IO due at 1000 us) on a 10 us device:
    // the job's reads end by 40 us and do not disturb the replay's times.
    let mut j = job(RwMode::Read);
    j.size = 16 * 1024;
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    let mut w = [
        Workload::Job(j),
        replay_file("hand-v3.iolog", ReplayOptions::default()),
    ];
    let r = run_io(&mut dev, &mut w, Nanos::from_secs(1), 0).unwrap();
    assert_eq!(
        dev.times_ns(),
        vec![
            0,
            10 * US,
            20 * US,
            30 * US,
            1000 * US,
            1010 * US,
            3000 * US,
            10_000 * US
        ]
    );
    assert_eq!(
        (r.per_workload[0].ios, r.per_workload[1].ios, r.ios),
        (4, 4, 8)
    );
    assert_eq!(r.per_workload[1].name, "hand-v3.iolog");
}

// ---------------------------------------------------------------- bounds of a replay

#[test]
fn a_trace_time_beyond_the_clocks_horizon_is_an_error_at_its_line() {
    // 2^62 ns = 4 611 686 018 427 387.904 us: the second read is due just past it.
    let log = "fio version 3 iolog\n0 /d add\n0 /d open\n0 /d read 0 4096\n\
               4611686018427388 /d read 0 4096\n";
    let replay = |options| {
        let reader: Box<dyn BufRead + Send> = Box::new(log.as_bytes());
        [Workload::Replay(
            TraceReplay::new(reader, "t.log", None, None, options).unwrap(),
        )]
    };
    let mut loads = replay(ReplayOptions::default());
    let e = run_io(&mut SerialDevice::new(Nanos(10)), &mut loads, Nanos::MAX, 1).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("t.log", Some(5)));
    assert!(e.message.contains("beyond 2^62 ns"), "{e}");
    // The same gap at 200 % speed lands within it: both reads complete, 10 ns each.
    let fast = ReplayOptions {
        replay_time_scale: 200,
        ..ReplayOptions::default()
    };
    let mut loads = replay(fast);
    let r = run_io(&mut SerialDevice::new(Nanos(10)), &mut loads, Nanos::MAX, 1).unwrap();
    assert_eq!(r.ios, 2);
    assert_eq!(r.read.max(), Some(Nanos(10)));
}

#[test]
fn a_log_naming_many_distinct_files_is_read_to_its_end() {
    // fio's HOWTO lets a log name any number of files; each is looked up per line, so this
    // many would take minutes if each lookup scanned the list.
    let n = 200_000;
    let mut log = String::from("fio version 2 iolog\n");
    for i in 0..n {
        log.push_str(&format!("/f{i} add\n/f{i} open\n/f{i} read 0 512\n"));
    }
    let mut r = IologReader::new(log.as_bytes(), "many.log").unwrap();
    while r.next_entry().unwrap().is_some() {}
    assert_eq!(r.counts().reads, n);
    assert_eq!(r.counts().file_actions, 2 * n);
}

// ---------------------------------------------------------------- iozone

#[test]
fn an_iozone_run_reads_each_threads_file_once_over() {
    use std::path::Path;
    use torpor_core::drivers::run::{run_text, Limits};
    // 1 MiB over 4 threads = 256 KiB each = 64 records of 4 KiB: 4 workloads of 64 reads,
    // 256 reads and 1 MiB in all, every one finished well before the 10 s run ends (at most
    // 256 reads at QD1 on a device of ~150 us: < 40 ms each).
    let text = "[platform.ufs]\npreset = \"ufs21-64gb-class\"\n[workload.iozone]\n\
                range = \"1m\"\nthreads = 4\n[run]\nduration = \"10s\"\n";
    let report = run_text(
        text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut (),
    )
    .expect("runs");
    let io = &report.variants[0].io;
    let names: Vec<&str> = io.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["iozone-0", "iozone-1", "iozone-2", "iozone-3"]);
    for w in &io.workloads {
        assert_eq!(
            (w.issued, w.ios, w.bytes),
            (64, 64, 64 * 4096),
            "{}",
            w.name
        );
        assert!(w.finished_s.is_some_and(|s| s < 0.04), "{}", w.name);
    }
    assert_eq!((io.ios, io.bytes, io.write.count), (256, 1 << 20, 0));
}
