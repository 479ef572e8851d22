//! What a component's timeline shows over one window of its run: the requests that arrived
//! in it (their count, mean and largest latency) and the mean power drawn. An experiment
//! comparing before and after a mid-run change (a lowered latency tolerance) reads these,
//! so that the measure is defined here, once, and not in each caller.
//!
//! The power column is a step function: each change's power holds until the next change,
//! and the last one until the window's end. The mean over `[from_s, to_s)`:
//!
//! 1. for each step, clip its span `[t_i, t_{i+1})` to the window;
//! 2. add the step's power times the clipped length (mW x s = mJ), in column order;
//! 3. divide the sum by the window's length.
//!
//! Requests count in the window when `from_s <= t < to_s`; their latencies are summed in
//! column order and divided by their count.

use serde::Serialize;

/// A timeline's columns as the caller holds them (seconds, mW, µs), each as `f64`.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    /// When each change took effect, s (ascending).
    pub t_s: &'a [f64],
    /// The power drawn from each change on, mW.
    pub power_mw: &'a [f64],
    /// When each request arrived, s.
    pub request_t_s: &'a [f64],
    /// Each request's latency, µs.
    pub request_latency_us: &'a [f64],
}

/// The window's measures; latencies are `None` when no request arrived in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    pub ios: usize,
    pub lat_avg_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    pub avg_power_mw: f64,
}

/// The measures of `columns` over `[from_s, to_s)`; `to_s` must exceed `from_s`.
pub fn window(columns: Columns<'_>, from_s: f64, to_s: f64) -> Window {
    let mut energy_mj = 0.0;
    for (i, (&t, &p)) in columns.t_s.iter().zip(columns.power_mw).enumerate() {
        let end = columns.t_s.get(i + 1).copied().unwrap_or(to_s);
        let (a, b) = (t.max(from_s), end.min(to_s));
        if b > a {
            energy_mj += p * (b - a);
        }
    }
    let inside: Vec<f64> = columns
        .request_t_s
        .iter()
        .zip(columns.request_latency_us)
        .filter(|(&t, _)| from_s <= t && t < to_s)
        .map(|(_, &lat)| lat)
        .collect();
    let sum: f64 = inside.iter().fold(0.0, |s, &l| s + l);
    let n = inside.len();
    Window {
        ios: n,
        lat_avg_us: (n > 0).then(|| sum / n as f64),
        lat_max_us: inside.iter().copied().reduce(f64::max),
        avg_power_mw: energy_mj / (to_s - from_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: [f64; 3] = [0.0, 1.0, 3.0];
    const POWER: [f64; 3] = [100.0, 10.0, 40.0];

    fn columns<'a>(req_t: &'a [f64], req_lat: &'a [f64]) -> Columns<'a> {
        Columns {
            t_s: &STEPS,
            power_mw: &POWER,
            request_t_s: req_t,
            request_latency_us: req_lat,
        }
    }

    #[test]
    fn power_is_the_step_function_s_mean_over_the_window() {
        // By hand: [0.5, 4): 100 mW for 0.5 s, 10 for 2 s, 40 for 1 s (the last step holds to
        // the window's end) = 50 + 20 + 40 = 110 mJ over 3.5 s.
        let w = window(columns(&[], &[]), 0.5, 4.0);
        assert!((w.avg_power_mw - 110.0 / 3.5).abs() < 1e-12);
        // Inside one step: its own power.
        assert_eq!(window(columns(&[], &[]), 1.5, 2.5).avg_power_mw, 10.0);
        assert_eq!((w.ios, w.lat_avg_us, w.lat_max_us), (0, None, None));
    }

    #[test]
    fn requests_count_from_the_window_s_start_up_to_its_end() {
        let t = [0.9, 1.0, 2.0, 3.0];
        let lat = [7.0, 10.0, 30.0, 99.0];
        // 1.0 is in [1, 3), 3.0 is not.
        let w = window(columns(&t, &lat), 1.0, 3.0);
        assert_eq!(
            (w.ios, w.lat_avg_us, w.lat_max_us),
            (2, Some(20.0), Some(30.0))
        );
    }
}
