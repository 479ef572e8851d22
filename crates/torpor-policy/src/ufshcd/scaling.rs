//! The UFS host's clock scaling as devfreq drives it: the monitor's schedule, the decision at
//! each poll and what `ufshcd_devfreq_target` makes of it (spec-storage.md §2.2-2.5, §3.3;
//! drivers/devfreq/devfreq.c and drivers/ufs/core/ufshcd.c, v6.x, two clock levels).
//!
//! At each poll:
//! 1. Read the window's load ([`ClkScaling::get_dev_status`]) and ask `simple_ondemand`.
//! 2. Clamp the answer into the range the host device's frequency QoS allows.
//! 3. `ufshcd_devfreq_target`: with the block layer's boost set on the disk (patch 3 of the
//!    RFC: its S32_MAX kHz floor compared with the clock's maximum in Hz) the target is the
//!    maximum; the platform clock driver rounds the rest (`clk_round_rate` on the first clock)
//!    and anything but the maximum then means the minimum (`scale_up = freq == max_freq`).
//!    Qualcomm's RCG rounds up to the next rate of its table (`clk_rcg2_determine_rate`, CEIL:
//!    `qcom_find_freq`), so a target reaches the maximum only above the table's highest rate
//!    below it (`round_up_above_hz`: 150 MHz on SM8450's {25, 75, 150, 300} MHz); an exact
//!    driver keeps the target. Scaling is skipped while suspended.
//! 4. A change of level is a scale operation (the device model gives its duration); the next
//!    poll is queued after the callback returns, `msecs_to_jiffies(polling_ms)` jiffies on, and
//!    its timer fires on the timer wheel (`sim::timer_wheel`): below 63 jiffies one tick after
//!    that expiry, so polls that run on time come every `msecs_to_jiffies(polling_ms) + 1`
//!    ticks (ufs-qcom's 60 ms at HZ=250: 64 ms; ufshcd's 100 ms: 104 ms).
//! 5. With nothing outstanding, after a decision to go down (or any decision with
//!    `suspend_on_no_request`), clock scaling suspends and polling stops until the next
//!    command, whose poll comes a polling period after it.
//!
//! The monitor's timer is deferrable by default: it does not wake an idle CPU. In a run with
//! CPUs a deferrable poll that falls due while the CPU its timer sits on is idle waits for that
//! CPU to leave its idle state (`cpu_link.rs`). In a run of the device alone, one that falls
//! due while the host has nothing outstanding waits for the next command (the CPU wakes to
//! issue it): an ASSUMPTION that the CPU sleeps whenever the storage does.

use serde::{Deserialize, Serialize};

use super::clk_scaling::ClkScaling;
use crate::devfreq::{
    clamp_target, freq_range, simple_ondemand, DevStatus, OndemandData, RangeVersion,
};
use crate::qos::freq::FreqQos;
use crate::sim::Jiffies;
use crate::time::Nanos;

/// How the platform's clock driver rounds a requested rate (`clk_round_rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// The first rate of the clock's table at or above the request (Qualcomm RCG, OPP ceil):
    /// the maximum for a request above [`ScalingParams::round_up_above_hz`].
    Up,
    /// The request unchanged.
    Exact,
}

/// The monitor's timer (`devfreq_dev_profile.timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Deferrable,
    Delayed,
}

/// Whose `config_scaling_param` sets the parameters (spec-storage §2.5), by the driver's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VendorProfile {
    /// The core's `ufs_hba_vps`: 100 ms, deferrable, 70/5 (unchanged since 2020).
    #[serde(rename = "ufshcd")]
    Ufshcd,
    /// `ufs-qcom.c` (v6.6+): 60 ms, delayed timer (0645ab15ed0b), 70/5,
    /// `suspend_on_no_request`.
    #[serde(rename = "ufs-qcom")]
    Qcom,
    /// `ufs-mediatek.c`: 200 ms, 50/20, and `clk_scaling.min_gear` HS-G4 (the scenario's
    /// min level keeps G4).
    #[serde(rename = "ufs-mediatek")]
    Mediatek,
}

impl VendorProfile {
    /// The gear the driver keeps at the min level, when it overrides the core's HS-G1.
    pub fn min_gear(self) -> Option<u8> {
        match self {
            VendorProfile::Mediatek => Some(4),
            _ => None,
        }
    }
}

/// The host's scaling parameters (ufshcd's defaults or a vendor's `config_scaling_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalingParams {
    pub polling_ms: u32,
    pub timer: TimerKind,
    pub ondemand: OndemandData,
    pub min_hz: u64,
    pub max_hz: u64,
    pub rounding: Rounding,
    /// With [`Rounding::Up`], the clock table's highest rate below `max_hz` (the preset's;
    /// `min_hz` for a table holding only the two levels).
    pub round_up_above_hz: u64,
    pub suspend_on_no_request: bool,
    /// The kernel's tick rate: the monitor's delay is in jiffies.
    pub hz: u32,
    /// The form of `devfreq_get_freq_range` (the kernel release's).
    pub range: RangeVersion,
}

impl ScalingParams {
    /// ufshcd's core defaults (`ufs_hba_vps`): 100 ms, deferrable, 70/5.
    pub fn ufshcd_default(min_hz: u64, max_hz: u64) -> ScalingParams {
        ScalingParams {
            polling_ms: 100,
            timer: TimerKind::Deferrable,
            ondemand: OndemandData {
                upthreshold: 70,
                downdifferential: 5,
            },
            min_hz,
            max_hz,
            rounding: Rounding::Up,
            round_up_above_hz: min_hz,
            suspend_on_no_request: false,
            hz: 250,
            range: RangeVersion::default(),
        }
    }

    /// A host driver's parameters (`VendorProfile`) at its clocks `min_hz`/`max_hz`.
    pub fn of(profile: VendorProfile, min_hz: u64, max_hz: u64) -> ScalingParams {
        let base = ScalingParams::ufshcd_default(min_hz, max_hz);
        match profile {
            VendorProfile::Ufshcd => base,
            VendorProfile::Qcom => ScalingParams {
                polling_ms: 60,
                timer: TimerKind::Delayed,
                suspend_on_no_request: true,
                ..base
            },
            VendorProfile::Mediatek => ScalingParams {
                polling_ms: 200,
                ondemand: OndemandData {
                    upthreshold: 50,
                    downdifferential: 20,
                },
                ..base
            },
        }
    }

    /// When the monitor queued at `now` polls (step 4).
    pub fn next_poll(&self, now: Nanos) -> Nanos {
        let clock = Jiffies::new(self.hz);
        clock.delayed_work(now, clock.from_ms(u64::from(self.polling_ms)))
    }

    /// The first poll after a start at time 0; for delays below 63 jiffies, also the interval
    /// between polls that run on time.
    pub fn polling_period(&self) -> Nanos {
        self.next_poll(Nanos::ZERO)
    }

    /// Steps 1-3 on a window's `status`: whether the host ends at the max level (`None`:
    /// simple_ondemand refused its thresholds), under the host's frequency `qos` and the
    /// boost's floor on the disk (`disk_min_khz`).
    pub fn decides_max(&self, status: DevStatus, qos: &FreqQos, disk_min_khz: i64) -> Option<bool> {
        let wanted = simple_ondemand(status, self.ondemand).ok()?;
        let range = freq_range(
            self.range,
            self.min_hz,
            self.max_hz,
            self.min_hz,
            self.max_hz,
            qos,
        );
        let mut freq = clamp_target(wanted, range).freq;
        // RFC patch 3: kHz against Hz, which only works for its S32_MAX request.
        if disk_min_khz > 0 && disk_min_khz as u64 > self.max_hz {
            freq = self.max_hz;
        }
        if self.rounding == Rounding::Up && freq > self.round_up_above_hz {
            freq = self.max_hz;
        }
        Some(freq == self.max_hz)
    }

    /// The whole-percent window loads at which a poll changes the level (no QoS limit, no
    /// boost): the highest at which a host at the max level goes down, and the lowest at which
    /// one at the min level goes up; `None` where no load does.
    pub fn switching_loads(&self) -> (Option<u8>, Option<u8>) {
        let at = |load: u8, cur| DevStatus {
            total_time: 100,
            busy_time: u64::from(load),
            current_frequency: cur,
        };
        let qos = FreqQos::default();
        let max_at = |load, cur| self.decides_max(at(load, cur), &qos, 0);
        let down = (0..=100u8)
            .rev()
            .find(|&l| max_at(l, self.max_hz) == Some(false));
        let up = (0..=100u8).find(|&l| max_at(l, self.min_hz) == Some(true));
        (down, up)
    }
}

/// What a poll decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollOutcome {
    /// The level to scale to (true = max), when it changes.
    pub scale_to_max: Option<bool>,
    /// Clock scaling suspended: no next poll until a command resumes it.
    pub suspended: bool,
}

/// The host side of UFS clock scaling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostScaling {
    pub params: ScalingParams,
    pub load: ClkScaling,
    /// The host device's frequency QoS (sysfs min_freq/max_freq and in-kernel requests).
    pub qos: FreqQos,
    /// The disk's device minimum-frequency QoS (kHz) the RFC's boost sets (0 = none).
    pub disk_min_khz: i64,
    pub at_max: bool,
    /// What the governor saw: evaluations by the busy share of their window.
    pub loads: LoadHistogram,
}

/// Evaluations with a window (total time above 0) by the whole percent of it the host was
/// busy (`busy * 100 / total`, truncated: 0 to 100), at the level the host was at then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoadHistogram {
    pub at_max: Vec<u64>,
    pub at_min: Vec<u64>,
}

impl Default for LoadHistogram {
    fn default() -> Self {
        LoadHistogram {
            at_max: vec![0; 101],
            at_min: vec![0; 101],
        }
    }
}

impl LoadHistogram {
    fn count(&mut self, status: DevStatus, at_max: bool) {
        if status.total_time == 0 {
            return;
        }
        let pct = (status.busy_time.saturating_mul(100) / status.total_time).min(100) as usize;
        let bins = if at_max {
            &mut self.at_max
        } else {
            &mut self.at_min
        };
        bins[pct] += 1;
    }
}

impl HostScaling {
    /// Starts at the maximum, as ufshcd registers devfreq (`initial_freq` = max).
    pub fn new(params: ScalingParams) -> Self {
        HostScaling {
            params,
            load: ClkScaling::default(),
            qos: FreqQos::default(),
            disk_min_khz: 0,
            at_max: true,
            loads: LoadHistogram::default(),
        }
    }

    pub fn current_hz(&self) -> u64 {
        if self.at_max {
            self.params.max_hz
        } else {
            self.params.min_hz
        }
    }

    /// One devfreq evaluation at `now` (a poll, or a QoS notifier).
    pub fn evaluate(&mut self, now: Nanos) -> PollOutcome {
        let p = self.params;
        let status = self.load.get_dev_status(now, self.current_hz());
        self.loads.count(status, self.at_max);
        // -EINVAL (impossible thresholds) leaves the frequency as it is.
        let Some(scale_up) = p.decides_max(status, &self.qos, self.disk_min_khz) else {
            return PollOutcome {
                scale_to_max: None,
                suspended: false,
            };
        };
        if self.load.is_suspended {
            return PollOutcome {
                scale_to_max: None,
                suspended: true,
            };
        }
        let sched_suspend = self.load.active_reqs == 0;
        let change = (scale_up != self.at_max).then_some(scale_up);
        self.at_max = scale_up;
        let suspended =
            sched_suspend && (!scale_up || p.suspend_on_no_request) && self.load.suspend();
        PollOutcome {
            scale_to_max: change,
            suspended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MHZ: u64 = 1_000_000;

    fn host(rounding: Rounding) -> HostScaling {
        let mut p = ScalingParams::ufshcd_default(37 * MHZ + MHZ / 2, 300 * MHZ);
        p.rounding = rounding;
        HostScaling::new(p)
    }

    fn busy(h: &mut HostScaling, from_us: u64, to_us: u64) {
        h.load.on_send(Nanos::from_us(from_us));
        h.load.on_complete(Nanos::from_us(to_us));
    }

    #[test]
    fn polls_come_a_tick_after_the_polling_interval_in_whole_jiffies() {
        // 100 ms at HZ=250: 25 jiffies; queued at jiffy 0 the timer expires at 25, level 0 of
        // the wheel: it fires at jiffy 26, 104 ms. Re-queued by that poll (jiffy 26): 52.
        let mut p = ScalingParams::ufshcd_default(1, 2);
        assert_eq!(p.polling_period(), Nanos::from_ms(104));
        assert_eq!(p.next_poll(Nanos::from_ms(104)), Nanos::from_ms(208));
        // Queued from a scale's end at 105.5 ms (jiffy 26): also jiffy 52.
        assert_eq!(p.next_poll(Nanos::from_us(105_500)), Nanos::from_ms(208));
        p.polling_ms = 60;
        // HZ=300: (60 * 300 + 999) / 1000 = 18 jiffies, fired at 19, of TICK_NSEC = 3333333 ns.
        p.hz = 300;
        assert_eq!(p.polling_period(), Nanos(19 * 3_333_333));
    }

    #[test]
    fn rounding_up_scales_down_only_below_the_minimum_and_suspends_when_idle() {
        // At max (300 MHz), 70/5: down needs f_new <= 37.5 MHz, i.e.
        // load * 300 / 68 <= 37.5 -> load <= 8.5 %. 20 % gives 20 * 300e6 / 100 * 100 / 68 =
        // 88.2 MHz: above the minimum, rounded up to max: no change.
        let mut h = host(Rounding::Up);
        h.evaluate(Nanos::ZERO); // opens the first window (total 0 -> max)
        busy(&mut h, 0, 20_000);
        let o = h.evaluate(Nanos::from_ms(100));
        assert_eq!(
            o,
            PollOutcome {
                scale_to_max: None,
                suspended: false
            }
        );
        // 5 %: 5 * 300e6 / 100 * 100 / 68 = 22.06 MHz -> clamped to 37.5 MHz: down, and with
        // nothing outstanding, clock scaling suspends.
        busy(&mut h, 100_000, 105_000);
        let o = h.evaluate(Nanos::from_ms(200));
        assert_eq!(
            o,
            PollOutcome {
                scale_to_max: Some(false),
                suspended: true
            }
        );
        assert_eq!(h.current_hz(), 37 * MHZ + MHZ / 2);
        // The histogram holds the two windows at the max level (20 % and 5 %), not the first
        // evaluation (no window).
        let counted: Vec<(usize, u64)> = h
            .loads
            .at_max
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(pct, &n)| (pct, n))
            .collect();
        assert_eq!(counted, vec![(5, 1), (20, 1)]);
        assert!(h.loads.at_min.iter().all(|&n| n == 0));
    }

    #[test]
    fn rounding_up_to_a_clock_table_reaches_the_max_only_above_its_rate_below_it() {
        // SM8250's axi clock: {25, 37.5, 75, 150, 300} MHz rounded up (gcc-sm8250.c,
        // clk_rcg2_ops): from max at 70/5 a target reaches 300 MHz only above 150 MHz, i.e.
        // load x 300 / 68 > 150, load > 34 %. 34 % of 100 ms: 34000 x 300e6 / 100000 = 102e6,
        // x 100 / 68 = 150000000 exactly: rounded to 150 MHz, not the max: down. 35 %: 105e6 x
        // 100 / 68 = 154411764 Hz: rounded to 300 MHz: no change.
        let below = |load_us| {
            let mut h = host(Rounding::Up);
            h.params.round_up_above_hz = 150 * MHZ;
            h.evaluate(Nanos::ZERO);
            h.load.on_send(Nanos::ZERO); // one command outstanding: no suspension
            h.load.on_complete(Nanos::from_us(load_us));
            h.load.on_send(Nanos::from_ms(100));
            h.evaluate(Nanos::from_ms(100)).scale_to_max
        };
        assert_eq!(below(34_000), Some(false));
        assert_eq!(below(35_000), None);
        // 20 %: 88.2 MHz, rounded to 150 MHz: down, where a two-rate table keeps the max
        // (rounding_up_scales_down_only_below_the_minimum_and_suspends_when_idle).
        assert_eq!(below(20_000), Some(false));
    }

    #[test]
    fn the_switching_loads_by_hand() {
        // 37.5..300 MHz, 70/5, a two-rate table: down while load x 300 / 68 <= 37.5 MHz: 8 %
        // (8 x 3e6 x 100 / 68 = 35.29 MHz; 9 % gives 39.71 MHz); up above 70 %: 71 %.
        let mut p = ScalingParams::ufshcd_default(37 * MHZ + MHZ / 2, 300 * MHZ);
        assert_eq!(p.switching_loads(), (Some(8), Some(71)));
        // A table with 150 MHz below the max: down to 34 % (exactly 150 MHz).
        p.round_up_above_hz = 150 * MHZ;
        assert_eq!(p.switching_loads(), (Some(34), Some(71)));
        // 70/65 (Android's ufs-qcom): the hold band keeps the level above 5 %; at 5 %: 5 x 3e6
        // x 100 / (70 - 32) = 39.47 MHz, below 150: down.
        p.ondemand.downdifferential = 65;
        assert_eq!(p.switching_loads(), (Some(5), Some(71)));
        // An exact clock at 70/5: any target below the max goes down: up to the band's 65 %.
        p.ondemand.downdifferential = 5;
        p.rounding = Rounding::Exact;
        assert_eq!(p.switching_loads(), (Some(65), Some(71)));
    }

    #[test]
    fn an_exact_clock_scales_down_at_any_load_below_the_hold_band() {
        // 20 % at max: 88.2 MHz kept as is, which is not the max: scale down.
        let mut h = host(Rounding::Exact);
        h.evaluate(Nanos::ZERO);
        h.load.on_send(Nanos::ZERO); // keeps a command outstanding: no suspension
        h.load.on_complete(Nanos::from_ms(20));
        h.load.on_send(Nanos::from_ms(99));
        let o = h.evaluate(Nanos::from_ms(100));
        // busy 0..20 and 99..100 ms = 21 % of 100 ms: 21 * 300e6/100*100/68 = 92.6 MHz.
        assert_eq!(
            o,
            PollOutcome {
                scale_to_max: Some(false),
                suspended: false
            }
        );
    }

    #[test]
    fn the_boost_forces_the_maximum_at_the_next_evaluation() {
        // At min after an idle window, the RFC's S32_MAX kHz floor on the disk makes the next
        // evaluation pick max whatever the load (2147483647 > 300e6 "Hz").
        let mut h = host(Rounding::Up);
        // The first evaluation has no window (total 0): it asks for the maximum; then suppose
        // an earlier quiet stretch brought the clock down.
        assert_eq!(h.evaluate(Nanos::ZERO).scale_to_max, None);
        h.at_max = false;
        h.load.on_send(Nanos::from_ms(1));
        h.disk_min_khz = i64::from(i32::MAX);
        h.load.on_complete(Nanos::from_ms(2));
        let o = h.evaluate(Nanos::from_ms(100)); // 1 % load
        assert_eq!(o.scale_to_max, Some(true));
        // Without it, 1 % at min stays at min.
        let mut plain = host(Rounding::Up);
        plain.evaluate(Nanos::ZERO);
        plain.at_max = false;
        plain.load.on_send(Nanos::from_ms(1));
        plain.load.on_complete(Nanos::from_ms(2));
        assert_eq!(plain.evaluate(Nanos::from_ms(100)).scale_to_max, None);
    }
}
