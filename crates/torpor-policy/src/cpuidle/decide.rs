//! The cpuidle core's calls into a governor, one recorded step at a time: the meaning of an
//! `idle-decide/1` sequence (docs/idle-decide.md), without the file. torpor-core's
//! `drivers::idle_decide` reads a sequence file line by line and hands each parsed line here, so
//! every check of a governor against the kernel's decisions drives it through this one protocol.
//!
//! One step, as the cpuidle core runs it (`cpuidle_idle_call`, `cpuidle_select`,
//! `cpuidle_reflect` in kernel/sched/idle.c and drivers/cpuidle/cpuidle.c):
//! 1. Set the step's disabled states and the helpers' return values; `stop_tick = true`.
//! 2. `select` -> (index, stop_tick): the decision.
//! 3. The entered index is the step's `entered` (null = the selected one). -1 = rejected:
//!    `last_residency_ns = 0`, no `reflect`, though the tick flag is still set by `got_tick`.
//! 4. Otherwise `last_residency_ns = residency_ns` (as the kernel's u64 keeps it); after a
//!    polling state `poll_time_limit` takes the step's value; `got_tick` sets the flag that
//!    `tick_nohz_idle_got_tick()` tests and clears; the clock advances by `span_ns`; `reflect`.

use serde::Deserialize;

use super::{
    Device, Governor, GovernorName, IdleState, Kernel, Platform, MAX_CAPACITY, MAX_STATES,
    NO_LATENCY_CONSTRAINT_NS,
};

/// The format name a sequence's platform line carries.
pub const FORMAT: &str = "idle-decide/1";

/// `TICK_NSEC` at HZ=250, the platform line's default.
pub const DEFAULT_TICK_NS: i64 = 4_000_000;

/// A sequence's platform line as written; [`Header::platform`] checks it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub format: String,
    #[serde(default)]
    tick_ns: Option<i64>,
    #[serde(default)]
    capacity: Option<u64>,
    states: Vec<HeaderState>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderState {
    #[serde(default)]
    name: Option<String>,
    exit_latency_ns: i64,
    target_residency_ns: i64,
    #[serde(default)]
    polling: bool,
}

impl Header {
    /// The platform the line describes, or what is wrong with it (the format name aside: the
    /// reader checks that first). The limits are the cpuidle driver's: at most
    /// `CPUIDLE_STATE_MAX` states ordered shallow to deep, only state 0 may poll.
    pub fn platform(self) -> Result<Platform, String> {
        let tick_ns = self.tick_ns.unwrap_or(DEFAULT_TICK_NS);
        if tick_ns <= 0 {
            return Err(format!(
                "expected a positive tick_ns (TICK_NSEC, e.g. 4000000 for HZ=250), got {tick_ns}"
            ));
        }
        let capacity = self.capacity.unwrap_or(MAX_CAPACITY);
        if capacity > MAX_CAPACITY {
            return Err(format!(
                "expected a capacity in 0..={MAX_CAPACITY}, got {capacity}"
            ));
        }
        if self.states.is_empty() || self.states.len() > MAX_STATES {
            return Err(format!(
                "expected 1 to {MAX_STATES} idle states (CPUIDLE_STATE_MAX), got {}",
                self.states.len()
            ));
        }
        let mut states: Vec<IdleState> = Vec::with_capacity(self.states.len());
        for (i, s) in self.states.into_iter().enumerate() {
            if s.exit_latency_ns < 0 || s.target_residency_ns < 0 {
                return Err(format!(
                    "state {i}: expected non-negative exit_latency_ns and target_residency_ns"
                ));
            }
            if s.polling && i > 0 {
                // Only the first state of a cpuidle driver may poll (CPUIDLE_FLAG_POLLING is
                // state 0's: `cpuidle_poll_state_init` fills `drv->states[0]`).
                return Err(format!(
                    "state {i}: only state 0 may poll, got `\"polling\": true`"
                ));
            }
            if let Some(prev) = states.last() {
                if s.target_residency_ns < prev.target_residency_ns {
                    return Err(format!(
                        "expected states ordered by target residency, shallow to deep: state {i} \
                         ({} ns) is below state {} ({} ns)",
                        s.target_residency_ns,
                        i - 1,
                        prev.target_residency_ns
                    ));
                }
            }
            states.push(IdleState {
                name: s.name.unwrap_or_else(|| format!("state{i}")),
                exit_latency_ns: s.exit_latency_ns,
                target_residency_ns: s.target_residency_ns,
                polling: s.polling,
            });
        }
        Ok(Platform {
            states,
            tick_ns,
            capacity,
        })
    }
}

/// One recorded `select` + `reflect`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub sleep_length_ns: i64,
    #[serde(default)]
    pub delta_tick_ns: Option<i64>,
    #[serde(default = "no_constraint")]
    pub latency_req_ns: i64,
    #[serde(default)]
    pub tick_stopped: bool,
    #[serde(default)]
    pub util: u64,
    #[serde(default)]
    pub nr_iowait: u32,
    #[serde(default)]
    pub disabled: Vec<usize>,
    #[serde(default)]
    pub entered: Option<i64>,
    pub residency_ns: i64,
    #[serde(default)]
    pub span_ns: Option<i64>,
    #[serde(default)]
    pub poll_time_limit: bool,
    #[serde(default)]
    pub got_tick: bool,
}

fn no_constraint() -> i64 {
    NO_LATENCY_CONSTRAINT_NS
}

/// One decision: what `select` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub step: u64,
    pub idx: usize,
    pub stop_tick: bool,
    /// The index the driver entered (-1 = rejected), for the readable table.
    pub entered: i64,
}

/// A governor on a platform, driven step by step as the cpuidle core drives it: any variant
/// by name (`G` = `dyn Governor`), or one concrete governor whose state a test reads.
pub struct Stepper<G: ?Sized = dyn Governor> {
    platform: Platform,
    dev: Device,
    kernel: Kernel,
    governor: Box<G>,
    step: u64,
}

impl Stepper {
    /// Enables governor `name` on `platform`, or says why it cannot run there.
    pub fn new(name: GovernorName, platform: Platform) -> Result<Self, String> {
        if platform.state_count() < name.min_states() {
            return Err(format!(
                "{} needs at least {} idle states; the platform has {}",
                name.canonical(),
                name.min_states(),
                platform.state_count()
            ));
        }
        let mut dev = Device::new(platform.state_count());
        let governor = name.build(&platform, &mut dev);
        Ok(Stepper {
            platform,
            dev,
            kernel: Kernel::default(),
            governor,
            step: 0,
        })
    }
}

impl<G: Governor> Stepper<G> {
    /// Enables the governor `build` makes (its `enable`) on `platform`.
    pub fn with(platform: Platform, build: impl FnOnce(&Platform, &mut Device) -> G) -> Self {
        let mut dev = Device::new(platform.state_count());
        let governor = Box::new(build(&platform, &mut dev));
        Stepper {
            platform,
            dev,
            kernel: Kernel::default(),
            governor,
            step: 0,
        }
    }

    /// The governor, to read its state.
    pub fn governor(&self) -> &G {
        &self.governor
    }
}

impl<G: Governor + ?Sized> Stepper<G> {
    /// What the kernel helpers return, and how often the governor called them.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The cpuidle device the governor reads and writes.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// The device and the governor, for a test that sets a learned state by hand.
    #[cfg(test)]
    pub(crate) fn parts_mut(&mut self) -> (&mut Device, &mut G) {
        (&mut self.dev, &mut self.governor)
    }
}

impl<G: Governor + ?Sized> Stepper<G> {
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    pub fn governor_name(&self) -> &'static str {
        self.governor.name()
    }

    /// What makes `step` impossible on this platform, if anything (an index out of range, a
    /// utilization above the capacity).
    pub fn check(&self, step: &Step) -> Result<(), String> {
        let n = self.platform.state_count();
        if let Some(&i) = step.disabled.iter().find(|&&i| i >= n) {
            return Err(format!(
                "expected disabled state indices below {n}, got {i}"
            ));
        }
        if let Some(e) = step.entered {
            if e < -1 || e >= n as i64 {
                return Err(format!(
                    "expected entered to be null, -1 (rejected) or a state index below {n}, got {e}"
                ));
            }
        }
        if step.util > self.platform.capacity {
            return Err(format!(
                "expected util in 0..={} (the capacity), got {}",
                self.platform.capacity, step.util
            ));
        }
        Ok(())
    }

    /// Runs one step (already checked) and returns the governor's decision.
    pub fn run(&mut self, step: &Step) -> Decision {
        let p = &self.platform;
        let k = &mut self.kernel;
        k.sleep_length_ns = step.sleep_length_ns;
        k.delta_tick_ns = step.delta_tick_ns.unwrap_or(if step.tick_stopped {
            step.sleep_length_ns
        } else {
            step.sleep_length_ns.min(p.tick_ns)
        });
        k.latency_req_ns = step.latency_req_ns;
        k.tick_stopped = step.tick_stopped;
        k.util = step.util;
        k.nr_iowait = step.nr_iowait;
        k.oracle_residency_ns = step.residency_ns;
        self.dev.disabled.iter_mut().for_each(|d| *d = false);
        for &i in &step.disabled {
            self.dev.disabled[i] = true;
        }

        let mut stop_tick = true;
        let idx = self.governor.select(p, &mut self.dev, k, &mut stop_tick);
        let entered = step.entered.unwrap_or(idx as i64);
        if step.got_tick {
            k.got_idle_tick = true;
        }
        if entered < 0 {
            self.dev.last_residency_ns = 0;
        } else {
            let entered_idx = entered as usize;
            self.dev.last_residency_ns = step.residency_ns as u64;
            if p.states[entered_idx].polling {
                self.dev.poll_time_limit = step.poll_time_limit;
            }
            k.clock_ns = k
                .clock_ns
                .wrapping_add(step.span_ns.unwrap_or(step.residency_ns) as u64);
            self.governor.reflect(p, &mut self.dev, k, entered_idx);
        }
        let d = Decision {
            step: self.step,
            idx,
            stop_tick,
            entered,
        };
        self.step += 1;
        d
    }
}

/// Sequences written in a governor's tests, read with serde_json (torpor-core's reader adds
/// the file's line numbers and error messages; a test's own sequence has no need of them).
#[cfg(test)]
pub(crate) mod text {
    use super::{Decision, Header, Step, Stepper};
    use crate::cpuidle::{GovernorName, Platform};

    /// The platform of a sequence's first line.
    pub(crate) fn parse_header(text: &str) -> Platform {
        let h: Header = serde_json::from_str(text).expect("a platform line");
        assert_eq!(h.format, super::FORMAT);
        h.platform().expect("a valid platform")
    }

    /// A whole sequence (platform line, then one step per line) run through `governor`.
    pub(crate) fn sequence(governor: &str, text: &str) -> (Stepper, Vec<Decision>) {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let platform = parse_header(lines.next().expect("a platform line"));
        let name = GovernorName::parse(governor).expect("a governor name");
        let mut stepper = Stepper::new(name, platform).expect("enough states");
        let decisions = lines
            .map(|l| {
                let step: Step = serde_json::from_str(l).expect("a step");
                stepper.check(&step).expect("a step the platform allows");
                stepper.run(&step)
            })
            .collect();
        (stepper, decisions)
    }

    /// The (index, stop_tick) decisions of `governor` on a whole sequence.
    pub(crate) fn decisions(governor: &str, text: &str) -> Vec<(usize, bool)> {
        sequence(governor, text)
            .1
            .iter()
            .map(|d| (d.idx, d.stop_tick))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"format": "idle-decide/1", "tick_ns": 4000000, "states": [{"name": "POLL", "exit_latency_ns": 0, "target_residency_ns": 0, "polling": true}, {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000}, {"name": "C6", "exit_latency_ns": 100000, "target_residency_ns": 400000}]}"#;

    /// Records what the core hands a governor, to check the step semantics themselves.
    struct Recorder {
        seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Governor for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn select(
            &mut self,
            _: &Platform,
            dev: &mut Device,
            k: &mut Kernel,
            _: &mut bool,
        ) -> usize {
            let (sleep, delta) = k.get_sleep_length();
            self.seen.lock().unwrap().push(format!(
                "select sleep={sleep} delta={delta} res={} limit={} dis={:?}",
                dev.last_residency_ns, dev.poll_time_limit, dev.disabled
            ));
            1
        }
        fn reflect(&mut self, _: &Platform, dev: &mut Device, k: &mut Kernel, index: usize) {
            let tick = k.idle_got_tick();
            self.seen.lock().unwrap().push(format!(
                "reflect {index} res={} limit={} tick={tick} clock={}",
                dev.last_residency_ns,
                dev.poll_time_limit,
                k.local_clock()
            ));
        }
    }

    #[test]
    fn steps_follow_the_cpuidle_core() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n",
            HEADER,
            // Tick running: delta defaults to min(sleep, tick) = 4 ms; span defaults to residency.
            r#"{"sleep_length_ns": 9000000, "residency_ns": 50}"#,
            // Rejected: residency 0, no reflect; its got_tick stays set for the next reflect.
            r#"{"sleep_length_ns": 7, "tick_stopped": true, "entered": -1, "residency_ns": 5, "got_tick": true}"#,
            // Entered POLL: its poll_time_limit lands; a negative residency wraps as a u64.
            r#"{"sleep_length_ns": -3, "entered": 0, "residency_ns": -1, "span_ns": 10, "poll_time_limit": true, "disabled": [2]}"#,
            // Entered C1 (not polling): poll_time_limit keeps its old value.
            r#"{"sleep_length_ns": 5, "residency_ns": 1, "poll_time_limit": false}"#,
        );
        let (mut stepper, _) = text::sequence("oracle", &text[..text.find('\n').unwrap()]);
        stepper.governor = Box::new(Recorder { seen: seen.clone() });
        for line in text.lines().skip(1) {
            let step: Step = serde_json::from_str(line).unwrap();
            stepper.check(&step).unwrap();
            stepper.run(&step);
        }
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
            "select sleep=9000000 delta=4000000 res=0 limit=false dis=[false, false, false]",
            "reflect 1 res=50 limit=false tick=false clock=50",
            "select sleep=7 delta=7 res=50 limit=false dis=[false, false, false]",
            "select sleep=-3 delta=-3 res=0 limit=false dis=[false, false, true]",
            "reflect 0 res=18446744073709551615 limit=true tick=true clock=60",
            "select sleep=5 delta=5 res=18446744073709551615 limit=true dis=[false, false, false]",
            "reflect 1 res=1 limit=true tick=false clock=61",
        ]
        );
    }
}
