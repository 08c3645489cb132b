//! Validation on write: names, required fields, immutable fields, and the spec-change test that
//! decides generation bumps.

use serde_json::Value;

use crate::registry::ResourceType;
use crate::status::{ApiError, Subject, cause};

fn subject<'a>(rt: &'a ResourceType, name: &'a str) -> Subject<'a> {
    Subject {
        group: &rt.group,
        resource: &rt.plural,
        name,
    }
}

/// Checks an object name: required, and a DNS-1123 subdomain.
///
/// # Errors
/// 422 Invalid naming `metadata.name`.
pub fn check_name(rt: &ResourceType, name: &str) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::invalid(
            &rt.kind,
            &subject(rt, name),
            vec![cause(
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            )],
        ));
    }
    let valid = name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid {
        return Err(ApiError::invalid(
            &rt.kind,
            &subject(rt, name),
            vec![cause(
                "FieldValueInvalid",
                "metadata.name",
                format!(
                    "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
                ),
            )],
        ));
    }
    Ok(())
}

/// Fields that may not change once set, per kind (dotted paths under the object).
fn immutable_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Deployment" | "DaemonSet" | "ReplicaSet" => &["spec.selector"],
        "StatefulSet" => &[
            "spec.selector",
            "spec.serviceName",
            "spec.volumeClaimTemplates",
            "spec.podManagementPolicy",
        ],
        "Job" => &["spec.selector", "spec.template", "spec.completions"],
        "Service" => &["spec.clusterIP"],
        "PersistentVolumeClaim" => &[
            "spec.accessModes",
            "spec.storageClassName",
            "spec.volumeName",
            "spec.selector",
        ],
        "Secret" => &["type"],
        _ => &[],
    }
}

fn at<'a>(object: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted
        .split('.')
        .try_fold(object, |node, part| node.get(part))
}

/// Checks `object` (already defaulted) against `live`.
///
/// # Errors
/// 422 Invalid with one cause per problem (`field is immutable`, required values).
pub fn check(rt: &ResourceType, live: Option<&Value>, object: &Value) -> Result<(), ApiError> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    if let Some(live) = live {
        for field in immutable_fields(&rt.kind) {
            let before = at(live, field);
            // Unsetting an allocated clusterIP or the like is treated as keeping it.
            if before.is_some() && before != at(object, field) {
                let value = at(object, field).map_or_else(|| "null".to_string(), Value::to_string);
                causes.push(cause(
                    "FieldValueInvalid",
                    field,
                    format!("Invalid value: {value}: field is immutable"),
                ));
            }
        }
    }
    if matches!(
        rt.kind.as_str(),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
    ) && !rt.custom
    {
        let selector = &object["spec"]["selector"];
        if selector.is_null() {
            causes.push(cause(
                "FieldValueRequired",
                "spec.selector",
                "Required value",
            ));
        } else if let Some(wanted) = selector["matchLabels"].as_object() {
            let labels = &object["spec"]["template"]["metadata"]["labels"];
            if !wanted.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                causes.push(cause(
                    "FieldValueInvalid",
                    "spec.template.metadata.labels",
                    format!("Invalid value: {labels}: `selector` does not match template `labels`"),
                ));
            }
        }
        if object["spec"]["template"]["spec"]["containers"]
            .as_array()
            .is_none_or(Vec::is_empty)
        {
            causes.push(cause(
                "FieldValueRequired",
                "spec.template.spec.containers",
                "Required value",
            ));
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(&rt.kind, &subject(rt, name), causes))
    }
}

/// Whether a write changes what `metadata.generation` tracks: `spec` for built-ins, everything
/// but `metadata` and `status` for custom resources.
pub fn spec_changed(rt: &ResourceType, live: &Value, object: &Value) -> bool {
    if rt.custom {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("metadata");
                m.remove("status");
            }
            v
        };
        strip(live) != strip(object)
    } else {
        live.get("spec") != object.get("spec")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;
    use serde_json::json;

    fn rt(kind: &str) -> ResourceType {
        builtins().into_iter().find(|t| t.kind == kind).unwrap()
    }

    fn deploy(app: &str) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "a"}]}}}})
    }

    #[test]
    fn immutable_selector_is_rejected_with_the_kube_message() {
        let err = check(&rt("Deployment"), Some(&deploy("a")), &deploy("b")).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(
            err.message
                .starts_with("Deployment.apps \"web\" is invalid: spec.selector: Invalid value: "),
            "{}",
            err.message
        );
        assert!(err.message.contains("field is immutable"));
        assert!(check(&rt("Deployment"), Some(&deploy("a")), &deploy("a")).is_ok());
    }

    #[test]
    fn selector_must_match_template_and_names_must_be_valid() {
        let mut d = deploy("a");
        d["spec"]["template"]["metadata"]["labels"]["app"] = json!("x");
        assert_eq!(check(&rt("Deployment"), None, &d).unwrap_err().code, 422);
        assert!(check_name(&rt("ConfigMap"), "Bad_Name").is_err());
        assert!(check_name(&rt("ConfigMap"), "ok.name-1").is_ok());
    }
}
