//! UFS device presets: one TOML file per device class under `presets/ufs/`, embedded at build
//! time. A preset is a device (lanes, top HS gear, published performance), the host it sits
//! behind (the first clock's two scaling levels and `min_gear`), the device and host power per
//! state, the latencies of hibern8 exit and of a scale operation, and the host's idle timers.
//!
//! Every number is a figure: `{ value = ..., source = "..." }` when a source gives it, or
//! `{ low = ..., central = ..., high = ..., source = "..." }` when it is an estimate (the
//! source then says what it is built from). The model runs the central value; the ends are the
//! range to sweep. Power in W and latencies in µs as the sources print them; loading converts.
//!
//! ```toml
//! id = "samsung-eufs31-512gb"            # = the file name without `.toml`
//! name = "Samsung eUFS 3.1 512GB"
//! ufs_version = "3.1"
//! source = "..."
//! [link]          # lanes, max_gear: figures
//! [host]          # soc, then min_freq_hz, max_freq_hz, clk_rate_below_max_hz, min_gear:
//!                 # figures
//! [performance]   # seq_read_mb_s, seq_write_mb_s, rand_read_iops, rand_write_iops,
//!                 # iops_queue_depth, read_4k_qd1_us
//! [power]         # device_active_w, device_idle_w, device_hibern8_w, host_max_w, host_min_w
//! [latency]       # hibern8_exit_us, gear_switch_us, clock_switch_us
//! [idle]          # clk_gating_delay_ms, auto_hibern8_ms
//! [ftl]           # optional: map_cache_kib, map_page_entries, lpns_per_nand_page,
//!                 # controller_us, nand_channels, dies_per_channel, planes_per_die,
//!                 # nand_read_us, channel_mb_s
//! [hpb]           # optional: hpb_version, control = "device" | "host", region_size,
//!                 # subregion_size, device_max_active_regions, lu_max_active_regions,
//!                 # pinned_start, num_pinned, max_data_size_single_cmd (optional), num_blocks
//! ```
//!
//! `[ftl]` is the device side of a read (`storage::ufs::ftl`: the SRAM map cache, the NAND
//! array behind it); `[hpb]` the HPB descriptor values (`hpb::HpbDescriptors`):
//! `region_size` and `subregion_size` are the descriptor codes (bytes = 512 x 2^code), the
//! version a number (`0x0100` is HPB 1.0, `0x0200` HPB 2.0), `num_blocks` the HPB LU's capacity
//! in 4 KiB logical blocks (`qLogicalBlockCount`; a block count, not GiB, so the geometry's
//! partial last sub-region is exact). `control` is the one value that is not a figure: the
//! version's source says why. Both sections are checked when the preset loads (`Ftl::new`,
//! `Geometry::new`), with the model's complaint at the section's line. A preset without them
//! has an unknown FTL or no HPB: only `ufs21-64gb-class` carries them today, calibrated on the
//! HPB cover letter's device.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{self, InputError};
use crate::hpb::{ControlMode, Geometry, HpbDescriptors};
use crate::storage::io::IoOp;
use crate::storage::ufs::device::UfsConfig;
use crate::storage::ufs::ftl::{Ftl, FtlConfig, NandGeometry};
use crate::storage::ufs::power::{IdleTimers, UfsPower};
use crate::storage::ufs::service::{Calibration, HostLevel, ScaleCosts, UfsServiceModel};
use crate::time::Nanos;
use crate::ufshcd::scaling::ScalingParams;

/// The preset directory (under `presets/`) holding UFS devices.
const KIND: &str = "ufs";

/// A number with where it comes from: sourced (`low == central == high`) or an estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    pub low: f64,
    pub central: f64,
    pub high: f64,
    pub estimate: bool,
    pub source: String,
}

/// One device behind one host, ready for the models.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UfsPreset {
    pub id: String,
    pub name: String,
    pub ufs_version: String,
    pub source: String,
    pub soc: String,
    /// The first clock's highest table rate below its max level: a clock driver that rounds
    /// up reaches the max level only from a target above it.
    pub clk_rate_below_max_hz: u64,
    pub lanes: u8,
    pub max_gear: u8,
    /// The host's two levels: the first clock's `min_freq` with `min_gear`, `max_freq` with
    /// the device's top gear.
    pub min_level: HostLevel,
    pub max_level: HostLevel,
    pub performance: Performance,
    /// Power figures in mW.
    pub power_mw: PowerFigures,
    /// Latency figures in µs.
    pub latency_us: LatencyFigures,
    pub idle_ms: IdleFigures,
    /// Every figure as written, by its key (`host.min_freq_hz`, `power.device_active_w`, ...),
    /// in file order: what `torpor devices --json` shows.
    pub figures: Vec<(String, Figure)>,
    /// The calibrated service-time model.
    pub service: UfsServiceModel,
    /// `[ftl]`, when the device's map cache and NAND array are known.
    pub ftl: Option<FtlFigures>,
    /// `[hpb]`, when the device's HPB descriptors are known.
    pub hpb: Option<HpbFigures>,
}

/// `[ftl]`: the device side of a read (see `storage::ufs::ftl`'s "Calibration").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FtlFigures {
    pub map_cache_kib: Figure,
    pub map_page_entries: Figure,
    pub lpns_per_nand_page: Figure,
    pub controller_us: Figure,
    pub nand_channels: Figure,
    pub dies_per_channel: Figure,
    pub planes_per_die: Figure,
    pub nand_read_us: Figure,
    /// MB/s = 10^6 bytes per second.
    pub channel_mb_s: Figure,
}

/// Who decides which HPB regions are active (`bHPBControl`), as presets and scenarios write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HpbControl {
    /// 01h: the device recommends in its responses (DCM; the only mode of HPB 1.0).
    Device,
    /// 00h: the host activates from its read counters (HCM, HPB 2.0).
    Host,
}

impl HpbControl {
    pub fn mode(self) -> ControlMode {
        match self {
            HpbControl::Device => ControlMode::Device,
            HpbControl::Host => ControlMode::Host,
        }
    }

    /// The `bHPBControl` byte.
    pub fn byte(self) -> u8 {
        match self {
            HpbControl::Host => 0,
            HpbControl::Device => 1,
        }
    }
}

/// `[hpb]`: the descriptor values of the HPB LU (see `hpb::HpbDescriptors`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HpbFigures {
    pub hpb_version: Figure,
    pub control: HpbControl,
    /// `bHPBRegionSize`: bytes = 512 x 2^code.
    pub region_size: Figure,
    /// `bHPBSubRegionSize`: bytes = 512 x 2^code.
    pub subregion_size: Figure,
    pub device_max_active_regions: Figure,
    pub lu_max_active_regions: Figure,
    pub pinned_start: Figure,
    pub num_pinned: Figure,
    /// `bMAX_DATA_SIZE_FOR_HPB_SINGLE_CMD`; absent as when the query fails (HPB 1.0 never
    /// reads it).
    pub max_data_size_single_cmd: Option<Figure>,
    /// The HPB LU's capacity in 4 KiB logical blocks.
    pub num_blocks: Figure,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Performance {
    pub seq_read_mb_s: Figure,
    pub seq_write_mb_s: Figure,
    pub rand_read_iops: Figure,
    pub rand_write_iops: Figure,
    pub iops_queue_depth: u32,
    pub read_4k_qd1_us: Figure,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerFigures {
    pub device_active: Figure,
    pub device_idle: Figure,
    pub device_hibern8: Figure,
    pub host_max: Figure,
    pub host_min: Figure,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyFigures {
    pub hibern8_exit: Figure,
    pub gear_switch: Figure,
    pub clock_switch: Figure,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleFigures {
    pub clk_gating_delay: Figure,
    pub auto_hibern8: Figure,
}

impl UfsPreset {
    /// The power model at the central values.
    pub fn power(&self) -> UfsPower {
        let p = &self.power_mw;
        UfsPower {
            device_active_mw: p.device_active.central,
            device_idle_mw: p.device_idle.central,
            device_hibern8_mw: p.device_hibern8.central,
            host_min_mw: p.host_min.central,
            host_max_mw: p.host_max.central,
            hibern8_exit: us(self.latency_us.hibern8_exit.central),
        }
    }

    /// The scale-operation costs at the central values.
    pub fn scale_costs(&self) -> ScaleCosts {
        ScaleCosts {
            gear_switch: us(self.latency_us.gear_switch.central),
            clock_switch: us(self.latency_us.clock_switch.central),
        }
    }

    /// A device of this preset at the central values: clock scaling by `scaling` (`None`:
    /// off), the min level's gear overridden by `min_gear`, no boost and no user frequency
    /// requests (the caller sets those fields).
    pub fn device_config(&self, scaling: Option<ScalingParams>, min_gear: Option<u8>) -> UfsConfig {
        let mut min = self.min_level;
        if let Some(gear) = min_gear {
            min.gear = gear.min(self.max_level.gear);
        }
        UfsConfig {
            service: self.service,
            min,
            max: self.max_level,
            power: self.power(),
            idle: self.idle_timers(),
            costs: self.scale_costs(),
            scaling: scaling.map(|p| ScalingParams {
                round_up_above_hz: self.clk_rate_below_max_hz,
                ..p
            }),
            boost: None,
            hz: scaling.map_or(250, |p| p.hz),
            user_min_freq_hz: None,
            user_max_freq_hz: None,
            ftl: None,
        }
    }

    /// The device's FTL at the central values; `None` when the preset has no `[ftl]`.
    pub fn ftl_config(&self) -> Option<FtlConfig> {
        self.ftl.as_ref().map(FtlFigures::config)
    }

    /// The HPB descriptors at the central values; `None` when the preset has no `[hpb]`.
    pub fn hpb_descriptors(&self) -> Option<HpbDescriptors> {
        self.hpb.as_ref().map(HpbFigures::descriptors)
    }

    /// A 4 KiB read alone on the device at `level`: the calibrated slots' time, or with an FTL
    /// its host stage, controller, one NAND read and the link, the map entry cached.
    pub fn qd1_read_4k(&self, level: HostLevel) -> Nanos {
        let Some(config) = self.ftl_config() else {
            return self.service.qd1_latency(IoOp::Read, 4096, level);
        };
        let mut ftl = Ftl::new(config).expect("checked when the preset was read");
        let device = ftl.read(Nanos::ZERO, 0, 1, true).done;
        self.service.host_time(level.freq_hz) + device + self.service.link_time(4096, level.gear)
    }

    /// The host's idle timers at the central values (an auto-hibern8 of 0 is disabled).
    pub fn idle_timers(&self) -> IdleTimers {
        let ms = |f: &Figure| Nanos((f.central * 1e6).round() as u64);
        let ah8 = ms(&self.idle_ms.auto_hibern8);
        IdleTimers {
            clk_gating_delay: ms(&self.idle_ms.clk_gating_delay),
            auto_hibern8: (ah8 > Nanos::ZERO).then_some(ah8),
        }
    }
}

fn us(v: f64) -> Nanos {
    Nanos((v * 1e3).round() as u64)
}

impl FtlFigures {
    /// At the central values (whole numbers and ranges checked when the preset loaded).
    fn config(&self) -> FtlConfig {
        let n = |f: &Figure| f.central as u64;
        FtlConfig {
            map_cache_bytes: n(&self.map_cache_kib) * 1024,
            map_page_entries: n(&self.map_page_entries),
            lpns_per_nand_page: n(&self.lpns_per_nand_page),
            controller_ns: us(self.controller_us.central).0,
            nand: NandGeometry {
                channels: n(&self.nand_channels) as u32,
                dies_per_channel: n(&self.dies_per_channel) as u32,
                planes_per_die: n(&self.planes_per_die) as u32,
                read_ns: us(self.nand_read_us.central).0,
                channel_bytes_per_s: (self.channel_mb_s.central * 1e6).round() as u64,
            },
        }
    }
}

impl HpbFigures {
    /// At the central values (whole numbers within each field's width, checked at load).
    fn descriptors(&self) -> HpbDescriptors {
        let n = |f: &Figure| f.central as u64;
        HpbDescriptors {
            hpb_version: n(&self.hpb_version) as u16,
            hpb_control: self.control.byte(),
            region_size: n(&self.region_size) as u8,
            subregion_size: n(&self.subregion_size) as u8,
            device_max_active_regions: n(&self.device_max_active_regions) as u16,
            lu_max_active_regions: n(&self.lu_max_active_regions) as u16,
            pinned_start: n(&self.pinned_start) as u16,
            num_pinned: n(&self.num_pinned) as u16,
            max_data_size_single_cmd: self.max_data_size_single_cmd.as_ref().map(|f| n(f) as u8),
            num_blocks: n(&self.num_blocks),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    id: String,
    name: String,
    ufs_version: String,
    source: String,
    link: LinkFile,
    host: HostFile,
    performance: PerformanceFile,
    power: PowerFile,
    latency: LatencyFile,
    idle: IdleFile,
    ftl: Option<FtlFile>,
    hpb: Option<HpbFile>,
}

type F = Spanned<FigureFile>;

/// `{ value, source }` or `{ low, central, high, source }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FigureFile {
    value: Option<f64>,
    low: Option<f64>,
    central: Option<f64>,
    high: Option<f64>,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFile {
    lanes: F,
    max_gear: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostFile {
    soc: String,
    min_freq_hz: F,
    max_freq_hz: F,
    clk_rate_below_max_hz: F,
    min_gear: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PerformanceFile {
    seq_read_mb_s: F,
    seq_write_mb_s: F,
    rand_read_iops: F,
    rand_write_iops: F,
    iops_queue_depth: F,
    read_4k_qd1_us: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PowerFile {
    device_active_w: F,
    device_idle_w: F,
    device_hibern8_w: F,
    host_max_w: F,
    host_min_w: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LatencyFile {
    hibern8_exit_us: F,
    gear_switch_us: F,
    clock_switch_us: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdleFile {
    clk_gating_delay_ms: F,
    auto_hibern8_ms: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FtlFile {
    map_cache_kib: F,
    map_page_entries: F,
    lpns_per_nand_page: F,
    controller_us: F,
    nand_channels: F,
    dies_per_channel: F,
    planes_per_die: F,
    nand_read_us: F,
    channel_mb_s: F,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HpbFile {
    hpb_version: F,
    control: HpbControl,
    region_size: F,
    subregion_size: F,
    device_max_active_regions: F,
    lu_max_active_regions: F,
    pinned_start: F,
    num_pinned: F,
    max_data_size_single_cmd: Option<F>,
    num_blocks: F,
}

/// The most a delay of the `[ftl]` section may be, µs (one second: far beyond any NAND or
/// controller, and it keeps every sum of delays far from the clock's end).
const MAX_FTL_DELAY_US: f64 = 1e6;

/// Reads the figures in file order, checking each.
struct Reader<'a> {
    at: &'a dyn Fn(Range<usize>, String) -> InputError,
    figures: Vec<(String, Figure)>,
}

impl Reader<'_> {
    /// A figure, scaled by `scale` (W → mW: 1000).
    fn figure(&mut self, key: &str, f: &F, scale: f64) -> Result<Figure, InputError> {
        let raw = f.get_ref();
        let err = |msg: String| (self.at)(f.span(), format!("`{key}`: {msg}"));
        if raw.source.trim().is_empty() {
            return Err(err(
                "expected a `source` saying where the number comes from".into(),
            ));
        }
        let (low, central, high, estimate) = match (raw.value, raw.low, raw.central, raw.high) {
            (Some(v), None, None, None) => (v, v, v, false),
            (None, Some(l), Some(c), Some(h)) => (l, c, h, true),
            _ => {
                return Err(err(
                    "expected either `value` (a sourced number) or all of `low`, `central`, \
                     `high` (an estimate), with `source`"
                        .into(),
                ))
            }
        };
        if ![low, central, high]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0)
        {
            return Err(err(format!(
                "expected finite numbers >= 0, got {low} / {central} / {high}"
            )));
        }
        if !(low <= central && central <= high) {
            return Err(err(format!(
                "expected low <= central <= high, got {low} / {central} / {high}"
            )));
        }
        // Rounded so a printed 0.03 W is exactly 30 mW.
        let s = |v: f64| (v * scale * 1e6).round() / 1e6;
        let fig = Figure {
            low: s(low),
            central: s(central),
            high: s(high),
            estimate,
            source: raw.source.trim().to_string(),
        };
        self.figures.push((key.to_string(), fig.clone()));
        Ok(fig)
    }

    /// A whole number (the central value) within `range`.
    fn whole(&mut self, key: &str, f: &F, range: Range<u64>) -> Result<u64, InputError> {
        Ok(self.whole_figure(key, f, range)?.central as u64)
    }

    /// A figure whose central value is a whole number within `range`.
    fn whole_figure(&mut self, key: &str, f: &F, range: Range<u64>) -> Result<Figure, InputError> {
        let fig = self.figure(key, f, 1.0)?;
        let v = fig.central;
        if v.fract() != 0.0 || !range.contains(&(v as u64)) {
            return Err((self.at)(
                f.span(),
                format!(
                    "`{key}`: expected a whole number in {}..={}, got {v}",
                    range.start,
                    range.end - 1
                ),
            ));
        }
        Ok(fig)
    }

    /// A figure whose central value lies in `[min, max]`, in the unit the key names.
    fn within(&mut self, key: &str, f: &F, min: f64, max: f64) -> Result<Figure, InputError> {
        let fig = self.figure(key, f, 1.0)?;
        if !(min..=max).contains(&fig.central) {
            return Err((self.at)(
                f.span(),
                format!("`{key}`: expected {min}..={max}, got {}", fig.central),
            ));
        }
        Ok(fig)
    }

    /// `[ftl]`, its figures checked one by one.
    fn ftl(&mut self, t: &FtlFile) -> Result<FtlFigures, InputError> {
        let whole = |r: &mut Self, key: &str, f: &F, range: Range<u64>| {
            r.whole_figure(&format!("ftl.{key}"), f, range)
        };
        Ok(FtlFigures {
            map_cache_kib: whole(self, "map_cache_kib", &t.map_cache_kib, 1..(1 << 20) + 1)?,
            map_page_entries: whole(
                self,
                "map_page_entries",
                &t.map_page_entries,
                1..(1 << 20) + 1,
            )?,
            lpns_per_nand_page: whole(self, "lpns_per_nand_page", &t.lpns_per_nand_page, 1..65)?,
            controller_us: self.within(
                "ftl.controller_us",
                &t.controller_us,
                0.0,
                MAX_FTL_DELAY_US,
            )?,
            nand_channels: whole(self, "nand_channels", &t.nand_channels, 1..65)?,
            dies_per_channel: whole(self, "dies_per_channel", &t.dies_per_channel, 1..65)?,
            planes_per_die: whole(self, "planes_per_die", &t.planes_per_die, 1..17)?,
            nand_read_us: self.within(
                "ftl.nand_read_us",
                &t.nand_read_us,
                0.0,
                MAX_FTL_DELAY_US,
            )?,
            channel_mb_s: self.within("ftl.channel_mb_s", &t.channel_mb_s, 1.0, 1e6)?,
        })
    }

    /// `[hpb]`, each number checked against its descriptor field's width.
    fn hpb(&mut self, t: &HpbFile) -> Result<HpbFigures, InputError> {
        let whole = |r: &mut Self, key: &str, f: &F, range: Range<u64>| {
            r.whole_figure(&format!("hpb.{key}"), f, range)
        };
        const U8: Range<u64> = 0..(u8::MAX as u64 + 1);
        const U16: Range<u64> = 0..(u16::MAX as u64 + 1);
        let max_single = match &t.max_data_size_single_cmd {
            Some(f) => Some(whole(self, "max_data_size_single_cmd", f, U8)?),
            None => None,
        };
        Ok(HpbFigures {
            hpb_version: whole(self, "hpb_version", &t.hpb_version, U16)?,
            control: t.control,
            region_size: whole(self, "region_size", &t.region_size, U8)?,
            subregion_size: whole(self, "subregion_size", &t.subregion_size, U8)?,
            device_max_active_regions: whole(
                self,
                "device_max_active_regions",
                &t.device_max_active_regions,
                U16,
            )?,
            lu_max_active_regions: whole(
                self,
                "lu_max_active_regions",
                &t.lu_max_active_regions,
                U16,
            )?,
            pinned_start: whole(self, "pinned_start", &t.pinned_start, U16)?,
            num_pinned: whole(self, "num_pinned", &t.num_pinned, U16)?,
            max_data_size_single_cmd: max_single,
            // 2^48 blocks (1 EiB): far beyond any LU; the geometry bounds the regions anyway.
            num_blocks: whole(self, "num_blocks", &t.num_blocks, 0..(1 << 48) + 1)?,
        })
    }
}

/// Parses and checks one preset; `file` names it in errors.
pub fn parse_preset(file: &str, text: &str) -> Result<UfsPreset, InputError> {
    let raw: PresetFile = toml::from_str(text).map_err(|e| error::from_toml(file, text, &e))?;
    let at = |span: Range<usize>, msg: String| {
        InputError::at(file, InputError::line_of_offset(text, span.start), msg)
    };
    let mut r = Reader {
        at: &at,
        figures: Vec::new(),
    };
    let lanes = r.whole("link.lanes", &raw.link.lanes, 1..3)? as u8;
    let max_gear = r.whole("link.max_gear", &raw.link.max_gear, 1..6)? as u8;
    let min_freq_hz = r.whole("host.min_freq_hz", &raw.host.min_freq_hz, 1..u64::MAX)?;
    let max_freq_hz = r.whole("host.max_freq_hz", &raw.host.max_freq_hz, 1..u64::MAX)?;
    let min_gear = r.whole("host.min_gear", &raw.host.min_gear, 1..6)? as u8;
    if min_freq_hz > max_freq_hz {
        return Err(at(
            raw.host.min_freq_hz.span(),
            format!("`host.min_freq_hz` {min_freq_hz} is above `host.max_freq_hz` {max_freq_hz}"),
        ));
    }
    let below_max = &raw.host.clk_rate_below_max_hz;
    let clk_rate_below_max_hz = r.whole("host.clk_rate_below_max_hz", below_max, 1..u64::MAX)?;
    if !(min_freq_hz..max_freq_hz.max(min_freq_hz + 1)).contains(&clk_rate_below_max_hz) {
        return Err(at(
            below_max.span(),
            format!(
                "`host.clk_rate_below_max_hz`: expected the clock table's highest rate below \
                 `host.max_freq_hz`, from {min_freq_hz} to below {max_freq_hz}, got \
                 {clk_rate_below_max_hz}"
            ),
        ));
    }
    if min_gear > max_gear {
        return Err(at(
            raw.host.min_gear.span(),
            format!("`host.min_gear` {min_gear} is above `link.max_gear` {max_gear}"),
        ));
    }
    let p = &raw.performance;
    let performance = Performance {
        seq_read_mb_s: r.figure("performance.seq_read_mb_s", &p.seq_read_mb_s, 1.0)?,
        seq_write_mb_s: r.figure("performance.seq_write_mb_s", &p.seq_write_mb_s, 1.0)?,
        rand_read_iops: r.figure("performance.rand_read_iops", &p.rand_read_iops, 1.0)?,
        rand_write_iops: r.figure("performance.rand_write_iops", &p.rand_write_iops, 1.0)?,
        iops_queue_depth: r.whole("performance.iops_queue_depth", &p.iops_queue_depth, 1..33)?
            as u32,
        read_4k_qd1_us: r.figure("performance.read_4k_qd1_us", &p.read_4k_qd1_us, 1.0)?,
    };
    for (key, f) in [
        ("performance.seq_read_mb_s", &p.seq_read_mb_s),
        ("performance.seq_write_mb_s", &p.seq_write_mb_s),
        ("performance.rand_read_iops", &p.rand_read_iops),
        ("performance.rand_write_iops", &p.rand_write_iops),
        ("performance.read_4k_qd1_us", &p.read_4k_qd1_us),
    ] {
        let low = f.get_ref().value.or(f.get_ref().low).unwrap_or(0.0);
        if low <= 0.0 {
            return Err(at(f.span(), format!("`{key}`: expected a figure > 0")));
        }
    }
    let w = &raw.power;
    let power_mw = PowerFigures {
        device_active: r.figure("power.device_active_w", &w.device_active_w, 1e3)?,
        device_idle: r.figure("power.device_idle_w", &w.device_idle_w, 1e3)?,
        device_hibern8: r.figure("power.device_hibern8_w", &w.device_hibern8_w, 1e3)?,
        host_max: r.figure("power.host_max_w", &w.host_max_w, 1e3)?,
        host_min: r.figure("power.host_min_w", &w.host_min_w, 1e3)?,
    };
    let l = &raw.latency;
    let latency_us = LatencyFigures {
        hibern8_exit: r.figure("latency.hibern8_exit_us", &l.hibern8_exit_us, 1.0)?,
        gear_switch: r.figure("latency.gear_switch_us", &l.gear_switch_us, 1.0)?,
        clock_switch: r.figure("latency.clock_switch_us", &l.clock_switch_us, 1.0)?,
    };
    let i = &raw.idle;
    let idle_ms = IdleFigures {
        clk_gating_delay: r.figure("idle.clk_gating_delay_ms", &i.clk_gating_delay_ms, 1.0)?,
        auto_hibern8: r.figure("idle.auto_hibern8_ms", &i.auto_hibern8_ms, 1.0)?,
    };
    let max_level = HostLevel {
        freq_hz: max_freq_hz,
        gear: max_gear,
    };
    let c = Calibration {
        seq_read_mb_s: performance.seq_read_mb_s.central,
        seq_write_mb_s: performance.seq_write_mb_s.central,
        rand_read_iops: performance.rand_read_iops.central,
        rand_write_iops: performance.rand_write_iops.central,
        iops_queue_depth: performance.iops_queue_depth,
        read_4k_qd1_us: (
            performance.read_4k_qd1_us.central,
            performance.read_4k_qd1_us.low,
            performance.read_4k_qd1_us.high,
        ),
        lanes,
        max: max_level,
    };
    let service = UfsServiceModel::calibrate(&c).map_err(|e| {
        InputError::at(
            file,
            error::line_of_toml_key(text, "[performance]").unwrap_or(1),
            format!("[performance] cannot be reproduced: {e}"),
        )
    })?;
    // The models' own checks, at the section's line.
    let section_error = |section: &str, msg: String| {
        InputError::at(
            file,
            error::line_of_toml_key(text, &format!("[{section}]")).unwrap_or(1),
            format!("[{section}] cannot be used: {msg}"),
        )
    };
    let ftl = match &raw.ftl {
        Some(t) => {
            let figures = r.ftl(t)?;
            Ftl::new(figures.config()).map_err(|e| section_error("ftl", e.to_string()))?;
            Some(figures)
        }
        None => None,
    };
    let hpb = match &raw.hpb {
        Some(t) => {
            let figures = r.hpb(t)?;
            Geometry::new(&figures.descriptors())
                .map_err(|e| section_error("hpb", format!("expected {e}")))?;
            Some(figures)
        }
        None => None,
    };
    Ok(UfsPreset {
        id: raw.id,
        name: raw.name,
        ufs_version: raw.ufs_version,
        source: raw.source,
        soc: raw.host.soc,
        clk_rate_below_max_hz,
        lanes,
        max_gear,
        min_level: HostLevel {
            freq_hz: min_freq_hz,
            gear: min_gear,
        },
        max_level,
        performance,
        power_mw,
        latency_us,
        idle_ms,
        figures: r.figures,
        service,
        ftl,
        hpb,
    })
}

/// Every built-in UFS preset, sorted by id; a preset that fails to load yields its error.
pub fn builtin() -> impl Iterator<Item = Result<UfsPreset, InputError>> {
    super::embedded_of(KIND).map(|(id, text)| load_embedded(id, text))
}

/// The built-in preset `id`, if there is one.
pub fn find(id: &str) -> Option<Result<UfsPreset, InputError>> {
    super::embedded_of(KIND)
        .find(|(pid, _)| *pid == id)
        .map(|(id, text)| load_embedded(id, text))
}

/// What to add after "no built-in UFS preset has this id": the closest ids, if any is close,
/// then where the list is.
pub fn suggestion(id: &str) -> String {
    super::suggest_preset(KIND, id)
}

fn load_embedded(id: &str, text: &str) -> Result<UfsPreset, InputError> {
    let file = format!("presets/{KIND}/{id}.toml");
    let preset = parse_preset(&file, text)?;
    if preset.id != id {
        let msg = format!(
            "`id` is \"{}\"; expected the file name, \"{id}\"",
            preset.id
        );
        return Err(InputError::at(
            &file,
            error::line_of_toml_key(text, "id").unwrap_or(1),
            msg,
        ));
    }
    Ok(preset)
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use super::*;
    use crate::storage::io::{IoOp, IoRequest};
    use crate::storage::ufs::service::UfsQueue;

    const IDS: [&str; 3] = [
        "samsung-eufs31-512gb",
        "samsung-ufs40-class",
        "ufs21-64gb-class",
    ];

    fn preset(id: &str) -> UfsPreset {
        find(id).expect("a built-in preset").expect("it loads")
    }

    /// The preset's own text, read without the loader: `section.key`'s `value` or `central`.
    fn written(id: &str, section: &str, key: &str) -> f64 {
        let text = super::super::embedded::PRESETS
            .iter()
            .find(|(k, p, _)| *k == KIND && *p == id)
            .unwrap()
            .2;
        let doc: toml::Table = text.parse().unwrap();
        let f = &doc[section][key];
        f.get("value")
            .or_else(|| f.get("central"))
            .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
            .unwrap()
    }

    /// Closed loop: `qd` requests outstanding, `n` in all, each resubmitted when the earliest
    /// completes. Returns (requests per second, mean latency in ns).
    fn run(p: &UfsPreset, op: IoOp, bytes: u32, qd: usize, n: usize, max: bool) -> (f64, f64) {
        let level = if max { p.max_level } else { p.min_level };
        let mut q = UfsQueue::new(p.service);
        let req = IoRequest {
            op,
            offset: 0,
            bytes,
            sync: true,
        };
        let mut out: BinaryHeap<Reverse<(Nanos, Nanos)>> = BinaryHeap::new();
        let (mut sent, mut latency, mut last) = (0, 0u64, Nanos::ZERO);
        while sent < n || !out.is_empty() {
            let now = match out.len() {
                l if l < qd && sent < n => out.peek().map_or(Nanos::ZERO, |_| last),
                _ => {
                    let Reverse((done, at)) = out.pop().unwrap();
                    latency += (done - at).0;
                    last = done;
                    if sent >= n {
                        continue;
                    }
                    done
                }
            };
            out.push(Reverse((q.accept(now, &req, level), now)));
            sent += 1;
        }
        (n as f64 / last.as_secs_f64(), latency as f64 / n as f64)
    }

    #[test]
    fn every_preset_loads_and_opens_with_its_sources() {
        let ids: Vec<String> = builtin().map(|p| p.unwrap().id).collect();
        assert_eq!(ids, IDS);
        for (_, _, text) in super::super::embedded::PRESETS
            .iter()
            .filter(|(k, _, _)| *k == KIND)
        {
            assert!(text.starts_with("# ") && text.contains("# Source: "));
        }
    }

    #[test]
    fn at_the_max_level_the_model_reproduces_each_presets_figures() {
        // Tolerance 1%: the steady state is exact up to ns rounding; the rest is the loop's
        // start and end (20000 requests). Sequential at QD32 and 512 KiB, the calibration's size.
        for id in IDS {
            let p = preset(id);
            let qd = written(id, "performance", "iops_queue_depth") as usize;
            let close = |got: f64, want: f64, what: &str| {
                assert!(
                    (got / want - 1.0).abs() < 0.01,
                    "{id} {what}: {got} vs {want}"
                );
            };
            let (iops, _) = run(&p, IoOp::Read, 4096, qd, 20_000, true);
            close(
                iops,
                written(id, "performance", "rand_read_iops"),
                "rand read",
            );
            let (iops, _) = run(&p, IoOp::Write, 4096, qd, 20_000, true);
            close(
                iops,
                written(id, "performance", "rand_write_iops"),
                "rand write",
            );
            for (op, key) in [
                (IoOp::Read, "seq_read_mb_s"),
                (IoOp::Write, "seq_write_mb_s"),
            ] {
                let (rate, _) = run(&p, op, 524_288, 32, 4_000, true);
                close(rate * 524_288.0 / 1e6, written(id, "performance", key), key);
            }
            // QD1: within the estimate's range, and within 10% of its central value (N whole).
            let (_, lat) = run(&p, IoOp::Read, 4096, 1, 1_000, true);
            let text = super::super::embedded::PRESETS
                .iter()
                .find(|(k, i, _)| *k == KIND && *i == id)
                .unwrap()
                .2;
            let doc: toml::Table = text.parse().unwrap();
            let f = &doc["performance"]["read_4k_qd1_us"];
            let num = |k: &str| {
                f[k].as_float()
                    .or(f[k].as_integer().map(|i| i as f64))
                    .unwrap()
            };
            let us = lat / 1e3;
            assert!(num("low") <= us && us <= num("high"), "{id} QD1 {us}");
            assert!((us / num("central") - 1.0).abs() < 0.1, "{id} QD1 {us}");
        }
    }

    #[test]
    fn the_min_level_slowdown_is_the_hand_ratio() {
        // ufs21-64gb-class by hand. Max: 200 MHz, HS-G3 x2; min: 50 MHz, HS-G1 x2.
        // B(G3) = 2 x 583.04e6 x 0.91 = 1061.1328 MB/s; B(G1) = 265.2832 MB/s.
        // t_h = 1000 cycles: 5 us at 200 MHz, 20 us at 50 MHz.
        // N = round(73455 x (150 - 5 - 4096 / 1061.1328) us) = round(73455 x 141.140e-6)
        //   = round(10.37) = 10; t_4k(read) = 10 / 73455 = 136.138 us.
        // QD1 4 KiB read: max 5 + 136.138 + 3.860 = 144.998 us; min 20 + 136.138 + 15.440
        // = 171.578 us; ratio 1.18331.
        let p = preset("ufs21-64gb-class");
        assert_eq!(p.service.slots, 10);
        let (_, max) = run(&p, IoOp::Read, 4096, 1, 100, true);
        let (_, min) = run(&p, IoOp::Read, 4096, 1, 100, false);
        assert!((max - 144_998.0).abs() <= 2.0, "{max}");
        assert!((min - 171_578.0).abs() <= 2.0, "{min}");
        assert!((min / max - 1.18331).abs() < 1e-4);
        // Sequential 512 KiB reads at QD32: the max level gives the preset's 850 MB/s; the min
        // level is link-bound at 265.2832 MB/s (slots 850, host 524288 B / 20 us = 26214 MB/s),
        // a slowdown of 850 / 265.2832 = 3.2041.
        let (hi, _) = run(&p, IoOp::Read, 524_288, 32, 4_000, true);
        let (lo, _) = run(&p, IoOp::Read, 524_288, 32, 4_000, false);
        let (hi, lo) = (hi * 524_288.0 / 1e6, lo * 524_288.0 / 1e6);
        assert!((lo - 265.2832).abs() / 265.2832 < 0.005, "{lo}");
        assert!((hi / lo - 3.2041).abs() < 0.02, "{}", hi / lo);
        // 4 KiB random reads at QD16: min level host-bound, 1 / 20 us = 50000/s (link
        // 265.2832e6 / 4096 = 64766/s, slots 73455/s).
        let (iops, _) = run(&p, IoOp::Read, 4096, 16, 20_000, false);
        assert!((iops / 50_000.0 - 1.0).abs() < 0.005, "{iops}");
    }

    #[test]
    fn estimated_power_and_latency_follow_the_rules() {
        // Device active by hand: UFS 4.0 4200 / 6.0 = 700 mA; UFS 3.1 2100 x 1.46 / 6.0 = 511 mA
        // over (1.2, 1.85, 2.5) V; UFS 2.1 850 x 1.46 / 6.0 = 206.833 mA over (1.8, 2.55, 3.3) V.
        let want = [
            ("samsung-ufs40-class", [840.0, 1295.0, 1750.0]),
            ("samsung-eufs31-512gb", [613.2, 945.35, 1277.5]),
            ("ufs21-64gb-class", [372.3, 527.425, 682.55]),
        ];
        for (id, mw) in want {
            let p = preset(id);
            let a = &p.power_mw.device_active;
            for (got, w) in [a.low, a.central, a.high].into_iter().zip(mw) {
                assert!((got - w).abs() < 1e-3, "{id}: {got} vs {w}");
            }
            let (hmax, hmin) = (&p.power_mw.host_max, &p.power_mw.host_min);
            for (lo, hi, f) in [
                (hmin.low, hmax.low, 0.1),
                (hmin.central, hmax.central, 0.25),
                (hmin.high, hmax.high, 0.5),
            ] {
                assert!((lo - hi * f).abs() < 1e-9, "{id} host min");
            }
            let (h8, clk) = (&p.latency_us.hibern8_exit, &p.latency_us.clock_switch);
            assert_eq!(
                [clk.low, clk.central, clk.high],
                [2.0 * h8.low, 2.0 * h8.central, 2.0 * h8.high]
            );
            // Every estimate says so, every figure has a source.
            for (key, f) in &p.figures {
                assert!(!f.source.is_empty(), "{id} {key}");
                if f.estimate {
                    assert!(
                        f.source.starts_with("ESTIMATE") || f.source.starts_with("DERIVED"),
                        "{id} {key}"
                    );
                }
            }
            assert_eq!(
                p.idle_timers(),
                crate::storage::ufs::power::IdleTimers::LINUX_DEFAULT
            );
        }
    }

    #[test]
    fn sourced_figures_are_the_device_datas() {
        let num = |v: &serde_json::Value| v.as_f64().expect("a number in the device data");
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/devices");
        let Ok(perf) = std::fs::read_to_string(dir.join("facts-ufs-performance.json")) else {
            eprintln!("skipped: {} is absent", dir.display());
            return;
        };
        let clocks =
            std::fs::read_to_string(dir.join("facts-ufs-qcom-clock-scaling.json")).unwrap();
        let perf: serde_json::Value = serde_json::from_str(&perf).unwrap();
        let clocks: serde_json::Value = serde_json::from_str(&clocks).unwrap();
        let row = perf["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["device"] == "Samsung eUFS 3.1 512GB")
            .unwrap();
        let p = preset("samsung-eufs31-512gb");
        let perf_of = |p: &UfsPreset| {
            [
                p.performance.seq_read_mb_s.central,
                p.performance.seq_write_mb_s.central,
            ]
        };
        assert_eq!(
            perf_of(&p),
            [num(&row["seq_read_mbs"]), num(&row["seq_write_mbs"])]
        );
        assert_eq!(
            p.performance.rand_read_iops.central,
            num(&row["rand_read_iops"])
        );
        assert_eq!(
            p.performance.rand_write_iops.central,
            num(&row["rand_write_iops"])
        );
        let u4 = &perf["ufs_4_0"];
        assert_eq!(
            perf_of(&preset("samsung-ufs40-class")),
            [num(&u4["seq_read_mbs"]), num(&u4["seq_write_mbs"])]
        );
        let table = &clocks["freq_table_hz_min_max"];
        for (id, soc) in [
            ("samsung-eufs31-512gb", "sm8250"),
            ("samsung-ufs40-class", "sm8450"),
            ("ufs21-64gb-class", "sdm845"),
        ] {
            let p = preset(id);
            let core = &table[soc]["core_clk"];
            assert_eq!(
                p.min_level.freq_hz as f64,
                core[0].as_f64().unwrap(),
                "{id}"
            );
            assert_eq!(
                p.max_level.freq_hz as f64,
                core[1].as_f64().unwrap(),
                "{id}"
            );
        }
        // The HPB cover letter's 1 GB, HPB-off iozone figure over 4 KiB.
        let hpb: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("facts-ufs-hpb.json")).unwrap())
                .unwrap();
        let m = &hpb["measurements"]
            ["iozone_4k_randread_16threads_hpb_on_off (units as posted, likely MB/s)"]["1GB"];
        let off = m[1].as_f64().unwrap();
        let iops = preset("ufs21-64gb-class").performance.rand_read_iops;
        assert_eq!(iops.central, (off * 1e6 / 4096.0).round());
        assert_eq!(iops.low, (m[0].as_f64().unwrap() * 1e6 / 4096.0).round());
        assert_eq!(iops.high, (off * 1_048_576.0 / 4096.0).round());
    }

    #[test]
    fn bad_presets_are_reported_at_their_line() {
        let good = super::super::embedded::PRESETS
            .iter()
            .find(|(k, p, _)| *k == KIND && *p == "samsung-eufs31-512gb")
            .unwrap()
            .2;
        let line_of = |needle: &str| good.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
        let err = |text: String| parse_preset("u.toml", &text).unwrap_err().to_string();
        // An estimate missing its high end.
        let t = good.replace(
            "low = 100, central = 125, high = 150,",
            "low = 100, central = 125,",
        );
        let l = line_of("read_4k_qd1_us");
        assert_eq!(
            err(t),
            format!(
                "u.toml:{l}: `performance.read_4k_qd1_us`: expected either `value` (a sourced \
                 number) or all of `low`, `central`, `high` (an estimate), with `source`"
            )
        );
        // A range out of order.
        let t = good.replace("low = 0.02, central = 0.05", "low = 0.06, central = 0.05");
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: `power.host_max_w`: expected low <= central <= high, got 0.06 / 0.05 / 0.12",
                line_of("host_max_w")
            )
        );
        // No source.
        let t = good.replace(
            "clk_gating_delay_ms = { value = 150, source = \"ufshcd.c clk_gating.delay_ms = 150 (spec-storage section 2.5)\" }",
            "clk_gating_delay_ms = { value = 150, source = \" \" }",
        );
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: `idle.clk_gating_delay_ms`: expected a `source`",
            line_of("clk_gating_delay_ms")
        )));
        // A gear HS-G6 does not exist here.
        let t = good.replace("max_gear = { value = 4,", "max_gear = { value = 6,");
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: `link.max_gear`: expected a whole number in 1..=5, got 6",
                line_of("max_gear")
            )
        );
        // A figure the link cannot carry: at the [performance] header.
        let t = good.replace(
            "seq_read_mb_s = { value = 2100,",
            "seq_read_mb_s = { value = 2500,",
        );
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: [performance] cannot be reproduced: sequential read 2500 MB/s is above",
            line_of("[performance]")
        )));
        // An unknown key, by the TOML reader.
        let t = good.replace("[idle]\n", "[idle]\nwake = 1\n");
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: unknown field `wake`",
            line_of("[idle]") + 1
        )));
    }

    /// The embedded text of preset `id`.
    fn text_of(id: &str) -> &'static str {
        super::super::embedded::PRESETS
            .iter()
            .find(|(k, p, _)| *k == KIND && *p == id)
            .unwrap()
            .2
    }

    #[test]
    fn the_ufs21_ftl_is_ftl_rs_calibration_and_the_others_have_none() {
        use crate::storage::ufs::ftl::UFS21_64GB_CLASS;
        assert_eq!(
            preset("ufs21-64gb-class").ftl_config(),
            Some(UFS21_64GB_CLASS)
        );
        for id in ["samsung-eufs31-512gb", "samsung-ufs40-class"] {
            let p = preset(id);
            assert_eq!((p.ftl_config(), p.hpb_descriptors()), (None, None), "{id}");
        }
    }

    #[test]
    fn the_qd1_read_uses_the_ftl_where_the_preset_has_one() {
        // ufs21-64gb-class: host 1000 cycles at 200 MHz = 5 us, controller 90 us, tR 58 us,
        // 4 KiB over a 400 MB/s channel 10.24 us, 4096 B over 2 x HS-G3 (1,061,132,800 B/s)
        // 3.86 us: 167.10 us. At the min level: 20 us at 50 MHz, HS-G1 15.44 us: 193.68 us.
        let p = preset("ufs21-64gb-class");
        assert_eq!(p.qd1_read_4k(p.max_level), Nanos(167_100));
        assert_eq!(p.qd1_read_4k(p.min_level), Nanos(20_000 + 158_240 + 15_440));
        // Without an FTL: the slots' own QD1 latency.
        let q = preset("samsung-ufs40-class");
        assert_eq!(
            q.qd1_read_4k(q.max_level),
            q.service.qd1_latency(IoOp::Read, 4096, q.max_level)
        );
    }

    #[test]
    fn the_ufs21_hpb_descriptors_and_their_geometry_by_hand() {
        let d = preset("ufs21-64gb-class").hpb_descriptors().unwrap();
        assert_eq!(
            d,
            HpbDescriptors {
                hpb_version: 0x0100,
                hpb_control: 1,
                region_size: 15,
                subregion_size: 13,
                device_max_active_regions: 2016,
                lu_max_active_regions: 2016,
                pinned_start: 0,
                num_pinned: 0,
                max_data_size_single_cmd: None,
                num_blocks: 15_625_000,
            }
        );
        let g = Geometry::new(&d).unwrap();
        // 512 x 2^15 = 16 MiB = 4096 entries; 512 x 2^13 = 4 MiB = 1024 entries.
        assert_eq!((g.entries_per_rgn, g.entries_per_srgn), (4096, 1024));
        // 64e9 / 4096 = 15,625,000 blocks: 4096 x 3814 = 15,622,144, so 3815 regions;
        // 1024 x 15258 = 15,624,192, so 15,259 sub-regions, the last holding 808 entries.
        assert_eq!((g.rgns_per_lu, g.srgns_per_lu), (3815, 15_259));
        assert_eq!(g.last_srgn_entries, 808);
        // HPB 1.0: 4 KiB reads only; the LRU holds 2016 regions = 31.5 GiB of LBA.
        assert_eq!((g.legacy, g.max_single_cmd_blocks), (true, 1));
        assert_eq!(g.max_lru_active as u64 * g.rgn_bytes, 63 << 29);
        assert_eq!(g.mode, ControlMode::Device);
        // Every new figure is in the listing, estimates labelled (checked for all figures in
        // `estimated_power_and_latency_follow_the_rules`).
        let p = preset("ufs21-64gb-class");
        let keys: Vec<&str> = p.figures.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"ftl.controller_us") && keys.contains(&"hpb.num_blocks"));
        assert_eq!(p.hpb.unwrap().hpb_version.central, 256.0);
    }

    #[test]
    fn bad_ftl_and_hpb_sections_are_reported_at_their_line() {
        let good = text_of("ufs21-64gb-class");
        let line_of = |needle: &str| good.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
        let err = |text: String| parse_preset("u.toml", &text).unwrap_err().to_string();
        // An unknown key, by the TOML reader, at its own line.
        let t = good.replace("[hpb]\n", "[hpb]\nregions = 3\n");
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: unknown field `regions`, expected one of `hpb_version`, `control`",
            line_of("[hpb]") + 1
        )));
        let t = good.replace("[ftl]\n", "[ftl]\nsram_kib = 3\n");
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: unknown field `sram_kib`",
            line_of("[ftl]") + 1
        )));
        // A control mode that is not one.
        let t = good.replace("control = \"device\"", "control = \"hybrid\"");
        assert!(err(t).starts_with(&format!(
            "u.toml:{}: unknown variant `hybrid`, expected `device` or `host`",
            line_of("control =")
        )));
        // A sub-region larger than its region: the geometry refuses it at the section's line.
        let t = good.replace(
            "subregion_size = { low = 12, central = 13, high = 15,",
            "subregion_size = { low = 16, central = 16, high = 16,",
        );
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: [hpb] cannot be used: expected bHPBSubRegionSize in 3..=15 (one 4 KiB \
                 entry block up to the region size), got 16",
                line_of("[hpb]")
            )
        );
        // A version the driver does not know.
        let t = good.replace("value = 0x0100,", "value = 0x0300,");
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: [hpb] cannot be used: expected wHPBVersion 0x0100 or 0x0200, got \
                 0x0300",
                line_of("[hpb]")
            )
        );
        // A field wider than its descriptor: bHPBRegionSize is one byte.
        let t = good.replace(
            "region_size = { low = 13, central = 15, high = 17,",
            "region_size = { low = 13, central = 256, high = 300,",
        );
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: `hpb.region_size`: expected a whole number in 0..=255, got 256",
                line_of("region_size")
            )
        );
        // A map cache smaller than one map page (1 KiB against 1024 x 4 B): Ftl::new refuses.
        let t = good.replace(
            "map_cache_kib = { low = 768, central = 1024, high = 1536,",
            "map_cache_kib = { value = 1,",
        );
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: [ftl] cannot be used: a map cache of 1024 bytes holds no map page of \
                 1024 entries; expected at least 4096 bytes and at least one entry a page",
                line_of("[ftl]")
            )
        );
        // No NAND channel.
        let t = good.replace(
            "nand_channels = { low = 2, central = 2, high = 2,",
            "nand_channels = { value = 0,",
        );
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: `ftl.nand_channels`: expected a whole number in 1..=64, got 0",
                line_of("nand_channels")
            )
        );
        // A channel at 0 MB/s.
        let t = good.replace(
            "channel_mb_s = { low = 200, central = 400, high = 533,",
            "channel_mb_s = { low = 0, central = 0.5, high = 533,",
        );
        assert_eq!(
            err(t),
            format!(
                "u.toml:{}: `ftl.channel_mb_s`: expected 1..=1000000, got 0.5",
                line_of("channel_mb_s")
            )
        );
    }
}
