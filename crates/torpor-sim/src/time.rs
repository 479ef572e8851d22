//! Engine time: integer nanoseconds.
//!
//! Every instant and duration inside the engine is a [`Nanos`]. File formats keep the unit
//! their ecosystem uses (`exit_latency_us`, `itpt_ms`, `"150ms"`) and convert once, at the
//! edge, with the helpers here, so rounding happens in exactly one place.
//!
//! Arithmetic on `Nanos` saturates instead of wrapping (a release build would otherwise turn
//! an overflow into a time near zero, and a latency into 0 us). Saturation is a backstop, not
//! a result: every time that enters from a file is checked against [`HORIZON`] first, so a
//! run's sums stay far below `u64::MAX`, and a time that cannot be represented is an input
//! error.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// A time or a duration in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const MAX: Nanos = Nanos(u64::MAX);

    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us.saturating_mul(1_000))
    }
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(1_000_000))
    }
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(1_000_000_000))
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub const fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

/// `TICK_NSEC` for a kernel built with `hz` (rounded to the nearest ns, as the kernel does).
pub fn tick_nsec(hz: u32) -> u64 {
    let hz = u64::from(hz.max(1));
    (1_000_000_000 + hz / 2) / hz
}

/// `msecs_to_jiffies(ms)`: rounded up to whole jiffies, as the kernel computes it for every HZ
/// (`(ms * HZ + 999) / 1000`).
pub fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms * u64::from(hz.max(1))).div_ceil(1000)
}

/// The latest time (and the longest duration) a file may ask for: 2^62 ns, about 146 years.
/// A quarter of the clock's range, so that an input time plus any latency or service time
/// the models add stays representable.
pub const HORIZON: Nanos = Nanos(1 << 62);

/// [`HORIZON`] in words, for error messages.
pub const HORIZON_TEXT: &str =
    "2^62 ns (about 146 years), the longest time torpor's clock represents";

impl Add for Nanos {
    type Output = Nanos;
    /// Saturates at [`Nanos::MAX`] (see the module doc).
    #[inline]
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, rhs: Nanos) {
        *self = *self + rhs;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    /// Saturates at zero: a duration is never negative.
    #[inline]
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
}
impl SubAssign for Nanos {
    #[inline]
    fn sub_assign(&mut self, rhs: Nanos) {
        *self = *self - rhs;
    }
}

impl fmt::Display for Nanos {
    /// Prints with the largest unit that keeps the value exact (`150ms`, `1500us`, `7ns`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return write!(f, "0s");
        }
        for (div, unit) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
            if ns.is_multiple_of(div) {
                return write!(f, "{}{}", ns / div, unit);
            }
        }
        write!(f, "{ns}ns")
    }
}

/// Why a duration string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("expected a duration with a unit (ns, us, ms, s, min), e.g. \"150ms\", got {}", crate::text::shown(.0))]
    Syntax(String),
    #[error("{} is longer than {HORIZON_TEXT}", crate::text::shown(.0))]
    TooLong(String),
}

/// Parses a duration written with its unit: `"150ms"`, `"2s"`, `"1.5s"`, `"40us"`, `"7ns"`,
/// `"2min"`. A bare number is refused: the unit is what makes a scenario file unambiguous.
/// Fractions are allowed as long as the result is a whole number of nanoseconds, and the
/// duration may not exceed [`HORIZON`].
pub fn parse_duration(text: &str) -> Result<Nanos, DurationError> {
    let err = || DurationError::Syntax(text.to_string());
    let too_long = || DurationError::TooLong(text.to_string());
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (num, unit) = s.split_at(split);
    let scale: u64 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return Err(err()),
    };
    if num.is_empty() {
        return Err(err());
    }
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err());
    }
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| err())?
    };
    let mut total = int.checked_mul(scale).ok_or_else(too_long)?;
    // Fractional digits: exact decimal arithmetic, refusing sub-nanosecond remainders.
    let mut place = scale;
    for d in frac_part.chars() {
        let digit = d.to_digit(10).ok_or_else(err)? as u64;
        if !place.is_multiple_of(10) {
            if digit != 0 {
                return Err(err());
            }
            continue;
        }
        place /= 10;
        total = total.checked_add(digit * place).ok_or_else(too_long)?;
    }
    if total > HORIZON.0 {
        return Err(too_long());
    }
    Ok(Nanos(total))
}

/// Parses a size with an optional binary suffix as fio writes it: `4096`, `4k`, `128K`, `1m`.
pub fn parse_size_bytes(text: &str) -> Option<u64> {
    let s = text.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_round_up_as_the_kernel_does() {
        // HZ=250: 30 ms = 7.5 jiffies -> 8; HZ=300: (30 * 300 + 999) / 1000 = 9 (9.999 -> 9),
        // 60 ms -> 18; HZ=1000: 1 ms -> 1.
        assert_eq!(msecs_to_jiffies(30, 250), 8);
        assert_eq!(msecs_to_jiffies(30, 300), 9);
        assert_eq!(msecs_to_jiffies(60, 300), 18);
        assert_eq!(msecs_to_jiffies(1, 1000), 1);
        // TICK_NSEC rounds: 1e9 / 300 = 3333333.3 -> 3333333; 1e9 / 250 = 4000000.
        assert_eq!((tick_nsec(300), tick_nsec(250)), (3_333_333, 4_000_000));
    }

    #[test]
    fn durations_convert_to_whole_nanoseconds() {
        assert_eq!(parse_duration("150ms"), Ok(Nanos(150_000_000)));
        assert_eq!(parse_duration("2s"), Ok(Nanos(2_000_000_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Nanos(1_500_000_000)));
        assert_eq!(parse_duration("40us"), Ok(Nanos(40_000)));
        assert_eq!(parse_duration("0.5us"), Ok(Nanos(500)));
        assert_eq!(parse_duration("7ns"), Ok(Nanos(7)));
        assert_eq!(parse_duration("2min"), Ok(Nanos(120_000_000_000)));
    }

    #[test]
    fn durations_without_unit_or_with_subnanosecond_fraction_are_refused() {
        for bad in ["150", "ms", "1.5ns", "-3ms", "3 hours", "", "1e3ms", "..ms"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn durations_beyond_the_horizon_are_refused_as_too_long() {
        // 2^62 ns = 4 611 686 018 427 387 904 ns is the last representable duration.
        assert_eq!(parse_duration("4611686018427387904ns"), Ok(HORIZON));
        for long in [
            "4611686018427387905ns",
            "147years",
            "200000000min",
            "99999999999999999999s",
        ] {
            match parse_duration(long) {
                Err(DurationError::TooLong(_)) | Err(DurationError::Syntax(_)) => {}
                other => panic!("{long:?} gave {other:?}"),
            }
        }
        assert!(matches!(
            parse_duration("4611686018427387905ns"),
            Err(DurationError::TooLong(_))
        ));
        // 146 years: 146 x 365.25 x 86400 s = 4 607 409 600 s, within the horizon.
        assert!(parse_duration("4607409600s").is_ok());
        assert!(matches!(
            parse_duration("4611686019s"),
            Err(DurationError::TooLong(_))
        ));
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Nanos(u64::MAX - 1) + Nanos(5), Nanos::MAX);
        assert_eq!(Nanos(3) - Nanos(5), Nanos::ZERO);
        let mut t = Nanos::MAX;
        t += Nanos(1);
        assert_eq!(t, Nanos::MAX);
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        assert_eq!(Nanos::from_ms(150).to_string(), "150ms");
        assert_eq!(Nanos::from_us(1500).to_string(), "1500us");
        assert_eq!(Nanos(7).to_string(), "7ns");
        assert_eq!(Nanos::from_secs(2).to_string(), "2s");
    }

    #[test]
    fn sizes_use_binary_multiples_like_fio() {
        assert_eq!(parse_size_bytes("4k"), Some(4096));
        assert_eq!(parse_size_bytes("128K"), Some(131072));
        assert_eq!(parse_size_bytes("1m"), Some(1 << 20));
        assert_eq!(parse_size_bytes("512"), Some(512));
        assert_eq!(parse_size_bytes("4x"), None);
    }
}
