//! Server-side table output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), so
//! `kubectl get` prints the columns kube-apiserver's printers do for the common kinds (and
//! NAME/AGE for the rest), and a custom resource's the columns its CRD declares
//! (`additionalPrinterColumns`, evaluated as apiextensions-apiserver's table convertor does).

use std::sync::LazyLock;

use jsonpath_rust::JsonPath;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::{events, meta, selectors};

/// Whether an `Accept` header asks for a Table.
pub fn wanted(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        params.contains(&"as=Table")
    })
}

/// What a Table row carries of its object (the `includeObject` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    /// Nothing.
    None,
    /// Its metadata, as a `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl Include {
    /// The `includeObject` parameter's value.
    ///
    /// # Errors
    /// 400 for a value other than `None`, `Metadata` and `Object`.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("" | "Metadata") => Ok(Self::Metadata),
            Some("None") => Ok(Self::None),
            Some("Object") => Ok(Self::Object),
            Some(other) => Err(ApiError::bad_request(format!(
                "unrecognized includeObject value: {other:?}"
            ))),
        }
    }
}

/// Whether an `Accept` header asks for metadata only (`as=PartialObjectMetadata` or
/// `as=PartialObjectMetadataList`, as client-go's metadata client does).
pub fn metadata_wanted(accept: &str) -> bool {
    accept.split(',').any(|part| {
        part.split(';')
            .map(str::trim)
            .any(|p| p == "as=PartialObjectMetadata" || p == "as=PartialObjectMetadataList")
    })
}

/// `object`'s metadata as a `PartialObjectMetadata`.
fn partial_metadata(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
        "metadata": object["metadata"]})
}

/// `body` (one object or a list) as `PartialObjectMetadata`, or a `PartialObjectMetadataList`.
pub fn metadata_only(body: &Value) -> Value {
    match body["items"].as_array() {
        Some(items) => json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": body["metadata"],
            "items": items.iter().map(partial_metadata).collect::<Vec<_>>()}),
        None => partial_metadata(body),
    }
}

/// How long ago `timestamp` (RFC 3339) was, as apimachinery's `duration.HumanDuration` prints
/// it (`42s`, `3m20s`, `5h`, `2d3h`, `1y10d`); `<unknown>` when unset, `<invalid>` when
/// malformed or in the future.
fn since(timestamp: &Value) -> String {
    let Some(text) = timestamp.as_str() else {
        return "<unknown>".into();
    };
    let Some(then) = meta::parse_rfc3339(text) else {
        return "<invalid>".into();
    };
    human_duration(meta::now_secs() - then)
}

/// apimachinery's `duration.HumanDuration` of `secs` seconds.
fn human_duration(secs: i64) -> String {
    let with = |major: i64, unit: &str, minor: i64, minor_unit: &str| {
        if minor == 0 {
            format!("{major}{unit}")
        } else {
            format!("{major}{unit}{minor}{minor_unit}")
        }
    };
    let (minutes, hours) = (secs / 60, secs / 3_600);
    let days = hours / 24;
    match secs {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 120 => format!("{s}s"),
        _ if minutes < 10 => with(minutes, "m", secs % 60, "s"),
        _ if minutes < 180 => format!("{minutes}m"),
        _ if hours < 8 => with(hours, "h", minutes % 60, "m"),
        _ if hours < 48 => format!("{hours}h"),
        _ if hours < 24 * 8 => with(days, "d", hours % 24, "h"),
        _ if hours < 24 * 365 * 2 => format!("{days}d"),
        _ if hours < 24 * 365 * 8 => with(days / 365, "y", days % 365, "d"),
        _ => format!("{}y", days / 365),
    }
}

/// An object's age, as the `Age` column shows it.
fn age(object: &Value) -> String {
    since(&object["metadata"]["creationTimestamp"])
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
    table_row(row_cells, object)
}

/// The Table columns kube-apiserver's printers define for built-in kinds, recorded from a real
/// server with the differential table (`table_columns.json`, by `<apiVersion> <Kind>`); found
/// by group and kind, as a printer serves every version of its kind. Only the kinds krt-sim
/// prints every column of ([`prints_all`]) are kept, once, when the file is read.
fn recorded_columns(rt: &ResourceType) -> Option<&'static Vec<Value>> {
    static COLUMNS: LazyLock<Vec<(String, String, Vec<Value>)>> = LazyLock::new(|| {
        let file: Value = serde_json::from_str(include_str!("table_columns.json"))
            .expect("table_columns.json is JSON");
        file["columns"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(key, columns)| {
                let (api_version, kind) = key.split_once(' ')?;
                let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
                let columns = columns.as_array().filter(|c| prints_all(kind, c))?;
                Some((group.to_string(), kind.to_string(), columns.clone()))
            })
            .collect()
    });
    COLUMNS
        .iter()
        .find(|(group, kind, _)| *group == rt.group && *kind == rt.kind)
        .map(|(_, _, columns)| columns)
}

/// Whether krt-sim computes a cell for each of the `columns` kube-apiserver defines for `kind`:
/// only then are they its Table's columns (otherwise NAME, its [`columns`] and AGE are).
fn prints_all(kind: &str, columns: &[Value]) -> bool {
    let known = named_cells(kind, &json!({}));
    columns
        .iter()
        .all(|c| known.iter().any(|(name, _)| c["name"] == *name))
}

/// Every cell krt-sim prints for `object` of `kind`, by column name: the name, the kind's
/// columns ([`columns`], [`cells`]), its wide columns ([`wide_cells`]), and its age.
fn named_cells(kind: &str, object: &Value) -> Vec<(&'static str, Value)> {
    let mut named = vec![("Name", object["metadata"]["name"].clone())];
    named.extend(
        columns(kind)
            .iter()
            .map(|(name, _)| *name)
            .zip(cells(kind, object)),
    );
    named.extend(wide_cells(kind, object));
    named.push(("Age", json!(age(object))));
    named.push((
        "Created At",
        object["metadata"]["creationTimestamp"].clone(),
    ));
    named
}

/// `text`, or `<none>` when it is empty.
fn none_if_empty(text: String) -> Value {
    json!(if text.is_empty() {
        "<none>".to_string()
    } else {
        text
    })
}

/// The names and images of a pod template's containers, and a selector, as the workload
/// printers' wide columns show them.
fn workload_cells(template: &Value, selector: String) -> Vec<(&'static str, Value)> {
    let containers = template["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let of = |field: &str| {
        containers
            .iter()
            .map(|c| text(&c[field], ""))
            .collect::<Vec<_>>()
    };
    vec![
        ("Containers", json!(of("name").join(","))),
        ("Images", json!(of("image").join(","))),
        ("Selector", none_if_empty(selector)),
    ]
}

/// The cells of the columns the printers add beyond [`columns`]: wide ones (`-o wide`), and a
/// Secret's type, a Job's duration, a Node's status, roles and version.
fn wide_cells(kind: &str, o: &Value) -> Vec<(&'static str, Value)> {
    let spec = &o["spec"];
    let status = &o["status"];
    let mut named = match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" => workload_cells(
            &spec["template"],
            selectors::label_selector_string(&spec["selector"]),
        ),
        "ReplicationController" => workload_cells(
            &spec["template"],
            selectors::label_selector_string(&json!({"matchLabels": spec["selector"]})),
        ),
        "Pod" => {
            let gates = spec["readinessGates"].as_array().map_or(0, Vec::len);
            let ready_gates = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| {
                    c["status"] == "True"
                        && spec["readinessGates"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|g| g["conditionType"] == c["type"])
                })
                .count();
            vec![
                ("IP", json!(text(&status["podIP"], "<none>"))),
                ("Node", json!(text(&spec["nodeName"], "<none>"))),
                (
                    "Nominated Node",
                    json!(text(&status["nominatedNodeName"], "<none>")),
                ),
                (
                    "Readiness Gates",
                    json!(if gates == 0 {
                        "<none>".to_string()
                    } else {
                        format!("{ready_gates}/{gates}")
                    }),
                ),
            ]
        }
        "Service" => {
            let selector =
                selectors::label_selector_string(&json!({"matchLabels": spec["selector"]}));
            vec![("Selector", none_if_empty(selector))]
        }
        "Secret" => vec![("Type", json!(text(&o["type"], "")))],
        "Node" => node_cells(o),
        "RoleBinding" | "ClusterRoleBinding" => {
            let subjects = o["subjects"].as_array().cloned().unwrap_or_default();
            let of = |kind: &str| {
                let names: Vec<String> = subjects
                    .iter()
                    .filter(|s| s["kind"] == kind)
                    .map(|s| match kind {
                        "ServiceAccount" => {
                            format!("{}/{}", text(&s["namespace"], ""), text(&s["name"], ""))
                        }
                        _ => text(&s["name"], ""),
                    })
                    .collect();
                json!(names.join(", "))
            };
            vec![
                ("Users", of("User")),
                ("Groups", of("Group")),
                ("ServiceAccounts", of("ServiceAccount")),
            ]
        }
        _ => Vec::new(),
    };
    if kind == "Job" {
        named.push(("Duration", job_duration(status)));
    }
    named
}

/// How long a Job ran (to its completion, or until now), empty before it starts.
fn job_duration(status: &Value) -> Value {
    let Some(start) = status["startTime"].as_str().and_then(meta::parse_rfc3339) else {
        return json!("");
    };
    let end = status["completionTime"]
        .as_str()
        .and_then(meta::parse_rfc3339)
        .unwrap_or_else(meta::now_secs);
    json!(human_duration(end - start))
}

/// A Node's printer cells: status (its Ready condition, and whether it is cordoned), roles,
/// kubelet version, addresses and system information.
fn node_cells(o: &Value) -> Vec<(&'static str, Value)> {
    let status = &o["status"];
    let mut state: Vec<String> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "Ready")
        .map(|c| match c["status"] == "True" {
            true => "Ready".to_string(),
            false => "NotReady".to_string(),
        })
        .take(1)
        .collect();
    if state.is_empty() {
        state.push("Unknown".into());
    }
    if o["spec"]["unschedulable"] == true {
        state.push("SchedulingDisabled".into());
    }
    let mut roles: Vec<String> = o["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(
            |(key, value)| match key.strip_prefix("node-role.kubernetes.io/") {
                Some(role) if !role.is_empty() => Some(role.to_string()),
                _ if key == "kubernetes.io/role" => value.as_str().map(str::to_string),
                _ => None,
            },
        )
        .collect();
    roles.sort();
    let address = |kind: &str| {
        status["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == kind)
            .map_or_else(|| "<none>".to_string(), |a| text(&a["address"], "<none>"))
    };
    let info = &status["nodeInfo"];
    let known = |v: &Value| match v.as_str() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "<unknown>".to_string(),
    };
    vec![
        ("Status", json!(state.join(","))),
        ("Roles", none_if_empty(roles.join(","))),
        ("Version", json!(text(&info["kubeletVersion"], ""))),
        ("Internal-IP", json!(address("InternalIP"))),
        ("External-IP", json!(address("ExternalIP"))),
        ("OS-Image", json!(known(&info["osImage"]))),
        ("Kernel-Version", json!(known(&info["kernelVersion"]))),
        (
            "Container-Runtime",
            json!(known(&info["containerRuntimeVersion"])),
        ),
    ]
}

/// What the Name column says of itself (`ObjectMeta.name`'s description).
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// What the Age column says of itself (`ObjectMeta.creationTimestamp`'s description).
const CREATED_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn name_column() -> Value {
    json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0})
}

/// The printer columns a custom resource version is tabled by: its CRD's
/// `additionalPrinterColumns`, or (as apiextensions-apiserver serves a version declaring none)
/// one `Age` column of `.metadata.creationTimestamp`.
fn custom_columns(rt: &ResourceType) -> Vec<Value> {
    if rt.printer_columns.is_empty() {
        vec![
            json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
            "description": CREATED_DESCRIPTION}),
        ]
    } else {
        rt.printer_columns.clone()
    }
}

/// A printer column's definition in the Table (`jsonPath` becomes the description when the
/// column has none, as apiextensions-apiserver's table convertor words it).
fn custom_definition(column: &Value) -> Value {
    let path = column["jsonPath"].as_str().unwrap_or_default();
    let description = column["description"]
        .as_str()
        .filter(|d| !d.is_empty())
        .map_or_else(
            || format!("Custom resource definition column (in JSONPath format): {path}"),
            str::to_string,
        );
    json!({"name": column["name"], "type": column["type"],
        "format": column["format"].as_str().unwrap_or_default(),
        "description": description, "priority": column["priority"].as_i64().unwrap_or(0)})
}

/// The cell of one printer column for `object`: the first value its JSONPath selects (kube's
/// `util/jsonpath` with missing keys allowed), shaped by the column's type; `null` (kubectl's
/// empty cell) when nothing is selected or the value is not of the type.
fn custom_cell(column: &Value, object: &Value) -> Value {
    let path = format!("${}", column["jsonPath"].as_str().unwrap_or_default());
    let Some(value) = object
        .query(&path)
        .ok()
        .and_then(|found| found.first().copied())
    else {
        return Value::Null;
    };
    match (column["type"].as_str().unwrap_or_default(), value) {
        ("string", Value::String(s)) => json!(s),
        ("string", Value::Null) => Value::Null,
        ("string", other) => json!(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .map_or_else(|| json!(n.as_f64().map(|f| f.trunc() as i64)), |i| json!(i)),
        ("number", Value::Number(n)) => json!(n.as_f64()),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(_)) => json!(since(value)),
        _ => Value::Null,
    }
}

/// The Table row of `object`: its cells and its metadata as a `PartialObjectMetadata`.
fn table_row(cells: Vec<Value>, object: &Value) -> Value {
    json!({"cells": cells, "object": partial_metadata(object)})
}

/// The Event printer's columns (kube-apiserver's `printEvent`): name, type, priority,
/// description.
const EVENT_COLUMNS: &[(&str, &str, u8, &str)] = &[
    (
        "Last Seen",
        "",
        0,
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    (
        "Type",
        "",
        0,
        "Type of this event (Normal, Warning), new types could be added in the future",
    ),
    (
        "Reason",
        "",
        0,
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    ("Object", "", 0, "The object that this event is about."),
    (
        "Subobject",
        "",
        1,
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
    ),
    (
        "Source",
        "",
        1,
        "The component reporting this event. Should be a short machine understandable string.",
    ),
    (
        "Message",
        "",
        0,
        "A human-readable description of the status of this operation.",
    ),
    (
        "First Seen",
        "",
        1,
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    (
        "Count",
        "",
        1,
        "The number of times this event has occurred.",
    ),
    ("Name", "name", 1, NAME_DESCRIPTION),
];

/// An Event's cells, as kube-apiserver's `printEvent` fills them (wide: every column); an
/// `events.k8s.io` Event is printed as the core Event it converts to.
fn event_cells(object: &Value) -> Vec<Value> {
    let core;
    let e = if object["apiVersion"] == "events.k8s.io/v1" {
        core = events::convert::to_core(object);
        &core
    } else {
        object
    };
    let first = if e["firstTimestamp"].is_string() {
        since(&e["firstTimestamp"])
    } else {
        since(&e["eventTime"])
    };
    let (mut last, mut count) = (
        if e["lastTimestamp"].is_string() {
            since(&e["lastTimestamp"])
        } else {
            first.clone()
        },
        e["count"].as_i64().unwrap_or(0),
    );
    if e["series"].is_object() {
        last = since(&e["series"]["lastObservedTime"]);
        count = e["series"]["count"].as_i64().unwrap_or(0);
    } else if count == 0 {
        count = 1;
    }
    let involved = &e["involvedObject"];
    let kind = text(&involved["kind"], "").to_lowercase();
    let target = match involved["name"].as_str().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    let non_empty = |a: &Value, b: &Value| {
        a.as_str()
            .filter(|s| !s.is_empty())
            .or_else(|| b.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let component = non_empty(&e["source"]["component"], &e["reportingComponent"]);
    let instance = non_empty(&e["source"]["host"], &e["reportingInstance"]);
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        e["type"].clone(),
        e["reason"].clone(),
        json!(target),
        json!(text(&involved["fieldPath"], "")),
        json!(source),
        json!(text(&e["message"], "").trim()),
        json!(first),
        json!(count),
        e["metadata"]["name"].clone(),
    ]
}

/// `body` (one object or a list) as a `meta.k8s.io/v1` Table: a custom resource by its CRD's
/// printer columns, a built-in kind by kube-apiserver's printer for it.
pub fn convert(rt: &ResourceType, body: &Value, include: Include) -> Value {
    let objects: Vec<&Value> = match body["items"].as_array() {
        Some(items) => items.iter().collect(),
        None => vec![body],
    };
    let (definitions, rows): (Vec<Value>, Vec<Value>) = if rt.custom {
        let columns = custom_columns(rt);
        let mut definitions = vec![name_column()];
        definitions.extend(columns.iter().map(custom_definition));
        let rows = objects
            .iter()
            .map(|o| {
                let mut cells = vec![o["metadata"]["name"].clone()];
                cells.extend(columns.iter().map(|c| custom_cell(c, o)));
                table_row(cells, o)
            })
            .collect();
        (definitions, rows)
    } else if rt.kind == "Event" {
        let definitions = EVENT_COLUMNS
            .iter()
            .map(|(name, format, priority, description)| {
                json!({"name": name, "type": "string", "format": format,
                    "description": description, "priority": priority})
            })
            .collect();
        let rows = objects
            .iter()
            .map(|o| table_row(event_cells(o), o))
            .collect();
        (definitions, rows)
    } else if let Some(definitions) = recorded_columns(rt) {
        let rows = objects
            .iter()
            .map(|o| {
                let known = named_cells(&rt.kind, o);
                let cells = definitions
                    .iter()
                    .map(|d| {
                        known
                            .iter()
                            .find(|(name, _)| d["name"] == *name)
                            .map_or(Value::Null, |(_, cell)| cell.clone())
                    })
                    .collect();
                table_row(cells, o)
            })
            .collect();
        (definitions.clone(), rows)
    } else {
        let kind = rt.kind.as_str();
        let mut definitions = vec![name_column()];
        definitions.extend(columns(kind).iter().map(
            |(name, ty)| json!({"name": name, "type": ty, "format": "", "description": name, "priority": 0}),
        ));
        let (last, last_type) = if created_at(kind) {
            ("Created At", "date")
        } else {
            ("Age", "string")
        };
        definitions.push(json!({"name": last, "type": last_type, "format": "",
            "description": CREATED_DESCRIPTION, "priority": 0}));
        let rows = objects.iter().map(|o| row(kind, o)).collect();
        (definitions, rows)
    };
    let metadata = if body["items"].is_array() {
        body["metadata"].clone()
    } else {
        json!({"resourceVersion": body["metadata"]["resourceVersion"]})
    };
    let mut rows = rows;
    match include {
        Include::Metadata => {}
        Include::None => rows.iter_mut().for_each(|row| row["object"] = Value::Null),
        Include::Object => {
            for (row, object) in rows.iter_mut().zip(&objects) {
                let mut object = (*object).clone();
                object["apiVersion"] = json!(rt.api_version());
                object["kind"] = json!(rt.kind);
                row["object"] = object;
            }
        }
    }
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
        let table = convert(&rt, &list, Include::Metadata);
        let names: Vec<&str> = table["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
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
        let find = registry::builtin;
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
        let table = convert(
            &find("rbac.authorization.k8s.io", "Role"),
            &role,
            Include::Metadata,
        );
        assert_eq!(names(&table), ["Name", "Created At"]);
        assert_eq!(table["rows"][0]["cells"], json!(["reader", created]));
        let binding = json!({"metadata": {"name": "b", "creationTimestamp": meta::now()},
            "roleRef": {"kind": "Role", "name": "reader"}});
        let table = convert(
            &find("rbac.authorization.k8s.io", "RoleBinding"),
            &binding,
            Include::Metadata,
        );
        assert_eq!(
            names(&table),
            ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
        );
        assert_eq!(table["rows"][0]["cells"][1], "Role/reader");
        let pdb = json!({"metadata": {"name": "p", "creationTimestamp": meta::now()},
            "spec": {"minAvailable": 1}, "status": {"disruptionsAllowed": 2}});
        let table = convert(
            &find("policy", "PodDisruptionBudget"),
            &pdb,
            Include::Metadata,
        );
        assert_eq!(
            table["rows"][0]["cells"].as_array().unwrap()[1..4],
            [json!("1"), json!("N/A"), json!(2)]
        );
    }

    #[test]
    fn custom_resources_show_their_printer_columns_or_age() {
        let crd = json!({"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "additionalPrinterColumns": [
                {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 1},
                {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
                {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
                {"name": "Since", "type": "date", "jsonPath": ".status.since"},
                {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"}]},
                {"name": "v2", "served": true}]}});
        let types = registry::from_crd(&crd);
        let widget = json!({"metadata": {"name": "w", "creationTimestamp": meta::now()},
            "spec": {"size": 3.0, "ratio": 2, "on": true},
            "status": {"since": "2000-01-01T00:00:00Z", "conditions": [
                {"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}});
        let table = convert(&types[0], &widget, Include::Metadata);
        let definitions = table["columnDefinitions"].as_array().unwrap();
        assert_eq!(definitions.len(), 7);
        assert_eq!(definitions[2]["priority"], 1);
        assert_eq!(definitions[2]["type"], "integer");
        assert_eq!(
            definitions[1]["description"],
            "Custom resource definition column (in JSONPath format): .status.conditions[?(@.type==\"Ready\")].status"
        );
        let cells = table["rows"][0]["cells"].as_array().unwrap();
        assert_eq!(
            cells[..5],
            [json!("w"), json!("True"), json!(3), json!(2.0), json!(true)]
        );
        assert!(cells[5].as_str().unwrap().ends_with('y'), "{}", cells[5]);
        assert_eq!(cells[6], Value::Null);
        let table = convert(&types[1], &widget, Include::Metadata);
        assert_eq!(table["columnDefinitions"][1]["name"], "Age");
        assert_eq!(table["columnDefinitions"][1]["type"], "date");
        assert_eq!(
            table["rows"][0]["cells"][1]
                .as_str()
                .map(|a| a.ends_with('s')),
            Some(true)
        );
    }

    #[test]
    fn ages_read_as_apimachinery_prints_durations() {
        for (secs, text) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (119, "119s"),
            (200, "3m20s"),
            (600, "10m"),
            (3 * 3_600 + 60, "3h1m"),
            (9 * 3_600, "9h"),
            (50 * 3_600, "2d2h"),
            (30 * 86_400, "30d"),
            (800 * 86_400, "2y70d"),
            (3_000 * 86_400, "8y"),
        ] {
            assert_eq!(human_duration(secs), text, "{secs}");
        }
    }
}
