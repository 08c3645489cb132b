//! `ValidatePodSpec`, as far as charts exercise it: containers (names, images, ports, pull
//! policy, requests within limits), restart and DNS policies, and pod template labels.

use std::collections::HashSet;

use serde_json::Value;

use super::metadata;
use super::rules::{self, Errors};
use crate::quantity;

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

fn container(c: &Value, at: &str, names: &mut HashSet<String>, errors: &mut Errors) {
    match c["name"].as_str().filter(|n| !n.is_empty()) {
        None => errors.required(&format!("{at}.name"), ""),
        Some(name) => {
            for message in rules::dns1123_label(name) {
                errors.invalid(&format!("{at}.name"), &c["name"], &message);
            }
            if !names.insert(name.to_string()) {
                errors.duplicate(&format!("{at}.name"), &c["name"]);
            }
        }
    }
    if c["image"].as_str().is_none_or(str::is_empty) {
        errors.required(&format!("{at}.image"), "");
    }
    errors.one_of(
        &format!("{at}.imagePullPolicy"),
        &c["imagePullPolicy"],
        &["Always", "IfNotPresent", "Never"],
    );
    for (i, port) in c["ports"].as_array().into_iter().flatten().enumerate() {
        let at = format!("{at}.ports[{i}]");
        if port["containerPort"].is_null() {
            errors.required(&format!("{at}.containerPort"), "");
        }
        errors.port_range(&format!("{at}.containerPort"), &port["containerPort"]);
        errors.port_range(&format!("{at}.hostPort"), &port["hostPort"]);
        errors.one_of(&format!("{at}.protocol"), &port["protocol"], PROTOCOLS);
    }
    let resources = &c["resources"];
    for kind in ["limits", "requests"] {
        non_negative(&resources[kind], &format!("{at}.resources.{kind}"), errors);
    }
    for (name, request) in resources["requests"].as_object().into_iter().flatten() {
        let (Some(request), Some(limit)) = (request.as_str(), resources["limits"][name].as_str())
        else {
            continue;
        };
        if quantity::compare(request, limit).is_some_and(std::cmp::Ordering::is_gt) {
            errors.invalid(
                &format!("{at}.resources.requests"),
                &Value::String(request.to_string()),
                &format!("must be less than or equal to {name} limit of {limit}"),
            );
        }
    }
}

/// What a Pod update may change of its spec (`ValidatePodUpdate`); anything else is refused.
const POD_UPDATE_FORBIDDEN: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Checks a Pod update: its spec changes only where [`POD_UPDATE_FORBIDDEN`] allows.
/// kube-apiserver's message goes on with a diff of its internal Go type, which krt-sim leaves
/// out.
pub(super) fn spec_update(old: &Value, new: &Value, errors: &mut Errors) {
    // Tolerations may only be added to; a negative grace period may become 1.
    let tolerations = |spec: &Value| spec["tolerations"].as_array().cloned().unwrap_or_default();
    let added_tolerations = tolerations(old)
        .iter()
        .all(|t| tolerations(new).contains(t));
    let grace = |spec: &Value| spec["terminationGracePeriodSeconds"].as_i64();
    let grace_from_negative = grace(old).is_some_and(|g| g < 0) && grace(new) == Some(1);
    let view = |spec: &Value| {
        let mut spec = spec.clone();
        for list in ["containers", "initContainers"] {
            for container in spec[list].as_array_mut().into_iter().flatten() {
                if let Some(c) = container.as_object_mut() {
                    c.remove("image");
                }
            }
        }
        if let Some(map) = spec.as_object_mut() {
            map.remove("activeDeadlineSeconds");
            if added_tolerations {
                map.remove("tolerations");
            }
            if grace_from_negative {
                map.remove("terminationGracePeriodSeconds");
            }
        }
        spec
    };
    if view(old) != view(new) {
        errors.forbidden("spec", POD_UPDATE_FORBIDDEN);
    }
}

/// Checks that every quantity of the resource list `list` (at `at`) is at least zero.
pub(super) fn non_negative(list: &Value, at: &str, errors: &mut Errors) {
    for (name, value) in list.as_object().into_iter().flatten() {
        if value
            .as_str()
            .and_then(|q| quantity::compare(q, "0"))
            .is_some_and(std::cmp::Ordering::is_lt)
        {
            errors.invalid(
                &format!("{at}[{name}]"),
                value,
                "must be greater than or equal to 0",
            );
        }
    }
}

/// Checks the PodSpec at `at` (`spec`, `spec.template.spec`); `restart` lists the restart
/// policies its owner allows.
pub fn spec(spec: &Value, at: &str, restart: &[&str], errors: &mut Errors) {
    let mut names = HashSet::new();
    match spec["containers"].as_array().filter(|c| !c.is_empty()) {
        None => errors.required(&format!("{at}.containers"), ""),
        Some(containers) => {
            for (i, c) in containers.iter().enumerate() {
                container(c, &format!("{at}.containers[{i}]"), &mut names, errors);
            }
        }
    }
    for (i, c) in spec["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        container(c, &format!("{at}.initContainers[{i}]"), &mut names, errors);
    }
    errors.one_of(
        &format!("{at}.restartPolicy"),
        &spec["restartPolicy"],
        restart,
    );
    errors.one_of(
        &format!("{at}.dnsPolicy"),
        &spec["dnsPolicy"],
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    );
    let mut volumes = HashSet::new();
    for (i, v) in spec["volumes"].as_array().into_iter().flatten().enumerate() {
        let field = format!("{at}.volumes[{i}].name");
        match v["name"].as_str().filter(|n| !n.is_empty()) {
            None => errors.required(&field, ""),
            Some(name) => {
                for message in rules::dns1123_label(name) {
                    errors.invalid(&field, &v["name"], &message);
                }
                if !volumes.insert(name.to_string()) {
                    errors.duplicate(&field, &v["name"]);
                }
            }
        }
    }
}

/// Checks a pod template at `at` (`spec.template`): its labels and PodSpec.
pub fn template(template: &Value, at: &str, restart: &[&str], errors: &mut Errors) {
    metadata::labels(
        &template["metadata"]["labels"],
        &format!("{at}.metadata.labels"),
        errors,
    );
    spec(&template["spec"], &format!("{at}.spec"), restart, errors);
}
