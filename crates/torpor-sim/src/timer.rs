//! A one-shot timer on the event queue that can be re-armed and cancelled.
//!
//! The queue has no removal (removing from a binary heap costs as much as the pop it would
//! save). Instead every arming gets a new generation number, carried by the event as a
//! [`Shot`]; when an expiry arrives, [`Timer::fire`] accepts it only if it is the timer's
//! current generation and the timer is still armed. Re-arming therefore leaves the old event
//! in the queue as a harmless stale expiry, and cancelling is a counter bump.
//!
//! A timer cancelled and armed again for the instant its last posted expiry still waits for
//! (a CPU's tick, stopped on idle entry and restarted on the same grid point when the CPU
//! wakes before it) takes that expiry back instead of posting another: the queue pops one
//! event where it would pop a stale one and a live one. The revived expiry keeps its place
//! among events of the same instant.

use super::Ctx;
use crate::time::Nanos;

/// The identity of one arming of a [`Timer`], carried by its expiry event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shot(u32);

/// A re-armable, cancellable timer. The owning component's event type carries the [`Shot`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    generation: u32,
    due: Option<Nanos>,
    /// The newest expiry posted and not yet arrived: its time and generation.
    posted: Option<(Nanos, u32)>,
}

impl Timer {
    pub const fn new() -> Timer {
        Timer {
            generation: 0,
            due: None,
            posted: None,
        }
    }

    /// Arms (or re-arms) the timer to expire at `at`: posts `event(shot)` for the owning
    /// component. Any earlier arming becomes stale.
    #[inline]
    pub fn arm<W, C>(&mut self, ctx: &mut Ctx<'_, W, C>, at: Nanos, event: impl FnOnce(Shot) -> C) {
        self.due = Some(at);
        match self.posted {
            // Cancelled, and its expiry for this very instant is still queued: revive it (no
            // later arming was posted, so no other queued expiry carries that generation).
            Some((t, g)) if t == at && g != self.generation => self.generation = g,
            _ => {
                self.generation = self.generation.wrapping_add(1);
                self.posted = Some((at, self.generation));
                ctx.schedule(at, event(Shot(self.generation)));
            }
        }
    }

    /// Disarms the timer: a pending expiry will be ignored.
    #[inline]
    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.due = None;
    }

    /// When the timer will expire, if armed.
    pub fn due(&self) -> Option<Nanos> {
        self.due
    }

    /// Called with an arriving expiry: true (and the timer disarms) if `shot` is the current
    /// arming, false for a stale one (re-armed or cancelled since).
    #[inline]
    pub fn fire(&mut self, shot: Shot) -> bool {
        if self.posted.is_some_and(|(_, g)| g == shot.0) {
            self.posted = None;
        }
        if self.due.is_some() && shot.0 == self.generation {
            self.due = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventQueue;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Ev {
        Expired(Shot),
    }

    /// Drains the queue, returning the times at which the timer really fired.
    fn fired(q: &mut EventQueue<Ev>, t: &mut Timer) -> Vec<Nanos> {
        let mut out = vec![];
        while let Some((now, Ev::Expired(shot))) = q.pop() {
            if t.fire(shot) {
                out.push(now);
            }
        }
        out
    }

    #[test]
    fn fires_once_at_its_time() {
        let mut q = EventQueue::new();
        let mut t = Timer::new();
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        assert_eq!(t.due(), Some(Nanos(10)));
        assert_eq!(fired(&mut q, &mut t), vec![Nanos(10)]);
        assert_eq!(t.due(), None);
    }

    #[test]
    fn rearming_makes_the_earlier_expiry_stale_in_either_direction() {
        let mut q = EventQueue::new();
        let mut t = Timer::new();
        // Later: armed for 10, re-armed for 30: fires at 30 only.
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(30), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t), vec![Nanos(30)]);
        // Earlier: armed for 50, re-armed for 40: fires at 40 only, the 50 expiry is stale.
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(50), Ev::Expired);
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(40), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t), vec![Nanos(40)]);
    }

    #[test]
    fn a_cancelled_timer_never_fires_and_can_be_armed_again() {
        let mut q = EventQueue::new();
        let mut t = Timer::new();
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        t.cancel();
        assert_eq!(t.due(), None);
        assert_eq!(fired(&mut q, &mut t), vec![]);
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(20), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t), vec![Nanos(20)]);
    }

    #[test]
    fn an_expiry_delivered_twice_fires_once() {
        let mut t = Timer::new();
        let mut q = EventQueue::new();
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(5), Ev::Expired);
        let (_, Ev::Expired(shot)) = q.pop().unwrap();
        assert!(t.fire(shot));
        assert!(!t.fire(shot));
    }

    #[test]
    fn cancelled_and_armed_again_for_the_same_instant_it_reuses_the_queued_expiry() {
        let mut q = EventQueue::new();
        let mut t = Timer::new();
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        t.cancel();
        t.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        // One event in the queue, and it fires.
        assert_eq!(q.pop().map(|(at, _)| at), Some(Nanos(10)));
        assert_eq!(q.pop(), None);
        let mut t2 = Timer::new();
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        t2.cancel();
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(10), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t2), vec![Nanos(10)]);
        // For another instant it posts anew: the first expiry stays stale.
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(20), Ev::Expired);
        t2.cancel();
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(30), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t2), vec![Nanos(30)]);
        // Once its expiry has arrived, nothing is left to revive.
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(40), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t2), vec![Nanos(40)]);
        t2.cancel();
        t2.arm(&mut Ctx::new(&mut q, |e| e), Nanos(40), Ev::Expired);
        assert_eq!(fired(&mut q, &mut t2), vec![Nanos(40)]);
    }
}
