//! Energy meter: integrates power over time, per component state.
//!
//! A component tells the meter which state it is in and that state's power; the meter charges
//! `power × time` to that state whenever the component moves on. Power is mW and time ns, so
//! the running sums are in picojoules (mW·ns); reports convert to mJ.

use serde::Serialize;

use super::Timeline;
use crate::time::Nanos;

/// Residency and energy of one state.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StateEnergy {
    pub name: String,
    pub time_ns: u64,
    pub energy_mj: f64,
    /// How many times the state was entered.
    pub entries: u64,
}

/// Time and energy per state of one component.
#[derive(Clone, Debug)]
pub struct EnergyMeter {
    names: Vec<String>,
    time_ns: Vec<u64>,
    energy_pj: Vec<f64>,
    entries: Vec<u64>,
    current: usize,
    power_mw: f64,
    since: Nanos,
    /// Every change, when asked for ([`EnergyMeter::record`]).
    timeline: Option<Box<Timeline>>,
}

impl EnergyMeter {
    /// A meter over the named states, starting at time 0 in `initial` drawing `power_mw`.
    pub fn new(names: Vec<String>, initial: usize, power_mw: f64) -> EnergyMeter {
        let n = names.len();
        let mut entries = vec![0; n];
        entries[initial] = 1;
        EnergyMeter {
            names,
            time_ns: vec![0; n],
            energy_pj: vec![0.0; n],
            entries,
            current: initial,
            power_mw,
            since: Nanos::ZERO,
            timeline: None,
        }
    }

    /// Records every change from now on into `timeline` (starting with the current state).
    pub fn record(&mut self, mut timeline: Timeline) {
        timeline.change(self.since, self.current, self.power_mw);
        self.timeline = Some(Box::new(timeline));
    }

    /// The timeline being recorded, if any.
    pub fn timeline(&mut self) -> Option<&mut Timeline> {
        self.timeline.as_deref_mut()
    }

    /// A copy of the meter's sums to meter on, without the timeline (which may hold millions
    /// of entries and is not needed to close the books).
    pub fn snapshot(&self) -> EnergyMeter {
        EnergyMeter {
            names: self.names.clone(),
            time_ns: self.time_ns.clone(),
            energy_pj: self.energy_pj.clone(),
            entries: self.entries.clone(),
            current: self.current,
            power_mw: self.power_mw,
            since: self.since,
            timeline: None,
        }
    }

    /// The recorded timeline, taken out of the meter.
    pub fn take_timeline(&mut self) -> Option<Timeline> {
        self.timeline.take().map(|t| *t)
    }

    /// Charges the time since the last change to the current state, then switches to `state`
    /// drawing `power_mw`. Switching to the same state only changes the power level.
    #[inline]
    pub fn set(&mut self, now: Nanos, state: usize, power_mw: f64) {
        self.charge(now);
        if let Some(t) = &mut self.timeline {
            if state != self.current || power_mw != self.power_mw {
                t.change(now, state, power_mw);
            }
        }
        if state != self.current {
            self.entries[state] += 1;
            self.current = state;
        }
        self.power_mw = power_mw;
    }

    /// Charges the time up to `now` without changing state.
    #[inline]
    pub fn charge(&mut self, now: Nanos) {
        let dt = (now - self.since).0;
        self.time_ns[self.current] += dt;
        self.energy_pj[self.current] += dt as f64 * self.power_mw;
        self.since = now;
    }

    pub fn total_time(&self) -> Nanos {
        Nanos(self.time_ns.iter().sum())
    }

    pub fn total_energy_mj(&self) -> f64 {
        self.energy_pj.iter().sum::<f64>() * 1e-9
    }

    /// Average power over the metered time, in mW.
    pub fn avg_power_mw(&self) -> f64 {
        let t = self.total_time().0;
        if t == 0 {
            return self.power_mw;
        }
        self.energy_pj.iter().sum::<f64>() / t as f64
    }

    pub fn states(&self) -> Vec<StateEnergy> {
        (0..self.names.len())
            .map(|i| StateEnergy {
                name: self.names[i].clone(),
                time_ns: self.time_ns[i],
                energy_mj: self.energy_pj[i] * 1e-9,
                entries: self.entries[i],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_piecewise_constant_power() {
        // 100 ms at 3500 mW, then 400 ms at 25 mW: 350 mJ + 10 mJ = 360 mJ over 0.5 s = 720 mW.
        let mut m = EnergyMeter::new(vec!["PS0".into(), "PS3".into()], 0, 3500.0);
        m.set(Nanos::from_ms(100), 1, 25.0);
        m.charge(Nanos::from_ms(500));
        assert!((m.total_energy_mj() - 360.0).abs() < 1e-9);
        assert!((m.avg_power_mw() - 720.0).abs() < 1e-9);
        let s = m.states();
        assert_eq!(s[0].time_ns, 100_000_000);
        assert_eq!(s[1].time_ns, 400_000_000);
        assert_eq!((s[0].entries, s[1].entries), (1, 1));
    }
}
