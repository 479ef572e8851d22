//! The world: one queue for every component. CPUs and a device in one run, each wake-up
//! worked by hand; random streams that belong to components by name.

use torpor_core::apst::psd::{NvmeController, PowerState};
use torpor_core::apst::{ApstTable, APST_ENTRIES};
use torpor_core::cpu::system::{CpuReport, CpuRunSpec, CpuSystem, IrqMap};
use torpor_core::cpu::task::{Dist, Source, TaskIo, TaskSpec, Wake};
use torpor_core::cpu::CpuPlatform;
use torpor_core::cpuidle::GovernorName;
use torpor_core::metrics::LatencyHistogram;
use torpor_core::storage::io::IoOp;
use torpor_core::storage::nvme::device::NvmeDevice;
use torpor_core::storage::nvme::service::ServiceModel;
use torpor_core::workload::{FioJob, RwMode, Workload};
use torpor_core::world::{run_io, World};
use torpor_core::Nanos;

mod common;
use common::SerialDevice;

const US: u64 = 1_000;

/// One CPU with WFI only (1 us exit, real exit as declared) or with a sleep state whose real
/// entry and exit (130 + 150 us) make its declared 280 us, as a DT states them; the wake-up
/// path fixed: timer interrupt 10 us, device interrupt 20 us, IPI 5 us, scheduler 30 us.
fn platform(cpus: &str, sleep: bool) -> CpuPlatform {
    let sleep_state = if sleep {
        "[[cluster.state]]\nname = \"SLEEP\"\nexit_latency_us = 280\ntarget_residency_us = 2000\n\
         entry_us = 130.0\nexit_us = 150.0\n"
    } else {
        ""
    };
    let text = format!(
        r#"
id = "t"
name = "test"
source = "test"
[wakeup]
timer_irq = {{ min_us = 10.0, max_us = 10.0, source = "test" }}
io_irq = {{ min_us = 20.0, max_us = 20.0, source = "test" }}
ipi = {{ min_us = 5.0, max_us = 5.0, source = "test" }}
sched = {{ min_us = 30.0, max_us = 30.0, source = "test" }}
exit = {{ min = 1.0, max = 1.0, source = "test" }}
[[cluster]]
name = "c"
cpus = {cpus}
capacity = 1024
[[cluster.state]]
name = "WFI"
exit_latency_us = 1
target_residency_us = 1
{sleep_state}
[[cluster.opp]]
freq_khz = 1000000
"#
    );
    CpuPlatform::parse("t.toml", &text).unwrap()
}

fn reader(cpu: u32) -> TaskSpec {
    TaskSpec {
        name: "reader".into(),
        cpu,
        wake: Wake::Io,
        run: Dist::Fixed(Nanos::from_us(10)),
        wakes: None,
        io: Some(TaskIo {
            op: IoOp::Read,
            random: false,
            bs: 4096,
            offset: 0,
            size: 1 << 20,
            device: 0,
        }),
        timer_slack: Nanos::ZERO,
        job: None,
        uclamp: torpor_core::cpu::task::Uclamp::NONE,
    }
}

fn spec(platform: CpuPlatform, tasks: Vec<TaskSpec>, irq: IrqMap) -> CpuRunSpec {
    CpuRunSpec {
        platform,
        governor: GovernorName::parse("oracle").unwrap(),
        hz: 250,
        tasks,
        qos: vec![],
        seed: 1,
        irq: vec![irq],
        cpufreq: torpor_core::cpufreq::GovernorName::Performance,
        rate_limit_us: None,
    }
}

/// Runs the CPUs of `spec` with a device serving each request in 100 us.
fn run_with_device(spec: &CpuRunSpec, until: Nanos) -> (CpuReport, SerialDevice) {
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let cpus = CpuSystem::new(spec).unwrap();
    let out = World::new(&mut dev, Some(cpus), &mut [], 1)
        .unwrap()
        .run(until)
        .unwrap();
    (out.cpu.unwrap(), dev)
}

fn us_of(h: &LatencyHistogram) -> (u64, u64) {
    (h.min().unwrap().0 / US, h.max().unwrap().0 / US)
}

#[test]
fn a_completion_wakes_an_idle_cpu_during_its_idle_entry() {
    // The reader submits at 0; the CPU idles from 0 and the oracle, which cannot see the
    // device's future, takes SLEEP. The device completes at 100 us, during SLEEP's 130 us
    // entry: the entry completes (130), the exit follows (150: out at 280), the interrupt's
    // handler runs (20: 300), the scheduler switches to the reader (30: 330). It runs 10 us
    // and submits at 340; the next completes at 440 and runs at 440 + 30 + 150 + 20 + 30 =
    // 670. Each request: 330 us, of which device 100, exit 180, irq 20, sched 30.
    let s = spec(platform("[0]", true), vec![reader(0)], IrqMap::Managed);
    let (r, dev) = run_with_device(&s, Nanos::from_us(1_000));
    assert_eq!(dev.times_ns(), vec![0, 340 * US, 680 * US]);
    let io = r.tasks[0].io.as_ref().unwrap();
    assert_eq!(io.total.count(), 2);
    assert_eq!(us_of(&io.total), (330, 330));
    assert_eq!(us_of(&io.device), (100, 100));
    assert_eq!(us_of(&io.exit), (180, 180));
    assert_eq!(us_of(&io.irq), (20, 20));
    assert_eq!(us_of(&io.sched), (30, 30));
    // The kernel's measured residency runs from entry to the end of the exit: 280 us, short of
    // SLEEP's 2 ms target: each period counts as too deep, the third too (entered at 680,
    // woken at 780, before the run ends).
    assert_eq!(r.cpus[0].states[1].entries, 3);
    assert_eq!(r.cpus[0].states[1].above, 3);
}

#[test]
fn a_completion_while_the_cpu_runs_another_task_waits_behind_it() {
    // WFI only (1 us exit). The reader submits at 0 (done at 100). The hog's timer fires at
    // 50: the CPU leaves WFI (51), the timer's handler runs (61), the switch (91): the hog runs
    // 200 us, to 291. At 100 the completion interrupts it: its burst ends 20 us later (311);
    // then the switch to the reader (30): it runs at 341. Request latency 341: device 100,
    // irq 20, exit 0, sched 221 (the wait behind the hog and the switch).
    let hog = TaskSpec {
        name: "hog".into(),
        cpu: 0,
        wake: Wake::Periodic {
            period: Nanos::from_ms(10),
            phase: Nanos::from_us(50),
            jitter: Nanos::ZERO,
            source: Source::Timer,
        },
        run: Dist::Fixed(Nanos::from_us(200)),
        wakes: None,
        io: None,
        timer_slack: Nanos::ZERO,
        job: None,
        uclamp: torpor_core::cpu::task::Uclamp::NONE,
    };
    let s = spec(
        platform("[0]", false),
        vec![reader(0), hog],
        IrqMap::Managed,
    );
    let (r, dev) = run_with_device(&s, Nanos::from_us(400));
    assert_eq!(dev.times_ns(), vec![0, 351 * US]);
    assert_eq!(r.tasks[1].latency_min_ns, 41 * US);
    let io = r.tasks[0].io.as_ref().unwrap();
    assert_eq!(us_of(&io.total), (341, 341));
    assert_eq!(us_of(&io.irq), (20, 20));
    assert_eq!(us_of(&io.exit), (0, 0));
    assert_eq!(us_of(&io.sched), (221, 221));
}

#[test]
fn a_completion_on_another_cpu_wakes_the_task_by_an_ipi() {
    // The interrupt goes to CPU 1 while the reader waits on CPU 0, both in WFI. At 100: CPU 1
    // leaves WFI (101), runs the handler (121) and sends the IPI, which lands at 126; CPU 0
    // leaves WFI (127) and switches to the reader (157). Latency 157: device 100, irq 20 + 5,
    // exit 1 + 1, sched 30.
    let s = spec(platform("[0, 1]", false), vec![reader(0)], IrqMap::Fixed(1));
    let (r, _) = run_with_device(&s, Nanos::from_us(200));
    let io = r.tasks[0].io.as_ref().unwrap();
    assert_eq!(io.total.count(), 1);
    assert_eq!(us_of(&io.total), (157, 157));
    assert_eq!(us_of(&io.irq), (25, 25));
    assert_eq!(us_of(&io.exit), (2, 2));
    assert_eq!(us_of(&io.sched), (30, 30));
    // CPU 1 spent 20 us in the handler; CPU 0 30 us switching and 10 us running.
    assert_eq!(r.cpus[1].busy_ns, 20 * US);
}

/// Offsets of the IOs that fell in `[lo, hi)`, in the order the device accepted them.
fn offsets_in(dev: &SerialDevice, lo: u64, hi: u64) -> Vec<u64> {
    dev.submits
        .iter()
        .map(|(_, r)| r.offset)
        .filter(|o| (lo..hi).contains(o))
        .collect()
}

fn random_job(name: &str, offset: u64) -> FioJob {
    let mut job = FioJob::new(name, RwMode::RandRead);
    job.offset = offset;
    job.size = 1 << 20;
    job.number_ios = Some(50);
    job
}

#[test]
fn adding_a_workload_leaves_the_others_random_draws_unchanged() {
    // Job "a" alone draws its 50 offsets from its own stream.
    let mut alone = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut alone,
        &mut [Workload::Job(random_job("a", 0))],
        Nanos::MAX,
        7,
    )
    .unwrap();
    let a_alone = offsets_in(&alone, 0, 1 << 20);
    assert_eq!(a_alone.len(), 50);

    // Now "b" (in another region) comes first in the scenario: a's draws are the same.
    let mut both = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut both,
        &mut [
            Workload::Job(random_job("b", 1 << 30)),
            Workload::Job(random_job("a", 0)),
        ],
        Nanos::MAX,
        7,
    )
    .unwrap();
    assert_eq!(offsets_in(&both, 0, 1 << 20), a_alone);
    let b = offsets_in(&both, 1 << 30, (1 << 30) + (1 << 20));
    assert_eq!(b.len(), 50);
    // b's stream is its own: not a shifted copy of a's.
    let b_rel: Vec<u64> = b.iter().map(|o| o - (1 << 30)).collect();
    assert_ne!(b_rel, a_alone);

    // Another seed changes the draws (the streams are seeded, not fixed).
    let mut reseeded = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut reseeded,
        &mut [Workload::Job(random_job("a", 0))],
        Nanos::MAX,
        8,
    )
    .unwrap();
    assert_ne!(offsets_in(&reseeded, 0, 1 << 20), a_alone);
}

#[test]
fn two_jobs_with_one_name_still_draw_different_offsets() {
    let mut dev = SerialDevice::new(Nanos::from_us(10));
    run_io(
        &mut dev,
        &mut [
            Workload::Job(random_job("a", 0)),
            Workload::Job(random_job("a", 1 << 30)),
        ],
        Nanos::MAX,
        7,
    )
    .unwrap();
    let first = offsets_in(&dev, 0, 1 << 20);
    let second: Vec<u64> = offsets_in(&dev, 1 << 30, (1 << 30) + (1 << 20))
        .iter()
        .map(|o| o - (1 << 30))
        .collect();
    assert_ne!(first, second);
}

/// WDC PC SN530's power states (its published `smartctl -a` table, as tests/nvme_device.rs
/// copies it): PS3 non-operational, ENLAT 3900 us, EXLAT 11000 us.
fn sn530() -> NvmeController {
    let ps = |max_power_mw, non_operational, entry_lat_us, exit_lat_us| PowerState {
        max_power_mw,
        non_operational,
        entry_lat_us,
        exit_lat_us,
        active_power_mw: None,
        idle_power_mw: None,
    };
    NvmeController {
        model: "PC SN530 NVMe WDC 256GB".into(),
        npss: 4,
        apsta: true,
        power_states: vec![
            ps(3500.0, false, 0, 0),
            ps(2400.0, false, 0, 0),
            ps(1900.0, false, 0, 0),
            ps(25.0, true, 3900, 11000),
            ps(5.0, true, 5000, 39000),
        ],
    }
}

#[test]
fn a_task_reading_from_a_drive_in_ps3_pays_the_drives_exit_and_the_cpus_path() {
    // The v5.14 table puts the idle SN530 in PS3 after 100 ms (entered by 103.9 ms). The
    // reader sleeps 150 ms, wakes (WFI exit 1, timer interrupt 10, switch 30: runs at
    // 150.041 ms), runs 10 us and reads at 150.051 ms. The drive leaves PS3 (11 ms) and serves
    // the read (60 us): done at 161.111 ms, 11 060 us after submission. The completion wakes
    // CPU 0 from WFI (1), the handler runs (20), the switch (30): the reader runs at 161.162 ms.
    // Its read took 11 111 us: device 11 060, exit 1, irq 20, sched 30.
    let mut table = ApstTable {
        apste: true,
        entries: [0; APST_ENTRIES],
    };
    for (state, itps, itpt_ms) in [(0, 3, 100), (1, 3, 100), (2, 3, 100), (3, 4, 2000)] {
        table.entries[state] = (itps << 3) | (itpt_ms << 8);
    }
    let service = ServiceModel {
        read_4k_us: 60.0,
        write_4k_us: 20.0,
        read_mb_s: 2000.0,
        write_mb_s: 1000.0,
        parallelism: 1,
    };
    let mut drive = NvmeDevice::new(&sn530(), Some(&table), service);
    let mut task = reader(0);
    task.wake = Wake::Sleep {
        sleep: Dist::Fixed(Nanos::from_ms(150)),
        source: Source::Timer,
    };
    let s = spec(platform("[0]", false), vec![task], IrqMap::Managed);
    let cpus = CpuSystem::new(&s).unwrap();
    let out = World::new(&mut drive, Some(cpus), &mut [], 1)
        .unwrap()
        .run(Nanos::from_ms(200))
        .unwrap();
    let r = out.cpu.unwrap();
    let io = r.tasks[0].io.as_ref().unwrap();
    assert_eq!(io.total.count(), 1);
    assert_eq!(io.total.min(), Some(Nanos(11_111 * US)));
    assert_eq!(io.device.min(), Some(Nanos(11_060 * US)));
    assert_eq!(us_of(&io.exit), (1, 1));
    assert_eq!(us_of(&io.irq), (20, 20));
    assert_eq!(us_of(&io.sched), (30, 30));
}

#[test]
fn a_fio_jobs_thread_on_a_cpu_sees_each_completion_after_the_interrupt_and_its_wake_up() {
    // Three QD1 reads of a job whose thread runs on CPU 0; the interrupt goes to CPU 1. Each
    // read completes on the device 100 us after it is issued; CPU 1 leaves WFI (1), runs the
    // handler (20) and sends the IPI (5); CPU 0 leaves WFI (1) and switches to the thread
    // (30): fio sees the completion 57 us after the device, its clat 157 us, and issues the
    // next read then (at 157 and 314 us).
    let mut job = FioJob::new("reads", RwMode::Read);
    job.number_ios = Some(3);
    let thread = TaskSpec {
        name: "fio:reads".into(),
        cpu: 0,
        wake: Wake::Io,
        run: Dist::Fixed(Nanos::from_us(10)),
        wakes: None,
        io: None,
        timer_slack: Nanos::ZERO,
        job: Some(0),
        uclamp: torpor_core::cpu::task::Uclamp::NONE,
    };
    let s = spec(platform("[0, 1]", false), vec![thread], IrqMap::Fixed(1));
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let mut loads = [Workload::Job(job)];
    let out = World::new(&mut dev, Some(CpuSystem::new(&s).unwrap()), &mut loads, 1)
        .unwrap()
        .run(Nanos::from_ms(1))
        .unwrap();
    assert_eq!(dev.times_ns(), vec![0, 157 * US, 314 * US]);
    assert_eq!(out.io.ios, 3);
    assert_eq!(out.io.read.min(), Some(Nanos(157 * US)));
    assert_eq!(out.io.read.max(), Some(Nanos(157 * US)));
    let io = out.cpu.unwrap().tasks[0].io.clone().unwrap();
    assert_eq!(us_of(&io.irq), (25, 25));
    assert_eq!(us_of(&io.exit), (2, 2));
}

#[test]
fn a_timeline_keeps_the_slowest_requests_path_and_the_cpus_kernel_work() {
    // As in the entry test: each read 330 us (device 100, exit 180, irq 20, sched 30); all
    // equal, so the first is kept. CPU 0: SLEEP at 0, its exit from 100 us (the interrupt,
    // during the 130 us entry), the handler and the switch from 280 us (kernel), the reader
    // running at 330 us, SLEEP again at 340 us.
    let s = spec(platform("[0]", true), vec![reader(0)], IrqMap::Managed);
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let cpus = CpuSystem::new(&s)
        .unwrap()
        .with_timeline(Nanos::from_us(400), 100);
    let out = World::new(&mut dev, Some(cpus), &mut [], 1)
        .unwrap()
        .run(Nanos::from_us(1_000))
        .unwrap();
    let r = out.cpu.unwrap();
    let path = r.slowest_io.unwrap();
    assert_eq!(path.task, "reader");
    assert_eq!(
        (path.submitted_s, path.device_done_s, path.running_s),
        (0.0, 100e-6, 330e-6)
    );
    assert_eq!((path.irq_us, path.exit_us), (20.0, 180.0));
    let t = &r.timelines[0].timeline;
    let us: Vec<u64> = t.t_s.iter().map(|s| (s * 1e6).round() as u64).collect();
    assert_eq!(us, [0, 100, 280, 330, 340]);
    // WFI 0, SLEEP 1, exit 2, kernel 3, running 4.
    assert_eq!(t.state, [1, 2, 3, 4, 1]);
}

/// A reader of device slot `device` on CPU `cpu`.
fn reader_of(device: u8, cpu: u32) -> TaskSpec {
    let mut t = reader(cpu);
    t.name = format!("reader{device}");
    if let Some(io) = t.io.as_mut() {
        io.device = device;
    }
    t
}

#[test]
fn two_devices_each_interrupt_by_their_own_mapping() {
    // CPUs 0 and 1 in WFI. Reader 0 (CPU 0) reads device 0 (100 us, managed: its interrupt on
    // CPU 0); reader 1 (CPU 1) reads device 1 (50 us, fixed on CPU 0, as a UFS host's one
    // interrupt). Both submit at 0.
    // Device 1 completes at 50: CPU 0 leaves WFI (51), runs the handler (71) and sends the IPI
    // (76); CPU 1 leaves WFI (77) and switches (107): reader 1 waited 107 us (device 50, irq
    // 20 + 5, exit 1 + 1, sched 30); it runs 10 us and submits again at 117.
    // Device 0 completes at 100: CPU 0 (idle again since 71) leaves WFI (101), the handler
    // (121), the switch (151): reader 0 waited 151 us (device 100, irq 20, exit 1, sched 30).
    let mut s = spec(
        platform("[0, 1]", false),
        vec![reader_of(0, 0), reader_of(1, 1)],
        IrqMap::Managed,
    );
    s.irq = vec![IrqMap::Managed, IrqMap::Fixed(0)];
    let mut first = SerialDevice::new(Nanos::from_us(100));
    let mut second = SerialDevice::new(Nanos::from_us(50));
    let cpus = CpuSystem::new(&s).unwrap();
    let out = World::new(&mut first, Some(cpus), &mut [], 1)
        .unwrap()
        .with_second_device(&mut second, false)
        .run(Nanos::from_us(160))
        .unwrap();
    assert_eq!(first.times_ns(), vec![0]);
    assert_eq!(second.times_ns(), vec![0, 117 * US]);
    let r = out.cpu.unwrap();
    let one = r.tasks[1].io.as_ref().unwrap();
    assert_eq!(us_of(&one.total), (107, 107));
    assert_eq!(us_of(&one.irq), (25, 25));
    assert_eq!(us_of(&one.exit), (2, 2));
    let zero = r.tasks[0].io.as_ref().unwrap();
    assert_eq!(us_of(&zero.total), (151, 151));
    assert_eq!(us_of(&zero.irq), (20, 20));
    // Per device, the same requests; together, both.
    assert_eq!(r.io_by_device.len(), 2);
    assert_eq!(us_of(&r.io_by_device[0].total), (151, 151));
    assert_eq!(us_of(&r.io_by_device[1].total), (107, 107));
    assert_eq!(r.io.unwrap().total.count(), 2);
    // CPU 0 ran both handlers (20 + 20), its reader's switch (30) and the reader from 151 us
    // to the run's end at 160.
    assert_eq!(r.cpus[0].busy_ns, 79 * US);
}

#[test]
fn the_slowest_ios_path_names_the_device_that_served_it() {
    // The set-up above with a timeline, then with the devices' speeds swapped around: the
    // slower device's reader waits longest (each path's CPU part is under 60 us, the devices
    // differ by far more), so the slowest IO is reader 0's on slot 0, then reader 1's on 1.
    for (first_us, second_us, task, slot) in [(100, 50, "reader0", 0), (50, 300, "reader1", 1)] {
        let mut s = spec(
            platform("[0, 1]", false),
            vec![reader_of(0, 0), reader_of(1, 1)],
            IrqMap::Managed,
        );
        s.irq = vec![IrqMap::Managed, IrqMap::Fixed(0)];
        let mut first = SerialDevice::new(Nanos::from_us(first_us));
        let mut second = SerialDevice::new(Nanos::from_us(second_us));
        let cpus = CpuSystem::new(&s)
            .unwrap()
            .with_timeline(Nanos::from_us(400), 100);
        let out = World::new(&mut first, Some(cpus), &mut [], 1)
            .unwrap()
            .with_second_device(&mut second, false)
            .run(Nanos::from_us(400))
            .unwrap();
        let path = out.cpu.unwrap().slowest_io.unwrap();
        assert_eq!((path.task.as_str(), path.device), (task, slot));
        // On the device, its own service time (one request in flight per reader).
        let served_us = ((path.device_done_s - path.submitted_s) * 1e6).round() as u64;
        assert_eq!(served_us, first_us.max(second_us));
    }
}

#[test]
fn without_cpus_the_workloads_go_to_the_device_they_are_sent_to() {
    // Two devices, no CPUs: the job's 3 reads go to the second device (10 us each, one at a
    // time: submitted at 0, 10, 20); the first device sees none.
    let mut job = FioJob::new("j", RwMode::Read);
    job.number_ios = Some(3);
    let mut first = SerialDevice::new(Nanos::from_us(100));
    let mut second = SerialDevice::new(Nanos::from_us(10));
    let out = World::new(&mut first, None, &mut [Workload::Job(job)], 1)
        .unwrap()
        .with_second_device(&mut second, true)
        .run(Nanos::MAX)
        .unwrap();
    assert!(first.times_ns().is_empty());
    assert_eq!(second.times_ns(), vec![0, 10 * US, 20 * US]);
    assert_eq!(out.io.ios, 3);
}

#[test]
fn at_half_the_clock_a_burst_takes_twice_as_long_and_draws_that_opps_power() {
    use torpor_core::cpu::platform::{Opp, PowerMw};
    use torpor_core::cpufreq::GovernorName;
    // WFI only (1 us exit); the reader's 10 us of work is stated at the highest OPP (1 GHz).
    // Performance: completions at 100 us, the reader runs at 151 us (exit 1, irq 20, sched 30)
    // for 10 us and submits again at 161 us. Powersave holds 500 MHz: the same work takes
    // 20 us, so the second submission is at 171 us and the third at 171 + 171 = 342 us.
    let mut p = platform("[0]", false);
    let sourced = |mw: f64| {
        Some(PowerMw::Sourced {
            mw,
            source: "test".into(),
        })
    };
    p.clusters[0].opps = vec![
        Opp {
            freq_khz: 500_000,
            microvolt: None,
            power_mw: sourced(50.0),
        },
        Opp {
            freq_khz: 1_000_000,
            microvolt: None,
            power_mw: sourced(200.0),
        },
    ];
    let mut runs = vec![];
    for (governor, times) in [
        (GovernorName::Performance, [0, 161, 322]),
        (GovernorName::Powersave, [0, 171, 342]),
    ] {
        let mut s = spec(p.clone(), vec![reader(0)], IrqMap::Managed);
        s.cpufreq = governor;
        let (r, dev) = run_with_device(&s, Nanos::from_us(400));
        assert_eq!(
            dev.times_ns(),
            times.map(|t| t * US).to_vec(),
            "{governor:?}"
        );
        runs.push(r);
    }
    // The CPU is busy for the handler, the switch and the burst of each request: the active
    // energy is that time at the OPP's power. Two completions (100, 261 or 271 us) were
    // handled by 400 us, the third not yet: busy 2 x (20 + 30 + 10) = 120 us at 200 mW, or
    // 2 x (20 + 30 + 20) = 140 us at 50 mW.
    assert_eq!(runs[0].cpus[0].busy_ns, 120 * US);
    assert_eq!(runs[1].cpus[0].busy_ns, 140 * US);
    // WFI has no power figure here (0 mW): the energy is the active part alone, 120 us x
    // 200 mW = 24 uJ and 140 us x 50 mW = 7 uJ.
    assert!((runs[0].cpus[0].energy_mj - 0.024).abs() < 1e-12);
    assert!((runs[1].cpus[0].energy_mj - 0.007).abs() < 1e-12);
}

#[test]
fn schedutil_follows_the_iowait_boost_up_one_opp_per_completion() {
    use torpor_core::cpu::platform::{Opp, PowerMw};
    use torpor_core::cpufreq::GovernorName;
    // schedutil with rate_limit_us = 0 on 250/500/750/1000 MHz; no transition latency known
    // (CPUFREQ_ETERNAL), so each switch is at once. The reader's util stays 0 (its PELT clock
    // never crosses a 1024 us period here): only the IO-wait boost moves the frequency. Each
    // completion enqueues it with SCHED_CPUFREQ_IOWAIT within a tick of the last: the boost
    // goes 128, 256, 512, 1024; perf = boost x 1.25 (capped at 1024); raw = 1 GHz x perf /
    // 1024 = 156 250, 312 500, 625 000, 1 000 000 kHz; the lowest OPP at or above:
    // 250, 500, 750, 1000 MHz. The reader's 10 us of work takes 40, 20, 13.334, 10 us.
    // Completion c, reader start = c + 1 (exit) + 20 (irq) + 30 (sched), next submission =
    // start + work: 0 -> 100 -> 191; 291 -> 362; 462 -> 526.334; 626.334 -> 687.334.
    let mut p = platform("[0]", false);
    p.clusters[0].opps = [250_000u64, 500_000, 750_000, 1_000_000]
        .iter()
        .map(|&khz| Opp {
            freq_khz: khz,
            microvolt: None,
            power_mw: Some(PowerMw::Sourced {
                mw: khz as f64 / 10_000.0,
                source: "test".into(),
            }),
        })
        .collect();
    let mut s = spec(p, vec![reader(0)], IrqMap::Managed);
    s.cpufreq = GovernorName::Schedutil612;
    s.rate_limit_us = Some(0);
    let (r, dev) = run_with_device(&s, Nanos::from_us(800));
    assert_eq!(dev.times_ns(), vec![0, 191_000, 362_000, 526_334, 687_334]);
    let cpu = &r.cpus[0];
    // From 1 GHz (the policy's start) to 250, 500, 750 and back to 1000 MHz.
    assert_eq!(cpu.freq_changes, 4);
    // Busy per OPP (handler 20 + switch 30 + the burst at that OPP): 250 MHz 90 us,
    // 500 MHz 70, 750 MHz 63.334; 1 GHz 60 for the fourth request, and the fifth's
    // handler from 788.334 us to the end at 800.
    let at: Vec<(u64, u64)> = cpu.opps.iter().map(|o| (o.khz, o.time_ns)).collect();
    assert_eq!(
        at,
        vec![
            (250_000, 90_000),
            (500_000, 70_000),
            (750_000, 63_334),
            (1_000_000, 71_666)
        ]
    );
    // Each OPP's energy is its time at its power (25, 50, 75, 100 mW), and they add up to
    // the CPU's active energy (WFI has no power figure: 0 mW).
    for o in &cpu.opps {
        let want = o.time_ns as f64 * (o.khz as f64 / 10_000.0) * 1e-9;
        assert!((o.energy_mj - want).abs() < 1e-12, "{o:?}");
    }
    let sum: f64 = cpu.opps.iter().map(|o| o.energy_mj).sum();
    assert!((cpu.energy_mj - sum).abs() < 1e-12);
    assert_eq!(cpu.busy_ns, 90_000 + 70_000 + 63_334 + 71_666);
}
