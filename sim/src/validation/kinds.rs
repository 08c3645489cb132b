//! Per-kind validation (kube's `pkg/apis/*/validation`): workloads, ConfigMaps and Secrets,
//! CronJob schedules, Services, StorageClasses and CRDs, on create and on update.

use std::collections::HashSet;

use serde_json::Value;

use super::rules::{self, Errors};
use super::{cron, metadata, pod};

const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// Data keys of a ConfigMap or Secret, and a ConfigMap's total size.
fn data_keys(object: &Value, fields: &[&str], errors: &mut Errors) {
    let mut seen = HashSet::new();
    for field in fields {
        for key in object[*field]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            let at = format!("{field}[{key}]");
            for message in rules::config_key(key) {
                errors.invalid(&at, &Value::String(key.clone()), &message);
            }
            if !seen.insert(key.clone()) {
                errors.invalid(
                    &at,
                    &Value::String(key.clone()),
                    "duplicate of key present in binaryData",
                );
            }
        }
    }
}

/// A ConfigMap or Secret marked `immutable` keeps its data and the mark.
fn frozen(object: &Value, live: &Value, fields: &[&str], errors: &mut Errors) {
    if live["immutable"] != true {
        return;
    }
    if object["immutable"] != true {
        errors.forbidden("immutable", IMMUTABLE_WHEN_SET);
    }
    for field in fields {
        let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(|m| m.is_empty());
        let (a, b) = (&object[*field], &live[*field]);
        if a != b && !(empty(a) && empty(b)) {
            errors.forbidden(field, IMMUTABLE_WHEN_SET);
        }
    }
}

fn replicas(object: &Value, errors: &mut Errors) {
    let replicas = &object["spec"]["replicas"];
    if replicas.as_i64().is_some_and(|r| r < 0) {
        errors.invalid(
            "spec.replicas",
            replicas,
            "must be greater than or equal to 0",
        );
    }
}

/// A workload's selector: present, matching its template's labels, with valid label values.
fn selector(kind: &str, object: &Value, errors: &mut Errors) {
    let selector = &object["spec"]["selector"];
    if selector.is_null() {
        errors.required("spec.selector", "");
        return;
    }
    metadata::labels(
        &selector["matchLabels"],
        "spec.selector.matchLabels",
        errors,
    );
    let labels = &object["spec"]["template"]["metadata"]["labels"];
    let empty = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.is_empty())
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty);
    if empty {
        errors.invalid(
            "spec.selector",
            selector,
            &format!("empty selector is invalid for {}", kind.to_lowercase()),
        );
    } else if let Some(wanted) = selector["matchLabels"].as_object()
        && !wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        errors.invalid(
            "spec.template.metadata.labels",
            labels,
            "`selector` does not match template `labels`",
        );
    }
}

fn cron_job(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    match spec["schedule"].as_str().filter(|s| !s.is_empty()) {
        None => errors.required("spec.schedule", ""),
        Some(schedule) if schedule.contains("TZ") => errors.invalid(
            "spec.schedule",
            &spec["schedule"],
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ),
        Some(schedule) => {
            if let Err(message) = cron::parse(schedule) {
                errors.invalid("spec.schedule", &spec["schedule"], &message);
            }
        }
    }
    errors.one_of(
        "spec.concurrencyPolicy",
        &spec["concurrencyPolicy"],
        &["Allow", "Forbid", "Replace"],
    );
    pod::template(
        &spec["jobTemplate"]["spec"]["template"],
        "spec.jobTemplate.spec.template",
        &["OnFailure", "Never"],
        errors,
    );
}

fn service(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    errors.one_of(
        "spec.type",
        &spec["type"],
        &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
    );
    let external_name = spec["type"] == "ExternalName";
    if external_name && spec["externalName"].as_str().is_none_or(str::is_empty) {
        errors.required("spec.externalName", "");
    }
    let ports = spec["ports"].as_array().cloned().unwrap_or_default();
    if ports.is_empty() && !external_name && spec["clusterIP"] != "None" {
        errors.required("spec.ports", "");
    }
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        match port["name"].as_str().filter(|n| !n.is_empty()) {
            None if ports.len() > 1 => errors.required(&format!("{at}.name"), ""),
            None => {}
            Some(name) => {
                for message in rules::dns1123_label(name) {
                    errors.invalid(&format!("{at}.name"), &port["name"], &message);
                }
                if !names.insert(name.to_string()) {
                    errors.duplicate(&format!("{at}.name"), &port["name"]);
                }
            }
        }
        if port["port"].is_null() {
            errors.required(&format!("{at}.port"), "");
        }
        errors.port_range(&format!("{at}.port"), &port["port"]);
        errors.port_range(&format!("{at}.targetPort"), &port["targetPort"]);
        errors.one_of(
            &format!("{at}.protocol"),
            &port["protocol"],
            &["SCTP", "TCP", "UDP"],
        );
    }
    metadata::labels(&spec["selector"], "spec.selector", errors);
}

/// A CRD names its group, plural and kind, and exactly one version is the storage version
/// (its name is checked with the other names').
fn custom_resource_definition(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    for (field, value) in [
        ("spec.group", &spec["group"]),
        ("spec.names.plural", &spec["names"]["plural"]),
        ("spec.names.kind", &spec["names"]["kind"]),
    ] {
        if value.as_str().is_none_or(str::is_empty) {
            errors.required(field, "");
        }
    }
    errors.one_of("spec.scope", &spec["scope"], &["Cluster", "Namespaced"]);
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    for (i, version) in versions.iter().enumerate() {
        // apiextensions.k8s.io/v1 requires a schema of every version (the structural-schema rule).
        if version["schema"]["openAPIV3Schema"].is_null() {
            errors.required(&format!("spec.versions[{i}].schema.openAPIV3Schema"), "");
        }
    }
    if versions.iter().filter(|v| v["storage"] == true).count() != 1 {
        errors.invalid(
            "spec.versions",
            &spec["versions"],
            "must have exactly one version marked as storage version",
        );
    }
}

/// An Event without an `eventTime` (a core v1 one) is in the namespace of the object it is
/// about, or in `default` when that object has none (`legacyValidateEvent`).
fn event_namespace(object: &Value, errors: &mut Errors) {
    if !object["eventTime"].is_null() {
        return;
    }
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let involved = &object["involvedObject"]["namespace"];
    let matches = match involved.as_str().unwrap_or_default() {
        "" => matches!(namespace, "" | "default"),
        theirs => theirs == namespace,
    };
    if !matches {
        errors.invalid(
            "involvedObject.namespace",
            involved,
            "does not match event.namespace",
        );
    }
}

/// Checks `object` of `kind` (already defaulted) and, on updates, its change from `live`.
pub fn check(kind: &str, object: &Value, live: Option<&Value>, errors: &mut Errors) {
    match kind {
        "Event" => event_namespace(object, errors),
        "ConfigMap" => {
            data_keys(object, &["data", "binaryData"], errors);
            // The values' bytes, as kube's ValidateConfigMap counts them: a `binaryData`
            // value decoded (decoding checked it is padded base64), no key counted.
            let bytes = |field: &str| -> usize {
                let values = object[field].as_object().into_iter().flatten();
                values
                    .filter_map(|(_, v)| v.as_str())
                    .map(|text| match field {
                        "binaryData" => {
                            let padding = text.bytes().rev().take_while(|&b| b == b'=').count();
                            text.len() / 4 * 3 - padding.min(2)
                        }
                        _ => text.len(),
                    })
                    .sum()
            };
            let size = bytes("data") + bytes("binaryData");
            if size > 1024 * 1024 {
                errors.too_long("", 1024 * 1024);
            }
            if let Some(live) = live {
                frozen(object, live, &["data", "binaryData"], errors);
            }
        }
        "Secret" => {
            data_keys(object, &["data"], errors);
            if let Some(live) = live {
                frozen(object, live, &["data"], errors);
            }
        }
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => {
            replicas(object, errors);
            selector(kind, object, errors);
            pod::template(
                &object["spec"]["template"],
                "spec.template",
                &["Always"],
                errors,
            );
        }
        "Job" => pod::template(
            &object["spec"]["template"],
            "spec.template",
            &["OnFailure", "Never"],
            errors,
        ),
        "CronJob" => cron_job(object, errors),
        "Pod" => {
            pod::spec(
                &object["spec"],
                "spec",
                &["Always", "OnFailure", "Never"],
                errors,
            );
            if let Some(live) = live {
                pod::spec_update(&live["spec"], &object["spec"], errors);
            }
        }
        "Service" => service(object, errors),
        "ResourceQuota" => pod::non_negative(&object["spec"]["hard"], "spec.hard", errors),
        "CustomResourceDefinition" => custom_resource_definition(object, errors),
        "StorageClass" => {
            if let Some(live) = live {
                if object["parameters"] != live["parameters"] {
                    errors.forbidden("parameters", "updates to parameters are forbidden.");
                }
                if object["provisioner"] != live["provisioner"] {
                    errors.invalid("provisioner", &object["provisioner"], "field is immutable");
                }
            }
        }
        _ => {}
    }
}
