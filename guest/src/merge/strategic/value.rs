//! JSON comparisons used by the merge: numbers compare by value (`1 == 1.0`).

use serde_json::{Number, Value};

/// Same JSON type and value; integers and integral floats compare equal.
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => same_number(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(a), Some(b)) => a == b,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(a), Some(b)) => a == b,
            _ => a.as_f64() == b.as_f64(),
        },
    }
}

/// The string form of a merge-key value or list scalar, as Go's `%v` prints
/// it: strings bare, integral numbers without a fraction.
pub(super) fn key_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                format!("{}", f as i64)
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_numbers_are_the_same() {
        assert!(same(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!same(&json!(1), &json!("1")));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert_eq!(key_string(&json!(80.0)), key_string(&json!(80)));
        assert_eq!(key_string(&json!("x")), "x");
    }
}
