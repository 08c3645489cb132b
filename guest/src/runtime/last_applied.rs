//! kubectl's `kubectl.kubernetes.io/last-applied-configuration` annotation (k8s-semantics
//! §1.1): client-side apply records the plan in it, and uses it as the three-way "original",
//! so krt and `kubectl apply` interoperate.

use crate::normalize::LAST_APPLIED_ANNOTATION;
use serde_json::{Map, Value};

/// `object` without the last-applied annotation (and without an `annotations` map it empties).
pub fn strip(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        let emptied = match meta.get_mut("annotations") {
            Some(Value::Object(annotations)) => {
                annotations.remove(LAST_APPLIED_ANNOTATION).is_some() && annotations.is_empty()
            }
            _ => false,
        };
        if emptied {
            meta.remove("annotations");
        }
    }
    out
}

/// The configuration recorded in `live`'s annotation, when it holds a JSON object.
pub fn recorded(live: &Value) -> Option<Value> {
    live.pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object)
}

/// `plan` with the annotation set to the plan itself, as `kubectl apply` sends it.
///
/// When `live` already records an equal configuration, its text is kept, so an
/// unchanged plan never changes the annotation (key order or spacing aside).
pub fn annotate(plan: &Value, live: Option<&Value>) -> Value {
    let config = strip(plan);
    let text = match live.and_then(|live| {
        let text = live
            .pointer("/metadata/annotations")?
            .get(LAST_APPLIED_ANNOTATION)?
            .as_str()?;
        (recorded(live).as_ref() == Some(&config)).then(|| text.to_owned())
    }) {
        Some(text) => text,
        None => crate::model::json_text(&config),
    };
    let mut out = config;
    if let Some(root) = out.as_object_mut() {
        let meta = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if !annotations.is_object() {
                *annotations = Value::Object(Map::new());
            }
            if let Some(annotations) = annotations.as_object_mut() {
                annotations.insert(LAST_APPLIED_ANNOTATION.to_owned(), Value::String(text));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotate_records_the_plan_without_the_annotation_itself() {
        let plan = json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
        let sent = annotate(&plan, None);
        let text = sent["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
            .as_str()
            .unwrap();
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), plan);
        assert_eq!(recorded(&sent), Some(plan.clone()));
        assert_eq!(strip(&sent), plan);
        // Annotating twice records the same plan, not a nested one.
        assert_eq!(recorded(&annotate(&sent, None)), Some(plan));
    }

    #[test]
    fn an_equal_recorded_configuration_keeps_its_text() {
        let plan = json!({"metadata": {"name": "a", "annotations": {"x": "1"}}, "data": {"b": "2", "a": "1"}});
        let text = r#"{ "data": {"a": "1", "b": "2"}, "metadata": {"annotations": {"x": "1"}, "name": "a"} }"#;
        let live = json!({"metadata": {"name": "a", "annotations": {LAST_APPLIED_ANNOTATION: text, "x": "1"}}});
        let sent = annotate(&plan, Some(&live));
        assert_eq!(
            sent["metadata"]["annotations"][LAST_APPLIED_ANNOTATION],
            text
        );
        assert_eq!(sent["metadata"]["annotations"]["x"], "1");
        let changed = json!({"metadata": {"name": "a"}, "data": {"a": "2"}});
        let sent = annotate(&changed, Some(&live));
        assert_eq!(recorded(&sent), Some(changed));
    }

    #[test]
    fn garbage_annotations_are_not_recorded_configurations() {
        for value in [json!("not json"), json!("[1]"), json!(3)] {
            let live = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: value}}});
            assert_eq!(recorded(&live), None);
        }
        let live = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: "{}"}}});
        assert_eq!(strip(&live), json!({"metadata": {}}));
    }
}
