//! Server-side table output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), so
//! `kubectl get` prints the columns kube-apiserver's printers do for the common kinds (and
//! NAME/AGE for the rest, as it does for custom resources without printer columns).

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::{meta, selectors};

/// Whether an `Accept` header asks for a Table.
pub fn wanted(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"as=Table")
    })
}

/// `1d`, `3h`, `5m`, `42s`: kubectl's short durations.
fn age(object: &Value) -> String {
    let Some(created) = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(meta::parse_rfc3339)
    else {
        return "<unknown>".into();
    };
    let secs = (meta::now_secs() - created).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7_200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn text(v: &Value, default: &str) -> String {
    v.as_str().unwrap_or(default).to_string()
}

/// The columns (name, type) after NAME and before AGE, and the cells of one object.
fn columns(kind: &str) -> &'static [(&'static str, &'static str)] {
    match kind {
        "Deployment" => &[
            ("Ready", "string"),
            ("Up-to-date", "integer"),
            ("Available", "integer"),
        ],
        "ReplicaSet" => &[
            ("Desired", "integer"),
            ("Current", "integer"),
            ("Ready", "integer"),
        ],
        "StatefulSet" => &[("Ready", "string")],
        "Pod" => &[
            ("Ready", "string"),
            ("Status", "string"),
            ("Restarts", "string"),
        ],
        "Service" => &[
            ("Type", "string"),
            ("Cluster-IP", "string"),
            ("External-IP", "string"),
            ("Port(s)", "string"),
        ],
        "ConfigMap" | "Secret" => &[("Data", "integer")],
        "Namespace" => &[("Status", "string")],
        "Job" => &[("Status", "string"), ("Completions", "string")],
        "PersistentVolumeClaim" => &[("Status", "string")],
        "RoleBinding" | "ClusterRoleBinding" => &[("Role", "string")],
        "NetworkPolicy" => &[("Pod-Selector", "string")],
        "PodDisruptionBudget" => &[
            ("Min Available", "string"),
            ("Max Unavailable", "string"),
            ("Allowed Disruptions", "integer"),
        ],
        "HorizontalPodAutoscaler" => &[
            ("Reference", "string"),
            ("Targets", "string"),
            ("MinPods", "string"),
            ("MaxPods", "integer"),
            ("Replicas", "integer"),
        ],
        "StorageClass" => &[
            ("Provisioner", "string"),
            ("ReclaimPolicy", "string"),
            ("VolumeBindingMode", "string"),
            ("AllowVolumeExpansion", "string"),
        ],
        "Lease" => &[("Holder", "string")],
        _ => &[],
    }
}

/// Whether the kind's last column is `Created At` (a timestamp) rather than `Age`.
fn created_at(kind: &str) -> bool {
    matches!(kind, "Role" | "ClusterRole")
}

/// An int-or-string value as kubectl prints it, `N/A` when unset.
fn int_or_string(v: &Value) -> String {
    match v {
        Value::Null => "N/A".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn cells(kind: &str, o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let status = &o["status"];
    match kind {
        "Deployment" => vec![
            json!(format!(
                "{}/{}",
                int(&status["readyReplicas"]),
                int(&spec["replicas"])
            )),
            json!(int(&status["updatedReplicas"])),
            json!(int(&status["availableReplicas"])),
        ],
        "ReplicaSet" => vec![
            json!(int(&spec["replicas"])),
            json!(int(&status["replicas"])),
            json!(int(&status["readyReplicas"])),
        ],
        "StatefulSet" => vec![json!(format!(
            "{}/{}",
            int(&status["readyReplicas"]),
            int(&spec["replicas"])
        ))],
        "Pod" => {
            let statuses = status["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let ready = statuses.iter().filter(|c| c["ready"] == true).count();
            let total = spec["containers"].as_array().map_or(0, Vec::len);
            let restarts: i64 = statuses.iter().map(|c| int(&c["restartCount"])).sum();
            let waiting = statuses
                .iter()
                .find_map(|c| c["state"]["waiting"]["reason"].as_str());
            let phase = if o["metadata"]["deletionTimestamp"].is_null() {
                waiting.map_or_else(|| text(&status["phase"], "Pending"), str::to_string)
            } else {
                "Terminating".to_string()
            };
            vec![
                json!(format!("{ready}/{total}")),
                json!(phase),
                json!(restarts.to_string()),
            ]
        }
        "Service" => {
            let external = status["loadBalancer"]["ingress"]
                .as_array()
                .and_then(|i| i.first())
                .and_then(|i| i["ip"].as_str())
                .map_or_else(
                    || {
                        if spec["type"] == "LoadBalancer" {
                            "<pending>".to_string()
                        } else {
                            "<none>".to_string()
                        }
                    },
                    str::to_string,
                );
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .map(|ports| {
                    ports
                        .iter()
                        .map(|p| {
                            let node = p["nodePort"]
                                .as_i64()
                                .map(|n| format!(":{n}"))
                                .unwrap_or_default();
                            format!("{}{node}/{}", int(&p["port"]), text(&p["protocol"], "TCP"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            vec![
                json!(text(&spec["type"], "ClusterIP")),
                json!(text(&spec["clusterIP"], "<none>")),
                json!(external),
                json!(if ports.is_empty() {
                    "<none>".to_string()
                } else {
                    ports.join(",")
                }),
            ]
        }
        "ConfigMap" | "Secret" => {
            let count = |f: &str| o[f].as_object().map_or(0, serde_json::Map::len);
            vec![json!(count("data") + count("binaryData"))]
        }
        "Namespace" | "PersistentVolumeClaim" => vec![json!(text(&status["phase"], ""))],
        "Job" => {
            let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
            let has = |t: &str| {
                conditions
                    .iter()
                    .any(|c| c["type"] == t && c["status"] == "True")
            };
            let state = if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else {
                "Running"
            };
            vec![
                json!(state),
                json!(format!(
                    "{}/{}",
                    int(&status["succeeded"]),
                    spec["completions"].as_i64().unwrap_or(1)
                )),
            ]
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            let role = &o["roleRef"];
            vec![json!(format!(
                "{}/{}",
                text(&role["kind"], ""),
                text(&role["name"], "")
            ))]
        }
        "NetworkPolicy" => {
            let selector = selectors::label_selector_string(&spec["podSelector"]);
            vec![json!(if selector.is_empty() {
                "<none>".to_string()
            } else {
                selector
            })]
        }
        "PodDisruptionBudget" => vec![
            json!(int_or_string(&spec["minAvailable"])),
            json!(int_or_string(&spec["maxUnavailable"])),
            json!(int(&status["disruptionsAllowed"])),
        ],
        "HorizontalPodAutoscaler" => {
            let target = &spec["scaleTargetRef"];
            vec![
                json!(format!(
                    "{}/{}",
                    text(&target["kind"], ""),
                    text(&target["name"], "")
                )),
                json!("<unknown>"),
                json!(spec["minReplicas"].as_i64().unwrap_or(1).to_string()),
                json!(int(&spec["maxReplicas"])),
                json!(int(&status["currentReplicas"])),
            ]
        }
        "StorageClass" => vec![
            json!(text(&o["provisioner"], "")),
            json!(text(&o["reclaimPolicy"], "Delete")),
            json!(text(&o["volumeBindingMode"], "Immediate")),
            json!(
                o["allowVolumeExpansion"]
                    .as_bool()
                    .unwrap_or(false)
                    .to_string()
            ),
        ],
        "Lease" => vec![json!(text(&spec["holderIdentity"], "<unknown>"))],
        _ => Vec::new(),
    }
}

fn row(kind: &str, object: &Value) -> Value {
    let mut row_cells = vec![object["metadata"]["name"].clone()];
    row_cells.extend(cells(kind, object));
    row_cells.push(if created_at(kind) {
        object["metadata"]["creationTimestamp"].clone()
    } else {
        json!(age(object))
    });
    json!({
        "cells": row_cells,
        "object": {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": object["metadata"],
        },
    })
}

/// `body` (one object or a list) as a `meta.k8s.io/v1` Table.
pub fn convert(rt: &ResourceType, body: &Value) -> Value {
    // Custom resources are tabled by name and age, whatever their kind is called.
    let kind = if rt.custom { "" } else { rt.kind.as_str() };
    let mut definitions = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0})];
    definitions.extend(columns(kind).iter().map(
        |(name, ty)| json!({"name": name, "type": ty, "format": "", "description": name, "priority": 0}),
    ));
    let (last, format) = if created_at(kind) {
        ("Created At", "date")
    } else {
        ("Age", "")
    };
    definitions.push(json!({"name": last, "type": "string", "format": format,
        "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
        "priority": 0}));
    let (rows, metadata) = match body["items"].as_array() {
        Some(items) => (
            items.iter().map(|o| row(kind, o)).collect(),
            body["metadata"].clone(),
        ),
        None => (
            vec![row(kind, body)],
            json!({"resourceVersion": body["metadata"]["resourceVersion"]}),
        ),
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": Value::Array(rows),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn deployments_show_ready_up_to_date_and_available() {
        let rt = registry::builtins()
            .into_iter()
            .find(|t| t.kind == "Deployment")
            .unwrap();
        let list = json!({"metadata": {"resourceVersion": "9"}, "items": [{
            "metadata": {"name": "web", "creationTimestamp": meta::now()},
            "spec": {"replicas": 3},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}]});
        let table = convert(&rt, &list);
        let names: Vec<&str> = table["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Name", "Ready", "Up-to-date", "Available", "Age"]);
        let cells = &table["rows"][0]["cells"];
        assert_eq!(cells[0], "web");
        assert_eq!(cells[1], "2/3");
        assert_eq!(cells[4].as_str().unwrap().chars().last(), Some('s'));
        assert_eq!(table["metadata"]["resourceVersion"], "9");
        assert!(wanted(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
        assert!(!wanted("application/json"));
    }

    #[test]
    fn rbac_and_policy_kinds_show_their_printer_columns() {
        let find = |group: &str, kind: &str| {
            registry::builtins()
                .into_iter()
                .find(|t| t.group == group && t.kind == kind)
                .unwrap()
        };
        let names = |table: &Value| -> Vec<String> {
            table["columnDefinitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect()
        };
        let created = "2025-01-01T00:00:00Z";
        let role = json!({"metadata": {"name": "reader", "creationTimestamp": created}});
        let table = convert(&find("rbac.authorization.k8s.io", "Role"), &role);
        assert_eq!(names(&table), ["Name", "Created At"]);
        assert_eq!(table["rows"][0]["cells"], json!(["reader", created]));
        let binding = json!({"metadata": {"name": "b", "creationTimestamp": meta::now()},
            "roleRef": {"kind": "Role", "name": "reader"}});
        let table = convert(&find("rbac.authorization.k8s.io", "RoleBinding"), &binding);
        assert_eq!(names(&table), ["Name", "Role", "Age"]);
        assert_eq!(table["rows"][0]["cells"][1], "Role/reader");
        let pdb = json!({"metadata": {"name": "p", "creationTimestamp": meta::now()},
            "spec": {"minAvailable": 1}, "status": {"disruptionsAllowed": 2}});
        let table = convert(&find("policy", "PodDisruptionBudget"), &pdb);
        assert_eq!(
            table["rows"][0]["cells"].as_array().unwrap()[1..4],
            [json!("1"), json!("N/A"), json!(2)]
        );
    }
}
