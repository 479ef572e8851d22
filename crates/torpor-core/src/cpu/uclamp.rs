//! Utilization clamping of a run queue (uclamp), as Linux v6.12 aggregates it
//! (kernel/sched/core.c: `uclamp_rq_inc`, `uclamp_rq_dec` and their helpers; the bucket width of
//! kernel/sched/sched.h).
//!
//! A task's clamps (`uclamp_min`, `uclamp_max`, capacity units) bound the utilization schedutil
//! sees for the CPU it is runnable on: a floor (a boosted UI thread) and a cap (a background
//! task held to a low OPP). The CPU takes the largest floor and the largest cap of its runnable
//! tasks, counted in buckets so that enqueue and dequeue cost little:
//!
//! 1. Each clamp value falls in one of `UCLAMP_BUCKETS` (5, `CONFIG_UCLAMP_BUCKETS_COUNT`'s
//!    default) buckets of width `DIV_ROUND_CLOSEST(1024, 5)` = 205 (the last one open-ended).
//! 2. Enqueue (`uclamp_rq_inc_id`, floor then cap): the bucket counts one more task; if the CPU
//!    had been idle (no runnable task since its last dequeue), the CPU's value first becomes
//!    the task's; the bucket keeps the largest value of its tasks; the CPU's value rises to the
//!    task's if that is larger. The idle mark is cleared after both clamps.
//! 3. Dequeue (`uclamp_rq_dec_id`): the bucket counts one task less. While it still has tasks,
//!    nothing else changes (a bucket may keep a departed task's larger value: the kernel accepts
//!    that over-boost). Once empty, if its value was the CPU's, the CPU's value becomes that of
//!    the highest bucket still holding tasks; with none left, the floor returns to 0 and the cap
//!    keeps the departing task's value (`uclamp_idle_value`: blocked utilization must not raise
//!    the frequency when the cap drops at idle), and the CPU is marked idle.
//! 4. The whole aggregation is off until something sets a clamp (`sched_uclamp_used`): then
//!    every task counts, those that set none with floor 0 and cap 1024.
//!
//! Where the scheduler calls them (v6.12, `enqueue_task`/`dequeue_task`): the increment after
//! the class's enqueue, whose frequency update thus does not see the waking task's clamp yet;
//! the decrement before the class's dequeue. Not modelled: task groups' clamps and the system
//! defaults that restrict a task's request (the values given are the effective ones), the RT
//! class's default floor of 1024, delayed dequeue (`sched_delayed`).

use super::task::Uclamp;
use crate::cpufreq::schedutil::SCHED_CAPACITY_SCALE;

/// `CONFIG_UCLAMP_BUCKETS_COUNT`'s default.
pub const UCLAMP_BUCKETS: usize = 5;

/// `UCLAMP_BUCKET_DELTA`: 1024 / 5 rounded to the closest integer.
const BUCKET_DELTA: u32 =
    (SCHED_CAPACITY_SCALE + UCLAMP_BUCKETS as u32 / 2) / UCLAMP_BUCKETS as u32;

fn bucket_id(value: u32) -> usize {
    ((value / BUCKET_DELTA) as usize).min(UCLAMP_BUCKETS - 1)
}

/// One clamp (floor or cap) of a run queue.
#[derive(Clone, Debug)]
struct Clamp {
    tasks: [u32; UCLAMP_BUCKETS],
    values: [u32; UCLAMP_BUCKETS],
    value: u32,
}

impl Clamp {
    fn new(value: u32) -> Clamp {
        Clamp {
            tasks: [0; UCLAMP_BUCKETS],
            values: [0; UCLAMP_BUCKETS],
            value,
        }
    }

    fn inc(&mut self, v: u32, idle: bool) {
        let b = bucket_id(v);
        self.tasks[b] += 1;
        if idle {
            self.value = v;
        }
        if self.tasks[b] == 1 || v > self.values[b] {
            self.values[b] = v;
        }
        self.value = self.value.max(v);
    }

    /// Step 3; `None` when no bucket holds a task any more (the caller's idle value applies).
    fn dec(&mut self, v: u32) -> Option<()> {
        let b = bucket_id(v);
        self.tasks[b] = self.tasks[b].saturating_sub(1);
        if self.tasks[b] > 0 || self.values[b] < self.value {
            return Some(());
        }
        let top = (0..UCLAMP_BUCKETS).rev().find(|&i| self.tasks[i] > 0)?;
        self.value = self.values[top];
        Some(())
    }
}

/// A run queue's two clamps.
#[derive(Clone, Debug)]
pub struct RqClamps {
    min: Clamp,
    max: Clamp,
    /// `UCLAMP_FLAG_IDLE`: no runnable task since the last one left (set at boot).
    idle: bool,
}

impl Default for RqClamps {
    fn default() -> RqClamps {
        RqClamps {
            min: Clamp::new(0),
            max: Clamp::new(SCHED_CAPACITY_SCALE),
            idle: true,
        }
    }
}

impl RqClamps {
    /// Step 2: a task with clamps `c` became runnable here.
    pub fn inc(&mut self, c: Uclamp) {
        self.min.inc(c.min, self.idle);
        self.max.inc(c.max, self.idle);
        self.idle = false;
    }

    /// Step 3: a task with clamps `c` stopped being runnable here.
    pub fn dec(&mut self, c: Uclamp) {
        if self.min.dec(c.min).is_none() {
            self.min.value = 0;
        }
        if self.max.dec(c.max).is_none() {
            self.max.value = c.max;
            self.idle = true;
        }
    }

    /// `uclamp_rq_get(rq, UCLAMP_MIN)`.
    pub fn floor(&self) -> u32 {
        self.min.value
    }

    /// `uclamp_rq_get(rq, UCLAMP_MAX)`.
    pub fn cap(&self) -> u32 {
        self.max.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clamps(min: u32, max: u32) -> Uclamp {
        Uclamp { min, max }
    }

    #[test]
    fn buckets_are_205_wide_and_the_last_is_open() {
        // DIV_ROUND_CLOSEST(1024, 5) = (1024 + 2) / 5 = 205.
        assert_eq!(BUCKET_DELTA, 205);
        assert_eq!(
            [0, 204, 205, 409, 410, 819, 820, 1024].map(bucket_id),
            [0, 0, 1, 1, 2, 3, 4, 4]
        );
    }

    #[test]
    fn the_floor_is_the_largest_runnable_and_falls_to_zero_at_idle() {
        let mut rq = RqClamps::default();
        assert_eq!((rq.floor(), rq.cap()), (0, 1024));
        rq.inc(clamps(300, 1024));
        rq.inc(clamps(700, 1024));
        assert_eq!(rq.floor(), 700);
        // 700 leaves (its bucket 3 empties): the highest bucket with a task is 1, value 300.
        rq.dec(clamps(700, 1024));
        assert_eq!(rq.floor(), 300);
        rq.dec(clamps(300, 1024));
        assert_eq!((rq.floor(), rq.cap()), (0, 1024));
    }

    #[test]
    fn a_bucket_keeps_a_departed_tasks_larger_value_while_it_has_tasks() {
        // 300 and 400 share bucket 1 (205..409): the bucket's value is 400; when the 400 task
        // leaves, one task remains in it, so the floor stays 400 (the kernel's accepted
        // over-boost) until the bucket empties.
        let mut rq = RqClamps::default();
        rq.inc(clamps(300, 1024));
        rq.inc(clamps(400, 1024));
        rq.dec(clamps(400, 1024));
        assert_eq!(rq.floor(), 400);
        rq.dec(clamps(300, 1024));
        assert_eq!(rq.floor(), 0);
    }

    #[test]
    fn the_cap_keeps_the_last_tasks_value_at_idle_until_the_next_enqueue() {
        let mut rq = RqClamps::default();
        // The first enqueue after boot (idle) sets the cap to the task's, 200.
        rq.inc(clamps(0, 200));
        assert_eq!(rq.cap(), 200);
        // The last task leaves: the cap stays at its 200 (idle value), the floor goes to 0.
        rq.dec(clamps(0, 200));
        assert_eq!(rq.cap(), 200);
        // An uncapped task arrives at an idle queue: its 1024 replaces the retained 200.
        rq.inc(clamps(0, 1024));
        assert_eq!(rq.cap(), 1024);
        // A capped one joins a busy queue: the cap is the largest, still 1024.
        rq.inc(clamps(0, 300));
        assert_eq!(rq.cap(), 1024);
        // The uncapped one leaves: bucket 4 empties, the highest left is bucket 1 (300).
        rq.dec(clamps(0, 1024));
        assert_eq!(rq.cap(), 300);
    }
}
