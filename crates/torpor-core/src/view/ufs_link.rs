//! How long a transfer of a given size crosses a UFS preset's link at the host's two
//! clock-scaling levels (the gear each level uses), as the service-time model charges it:
//! what a report cites when it explains why a gain depends on the min level's gear.

use serde::Serialize;

use crate::input::ufs_preset::UfsPreset;

/// One level's gear and the transfer's link time there, µs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelLink {
    pub gear: u8,
    pub link_us: f64,
}

/// The transfer's link time at the min and the max level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkTimes {
    pub min: LevelLink,
    pub max: LevelLink,
}

/// `bytes` crossing `preset`'s link at each level.
pub fn link_times(preset: &UfsPreset, bytes: u32) -> LinkTimes {
    let at = |gear| LevelLink {
        gear,
        link_us: preset.service.link_time(bytes, gear).0 as f64 / 1e3,
    };
    LinkTimes {
        min: at(preset.min_level.gear),
        max: at(preset.max_level.gear),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::ufs_preset;
    use crate::storage::ufs::service::LINK_EFFICIENCY;

    #[test]
    fn a_64k_read_on_the_ufs40_class_link_at_hs_g1_and_hs_g5() {
        let p = ufs_preset::find("samsung-ufs40-class").unwrap().unwrap();
        let t = link_times(&p, 65536);
        // By hand from spec-storage's lane rates: HS-G1 Rate B 1457.6 Mbit/s per lane after
        // 8b/10b = 145.76 MB/s, two lanes, framing efficiency 0.91; G5 is 16 times G1.
        let g1_bytes_per_s = 2.0 * 145.76e6 * LINK_EFFICIENCY;
        let by_hand_g1_us = 65536.0 / g1_bytes_per_s * 1e6;
        assert_eq!((t.min.gear, t.max.gear), (1, 5));
        assert!((t.min.link_us - by_hand_g1_us).abs() < 0.01, "{t:?}");
        assert!((t.max.link_us - by_hand_g1_us / 16.0).abs() < 0.01, "{t:?}");
    }
}
