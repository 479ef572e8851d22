//! The governor variants torpor has, by the names `idle-decide.md` gives them.
//!
//! `NAME@VERSION` names the first mainline release whose behaviour a variant follows; the bare
//! name is the newest variant of that governor the contract names (`menu` = 6.19, `teo` =
//! 6.19); later releases are selectable by their own names.

mod haltpoll;
mod ladder;
#[cfg(test)]
mod ladder_haltpoll_tests;
mod menu;
mod oracle;
#[cfg(test)]
mod property_tests;
mod teo;

pub use haltpoll::HaltpollParams;

use super::{Device, Governor, Platform};

/// Every variant, one per kernel behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GovernorName {
    Menu66,
    Menu619,
    Menu70,
    Menu71,
    Teo513,
    Teo63,
    Teo66,
    Teo612,
    Teo614,
    Teo619,
    Teo70,
    Ladder,
    Haltpoll,
    Oracle,
}

/// Accepted spellings, canonical name first for each variant.
pub const NAMES: &[(&str, GovernorName)] = &[
    ("menu@6.6", GovernorName::Menu66),
    ("menu", GovernorName::Menu619),
    ("menu@6.19", GovernorName::Menu619),
    ("menu@7.0", GovernorName::Menu70),
    ("menu@7.1", GovernorName::Menu71),
    ("teo@5.13", GovernorName::Teo513),
    ("teo@6.3", GovernorName::Teo63),
    ("teo-util", GovernorName::Teo63),
    ("teo@6.6", GovernorName::Teo66),
    ("teo@6.12", GovernorName::Teo612),
    ("teo@6.14", GovernorName::Teo614),
    ("teo", GovernorName::Teo619),
    ("teo@6.19", GovernorName::Teo619),
    ("teo@7.0", GovernorName::Teo70),
    ("ladder", GovernorName::Ladder),
    ("haltpoll", GovernorName::Haltpoll),
    ("oracle", GovernorName::Oracle),
];

impl GovernorName {
    /// Parses a name as a user writes it (`teo`, `teo@6.6`, `teo-util`, ...).
    pub fn parse(name: &str) -> Result<GovernorName, crate::variant_names::UnknownName> {
        crate::variant_names::parse(NAMES, name, "governor")
    }

    /// The name torpor prints for the variant.
    pub fn canonical(self) -> &'static str {
        crate::variant_names::canonical(NAMES, self)
    }

    /// The fewest states the governor works with (ladder and haltpoll step between two).
    pub fn min_states(self) -> usize {
        match self {
            GovernorName::Ladder | GovernorName::Haltpoll => 2,
            _ => 1,
        }
    }

    /// Builds the governor and runs its `enable` callback on `dev`.
    pub fn build(self, platform: &Platform, dev: &mut Device) -> Box<dyn Governor> {
        match self {
            GovernorName::Ladder => Box::new(ladder::Ladder::new(platform, dev)),
            GovernorName::Haltpoll => Box::new(haltpoll::Haltpoll::new(platform, dev)),
            GovernorName::Menu66 => Box::new(menu::Menu66::new(platform, dev)),
            GovernorName::Menu619 => Box::new(menu::Menu619::v6_19(platform, dev)),
            GovernorName::Menu70 => Box::new(menu::Menu619::v7_0(platform, dev)),
            GovernorName::Menu71 => Box::new(menu::Menu619::v7_1(platform, dev)),
            GovernorName::Oracle => Box::new(oracle::Oracle::new(platform, dev)),
            GovernorName::Teo513 => Box::new(teo::Teo513::new(platform, dev)),
            GovernorName::Teo63 => Box::new(teo::Teo63::new(platform, dev)),
            GovernorName::Teo66 => Box::new(teo::Teo66::new(platform, dev)),
            GovernorName::Teo612 => Box::new(teo::Teo612::new(platform, dev)),
            GovernorName::Teo614 => Box::new(teo::Teo614::new(platform, dev)),
            GovernorName::Teo619 => Box::new(teo::Teo619::new(platform, dev)),
            GovernorName::Teo70 => Box::new(teo::Teo70::new(platform, dev)),
        }
    }
}

/// Parses `name` and builds the governor (see [`GovernorName::build`]).
pub fn by_name(
    name: &str,
    platform: &Platform,
    dev: &mut Device,
) -> Result<Box<dyn Governor>, String> {
    let g = GovernorName::parse(name)?;
    if platform.state_count() < g.min_states() {
        return Err(format!(
            "{} needs at least {} idle states; the platform has {}",
            g.canonical(),
            g.min_states(),
            platform.state_count()
        ));
    }
    Ok(g.build(platform, dev))
}
