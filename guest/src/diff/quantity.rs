//! Kubernetes `resource.Quantity` values compared canonically (D4): `1Gi == 1024Mi`,
//! `1000m == 1`, `0.5 == 500m`, `1e3 == 1k`.

use serde_json::Value;

/// Whether a field (names without list indices) holds a `resource.Quantity`: resource
/// limits/requests, capacities, quota `hard`, Pod `overhead` and `emptyDir.sizeLimit`.
pub(super) fn is_quantity_field(fields: &[String]) -> bool {
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    matches!(
        names.as_slice(),
        [.., "resources", "limits" | "requests", _]
            | [.., "capacity" | "allocatable" | "hard" | "overhead", _]
            | [.., "emptyDir", "sizeLimit"]
    )
}

/// Whether two JSON values are the same quantity; `false` when either is not one.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (canonical(a), canonical(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A quantity as `sign × odd_part × 2^p2 × 5^p5`, unique for every value (zero is all zeros).
#[derive(Debug, PartialEq, Eq)]
struct Canonical {
    negative: bool,
    rest: u128,
    p2: i64,
    p5: i64,
}

/// The canonical form of a quantity string or JSON number.
fn canonical(value: &Value) -> Option<Canonical> {
    match value {
        Value::String(s) => parse(s),
        Value::Number(n) => parse(&n.to_string()),
        _ => None,
    }
}

/// Parses `<sign><digits>[.<digits>]<suffix>`, the suffix binary (`Ki`…`Ei`), decimal SI
/// (`n u m "" k M G T P E`) or an exponent (`e3`, `E-2`).
fn parse(text: &str) -> Option<Canonical> {
    let (negative, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_len = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    let (number, suffix) = body.split_at(number_len);
    let mut mantissa: u128 = 0;
    let mut exp10: i64 = 0;
    let mut digits = 0;
    let mut seen_dot = false;
    for byte in number.bytes() {
        if byte == b'.' {
            if seen_dot {
                return None;
            }
            seen_dot = true;
            continue;
        }
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(u128::from(byte - b'0'))?;
        digits += 1;
        if seen_dot {
            exp10 -= 1;
        }
    }
    if digits == 0 {
        return None;
    }
    let (suffix10, suffix2) = suffix_exponents(suffix)?;
    exp10 += suffix10;
    if mantissa == 0 {
        return Some(Canonical {
            negative: false,
            rest: 0,
            p2: 0,
            p5: 0,
        });
    }
    let (mut twos, mut fives) = (0, 0);
    while mantissa.is_multiple_of(2) {
        mantissa /= 2;
        twos += 1;
    }
    while mantissa.is_multiple_of(5) {
        mantissa /= 5;
        fives += 1;
    }
    Some(Canonical {
        negative,
        rest: mantissa,
        p2: exp10 + suffix2 + twos,
        p5: exp10 + fives,
    })
}

/// The powers of 10 and 2 a suffix stands for.
fn suffix_exponents(suffix: &str) -> Option<(i64, i64)> {
    let decimal = |e| Some((e, 0));
    let binary = |e| Some((0, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            decimal(exponent.parse().ok()?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_quantities() {
        for (a, b) in [
            (json!("1Gi"), json!("1024Mi")),
            (json!("1000m"), json!("1")),
            (json!("1000m"), json!(1)),
            (json!("0.5"), json!("500m")),
            (json!(0.5), json!("500m")),
            (json!("1e3"), json!("1k")),
            (json!("1.5Gi"), json!("1536Mi")),
            (json!("0"), json!("0Gi")),
            (json!("-0"), json!("0m")),
            (json!("+2"), json!("2000m")),
            (json!("1E"), json!("1000P")),
            (json!("100Mi"), json!("104857600")),
        ] {
            assert!(equal(&a, &b), "{a} == {b}");
        }
    }

    #[test]
    fn different_or_invalid_quantities() {
        for (a, b) in [
            (json!("1G"), json!("1Gi")),
            (json!("1"), json!("-1")),
            (json!("abc"), json!("abc")),
            (json!("1.2.3"), json!("1.2.3")),
            (json!("1e9999999"), json!("1e9999999")),
            (
                json!("99999999999999999999999999999999999999999"),
                json!("1"),
            ),
            (json!(true), json!(true)),
            (json!("-"), json!("-")),
            (json!("1Zi"), json!("1Zi")),
        ] {
            assert!(!equal(&a, &b), "{a} != {b}");
        }
    }

    #[test]
    fn quantity_fields() {
        let fields = |path: &str| path.split('.').map(String::from).collect::<Vec<_>>();
        assert!(is_quantity_field(&fields(
            "spec.containers.resources.limits.memory"
        )));
        assert!(is_quantity_field(&fields(
            "spec.resources.requests.storage"
        )));
        let quota = ["spec", "hard", "requests.cpu"].map(String::from);
        assert!(is_quantity_field(&quota));
        assert!(is_quantity_field(&fields(
            "spec.volumes.emptyDir.sizeLimit"
        )));
        assert!(!is_quantity_field(&fields("spec.replicas")));
        assert!(!is_quantity_field(&fields("spec.resources.limits")));
    }
}
