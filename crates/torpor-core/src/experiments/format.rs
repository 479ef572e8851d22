//! Numbers in a verdict's words, written the way the reports have always printed them:
//! Python's `format` conventions (`g`, `%`), which the reports' readers and their diffs know.
//! Fixed decimals need nothing here: Rust's `{:.N}` rounds the same way (the exact binary
//! value, ties to even).

/// `x` in the shortest of fixed and scientific notation with six significant digits, trailing
/// zeros dropped (Python's `{:g}`): 0.125 -> "0.125", 1e16 -> "1e+16", 5.0 -> "5".
pub fn g(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    const DIGITS: i32 = 6;
    // The exponent after rounding to six digits (9.999995 is 1.00000e1, not 9.99999e0).
    let scientific = format!("{:.*e}", (DIGITS - 1) as usize, x);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}`'s exponent is an integer");
    if (-4..DIGITS).contains(&exponent) {
        let decimals = (DIGITS - 1 - exponent) as usize;
        without_trailing_zeros(&format!("{x:.decimals$}")).to_owned()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            without_trailing_zeros(mantissa),
            exponent.abs()
        )
    }
}

/// [`g`] with a sign always written (Python's `{:+g}`).
pub fn signed_g(x: f64) -> String {
    let text = g(x);
    if text.starts_with('-') {
        text
    } else {
        format!("+{text}")
    }
}

/// A fraction as a percentage with `decimals` decimals (Python's `{:.Nf%}`): 0.62 -> "62%".
pub fn percent(fraction: f64, decimals: usize) -> String {
    format!("{:.decimals$}%", fraction * 100.0)
}

/// [`percent`] with a sign always written (Python's `{:+.N%}`): -0.031 -> "-3.1%".
pub fn signed_percent(fraction: f64, decimals: usize) -> String {
    format!("{:+.decimals$}%", fraction * 100.0)
}

fn without_trailing_zeros(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings worked from Python's format specification (six significant digits,
    // scientific when the exponent is below -4 or at least 6, trailing zeros removed, a
    // two-digit signed exponent), and checked with CPython 3's `format`.
    #[test]
    fn general_format() {
        let cases = [
            (0.0, "0"),
            (5.0, "5"),
            (0.125, "0.125"),
            (2.5, "2.5"),
            (13.9, "13.9"),
            (-0.0001, "-0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (1e16, "1e+16"),
            (9.9999996, "10"),
            (999999.5, "1e+06"),
            (0.1 + 0.2, "0.3"),
            (f64::INFINITY, "inf"),
        ];
        for (x, want) in cases {
            assert_eq!(g(x), want, "{x}");
        }
    }

    #[test]
    fn signs_and_percentages() {
        assert_eq!(signed_g(2.75), "+2.75");
        assert_eq!(signed_g(-3.0), "-3");
        assert_eq!(percent(0.62, 0), "62%");
        assert_eq!(percent(0.125, 1), "12.5%");
        assert_eq!(signed_percent(-0.031, 1), "-3.1%");
        assert_eq!(signed_percent(0.18, 0), "+18%");
    }
}
