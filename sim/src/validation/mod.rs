//! Validation on write, after kube-apiserver's: the types its decoder enforces, names,
//! metadata, per-kind rules ([`kinds`]), immutable fields, and the spec-change test that
//! decides generation bumps.

mod cron;
mod kinds;
mod metadata;
mod pod;
pub(crate) mod rules;

use serde_json::Value;

use crate::registry::ResourceType;
use crate::status::{ApiError, Subject};
use rules::Errors;

fn subject<'a>(rt: &'a ResourceType, name: &'a str) -> Subject<'a> {
    Subject {
        group: &rt.group,
        resource: &rt.plural,
        name,
    }
}

/// The name format a kind's objects must have: an RFC 1123 label for Namespaces, Services
/// (kube-apiserver 1.36 relaxed them from RFC 1035) and StatefulSets (their Pods' hostnames), an
/// IP address for IPAddresses, only a path segment for RBAC's kinds, PodDisruptionBudgets,
/// CertificateSigningRequests, LeaseCandidates and core Events (whose validation never checked more), what
/// `object`'s spec names for CustomResourceDefinitions (`<plural>.<group>`) and APIServices
/// (`<version>.<group>`), `<group>.<resource>` for StorageVersions, an RFC 1123 subdomain
/// otherwise (custom resources and most kinds).
fn name_problems(rt: &ResourceType, name: &str, object: &Value) -> Vec<String> {
    let spec = &object["spec"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match (rt.custom, rt.group.as_str(), rt.kind.as_str()) {
        (false, _, "Namespace" | "Service" | "StatefulSet") => rules::dns1123_label(name),
        (false, _, "IPAddress") => rules::ip_address(name),
        (false, "rbac.authorization.k8s.io" | "policy", _)
        | (false, "certificates.k8s.io", "CertificateSigningRequest")
        | (false, "coordination.k8s.io", "LeaseCandidate")
        | (false, "", "Event") => rules::path_segment(name),
        (false, "apiextensions.k8s.io", "CustomResourceDefinition") => {
            let mut problems = rules::dns1123_subdomain(name);
            if name
                != format!(
                    "{}.{}",
                    text(&spec["names"]["plural"]),
                    text(&spec["group"])
                )
            {
                problems.push("must be spec.names.plural+\".\"+spec.group".to_owned());
            }
            problems
        }
        (false, "apiregistration.k8s.io", "APIService") => {
            // The core group's is `v1.`.
            let expected = format!("{}.{}", text(&spec["version"]), text(&spec["group"]));
            match rules::path_segment(name) {
                problems if !problems.is_empty() => problems,
                _ if name != expected => {
                    vec![format!(
                        "must be `spec.version+\".\"+spec.group`: {expected:?}"
                    )]
                }
                _ => Vec::new(),
            }
        }
        (false, "internal.apiserver.k8s.io", "StorageVersion") => match name.rsplit_once('.') {
            None => vec!["name must be in the form of <group>.<resource>".to_owned()],
            Some((group, resource)) => rules::dns1123_subdomain(group)
                .into_iter()
                .map(|p| format!("the group segment {p}"))
                .chain(
                    rules::dns1035_label(resource)
                        .into_iter()
                        .map(|p| format!("the resource segment {p}")),
                )
                .collect(),
        },
        _ => rules::dns1123_subdomain(name),
    }
}

/// Checks the name of `object` (a new one, or an apply configuration): required, and of its
/// kind's format.
///
/// # Errors
/// 422 Invalid naming `metadata.name`.
pub fn check_name(rt: &ResourceType, name: &str, object: &Value) -> Result<(), ApiError> {
    let labels = &object["metadata"]["labels"];
    name_errors(rt, name, name_problems(rt, name, object), labels)
}

/// Checks the name of an Event created through `events.k8s.io/v1`, whose validation wants a
/// DNS subdomain (core v1 takes any path segment, for old clients); `core` is the core Event
/// type the error is about, as kube-apiserver's internal type is.
///
/// # Errors
/// 422 Invalid naming `metadata.name`.
pub fn check_events_api_name(core: &ResourceType, name: &str) -> Result<(), ApiError> {
    name_errors(core, name, rules::dns1123_subdomain(name), &Value::Null)
}

/// The name's `problems` as a 422, with the errors of `labels` after them: `ValidateObjectMeta`
/// goes on past a bad name.
fn name_errors(
    rt: &ResourceType,
    name: &str,
    problems: Vec<String>,
    labels: &Value,
) -> Result<(), ApiError> {
    let mut errors = Errors::default();
    if name.is_empty() {
        errors.required("metadata.name", "name or generateName is required");
    }
    for message in problems.into_iter().filter(|_| !name.is_empty()) {
        errors.invalid("metadata.name", &Value::String(name.to_string()), &message);
    }
    if errors.0.is_empty() {
        return Ok(());
    }
    metadata::labels(labels, "metadata.labels", &mut errors);
    Err(ApiError::invalid(&rt.kind, &subject(rt, name), errors.0))
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

/// A Service's allocated cluster IPs may not change (`validateClusterIPUpdate`); unsetting
/// them keeps them.
fn service_cluster_ips(live: &Value, object: &Value, errors: &mut Errors) {
    let new = &object["spec"]["clusterIPs"];
    let Some(new_ips) = new.as_array() else {
        return;
    };
    for (i, ip) in live["spec"]["clusterIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if new_ips.get(i).is_some_and(|n| n != ip) {
            errors.invalid(
                &format!("spec.clusterIPs[{i}]"),
                new,
                "may not change once set",
            );
        }
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
    let mut errors = Errors::default();
    metadata::check(object, live, &mut errors);
    if !rt.custom {
        kinds::check(&rt.kind, object, live, &mut errors);
    }
    // What an update may not change comes after what the object itself must be, as the
    // registries' `ValidateXUpdate` order them.
    if let Some(live) = live {
        if rt.kind == "Service" && !rt.custom {
            service_cluster_ips(live, object, &mut errors);
        }
        for field in immutable_fields(&rt.kind).iter().filter(|_| !rt.custom) {
            let before = at(live, field);
            // Unsetting an allocated clusterIP or the like is treated as keeping it.
            if before.is_some() && before != at(object, field) {
                let value = at(object, field).cloned().unwrap_or(Value::Null);
                errors.invalid(field, &value, "field is immutable");
            }
        }
    }
    if errors.0.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(&rt.kind, &subject(rt, name), errors.0))
    }
}

/// Whether a write changes what `metadata.generation` tracks: everything but `metadata` and
/// `status`.
pub fn spec_changed(live: &Value, object: &Value) -> bool {
    // What the registries compare: the object without its metadata and status (a `spec`, or
    // the `webhooks` of a webhook configuration, or a custom resource's other fields).
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            for field in ["apiVersion", "kind", "metadata", "status"] {
                m.remove(field);
            }
        }
        v
    };
    strip(live) != strip(object)
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
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "a", "image": "x"}]}}}})
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
        assert!(check_name(&rt("ConfigMap"), "Bad_Name", &json!({})).is_err());
        assert!(check_name(&rt("ConfigMap"), "ok.name-1", &json!({})).is_ok());
        assert!(
            check_name(&rt("Service"), "1web", &json!({})).is_ok(),
            "RelaxedServiceNameValidation (beta, on by default in 1.36): an RFC 1123 label"
        );
        assert!(check_name(&rt("Service"), "web.1", &json!({})).is_err());
        assert!(check_name(&rt("Namespace"), "a.b", &json!({})).is_err());
    }

    fn causes(kind: &str, live: Option<&Value>, object: &Value) -> Vec<(String, String)> {
        let err = check(&rt(kind), live, object).unwrap_err();
        err.details
            .and_then(|d| d.causes)
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.field.unwrap_or_default(), c.message.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn data_keys_label_values_and_schedules_name_their_field() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"bad key!": "v"}});
        let found = causes("ConfigMap", None, &cm);
        assert_eq!(found[0].0, "data[bad key!]");
        assert!(
            found[0]
                .1
                .starts_with("Invalid value: \"bad key!\": a valid config key")
        );
        let long = "a".repeat(64);
        let labelled = json!({"metadata": {"name": "c", "labels": {"app": long}}});
        assert_eq!(
            causes("ConfigMap", None, &labelled),
            [(
                "metadata.labels".to_string(),
                format!("Invalid value: \"{long}\": must be no more than 63 characters")
            )]
        );
        let cron = json!({"metadata": {"name": "c"}, "spec": {"schedule": "every day",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "a", "image": "x"}]}}}}}});
        assert_eq!(
            causes("CronJob", None, &cron),
            [(
                "spec.schedule".to_string(),
                "Invalid value: \"every day\": expected exactly 5 fields, found 2: [every day]"
                    .to_string()
            )]
        );
    }

    #[test]
    fn immutable_config_maps_keep_their_data_and_terminating_objects_their_finalizers() {
        let live = json!({"metadata": {"name": "c"}, "immutable": true, "data": {"a": "1"}});
        let changed = json!({"metadata": {"name": "c"}, "immutable": true, "data": {"a": "2"}});
        assert_eq!(
            causes("ConfigMap", Some(&live), &changed),
            [(
                "data".to_string(),
                "Forbidden: field is immutable when `immutable` is set".to_string()
            )]
        );
        let terminating = json!({"metadata": {"name": "c", "deletionTimestamp": "2024-01-01T00:00:00Z",
            "finalizers": ["a.io/x"]}});
        let more = json!({"metadata": {"name": "c", "finalizers": ["a.io/x", "b.io/y"]}});
        let found = causes("ConfigMap", Some(&terminating), &more);
        assert_eq!(found[0].0, "metadata.finalizers");
        assert!(
            found[0].1.contains("no new finalizers can be added"),
            "{found:?}"
        );
    }
}
