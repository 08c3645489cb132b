//! The API over HTTP: status errors, optimistic locking, dry-run, server-side apply no-ops,
//! generation, immutable fields, CRDs, watch with 410 Gone, and fault injection.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

async fn send(
    sim: &sim::Sim,
    method: &str,
    path: &str,
    content_type: &str,
    body: String,
) -> Response<Incoming> {
    let addr = sim.url().trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("request");
    sender.send_request(req).await.expect("response")
}

async fn call(
    sim: &sim::Sim,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let response = send(sim, method, path, content_type, text).await;
    let code = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const JSON: &str = "application/json";
const APPLY: &str = "application/apply-patch+yaml";

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": value}})
}

#[tokio::test]
async fn errors_are_status_objects() {
    let sim = sim::Sim::start().await.unwrap();
    let (code, body) = call(&sim, "GET", &format!("{CM}/missing"), JSON, None).await;
    assert_eq!(code, 404);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "NotFound");
    assert_eq!(body["message"], "configmaps \"missing\" not found");

    assert_eq!(
        call(&sim, "POST", CM, JSON, Some(configmap("a", "1")))
            .await
            .0,
        201
    );
    let (code, body) = call(&sim, "POST", CM, JSON, Some(configmap("a", "1"))).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );

    let (code, body) = call(
        &sim,
        "POST",
        "/api/v1/namespaces/nope/configmaps",
        JSON,
        Some(configmap("a", "1")),
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (404, Some("namespaces \"nope\" not found"))
    );

    let (code, body) = call(&sim, "POST", CM, JSON, Some(configmap("Bad_Name", "1"))).await;
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.name");
}

#[tokio::test]
async fn stale_resource_versions_conflict_and_dry_run_stores_nothing() {
    let sim = sim::Sim::start().await.unwrap();
    let (_, created) = call(&sim, "POST", CM, JSON, Some(configmap("a", "1"))).await;
    let mut update = created.clone();
    update["data"]["k"] = json!("2");
    let (code, updated) = call(&sim, "PUT", &format!("{CM}/a"), JSON, Some(update.clone())).await;
    assert_eq!(code, 200);
    assert_ne!(
        updated["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    let (code, body) = call(&sim, "PUT", &format!("{CM}/a"), JSON, Some(update)).await;
    assert_eq!((code, body["reason"].as_str()), (409, Some("Conflict")));
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("the object has been modified")
    );

    let (code, dry) = call(
        &sim,
        "POST",
        &format!("{CM}?dryRun=All"),
        JSON,
        Some(configmap("b", "1")),
    )
    .await;
    assert_eq!(code, 201);
    assert!(dry["metadata"]["uid"].is_string());
    assert_eq!(
        call(&sim, "GET", &format!("{CM}/b"), JSON, None).await.0,
        404
    );
    let (_, patched) = call(
        &sim,
        "PATCH",
        &format!("{CM}/a?dryRun=All"),
        "application/merge-patch+json",
        Some(json!({"data": {"k": "3"}})),
    )
    .await;
    assert_eq!(patched["data"]["k"], "3");
    let (_, live) = call(&sim, "GET", &format!("{CM}/a"), JSON, None).await;
    assert_eq!(live["data"]["k"], "2");
    assert_eq!(
        live["metadata"]["resourceVersion"],
        updated["metadata"]["resourceVersion"]
    );
}

fn deployment(image: &str, app: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "app", "image": image}]}}}})
}

#[tokio::test]
async fn server_side_apply_is_idempotent_and_bumps_generation_on_spec_changes() {
    let sim = sim::Sim::start().await.unwrap();
    let path = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=krt";
    let (code, first) = call(
        &sim,
        "PATCH",
        path,
        APPLY,
        Some(deployment("nginx:1", "web")),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(first["metadata"]["generation"], 1);
    assert_eq!(first["metadata"]["managedFields"][0]["manager"], "krt");
    let (code, second) = call(
        &sim,
        "PATCH",
        path,
        APPLY,
        Some(deployment("nginx:1", "web")),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let (_, third) = call(
        &sim,
        "PATCH",
        path,
        APPLY,
        Some(deployment("nginx:2", "web")),
    )
    .await;
    assert_eq!(third["metadata"]["generation"], 2);

    let (code, body) = call(
        &sim,
        "PATCH",
        path,
        APPLY,
        Some(deployment("nginx:2", "other")),
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("field is immutable"),
        "{body}"
    );

    let no_manager = "/apis/apps/v1/namespaces/default/deployments/web";
    assert_eq!(
        call(
            &sim,
            "PATCH",
            no_manager,
            APPLY,
            Some(deployment("nginx:2", "web"))
        )
        .await
        .0,
        400
    );
    let yaml =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n";
    let scaler = format!("{no_manager}?fieldManager=scaler&force=true");
    let (code, scaled) = call(&sim, "PATCH", &scaler, APPLY, None).await;
    assert_eq!(
        (code, scaled["reason"].as_str()),
        (400, Some("BadRequest")),
        "empty body"
    );
    let response = send(&sim, "PATCH", &scaler, APPLY, yaml.to_string()).await;
    assert_eq!(response.status().as_u16(), 200);
    let (_, live) = call(&sim, "GET", no_manager, JSON, None).await;
    assert_eq!(live["spec"]["replicas"], 4);
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:2"
    );
}

#[tokio::test]
async fn crds_make_their_kind_served() {
    let sim = sim::Sim::start().await.unwrap();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(call(&sim, "POST", crds, JSON, Some(crd)).await.0, 201);
    let (code, doc) = call(&sim, "GET", "/apis/example.com/v1", JSON, None).await;
    assert_eq!(code, 200);
    assert_eq!(doc["resources"][0]["kind"], "Widget");
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}});
    assert_eq!(call(&sim, "POST", widgets, JSON, Some(w)).await.0, 201);
    let (code, _) = call(
        &sim,
        "PATCH",
        &format!("{widgets}/w"),
        "application/strategic-merge-patch+json",
        Some(json!({"spec": {}})),
    )
    .await;
    assert_eq!(code, 415);
    assert_eq!(
        call(
            &sim,
            "DELETE",
            &format!("{crds}/widgets.example.com"),
            JSON,
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(call(&sim, "GET", widgets, JSON, None).await.0, 404);
}

/// Reads watch lines until `want` of them arrived or the deadline passes.
async fn watch_lines(response: Response<Incoming>, want: usize) -> Vec<Value> {
    let mut body = response.into_body();
    let mut buffer = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while buffer.iter().filter(|b| **b == b'\n').count() < want {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .expect("events before deadline");
        match frame {
            Some(Ok(f)) => buffer.extend_from_slice(f.data_ref().map_or(&[][..], |d| &d[..])),
            _ => break,
        }
    }
    buffer
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("event JSON"))
        .collect()
}

#[tokio::test]
async fn watch_replays_filters_and_expires() {
    let sim = sim::Sim::start().await.unwrap();
    let (_, a) = call(&sim, "POST", CM, JSON, Some(configmap("a", "1"))).await;
    let rv = a["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    call(&sim, "POST", CM, JSON, Some(configmap("b", "1"))).await;
    call(&sim, "DELETE", &format!("{CM}/a"), JSON, None).await;

    let response = send(
        &sim,
        "GET",
        &format!("{CM}?watch=1&resourceVersion={rv}"),
        JSON,
        String::new(),
    )
    .await;
    let events = watch_lines(response, 2).await;
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds, vec![("ADDED", "b"), ("DELETED", "a")]);

    let filtered = send(
        &sim,
        "GET",
        &format!("{CM}?watch=true&fieldSelector=metadata.name%3Db"),
        JSON,
        String::new(),
    )
    .await;
    let events = watch_lines(filtered, 1).await;
    assert_eq!(events[0]["object"]["metadata"]["name"], "b");

    sim.expire_resource_versions();
    let (code, body) = call(
        &sim,
        "GET",
        &format!("{CM}?watch=1&resourceVersion={rv}"),
        JSON,
        None,
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (410, Some("Expired")));
}

#[tokio::test]
async fn list_paginates_and_selects() {
    let sim = sim::Sim::start().await.unwrap();
    for name in ["a", "b", "c"] {
        let mut cm = configmap(name, "1");
        cm["metadata"]["labels"] = json!({"tier": if name == "b" { "db" } else { "web" }});
        call(&sim, "POST", CM, JSON, Some(cm)).await;
    }
    let (_, page) = call(&sim, "GET", &format!("{CM}?limit=2"), JSON, None).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let (_, rest) = call(
        &sim,
        "GET",
        &format!("{CM}?limit=2&continue={token}"),
        JSON,
        None,
    )
    .await;
    assert_eq!(rest["items"][0]["metadata"]["name"], "c");
    let (_, web) = call(
        &sim,
        "GET",
        &format!("{CM}?labelSelector=tier%3Dweb"),
        JSON,
        None,
    )
    .await;
    assert_eq!(web["items"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn injected_faults_fail_matching_requests() {
    let sim = sim::Sim::start().await.unwrap();
    sim.inject_fault(sim::Fault::status("POST", "/configmaps", 429, 1));
    let response = send(&sim, "POST", CM, JSON, configmap("a", "1").to_string()).await;
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(
        call(&sim, "POST", CM, JSON, Some(configmap("a", "1")))
            .await
            .0,
        201
    );
}
