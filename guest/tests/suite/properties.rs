//! Properties over arbitrary input of the functions that see untrusted data: IDs
//! round-trip and parsing never panics; normalisation is idempotent; an object
//! never differs or drifts from itself; health never panics; the strategic and
//! JSON three-way merges of built-in kinds yield patches that apply, and applying
//! one twice is the same as once. (`merge_properties.rs` checks the merges'
//! semantics on the structured Table M type.)

use krt_guest::id::ResourceId;
use krt_guest::merge::{self, strategic};
use krt_guest::normalize::{normalize, normalize_for_diff};
use krt_guest::{diff, health};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

/// Keys of Kubernetes objects, patch directives, and the field names the
/// normalisation, diff, merge and health code look at.
const KEYS: [&str; 40] = [
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
    "spec",
    "status",
    "replicas",
    "selector",
    "matchLabels",
    "template",
    "containers",
    "image",
    "ports",
    "containerPort",
    "protocol",
    "env",
    "value",
    "conditions",
    "type",
    "reason",
    "message",
    "observedGeneration",
    "readyReplicas",
    "updatedReplicas",
    "phase",
    "data",
    "stringData",
    "finalizers",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// `(apiVersion, kind)` pairs with their own merge schema or health rule.
const KINDS: [(&str, &str); 12] = [
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("v1", "PersistentVolumeClaim"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("networking.k8s.io/v1", "Ingress"),
    ("example.com/v1", "Widget"),
];

/// Any JSON value, with keys mostly from [`KEYS`] so the code under test takes its
/// interesting branches.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..5).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        select(vec![
            "",
            "a",
            "web",
            "True",
            "False",
            "Ready",
            "Available",
            "1",
            "100m",
            "0.1",
            "1Gi",
            "merge",
            "replace",
            "delete",
            "TCP",
        ])
        .prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![4 => select(KEYS.to_vec()).prop_map(str::to_owned), 1 => "[a-z$/]{0,4}"]
}

/// A Kubernetes-shaped object: a known `apiVersion` and `kind`, a name, then
/// arbitrary fields.
fn object() -> impl Strategy<Value = Value> {
    (
        select(KINDS.to_vec()),
        proptest::collection::vec((key(), json()), 0..5),
    )
        .prop_map(|((api_version, kind), fields)| {
            let mut map: Map<String, Value> = fields.into_iter().collect();
            map.insert("apiVersion".into(), api_version.into());
            map.insert("kind".into(), kind.into());
            if !map.get("metadata").is_some_and(Value::is_object) {
                map.insert("metadata".into(), Value::Object(Map::new()));
            }
            map["metadata"]["name"] = "web".into();
            Value::Object(map)
        })
}

/// The same object with the `apiVersion`, `kind` and name of `like`.
fn same_identity(like: &Value, mut object: Value) -> Value {
    for key in ["apiVersion", "kind"] {
        object[key] = like[key].clone();
    }
    object["metadata"]["name"] = like["metadata"]["name"].clone();
    object
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ids_round_trip(
        api_version in "[a-z0-9./]{1,12}",
        kind in "[A-Za-z]{1,10}",
        namespace in proptest::option::of("[a-z0-9-]{1,10}"),
        name in "[a-z0-9.-]{1,12}",
    ) {
        let id = ResourceId::new(&api_version, &kind, namespace.as_deref(), &name);
        let text = id.to_string();
        prop_assert_eq!(ResourceId::parse(&text), Ok(id));
    }

    #[test]
    fn any_id_that_parses_prints_back_unchanged(text in "[a-z:/]{0,12}|\\PC{0,20}") {
        if let Ok(id) = ResourceId::parse(&text) {
            prop_assert_eq!(id.to_string(), text);
        }
    }

    #[test]
    fn normalisation_is_idempotent(value in prop_oneof![json(), object()]) {
        let once = normalize(&value);
        prop_assert_eq!(normalize(&once), once.clone());
        let for_diff = normalize_for_diff(&value);
        prop_assert_eq!(normalize_for_diff(&for_diff), for_diff);
    }

    #[test]
    fn an_object_never_differs_or_drifts_from_itself(
        value in prop_oneof![json(), object()],
        ignore in proptest::collection::vec("[a-z.\\[\\]=]{0,12}", 0..3),
    ) {
        let same = diff::diff(Some(&value), Some(&value), &ignore);
        prop_assert!(same.changes.is_empty(), "{:?}", same.changes);
        prop_assert_eq!(same.unified, "");
        prop_assert!(diff::drift(&value, Some(&value), &ignore).changes.is_empty());
    }

    #[test]
    fn health_never_panics(value in prop_oneof![json(), object()], now in proptest::option::of(any::<i64>())) {
        health::compute(&value, now);
    }

    #[test]
    fn built_in_merges_apply_and_are_idempotent(
        original in proptest::option::of(object()),
        modified in object(),
        current in object(),
    ) {
        let original = original.map(|o| same_identity(&modified, o));
        let current = same_identity(&modified, current);
        // A directive key in a plan is a patch directive, as kubectl reads it
        // (table M, M15), not data: such plans are not plain objects.
        prop_assume!(!strategic::holds_directive(&modified) && !original.as_ref().is_some_and(strategic::holds_directive));
        let api_version = modified["apiVersion"].as_str().unwrap_or_default();
        let kind = modified["kind"].as_str().unwrap_or_default();
        if let Some(schema) = strategic::schema_for(api_version, kind)
            && let Ok(patch) = strategic::three_way(original.as_ref(), &modified, &current, schema)
        {
            let once = strategic::apply(&current, &patch, schema);
            prop_assert!(once.is_ok(), "patch {} does not apply: {:?}", patch, once);
            let once = once.unwrap();
            prop_assert_eq!(strategic::apply(&once, &patch, schema), Ok(once.clone()), "patch {}", patch);
        }
        if let Ok(patch) = merge::json::three_way(original.as_ref(), &modified, &current) {
            let mut once = current.clone();
            merge::json::apply(&mut once, &patch);
            let mut twice = once.clone();
            merge::json::apply(&mut twice, &patch);
            prop_assert_eq!(twice, once);
        }
    }
}
