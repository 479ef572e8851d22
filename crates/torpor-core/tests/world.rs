//! The world: one queue for every component. A toy second component woken by a device
//! completion, and random streams that belong to components by name.

use torpor_core::sim::Ctx;
use torpor_core::storage::io::IoTicket;
use torpor_core::workload::{FioJob, RwMode, Workload};
use torpor_core::world::{run_io, CompletionPath, World};
use torpor_core::Nanos;

mod common;
use common::SerialDevice;

const US: u64 = 1_000;

/// A toy CPU: a completion raises its interrupt, and the task sees the completion only once
/// the CPU has woken, `wake` later. It records when it was woken.
struct ToyCpu {
    wake: Nanos,
    woken_at: Vec<Nanos>,
}

#[derive(Clone, Copy, Debug)]
enum CpuEvent {
    Woke(IoTicket),
}

impl CompletionPath for ToyCpu {
    type Event = CpuEvent;

    fn on_completion<W>(
        &mut self,
        ctx: &mut Ctx<'_, W, CpuEvent>,
        ticket: IoTicket,
    ) -> Option<IoTicket> {
        ctx.schedule(ctx.now() + self.wake, CpuEvent::Woke(ticket));
        None
    }

    fn on_event<W>(&mut self, ctx: &mut Ctx<'_, W, CpuEvent>, e: CpuEvent) -> Option<IoTicket> {
        let CpuEvent::Woke(ticket) = e;
        self.woken_at.push(ctx.now());
        Some(ticket)
    }
}

fn ten_reads() -> FioJob {
    let mut job = FioJob::new("reads", RwMode::Read);
    job.number_ios = Some(10);
    job
}

#[test]
fn a_completion_passes_through_a_second_component_before_the_workload_sees_it() {
    // Direct: 10 reads at QD1 of 100 us each, back to back: each 100 us, done at 1 ms.
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let io = run_io(&mut dev, &mut [Workload::Job(ten_reads())], Nanos::MAX, 1).unwrap();
    assert_eq!(io.read.summary().mean_us, 100.0);
    assert_eq!(io.per_workload[0].finished, Some(Nanos(1_000 * US)));

    // Through a CPU that needs 20 us to wake: the workload sees each completion 20 us later,
    // so each read takes 120 us and the next one is issued only then: the k-th (from 0) is
    // accepted at 120k us, completes at 120k + 100, and is seen at 120(k + 1). Done at 1.2 ms.
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let cpu = ToyCpu {
        wake: Nanos::from_us(20),
        woken_at: vec![],
    };
    let mut loads = [Workload::Job(ten_reads())];
    let (io, cpu) = World::new(&mut dev, cpu, &mut loads, 1)
        .unwrap()
        .run(Nanos::MAX)
        .unwrap();
    assert_eq!(io.read.summary().mean_us, 120.0);
    assert_eq!(io.per_workload[0].finished, Some(Nanos(1_200 * US)));
    let accepted: Vec<u64> = dev.submits.iter().map(|(t, _)| t.0 / US).collect();
    assert_eq!(accepted, (0..10).map(|k| 120 * k).collect::<Vec<_>>());
    let woken: Vec<u64> = cpu.woken_at.iter().map(|t| t.0 / US).collect();
    assert_eq!(woken, (1..=10).map(|k| 120 * k).collect::<Vec<_>>());
}

#[test]
fn completions_after_the_end_of_the_run_are_not_delivered() {
    // The 10th read completes at 1.2 ms - 20 us = 1180 us and would be seen at 1200 us: a run
    // ending at 1190 us has seen only nine.
    let mut dev = SerialDevice::new(Nanos::from_us(100));
    let cpu = ToyCpu {
        wake: Nanos::from_us(20),
        woken_at: vec![],
    };
    let mut loads = [Workload::Job(ten_reads())];
    let (io, _) = World::new(&mut dev, cpu, &mut loads, 1)
        .unwrap()
        .run(Nanos::from_us(1_190))
        .unwrap();
    assert_eq!(io.ios, 9);
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
