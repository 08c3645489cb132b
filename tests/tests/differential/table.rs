//! The table of requests: every kind's steps, then the deletes.

use crate::Step;
use krt_testkit::kinds::{KINDS, KindSample};
use serde_json::{Value, json};

/// The kinds whose controllers write to a new object (or make others): the
/// table waits [`SETTLE_MS`] after creating one.
const CONTROLLED: &[&str] = &[
    "Namespace",
    "Service",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Pod",
    "Job",
    "CronJob",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "HorizontalPodAutoscaler",
    "PodDisruptionBudget",
    "CustomResourceDefinition",
    "ResourceQuota",
    "ReplicationController",
    "Node",
    "Endpoints",
    "EndpointSlice",
    "ServiceAccount",
    "ServiceCIDR",
];

/// How long the table waits after creating an object of a [`CONTROLLED`] kind.
pub const SETTLE_MS: u64 = 1500;

/// The kinds whose watch is part of the table (a watch waits out its timeout).
const WATCHED: &[&str] = &["ConfigMap", "Deployment", "Service", "Role", "Widget"];

/// The table: every kind's steps, then the deletes in reverse order (the
/// namespace, created first, goes last).
pub fn table() -> Vec<Step> {
    let mut steps = Vec::new();
    let mut deletes = Vec::new();
    for kind in KINDS {
        let object: Value = serde_saphyr::from_str(kind.yaml).expect("a kind's manifest");
        let name = object["metadata"]["name"]
            .as_str()
            .expect("a name")
            .to_owned();
        let collection = kind.url();
        let item = format!("{collection}/{name}");
        let id = |what: &str| format!("{} {} {name}: {what}", kind.api_version, kind.kind);
        let step = |what: &str,
                    method: &str,
                    path: &str,
                    content_type: Option<&str>,
                    body: Option<Value>| Step {
            content_type: content_type.map(Into::into),
            body,
            ..Step::new(id(what), method, path)
        };
        // Its controllers write to what a step of a controlled kind makes or changes.
        let settled = |step: Step| match CONTROLLED.contains(&kind.kind) {
            true => step.settle(SETTLE_MS),
            false => step,
        };
        let renamed = |suffix: &str| {
            let mut copy = object.clone();
            copy["metadata"]["name"] = json!(format!("{name}{suffix}"));
            copy
        };
        let json = Some("application/json");
        steps.push(settled(step(
            "create",
            "POST",
            &collection,
            json,
            Some(object.clone()),
        )));
        steps.push(step(
            "create again",
            "POST",
            &collection,
            json,
            Some(object.clone()),
        ));
        steps.push(step("get", "GET", &item, None, None));
        let apply = format!("{item}?fieldManager=krt-differential&force=true");
        let yaml = Some("application/apply-patch+yaml");
        steps.push(step("apply", "PATCH", &apply, yaml, Some(object.clone())));
        steps.push(step(
            "apply unchanged",
            "PATCH",
            &apply,
            yaml,
            Some(object.clone()),
        ));
        steps.push(step(
            "merge patch",
            "PATCH",
            &item,
            Some("application/merge-patch+json"),
            Some(json!({"metadata": {"labels": {"differential": "merge"}}})),
        ));
        // The patch replaces every annotation, controllers' too: they put theirs back.
        steps.push(settled(step(
            "json patch",
            "PATCH",
            &item,
            Some("application/json-patch+json"),
            Some(
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"differential": "json"}}]),
            ),
        )));
        if !is_custom(kind) {
            steps.push(step(
                "strategic merge patch",
                "PATCH",
                &item,
                Some("application/strategic-merge-patch+json"),
                Some(json!({"metadata": {"labels": {"differential": "strategic"}}})),
            ));
        }
        let mut stale = object.clone();
        stale["metadata"]["resourceVersion"] = json!("1");
        steps.push(step(
            "update with a stale resourceVersion",
            "PUT",
            &item,
            json,
            Some(stale),
        ));
        steps.push(step(
            "dry-run create",
            "POST",
            &format!("{collection}?dryRun=All"),
            json,
            Some(renamed("-dry")),
        ));
        steps.push(step(
            "the dry run stored nothing",
            "GET",
            &format!("{item}-dry"),
            None,
            None,
        ));
        let label = if is_custom(kind) {
            "merge"
        } else {
            "strategic"
        };
        steps.push(step(
            "list by label",
            "GET",
            &format!("{collection}?labelSelector=differential%3D{label}"),
            None,
            None,
        ));
        steps.push(step(
            "list by field",
            "GET",
            &format!("{collection}?fieldSelector=metadata.name%3D{name}"),
            None,
            None,
        ));
        let mut unknown = renamed("-strict");
        unknown["spec-typo"] = json!(true);
        steps.push(step(
            "unknown field, Strict",
            "POST",
            &format!("{collection}?fieldValidation=Strict"),
            json,
            Some(unknown.clone()),
        ));
        unknown["metadata"]["name"] = json!(format!("{name}-warn"));
        // It creates an object, which its controllers then write to.
        steps.push(settled(step(
            "unknown field, Warn",
            "POST",
            &format!("{collection}?fieldValidation=Warn"),
            json,
            Some(unknown),
        )));
        steps.push(step(
            "invalid name",
            "POST",
            &collection,
            json,
            Some(renamed("_Not.Valid")),
        ));
        let mut bad_label = renamed("-label");
        bad_label["metadata"]["labels"] = json!({"differential": "not valid!"});
        steps.push(step(
            "invalid label value",
            "POST",
            &collection,
            json,
            Some(bad_label),
        ));
        let mut wrong_type = renamed("-type");
        wrong_type["metadata"]["labels"] = json!("differential");
        steps.push(step(
            "labels of the wrong type",
            "POST",
            &collection,
            json,
            Some(wrong_type),
        ));
        // Served for the kinds that have them, 404 for the others.
        steps.push(step(
            "get status",
            "GET",
            &format!("{item}/status"),
            None,
            None,
        ));
        steps.push(step(
            "get scale",
            "GET",
            &format!("{item}/scale"),
            None,
            None,
        ));
        // A new scale is a rollout: its controllers write.
        steps.push(settled(step(
            "patch scale",
            "PATCH",
            &format!("{item}/scale"),
            Some("application/merge-patch+json"),
            Some(json!({"spec": {"replicas": 2}})),
        )));
        // A write through `/status` keeps the spec, and keeps or drops metadata as the
        // kind's status strategy says; 404 where the kind has no status.
        steps.push(settled(step(
            "patch status",
            "PATCH",
            &format!("{item}/status"),
            Some("application/merge-patch+json"),
            Some(json!({"metadata": {"labels": {"differential": "status"}}})),
        )));
        steps.push(step("get after the status patch", "GET", &item, None, None));
        if WATCHED.contains(&kind.kind) {
            steps.push(step(
                "watch from resourceVersion 0",
                "GET",
                &format!("{collection}?watch=true&resourceVersion=0&timeoutSeconds=1"),
                None,
                None,
            ));
        }
        deletes.push(vec![
            step(
                "delete the Warn object",
                "DELETE",
                &format!("{item}-warn"),
                None,
                None,
            ),
            step(
                "delete the invalid name's object",
                "DELETE",
                &format!("{item}_Not.Valid"),
                None,
                None,
            ),
            step(
                "delete in the foreground",
                "DELETE",
                &item,
                json,
                Some(json!({"propagationPolicy": "Foreground"})),
            ),
            step(
                "delete a missing object",
                "DELETE",
                &format!("{item}-missing"),
                None,
                None,
            ),
        ]);
    }
    steps.extend(crate::categories::steps());
    steps.extend(deletes.into_iter().rev().flatten());
    steps
}

/// A custom resource (no strategic merge patch).
pub fn is_custom(kind: &KindSample) -> bool {
    kind.kind == "Widget"
}
