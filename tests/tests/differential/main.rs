//! krt-sim against a real kube-apiserver, request by request (issue 27).
//!
//! One table of requests, for every kind krt-sim serves for writing
//! ([`krt_testkit::kinds`]): create (and again: AlreadyExists), get, server-side
//! apply (and again unchanged), merge, JSON and strategic merge patches, an
//! update with a stale resourceVersion, a dry run, lists by label and by field,
//! unknown fields under `fieldValidation=Strict` and `Warn`, an invalid name, an
//! invalid label value, labels of the wrong type, the `status` and `scale`
//! subresources (served or 404; a scale patched, a status patched), watches from
//! resourceVersion 0, and deletes (in the foreground, of a missing object). Then the
//! categories beyond one kind's own ([`categories`]): finalizers, immutable fields, invalid
//! quantities, apply conflicts, CRD validation, pruning and defaulting, Table and metadata-only
//! output, discovery, OpenAPI, protobuf bodies, legacy watch paths, the review kinds and
//! ComponentStatus, and a terminating namespace.
//!
//! - `KRT_E2E_KUBECONFIG=… cargo test -p krt-tests --test differential -- --record`
//!   sends the table to that cluster and writes its answers, normalized, to
//!   `tests/data/differential/recorded.jsonl` (its first line names the server).
//!   It also records the server's schemas of its built-in kinds (from its OpenAPI
//!   v3 documents, kept to what server-side apply reads) into
//!   `sim/src/ssa/schemas.json`, which krt-sim's server-side apply types come from, and the
//!   Table columns of each built-in kind into `sim/src/table_columns.json`, which krt-sim's
//!   server-side printing defines its columns by.
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
//! list items; in a Table, ages, generated names and cluster IPs, and the order of rows. An
//! OpenAPI document is compared by the keys of its paths and schemas. `status` is left out of
//! objects (controllers fill it on their own schedule; the semantics table of
//! krt-sim checks it); Status answers (errors) are compared whole.

mod categories;
mod normalize;
mod table;

use http_body_util::BodyExt;
use krt_testkit::kinds::KINDS;
use normalize::normalize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use table::table;

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

/// The recorded Table columns krt-sim's server-side printing reads.
fn table_columns_path() -> PathBuf {
    krt_testkit::workspace().join("sim/src/table_columns.json")
}

/// Records the Table columns kube-apiserver's printers define for every built-in kind of the
/// table (their names, types, priorities and descriptions), one kind per line.
async fn record_table_columns(client: &kube::Client, server: &Value) {
    let mut lines = Vec::new();
    for kind in KINDS.iter().filter(|k| !table::is_custom(k)) {
        let request = http::Request::get(format!("{}?limit=1", kind.url()))
            .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
            .body(Vec::new())
            .unwrap();
        let text = client
            .request_text(request)
            .await
            .unwrap_or_else(|e| panic!("a Table of {}: {e}", kind.kind));
        let table: Value = serde_json::from_str(&text).expect("a Table");
        let key = format!("{} {}", kind.api_version, kind.kind);
        lines.push(format!(
            "{}:{}",
            Value::from(key),
            table["columnDefinitions"]
        ));
    }
    let text = format!(
        "{{\"server\":{server},\n\"columns\":{{\n{}\n}}}}\n",
        lines.join(",\n")
    );
    std::fs::write(table_columns_path(), text).unwrap();
    println!("recorded the Table columns of {} kinds", lines.len());
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
    /// The body, as JSON; sent in protobuf when `content_type` is protobuf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<Value>,
    /// The `Accept` header, when not `application/json`: a Table, aggregated discovery, or
    /// protobuf (whose answer is compared as krt-sim's decoder reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accept: Option<String>,
    /// JSON pointers into a successful answer: only their keys are compared (the paths and
    /// schema names of an OpenAPI document, whose text is not krt-sim's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    keys: Vec<String>,
    /// How long to wait after the answer, so that the cluster's controllers
    /// settle before the next request looks at what they write.
    #[serde(default, skip_serializing_if = "is_zero")]
    settle_ms: u64,
}

impl Step {
    /// A request with no body.
    fn new(id: impl Into<String>, method: &str, path: impl Into<String>) -> Self {
        Step {
            id: id.into(),
            method: method.into(),
            path: path.into(),
            content_type: None,
            body: None,
            accept: None,
            keys: Vec::new(),
            settle_ms: 0,
        }
    }

    /// With `body`, sent as `content_type`.
    fn body(mut self, content_type: &str, body: Value) -> Self {
        self.content_type = Some(content_type.into());
        self.body = Some(body);
        self
    }

    /// With `body` as JSON.
    fn json(self, body: Value) -> Self {
        self.body("application/json", body)
    }

    /// Asking for `accept`.
    fn accept(mut self, accept: &str) -> Self {
        self.accept = Some(accept.into());
        self
    }

    /// Comparing only the keys of what `pointers` name.
    fn keys(mut self, pointers: &[&str]) -> Self {
        self.keys = pointers.iter().map(|p| (*p).to_owned()).collect();
        self
    }

    /// Waiting `ms` after the answer.
    fn settle(mut self, ms: u64) -> Self {
        self.settle_ms = ms;
        self
    }
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

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

/// Sends `step` with `client`; the answer, normalized.
async fn send(client: &kube::Client, step: &Step) -> Answer {
    let mut request = http::Request::builder()
        .method(step.method.as_str())
        .uri(&step.path)
        .header(
            "accept",
            step.accept.as_deref().unwrap_or("application/json"),
        );
    if let Some(content_type) = &step.content_type {
        request = request.header("content-type", content_type);
    }
    let protobuf = |content_type: Option<&str>| {
        content_type.is_some_and(|t| t.starts_with("application/vnd.kubernetes.protobuf"))
    };
    let body = match &step.body {
        Some(body) if protobuf(step.content_type.as_deref()) => krt_sim::encode_protobuf(body)
            .unwrap_or_else(|e| panic!("{}: the body in protobuf: {e}", step.id)),
        Some(body) => serde_json::to_vec(body).unwrap(),
        None => Vec::new(),
    };
    let response = client
        .send(request.body(body.into()).unwrap())
        .await
        .unwrap_or_else(|e| panic!("{}: the request failed: {e}", step.id));
    let code = response.status().as_u16();
    let answered_protobuf = protobuf(
        response
            .headers()
            .get("content-type")
            .and_then(|t| t.to_str().ok()),
    );
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
    let body = if step.path.contains("watch=true") || step.path.contains("/watch/") {
        let mut events: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!(l)))
            .collect();
        events.iter_mut().for_each(normalize);
        events.sort_by_key(|e| e.to_string());
        Value::Array(events)
    } else {
        let mut body = match answered_protobuf {
            true => krt_sim::decode_protobuf(&bytes)
                .unwrap_or_else(|e| json!(format!("not readable as protobuf: {e}"))),
            false => serde_json::from_str(&text).unwrap_or_else(|_| json!(text.trim())),
        };
        normalize(&mut body);
        if (200..300).contains(&code) && !step.keys.is_empty() {
            body = normalize::keys(&body, &step.keys);
        }
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
    record_table_columns(&client, &server).await;
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
