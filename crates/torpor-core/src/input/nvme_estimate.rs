//! PS0's idle and active power where a drive reports none: the one rule every preset's
//! `[estimate]` states in words, here as code, so that a user's own dump of a drive gets the
//! same figures, range and source sentence as a preset of the same maximum power.
//!
//! Why a rule: a power-state descriptor gives PS0's maximum power (MP), a ceiling for a busy
//! drive; IDLP and ACTP are optional and most client drives leave them out. Simulating an idle
//! PS0 at MP overstates an idle drive's power several times over, so torpor uses a fraction of
//! MP with a range, anchored on the few published measurements (named in the sources below).
//!
//! The rule, for `ref = min(PS0 MP, 5 W)` (busy client M.2 drives draw 3-5.7 W whatever they
//! declare):
//! 1. Idle (no IDLP): 0.2 x ref, range 0.1-0.3 x ref, each clamped to 0.25-1.5 W and then to
//!    at most MP.
//! 2. Active (no ACTP): 0.8 x ref, range 0.6-1.0 x ref.
//! 3. A PS0 whose MP is 0 W (unknown) gets no estimate: its power stays unknown.

use super::nvme_preset::Estimate;

/// The cap on the reference power, mW.
const REFERENCE_CAP_MW: f64 = 5000.0;
/// The idle estimate's clamp, mW.
const IDLE_FLOOR_MW: f64 = 250.0;
const IDLE_CEILING_MW: f64 = 1500.0;

const IDLE_ANCHORS: &str = "The rule's anchors are the two client NVMe drives with a measured \
    PS0 idle: Samsung 950 PRO (about 1 W, APST saving in commit c5552fde102f; 1 W / 5 W = \
    0.20) and Toshiba BG3 (about 1 W idle, Hardwareluxx review, https://hardwareluxx.de/index.\
    php/artikel/hardware/storage/47297-toshiba-bg3-im-test-kompakte-oem-ssd-mit-consumer-\
    schwester.html?start=1; 1 W / 3.3 W = 0.30); busy client M.2 drives draw 3-5.7 W whatever \
    their declared maximum, hence the 5 W cap";

const ACTIVE_ANCHOR: &str = "The rule's anchor is the Samsung 950 PRO's specified average read \
    power, 5.1 W (256 GB) and 5.7 W (512 GB) against its 6.5 W maximum power (0.78-0.88; spec \
    table in http://w2ww.anandtech.com/print/10754/samsung-960-pro-ssd-review); busy client \
    M.2 drives draw 3-5.7 W whatever their declared maximum, hence the 5 W cap";

/// Step 1: PS0's idle power for a PS0 of maximum power `max_power_mw`; `None` when that is
/// 0 (step 3).
pub fn ps0_idle(max_power_mw: f64) -> Option<Estimate> {
    let reference = reference_mw(max_power_mw)?;
    let clamped = |k: f64| (k * reference).clamp(IDLE_FLOOR_MW, IDLE_CEILING_MW);
    let at = |k: f64| to_microwatt(clamped(k).min(max_power_mw));
    let capped = if clamped(0.3) > max_power_mw {
        format!(
            ", and to at most the maximum power {} W",
            watts(max_power_mw)
        )
    } else {
        String::new()
    };
    Some(Estimate {
        low_mw: at(0.1),
        central_mw: at(0.2),
        high_mw: at(0.3),
        source: format!(
            "ESTIMATE by rule, no PS0 idle measurement of this drive found: PS0 idle = 0.2 \
             (range 0.1-0.3) x min(PS0 max power {} W, 5 W), clamped to 0.25-1.5 W{capped}. \
             {IDLE_ANCHORS}",
            watts(max_power_mw)
        ),
    })
}

/// Step 2: PS0's active power for a PS0 of maximum power `max_power_mw`; `None` when that is
/// 0 (step 3).
pub fn ps0_active(max_power_mw: f64) -> Option<Estimate> {
    let reference = reference_mw(max_power_mw)?;
    Some(Estimate {
        low_mw: to_microwatt(0.6 * reference),
        central_mw: to_microwatt(0.8 * reference),
        high_mw: to_microwatt(reference),
        source: format!(
            "ESTIMATE by rule, the drive reports no active power (ACTP): PS0 active = 0.8 \
             (range 0.6-1.0) x min(PS0 max power {} W, 5 W). {ACTIVE_ANCHOR}",
            watts(max_power_mw)
        ),
    })
}

/// `min(MP, 5 W)`, or `None` for an MP of 0 (unknown) or not a number.
fn reference_mw(max_power_mw: f64) -> Option<f64> {
    (max_power_mw.is_finite() && max_power_mw > 0.0).then(|| max_power_mw.min(REFERENCE_CAP_MW))
}

/// `mw` rounded to whole µW, as preset files are read (so 0.6 x 3500 mW is exactly 2100).
fn to_microwatt(mw: f64) -> f64 {
    (mw * 1000.0).round() / 1000.0
}

/// mW as W the way the presets print them: `3.5`, `9`, `5.24`.
fn watts(mw: f64) -> String {
    format!("{}", (mw * 1000.0).round() / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::nvme_preset::builtin;

    #[test]
    fn the_rule_gives_every_rule_labelled_preset_its_figures_and_sentence() {
        // The presets' estimates were written into their files by hand, one per drive: the
        // code must reproduce each, numbers and source sentence alike.
        let mut idle_checked = 0;
        let mut active_checked = 0;
        for p in builtin().map(Result::unwrap) {
            let mp = p.controller.power_states[0].max_power_mw;
            if let Some(e) = p
                .ps0_idle
                .as_ref()
                .filter(|e| e.source.starts_with("ESTIMATE"))
            {
                assert_eq!(ps0_idle(mp).as_ref(), Some(e), "{}", p.id);
                idle_checked += 1;
            }
            if let Some(e) = &p.ps0_active {
                assert_eq!(ps0_active(mp).as_ref(), Some(e), "{}", p.id);
                active_checked += 1;
            }
        }
        // 17 presets: the 950 PRO's idle figure is a measurement; two report ACTP.
        assert_eq!((idle_checked, active_checked), (16, 15));
    }

    #[test]
    fn hand_computed_cases() {
        // 3.5 W: 0.35 / 0.7 / 1.05 W. 9 W: ref 5 W, 0.5 / 1 / 1.5 W.
        let e = ps0_idle(3500.0).unwrap();
        assert_eq!((e.low_mw, e.central_mw, e.high_mw), (350.0, 700.0, 1050.0));
        let e = ps0_idle(9000.0).unwrap();
        assert_eq!((e.low_mw, e.central_mw, e.high_mw), (500.0, 1000.0, 1500.0));
        let e = ps0_active(9000.0).unwrap();
        assert_eq!(
            (e.low_mw, e.central_mw, e.high_mw),
            (3000.0, 4000.0, 5000.0)
        );
        // 1.2 W: 0.12 W is clamped up to 0.25 W; 0.24 W too; 0.36 W stays.
        let e = ps0_idle(1200.0).unwrap();
        assert_eq!((e.low_mw, e.central_mw, e.high_mw), (250.0, 250.0, 360.0));
        // 0.2 W: the 0.25 W floor would exceed the state's own maximum: capped, and said.
        let e = ps0_idle(200.0).unwrap();
        assert_eq!((e.low_mw, e.central_mw, e.high_mw), (200.0, 200.0, 200.0));
        assert!(
            e.source.contains("at most the maximum power 0.2 W"),
            "{}",
            e.source
        );
        // MP 0 W: the power is unknown, and no rule makes one up.
        assert_eq!(ps0_idle(0.0), None);
        assert_eq!(ps0_active(0.0), None);
    }
}
