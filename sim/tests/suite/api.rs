//! The API over HTTP: status errors, optimistic locking, dry-run, server-side apply no-ops,
//! generation, immutable fields, CRDs, watch with 410 Gone, and fault injection.

use std::time::Duration;

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::Incoming;
use serde_json::{Value, json};

/// Sends `method path` as the admin with `content_type`; the response's body is unread.
async fn send(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    content_type: &str,
    body: String,
) -> Response<Incoming> {
    let headers = [("content-type", content_type)];
    let token = Some(sim.admin_token());
    common::http::request(sim, method, path, token, &headers, body.into_bytes()).await
}

/// The code and JSON answer of `method path` sent as the admin with `content_type`.
async fn call(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let (code, _, bytes) =
        common::http::read(send(sim, method, path, content_type, text).await).await;
    (code, common::http::parse(&bytes))
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const JSON: &str = "application/json";
const APPLY: &str = "application/apply-patch+yaml";

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": value}})
}

/// POSTs `configmap(name, value)` to the default namespace; answers the code and the answer.
async fn post_cm(sim: &krt_sim::Sim, name: &str, value: &str) -> (u16, Value) {
    call(sim, "POST", CM, JSON, Some(configmap(name, value))).await
}

/// The `metadata.resourceVersion` of `object`.
fn resource_version(object: &Value) -> String {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn errors_are_status_objects() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let (code, body) = call(&sim, "GET", &format!("{CM}/missing"), JSON, None).await;
    assert_eq!(code, 404);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "NotFound");
    assert_eq!(body["message"], "configmaps \"missing\" not found");

    assert_eq!(post_cm(&sim, "a", "1").await.0, 201);
    let (code, body) = post_cm(&sim, "a", "1").await;
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

    let (code, body) = post_cm(&sim, "Bad_Name", "1").await;
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.name");
}

#[tokio::test]
async fn stale_resource_versions_conflict_and_dry_run_stores_nothing() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let (_, created) = post_cm(&sim, "a", "1").await;
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

/// Applies `deployment(image, app)` to `path`; answers the code and the JSON answer.
async fn apply(sim: &krt_sim::Sim, path: &str, image: &str, app: &str) -> (u16, Value) {
    call(sim, "PATCH", path, APPLY, Some(deployment(image, app))).await
}

#[tokio::test]
async fn server_side_apply_is_idempotent_and_bumps_generation_on_spec_changes() {
    // Controllers paused: a status write between the two applies would move the
    // resourceVersion this test compares (it is about SSA, not rollouts).
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        controller_interval: std::time::Duration::from_secs(3600),
        ..krt_sim::SimConfig::default()
    })
    .await
    .unwrap();
    let path = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=krt";
    let (code, first) = apply(&sim, path, "nginx:1", "web").await;
    assert_eq!(code, 201);
    assert_eq!(first["metadata"]["generation"], 1);
    assert_eq!(first["metadata"]["managedFields"][0]["manager"], "krt");
    let (code, second) = apply(&sim, path, "nginx:1", "web").await;
    assert_eq!(code, 200);
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let (_, third) = apply(&sim, path, "nginx:2", "web").await;
    assert_eq!(third["metadata"]["generation"], 2);

    let (code, body) = apply(&sim, path, "nginx:2", "other").await;
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
        apply(&sim, no_manager, "nginx:2", "web").await.0,
        422,
        "kube-apiserver answers an apply without fieldManager with 422 Invalid"
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
    let sim = krt_sim::Sim::start().await.unwrap();
    let crd = common::widget_crd();
    let crds = common::CRDS;
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
    // Deleting a CRD answers the CRD, terminating under its cleanup finalizer; the finalizer
    // controller deletes the widgets, then the CRD goes and its kind is no longer served.
    let (code, deleted) = call(
        &sim,
        "DELETE",
        &format!("{crds}/widgets.example.com"),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(deleted["kind"], "CustomResourceDefinition");
    assert!(
        deleted["metadata"]["deletionTimestamp"].is_string(),
        "{deleted}"
    );
    assert_eq!(
        deleted["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while call(&sim, "GET", widgets, JSON, None).await.0 != 404 {
        assert!(std::time::Instant::now() < deadline, "the CRD never went");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (code, _) = call(
        &sim,
        "GET",
        &format!("{crds}/widgets.example.com"),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 404);
}

/// Reads watch lines until `want` of them arrived or the deadline passes.
async fn watch_lines(response: Response<Incoming>, want: usize) -> Vec<Value> {
    let mut body = response.into_body();
    let mut buffer = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut lines = 0;
    while lines < want {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(f))) => {
                let data = f.data_ref().map_or(&[][..], |d| &d[..]);
                lines += data.iter().filter(|b| **b == b'\n').count();
                buffer.extend_from_slice(data);
            }
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
    let sim = krt_sim::Sim::start().await.unwrap();
    let (_, a) = post_cm(&sim, "a", "1").await;
    let rv = resource_version(&a);
    post_cm(&sim, "b", "1").await;
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
    let sim = krt_sim::Sim::start().await.unwrap();
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
    let sim = krt_sim::Sim::start().await.unwrap();
    sim.inject_fault(krt_sim::Fault::status("POST", "/configmaps", 429, 1));
    let response = send(&sim, "POST", CM, JSON, configmap("a", "1").to_string()).await;
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(post_cm(&sim, "a", "1").await.0, 201);
}

async fn admin(sim: &krt_sim::Sim, method: &str, path: &str, body: Value) -> u16 {
    send(sim, method, path, JSON, body.to_string())
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn admin_endpoints_fail_delay_and_time_out_requests() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let fault = json!({"verb": "GET", "path": "/configmaps", "times": 2,
        "action": {"type": "status", "code": 503, "retryAfterSeconds": 3}});
    assert_eq!(admin(&sim, "POST", "/admin/faults", fault).await, 204);
    for _ in 0..2 {
        let response = send(&sim, "GET", CM, JSON, String::new()).await;
        assert_eq!(response.status().as_u16(), 503);
        assert_eq!(response.headers()["retry-after"], "3");
    }
    assert_eq!(call(&sim, "GET", CM, JSON, None).await.0, 200, "used up");

    let latency =
        json!({"verb": "GET", "path": "/configmaps", "action": {"type": "latency", "millis": 300}});
    assert_eq!(admin(&sim, "POST", "/admin/faults", latency).await, 204);
    let started = std::time::Instant::now();
    assert_eq!(call(&sim, "GET", CM, JSON, None).await.0, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));

    let timeout = json!({"verb": "POST", "action": {"type": "timeoutAfterApply"}});
    assert_eq!(admin(&sim, "POST", "/admin/faults", timeout).await, 204);
    let (code, body) = post_cm(&sim, "late", "1").await;
    assert_eq!((code, body["reason"].as_str()), (504, Some("Timeout")));
    assert_eq!(
        call(&sim, "GET", &format!("{CM}/late"), JSON, None).await.0,
        200,
        "the write was applied before the timeout"
    );

    let many = json!({"action": {"type": "status", "code": 500}, "times": 100});
    assert_eq!(admin(&sim, "POST", "/admin/faults", many).await, 204);
    assert_eq!(call(&sim, "GET", CM, JSON, None).await.0, 500);
    assert_eq!(
        admin(&sim, "DELETE", "/admin/faults", Value::Null).await,
        204
    );
    assert_eq!(call(&sim, "GET", CM, JSON, None).await.0, 200, "cleared");
}

#[tokio::test]
async fn admin_endpoints_close_watches_and_expire_versions() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let (_, a) = post_cm(&sim, "a", "1").await;
    let rv = resource_version(&a);
    let response = send(&sim, "GET", &format!("{CM}?watch=1"), JSON, String::new()).await;
    let mut body = response.into_body();
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("initial event");
    assert!(first.is_some_and(|f| f.is_ok()));
    assert_eq!(
        admin(&sim, "POST", "/admin/close-watches", Value::Null).await,
        204
    );
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(_)) = body.frame().await {}
    })
    .await;
    assert!(end.is_ok(), "the stream ended");

    post_cm(&sim, "b", "1").await;
    assert_eq!(admin(&sim, "POST", "/admin/expire", Value::Null).await, 204);
    let (code, status) = call(
        &sim,
        "GET",
        &format!("{CM}?watch=1&resourceVersion={rv}&timeoutSeconds=5"),
        JSON,
        None,
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (410, Some("Expired")));
    let (code, _) = call(
        &sim,
        "GET",
        &format!("{CM}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200, "a watch from the current state still works");
}

/// `GET path` with `headers` only: no token but one the headers hold.
async fn get_with(
    sim: &krt_sim::Sim,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, hyper::HeaderMap, Vec<u8>) {
    let response = common::http::request(sim, "GET", path, None, headers, Vec::new()).await;
    common::http::read(response).await
}

#[tokio::test]
async fn a_request_without_the_token_is_anonymous_and_a_wrong_one_unauthorized() {
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        token: Some("t0ken".into()),
        ..krt_sim::SimConfig::default()
    })
    .await
    .unwrap();
    let (code, _, body) = get_with(&sim, CM, &[]).await;
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 403);
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let (code, _, body) = get_with(&sim, CM, &[("authorization", "Bearer wrong")]).await;
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 401);
    assert_eq!(
        (status["kind"].as_str(), status["reason"].as_str()),
        (Some("Status"), Some("Unauthorized"))
    );
    assert_eq!(
        call(&sim, "GET", CM, JSON, None).await.0,
        200,
        "the admin's token works"
    );
    for open in ["/healthz", "/livez", "/readyz", "/version"] {
        let (code, _, _) = get_with(&sim, open, &[]).await;
        assert_eq!(
            code, 200,
            "{open} is public, as system:public-info-viewer makes it"
        );
    }
    assert!(sim.kubeconfig_yaml().contains("token: t0ken"));
}

#[tokio::test]
async fn immediate_deletes_answer_like_kube_apiserver() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let (_, a) = post_cm(&sim, "a", "1").await;
    let (code, status) = call(&sim, "DELETE", &format!("{CM}/a"), JSON, None).await;
    assert_eq!(code, 200);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["status"], "Success");
    assert_eq!(status["details"]["name"], "a");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_eq!(status["details"]["uid"], a["metadata"]["uid"]);

    let pods = "/api/v1/namespaces/default/pods";
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    call(&sim, "POST", pods, JSON, Some(pod)).await;
    let (code, gone) = call(&sim, "DELETE", &format!("{pods}/p"), JSON, None).await;
    assert_eq!(
        (code, gone["kind"].as_str()),
        (200, Some("Pod")),
        "pods answer with the object"
    );

    let mut held = configmap("held", "1");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    call(&sim, "POST", CM, JSON, Some(held)).await;
    let (code, kept) = call(&sim, "DELETE", &format!("{CM}/held"), JSON, None).await;
    assert_eq!(code, 200);
    assert!(kept["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = call(&sim, "GET", &format!("{CM}/held"), JSON, None).await;
    assert_eq!(code, 200, "kept until its finalizer goes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_writes_are_all_kept_in_commit_order() {
    const N: usize = 1000;
    let sim = std::sync::Arc::new(krt_sim::Sim::start().await.unwrap());
    let from_start = format!("{CM}?watch=1&resourceVersion=1");
    let watch = send(&sim, "GET", &from_start, JSON, String::new()).await;
    // Bounded in-flight requests so the test stays within file-descriptor limits; writes from
    // different tasks still race for the store.
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(100));
    let mut tasks = Vec::new();
    for i in 0..N {
        let (sim, permits) = (sim.clone(), permits.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = permits.acquire().await.unwrap();
            let name = format!("cm-{i:04}");
            let (code, body) = call(
                &sim,
                "POST",
                CM,
                JSON,
                Some(configmap(&name, &i.to_string())),
            )
            .await;
            assert_eq!(code, 201, "{body}");
            body["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        }));
    }
    let mut versions = Vec::new();
    for t in tasks {
        versions.push(t.await.unwrap());
    }
    versions.sort_unstable();
    versions.dedup();
    assert_eq!(versions.len(), N, "every write got its own resourceVersion");
    assert_eq!(
        versions[N - 1] - versions[0],
        (N - 1) as u64,
        "no gaps: {versions:?}"
    );

    let (_, list) = call(&sim, "GET", CM, JSON, None).await;
    let items: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["metadata"]["name"] != "kube-root-ca.crt")
        .collect();
    assert_eq!(
        items.len(),
        N,
        "the namespace's own kube-root-ca.crt besides"
    );
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["metadata"]["name"], format!("cm-{i:04}"));
        assert_eq!(item["data"]["k"], i.to_string());
    }

    // The namespace's kube-root-ca.crt, published at start, comes first.
    let events = watch_lines(watch, N + 1).await;
    assert_eq!(events.len(), N + 1, "events: {:?}", events.last());
    assert_eq!(events[0]["object"]["metadata"]["name"], "kube-root-ca.crt");
    let seen: Vec<u64> = events[1..]
        .iter()
        .map(|e| {
            assert_eq!(e["type"], "ADDED");
            e["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(
        seen, versions,
        "the watch saw every write once, in resourceVersion order"
    );
}

/// A ConfigMap may hold 1 MiB of values, counted as kube's ValidateConfigMap counts them: the
/// bytes of each `data` value and of each decoded `binaryData` value, no key counted.
#[tokio::test]
async fn a_config_map_holds_a_mebibyte_of_values_with_binary_data_counted_decoded() {
    use base64::Engine as _;
    let sim = krt_sim::Sim::start().await.unwrap();
    const MIB: usize = 1024 * 1024;
    let binary = |name: &str, raw: usize| {
        let text = base64::engine::general_purpose::STANDARD.encode(vec![7u8; raw]);
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
               "binaryData": {"runtime.wasm": text}})
    };
    // 900 KiB of bytes: 1.2 MB as base64 text, within the limit.
    let (code, _) = call(&sim, "POST", CM, JSON, Some(binary("binary", 900 * 1024))).await;
    assert_eq!(code, 201, "binaryData counts its decoded bytes");
    let (code, _) = call(&sim, "POST", CM, JSON, Some(binary("over", MIB + 1))).await;
    assert_eq!(code, 422, "one byte over a MiB");
    // Exactly a MiB of `data` under a long key: the key does not count.
    let exact = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "exact"},
                       "data": {"a-long-key-that-is-not-counted": "x".repeat(MIB)}});
    let (code, _) = call(&sim, "POST", CM, JSON, Some(exact)).await;
    assert_eq!(code, 201, "keys are not counted");
    let (code, answer) = post_cm(&sim, "too-long", &"x".repeat(MIB + 1)).await;
    assert_eq!(code, 422);
    assert_eq!(
        answer["message"],
        "ConfigMap \"too-long\" is invalid: []: Too long: may not be more than 1048576 bytes",
        "kube-apiserver v1.36.2's words"
    );
    assert_eq!(answer["details"]["causes"][0]["field"], "[]");
}

/// A PodGroup is admitted only once the Workload it names holds the template it names, as
/// kube-apiserver's PodGroupWorkloadExists admission answers (403, nothing stored).
#[tokio::test]
async fn a_pod_group_needs_its_workload_and_template() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let groups = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups";
    let group = |template: &str| {
        json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
               "metadata": {"name": "workers"},
               "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "training",
                        "podGroupTemplateName": template}},
                        "schedulingPolicy": {"gang": {"minCount": 2}}}})
    };
    let (code, answer) = call(&sim, "POST", groups, JSON, Some(group("workers"))).await;
    assert_eq!((code, answer["reason"].as_str()), (403, Some("Forbidden")));
    assert_eq!(
        answer["message"],
        "podgroups.scheduling.k8s.io \"workers\" is forbidden: PodGroup rejected: Workload \"training\" not found"
    );
    assert_eq!(answer["details"]["kind"], "podgroups");
    let workload = json!({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": "training"},
        "spec": {"podGroupTemplates": [{"name": "workers",
                 "schedulingPolicy": {"gang": {"minCount": 2}}}]}});
    let workloads = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/workloads";
    assert_eq!(
        call(&sim, "POST", workloads, JSON, Some(workload)).await.0,
        201
    );
    let (code, answer) = call(&sim, "POST", groups, JSON, Some(group("drivers"))).await;
    assert_eq!(code, 403);
    assert_eq!(
        answer["message"],
        "podgroups.scheduling.k8s.io \"workers\" is forbidden: PodGroup rejected: PodGroupTemplate \"drivers\" not found in Workload \"training\""
    );
    let (code, _) = call(&sim, "POST", groups, JSON, Some(group("workers"))).await;
    assert_eq!(code, 201, "admitted once the Workload holds the template");
}
