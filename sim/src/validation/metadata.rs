//! `ValidateObjectMeta` and its update counterpart: label and annotation keys and values,
//! finalizer names, and no new finalizers on a terminating object.

use serde_json::{Map, Value};

use super::rules::{self, Errors};

/// The total size annotations may have.
const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Checks a label map at `field` (`metadata.labels`, `spec.selector.matchLabels`, ...).
pub fn labels(labels: &Value, field: &str, errors: &mut Errors) {
    for (key, value) in labels.as_object().into_iter().flatten() {
        for message in rules::qualified_name(key) {
            errors.invalid(field, &Value::String(key.clone()), &message);
        }
        for message in rules::label_value(value.as_str().unwrap_or_default()) {
            errors.invalid(field, value, &message);
        }
    }
}

fn annotations(annotations: &Map<String, Value>, errors: &mut Errors) {
    let mut size = 0;
    for (key, value) in annotations {
        for message in rules::qualified_name(&key.to_lowercase()) {
            errors.invalid(
                "metadata.annotations",
                &Value::String(key.clone()),
                &message,
            );
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_MAX {
        errors.too_long("metadata.annotations", ANNOTATIONS_MAX);
    }
}

fn finalizer_names(object: &Value) -> Vec<&str> {
    object["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Checks `object`'s metadata (and, on updates, against `live`'s).
pub fn check(object: &Value, live: Option<&Value>, errors: &mut Errors) {
    let meta = &object["metadata"];
    labels(&meta["labels"], "metadata.labels", errors);
    if let Some(a) = meta["annotations"].as_object() {
        annotations(a, errors);
    }
    let finalizers = finalizer_names(object);
    for (i, name) in finalizers.iter().enumerate() {
        for message in rules::qualified_name(name) {
            errors.invalid(
                &format!("metadata.finalizers[{i}]"),
                &Value::String((*name).to_string()),
                &message,
            );
        }
    }
    if let Some(live) = live
        && !live["metadata"]["deletionTimestamp"].is_null()
    {
        let before = finalizer_names(live);
        let added: Vec<String> = finalizers
            .iter()
            .filter(|f| !before.contains(f))
            .map(|f| format!("{f:?}"))
            .collect();
        if !added.is_empty() {
            let message = format!(
                "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                added.join(", ")
            );
            // Twice, as kube-apiserver reports it: its generic update path and the kind's
            // strategy both validate the metadata update (the message names it once).
            for _ in 0..2 {
                errors.forbidden("metadata.finalizers", &message);
            }
        }
    }
}
