//! The mapping round-trips every field of every built-in kind, and reads what a Go client
//! writes as a Go server would.

use k8s_rs_pb::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use protobuf::{Message, MessageField};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::*;

/// A value for every property of `schema`, following `$ref`s into `definitions` up to a depth
/// (the schema of `JSONSchemaProps` is recursive).
fn sample(schema: &Value, definitions: &Map<String, Value>, depth: usize) -> Option<Value> {
    for combinator in ["allOf", "anyOf", "oneOf"] {
        if let Some(choices) = schema[combinator].as_array() {
            let chosen = choices.iter().find(|c| c["type"] != "null")?;
            return sample(chosen, definitions, depth);
        }
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/definitions/");
        let special = |suffix: &str| name.ends_with(suffix);
        return Some(match () {
            () if special(".resource.Quantity") => json!("1500m"),
            () if special(".meta.v1.Time") => json!("2025-01-02T03:04:05Z"),
            () if special(".meta.v1.MicroTime") => json!("2025-01-02T03:04:05.123456Z"),
            () if special(".intstr.IntOrString") => {
                if depth.is_multiple_of(2) {
                    json!("25%")
                } else {
                    json!(8080)
                }
            }
            () if special(".runtime.RawExtension")
                || special(".meta.v1.FieldsV1")
                || special(".apiextensions.v1.JSON") =>
            {
                json!({"f:spec": {"f:replicas": {}}, "n": [1, "two"]})
            }
            () if special(".JSONSchemaPropsOrArray") => json!([{"type": "string"}]),
            () if special(".JSONSchemaPropsOrBool") => {
                if depth.is_multiple_of(2) {
                    json!(false)
                } else {
                    json!({"type": "integer"})
                }
            }
            () if special(".JSONSchemaPropsOrStringArray") => json!(["a", "b"]),
            () if special(".JSONSchemaProps") && depth > 4 => json!({"type": "object"}),
            () => return sample(definitions.get(name)?, definitions, depth + 1),
        });
    }
    if depth > 12 {
        return None;
    }
    let kind = schema["type"].as_str().unwrap_or("object");
    Some(match kind {
        "object" => {
            let mut object = Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                // A kind nested in another (a StatefulSet's claim templates) has no type meta in
                // protobuf, where only the envelope carries it.
                let nested_kind = depth > 0 && properties.contains_key("metadata");
                for (name, property) in properties {
                    if nested_kind && (name == "apiVersion" || name == "kind") {
                        continue;
                    }
                    if let Some(value) = sample(property, definitions, depth + 1) {
                        object.insert(name.clone(), value);
                    }
                }
            } else if schema["additionalProperties"].is_object() {
                let value = sample(&schema["additionalProperties"], definitions, depth + 1)?;
                object.insert("key".into(), value);
            }
            Value::Object(object)
        }
        "array" => Value::Array(vec![sample(&schema["items"], definitions, depth + 1)?]),
        "string" if schema["format"] == "byte" => json!("aGVsbG8="),
        "string" if schema["format"] == "date-time" => json!("2025-01-02T03:04:05Z"),
        "string" => json!("x"),
        "integer" => json!(3),
        "number" => json!(1.5),
        "boolean" => json!(true),
        _ => return None,
    })
}

/// The paths where `a` and `b` differ.
fn differ(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let (p, q) = (&x.get(key), &y.get(key));
                match (p, q) {
                    (Some(p), Some(q)) => differ(p, q, format!("{path}.{key}"), out),
                    _ if !out.contains(&format!("{path}.{key}")) => {
                        out.push(format!("{path}.{key}"))
                    }
                    _ => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differ(p, q, format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} != {b}")),
        _ => {}
    }
}

#[test]
fn every_field_of_every_builtin_kind_and_list_round_trips() {
    let mut generator = SchemaSettings::draft07()
        .with(|s| s.meta_schema = None)
        .into_generator();
    let roots: Vec<_> = crate::kinds::BUILTINS
        .iter()
        .chain([&crate::kinds::SCALE])
        .map(|b| (b, (b.define)(&mut generator)))
        .collect();
    let definitions = generator.take_definitions(true);
    let (mut fields, mut newer) = (0, Vec::new());
    for (builtin, root) in roots {
        let api_version = match builtin.group {
            "" => builtin.version.to_string(),
            group => format!("{group}/{}", builtin.version),
        };
        if messages::message_for(&api_version, builtin.kind).is_none() {
            continue;
        }
        let mut object = sample(root.as_value(), &definitions, 0).unwrap();
        object["apiVersion"] = json!(api_version);
        object["kind"] = json!(builtin.kind);
        // A field Kubernetes 1.36 added has no number in 1.35's messages: encoding refuses the
        // object, naming it; it is taken out and the rest must still round-trip.
        let bytes = loop {
            match encode(&object) {
                Ok(bytes) => break bytes,
                Err(e) if e.ends_with(mapping::NO_FIELD) => {
                    let path = e.trim_end_matches(mapping::NO_FIELD).trim_end_matches(": ");
                    assert!(
                        remove(&mut object, path),
                        "{}: {path} is not in the sample",
                        builtin.kind
                    );
                    newer.push(format!("{api_version} {}: {path}", builtin.kind));
                }
                Err(e) => panic!("{}: {e}", builtin.kind),
            }
        };
        fields += object.to_string().matches(':').count();
        assert!(bytes.starts_with(b"k8s\0"));
        let back = decode_object(&bytes).unwrap();
        let mut differences = Vec::new();
        differ(&back, &object, String::new(), &mut differences);
        assert!(
            differences.is_empty(),
            "{api_version} {}: {differences:?}",
            builtin.kind
        );

        let mut item = object.clone();
        item.as_object_mut()
            .unwrap()
            .retain(|k, _| k != "apiVersion" && k != "kind");
        let list = json!({"apiVersion": api_version, "kind": format!("{}List", builtin.kind),
            "metadata": {"resourceVersion": "12", "continue": "c"}, "items": [item]});
        if messages::message_for(&api_version, &format!("{}List", builtin.kind)).is_some() {
            assert_eq!(decode_object(&encode(&list).unwrap()).unwrap(), list);
        }
    }
    assert!(fields > 9_000, "only {fields} fields were sampled");
    println!("fields newer than 1.35's messages: {newer:#?}");
    assert!(newer.len() < fields / 100, "{newer:#?}");
}

/// Removes the field at `path` (`spec.containers[0].name`) from `object`; whether it was there.
fn remove(object: &mut Value, path: &str) -> bool {
    let mut steps: Vec<&str> = path.split('.').collect();
    let Some(last) = steps.pop() else {
        return false;
    };
    let mut at = object;
    for step in steps {
        let (key, indexes) = step.split_once('[').unwrap_or((step, ""));
        let Some(next) = at.get_mut(key) else {
            return false;
        };
        at = next;
        for index in indexes.split('[').filter(|i| !i.is_empty()) {
            let Some(next) = index
                .trim_end_matches(']')
                .parse::<usize>()
                .ok()
                .and_then(|i| at.get_mut(i))
            else {
                return false;
            };
            at = next;
        }
    }
    at.as_object_mut().is_some_and(|o| o.remove(last).is_some())
}

#[test]
fn a_go_clients_zero_values_read_as_a_go_server_reads_them() {
    // What gogo-protobuf writes for `kubectl create deployment d --replicas=0`: every
    // non-pointer field, empty or not, and the pointer `replicas` as set.
    let mut metadata = ObjectMeta::new();
    metadata.set_name("d".into());
    metadata.set_namespace(String::new());
    metadata.set_uid(String::new());
    metadata.set_resourceVersion(String::new());
    metadata.set_generation(0);
    metadata.creationTimestamp = MessageField::some(Time::new());
    let mut spec = DeploymentSpec::new();
    spec.set_replicas(0);
    spec.set_paused(false);
    let mut deployment = Deployment::new();
    deployment.metadata = MessageField::some(metadata);
    deployment.spec = MessageField::some(spec);
    let body = envelope::seal(
        "apps/v1",
        "Deployment",
        deployment.write_to_bytes().unwrap(),
    );
    assert_eq!(
        decode_object(&body).unwrap(),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"replicas": 0, "paused": false}})
    );
}

#[test]
fn the_envelope_and_its_errors_are_apimachinerys() {
    assert_eq!(decode_object(b"").unwrap_err(), "empty data");
    assert_eq!(decode_object(b"k8s\0").unwrap_err(), "empty body");
    assert_eq!(
        decode_object(b"{\"kind\": \"Pod\"}").unwrap_err(),
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    );
    let no_kind = envelope::seal("example.com/v1", "Widget", Vec::new());
    assert!(
        decode_object(&no_kind)
            .unwrap_err()
            .starts_with("no kind \"Widget\"")
    );
    let error = encode(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})).unwrap_err();
    assert_eq!(
        error,
        "object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"
    );
    assert_eq!(summarize(b"{\"a\": 1}"), "{\"a\": 1}");
    assert_eq!(summarize(&[0x6b, 0x38, 0x73, 0]), "6b387300");
}

#[test]
fn watch_frames_are_length_prefixed_events_holding_enveloped_objects() {
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "resourceVersion": "5"}, "data": {"k": ""}});
    let frame = watch_frame(&json!({"type": "ADDED", "object": object})).unwrap();
    let length = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(length, frame.len() - 4);
    let event =
        k8s_rs_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::parse_from_bytes(&frame[4..])
            .unwrap();
    assert_eq!(event.type_(), "ADDED");
    assert_eq!(decode_object(event.object.raw()).unwrap(), object);
}

#[test]
fn paths_are_told_apart_for_negotiation() {
    assert_eq!(served("/api"), Served::DiscoveryRoot);
    assert_eq!(served("/apis/apps/v1"), Served::Discovery);
    assert_eq!(served("/version"), Served::Other);
    let resource = |path| match served(path) {
        Served::Resource {
            api_version,
            plural,
            builtin,
        } => (api_version, plural, builtin),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        resource("/api/v1/namespaces/default/configmaps/a"),
        ("v1".into(), "configmaps".into(), Some("ConfigMap"))
    );
    assert_eq!(
        resource("/api/v1/namespaces/default"),
        ("v1".into(), "namespaces".into(), Some("Namespace"))
    );
    assert_eq!(
        resource("/apis/example.com/v1/namespaces/x/widgets/w/scale").2,
        Some("Scale")
    );
    assert_eq!(resource("/apis/example.com/v1/widgets").2, None);
}
