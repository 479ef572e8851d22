//! A device's latency tolerance (`DEV_PM_QOS_LATENCY_TOLERANCE`) and what NVMe does with it.
//!
//! Follows `drivers/base/power/qos.c` and `drivers/base/power/sysfs.c` as of v6.6 (unchanged in
//! substance since v4.11 added NVMe's use of it) and `nvme_set_latency_tolerance` in
//! `drivers/nvme/host/core.c` (spec-storage §1.2).
//!
//! 1. The constraint is a minimum list whose empty value is "no constraint" (-1,
//!    `PM_QOS_LATENCY_TOLERANCE_NO_CONSTRAINT`); any holder may add a request.
//! 2. User space owns one request through `power/pm_qos_latency_tolerance_us`
//!    ([`parse_sysfs`]): a number of µs (>= 0) adds or updates it, `auto` (no constraint)
//!    drops it, `any` sets it to `PM_QOS_LATENCY_ANY` (S32_MAX). Writing `auto` when there is
//!    no user request does nothing; a negative value is refused
//!    (`dev_pm_qos_update_user_latency_tolerance`).
//! 3. When the aggregate changes, the device's `set_latency_tolerance` callback gets the new
//!    value ([`LatencyTolerance::update_user`] and friends return it then, `None` otherwise).
//! 4. NVMe's callback ([`nvme_ps_max_latency_us`]): no constraint or "any" is no limit
//!    (`U64_MAX`), any other value is `ps_max_latency_us`; when that differs from the current
//!    limit the driver rebuilds and sends the APST table (`nvme_configure_apst`).
//! 5. At controller init the driver makes the user request `min(default_ps_max_latency_us,
//!    S32_MAX)` ([`LatencyTolerance::for_nvme`]), which is why the sysfs file starts there.

use super::{Aggregate, Constraints, Holder};

/// `PM_QOS_LATENCY_TOLERANCE_NO_CONSTRAINT`: the empty list's value, and `auto`.
pub const NO_CONSTRAINT: i64 = -1;
/// `PM_QOS_LATENCY_ANY` (S32_MAX): `any`, the loosest request.
pub const LATENCY_ANY: i64 = i32::MAX as i64;
/// The request user space holds through sysfs.
const USER: Holder = 0;

/// Parses what is written to `power/pm_qos_latency_tolerance_us` as the kernel does: an s32
/// in `kstrtos32`'s base-0 syntax (decimal, `0x` hex, leading-`0` octal, an optional sign, one
/// trailing newline), refused when negative; otherwise exactly `auto` or `any`. The error says
/// what was expected.
pub fn parse_sysfs(text: &str) -> Result<i64, String> {
    let t = text.strip_suffix('\n').unwrap_or(text);
    if let Some(v) = parse_s32_base0(t) {
        return if v < 0 {
            Err(format!(
                "{v}: expected a latency of 0 us or more (negative values are refused)"
            ))
        } else {
            Ok(v)
        };
    }
    match t {
        "auto" => Ok(NO_CONSTRAINT),
        "any" => Ok(LATENCY_ANY),
        _ => Err(format!(
            "{:?}: expected a whole number of us (0 to {LATENCY_ANY}), \"auto\" or \"any\"",
            text
        )),
    }
}

/// `kstrtos32(s, 0, ..)`: `None` when it would fail (syntax or range).
fn parse_s32_base0(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, h)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i64::from_str_radix(digits, radix).ok()?;
    let v = if neg { -magnitude } else { magnitude };
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&v)
        .then_some(v)
}

/// One device's latency-tolerance list and its user request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyTolerance {
    list: Constraints,
    user: bool,
}

impl Default for LatencyTolerance {
    fn default() -> Self {
        LatencyTolerance {
            list: Constraints::new(Aggregate::Min, NO_CONSTRAINT),
            user: false,
        }
    }
}

/// A user request the sysfs store refuses: a negative value other than [`NO_CONSTRAINT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefusedTolerance {
    pub value: i64,
}

impl std::fmt::Display for RefusedTolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: a negative latency tolerance is refused", self.value)
    }
}

impl std::error::Error for RefusedTolerance {}

impl LatencyTolerance {
    /// An NVMe controller just initialised: the user request at `min(default_ps_max_latency_us,
    /// S32_MAX)` (step 5).
    pub fn for_nvme(default_ps_max_latency_us: u64) -> LatencyTolerance {
        let mut lt = LatencyTolerance::default();
        let v = default_ps_max_latency_us.min(LATENCY_ANY as u64) as i64;
        lt.update_user(v)
            .expect("a non-negative request is accepted");
        lt
    }

    /// The aggregate: the smallest request, or [`NO_CONSTRAINT`].
    pub fn value(&self) -> i64 {
        self.list.value()
    }

    /// The user request (what the sysfs file reads back), or [`NO_CONSTRAINT`].
    pub fn user_value(&self) -> i64 {
        if self.user {
            self.list.request(USER).unwrap_or(NO_CONSTRAINT)
        } else {
            NO_CONSTRAINT
        }
    }

    /// A value written to the sysfs file, as [`parse_sysfs`] returns it (step 2); the new
    /// aggregate when it changed.
    pub fn update_user(&mut self, value: i64) -> Result<Option<i64>, RefusedTolerance> {
        if value < 0 && value != NO_CONSTRAINT {
            return Err(RefusedTolerance { value });
        }
        let changed = match (self.user, value < 0) {
            (false, true) => false,
            (true, true) => {
                self.user = false;
                self.list.remove(USER)
            }
            (_, false) => {
                self.user = true;
                self.list.set(USER, value)
            }
        };
        Ok(changed.then(|| self.value()))
    }

    /// A kernel holder's request (`dev_pm_qos_add_request` / `_update_request`, holder 1 and
    /// up); the new aggregate when it changed.
    pub fn set(&mut self, holder: Holder, value: i64) -> Option<i64> {
        debug_assert_ne!(holder, USER, "holder 0 is the sysfs user request");
        self.list.set(holder, value).then(|| self.value())
    }

    /// Removes a kernel holder's request; the new aggregate when it changed.
    pub fn remove(&mut self, holder: Holder) -> Option<i64> {
        self.list.remove(holder).then(|| self.value())
    }
}

/// `nvme_set_latency_tolerance`: the controller's `ps_max_latency_us` for an aggregate
/// (step 4). `u64::MAX` is no limit.
pub fn nvme_ps_max_latency_us(value: i64) -> u64 {
    match value {
        NO_CONSTRAINT | LATENCY_ANY => u64::MAX,
        v => v.max(0) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_values_parse_as_the_kernel_reads_them() {
        // kstrtos32 base 0: decimal, hex, octal (leading 0), sign, one trailing newline.
        for (text, want) in [
            ("0", 0),
            ("100000\n", 100_000),
            ("0x10", 16),
            ("010", 8),
            ("+5", 5),
            ("2147483647", LATENCY_ANY),
            ("auto", NO_CONSTRAINT),
            ("auto\n", NO_CONSTRAINT),
            ("any", LATENCY_ANY),
        ] {
            assert_eq!(parse_sysfs(text), Ok(want), "{text:?}");
        }
        // Negative, past S32_MAX, bad digits, other words, spaces.
        for text in [
            "-1",
            "2147483648",
            "08",
            "0x",
            "12us",
            "Auto",
            " 5",
            "",
            "5\n\n",
        ] {
            assert!(parse_sysfs(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn the_user_request_follows_the_drivers_rules() {
        let mut lt = LatencyTolerance::default();
        assert_eq!(lt.value(), NO_CONSTRAINT);
        // `auto` with no request: nothing happens.
        assert_eq!(lt.update_user(NO_CONSTRAINT), Ok(None));
        // First value adds the request: the aggregate moves from -1 to 5000.
        assert_eq!(lt.update_user(5000), Ok(Some(5000)));
        assert_eq!(lt.update_user(5000), Ok(None));
        assert_eq!(lt.update_user(200), Ok(Some(200)));
        assert_eq!(lt.user_value(), 200);
        // A kernel holder below and above the user request.
        assert_eq!(lt.set(1, 100), Some(100));
        assert_eq!(lt.set(2, 300), None);
        // `auto` drops the user request: the kernel holders' minimum stays 100.
        assert_eq!(lt.update_user(NO_CONSTRAINT), Ok(None));
        assert_eq!(lt.user_value(), NO_CONSTRAINT);
        assert_eq!(lt.remove(1), Some(300));
        assert_eq!(lt.remove(2), Some(NO_CONSTRAINT));
        assert!(lt.update_user(-5).is_err());
    }

    #[test]
    fn every_removal_order_of_three_holders_returns_to_no_constraint() {
        // Holders: user 25000, kernel 1 at 100, kernel 2 at 5000. After each removal the
        // aggregate is the minimum of what is left, by hand; a change is reported only when
        // it moves.
        let values = [25_000i64, 100, 5000];
        for order in crate::qos::REMOVAL_ORDERS {
            let mut lt = LatencyTolerance::for_nvme(25_000);
            lt.set(1, 100);
            lt.set(2, 5000);
            assert_eq!(lt.value(), 100);
            let mut left = vec![0usize, 1, 2];
            for &who in &order {
                let before = lt.value();
                left.retain(|&x| x != who);
                let want = left
                    .iter()
                    .map(|&i| values[i])
                    .min()
                    .unwrap_or(NO_CONSTRAINT);
                let got = if who == 0 {
                    lt.update_user(NO_CONSTRAINT).unwrap()
                } else {
                    lt.remove(who as Holder)
                };
                assert_eq!(got, (want != before).then_some(want), "{order:?}");
                assert_eq!(lt.value(), want);
            }
        }
    }

    #[test]
    fn nvme_starts_at_its_default_and_maps_no_limit_to_u64_max() {
        let lt = LatencyTolerance::for_nvme(25_000);
        assert_eq!((lt.value(), lt.user_value()), (25_000, 25_000));
        // A default above S32_MAX is clamped to it, which NVMe reads as no limit.
        let big = LatencyTolerance::for_nvme(u64::MAX);
        assert_eq!(nvme_ps_max_latency_us(big.value()), u64::MAX);
        assert_eq!(nvme_ps_max_latency_us(NO_CONSTRAINT), u64::MAX);
        assert_eq!(nvme_ps_max_latency_us(0), 0);
        assert_eq!(nvme_ps_max_latency_us(1500), 1500);
    }
}
