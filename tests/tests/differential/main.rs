//! krt-sim against a real kube-apiserver, request by request (issue 27).
//!
//! One table of requests, for every kind krt-sim serves for writing
//! ([`krt_testkit::kinds`]): create (and again: AlreadyExists), get, server-side
//! apply (and again unchanged), merge, JSON and strategic merge patches, an
//! update with a stale resourceVersion, a dry run, lists by label and by field,
//! unknown fields under `fieldValidation=Strict` and `Warn`, an invalid name, an
//! invalid label value, labels of the wrong type, the `status` and `scale`
//! subresources (served or 404; a scale also patched), watches from resourceVersion
//! 0, and deletes (in the foreground, of a missing object).
//!
//! - `KRT_E2E_KUBECONFIG=… cargo test -p krt-tests --test differential -- --record`
//!   sends the table to that cluster and writes its answers, normalized, to
//!   `tests/data/differential/recorded.jsonl` (its first line names the server).
//!   It also records the server's schemas of its built-in kinds (from its OpenAPI
//!   v3 documents, kept to what server-side apply reads) into
//!   `sim/src/ssa/schemas.json`, which krt-sim's server-side apply types come from.
//! - Without `--record`, the recorded requests go to a fresh krt-sim and each
//!   answer is compared with the recorded one. A disagreement must be listed,
//!   with its reason, in `tests/data/differential/known.json`; the run prints
//!   `agree N of M` and fails on any unlisted disagreement, on a listed one that
//!   now agrees (the list stays true), and when the table in this file no longer
//!   matches the recording (record again). `KRT_DIFFERENTIAL_DUMP=FILE` also writes every
//!   disagreement there, both answers whole, one JSON line each.
//!
//! Normalizing removes what is meant to differ between two servers: uids,
//! resourceVersions (an object's, and an object reference's), timestamps, allocated cluster IPs, certificates and their
//! fingerprints, the `time` of managedFields entries (which orders them), and the order of
//! list items. `status` is left out of
//! objects (controllers fill it on their own schedule; the semantics table of
//! krt-sim checks it); Status answers (errors) are compared whole.

use http_body_util::BodyExt;
use krt_testkit::kinds::{KINDS, KindSample};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;

/// The recording: a header line, then one answer per line.
fn recorded_path() -> PathBuf {
    krt_testkit::workspace().join("tests/data/differential/recorded.jsonl")
}

/// The recorded schemas krt-sim's server-side apply reads.
fn schemas_path() -> PathBuf {
    krt_testkit::workspace().join("sim/src/ssa/schemas.json")
}

/// What server-side apply reads of a schema (kube-openapi's `schemaconv`); descriptions and
/// validation are left out.
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "properties",
    "items",
    "additionalProperties",
    "allOf",
    "$ref",
    "default",
    "required",
    "x-kubernetes-group-version-kind",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-unions",
];

/// `schema` with only [`SCHEMA_KEYS`], at every level.
fn kept(schema: &Value) -> Value {
    let Some(map) = schema.as_object() else {
        return schema.clone();
    };
    let nested = |key: &str, value: &Value| match key {
        "properties" => Value::Object(
            value
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, field)| (name.clone(), kept(field)))
                .collect(),
        ),
        "items" | "additionalProperties" => kept(value),
        "allOf" => Value::Array(value.as_array().into_iter().flatten().map(kept).collect()),
        _ => value.clone(),
    };
    Value::Object(
        map.iter()
            .filter(|(key, _)| SCHEMA_KEYS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), nested(key, value)))
            .collect(),
    )
}

/// GETs `path` as JSON.
async fn get_json(client: &kube::Client, path: &str) -> Value {
    let request = http::Request::get(path).body(Vec::new()).unwrap();
    let text = client
        .request_text(request)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// Records the schemas of every group version the server documents in OpenAPI v3, one
/// definition per line.
async fn record_schemas(client: &kube::Client, server: &Value) {
    let index = get_json(client, "/openapi/v3").await;
    let mut schemas = BTreeMap::new();
    for (path, entry) in index["paths"].as_object().into_iter().flatten() {
        let group_version =
            path == "api/v1" || (path.starts_with("apis/") && path.matches('/').count() == 2);
        let Some(url) = entry["serverRelativeURL"]
            .as_str()
            .filter(|_| group_version)
        else {
            continue;
        };
        let document = get_json(client, url).await;
        for (name, schema) in document["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            schemas.insert(name.clone(), kept(schema));
        }
    }
    let lines: Vec<String> = schemas
        .iter()
        .map(|(name, schema)| format!("{}:{schema}", Value::from(name.as_str())))
        .collect();
    let text = format!(
        "{{\"server\":{server},\n\"schemas\":{{\n{}\n}}}}\n",
        lines.join(",\n")
    );
    std::fs::write(schemas_path(), text).unwrap();
    println!(
        "recorded {} schemas into {}",
        schemas.len(),
        schemas_path().display()
    );
}

/// The listed disagreements: `{"id": reason}`, one entry per step.
fn known_path() -> PathBuf {
    krt_testkit::workspace().join("tests/data/differential/known.json")
}

/// One request of the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Step {
    /// `apps/v1 Deployment web: apply`: the kind, the object and what is done.
    id: String,
    method: String,
    path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<Value>,
    /// How long to wait after the answer, so that the cluster's controllers
    /// settle before the next request looks at what they write.
    #[serde(default, skip_serializing_if = "is_zero")]
    settle_ms: u64,
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

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
const SETTLE_MS: u64 = 1500;

/// A server's answer, normalized.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Answer {
    code: u16,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    body: Value,
}

/// A recorded line: the step and the real server's answer.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Recorded {
    step: Step,
    answer: Answer,
}

/// The kinds whose watch is part of the table (a watch waits out its timeout).
const WATCHED: &[&str] = &["ConfigMap", "Deployment", "Service", "Role", "Widget"];

/// The table: every kind's steps, then the deletes in reverse order (the
/// namespace, created first, goes last).
fn table() -> Vec<Step> {
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
            id: id(what),
            method: method.into(),
            path: path.into(),
            content_type: content_type.map(Into::into),
            body,
            settle_ms: 0,
        };
        let renamed = |suffix: &str| {
            let mut copy = object.clone();
            copy["metadata"]["name"] = json!(format!("{name}{suffix}"));
            copy
        };
        let json = Some("application/json");
        let mut create = step("create", "POST", &collection, json, Some(object.clone()));
        if CONTROLLED.contains(&kind.kind) {
            create.settle_ms = SETTLE_MS;
        }
        steps.push(create);
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
        let mut json_patch = step(
            "json patch",
            "PATCH",
            &item,
            Some("application/json-patch+json"),
            Some(
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"differential": "json"}}]),
            ),
        );
        // The patch replaces every annotation, controllers' too: they put theirs back.
        if CONTROLLED.contains(&kind.kind) {
            json_patch.settle_ms = SETTLE_MS;
        }
        steps.push(json_patch);
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
        let mut warn = step(
            "unknown field, Warn",
            "POST",
            &format!("{collection}?fieldValidation=Warn"),
            json,
            Some(unknown),
        );
        // It creates an object, which its controllers then write to.
        if CONTROLLED.contains(&kind.kind) {
            warn.settle_ms = SETTLE_MS;
        }
        steps.push(warn);
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
        let mut scale = step(
            "patch scale",
            "PATCH",
            &format!("{item}/scale"),
            Some("application/merge-patch+json"),
            Some(json!({"spec": {"replicas": 2}})),
        );
        // A new scale is a rollout: its controllers write.
        if CONTROLLED.contains(&kind.kind) {
            scale.settle_ms = SETTLE_MS;
        }
        steps.push(scale);
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
    steps.extend(deletes.into_iter().rev().flatten());
    steps
}

/// A custom resource (no strategic merge patch).
fn is_custom(kind: &KindSample) -> bool {
    kind.kind == "Widget"
}

/// Sends `step` with `client`; the answer, normalized.
async fn send(client: &kube::Client, step: &Step) -> Answer {
    let mut request = http::Request::builder()
        .method(step.method.as_str())
        .uri(&step.path)
        .header("accept", "application/json");
    if let Some(content_type) = &step.content_type {
        request = request.header("content-type", content_type);
    }
    let body = step
        .body
        .as_ref()
        .map(|b| serde_json::to_vec(b).unwrap())
        .unwrap_or_default();
    let response = client
        .send(request.body(body.into()).unwrap())
        .await
        .unwrap_or_else(|e| panic!("{}: the request failed: {e}", step.id));
    let code = response.status().as_u16();
    let mut warnings: Vec<String> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect();
    warnings.sort();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let body = if step.path.contains("watch=true") {
        let mut events: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!(l)))
            .collect();
        events.iter_mut().for_each(normalize);
        events.sort_by_key(|e| e.to_string());
        Value::Array(events)
    } else {
        let mut body = serde_json::from_str(&text).unwrap_or_else(|_| json!(text.trim()));
        normalize(&mut body);
        body
    };
    if step.settle_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(step.settle_ms)).await;
    }
    Answer {
        code,
        warnings,
        body,
    }
}

/// Removes what is meant to differ between two servers (see the module's doc).
fn normalize(value: &mut Value) {
    let is_status = value["kind"] == "Status";
    if let Some(map) = value.as_object_mut() {
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "selfLink",
                "continue",
                "remainingItemCount",
            ] {
                meta.remove(field);
            }
            if let Some(entries) = meta.get_mut("managedFields").and_then(Value::as_array_mut) {
                // Status writes are the controllers', on their own schedule.
                entries.retain(|e| e["subresource"] != "status");
                for entry in entries.iter_mut() {
                    if let Some(entry) = entry.as_object_mut() {
                        entry.remove("time");
                    }
                }
                // Entries are sorted by time first: whether a controller's write fell in the
                // same second as the one before it is timing.
                entries.sort_by_key(|e| {
                    ["operation", "manager", "apiVersion", "subresource"].map(|f| e[f].to_string())
                });
            }
            if meta.contains_key("generateName") {
                meta.insert("name".into(), json!("<generated>"));
            }
        }
        if !is_status && map.contains_key("metadata") {
            map.remove("status");
        }
        if let Some(spec) = map.get_mut("spec").and_then(Value::as_object_mut) {
            for field in ["clusterIP", "clusterIPs"] {
                if spec.contains_key(field) {
                    spec.insert(field.into(), json!("<allocated>"));
                }
            }
        }
        if let Some(items) = map.get_mut("items").and_then(Value::as_array_mut) {
            // By name as normalized: a generated one is `<generated>`.
            items.sort_by_key(|i| {
                let name = match i["metadata"]["generateName"] {
                    Value::Null => i["metadata"]["name"].to_string(),
                    _ => "<generated>".to_string(),
                };
                (i["metadata"]["namespace"].to_string(), name)
            });
        }
    }
    match value {
        Value::Object(map) => {
            // An object reference's resourceVersion (a claim's `claimRef`).
            if let Some(Value::String(version)) = map.get_mut("resourceVersion") {
                *version = "<resourceVersion>".into();
            }
            // managedFields name list items by key, and an ownerReference's key is its uid.
            if map.keys().any(|k| k.contains("\"uid\":\"")) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (uid_free(&k), v))
                    .collect();
            }
            map.values_mut().for_each(normalize)
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        Value::String(text) if jiff::Timestamp::from_str(text).is_ok() => *text = "<time>".into(),
        Value::String(text) if is_uid(text) => *text = "<uid>".into(),
        // Who the client is differs by its certificate, the cluster by its CA.
        Value::String(text) if text.starts_with("X509SHA256=") => {
            *text = "X509SHA256=<fingerprint>".into();
        }
        Value::String(text) if text.starts_with("-----BEGIN CERTIFICATE-----") => {
            *text = "<certificate>".into();
        }
        Value::String(text) => {
            // The projected token volume's random suffix.
            if let Some(suffix) = text.strip_prefix("kube-api-access-")
                && suffix.len() == 5
            {
                *text = "kube-api-access-<random>".into();
            }
        }
        _ => {}
    }
}

/// `k:{"uid":"…"}` with the uid replaced by `<uid>`.
fn uid_free(key: &str) -> String {
    match key.split_once("\"uid\":\"") {
        Some((head, rest)) if rest.len() >= 36 && is_uid(&rest[..36]) => {
            format!("{head}\"uid\":\"<uid>{}", &rest[36..])
        }
        _ => key.to_owned(),
    }
}

/// Whether `text` is a UUID (`8-4-4-4-12` hex digits), as uids are.
fn is_uid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A client of the cluster `KRT_E2E_KUBECONFIG` names.
async fn real_client() -> kube::Client {
    let path = std::env::var("KRT_E2E_KUBECONFIG")
        .expect("--record sends the table to the cluster KRT_E2E_KUBECONFIG names");
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&path).expect("KRT_E2E_KUBECONFIG is readable");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("KRT_E2E_KUBECONFIG is valid");
    config.default_retry = false;
    kube::Client::try_from(config).expect("a client")
}

/// The server's version, as its `/version` says.
async fn server_version(client: &kube::Client) -> Value {
    let info = client.apiserver_version().await.expect("/version");
    json!({"gitVersion": info.git_version, "gitCommit": info.git_commit, "goVersion": info.go_version})
}

async fn record() {
    let client = real_client().await;
    let server = server_version(&client).await;
    record_schemas(&client, &server).await;
    let mut lines = vec![
        json!({
            "server": server,
            "recorded": jiff::Timestamp::now().to_string(),
            "note": std::env::var("KRT_DIFFERENTIAL_NOTE").unwrap_or_default(),
        })
        .to_string(),
    ];
    for step in table() {
        let answer = send(&client, &step).await;
        lines.push(serde_json::to_string(&Recorded { step, answer }).unwrap());
    }
    let path = recorded_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    println!(
        "recorded {} answers into {}",
        lines.len() - 1,
        path.display()
    );
}

/// The first place two answers differ, for the report.
fn first_difference(real: &Value, sim: &Value, at: &str) -> String {
    match (real, sim) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys()) {
                if a.get(key) != b.get(key) {
                    let here = format!("{at}/{key}");
                    return match (a.get(key), b.get(key)) {
                        (Some(x), Some(y)) => first_difference(x, y, &here),
                        (x, y) => format!("{here}: real {}, krt-sim {}", show(x), show(y)),
                    };
                }
            }
            format!("{at}: equal")
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find(|(_, (x, y))| x != y)
            .map(|(i, (x, y))| first_difference(x, y, &format!("{at}/{i}")))
            .unwrap_or_else(|| format!("{at}: equal")),
        _ => format!(
            "{at}: real {}, krt-sim {}",
            show(Some(real)),
            show(Some(sim))
        ),
    }
}

fn show(value: Option<&Value>) -> String {
    let text = value.map_or("(absent)".into(), Value::to_string);
    match text.len() > 160 {
        true => format!("{}…", &text[..text.floor_char_boundary(160)]),
        false => text,
    }
}

async fn replay() {
    let text = std::fs::read_to_string(recorded_path())
        .expect("the recording (tests/data/differential/recorded.jsonl)");
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header")).unwrap();
    // Normalized again: what normalizing removes may have grown since the recording.
    let recorded: Vec<Recorded> = lines
        .map(|l| serde_json::from_str(l).expect("a recorded answer"))
        .map(|mut r: Recorded| {
            normalize(&mut r.answer.body);
            if let Value::Array(events) = &mut r.answer.body {
                events.sort_by_key(|e| e.to_string());
            }
            r
        })
        .collect();
    let steps: Vec<Step> = recorded.iter().map(|r| r.step.clone()).collect();
    assert!(
        steps == table(),
        "the table changed since it was recorded: record it again against a real server \
         (KRT_E2E_KUBECONFIG=… cargo test -p krt-tests --test differential -- --record)"
    );
    let known: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(known_path()).expect("known.json"))
            .expect("known.json");
    let (sim, client) = recorded_identity_client().await;
    let dump = std::env::var_os("KRT_DIFFERENTIAL_DUMP").map(PathBuf::from);
    let mut disagreements = Vec::new();
    let (mut agree, mut unlisted, mut fixed, mut listed_count) = (0, Vec::new(), Vec::new(), 0);
    for Recorded { step, answer: real } in &recorded {
        let sim = send(&client, step).await;
        let is_listed = known.contains_key(&step.id);
        if &sim == real {
            agree += 1;
            if is_listed {
                fixed.push(step.id.clone());
            }
            continue;
        }
        if dump.is_some() {
            disagreements.push(json!({"id": step.id, "real": real, "sim": sim}).to_string());
        }
        if is_listed {
            listed_count += 1;
            continue;
        }
        let what = if sim.code != real.code {
            format!(
                "code: real {}, krt-sim {} ({})",
                real.code,
                sim.code,
                show(Some(&sim.body))
            )
        } else if sim.warnings != real.warnings {
            format!(
                "warnings: real {:?}, krt-sim {:?}",
                real.warnings, sim.warnings
            )
        } else {
            first_difference(&real.body, &sim.body, "")
        };
        unlisted.push(format!("{}: {what}", step.id));
    }
    if let Some(path) = dump {
        std::fs::write(&path, disagreements.join("\n") + "\n").unwrap();
        println!("every disagreement, both answers: {}", path.display());
    }
    println!(
        "differential: agree {agree} of {} with {} ({}); {listed_count} listed in known.json, {} unlisted",
        recorded.len(),
        header["server"]["gitVersion"],
        header["note"].as_str().unwrap_or_default(),
        unlisted.len()
    );
    assert!(
        unlisted.is_empty(),
        "krt-sim answers differently, and known.json does not say why:\n{}",
        unlisted.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "listed in known.json but krt-sim now agrees (remove them): {fixed:?}"
    );
    sim.shutdown().await;
}

/// A fresh krt-sim over HTTPS, a bare control plane as the recorded one is (no worker: no
/// scheduler, kubelet or StorageClass), and a client of it that is who the recording's
/// requests were sent as: a client certificate's `kubernetes-admin` in `system:masters` (the
/// user a CertificateSigningRequest names, with its certificate's credential id).
async fn recorded_identity_client() -> (krt_sim::Sim, kube::Client) {
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        tls: true,
        worker: false,
        ..krt_sim::SimConfig::default()
    })
    .await
    .expect("krt-sim starts");
    let certificate = sim
        .client_certificate("kubernetes-admin", Some("system:masters"))
        .expect("a client certificate");
    let client = krt_testkit::client_as(
        &sim,
        "kubernetes-admin",
        &krt_sim::Credential::Certificate(certificate),
    )
    .await;
    (sim, client)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    match std::env::args().any(|a| a == "--record") {
        true => runtime.block_on(record()),
        false => runtime.block_on(replay()),
    }
}
