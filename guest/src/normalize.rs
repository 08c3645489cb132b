//! Removing server-set fields from objects (k8s-semantics §2 and §8.2 D2).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The annotation `kubectl apply` stores the last applied configuration in.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The top-level fields normalization removes.
const SERVER_TOP_LEVEL: [&str; 1] = ["status"];

/// `metadata` fields the API server sets (Kusion's list).
const SERVER_METADATA: [&str; 6] = [
    "managedFields",
    "resourceVersion",
    "generation",
    "uid",
    "creationTimestamp",
    "selfLink",
];

/// Removes what the server sets (Kusion's normalisation, as the `logic.normalize` export does):
/// `status`, `metadata.{managedFields,resourceVersion,generation,uid,creationTimestamp,selfLink}`.
///
/// Values that are not objects are returned unchanged.
pub fn normalize(object: &Value) -> Value {
    strip_server_fields(object, &SERVER_METADATA)
}

/// What the runtime's answers (apply, read, watch) carry: [`normalize`], except that
/// `metadata.uid` stays, so that a caller can tell this object from a later one of the
/// same name (krt records it, and deletes only the object with that UID).
pub fn normalize_result(object: &Value) -> Value {
    strip_server_fields(object, &RESULT_DROPPED)
}

/// [`normalize_result`] of an object the caller gives up: the fields are removed in place,
/// in order, and nothing else is copied (a watched object can be a mebibyte).
pub fn into_result(mut object: Value) -> Value {
    if let Some(root) = object.as_object_mut() {
        for key in SERVER_TOP_LEVEL {
            root.shift_remove(key);
        }
        if let Some(Value::Object(meta)) = root.get_mut("metadata") {
            for field in RESULT_DROPPED {
                meta.shift_remove(field);
            }
        }
    }
    object
}

/// The `metadata` fields [`normalize_result`] removes: the server's, but `uid`.
const RESULT_DROPPED: [&str; 5] = [
    "managedFields",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "selfLink",
];

/// [`normalize_result`] of the object JSON `text` holds, parsed once: `status` and the removed
/// `metadata` fields are skipped as they are read, never built (they are often most of an
/// object). Text that is not an object with an object `metadata` is parsed whole and normalized
/// as [`normalize_result`] does, with its errors.
pub fn parse_result(text: &str) -> Result<Value, serde_json::Error> {
    let fields = Stripped {
        dropped: &SERVER_TOP_LEVEL,
        metadata: Some(&RESULT_DROPPED),
    };
    parse_stripped(text, fields, |whole| normalize_result(&whole))
}

/// The object JSON `text` holds, without `fields`, parsed once; text that is not an object
/// with an object `metadata` parsed whole and then `stripped`, with its errors.
fn parse_stripped(
    text: &str,
    fields: Stripped<'_>,
    stripped: impl FnOnce(Value) -> Value,
) -> Result<Value, serde_json::Error> {
    let mut input = serde_json::Deserializer::from_str(text);
    let parsed = input
        .deserialize_map(fields)
        .and_then(|object| input.end().map(|()| object));
    match parsed {
        Ok(object) => Ok(Value::Object(object)),
        Err(_) => serde_json::from_str(text).map(stripped),
    }
}

/// `metadata.managedFields`, alone of the server's fields, dropped from an object.
const MANAGED_FIELDS: [&str; 1] = ["managedFields"];

/// `object` without `metadata.managedFields` (in place; other values unchanged).
pub fn without_managed_fields(mut object: Value) -> Value {
    if let Some(Value::Object(meta)) = object.get_mut("metadata") {
        meta.shift_remove(MANAGED_FIELDS[0]);
    }
    object
}

/// [`without_managed_fields`] of the object JSON `text` holds, parsed once: `managedFields`
/// is skipped as it is read, never built. Text that is not an object with an object
/// `metadata` is parsed whole, with its errors.
pub fn parse_live(text: &str) -> Result<Value, serde_json::Error> {
    let fields = Stripped {
        dropped: &[],
        metadata: Some(&MANAGED_FIELDS),
    };
    parse_stripped(text, fields, without_managed_fields)
}

/// A JSON object without the fields `dropped`, its `metadata` (when `metadata` is given)
/// without those fields in turn.
struct Stripped<'a> {
    dropped: &'a [&'a str],
    metadata: Option<&'a [&'a str]>,
}

impl<'de> DeserializeSeed<'de> for Stripped<'_> {
    type Value = Map<String, Value>;

    fn deserialize<D: Deserializer<'de>>(self, input: D) -> Result<Self::Value, D::Error> {
        input.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Stripped<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = fields.next_key::<String>()? {
            if self.dropped.contains(&key.as_str()) {
                fields.next_value::<IgnoredAny>()?;
                continue;
            }
            let value = match (key.as_str(), self.metadata) {
                ("metadata", Some(dropped)) => Value::Object(fields.next_value_seed(Stripped {
                    dropped,
                    metadata: None,
                })?),
                _ => fields.next_value::<Value>()?,
            };
            out.insert(key, value);
        }
        Ok(out)
    }
}

/// `object` without `status` and the `metadata` fields named in `fields`, in
/// its order. Only what is kept is copied (`managedFields` is often most of
/// an object).
fn strip_server_fields(object: &Value, fields: &[&str]) -> Value {
    let Some(root) = object.as_object() else {
        return object.clone();
    };
    let out = root
        .iter()
        .filter(|(key, _)| !SERVER_TOP_LEVEL.contains(&key.as_str()))
        .map(|(key, value)| {
            let value = match (key.as_str(), value) {
                ("metadata", Value::Object(meta)) => Value::Object(
                    meta.iter()
                        .filter(|(field, _)| !fields.contains(&field.as_str()))
                        .map(|(field, v)| (field.clone(), v.clone()))
                        .collect(),
                ),
                _ => value.clone(),
            };
            (key.clone(), value)
        })
        .collect();
    Value::Object(out)
}

/// D2 normalisation for comparing: [`normalize`] plus the last-applied annotation removed,
/// empty (or `null`) `metadata.annotations`/`labels` removed, and for a `v1` Secret
/// `stringData` folded into `data` (base64, `null` values as `""`, D3) as the server does.
pub fn normalize_for_diff(object: &Value) -> Value {
    let mut out = normalize(object);
    let Some(root) = out.as_object_mut() else {
        return out;
    };
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(LAST_APPLIED_ANNOTATION);
        }
        for key in ["annotations", "labels"] {
            let empty = match meta.get(key) {
                Some(Value::Object(map)) => map.is_empty(),
                Some(Value::Null) => true,
                _ => false,
            };
            if empty {
                meta.remove(key);
            }
        }
    }
    if is_secret(root) {
        fold_string_data(root);
    }
    out
}

/// Whether `a` and `b` are exactly equal after [`normalize_for_diff`], found without building
/// either: `true` means a diff of the two has no changes. `false` is no verdict (they differ, or
/// are equal only as the diff compares: numbers by value, lists by merge key, quantities, a
/// Secret's `stringData`, ignored paths), so compare the normalized objects then.
pub fn equal_for_diff(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return false;
    };
    if is_secret(a) || is_secret(b) {
        return false;
    }
    let kept = |m: &'_ Map<String, Value>| {
        m.iter()
            .filter(|(key, _)| !SERVER_TOP_LEVEL.contains(&key.as_str()))
            .count()
    };
    kept(a) == kept(b)
        && a.iter()
            .filter(|(key, _)| !SERVER_TOP_LEVEL.contains(&key.as_str()))
            .all(|(key, value)| match (key.as_str(), b.get(key)) {
                (_, None) => false,
                ("metadata", Some(other)) => metadata_equal(value, other),
                (_, Some(other)) => value == other,
            })
}

/// `metadata` as [`equal_for_diff`] compares it: without the server's fields, the
/// last-applied annotation, and empty (or `null`) annotations and labels.
fn metadata_equal(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept = |m: &'_ Map<String, Value>| {
        m.iter()
            .filter(|(field, value)| !dropped_metadata(field, value))
            .count()
    };
    kept(a) == kept(b)
        && a.iter()
            .filter(|(field, value)| !dropped_metadata(field, value))
            .all(|(field, value)| match (field.as_str(), b.get(field)) {
                (_, None) => false,
                ("annotations", Some(other)) => annotations_equal(value, other),
                (_, Some(other)) => value == other,
            })
}

/// Whether [`normalize_for_diff`] removes `metadata.<field>` with this value.
fn dropped_metadata(field: &str, value: &Value) -> bool {
    match (field, value) {
        (_, _) if SERVER_METADATA.contains(&field) => true,
        ("annotations" | "labels", Value::Null) => true,
        ("labels", Value::Object(labels)) => labels.is_empty(),
        ("annotations", Value::Object(annotations)) => {
            annotations.keys().all(|key| key == LAST_APPLIED_ANNOTATION)
        }
        _ => false,
    }
}

/// Annotations compared without the last-applied one.
fn annotations_equal(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept =
        |m: &'_ Map<String, Value>| m.keys().filter(|k| *k != LAST_APPLIED_ANNOTATION).count();
    kept(a) == kept(b)
        && a.iter()
            .filter(|(key, _)| *key != LAST_APPLIED_ANNOTATION)
            .all(|(key, value)| b.get(key) == Some(value))
}

/// Whether a root object is a core `v1` Secret.
pub(crate) fn is_secret(root: &Map<String, Value>) -> bool {
    root.get("kind").and_then(Value::as_str) == Some("Secret")
        && root.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// Moves Secret `stringData` into `data` (base64); `stringData` wins on key clashes, as on the
/// server. `null` values become `""`; a `stringData` that is not an object is dropped.
fn fold_string_data(root: &mut Map<String, Value>) {
    use base64::Engine as _;
    let string_data = root.remove("stringData");
    let has_data = root.get("data").is_some_and(|d| !d.is_null());
    let Some(Value::Object(string_data)) = string_data else {
        normalize_null_data(root);
        return;
    };
    if !has_data && string_data.is_empty() {
        root.remove("data");
        return;
    }
    let data = root
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        for (key, value) in string_data {
            let text = match value {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            data.insert(key, Value::String(encoded));
        }
    }
    normalize_null_data(root);
}

/// Secret `data` values that are `null` compare as `""`.
fn normalize_null_data(root: &mut Map<String, Value>) {
    if let Some(data) = root.get_mut("data").and_then(Value::as_object_mut) {
        for value in data.values_mut() {
            if value.is_null() {
                *value = Value::String(String::new());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removes_server_fields() {
        let live = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "a", "namespace": "n", "uid": "u", "resourceVersion": "1",
                "generation": 2, "creationTimestamp": "t", "selfLink": "/x",
                "managedFields": [{}], "labels": {"a": "b"}
            },
            "data": {"k": "v"},
            "status": {"x": 1}
        });
        assert_eq!(
            normalize(&live),
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "n", "labels": {"a": "b"}},
                "data": {"k": "v"}
            })
        );
    }

    #[test]
    fn results_keep_the_uid() {
        let live =
            json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "1"}, "status": {}});
        assert_eq!(
            normalize_result(&live),
            json!({"metadata": {"name": "a", "uid": "u"}})
        );
        assert_eq!(
            normalize_for_diff(&live),
            json!({"metadata": {"name": "a"}})
        );
    }

    #[test]
    fn parsing_or_consuming_a_result_equals_normalizing_the_parsed_object() {
        let texts = [
            r#"{"kind":"ConfigMap","metadata":{"name":"a","uid":"u","resourceVersion":"7","managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}],"labels":{"b":"c"},"generation":2,"selfLink":"/x","creationTimestamp":"t"},"data":{"k":"v"},"status":{"phase":"x"}}"#,
            r#"{"status":1,"metadata":{"name":"a","name":"b"},"spec":{"status":"kept below the top"}}"#,
            r#"{"metadata":null,"status":{}}"#,
            r#"{"kind":"List"}"#,
            r#"[{"metadata":{"uid":"u"}}]"#,
            r#""text""#,
            "{}",
        ];
        for text in texts {
            let whole: Value = serde_json::from_str(text).unwrap();
            let normalized = normalize_result(&whole).to_string();
            assert_eq!(
                parse_result(text).unwrap().to_string(),
                normalized,
                "{text}"
            );
            assert_eq!(into_result(whole.clone()).to_string(), normalized, "{text}");
            let live = without_managed_fields(whole).to_string();
            assert_eq!(parse_live(text).unwrap().to_string(), live, "{text}");
            assert!(!live.contains("managedFields"), "{text}");
        }
        for bad in [r#"{"metadata":{"name":}"#, r#"{"a":1} trailing"#, ""] {
            let expected = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
            assert_eq!(
                parse_result(bad).unwrap_err().to_string(),
                expected,
                "{bad}"
            );
            assert_eq!(parse_live(bad).unwrap_err().to_string(), expected, "{bad}");
        }
    }

    #[test]
    fn equal_for_diff_is_equality_of_the_normalized_objects() {
        let base = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"x": "1"}, "annotations": {"y": "2"}},
            "data": {"k": "v"}});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "u", "resourceVersion": "9", "generation": 1,
                "creationTimestamp": "t", "managedFields": [{"manager": "m"}],
                "labels": {"x": "1"},
                "annotations": {"y": "2", (LAST_APPLIED_ANNOTATION): "{}"}},
            "data": {"k": "v"}, "status": {"phase": "x"}});
        let bare = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {}, "annotations": null}, "data": {"k": "v"}});
        let bare_live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "u",
                "annotations": {(LAST_APPLIED_ANNOTATION): "{}"}},
            "data": {"k": "v"}});
        let same = [
            (&base, &live),
            (&live, &base),
            (&bare, &bare_live),
            (&base, &base),
        ];
        for (a, b) in same {
            assert!(equal_for_diff(a, b), "{a} vs {b}");
            assert_eq!(normalize_for_diff(a), normalize_for_diff(b));
        }
        let mut other_value = live.clone();
        other_value["data"]["k"] = json!("w");
        let mut other_label = live.clone();
        other_label["metadata"]["labels"]["x"] = json!("2");
        let mut extra_field = live.clone();
        extra_field["immutable"] = json!(true);
        let mut extra_annotation = live.clone();
        extra_annotation["metadata"]["annotations"]["z"] = json!("3");
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "stringData": {"k": "v"}});
        let secret_live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": "dg=="}});
        let no_verdict = [
            (&base, &other_value),
            (&base, &other_label),
            (&base, &extra_field),
            (&base, &extra_annotation),
            (&base, &bare),
            // Equal as the diff compares them, which this does not decide.
            (&secret, &secret_live),
        ];
        for (a, b) in no_verdict {
            assert!(!equal_for_diff(a, b), "{a} vs {b}");
        }
        assert_eq!(
            normalize_for_diff(&secret),
            normalize_for_diff(&secret_live)
        );
        assert!(
            !equal_for_diff(&json!([1]), &json!([1])),
            "not objects: no verdict"
        );
    }

    #[test]
    fn normalize_keeps_annotations_and_non_objects() {
        let obj = json!({"metadata": {"annotations": {}}, "status": 1});
        assert_eq!(normalize(&obj), json!({"metadata": {"annotations": {}}}));
        assert_eq!(normalize(&json!([1, 2])), json!([1, 2]));
        assert_eq!(normalize(&json!({"metadata": 5})), json!({"metadata": 5}));
    }

    #[test]
    fn for_diff_drops_last_applied_and_empty_maps() {
        let obj = json!({
            "kind": "ConfigMap",
            "metadata": {
                "name": "a",
                "annotations": {LAST_APPLIED_ANNOTATION: "{}"},
                "labels": {},
            }
        });
        assert_eq!(
            normalize_for_diff(&obj),
            json!({"kind": "ConfigMap", "metadata": {"name": "a"}})
        );
        let kept = json!({"metadata": {"annotations": {"x": "y"}, "labels": null}});
        assert_eq!(
            normalize_for_diff(&kept),
            json!({"metadata": {"annotations": {"x": "y"}}})
        );
    }

    #[test]
    fn for_diff_folds_secret_string_data() {
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret",
            "data": {"a": "eA==", "n": null},
            "stringData": {"b": "hello", "a": "y", "z": null}
        });
        assert_eq!(
            normalize_for_diff(&secret),
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "data": {"a": "eQ==", "n": "", "b": "aGVsbG8=", "z": ""}
            })
        );
        let only_string = json!({"apiVersion": "v1", "kind": "Secret", "stringData": {}});
        assert_eq!(
            normalize_for_diff(&only_string),
            json!({"apiVersion": "v1", "kind": "Secret"})
        );
        let hostile =
            json!({"apiVersion": "v1", "kind": "Secret", "data": 3, "stringData": {"k": 1}});
        assert_eq!(
            normalize_for_diff(&hostile),
            json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "MQ=="}})
        );
    }
}
