//! A component's timeline: every change of state and power in a window at the start of a run,
//! and the requests it received there, kept as columns (one vector per field), bounded in
//! length, so that a user can plot what happened without the run keeping its whole history.

use serde::Serialize;

use crate::time::Nanos;

/// Changes and requests from time 0 up to `until`, at most `limit` of each.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// The window's end, s.
    pub until_s: f64,
    /// When each change took effect, s.
    pub t_s: Vec<f64>,
    /// The state entered (its name is in the component's state list).
    pub state: Vec<u16>,
    /// The power drawn from then on, mW.
    pub power_mw: Vec<f32>,
    /// When each request arrived, s.
    pub request_t_s: Vec<f64>,
    /// How long the component took to complete it, µs (device-side latency).
    pub request_latency_us: Vec<f32>,
    /// Whether it was a write (1) or a read (0).
    pub request_write: Vec<u8>,
    /// Changes or requests past `limit` inside the window, not kept.
    pub dropped: u64,
    #[serde(skip)]
    until: Nanos,
    #[serde(skip)]
    limit: usize,
}

impl Timeline {
    /// A timeline of the window `[0, until]`, keeping at most `limit` changes and `limit`
    /// requests.
    pub fn new(until: Nanos, limit: usize) -> Timeline {
        Timeline {
            until_s: until.as_secs_f64(),
            until,
            limit,
            ..Timeline::default()
        }
    }

    /// Whether an entry at `t` goes into a column already `kept` long: only inside the
    /// window, and only below the limit (past it, the entry is counted as dropped).
    #[inline]
    fn admits(&mut self, t: Nanos, kept: usize) -> bool {
        if t > self.until {
            return false;
        }
        if kept == self.limit {
            self.dropped += 1;
            return false;
        }
        true
    }

    /// The component entered `state` drawing `power_mw` at `t`.
    #[inline]
    pub fn change(&mut self, t: Nanos, state: usize, power_mw: f64) {
        if !self.admits(t, self.t_s.len()) {
            return;
        }
        self.t_s.push(t.as_secs_f64());
        self.state.push(state as u16);
        self.power_mw.push(power_mw as f32);
    }

    /// A request arrived at `t` and took `latency`; `write` tells its direction.
    #[inline]
    pub fn request(&mut self, t: Nanos, latency: Nanos, write: bool) {
        if !self.admits(t, self.request_t_s.len()) {
            return;
        }
        self.request_t_s.push(t.as_secs_f64());
        self.request_latency_us
            .push((latency.0 as f64 / 1e3) as f32);
        self.request_write.push(u8::from(write));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_window_and_the_limit_and_counts_the_rest() {
        let mut t = Timeline::new(Nanos::from_ms(10), 2);
        t.change(Nanos::ZERO, 0, 1000.0);
        t.change(Nanos::from_ms(5), 3, 25.0);
        t.change(Nanos::from_ms(6), 0, 1000.0); // past the limit: counted
        t.change(Nanos::from_ms(11), 3, 25.0); // past the window: ignored
        t.request(Nanos::from_ms(7), Nanos::from_us(75), false);
        assert_eq!(t.t_s, vec![0.0, 0.005]);
        assert_eq!(t.state, vec![0, 3]);
        assert_eq!(t.request_t_s, vec![0.007]);
        assert_eq!(
            (t.request_latency_us.clone(), t.request_write.clone()),
            (vec![75.0], vec![0])
        );
        assert_eq!(t.dropped, 1);
    }
}
