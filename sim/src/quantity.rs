//! Resource quantities (`500m`, `1Gi`, `2e3`) in the canonical form kube-apiserver stores: a
//! quantity is parsed into an exact amount and a format (decimal SI, binary SI or decimal
//! exponent) and printed back canonically, as apimachinery's `pkg/api/resource` does
//! (`ParseQuantity`, then `CanonicalizeBytes`): `1024Mi` is stored as `1Gi`, `1000m` as `1`,
//! `0.5` as `500m`, and a well-formed canonical string is kept as sent.

/// Why a quantity does not parse (apimachinery's `ErrFormatWrong`, `ErrNumeric`, `ErrSuffix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text is not a number followed by a suffix.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    /// The number does not parse.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// The suffix is none of the known ones.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// How a quantity is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `12e6`.
    DecimalExponent,
    /// `12Mi` (powers of 1024).
    BinarySi,
    /// `12M` (powers of 1000).
    DecimalSi,
}

/// An exact amount: `unscaled × 10^exponent`, negative when `negative`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Amount {
    negative: bool,
    unscaled: u128,
    exponent: i32,
}

/// The smallest exponent a quantity keeps (nano): finer amounts are rounded up to it.
const NANO: i32 = -9;

/// The pieces of a quantity's text (apimachinery `parseQuantityString`): sign, the number as
/// written (`value`), its integer and fraction digits, and the suffix.
struct Parts<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split(s: &str) -> Result<Parts<'_>, QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    let whole = |num, value| Parts {
        positive,
        value,
        num,
        denom: "",
        suffix: "",
    };
    if pos >= end {
        return Ok(whole("0", "0"));
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(whole(&s[start..], s));
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let from = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[from..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: s,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// The base, exponent and format a suffix stands for.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"];
    if let Some(i) = decimal.iter().position(|d| *d == suffix) {
        let i = i32::try_from(i).unwrap_or_default();
        return Some((10, 3 * i - 9, Format::DecimalSi));
    }
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(i) = binary.iter().position(|d| *d == suffix) {
        let i = i32::try_from(i).unwrap_or_default();
        return Some((2, 10 * (i + 1), Format::BinarySi));
    }
    let exponent = suffix.strip_prefix(['e', 'E']).filter(|e| !e.is_empty())?;
    Some((10, exponent.parse().ok()?, Format::DecimalExponent))
}

/// The canonical form of the quantity `s`; with `milli`, rounded up to a thousandth first, as
/// kube-apiserver defaults every `ResourceList` (container requests and limits, claim requests).
///
/// # Errors
/// When `s` is not a quantity.
pub fn canonical(s: &str, milli: bool) -> Result<String, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format);
    }
    if s == "0" {
        return Ok(s.to_string());
    }
    let parts = split(s)?;
    let (base, exponent, format) = interpret(parts.suffix).ok_or(QuantityError::Suffix)?;
    let (amount, format, kept) = match fast_path(&parts, exponent, format)? {
        Some(parsed) => parsed,
        None => slow_path(&parts, base, exponent, format)?,
    };
    if milli && amount.exponent < -3 {
        return Ok(print(round_up(amount, -3), format));
    }
    Ok(if kept {
        s.to_string()
    } else {
        print(amount, format)
    })
}

/// The exact amount of the quantity `s`.
fn amount(s: &str) -> Result<Amount, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format);
    }
    let parts = split(s)?;
    let (base, exponent, format) = interpret(parts.suffix).ok_or(QuantityError::Suffix)?;
    Ok(match fast_path(&parts, exponent, format)? {
        Some((amount, ..)) => amount,
        None => slow_path(&parts, base, exponent, format)?.0,
    })
}

/// How the quantities `a` and `b` compare, when both parse.
pub fn compare(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    let (a, b) = (amount(a).ok()?, amount(b).ok()?);
    Some(match (a.negative, b.negative) {
        (false, true) => std::cmp::Ordering::Greater,
        (true, false) => std::cmp::Ordering::Less,
        (false, false) => compare_magnitude(a, b),
        (true, true) => compare_magnitude(b, a),
    })
}

/// apimachinery's int64 fast path: the amount when it fits, and whether the text as sent is
/// already canonical and kept.
fn fast_path(
    parts: &Parts<'_>,
    exponent: i32,
    format: Format,
) -> Result<Option<(Amount, Format, bool)>, QuantityError> {
    let digits = i32::try_from(parts.num.len() + parts.denom.len()).unwrap_or(i32::MAX);
    let (mut scale, precision, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSi => (exponent, 18 - digits, 1i64),
        Format::BinarySi if exponent >= 0 && parts.denom.is_empty() => {
            let num = i32::try_from(parts.num.len()).unwrap_or(i32::MAX);
            (0, 15 - num - exponent * 3 / 10 - 1, 1i64 << exponent)
        }
        Format::BinarySi => (0, -1, 1),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale -= i32::try_from(parts.denom.len()).unwrap_or(i32::MAX);
    if scale < NANO {
        return Ok(None);
    }
    let shifted = format!("{}{}", parts.num, parts.denom);
    let value: i64 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
    let Some(result) = value.checked_mul(mantissa) else {
        return Ok(None);
    };
    let kept = match format {
        Format::BinarySi => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    let amount = Amount {
        negative: !parts.positive && result != 0,
        unscaled: u128::from(result.unsigned_abs()),
        exponent: scale,
    };
    Ok(Some((amount, format, kept)))
}

/// apimachinery's arbitrary-precision path: exact, rounded up to nano, binary amounts capped at
/// the int64 maximum.
fn slow_path(
    parts: &Parts<'_>,
    base: u32,
    exponent: i32,
    mut format: Format,
) -> Result<(Amount, Format, bool), QuantityError> {
    let digits = parts.value.trim_start_matches(['+', '-']).replace('.', "");
    let mut unscaled: u128 = digits.parse().map_err(|_| QuantityError::Numeric)?;
    let fraction = i32::try_from(parts.denom.len()).map_err(|_| QuantityError::Numeric)?;
    let mut exp = -fraction;
    if base == 10 {
        exp += exponent;
    } else {
        let factor = 1u128
            .checked_shl(u32::try_from(exponent).map_err(|_| QuantityError::Numeric)?)
            .ok_or(QuantityError::Numeric)?;
        unscaled = unscaled.checked_mul(factor).ok_or(QuantityError::Numeric)?;
    }
    let mut amount = Amount {
        negative: !parts.positive,
        unscaled,
        exponent: exp,
    };
    if amount.unscaled != 0 && amount.exponent < NANO {
        amount = round_up(amount, NANO);
    }
    if format == Format::BinarySi {
        let max = Amount {
            negative: false,
            unscaled: i64::MAX as u128,
            exponent: 0,
        };
        if compare_magnitude(amount, max).is_gt() {
            amount = Amount {
                negative: amount.negative,
                ..max
            };
        }
        let one = Amount {
            negative: false,
            unscaled: 1,
            exponent: 0,
        };
        if amount.unscaled != 0 && compare_magnitude(amount, one).is_lt() {
            format = Format::DecimalSi;
        }
    }
    amount.negative &= amount.unscaled != 0;
    Ok((amount, format, false))
}

fn pow10(n: u32) -> Option<u128> {
    10u128.checked_pow(n)
}

/// `amount` at exponent `to` (when it is finer), rounded away from zero.
fn round_up(amount: Amount, to: i32) -> Amount {
    if amount.exponent >= to {
        return amount;
    }
    let drop = u32::try_from(to - amount.exponent).unwrap_or(u32::MAX);
    let unscaled = match pow10(drop) {
        Some(d) => amount.unscaled.div_ceil(d),
        None => u128::from(amount.unscaled != 0),
    };
    Amount {
        negative: amount.negative,
        unscaled,
        exponent: to,
    }
}

fn compare_magnitude(a: Amount, b: Amount) -> std::cmp::Ordering {
    let low = a.exponent.min(b.exponent);
    let scaled = |x: Amount| {
        pow10(u32::try_from(x.exponent - low).unwrap_or(u32::MAX))
            .and_then(|f| x.unscaled.checked_mul(f))
    };
    match (scaled(a), scaled(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (None, _) => std::cmp::Ordering::Greater,
        (_, None) => std::cmp::Ordering::Less,
    }
}

/// The value as an integer, when it has no fraction.
fn integer(amount: Amount) -> Option<u128> {
    if amount.exponent >= 0 {
        return pow10(u32::try_from(amount.exponent).ok()?)?.checked_mul(amount.unscaled);
    }
    let d = pow10(u32::try_from(-amount.exponent).ok()?)?;
    amount
        .unscaled
        .is_multiple_of(d)
        .then(|| amount.unscaled / d)
}

/// apimachinery's `CanonicalizeBytes`.
fn print(amount: Amount, format: Format) -> String {
    if amount.unscaled == 0 {
        return "0".into();
    }
    let sign = if amount.negative { "-" } else { "" };
    if format == Format::BinarySi
        && amount_at_least_1024(amount)
        && let Some(mut n) = integer(amount)
    {
        let mut power = 0;
        while n.is_multiple_of(1024) && power < 6 {
            n /= 1024;
            power += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
        return format!("{sign}{n}{suffix}");
    }
    let (mut n, mut exponent) = (amount.unscaled, amount.exponent);
    while n.is_multiple_of(10) {
        n /= 10;
        exponent += 1;
    }
    match exponent % 3 {
        1 | -2 => {
            n *= 10;
            exponent -= 1;
        }
        2 | -1 => {
            n *= 100;
            exponent -= 2;
        }
        _ => {}
    }
    let suffix = match format {
        Format::DecimalExponent if exponent == 0 => String::new(),
        Format::DecimalExponent => format!("e{exponent}"),
        _ => match exponent {
            -9 => "n".into(),
            -6 => "u".into(),
            -3 => "m".into(),
            3 => "k".into(),
            6 => "M".into(),
            9 => "G".into(),
            12 => "T".into(),
            15 => "P".into(),
            18 => "E".into(),
            _ => String::new(),
        },
    };
    format!("{sign}{n}{suffix}")
}

fn amount_at_least_1024(amount: Amount) -> bool {
    let limit = Amount {
        negative: false,
        unscaled: 1024,
        exponent: 0,
    };
    compare_magnitude(amount, limit).is_ge()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_print_as_apimachinery_canonicalizes_them() {
        for (sent, stored) in [
            ("1024Mi", "1Gi"),
            ("1000m", "1"),
            ("1000", "1k"),
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("1.5Gi", "1536Mi"),
            ("0.5Gi", "512Mi"),
            ("100m", "100m"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("129M", "129M"),
            ("123Mi", "123Mi"),
            ("1Ki", "1Ki"),
            ("2048", "2048"),
            ("1e3", "1e3"),
            ("1000e0", "1e3"),
            ("0.1n", "1n"),
            ("-1000m", "-1"),
            ("00", "0"),
            ("0.0", "0"),
            ("+1", "+1"),
            ("512Ki", "512Ki"),
            ("1048576Ki", "1Gi"),
            ("0.5Ki", "512"),
            ("1.1Ki", "1126400m"),
            ("12E", "12E"),
        ] {
            assert_eq!(canonical(sent, false).as_deref(), Ok(stored), "{sent}");
        }
    }

    #[test]
    fn quantities_compare_by_amount() {
        use std::cmp::Ordering::*;
        assert_eq!(compare("1Gi", "1024Mi"), Some(Equal));
        assert_eq!(compare("500m", "1"), Some(Less));
        assert_eq!(compare("2", "1500m"), Some(Greater));
        assert_eq!(compare("-1", "0"), Some(Less));
        assert_eq!(compare("x", "1"), None);
    }

    #[test]
    fn resource_lists_round_up_to_milli() {
        assert_eq!(canonical("1n", true).as_deref(), Ok("1m"));
        assert_eq!(canonical("1500u", true).as_deref(), Ok("2m"));
        assert_eq!(canonical("250m", true).as_deref(), Ok("250m"));
        assert_eq!(canonical("1Gi", true).as_deref(), Ok("1Gi"));
    }

    #[test]
    fn malformed_quantities_are_refused() {
        assert_eq!(canonical("", false), Err(QuantityError::Format));
        assert_eq!(canonical("1 Gi", false), Err(QuantityError::Format));
        assert_eq!(canonical("abc", false), Err(QuantityError::Format));
        assert_eq!(canonical("1Gb", false), Err(QuantityError::Format));
        assert_eq!(canonical("1Mm", false), Err(QuantityError::Suffix));
    }
}
