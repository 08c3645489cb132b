//! Lenient readers for the fields health rules look at: a missing or mistyped field reads as
//! absent, never as an error (kstatus' `GetIntField` with a default).

use serde_json::Value;

/// The value at `path` (object keys only).
pub(super) fn at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |value, key| value.get(key))
}

/// The string at `path`, `None` when missing or not a string.
pub(super) fn str_at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(object, path).and_then(Value::as_str)
}

/// The integer at `path`: an `i64`, or a float with an integral value in `i64` range.
pub(super) fn int(object: &Value, path: &[&str]) -> Option<i64> {
    let value = at(object, path)?;
    if let Some(i) = value.as_i64() {
        return Some(i);
    }
    let f = value.as_f64()?;
    // `i64::MAX as f64` rounds up to 2^63, so the upper bound is exclusive.
    (f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64).then_some(f as i64)
}

/// The integer at `path`, `default` when missing or not an integer.
pub(super) fn int_or(object: &Value, path: &[&str], default: i64) -> i64 {
    int(object, path).unwrap_or(default)
}

/// Whether the boolean at `path` is `true`.
pub(super) fn is_true(object: &Value, path: &[&str]) -> bool {
    at(object, path).and_then(Value::as_bool) == Some(true)
}

/// One entry of `status.conditions`, missing strings read as `""`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Condition<'a> {
    /// `type`.
    pub type_: &'a str,
    /// `status`: `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// `reason`.
    pub reason: &'a str,
    /// `message`.
    pub message: &'a str,
}

impl<'a> Condition<'a> {
    /// Whether `status` is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }

    /// The condition's reason, or `fallback` when it has none.
    pub fn reason_or(&self, fallback: &'a str) -> &'a str {
        if self.reason.is_empty() {
            fallback
        } else {
            self.reason
        }
    }
}

/// The entries of `status.conditions` that are objects, in list order.
pub(super) fn conditions(object: &Value) -> impl Iterator<Item = Condition<'_>> {
    at(object, &["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.is_object())
        .map(|c| {
            let text = |key| c.get(key).and_then(Value::as_str).unwrap_or("");
            Condition {
                type_: text("type"),
                status: text("status"),
                reason: text("reason"),
                message: text("message"),
            }
        })
}

/// The first condition of type `type_`.
pub(super) fn condition<'a>(object: &'a Value, type_: &str) -> Option<Condition<'a>> {
    conditions(object).find(|c| c.type_ == type_)
}

/// `base`, followed by `: detail` when `detail` is not empty.
pub(super) fn with_detail(base: &str, detail: &str) -> String {
    if detail.is_empty() {
        base.to_owned()
    } else {
        format!("{base}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_is_lenient() {
        let obj = json!({"a": {"i": 3, "f": 2.0, "h": 1e300, "s": "4", "x": 2.5, "u": u64::MAX}});
        assert_eq!(int(&obj, &["a", "i"]), Some(3));
        assert_eq!(int(&obj, &["a", "f"]), Some(2));
        assert_eq!(int(&obj, &["a", "h"]), None);
        assert_eq!(int(&obj, &["a", "s"]), None);
        assert_eq!(int(&obj, &["a", "x"]), None);
        assert_eq!(int(&obj, &["a", "u"]), None);
        assert_eq!(int_or(&obj, &["a", "missing"], 7), 7);
        assert_eq!(int(&json!([1]), &["a"]), None);
    }

    #[test]
    fn conditions_skip_garbage() {
        let obj = json!({"status": {"conditions": [1, {"type": "Ready", "status": true}, {"type": "Ready", "status": "True"}]}});
        let ready = condition(&obj, "Ready").unwrap();
        assert!(!ready.is_true());
        assert_eq!(conditions(&obj).count(), 2);
        assert_eq!(ready.reason_or("X"), "X");
        assert!(condition(&json!({"status": {"conditions": {}}}), "Ready").is_none());
    }
}
