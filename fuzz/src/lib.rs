//! Shared pieces of krt's fuzz targets: JSON values built from fuzz input, with
//! keys mostly from a Kubernetes vocabulary so the code under test takes its
//! interesting branches.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value};

/// Keys of Kubernetes objects, patch directives, and the field names the
/// normalisation, diff, merge and health code look at.
const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "generation",
    "deletionTimestamp",
    "creationTimestamp",
    "resourceVersion",
    "uid",
    "managedFields",
    "spec",
    "status",
    "replicas",
    "selector",
    "matchLabels",
    "template",
    "containers",
    "initContainers",
    "image",
    "ports",
    "containerPort",
    "port",
    "protocol",
    "env",
    "value",
    "volumes",
    "volumeMounts",
    "mountPath",
    "conditions",
    "type",
    "reason",
    "message",
    "observedGeneration",
    "readyReplicas",
    "updatedReplicas",
    "availableReplicas",
    "currentReplicas",
    "numberReady",
    "desiredNumberScheduled",
    "succeeded",
    "failed",
    "active",
    "phase",
    "containerStatuses",
    "ready",
    "state",
    "waiting",
    "loadBalancer",
    "ingress",
    "clusterIP",
    "data",
    "stringData",
    "finalizers",
    "tolerations",
    "key",
    "effect",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$setElementOrder/ports",
    "$deleteFromPrimitiveList/finalizers",
    "$setElementOrder/env",
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// Strings the code compares against.
const STRINGS: &[&str] = &[
    "",
    "v1",
    "apps/v1",
    "Deployment",
    "Pod",
    "Secret",
    "True",
    "False",
    "Unknown",
    "Ready",
    "Available",
    "Progressing",
    "Reconciling",
    "Stalled",
    "Running",
    "Pending",
    "Succeeded",
    "Failed",
    "merge",
    "replace",
    "delete",
    "retainKeys",
    "TCP",
    "UDP",
    "100m",
    "0.1",
    "1Gi",
    "1e3",
    "web",
    "a",
    "eA==",
    "not base64!",
];

/// `(apiVersion, kind)` pairs with their own merge schema or health rule.
pub const KINDS: &[(&str, &str)] = &[
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("v1", "PersistentVolumeClaim"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "ReplicaSet"),
    ("batch/v1", "Job"),
    ("networking.k8s.io/v1", "Ingress"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("example.com/v1", "Widget"),
];

/// A string: mostly from the vocabulary, sometimes arbitrary.
fn string(u: &mut Unstructured<'_>, words: &[&str]) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(words)?).to_owned())
    } else {
        u.arbitrary()
    }
}

/// Any JSON value, nested at most `depth` levels.
pub fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let choice = if depth == 0 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=6)?
    };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.int_in_range(-2i64..=5)?),
        3 => {
            let f: f64 = u.arbitrary()?;
            if f.is_finite() {
                Value::from(f)
            } else {
                Value::from(u.arbitrary::<i64>()?)
            }
        }
        4 => Value::String(string(u, STRINGS)?),
        5 => {
            let len = u.int_in_range(0..=4)?;
            Value::Array(
                (0..len)
                    .map(|_| value(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => Value::Object(map(u, depth - 1)?),
    })
}

/// A JSON object of up to six entries.
fn map(u: &mut Unstructured<'_>, depth: u32) -> Result<Map<String, Value>> {
    let len = u.int_in_range(0..=6)?;
    let mut map = Map::new();
    for _ in 0..len {
        map.insert(string(u, KEYS)?, value(u, depth)?);
    }
    Ok(map)
}

/// A Kubernetes-shaped object: a known or arbitrary `apiVersion` and `kind`, a
/// name, then arbitrary fields.
pub fn object(u: &mut Unstructured<'_>) -> Result<Value> {
    let mut map = map(u, 5)?;
    let (api_version, kind) = *u.choose(KINDS)?;
    map.insert("apiVersion".into(), api_version.into());
    map.insert("kind".into(), kind.into());
    if !map.get("metadata").is_some_and(Value::is_object) {
        map.insert("metadata".into(), Value::Object(Map::new()));
    }
    map["metadata"]["name"] = "web".into();
    Ok(Value::Object(map))
}

/// `object` (an object) with the `apiVersion`, `kind` and name of `like` (a patch target).
pub fn same_identity(like: &Value, mut object: Value) -> Value {
    for key in ["apiVersion", "kind"] {
        object[key] = like[key].clone();
    }
    if !object["metadata"].is_object() {
        object["metadata"] = Value::Object(Map::new());
    }
    object["metadata"]["name"] = like["metadata"]["name"].clone();
    object
}
