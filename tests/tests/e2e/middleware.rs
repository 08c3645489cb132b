//! Middleware chains against the simulator: middleware 1 → … → middleware n →
//! the runtime, each link in its own instance with its own limits and policy.
//! The Rust API (`ComponentRuntime::builder`), the `krt --middleware` flag, the
//! organisation-rules middleware, a JavaScript one (componentize-js), hostile
//! links, reload of one link, logic calls passing through, components built
//! against `kusion:runtime@0.1.0`, and a middleware composed onto krt's guest
//! outside krt (`wac plug`).

use crate::support::guests;
use crate::support::{
    Runtimes, TestCluster, cache_dir, failure, krt, resource, run_ok, show, temp_dir, workspace,
};
use crate::wasmtime_cli::{self, installed};
use krt_host::model::{ApplyOptions, ApplyResponse, DeleteRequest, Resource, StatusCode};
use krt_host::policy::Policy;
use krt_host::{
    ComponentRuntime, ComponentSource, EngineOptions, Error, Limits, Middleware, Runtime,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// A chain of `middleware` in front of krt's built-in runtime.
async fn chain(cluster: &TestCluster, middleware: Vec<Middleware>) -> ComponentRuntime {
    chain_to(cluster, ComponentSource::Default, middleware).await
}

/// `middleware` in front of the runtime `source`.
async fn chain_to(
    cluster: &TestCluster,
    source: ComponentSource,
    middleware: Vec<Middleware>,
) -> ComponentRuntime {
    let options = EngineOptions {
        max_instances: 8,
        cache_dir: Some(cache_dir()),
        ..EngineOptions::default()
    };
    let mut builder = ComponentRuntime::builder(source);
    for m in middleware {
        builder = builder.middleware(m);
    }
    builder
        .build(cluster.kube_cluster("default"), &options)
        .await
        .unwrap_or_else(|e| panic!("the chain loads: {e:#?}"))
}

fn link(path: &str) -> Middleware {
    Middleware::file(Path::new(path))
}

fn configmap(namespace: &str, name: &str, annotations: Value) -> Resource {
    resource(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "data": {"k": "v"}
    }))
}

async fn apply(rt: &ComponentRuntime, plan: &Resource) -> ApplyResponse {
    rt.apply(None, Some(plan), &ApplyOptions::default()).await
}

async fn configmaps(cluster: &TestCluster, namespace: &str) -> Vec<String> {
    cluster
        .names("v1", "ConfigMap", "configmaps", Some(namespace))
        .await
        .into_iter()
        .filter(|n| n != "kube-root-ca.crt")
        .collect()
}

async fn live_configmap(cluster: &TestCluster, name: &str) -> Value {
    cluster
        .get_configmap("default", name)
        .await
        .unwrap_or_else(|| panic!("ConfigMap {name} exists"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_goes_through_every_link_then_the_runtime() {
    let cluster = TestCluster::start().await;
    let rt = chain(
        &cluster,
        vec![link(guests::PASSTHROUGH), link(guests::TAGGER)],
    )
    .await;
    assert_eq!(rt.middleware(), ["passthrough", "tagger"]);
    let before = rt.stats().instances;
    let response = apply(&rt, &configmap("default", "through", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    // One fresh instance per link: two middleware and the runtime.
    assert_eq!(rt.stats().instances - before, 3);
    // The tagger changed the plan it handed on; the runtime applied that.
    let live = live_configmap(&cluster, "through").await;
    assert_eq!(
        live["metadata"]["annotations"]["team"], "platform",
        "{live}"
    );
    let applied = response.resource.expect("the applied object comes back");
    assert_eq!(
        applied.attributes["metadata"]["annotations"]["team"],
        "platform"
    );

    // Reads, deletes and watches pass through too.
    let read = rt
        .read(
            None,
            Some(&configmap("default", "through", json!({}))),
            &Default::default(),
        )
        .await;
    assert_eq!(read.status, None, "{read:?}");
    assert!(read.resource.is_some());
    let gone = rt
        .delete(
            &configmap("default", "through", json!({})),
            &DeleteRequest::default(),
        )
        .await;
    assert_eq!(gone, None);
    assert!(configmaps(&cluster, "default").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn org_rules_refuses_violating_plans_and_hands_on_the_rest() {
    let cluster = TestCluster::start().await;
    let rt = chain(&cluster, vec![link(guests::ORG_RULES)]).await;
    let deployment = |image: &str, limits: Value, labels: Value| {
        resource(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": labels},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image, "resources": {"limits": limits}}]}
                }
            }
        }))
    };
    let deployments = async || {
        cluster
            .names("apps/v1", "Deployment", "deployments", Some("default"))
            .await
    };
    let sloppy = deployment("nginx:latest", json!({"cpu": "1"}), json!({"team": "a"}));
    let response = apply(&rt, &sloppy).await;
    failure(&response, StatusCode::IllegalManifest, "OrgRuleViolation");
    let fields: Vec<&str> = response
        .status
        .as_ref()
        .unwrap()
        .causes
        .iter()
        .map(|c| c.field.as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "metadata.labels.app.kubernetes.io/name",
            "spec.template.spec.containers[0].image",
            "spec.template.spec.containers[0].resources.limits.memory"
        ]
    );
    assert!(
        deployments().await.is_empty(),
        "a violating plan never reaches the runtime"
    );

    let good = deployment(
        "nginx:1.27",
        json!({"cpu": "1", "memory": "256Mi"}),
        json!({"team": "a", "app.kubernetes.io/name": "web"}),
    );
    let response = apply(&rt, &good).await;
    assert_eq!(response.status, None, "{response:?}");
    assert_eq!(deployments().await, ["web"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_has_no_cluster_access_unless_granted() {
    let cluster = TestCluster::start().await;
    let rt = chain(&cluster, vec![link(guests::LOOKUP)]).await;
    let response = apply(&rt, &configmap("default", "looked-up", json!({}))).await;
    let message = failure(&response, StatusCode::PermissionDenied, "PolicyDenied");
    for part in [
        "middleware `lookup` (link 1 of 2)",
        "get ConfigMap default/org-settings",
        "add `ConfigMap` under `kinds:`",
        "--middleware-policy lookup=FILE",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert!(
        configmaps(&cluster, "default").await.is_empty(),
        "the refused middleware stopped the call"
    );

    // Granted a read of ConfigMaps in `default`, the lookup works; the
    // runtime's own policy is untouched by the middleware's grant.
    let granted = Middleware {
        policy: Policy {
            namespaces: vec!["default".into()],
            kinds: vec!["ConfigMap".into()],
            verbs: [krt_host::policy::Verb::Get].into(),
            ..Policy::default()
        },
        ..link(guests::LOOKUP)
    };
    let rt = chain(&cluster, vec![granted]).await;
    assert_eq!(rt.policy(), &Policy::unrestricted());
    let response = apply(&rt, &configmap("default", "looked-up", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    let live = live_configmap(&cluster, "looked-up").await;
    assert_eq!(
        live["metadata"]["annotations"]["krt.dev/org-settings"], "absent",
        "{live}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_or_limit_in_a_link_names_it_and_the_runtime_is_not_called() {
    let cluster = TestCluster::start().await;
    let spinner = Middleware {
        limits: Limits {
            cpu_time: Duration::from_millis(300),
            ..Limits::default()
        },
        ..link(guests::SPINNER)
    };
    let rt = chain(&cluster, vec![link(guests::PASSTHROUGH), spinner]).await;
    let started = std::time::Instant::now();
    let response = apply(&rt, &configmap("default", "spun", json!({}))).await;
    let message = failure(&response, StatusCode::LimitExceeded, "GuestCpuLimit");
    assert!(
        message.contains("middleware `spinner` (link 2 of 3)")
            && message.contains("CPU time limit of 300ms")
            && message.contains("runtime.apply"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(configmaps(&cluster, "default").await.is_empty());

    // A panic before the next link: the object the delete was about stays.
    let plain = cluster.runtime().await;
    let kept = configmap("default", "kept", json!({}));
    assert_eq!(apply(&plain, &kept).await.status, None);
    let status = rt
        .delete(&kept, &DeleteRequest::default())
        .await
        .expect("the delete fails");
    assert_eq!(
        (status.code, status.reason.as_str()),
        (StatusCode::Internal, "GuestPanic"),
        "{status:?}"
    );
    assert!(
        status
            .message
            .contains("middleware `spinner` (link 2 of 3)")
            && status.message.contains("refuses to delete anything"),
        "{}",
        status.message
    );
    assert_eq!(configmaps(&cluster, "default").await, ["kept"]);

    // The chain keeps serving: reads pass the spinner.
    let read = rt.read(None, Some(&kept), &Default::default()).await;
    assert_eq!(read.status, None, "{read:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_answer_behind_a_middleware_names_the_link_that_gave_it() {
    // A middleware's call on the next link gets the answer as it is, checked
    // but not converted: a runtime's answer that is not JSON, or not a
    // Kubernetes object, is blamed on the runtime, not on the middleware
    // that hands it back.
    let cluster = TestCluster::start().await;
    let options = EngineOptions {
        max_instances: 8,
        cache_dir: Some(cache_dir()),
        ..EngineOptions::default()
    };
    let rt = ComponentRuntime::builder(ComponentSource::File(guests::LIAR.into()))
        .middleware(link(guests::PASSTHROUGH))
        .build(cluster.kube_cluster("default"), &options)
        .await
        .unwrap_or_else(|e| panic!("the chain loads: {e:#?}"));
    let plan = configmap("default", "lie", json!({}));
    let response = apply(&rt, &plan).await;
    let message = failure(&response, StatusCode::Internal, "GuestInvalidResult");
    assert!(
        message.starts_with("the runtime component returned an invalid result from runtime.apply")
            && message.contains("invalid attributes JSON for v1:ConfigMap:default:lie"),
        "{message}"
    );
    let dry = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    let response = rt.apply(None, Some(&plan), &dry).await;
    let message = failure(&response, StatusCode::Internal, "GuestInvalidResult");
    assert!(
        message.starts_with("the runtime component returned an invalid result from runtime.apply")
            && message.contains("resource v1:ConfigMap:default:lie is not a Kubernetes object"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_swaps_one_link_and_refuses_the_wrong_kind_of_component() {
    let cluster = TestCluster::start().await;
    let rt = chain(&cluster, vec![link(guests::PASSTHROUGH)]).await;
    let response = apply(&rt, &configmap("default", "first", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    assert!(live_configmap(&cluster, "first").await["metadata"]["annotations"]["team"].is_null());

    rt.reload_middleware(1, &ComponentSource::File(guests::TAGGER.into()))
        .await
        .expect("the tagger loads as middleware 1");
    let response = apply(&rt, &configmap("default", "second", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    assert_eq!(
        live_configmap(&cluster, "second").await["metadata"]["annotations"]["team"],
        "platform"
    );

    let not_a_middleware = rt
        .reload_middleware(1, &ComponentSource::Default)
        .await
        .unwrap_err();
    assert!(
        matches!(not_a_middleware, Error::NotAMiddleware { .. }),
        "{not_a_middleware}"
    );
    let not_a_runtime = rt
        .reload(&ComponentSource::File(guests::PASSTHROUGH.into()))
        .await
        .unwrap_err();
    assert!(
        not_a_runtime.to_string().contains("it is a middleware"),
        "{not_a_runtime}"
    );
    let missing = rt
        .reload_middleware(2, &ComponentSource::File(guests::PASSTHROUGH.into()))
        .await
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "the chain has no middleware 2 (it has 1)"
    );
    // The refused reloads changed nothing.
    let response = apply(&rt, &configmap("default", "third", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    assert_eq!(
        live_configmap(&cluster, "third").await["metadata"]["annotations"]["team"],
        "platform"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logic_calls_pass_through_middleware_that_do_not_export_logic() {
    let cluster = TestCluster::start().await;
    // krt's guest, but not as the built-in one: its logic runs in its sandbox.
    let guest = ComponentSource::Bytes(krt_host::DEFAULT_COMPONENT.into());
    let sandboxed = chain_to(&cluster, guest, vec![link(guests::PASSTHROUGH)]).await;
    let builtin = chain(&cluster, vec![link(guests::PASSTHROUGH)]).await;
    let before = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "1"}});
    let after = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "2"}});
    // Each logic call runs one instance, the runtime's and not the
    // middleware's; krt's built-in guest, whose logic is the host's own code,
    // runs none. The answers are the same.
    for (rt, instances_per_call) in [(&sandboxed, 1), (&builtin, 0)] {
        assert!(rt.exports_logic(), "the runtime exports logic");
        let instances = rt.stats().instances;
        let diff = rt
            .diff(Some(&before), Some(&after), &[])
            .await
            .expect("diff");
        assert_eq!(
            diff,
            krt_guest::diff::diff(Some(&before), Some(&after), &[])
        );
        assert_eq!(diff.changes[0].path, "data.k");
        let drift = rt.drift(&before, Some(&after), &[]).await.expect("drift");
        assert_eq!(drift.changes.len(), 1);
        let health = rt.health(&after).await.expect("health");
        assert_eq!(health.state, krt_host::model::HealthState::Current);
        assert_eq!(rt.stats().instances - instances, 3 * instances_per_call);
    }
}

/// `component` as built against `kusion:runtime@0.1.0`: the version of its
/// `kusion:runtime` interface names put back. 0.1.1 only added worlds (no interface
/// changed), so nothing else differs: when 0.1.1 was introduced, krt's guest built
/// against 0.1.1 and relabelled this way was byte for byte the guest built against 0.1.0.
fn as_0_1_0(component: &[u8]) -> Vec<u8> {
    let (from, to) = (
        format!("@{}", krt_host::WIT_VERSION).into_bytes(),
        b"@0.1.0".to_vec(),
    );
    assert_eq!(from.len(), to.len(), "the relabelling keeps every length");
    let prefix = b"kusion:runtime/";
    let mut out = component.to_vec();
    let mut i = 0;
    while let Some(at) = out[i..].windows(prefix.len()).position(|w| w == prefix) {
        let start = i + at + prefix.len();
        let name_end = start
            + out[start..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
                .unwrap_or(0);
        if out[name_end..].starts_with(&from) {
            out[name_end..name_end + to.len()].copy_from_slice(&to);
        }
        i = name_end;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_built_against_0_1_0_still_load() {
    let cluster = TestCluster::start().await;
    let options = EngineOptions {
        cache_dir: Some(cache_dir()),
        ..EngineOptions::default()
    };
    let old = |bytes: &[u8]| {
        let relabelled = as_0_1_0(bytes);
        assert_ne!(
            relabelled, bytes,
            "the component names kusion:runtime interfaces"
        );
        ComponentSource::Bytes(relabelled.into())
    };
    let load = async |source: ComponentSource| {
        ComponentRuntime::new(&source, cluster.kube_cluster("default"), &options).await
    };
    // krt's own guest, as a 0.1.0 component, runs behind 0.1.1 middleware.
    let guest = old(krt_host::DEFAULT_COMPONENT);
    let rt = ComponentRuntime::builder(guest.clone())
        .middleware(link(guests::PASSTHROUGH))
        .build(cluster.kube_cluster("default"), &options)
        .await
        .expect("a 0.1.0 runtime loads behind a 0.1.1 middleware");
    let response = apply(&rt, &configmap("default", "old", json!({}))).await;
    assert_eq!(response.status, None, "{response:?}");
    assert_eq!(configmaps(&cluster, "default").await, ["old"]);
    assert!(load(guest).await.is_ok());

    // The hostile guests: the well-formed ones load as before, the rest are
    // refused for the same reasons.
    for path in [
        guests::SPIN,
        guests::HOG,
        guests::RECURSE,
        guests::HUGE,
        guests::CHATTY,
        guests::BUSY,
        guests::ROGUE,
        guests::MIDTRAP,
        guests::LIAR,
        guests::SLEEPY,
    ] {
        let bytes = std::fs::read(path).unwrap();
        if let Err(e) = load(old(&bytes)).await {
            panic!("{path} as a 0.1.0 component: {e}");
        }
    }
    let sockets = load(old(&std::fs::read(guests::SOCKETS).unwrap()))
        .await
        .err()
        .expect("refused");
    assert!(
        sockets.to_string().contains("`wasi:sockets/tcp@0.2.6`"),
        "{sockets}"
    );
    let unknown = std::fs::read(guests::UNKNOWN).unwrap();
    let unknown = load(ComponentSource::Bytes(unknown.into()))
        .await
        .err()
        .expect("refused");
    assert!(
        unknown.to_string().contains("`evil:exfil/send@1.0.0`"),
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_runs_a_chain_and_names_the_grant_a_refused_middleware_needs() {
    let cluster = TestCluster::start().await;
    let dir = cluster.kubeconfig.parent().unwrap().to_path_buf();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\n  \
              labels: {app.kubernetes.io/name: app, team: a}\ndata: {k: v}\n";
    // Refused: the lookup middleware asks for a read it was not granted.
    let args = [
        "--middleware",
        guests::ORG_RULES,
        "--middleware",
        guests::LOOKUP,
    ];
    let run = krt(
        &cluster.kubeconfig,
        &[&args[..], &["apply", "--yes", "-f", "-"]].concat(),
        Some(cm),
    )
    .await;
    let output = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{output}");
    assert!(
        output.contains("middleware `lookup` (link 2 of 3)")
            && output.contains("--middleware-policy lookup=FILE"),
        "{output}"
    );
    assert!(configmaps(&cluster, "default").await.is_empty(), "{output}");

    // Granted, the chain applies; org-rules still refuses a plan without labels.
    let grant = dir.join("lookup-policy.yaml");
    std::fs::write(
        &grant,
        "namespaces: [default]\nkinds: [ConfigMap]\nverbs: [get]\n",
    )
    .unwrap();
    let granted = format!("lookup={}", grant.display());
    let chain = [&args[..], &["--middleware-policy", granted.as_str()]].concat();
    let run = krt(
        &cluster.kubeconfig,
        &[&chain[..], &["apply", "--yes", "-f", "-"]].concat(),
        Some(cm),
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    let live = live_configmap(&cluster, "app").await;
    assert_eq!(
        live["metadata"]["annotations"]["krt.dev/org-settings"],
        "absent"
    );

    let sloppy = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sloppy, namespace: default}\n";
    let run = krt(
        &cluster.kubeconfig,
        &[&chain[..], &["apply", "--yes", "-f", "-"]].concat(),
        Some(sloppy),
    )
    .await;
    let output = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{output}");
    assert!(
        output.contains("breaks the organisation's rules"),
        "{output}"
    );
    assert_eq!(configmaps(&cluster, "default").await, ["app"]);

    // A grant for a middleware the chain does not have is a usage error.
    let run = krt(
        &cluster.kubeconfig,
        &[
            &args[..],
            &["--middleware-policy", "nope=x.yaml", "preview", "-f", "-"],
        ]
        .concat(),
        Some(cm),
    )
    .await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no --middleware is named `nope`")
            && run.stderr.contains("`org_rules`, `lookup`"),
        "{}",
        run.stderr
    );
}

/// The JavaScript middleware `examples/js-labels`, built once per test run by its
/// script; `None` (after printing why) when node and npm are missing outside CI.
pub(crate) fn js_labels() -> Option<&'static PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if !installed(&["node", "npm"]) {
                return None;
            }
            let out = wasmtime_cli::target_dir().join("components/labels.wasm");
            run_ok(
                Command::new(workspace().join("examples/js-labels/build.sh"))
                    .arg(&out)
                    .env("CARGO_TARGET_DIR", wasmtime_cli::target_dir()),
                "examples/js-labels/build.sh",
            );
            warm_cli_cache(&out);
            Some(out)
        })
        .as_ref()
}

/// Compiles `middleware` into the compile cache the `krt` runs of the tests share, with no
/// time limit: the JS engine inside is 12 MB, which a debug `krt` on a loaded machine may take
/// longer to compile than a test's `krt` run is given.
fn warm_cli_cache(middleware: &Path) {
    let dir = temp_dir("warm");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: warm}\n",
    )
    .unwrap();
    run_ok(
        Command::new(crate::support::krt_bin())
            .args(["--cluster", "sim", "--middleware"])
            .arg(middleware)
            .args(["preview", "-f", "cm.yaml"])
            .current_dir(dir.path())
            .env("XDG_CACHE_HOME", cache_dir())
            .env("HOME", dir.path())
            .env_remove("KUBECONFIG"),
        &format!("krt preview through {}", middleware.display()),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_middleware_labels_plans_and_refuses_load_balancers_in_dev() {
    let Some(labels) = js_labels() else { return };
    let cluster = TestCluster::start().await;
    // Loading it is krt's import check: no filesystem, sockets, HTTP or unknown imports.
    let rt = chain(&cluster, vec![Middleware::file(labels)]).await;
    if installed(&["wasm-tools"]) {
        let (imports, exports) = wasmtime_cli::world(labels);
        let v = krt_host::WIT_VERSION;
        let names = |l: &[&str]| {
            l.iter()
                .map(|i| format!("kusion:runtime/{i}@{v}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            imports,
            names(&["host", "runtime", "types"]),
            "no WASI at all"
        );
        assert_eq!(exports, names(&["runtime"]));
    }

    let response = apply(
        &rt,
        &configmap("default", "app", json!({"team": "payments"})),
    )
    .await;
    assert_eq!(response.status, None, "{response:?}");
    let labels_of = live_configmap(&cluster, "app").await["metadata"]["labels"].clone();
    assert_eq!(
        labels_of,
        json!({"app.kubernetes.io/managed-by": "krt", "team": "payments"})
    );

    cluster.create_namespace("dev-a").await;
    let service = |name: &str, kind: &str| {
        resource(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "dev-a"},
            "spec": {"type": kind, "selector": {"app": name}, "ports": [{"port": 80}]}
        }))
    };
    let services = async || {
        cluster
            .names("v1", "Service", "services", Some("dev-a"))
            .await
    };
    let response = apply(&rt, &service("public", "LoadBalancer")).await;
    let message = failure(&response, StatusCode::IllegalManifest, "LoadBalancerInDev");
    assert!(message.contains("v1:Service:dev-a:public"), "{message}");
    assert!(services().await.is_empty(), "the refusal stopped the write");
    let response = apply(&rt, &service("internal", "ClusterIP")).await;
    assert_eq!(response.status, None, "{response:?}");
    assert_eq!(services().await, ["internal"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_runs_org_rules_and_the_javascript_middleware_in_front_of_the_runtime() {
    let Some(labels) = js_labels() else { return };
    let cluster = TestCluster::start().await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\n  \
                 labels: {app.kubernetes.io/name: app, team: a}\n  annotations: {team: a}\n\
                 data: {k: v}\n";
    let labels = labels.to_str().unwrap();
    let chain = ["--middleware", guests::ORG_RULES, "--middleware", labels];
    let run = krt(
        &cluster.kubeconfig,
        &[&chain[..], &["apply", "--yes", "-f", "-"]].concat(),
        Some(input),
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    let live = live_configmap(&cluster, "app").await;
    assert_eq!(
        live["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "krt"
    );
    let run = krt(
        &cluster.kubeconfig,
        &[&chain[..], &["apply", "--yes", "-f", "-"]].concat(),
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sloppy, namespace: default}\n"),
    )
    .await;
    assert_eq!(run.code, 1, "{}", show(&run));
    assert_eq!(configmaps(&cluster, "default").await, ["app"]);
}

/// Runs `wac` with `args`; fails the test unless it succeeds.
fn wac(args: &[&std::ffi::OsStr]) {
    run_ok(
        wasmtime_cli::tool("wac").args(args),
        &format!("wac {args:?}"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_plugged_onto_krts_guest_runs_in_krt_and_under_wasmtime() {
    let Some(c) = wasmtime_cli::components() else {
        return;
    };
    let dir = temp_dir("plugged");
    let plugged = dir.path().join("org-rules-guest.wasm");
    let runnable = dir.path().join("org-rules-guest-memcluster.wasm");
    // org-rules' `runtime` import is krt's guest: one runtime component.
    wac(&[
        "plug".as_ref(),
        "--plug".as_ref(),
        c.guest.as_os_str(),
        guests::ORG_RULES.as_ref(),
        "-o".as_ref(),
        plugged.as_os_str(),
    ]);
    // For the wasmtime CLI, its cluster is the in-memory one (`wac plug` cannot export `types`
    // again, which the composition needs, so this step is a script).
    let memcluster = format!("krt:memcluster={}", c.memcluster.display());
    let runtime = format!("krt:runtime={}", plugged.display());
    let script = workspace().join("tests/with-cluster.wac");
    wac(&[
        "compose".as_ref(),
        "--dep".as_ref(),
        memcluster.as_ref(),
        "--dep".as_ref(),
        runtime.as_ref(),
        "-o".as_ref(),
        runnable.as_os_str(),
        script.as_os_str(),
    ]);

    let sloppy = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "default"}, "data": {"k": "v"}});
    let mut good = sloppy.clone();
    good["metadata"]["labels"] = json!({"app.kubernetes.io/name": "app", "team": "a"});
    let call = |object: &Value| {
        format!(
            "apply(none, some({}), {})",
            wasmtime_cli::resource("v1:ConfigMap:default:app", object),
            wasmtime_cli::APPLY_OPTIONS
        )
    };
    let printed = wasmtime_cli::invoke(&runnable, &call(&sloppy));
    assert!(
        printed.contains("reason: \"OrgRuleViolation\"") && printed.contains("action: unchanged"),
        "{printed}"
    );
    let printed = wasmtime_cli::invoke(&runnable, &call(&good));
    assert!(
        printed.ends_with("action: create, retries: 0}"),
        "{printed}"
    );

    // krt loads the plugged component as its runtime.
    let cluster = TestCluster::start().await;
    let component = plugged.to_str().unwrap();
    let yaml = |o: &Value| serde_json::to_string(o).unwrap();
    let run = krt(
        &cluster.kubeconfig,
        &["--component", component, "apply", "--yes", "-f", "-"],
        Some(&yaml(&sloppy)),
    )
    .await;
    let output = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{output}");
    assert!(
        output.contains("breaks the organisation's rules"),
        "{output}"
    );
    assert!(configmaps(&cluster, "default").await.is_empty());
    let run = krt(
        &cluster.kubeconfig,
        &["--component", component, "apply", "--yes", "-f", "-"],
        Some(&yaml(&good)),
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert_eq!(configmaps(&cluster, "default").await, ["app"]);
}

#[test]
fn the_readmes_middleware_examples_are_the_tested_files_and_short() {
    let readme = std::fs::read_to_string(workspace().join("docs/middleware.md")).unwrap();
    for file in [
        "tests/middleware/examples/tagger.rs",
        "examples/js-labels/labels.js",
    ] {
        let text = std::fs::read_to_string(workspace().join(file)).unwrap();
        assert!(readme.contains(&text), "README.md shows {file} as it is");
        assert!(text.lines().count() < 40, "{file} is under 40 lines");
    }
}
