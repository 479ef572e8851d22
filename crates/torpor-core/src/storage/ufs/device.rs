//! A UFS device and its host controller on the engine: the command queue of `service.rs`, the
//! devfreq monitor with ufshcd's clock scaling (spec-storage §2.2–§2.5), the block layer's
//! frequency boost (§3), the idle power states of `power.rs`, and the host's ties to the CPUs
//! of `cpu_link.rs`. Follows ufshcd.c and devfreq.c as of v6.6–v6.19 (non-OPP mode: two
//! levels; the CPU latency request from v6.9), and the RFC's patches as posted.
//!
//! 1. **Start.** The host runs at the max level (devfreq's initial frequency); with clock
//!    scaling on, the monitor's first poll is armed one polling period after time 0.
//! 2. **Submit.** A READ or REQ_SYNC request refreshes the boost's `last_active` and, when no
//!    constraint is set, queues the boost work at once. Without CPUs, a poll deferred while the
//!    CPU slept runs first (step 5). While a scale operation is in progress the command is
//!    held; else it is sent: the busy window opens or extends, the first command after a
//!    suspension resumes scaling (the next poll one period later, `devfreq_monitor_resume`),
//!    and the command enters the queue at the current level, after the hibern8 exit when the
//!    idle period reached hibern8 or clock gating.
//! 3. **Complete.** The busy window closes when the last outstanding command completes.
//! 4. **Poll** (`devfreq_monitor`): `HostScaling::evaluate` reads the window, runs
//!    `simple_ondemand`, clamps to the QoS range, rounds to a level, and decides the scale and
//!    the suspension. A scale blocks new commands, waits for the outstanding ones (refused,
//!    -EBUSY, when that would take over 1 s), then stalls for the gear and clock switch
//!    (`ScaleCosts::stall`); the new level serves from the end of the stall, when the held
//!    commands are sent. The monitor re-arms one period after its work ends (after the
//!    stall), unless scaling suspended itself (no command outstanding and a scale-down, or
//!    any decision with `suspend_on_no_request`). A poll falling due during a scale a QoS
//!    notification started waits for it (both hold `devfreq->lock`), then runs.
//! 5. **Deferrable timer.** Its expiry does not wake an idle CPU. With CPUs
//!    ([`CpuLink::monitor_cpu`]) it waits while the CPU its timer sits on is idle and runs when
//!    that CPU leaves its idle state (`cpu_link.rs`). Without CPUs, ASSUMPTION: the CPU is idle
//!    exactly while the device has no command outstanding, and the next submission is the
//!    next time it wakes; a poll that expires then runs just before that submission. This is
//!    the longest deferral (nothing else wakes the CPU); the delayed timer is the shortest, so
//!    the two bound a real system. Either way the counters keep how many expiries waited and
//!    how long.
//! 6. **Boost work** (`FreqBoost`): setting or removing the S32_MAX kHz floor. As the patch does
//!    it ([`BoostNotify::NextPoll`]) the floor sits on the disk's device and only the next poll
//!    sees it (ufshcd then forces the max level); as a merged version would likely do it
//!    ([`BoostNotify::AtOnce`]) the floor is a frequency QoS request on the host, whose
//!    notifier re-evaluates devfreq at once (the window is read and restarted then too), and
//!    again when it is removed. An evaluation asked for during a scale runs when it ends.
//! 7. **CPU latency request** ([`CpuLink::cpu_latency_qos`], `cpu_link.rs`): with clock
//!    scaling, a hold at 0 us once a scale-up's clocks have switched (before its gear switch)
//!    and a release at the end of a scale-down; without it, a release when the clocks gate
//!    (`clk_gating_delay` after the host went idle) and a hold when a command ungates them.
//!    The world applies the votes to the CPUs' latency list
//!    ([`BlockDevice::next_cpu_latency_vote`]).
//!
//! Power (`power.rs`): a busy period draws the device's active power and the host's at the
//! level; an idle period walks idle → hibern8 → clock-gated on the idle timers; a scale
//! operation draws idle power at the max level (the clocks are held on; ASSUMPTION) and the
//! idle chain restarts after it.

use std::collections::VecDeque;

use serde::Serialize;

use super::cpu_link::{CpuLink, Deferral, LatencyVotes};
use super::ftl::{Ftl, FtlConfig, FtlError, FtlStats};
use super::hpb_exchange::{HpbExchange, HpbExchangeError, HpbReport, HpbSetup, RspId};
use super::power::{IdleTimers, UfsPower, UfsState};
use super::service::{DeviceCmd, HostLevel, ScaleCosts, UfsQueue, UfsServiceModel};
use crate::blk_freq_boost::FreqBoost;
use crate::devfreq;
use crate::hpb::{ControlMode, HpbCommand, MapReq};
use crate::metrics::{EnergyMeter, StateEnergy};
use crate::qos::Holder;
use crate::sim::{Ctx, Jiffies, Shot, Timer};
use crate::storage::io::{BlockDevice, CpuLatencyVote, IoOp, IoRequest, IoTicket};
use crate::time::Nanos;
use crate::ufshcd::scaling::{HostScaling, LoadHistogram, ScalingParams, TimerKind};

/// `FREQ_QOS_MAX_DEFAULT_VALUE` (S32_MAX), the floor the boost requests, kHz.
const BOOST_MIN_KHZ: i64 = i32::MAX as i64;

/// The frequency QoS holders: the at-once boost's request, and devfreq's sysfs requests.
const BOOST_HOLDER: Holder = 1;
const USER_HOLDER: Holder = 2;

/// How long ufshcd waits for outstanding commands before a scale gives up (-EBUSY).
const DRAIN_LIMIT: Nanos = Nanos::from_ms(1000);

/// Most frequency changes kept for the timeline; later ones are counted, not kept.
pub const FREQ_TIMELINE_LIMIT: usize = 1 << 20;

/// When devfreq learns of the boost's floor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoostNotify {
    /// At its next poll, as the RFC's patch 3 does.
    NextPoll,
    /// At once, through devfreq's QoS notifier (a likely merged form).
    AtOnce,
}

/// The block layer's boost on this disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BoostConfig {
    /// `dev_freq_timeout_ms` (not 0).
    pub timeout_ms: u32,
    pub notify: BoostNotify,
}

/// Everything a UFS device on the engine is built from.
#[derive(Clone, Debug)]
pub struct UfsConfig {
    pub service: UfsServiceModel,
    pub min: HostLevel,
    pub max: HostLevel,
    pub power: UfsPower,
    pub idle: IdleTimers,
    pub costs: ScaleCosts,
    /// `None`: clock scaling off (no `UFSHCD_CAP_CLK_SCALING`, or `clkscale_enable` 0): the
    /// max level throughout.
    pub scaling: Option<ScalingParams>,
    pub boost: Option<BoostConfig>,
    /// CONFIG_HZ, for the boost's jiffies.
    pub hz: u32,
    /// What was written to devfreq's sysfs `min_freq` and `max_freq`, Hz (0 or `None`: no
    /// request).
    pub user_min_freq_hz: Option<u64>,
    pub user_max_freq_hz: Option<u64>,
    /// The device's map cache and NAND for reads, with the host's HPB on top (`None`: reads
    /// are served by the calibrated slots).
    pub ftl: Option<FtlSetup>,
}

/// A device whose reads go through its FTL, and HPB when the host runs it (HPB needs the
/// FTL: it is the device's map lookup that an HPB READ skips).
#[derive(Clone, Debug)]
pub struct FtlSetup {
    pub config: FtlConfig,
    pub hpb: Option<HpbSetup>,
}

impl UfsConfig {
    /// What a run of this device rests on, for its report: calibrations, estimates and the
    /// assumptions that apply with this configuration (`link`: the host tied to the CPUs).
    pub fn notes(&self, link: Option<&CpuLink>) -> Vec<String> {
        let mut notes = vec![
            "service times are calibrated from the preset's published figures at the max level; \
             power, hibern8 exit and scale costs are the preset's central estimates (torpor \
             devices --json lists their ranges)"
                .to_string(),
            "latency is device-side: from the request reaching the host controller to its \
             completion (no block layer, driver or interrupt time)"
                .to_string(),
        ];
        let deferrable = self
            .scaling
            .is_some_and(|p| p.timer == TimerKind::Deferrable);
        if deferrable && link.is_some() {
            notes.push(
                "deferrable monitor: a poll falling due while CPU 0 (where its timer sits: \
                 ASSUMPTION) is idle waits for CPU 0 to wake, and then runs at once (the kernel \
                 runs it at that CPU's next tick)"
                    .into(),
            );
        } else if deferrable {
            notes.push(
                "deferrable monitor: a poll falling due while no command is outstanding waits \
                 for the next submission (ASSUMPTION: the CPU sleeps whenever the storage does; \
                 the longest deferral)"
                    .into(),
            );
        }
        if link.is_some_and(|l| l.cpu_latency_qos) {
            notes.push(if self.scaling.is_some() {
                "ufshcd's pm_qos_enable (v6.9+): the host holds the CPUs' global latency at 0 \
                 from each scale-up's clock switch to the end of the next scale-down"
                    .into()
            } else {
                "ufshcd's pm_qos_enable (v6.9+): without clock scaling the host holds the CPUs' \
                 global latency at 0 while its clocks run, from each ungating to the next gating"
                    .into()
            });
        }
        if let Some(ftl) = &self.ftl {
            notes.push(
                "reads are served by the preset's FTL model (the device's map cache and NAND \
                 dies; ftl.rs): its placement, cache policy and NAND figures are estimates, its \
                 controller delay fitted to one published figure"
                    .into(),
            );
            if let Some(hpb) = &ftl.hpb {
                notes.push(format!(
                    "HPB ({} control mode) follows the Linux driver as of v6.5; HPB was removed \
                     in v6.6, so this is a what-if. The HPB and system workqueues run their \
                     work at once (ASSUMPTION)",
                    match hpb.geometry.mode {
                        ControlMode::Device => "device",
                        ControlMode::Host => "host",
                    }
                ));
            }
        }
        if self.scaling.is_some() {
            let writes = [
                (true, self.user_min_freq_hz),
                (false, self.user_max_freq_hz),
            ];
            notes.extend(
                writes
                    .into_iter()
                    .filter_map(|(floor, hz)| hz.and_then(|hz| devfreq::sysfs_note(floor, hz))),
            );
        }
        if self.boost.is_some() && self.scaling.is_none() {
            notes.push("the boost has no effect with clock scaling off".into());
        }
        notes
    }
}

/// devfreq's own frequency QoS requests on its device, from sysfs (`min_freq_store`,
/// `max_freq_store`): the floor in kHz rounded down, the cap rounded up ("so that the
/// acceptable interval never shrinks"), a cap of 0 none, each passed through an s32 as the
/// kernel does (`devfreq::user_min_request_khz`).
fn user_requests(qos: &mut crate::qos::freq::FreqQos, min_hz: Option<u64>, max_hz: Option<u64>) {
    if let Some(hz) = min_hz {
        qos.set_min(USER_HOLDER, devfreq::user_min_request_khz(hz));
    }
    if let Some(hz) = max_hz {
        qos.set_max(USER_HOLDER, devfreq::user_max_request_khz(hz));
    }
}

/// The device's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UfsEvent {
    /// A command completes.
    Done(IoTicket),
    /// A command completes with an HPB response for the host to read.
    DoneWithResponse(IoTicket, RspId),
    /// An HPB READ BUFFER completes.
    MapLoaded(MapReq),
    /// An HPB WRITE BUFFER (region inactivation) completes.
    Unmapped,
    /// The HPB map work runs.
    MapWork,
    /// HPB host control mode's read-timeout poll.
    HpbPoll(Shot),
    /// The devfreq monitor's timer expires.
    Poll(Shot),
    /// The block layer's boost work runs.
    Boost(Shot),
    /// A scale operation ends: the new level serves.
    ScaleDone,
    /// A scale-up's clocks have switched (its gear switch follows): ufshcd's latency vote.
    ClocksUp,
    /// The clock-gating work turns the idle host's clocks off (voting hosts without clock
    /// scaling only).
    Gate(Shot),
}

/// What happened over a run, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UfsCounters {
    /// devfreq evaluations (monitor polls and QoS notifications).
    pub evaluations: u64,
    /// Monitor expiries that found the CPU asleep and waited (for it to wake, or without CPUs
    /// for the next submission).
    pub deferred_polls: u64,
    /// How long they waited in all, and the longest wait, ns (to when the poll ran, scaling
    /// suspended and cancelled it, or the run ended). Absent from the report while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub deferred_wait_ns: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub deferred_wait_max_ns: u64,
    pub scale_ups: u64,
    pub scale_downs: u64,
    /// Scales refused because outstanding commands would not drain within 1 s.
    pub scale_refusals: u64,
    /// Time commands were blocked by scale operations (drain and stall), ns.
    pub scale_blocked_ns: u64,
    /// Clock-scaling suspensions (an idle host stops polling).
    pub suspensions: u64,
    pub boost_sets: u64,
    pub boost_removals: u64,
    /// Commands that paid a hibern8 exit.
    pub hibern8_exits: u64,
    /// ufshcd's CPU latency votes: holds at 0 us and releases (changes of its request).
    /// Absent from the report while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub cpu_latency_holds: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub cpu_latency_releases: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A scale operation under way.
#[derive(Clone, Copy, Debug)]
struct Scale {
    /// When it was decided (commands are blocked from then).
    from: Nanos,
    to_max: bool,
}

/// Who asked devfreq to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    Monitor,
    Notifier,
}

/// Meter states, in this order.
const BUSY: usize = 0;
const IDLE: usize = 1;
const HIBERN8: usize = 2;
const CLOCK_GATED: usize = 3;
const SCALING: usize = 4;
const STATE_NAMES: [&str; 5] = ["busy", "idle", "hibern8", "clock-gated", "scaling"];

/// A device configuration the model cannot run: its FTL's or its HPB's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UfsDeviceError {
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error(transparent)]
    Hpb(#[from] HpbExchangeError),
}

/// A UFS device and its host: a [`BlockDevice`] (module documentation).
pub struct UfsDevice {
    min: HostLevel,
    max: HostLevel,
    power: UfsPower,
    idle_timers: IdleTimers,
    costs: ScaleCosts,
    queue: UfsQueue,
    host: Option<HostScaling>,
    boost: Option<(FreqBoost, BoostNotify)>,
    poll: Timer,
    /// The kernel's jiffies, for its delayed works: the monitor's polls, the boost's work, the
    /// clock-gating work, HPB's read-timeout work (`sim::timer_wheel`).
    clock: Jiffies,
    /// The monitor runs (not `stop_polling`).
    polling: bool,
    /// A deferrable expiry waiting for its CPU to wake.
    deferral: Deferral,
    /// A poll fell due during a scale a QoS notification started (step 4).
    monitor_pending: bool,
    /// ufshcd's CPU latency request (step 7).
    votes: LatencyVotes,
    /// The clock-gating work, and whether it has run since the host went idle (step 7,
    /// without clock scaling).
    gate_timer: Timer,
    clocks_gated: bool,
    boost_timer: Timer,
    /// Commands outstanding at the host, and when the last of them completes.
    active: u32,
    last_done: Nanos,
    /// The level commands are served at.
    serving_max: bool,
    scale: Option<Scale>,
    held: VecDeque<Cmd>,
    hpb: Option<HpbExchange>,
    hpb_poll: Timer,
    /// A QoS notification arrived during a scale.
    update_pending: bool,
    /// The idle chain's start, while idle.
    idle_since: Option<Nanos>,
    meter: EnergyMeter,
    level_since: Nanos,
    at_min: Nanos,
    freq_timeline: Vec<(Nanos, u64)>,
    freq_changes_dropped: u64,
    counters: UfsCounters,
}

impl UfsDevice {
    /// The device at time 0; an error when its FTL or HPB configuration is impossible.
    pub fn new(cfg: UfsConfig) -> Result<UfsDevice, UfsDeviceError> {
        let names = STATE_NAMES.iter().map(|s| s.to_string()).collect();
        let power = cfg.power;
        let idle_mw = power.power_mw(UfsState::Idle, true);
        Ok(UfsDevice {
            min: cfg.min,
            max: cfg.max,
            power,
            idle_timers: cfg.idle,
            costs: cfg.costs,
            queue: match &cfg.ftl {
                Some(f) => UfsQueue::with_ftl(cfg.service, Ftl::new(f.config)?),
                None => UfsQueue::new(cfg.service),
            },
            host: cfg.scaling.map(|p| {
                let mut host = HostScaling::new(p);
                user_requests(&mut host.qos, cfg.user_min_freq_hz, cfg.user_max_freq_hz);
                host
            }),
            boost: cfg
                .boost
                .filter(|b| b.timeout_ms != 0)
                .map(|b| (FreqBoost::new(b.timeout_ms, cfg.hz), b.notify)),
            poll: Timer::new(),
            clock: Jiffies::new(cfg.hz),
            polling: false,
            deferral: Deferral::new(None),
            monitor_pending: false,
            votes: LatencyVotes::new(false),
            gate_timer: Timer::new(),
            clocks_gated: false,
            boost_timer: Timer::new(),
            active: 0,
            last_done: Nanos::ZERO,
            serving_max: true,
            scale: None,
            held: VecDeque::new(),
            hpb: match cfg.ftl.and_then(|f| f.hpb) {
                Some(setup) => Some(HpbExchange::new(setup)?),
                None => None,
            },
            hpb_poll: Timer::new(),
            update_pending: false,
            idle_since: Some(Nanos::ZERO),
            meter: EnergyMeter::new(names, IDLE, idle_mw),
            level_since: Nanos::ZERO,
            at_min: Nanos::ZERO,
            freq_timeline: vec![(Nanos::ZERO, cfg.max.freq_hz)],
            freq_changes_dropped: 0,
            counters: UfsCounters::default(),
        })
    }

    /// Ties the host to the run's CPUs (`cpu_link.rs`); the default [`CpuLink`] ties nothing.
    /// Call it before the run starts.
    pub fn with_cpu_link(mut self, link: CpuLink) -> Self {
        self.deferral = Deferral::new(link.monitor_cpu);
        self.votes = LatencyVotes::new(link.cpu_latency_qos);
        self
    }

    /// The latency request follows clock gating: a voting host without clock scaling.
    fn gating_votes(&self) -> bool {
        self.votes.enabled() && self.host.is_none()
    }

    /// `ufshcd_pm_qos_update(hba, on)` now (step 7).
    fn vote(&mut self, on: bool) {
        match self.votes.update(on) {
            Some(CpuLatencyVote::Hold(_)) => self.counters.cpu_latency_holds += 1,
            Some(CpuLatencyVote::Release) => self.counters.cpu_latency_releases += 1,
            None => {}
        }
    }

    /// The host went idle at `now`: the clock-gating work is queued `clk_gating.delay_ms` on
    /// (only a voting host without clock scaling has anything to do then).
    fn arm_gate<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, now: Nanos) {
        if self.gating_votes() {
            let at = now + self.idle_timers.gate_after(self.clock, now);
            self.gate_timer.arm(ctx, at, UfsEvent::Gate);
        }
    }

    /// Ends the deferrable expiry waiting, if any, at `now` and counts its wait; true if one
    /// was waiting.
    fn end_deferral(&mut self, now: Nanos) -> bool {
        let Some(waited) = self.deferral.end(now) else {
            return false;
        };
        let c = &mut self.counters;
        c.deferred_wait_ns += waited.0;
        c.deferred_wait_max_ns = c.deferred_wait_max_ns.max(waited.0);
        true
    }

    fn level(&self, max: bool) -> HostLevel {
        if max {
            self.max
        } else {
            self.min
        }
    }

    /// When a work the HPB driver queues at `now` for `at` runs: `schedule_delayed_work` with
    /// the delay (whole ms) in jiffies, on the timer wheel.
    fn hpb_delayed_work(&self, now: Nanos, at: Nanos) -> Nanos {
        let ms = (at - now).0.div_ceil(1_000_000);
        self.clock.delayed_work(now, self.clock.from_ms(ms))
    }

    /// When the monitor queued at `now` polls (`ScalingParams::next_poll`).
    fn next_poll(&self, now: Nanos) -> Nanos {
        self.host.as_ref().map_or(now, |h| h.params.next_poll(now))
    }

    /// Charges the idle chain that started at `since` up to `now`, splitting it at the idle
    /// timers; returns the hibern8 exit a command arriving at `now` pays. The meter enters
    /// idle only here, so a command arriving as the last one completes makes no idle period.
    fn close_idle(&mut self, since: Nanos, now: Nanos) -> Nanos {
        if now <= since {
            return Nanos::ZERO;
        }
        let gate = self.idle_timers.gate_after(self.clock, since);
        let split = self.idle_timers.split(now - since, gate);
        let max = self.serving_max;
        let p = |s| self.power.power_mw(s, max);
        let (idle_mw, h8_mw, gated_mw) = (
            p(UfsState::Idle),
            p(UfsState::Hibern8),
            p(UfsState::ClockGated),
        );
        self.meter.set(since, IDLE, idle_mw);
        let h8_at = since + split.idle;
        if split.hibern8 > Nanos::ZERO {
            self.meter.set(h8_at, HIBERN8, h8_mw);
        }
        if split.clock_gated > Nanos::ZERO {
            self.meter.set(h8_at + split.hibern8, CLOCK_GATED, gated_mw);
        }
        self.meter.charge(now);
        if split.needs_hibern8_exit() {
            self.power.hibern8_exit
        } else {
            Nanos::ZERO
        }
    }

    /// Sends a command to the host controller at `ctx.now()` (step 2).
    fn send<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, cmd: Cmd) {
        let now = ctx.now();
        let mut start = now;
        if self.active == 0 {
            if let Some(since) = self.idle_since.take() {
                let exit = self.close_idle(since, now);
                if exit > Nanos::ZERO {
                    self.counters.hibern8_exits += 1;
                }
                start = now + exit;
            }
            let busy_mw = self.power.power_mw(UfsState::Busy, self.serving_max);
            self.meter.set(now, BUSY, busy_mw);
            if self.gating_votes() {
                self.gate_timer.cancel();
                // ufshcd_hold: the ungate work turns the clocks on (ufshcd_setup_clocks).
                if std::mem::take(&mut self.clocks_gated) {
                    self.vote(true);
                }
            }
        }
        self.active += 1;
        let resumed = self.host.as_mut().is_some_and(|h| {
            let first_while_suspended = h.load.on_send(now);
            first_while_suspended && h.load.resume()
        });
        if resumed && !self.polling {
            self.polling = true;
            let at = self.next_poll(now);
            self.poll.arm(ctx, at, UfsEvent::Poll);
        }
        let level = self.level(self.serving_max);
        let (done, event) = match cmd {
            Cmd::Io(ticket, req) => {
                let hpb_entry_valid = self.hpb.as_mut().is_some_and(|h| h.prep(now, &req));
                let io = DeviceCmd::Io {
                    req: &req,
                    hpb_entry_valid,
                };
                let accepted = self.queue.accept_cmd(start, io, level);
                let rsp = self.hpb.as_mut().and_then(|h| h.respond(&req, accepted));
                let event = match rsp {
                    Some(id) => UfsEvent::DoneWithResponse(ticket, id),
                    None => UfsEvent::Done(ticket),
                };
                (accepted.done, event)
            }
            Cmd::Hpb(HpbCommand::ReadBuffer(map_req)) => {
                let hpb = self.hpb.as_ref().expect("HPB commands come from HPB");
                let rb = hpb.read_buffer(&map_req);
                let accepted = self.queue.accept_cmd(start, rb, level);
                (accepted.done, UfsEvent::MapLoaded(map_req))
            }
            Cmd::Hpb(HpbCommand::InactivateRegion { .. }) => {
                let accepted = self.queue.accept_cmd(start, DeviceCmd::WriteBuffer, level);
                (accepted.done, UfsEvent::Unmapped)
            }
        };
        self.last_done = self.last_done.max(done);
        ctx.schedule(done, event);
    }

    /// Sends `cmd` now, or holds it while a scale operation blocks the queue.
    fn send_or_hold<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, cmd: Cmd) {
        if self.scale.is_some() {
            self.held.push_back(cmd);
        } else {
            self.send(ctx, cmd);
        }
    }

    /// A command completed at `ctx.now()` (step 3).
    fn complete<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>) {
        let now = ctx.now();
        self.active -= 1;
        if let Some(h) = self.host.as_mut() {
            h.load.on_complete(now);
        }
        if self.active == 0 {
            if self.scale.is_some() {
                let mw = self.power.power_mw(UfsState::Idle, true);
                self.meter.set(now, SCALING, mw);
            } else {
                self.idle_since = Some(now);
                self.arm_gate(ctx, now);
            }
        }
    }

    /// The HPB map work runs at `ctx.now()`: its READ BUFFERs and WRITE BUFFERs are sent.
    fn map_work<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>) {
        let Some(hpb) = self.hpb.as_mut() else {
            return;
        };
        for cmd in hpb.map_work(ctx.now()) {
            self.send_or_hold(ctx, Cmd::Hpb(cmd));
        }
    }

    /// One devfreq evaluation at `ctx.now()` (step 4).
    fn evaluate<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, trigger: Trigger) {
        let now = ctx.now();
        if self.scale.is_some() {
            // The evaluation waits for devfreq's lock, which the scale holds: a notification,
            // or a poll falling due during a scale a notification started (the monitor's own
            // poll is re-armed only after its scale).
            match trigger {
                Trigger::Notifier => self.update_pending = true,
                Trigger::Monitor => self.monitor_pending = true,
            }
            return;
        }
        let Some(host) = self.host.as_mut() else {
            return;
        };
        self.counters.evaluations += 1;
        let was_suspended = host.load.is_suspended;
        let outcome = host.evaluate(now);
        let mut work_end = now;
        if let Some(up) = outcome.scale_to_max {
            let drain_end = if self.active > 0 {
                self.last_done.max(now)
            } else {
                now
            };
            if drain_end - now > DRAIN_LIMIT {
                host.at_max = !up;
                self.counters.scale_refusals += 1;
            } else {
                let (from, to) = (self.level(self.serving_max), self.level(up));
                work_end = drain_end + self.costs.stall(from, to);
                if up && self.votes.enabled() {
                    // ufshcd_scale_clks votes once the clocks have switched (step 7).
                    let at = drain_end + self.costs.clock_part(from, to);
                    ctx.schedule(at, UfsEvent::ClocksUp);
                }
                self.scale = Some(Scale {
                    from: now,
                    to_max: up,
                });
                if let Some(since) = self.idle_since.take() {
                    self.close_idle(since, now);
                    let mw = self.power.power_mw(UfsState::Idle, true);
                    self.meter.set(now, SCALING, mw);
                }
                ctx.schedule(work_end, UfsEvent::ScaleDone);
            }
        }
        if outcome.suspended {
            self.counters.suspensions += u64::from(!was_suspended);
            self.polling = false;
            self.end_deferral(now);
            self.poll.cancel();
        } else if trigger == Trigger::Monitor {
            let at = self.next_poll(work_end);
            self.poll.arm(ctx, at, UfsEvent::Poll);
        }
    }

    /// The boost work ran and changed the constraint to `set` (step 6).
    fn boost_changed<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, set: bool, how: BoostNotify) {
        if set {
            self.counters.boost_sets += 1;
        } else {
            self.counters.boost_removals += 1;
        }
        let Some(host) = self.host.as_mut() else {
            return;
        };
        match how {
            BoostNotify::NextPoll => host.disk_min_khz = if set { BOOST_MIN_KHZ } else { 0 },
            BoostNotify::AtOnce => {
                let changed = if set {
                    host.qos.set_min(BOOST_HOLDER, BOOST_MIN_KHZ)
                } else {
                    host.qos.remove_min(BOOST_HOLDER)
                };
                if changed {
                    self.evaluate(ctx, Trigger::Notifier);
                }
            }
        }
    }

    /// A scale operation ends at `ctx.now()`: the new level serves and held commands go.
    fn scale_done<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>) {
        let now = ctx.now();
        let Some(scale) = self.scale.take() else {
            return;
        };
        if scale.to_max {
            self.counters.scale_ups += 1;
        } else {
            self.counters.scale_downs += 1;
        }
        self.counters.scale_blocked_ns += (now - scale.from).0;
        if !self.serving_max {
            self.at_min += now - self.level_since;
        }
        self.level_since = now;
        self.serving_max = scale.to_max;
        let hz = self.level(scale.to_max).freq_hz;
        if self.freq_timeline.len() < FREQ_TIMELINE_LIMIT {
            self.freq_timeline.push((now, hz));
        } else {
            self.freq_changes_dropped += 1;
        }
        if !scale.to_max {
            // A scale-down's clocks switch last: ufshcd_scale_clks votes as it ends (step 7).
            self.vote(false);
        }
        self.idle_since = Some(now);
        while let Some(cmd) = self.held.pop_front() {
            self.send(ctx, cmd);
        }
        if std::mem::take(&mut self.monitor_pending) {
            self.evaluate(ctx, Trigger::Monitor);
        }
        if std::mem::take(&mut self.update_pending) {
            self.evaluate(ctx, Trigger::Notifier);
        }
    }

    /// Closes the books at `end` (the run's end; no event after it is counted).
    pub fn finish(&mut self, end: Nanos) -> UfsStats {
        if let Some(since) = self.idle_since {
            if end > since {
                self.close_idle(since, end);
            }
        } else {
            self.meter.charge(end);
        }
        let mut at_min = self.at_min;
        if !self.serving_max && end > self.level_since {
            at_min += end - self.level_since;
        }
        let total = end.0.max(1) as f64;
        let mut counters = self.counters;
        if let Some(waited) = self.deferral.pending(end) {
            counters.deferred_wait_ns += waited.0;
            counters.deferred_wait_max_ns = counters.deferred_wait_max_ns.max(waited.0);
        }
        UfsStats {
            energy_mj: self.meter.total_energy_mj(),
            avg_power_mw: self.meter.avg_power_mw(),
            states: self.meter.states(),
            time_at_min_ns: at_min.0,
            low_clock_pct: 100.0 * at_min.0 as f64 / total,
            counters,
            freq_timeline: self
                .freq_timeline
                .iter()
                .map(|&(t, hz)| (t.0, hz))
                .collect(),
            freq_changes_dropped: self.freq_changes_dropped,
            poll_loads: self.host.as_ref().map(|h| h.loads.clone()),
            ftl: self.queue.ftl().map(|f| f.stats()),
            hpb: self.hpb.as_ref().map(|h| h.report()),
        }
    }
}

/// A command for the host controller: a block request, or the HPB driver's own.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    Io(IoTicket, IoRequest),
    Hpb(HpbCommand),
}

/// What a UFS device reports at the end of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UfsStats {
    pub energy_mj: f64,
    pub avg_power_mw: f64,
    /// Time and energy in busy, idle, hibern8, clock-gated and scaling.
    pub states: Vec<StateEnergy>,
    pub time_at_min_ns: u64,
    /// Percent of the run at the min level (the lowest clock).
    pub low_clock_pct: f64,
    pub counters: UfsCounters,
    /// (time ns, first clock's Hz) at the start and at each level change.
    pub freq_timeline: Vec<(u64, u64)>,
    pub freq_changes_dropped: u64,
    /// The busy shares devfreq's evaluations saw, by level (with clock scaling).
    pub poll_loads: Option<LoadHistogram>,
    /// The device's map-cache and NAND counters, with an FTL.
    pub ftl: Option<FtlStats>,
    pub hpb: Option<HpbReport>,
}

impl BlockDevice for UfsDevice {
    type Event = UfsEvent;

    fn start<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>) {
        if let Some(hpb) = self.hpb.as_mut() {
            let init = hpb.init();
            if init.map_work {
                ctx.schedule(hpb.map_work_at(ctx.now()), UfsEvent::MapWork);
            }
            if let Some(at) = init.first_poll {
                let at = self.hpb_delayed_work(ctx.now(), at);
                self.hpb_poll.arm(ctx, at, UfsEvent::HpbPoll);
            }
        }
        if self.host.is_some() {
            self.polling = true;
            let at = self.next_poll(ctx.now());
            self.poll.arm(ctx, at, UfsEvent::Poll);
        }
        // Idle from time 0.
        let now = ctx.now();
        self.arm_gate(ctx, now);
    }

    fn submit<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, ticket: IoTicket, req: &IoRequest) {
        let now = ctx.now();
        if let Some((boost, _)) = &mut self.boost {
            let qualifies = req.op == IoOp::Read || req.sync;
            if let Some(at) = boost.on_bio(now, qualifies) {
                // schedule_delayed_work does nothing while the work is pending.
                if self.boost_timer.due().is_none() {
                    self.boost_timer.arm(ctx, at, UfsEvent::Boost);
                }
            }
        }
        if self.deferral.ends_at_submission() && self.end_deferral(now) {
            self.evaluate(ctx, Trigger::Monitor);
        }
        self.send_or_hold(ctx, Cmd::Io(ticket, *req));
    }

    fn on_event<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, event: UfsEvent) -> Option<IoTicket> {
        match event {
            UfsEvent::Done(ticket) => {
                self.complete(ctx);
                return Some(ticket);
            }
            UfsEvent::DoneWithResponse(ticket, rsp) => {
                self.complete(ctx);
                if let Some(h) = self.hpb.as_mut() {
                    if h.on_response(rsp) {
                        ctx.schedule(h.map_work_at(ctx.now()), UfsEvent::MapWork);
                    }
                }
                return Some(ticket);
            }
            UfsEvent::MapLoaded(map_req) => {
                self.complete(ctx);
                if let Some(h) = self.hpb.as_mut() {
                    h.map_req_done(&map_req);
                }
            }
            UfsEvent::Unmapped => {
                self.complete(ctx);
                if let Some(h) = self.hpb.as_mut() {
                    h.write_buffer_done();
                }
            }
            UfsEvent::MapWork => self.map_work(ctx),
            UfsEvent::HpbPoll(shot) => {
                if !self.hpb_poll.fire(shot) {
                    return None;
                }
                let now = ctx.now();
                let poll = self.hpb.as_mut()?.poll(now);
                let at = self.hpb_delayed_work(now, poll.next_poll);
                self.hpb_poll.arm(ctx, at, UfsEvent::HpbPoll);
                if poll.map_work {
                    let map_at = self.hpb.as_ref()?.map_work_at(now);
                    ctx.schedule(map_at, UfsEvent::MapWork);
                }
            }
            UfsEvent::Poll(shot) => {
                if !self.poll.fire(shot) {
                    return None;
                }
                let deferrable = self
                    .host
                    .as_ref()
                    .is_some_and(|h| h.params.timer == TimerKind::Deferrable);
                let device_idle = self.active == 0 && self.scale.is_none();
                if deferrable && self.deferral.must_wait(device_idle) {
                    self.deferral.wait(ctx.now());
                    self.counters.deferred_polls += 1;
                } else {
                    self.evaluate(ctx, Trigger::Monitor);
                }
            }
            UfsEvent::Boost(shot) => {
                if !self.boost_timer.fire(shot) {
                    return None;
                }
                let now = ctx.now();
                let (boost, how) = self.boost.as_mut()?;
                let how = *how;
                let work = boost.on_work(now);
                if let Some(at) = work.next_run {
                    self.boost_timer.arm(ctx, at, UfsEvent::Boost);
                }
                if let Some(set) = work.changed {
                    self.boost_changed(ctx, set, how);
                }
            }
            UfsEvent::ScaleDone => self.scale_done(ctx),
            UfsEvent::ClocksUp => self.vote(true),
            UfsEvent::Gate(shot) => {
                if self.gate_timer.fire(shot) {
                    self.clocks_gated = true;
                    self.vote(false);
                }
            }
        }
        None
    }

    fn on_cpu_idle<W>(&mut self, ctx: &mut Ctx<'_, W, UfsEvent>, cpu: u32, idle: bool) {
        // The timer's CPU wakes with an expiry waiting: the poll runs now (step 5).
        if self.deferral.on_cpu_idle(cpu, idle) && self.end_deferral(ctx.now()) {
            self.evaluate(ctx, Trigger::Monitor);
        }
    }

    fn next_cpu_latency_vote(&mut self) -> Option<CpuLatencyVote> {
        self.votes.next()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::devfreq::RangeVersion;
    use crate::sim::EventQueue;

    const MAX: HostLevel = HostLevel {
        freq_hz: 300_000_000,
        gear: 4,
    };
    const MIN: HostLevel = HostLevel {
        freq_hz: 37_500_000,
        gear: 1,
    };
    /// QD1 4 KiB reads of the hand model (service.rs tests): 3333 + 120000 + 1930 ns at max,
    /// 26667 + 120000 + 15440 ns at min.
    const READ_MAX: Nanos = Nanos(125_263);
    const READ_MIN: Nanos = Nanos(162_107);
    /// Gear 700 us + clock 300 us: a scale between the two levels stalls 1 ms.
    const STALL: Nanos = Nanos::from_us(1000);

    pub(crate) fn config(scaling: Option<ScalingParams>, boost: Option<BoostConfig>) -> UfsConfig {
        UfsConfig {
            service: UfsServiceModel {
                lanes: 2,
                slots: 12,
                host_cycles: 1000,
                read_4k_ns: 120_000,
                write_4k_ns: 240_000,
                read_stream_bytes_per_s: 171_922_900,
                write_stream_bytes_per_s: 85_961_500,
            },
            min: MIN,
            max: MAX,
            power: UfsPower {
                device_active_mw: 1000.0,
                device_idle_mw: 30.0,
                device_hibern8_mw: 3.0,
                host_min_mw: 10.0,
                host_max_mw: 40.0,
                hibern8_exit: Nanos::from_us(500),
            },
            idle: IdleTimers {
                clk_gating_delay: Nanos::from_ms(50),
                auto_hibern8: Some(Nanos::from_ms(10)),
            },
            costs: ScaleCosts {
                gear_switch: Nanos::from_us(700),
                clock_switch: Nanos::from_us(300),
            },
            scaling,
            boost,
            hz: 250,
            user_min_freq_hz: None,
            user_max_freq_hz: None,
            ftl: None,
        }
    }

    /// ufshcd's defaults (100 ms, 70/5, rounding up) with a delayed timer unless said.
    fn params(timer: TimerKind) -> ScalingParams {
        ScalingParams {
            timer,
            ..ScalingParams::ufshcd_default(MIN.freq_hz, MAX.freq_hz)
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Ev {
        Submit(u32),
        Dev(UfsEvent),
    }

    /// Runs 4 KiB reads submitted at `at` until `end`; returns each read's (submitted,
    /// completed), in completion order, and the device's stats.
    fn run(cfg: UfsConfig, at: &[Nanos], end: Nanos) -> (Vec<(Nanos, Nanos)>, UfsStats) {
        let mut dev = UfsDevice::new(cfg).unwrap();
        let mut q: EventQueue<Ev> = EventQueue::new();
        dev.start(&mut Ctx::new(&mut q, Ev::Dev));
        for (i, &t) in at.iter().enumerate() {
            q.schedule(t, Ev::Submit(i as u32));
        }
        let mut done = Vec::new();
        while let Some((now, ev)) = q.pop_until(end) {
            match ev {
                Ev::Submit(i) => {
                    let ticket = IoTicket {
                        owner: crate::storage::io::Owner::Workload(i),
                        device: 0,
                        op: IoOp::Read,
                        bytes: 4096,
                        submitted: now,
                    };
                    let req = IoRequest {
                        op: IoOp::Read,
                        offset: 0,
                        bytes: 4096,
                        sync: false,
                    };
                    dev.submit(&mut Ctx::new(&mut q, Ev::Dev), ticket, &req);
                }
                Ev::Dev(e) => {
                    if let Some(t) = dev.on_event(&mut Ctx::new(&mut q, Ev::Dev), e) {
                        done.push((t.submitted, now));
                    }
                }
            }
        }
        let stats = dev.finish(end);
        (done, stats)
    }

    fn ms(n: u64) -> Nanos {
        Nanos::from_ms(n)
    }

    /// What a script does at its time: hand the device a request, or tell it a CPU entered
    /// (`true`) or left an idle state, as the world does.
    #[derive(Clone, Copy, Debug)]
    enum Act {
        Io(IoRequest),
        Idle(u32, bool),
    }

    #[derive(Clone, Copy, Debug)]
    enum Step {
        Act(usize),
        Dev(UfsEvent),
    }

    /// What a scripted run saw: each request's (submitted, completed) in completion order, the
    /// latency votes with the time the world drained them, and the device's stats.
    struct Seen {
        done: Vec<(Nanos, Nanos)>,
        votes: Vec<(Nanos, CpuLatencyVote)>,
        stats: UfsStats,
    }

    /// Runs `script` against the device tied to CPUs by `link` until `end`, draining its
    /// latency votes after every event as the world does.
    fn drive(cfg: UfsConfig, link: CpuLink, script: &[(Nanos, Act)], end: Nanos) -> Seen {
        let mut dev = UfsDevice::new(cfg).unwrap().with_cpu_link(link);
        let mut q: EventQueue<Step> = EventQueue::new();
        dev.start(&mut Ctx::new(&mut q, Step::Dev));
        for (i, &(t, _)) in script.iter().enumerate() {
            q.schedule(t, Step::Act(i));
        }
        let (mut done, mut votes) = (Vec::new(), Vec::new());
        while let Some((now, step)) = q.pop_until(end) {
            let ctx = &mut Ctx::new(&mut q, Step::Dev);
            match step {
                Step::Act(i) => match script[i].1 {
                    Act::Io(req) => {
                        let ticket = IoTicket {
                            owner: crate::storage::io::Owner::Workload(i as u32),
                            device: 0,
                            op: req.op,
                            bytes: req.bytes,
                            submitted: now,
                        };
                        dev.submit(ctx, ticket, &req);
                    }
                    Act::Idle(cpu, idle) => dev.on_cpu_idle(ctx, cpu, idle),
                },
                Step::Dev(e) => {
                    if let Some(t) = dev.on_event(ctx, e) {
                        done.push((t.submitted, now));
                    }
                }
            }
            while let Some(v) = dev.next_cpu_latency_vote() {
                votes.push((now, v));
            }
        }
        let stats = dev.finish(end);
        Seen { done, votes, stats }
    }

    fn read_4k() -> Act {
        Act::Io(IoRequest {
            op: IoOp::Read,
            offset: 0,
            bytes: 4096,
            sync: false,
        })
    }

    #[test]
    fn without_scaling_a_read_takes_the_max_level_time_and_energy_adds_up_by_hand() {
        let (done, s) = run(config(None, None), &[ms(1)], ms(100));
        assert_eq!(done, vec![(ms(1), ms(1) + READ_MAX)]);
        // Idle 1 ms at 70 mW; busy 125.263 us at 1040 mW; then idle 10 ms at 70 mW (the
        // auto-hibern8 timer, exact), hibern8 at 43 mW until the gate work runs: queued at
        // 1.125263 ms (jiffy 0) for 50 ms = 13 jiffies, it fires at jiffy 14 (the timer wheel's
        // level 0), 56 ms; clock-gated from there to 100 ms at 3 mW.
        let busy = READ_MAX.0 as f64 * 1e-9;
        let hibern8 = 0.056 - 0.001 - busy - 0.01;
        let mj = 0.001 * 70.0 + busy * 1040.0 + 0.01 * 70.0 + hibern8 * 43.0 + 0.044 * 3.0;
        assert!((s.energy_mj - mj).abs() < 1e-9, "{} vs {mj}", s.energy_mj);
        assert_eq!(s.counters.evaluations, 0);
        assert_eq!(s.low_clock_pct, 0.0);
        assert_eq!(s.freq_timeline, vec![(0, MAX.freq_hz)]);
    }

    #[test]
    fn back_to_back_commands_make_one_busy_period() {
        // A QD1 job submits each read as the last completes: the device never idles, so the
        // meter keeps one busy period from the first read (the idle state counts only the
        // start of the run), and busy time is the whole 10 ms.
        let mut dev = UfsDevice::new(config(None, None)).unwrap();
        let mut job = crate::workload::FioJob::new("r", crate::workload::RwMode::RandRead);
        job.time_based = true;
        let mut loads = vec![crate::workload::Workload::Job(job)];
        let io = crate::world::run_io(&mut dev, &mut loads, ms(10), 1).unwrap();
        let s = dev.finish(ms(10));
        assert_eq!(io.ios, ms(10).0 / READ_MAX.0);
        let busy = &s.states[BUSY];
        assert_eq!((busy.entries, busy.time_ns), (1, ms(10).0));
        assert_eq!(s.states[IDLE].entries, 1);
    }

    #[test]
    fn an_idle_host_scales_down_at_its_second_poll_then_suspends() {
        // 100 ms at HZ=250 is 25 jiffies; queued at jiffy J a poll comes at J + 26 (the timer
        // wheel's level 0). Poll 1 at 104 ms: no window yet (total 0) -> max, no change,
        // scaling not suspended (the decision is up and suspend_on_no_request is off). Poll 2
        // at 208 ms: busy 0 of 104 ms -> 0 Hz -> clamped to min: scale down, stalling 1 ms,
        // and suspend (nothing outstanding). A read at 300 ms (jiffy 75) resumes scaling (next
        // poll at jiffy 101, 404 ms) and runs at min; it finds 91 ms of idle: past
        // auto-hibern8 (10 ms), so it pays the 500 us exit.
        let (done, s) = run(
            config(Some(params(TimerKind::Delayed)), None),
            &[ms(300)],
            ms(1000),
        );
        assert_eq!(
            s.freq_timeline,
            vec![(0, MAX.freq_hz), ((ms(208) + STALL).0, MIN.freq_hz)]
        );
        assert_eq!(
            done,
            vec![(ms(300), ms(300) + Nanos::from_us(500) + READ_MIN)]
        );
        // Poll at 404 ms: busy 162 us (+ the exit, 662 us) of 104 ms -> stays min; nothing
        // outstanding -> suspends again. Evaluations: 104, 208, 404 ms.
        assert_eq!(s.counters.evaluations, 3);
        assert_eq!(s.counters.suspensions, 2);
        assert_eq!((s.counters.scale_downs, s.counters.scale_ups), (1, 0));
        assert_eq!(s.counters.hibern8_exits, 1);
        // At min from 209 ms to the end: 791 ms of 1 s.
        assert!((s.low_clock_pct - 79.1).abs() < 1e-9, "{}", s.low_clock_pct);
    }

    #[test]
    fn a_loaded_window_scales_up_after_draining_and_the_monitor_rearms_after_the_stall() {
        // Down at 208 ms (+1 ms stall) and suspended. From 300 ms to 419.8 ms, a read every
        // 200 us: the host is busy 162 of every 200 us (81 % > 70 %). The read at 300 ms
        // (jiffy 75) resumes the monitor, which polls at jiffy 101, 404 ms, and scales up. The
        // read due at 404 ms was queued before the poll was armed, so it goes first at that
        // instant: the scale drains it (done 404.162107 ms), then stalls 1 ms; the read due at
        // 404.2 ms is held until then and served at max. The next poll is queued after the
        // stall (405.16 ms, jiffy 101): at jiffy 127, 508 ms.
        let at: Vec<Nanos> = (0..600)
            .map(|i| ms(300) + Nanos::from_us(200 * i))
            .collect();
        let (done, s) = run(config(Some(params(TimerKind::Delayed)), None), &at, ms(520));
        let up = ms(404) + READ_MIN + STALL;
        assert_eq!(
            s.freq_timeline,
            vec![
                (0, MAX.freq_hz),
                ((ms(208) + STALL).0, MIN.freq_hz),
                (up.0, MAX.freq_hz)
            ]
        );
        let held = done
            .iter()
            .find(|(sub, _)| *sub == ms(404) + Nanos::from_us(200));
        assert_eq!(held.unwrap().1, up + READ_MAX);
        // Polls at 104, 208, 404 and 508 ms. The last one's window (from 404 ms, 104 ms) holds
        // the drained read (162 us) and at least the 74 reads of 405.2..=419.8 ms at max, apart
        // (125.263 us each): over 9.4 ms, 9.07 %: 9.07 % x 300 MHz / 68 = 40 MHz, above the min
        // clock, so rounded up to max: no change.
        assert_eq!(s.counters.evaluations, 4);
        assert_eq!(s.counters.scale_ups, 1);
    }

    #[test]
    fn devfreq_sysfs_floor_and_cap_hold_the_level() {
        // The loaded window of the test above (81 % from 300 ms) with max_freq at the min
        // clock: the cap wins over the governor's maximum, even the first poll's (no window
        // yet), so the host goes down at 104 ms and nothing scales up. An idle host with
        // min_freq at the max clock never scales down.
        let at: Vec<Nanos> = (0..600)
            .map(|i| ms(300) + Nanos::from_us(200 * i))
            .collect();
        let mut capped = config(Some(params(TimerKind::Delayed)), None);
        capped.user_max_freq_hz = Some(MIN.freq_hz);
        let (_, s) = run(capped, &at, ms(520));
        assert_eq!(s.counters.scale_ups, 0);
        assert_eq!(s.freq_timeline[1], ((ms(104) + STALL).0, MIN.freq_hz));
        let mut floored = config(Some(params(TimerKind::Delayed)), None);
        floored.user_min_freq_hz = Some(MAX.freq_hz);
        let (_, s) = run(floored, &[], ms(1000));
        assert_eq!(s.freq_timeline, vec![(0, MAX.freq_hz)]);
        // Polls at 104 and 208 ms: the second decides max (the floor) with nothing
        // outstanding and, suspend_on_no_request off, does not suspend; so every 26 jiffies
        // (104 ms), 9 polls up to 936 ms before the run's end at 1000 ms.
        assert_eq!(s.counters.evaluations, 9);
    }

    #[test]
    fn devfreq_sysfs_values_past_an_s32_of_khz_act_as_in_the_kernel() {
        // max_freq = 4294967296000 Hz: 2^32 kHz, a cap of 0 kHz once passed as an s32. The
        // first poll (104 ms, no window yet: the maximum) is capped to the minimum: down, the
        // stall ending at 105 ms, under either form of the range.
        for range in [RangeVersion::V5_5, RangeVersion::V6_17] {
            let mut capped = config(
                Some(ScalingParams {
                    range,
                    ..params(TimerKind::Delayed)
                }),
                None,
            );
            capped.user_max_freq_hz = Some(4_294_967_296_000);
            let (_, s) = run(capped, &[], ms(300));
            assert_eq!(
                s.freq_timeline,
                vec![(0, MAX.freq_hz), ((ms(104) + STALL).0, MIN.freq_hz)]
            );
        }
        // min_freq = 4294967301000 Hz: a floor of 5 kHz, which holds nothing: the idle host
        // goes down at its second poll, 208 ms, as with no floor.
        let mut floored = config(Some(params(TimerKind::Delayed)), None);
        floored.user_min_freq_hz = Some(4_294_967_301_000);
        let (_, s) = run(floored, &[], ms(300));
        assert_eq!(
            s.freq_timeline,
            vec![(0, MAX.freq_hz), ((ms(208) + STALL).0, MIN.freq_hz)]
        );
        // min_freq = 2147483648000 Hz: -2^31 kHz, a floor near 2^64 Hz: never down.
        let mut pinned = config(Some(params(TimerKind::Delayed)), None);
        pinned.user_min_freq_hz = Some(2_147_483_648_000);
        let (_, s) = run(pinned, &[], ms(300));
        assert_eq!(s.freq_timeline, vec![(0, MAX.freq_hz)]);
    }

    #[test]
    fn a_deferrable_poll_waits_for_the_next_submission() {
        // Nothing outstanding at 104 ms: the poll sleeps until the read at 700 ms (jiffy 175),
        // runs just before it (total 0 -> max: nothing changes) and re-arms for jiffy 201,
        // 804 ms, when the host is idle again: deferred again, for good.
        let (done, s) = run(
            config(Some(params(TimerKind::Deferrable)), None),
            &[ms(700)],
            ms(1000),
        );
        assert_eq!(s.counters.evaluations, 1);
        assert_eq!(s.counters.deferred_polls, 2);
        // They waited 104 -> 700 ms, and 804 ms -> the run's end.
        assert_eq!(s.counters.deferred_wait_ns, ms(596 + 196).0);
        assert_eq!(s.counters.deferred_wait_max_ns, ms(596).0);
        assert_eq!(s.freq_timeline, vec![(0, MAX.freq_hz)]);
        // 700 ms idle: the link is in hibern8 (clock-gated): the exit, then max-level service.
        assert_eq!(done[0].1, ms(700) + Nanos::from_us(500) + READ_MAX);
    }

    /// Reads every 10 ms from 305 ms to 395 ms, after the host went down at 200 ms.
    fn reads_every_10_ms() -> Vec<Nanos> {
        (0..10).map(|i| ms(305 + 10 * i)).collect()
    }

    #[test]
    fn without_the_boost_intermittent_reads_stay_at_the_low_clock() {
        let (_, s) = run(
            config(Some(params(TimerKind::Delayed)), None),
            &reads_every_10_ms(),
            ms(600),
        );
        assert_eq!(s.counters.scale_ups, 0);
    }

    #[test]
    fn the_patch_boost_acts_at_the_next_poll() {
        // Down at 208 ms, ending at 209 ms. The first read (305 ms, jiffy 76) sets the floor at
        // once; each read refreshes last_active. The boost's work re-queues itself for the
        // deadline and fires a jiffy after it (the wheel's level 0): at jiffy 85 (deadline 84),
        // 92 (the read of 335 ms, jiffy 83: 91), 100 (365 ms: 99), 107 (395 ms, jiffy 98:
        // 106), where 107 > 106 removes it: 428 ms. The poll at jiffy 76 + 26 = 102, 408 ms,
        // sees the floor: up, the stall ending at 409 ms (nothing outstanding: the read of
        // 405 ms is done). The next poll, queued at 409 ms (jiffy 102) for jiffy 128, 512 ms,
        // finds the floor gone and no read since 395 ms: down again, ending at 513 ms.
        let boost = BoostConfig {
            timeout_ms: 30,
            notify: BoostNotify::NextPoll,
        };
        let (_, s) = run(
            config(Some(params(TimerKind::Delayed)), Some(boost)),
            &reads_every_10_ms(),
            ms(600),
        );
        assert_eq!(
            s.freq_timeline,
            vec![
                (0, MAX.freq_hz),
                ((ms(208) + STALL).0, MIN.freq_hz),
                ((ms(408) + STALL).0, MAX.freq_hz),
                ((ms(512) + STALL).0, MIN.freq_hz)
            ]
        );
        assert_eq!((s.counters.boost_sets, s.counters.boost_removals), (1, 1));
    }

    #[test]
    fn the_at_once_boost_scales_up_after_the_first_read_and_down_when_it_expires() {
        // The first read (305 ms, at min, after 96 ms idle: hibern8 exit) resumes scaling;
        // the boost work runs at once, the floor's notifier evaluates: up. The read in flight
        // drains (done 305.5 ms + 162.107 us), then 1 ms of stall. At 428 ms the floor goes
        // (the boost work's schedule of the_patch_boost_acts_at_the_next_poll): the notifier
        // evaluates again, the load since the scale-up is tiny: down, and (idle) suspended.
        let boost = BoostConfig {
            timeout_ms: 30,
            notify: BoostNotify::AtOnce,
        };
        let (done, s) = run(
            config(Some(params(TimerKind::Delayed)), Some(boost)),
            &reads_every_10_ms(),
            ms(600),
        );
        let first_done = ms(305) + Nanos::from_us(500) + READ_MIN;
        assert_eq!(done[0].1, first_done);
        assert_eq!(
            s.freq_timeline,
            vec![
                (0, MAX.freq_hz),
                ((ms(208) + STALL).0, MIN.freq_hz),
                ((first_done + STALL).0, MAX.freq_hz),
                ((ms(428) + STALL).0, MIN.freq_hz)
            ]
        );
        // The later reads run at max: 315 ms, 9.3 ms after the scale: no hibern8 yet.
        assert_eq!(done[1], (ms(315), ms(315) + READ_MAX));
    }

    #[test]
    fn a_scale_waits_for_outstanding_commands() {
        // At-once boost, twelve reads at 305 ms: they fill the twelve slots; the scale waits
        // for the last to complete, then stalls; a read at 305.1 ms is held until then.
        let boost = BoostConfig {
            timeout_ms: 30,
            notify: BoostNotify::AtOnce,
        };
        let mut at = vec![ms(305); 12];
        at.push(ms(305) + Nanos::from_us(100));
        let (done, s) = run(
            config(Some(params(TimerKind::Delayed)), Some(boost)),
            &at,
            ms(320),
        );
        let last_of_twelve = done
            .iter()
            .filter(|(sub, _)| *sub == ms(305))
            .map(|d| d.1)
            .max();
        let held = done.iter().find(|(sub, _)| *sub > ms(305)).unwrap();
        let up = last_of_twelve.unwrap() + STALL;
        assert_eq!(s.freq_timeline[2], (up.0, MAX.freq_hz));
        assert_eq!(held.1, up + READ_MAX);
    }

    #[test]
    fn a_deferrable_poll_waits_while_its_cpu_sleeps_and_runs_when_it_wakes() {
        // The monitor's timer sits on CPU 0, idle from time 0. The poll due at 104 ms waits;
        // CPU 1 waking at 130 ms changes nothing; CPU 0 waking at 160 ms (jiffy 40) runs it (no
        // window yet: max, no change) and re-arms it for jiffy 66, 264 ms. CPU 0 is awake then:
        // that poll runs on time (idle window -> min: the scale ends at 265 ms, and scaling
        // suspends). A read at 400 ms (jiffy 100, issued from CPU 1) resumes scaling: the poll
        // due at jiffy 126, 504 ms, finds CPU 0 idle again (since 270 ms) and waits, through a
        // second read at 550 ms (a submission is not CPU 0 waking), until CPU 0 wakes at
        // 650 ms; it keeps the min level and scaling suspends again.
        let script = [
            (ms(0), Act::Idle(0, true)),
            (ms(130), Act::Idle(1, false)),
            (ms(160), Act::Idle(0, false)),
            (ms(270), Act::Idle(0, true)),
            (ms(400), read_4k()),
            (ms(550), read_4k()),
            (ms(650), Act::Idle(0, false)),
        ];
        let link = CpuLink {
            monitor_cpu: Some(0),
            cpu_latency_qos: false,
        };
        let cfg = || config(Some(params(TimerKind::Deferrable)), None);
        let seen = drive(cfg(), link, &script, ms(1000));
        let c = seen.stats.counters;
        assert_eq!(
            seen.stats.freq_timeline,
            vec![(0, MAX.freq_hz), ((ms(264) + STALL).0, MIN.freq_hz)]
        );
        assert_eq!((c.evaluations, c.deferred_polls), (3, 2));
        assert_eq!(c.deferred_wait_ns, ms(56 + 146).0);
        assert_eq!(c.deferred_wait_max_ns, ms(146).0);
        assert_eq!((c.scale_downs, c.suspensions), (1, 2));
        assert!(seen.votes.is_empty());
        // The same script without CPUs: the poll due at 104 ms waits for the read at 400 ms
        // (max: no change), the next, due at 504 ms, for the read at 550 ms (down, and
        // suspended, nothing being outstanding yet). That read, held during the scale, resumes
        // scaling at 551 ms (jiffy 137); the poll due at jiffy 163, 652 ms, waits for good
        // (348 ms to the end).
        let alone = drive(cfg(), CpuLink::default(), &script, ms(1000));
        assert_eq!(
            alone.stats.freq_timeline,
            vec![(0, MAX.freq_hz), ((ms(550) + STALL).0, MIN.freq_hz)]
        );
        let c = alone.stats.counters;
        assert_eq!(c.deferred_polls, 3);
        assert_eq!(c.deferred_wait_ns, ms(296 + 46 + 348).0);
        assert_eq!(c.deferred_wait_max_ns, ms(348).0);
    }

    #[test]
    fn a_deferrable_poll_on_an_awake_cpu_runs_on_time() {
        // CPU 0 never idles (CPU 1 does): the polls run at 104 and 208 ms, as a delayed
        // timer's would (an_idle_host_scales_down_at_its_second_poll_then_suspends).
        let link = CpuLink {
            monitor_cpu: Some(0),
            cpu_latency_qos: false,
        };
        let script = [(ms(0), Act::Idle(1, true))];
        let seen = drive(
            config(Some(params(TimerKind::Deferrable)), None),
            link,
            &script,
            ms(300),
        );
        assert_eq!(
            seen.stats.freq_timeline,
            vec![(0, MAX.freq_hz), ((ms(208) + STALL).0, MIN.freq_hz)]
        );
        let c = seen.stats.counters;
        assert_eq!(
            (c.evaluations, c.deferred_polls, c.deferred_wait_ns),
            (2, 0, 0)
        );
    }

    #[test]
    fn with_clock_scaling_ufshcd_holds_the_cpus_at_zero_latency_from_a_scale_ups_clocks() {
        // The loaded window of a_loaded_window_scales_up_after_draining_and_the_monitor_
        // rearms_after_the_stall, its reads ending at 400.2 ms (done 400.362 ms). The
        // scale-down at 208 ms votes nothing (the request starts released). The scale-up
        // decided at the poll of 404 ms (78 % busy: 81 % of 100.4 ms over 104 ms) has nothing
        // to drain; it switches the clocks (300 us): hold at 0; then the gear (700 us). The
        // poll queued after that stall (405 ms, jiffy 101) comes at jiffy 127, 508 ms, and sees
        // an idle window: down, which switches the gear, then the clocks, and releases as it
        // ends.
        let mut script: Vec<(Nanos, Act)> = (0..=501)
            .map(|i| (ms(300) + Nanos::from_us(200 * i), read_4k()))
            .collect();
        script.push((ms(0), Act::Idle(0, true)));
        let link = CpuLink {
            monitor_cpu: None,
            cpu_latency_qos: true,
        };
        let seen = drive(
            config(Some(params(TimerKind::Delayed)), None),
            link,
            &script,
            ms(700),
        );
        let up_decided = ms(404);
        let down_decided = ms(508);
        assert_eq!(
            seen.stats.freq_timeline,
            vec![
                (0, MAX.freq_hz),
                ((ms(208) + STALL).0, MIN.freq_hz),
                ((up_decided + STALL).0, MAX.freq_hz),
                ((down_decided + STALL).0, MIN.freq_hz),
            ]
        );
        assert_eq!(
            seen.votes,
            vec![
                (up_decided + Nanos::from_us(300), CpuLatencyVote::Hold(0)),
                (down_decided + STALL, CpuLatencyVote::Release),
            ]
        );
        let c = seen.stats.counters;
        assert_eq!((c.cpu_latency_holds, c.cpu_latency_releases), (1, 1));
        // Off (the default): the same run, no vote.
        let off = drive(
            config(Some(params(TimerKind::Delayed)), None),
            CpuLink::default(),
            &script,
            ms(700),
        );
        assert!(off.votes.is_empty());
        assert_eq!(off.stats.freq_timeline, seen.stats.freq_timeline);
    }

    #[test]
    fn without_clock_scaling_the_request_follows_clock_gating() {
        // Clock gating 50 ms (13 jiffies) after the host goes idle: the gate work fires at the
        // 14th jiffy after the one it was queued in. The read at 1 ms finds the clocks on
        // (never gated since time 0): no vote. They gate at jiffy 14, 56 ms: the request is
        // released already. The read at 100 ms ungates them: hold at 0. The read at 120 ms
        // finds them still on (19.4 ms idle: hibern8, not gated; the gate work queued at
        // 100.63 ms, jiffy 25, was due at jiffy 39). It completes at 120.63 ms (jiffy 30):
        // they gate at jiffy 44, 176 ms: release.
        let script = [
            (ms(1), read_4k()),
            (ms(100), read_4k()),
            (ms(120), read_4k()),
        ];
        let link = CpuLink {
            monitor_cpu: None,
            cpu_latency_qos: true,
        };
        let seen = drive(config(None, None), link, &script, ms(300));
        let last_done = ms(120) + Nanos::from_us(500) + READ_MAX;
        assert_eq!(seen.done[2], (ms(120), last_done));
        assert_eq!(
            seen.votes,
            vec![
                (ms(100), CpuLatencyVote::Hold(0)),
                (ms(176), CpuLatencyVote::Release),
            ]
        );
        // The votes change nothing on the device.
        let off = drive(config(None, None), CpuLink::default(), &script, ms(300));
        assert_eq!(off.done, seen.done);
        assert_eq!(off.stats.energy_mj, seen.stats.energy_mj);
        assert!(off.votes.is_empty());
    }

    #[test]
    fn a_poll_falling_due_during_a_notifiers_scale_runs_after_it() {
        // Down at 208 ms and suspended. An async write at 305 ms (jiffy 76, no boost) resumes
        // scaling: the next poll is due at jiffy 102, 408 ms. A 1 MiB sync write at 395 ms sets
        // the at-once boost's floor: its notifier scales up, draining that write first, past
        // 408 ms: by hand, the hibern8 exit (0.5 ms: idle since 305.4 ms), host 26.667 us at
        // 37.5 MHz, device 240 us + 1044480 B at 85.9615 MB/s = 12.391 ms, link 1 MiB at HS-G1
        // x 2 lanes (265.283 MB/s) = 3.953 ms: done at 411.87 ms, the scale up at 412.87 ms
        // (jiffy 103). The poll waits for devfreq's lock and runs when the scale ends, then
        // re-arms for jiffy 129 (516 ms), then 155 (620 ms), while the floor (1 s timeout)
        // holds the max level.
        let write = |bytes, sync| {
            Act::Io(IoRequest {
                op: IoOp::Write,
                offset: 0,
                bytes,
                sync,
            })
        };
        let script = [
            (ms(305), write(4096, false)),
            (ms(395), write(1 << 20, true)),
        ];
        let boost = BoostConfig {
            timeout_ms: 1000,
            notify: BoostNotify::AtOnce,
        };
        let seen = drive(
            config(Some(params(TimerKind::Delayed)), Some(boost)),
            CpuLink::default(),
            &script,
            ms(700),
        );
        let big_done = seen.done[1].1;
        assert_eq!(seen.done[1].0, ms(395));
        assert!(big_done > ms(408), "the poll falls due during the drain");
        let up = big_done + STALL;
        assert_eq!(seen.stats.freq_timeline[2], (up.0, MAX.freq_hz));
        // Evaluations: polls at 104 and 208 ms, the notifier at 395 ms, the poll that waited
        // (at `up`), then polls at 516 and 620 ms (the next, 724 ms, is past the end).
        assert!(ms(412) <= up && up < ms(416), "{up:?}");
        assert_eq!(seen.stats.counters.evaluations, 6);
    }
}
