//! `krt controller` as processes against krt-sim: `install` prints and
//! applies what runs it; two `run` processes share the Stacks through shard
//! Leases, reconciling each exactly once (counted from the simulator's watch
//! events); killing the one that holds the shards hands them over within the
//! lease duration.

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use krt_controller::install::{InstallOptions, TenancyMode, manifests};
use krt_testkit::{TestCluster, krt, krt_spawn};
use kube::Api;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Installs the controller's objects with `krt controller install --apply`
/// (not waiting for its Deployment: the tests run the controller themselves)
/// and creates namespace `team-a`.
async fn install(cluster: &TestCluster) {
    let run = krt(
        &cluster.kubeconfig,
        &[
            "-n",
            "krt-system",
            "controller",
            "install",
            "--apply",
            "--watch=false",
        ],
        None,
    )
    .await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    cluster.create_namespace("team-a").await;
}

/// A free local port (for a controller's metrics).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `krt controller run` as `identity`, its output in `<dir>/<identity>.log`.
fn run_controller(cluster: &TestCluster, identity: &str, lease: &str) -> tokio::process::Child {
    let log = std::fs::File::create(cluster.dir().join(format!("{identity}.log"))).unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    krt_spawn(
        cluster.dir(),
        &[
            "--kubeconfig",
            cluster.kubeconfig.to_str().unwrap(),
            "controller",
            "run",
            "--identity",
            identity,
            "--shards",
            "4",
            "--lease-duration",
            lease,
            "--metrics-address",
            &metrics,
        ],
        Stdio::null(),
        Stdio::from(log),
    )
}

/// A Stack `name` in `team-a` applying ConfigMaps `names` (as `name-N`), every 2 s.
fn stack(name: &str, names: &[&str]) -> Value {
    stack_every(name, names, "2s")
}

/// A Stack `name` in `team-a` applying ConfigMaps `names` (as `name-N`), every `interval`.
fn stack_every(name: &str, names: &[&str], interval: &str) -> Value {
    let resources: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("{name}-{n}")}, "data": {"key": n}})
        })
        .collect();
    json!({"apiVersion": "krt.dev/v1alpha1", "kind": "Stack",
           "metadata": {"name": name, "namespace": "team-a"},
           "spec": {"interval": interval, "resources": resources}})
}

fn stacks_api(cluster: &TestCluster) -> Api<DynamicObject> {
    cluster.api("krt.dev/v1alpha1", "Stack", "stacks", Some("team-a"))
}

/// Whether the Stack object is Ready at its generation.
fn is_ready(stack: &Value) -> bool {
    let ready = stack["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    ready && stack["status"]["observedGeneration"] == stack["metadata"]["generation"]
}

/// Polls `probe` every 100 ms until it gives a value; panics after
/// `within`, with the controllers' logs of `dir`.
async fn until<T, F, Fut>(what: &str, within: Duration, dir: &Path, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            started.elapsed() < within,
            "{what}: not within {within:?}\n{}",
            logs(dir)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The controllers' logs in `dir`.
fn logs(dir: &Path) -> String {
    let logs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    logs.join("\n---\n")
}

/// Waits until every Stack named is Ready.
async fn until_ready(cluster: &TestCluster, names: &[String], within: Duration, dir: &Path) {
    let api = stacks_api(cluster);
    let started = Instant::now();
    loop {
        let list = api.list(&Default::default()).await.expect("Stacks list");
        let ready: BTreeSet<String> = list
            .items
            .iter()
            .map(|s| serde_json::to_value(s).unwrap())
            .filter(is_ready)
            .filter_map(|s| s["metadata"]["name"].as_str().map(str::to_owned))
            .collect();
        if names.iter().all(|n| ready.contains(n)) {
            return;
        }
        if started.elapsed() > within {
            panic!(
                "Stacks not Ready within {within:?}: {ready:?} of {names:?}\n{}",
                logs(dir)
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The holder of each shard Lease.
async fn holders(cluster: &TestCluster) -> BTreeMap<String, String> {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), "krt-system");
    leases
        .list(&Default::default())
        .await
        .expect("Leases list")
        .items
        .into_iter()
        .filter_map(|l| {
            let name = l.metadata.name?;
            let holder = l.spec?.holder_identity?;
            name.contains("-shard-").then_some((name, holder))
        })
        .collect()
}

/// The ADDED and MODIFIED watch events of each ConfigMap of `team-a`, counted
/// while the returned task runs.
type Counts = Arc<Mutex<BTreeMap<String, (u32, u32)>>>;

async fn count_writes(cluster: &TestCluster) -> Counts {
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), "team-a");
    let version = api
        .list(&Default::default())
        .await
        .expect("ConfigMaps list")
        .metadata
        .resource_version
        .expect("a list resourceVersion");
    // The Stacks' objects only (the namespace's own kube-root-ca.crt is the cluster's).
    let stacks = WatchParams::default().labels("krt.dev/stack").timeout(290);
    let mut stream = api.watch(&stacks, &version).await.expect("a watch").boxed();
    let counts: Counts = Arc::default();
    let c = counts.clone();
    tokio::spawn(async move {
        while let Some(Ok(event)) = stream.next().await {
            let (cm, added) = match event {
                WatchEvent::Added(cm) => (cm, true),
                WatchEvent::Modified(cm) => (cm, false),
                _ => continue,
            };
            let name = cm.metadata.name.unwrap_or_default();
            let mut counts = c.lock().unwrap();
            let entry = counts.entry(name).or_default();
            if added {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    });
    counts
}

/// The `reportingInstance` of the `Applied` Events of each Stack.
async fn appliers(cluster: &TestCluster) -> BTreeMap<String, Vec<String>> {
    let events: Api<Event> = Api::namespaced(cluster.client.clone(), "team-a");
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in events.list(&Default::default()).await.unwrap().items {
        if e.reason.as_deref() != Some("Applied") {
            continue;
        }
        let stack = e.regarding.and_then(|r| r.name).unwrap_or_default();
        let by = e.reporting_instance.unwrap_or_default();
        // A repeated Event is updated in place: its series says how often it happened.
        let times = e.series.map_or(1, |s| s.count).max(1);
        for _ in 0..times {
            out.entry(stack.clone()).or_default().push(by.clone());
        }
    }
    out
}

async fn create_stacks(cluster: &TestCluster, names: &[String], configmaps: &[&str]) {
    create_stacks_every(cluster, names, configmaps, "2s").await;
}

async fn create_stacks_every(
    cluster: &TestCluster,
    names: &[String],
    configmaps: &[&str],
    interval: &str,
) {
    let api = stacks_api(cluster);
    for name in names {
        let stack = stack_every(name, configmaps, interval);
        let object: DynamicObject = serde_json::from_value(stack).unwrap();
        api.create(&Default::default(), &object)
            .await
            .expect("Stack created");
    }
}

/// What `krt controller install ARGS` prints.
async fn printed_install(cluster: &TestCluster, args: &[&str]) -> String {
    let run = krt(
        &cluster.kubeconfig,
        &[&["controller", "install"], args].concat(),
        None,
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

/// The kinds of the objects in printed manifests, in order.
fn kinds(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("kind: "))
        .map(str::to_owned)
        .collect()
}

/// The kinds of the manifests `krt controller install` prints under
/// `tenancy`, in order (the controller's own tests pin the list).
fn install_kinds(tenancy: TenancyMode) -> Vec<String> {
    let options = InstallOptions {
        namespace: "krt-system".into(),
        image: "krt:test".into(),
        replicas: 1,
        shards: 1,
        tenancy,
        default_service_account: None,
    };
    manifests(&options)
        .iter()
        .map(|o| o["kind"].as_str().expect("a kind").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_install_prints_and_applies_the_crd_rbac_and_deployment() {
    let cluster = TestCluster::start().await;
    let printed = printed_install(&cluster, &["--replicas", "3"]).await;
    // Multi-tenant by default: no role that applies everything, and Stacks
    // naming no account run as `default` of their namespace.
    assert_eq!(kinds(&printed), install_kinds(TenancyMode::Multi));
    for said in [
        "krt.dev/tenancy: multi",
        "- --default-service-account\n        - default\n",
    ] {
        assert!(printed.contains(said), "{said}: {printed}");
    }
    let single = printed_install(&cluster, &["--tenancy", "single"]).await;
    assert_eq!(kinds(&single), install_kinds(TenancyMode::Single));
    assert!(
        single.contains("krt.dev/tenancy: single")
            && !single.contains("- --default-service-account"),
        "{single}"
    );
    assert!(printed.contains("replicas: 3"), "{printed}");
    install(&cluster).await;
    for (api_version, kind, plural, ns, name) in [
        (
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            None,
            "stacks.krt.dev",
        ),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "clusterroles",
            None,
            "krt-controller",
        ),
        (
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            Some("krt-system"),
            "krt-controller",
        ),
        (
            "apps/v1",
            "Deployment",
            "deployments",
            Some("krt-system"),
            "krt-controller",
        ),
    ] {
        assert!(
            cluster
                .get(api_version, kind, plural, ns, name)
                .await
                .is_some(),
            "{kind} {name} installed"
        );
    }
    // The CRD serves Stacks, with their status subresource.
    create_stacks(&cluster, &["probe".into()], &["a"]).await;
    let api = stacks_api(&cluster);
    let patch = json!({"status": {"observedGeneration": 1}});
    api.patch_status("probe", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the status subresource is served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controller_processes_reconcile_each_stack_exactly_once() {
    let cluster = TestCluster::start().await;
    install(&cluster).await;
    let counts = count_writes(&cluster).await;
    let _a = run_controller(&cluster, "replica-a", "3s");
    let _b = run_controller(&cluster, "replica-b", "3s");
    // Both replicas hold two of the four shards once they have balanced.
    let balanced = until(
        "the shards balanced",
        Duration::from_secs(60),
        cluster.dir(),
        || async {
            let h = holders(&cluster).await;
            let a = h.values().filter(|v| *v == "replica-a").count();
            let b = h.values().filter(|v| *v == "replica-b").count();
            (a == 2 && b == 2).then_some(h)
        },
    )
    .await;
    let names: Vec<String> = (0..8).map(|i| format!("s{i}")).collect();
    create_stacks(&cluster, &names, &["x", "y"]).await;
    until_ready(&cluster, &names, Duration::from_secs(90), cluster.dir()).await;
    // Several intervals more: nothing is written again.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts.len(), 16, "{counts:?}");
    for (name, (added, modified)) in &counts {
        assert_eq!((*added, *modified), (1, 0), "{name}: written once");
    }
    let by = appliers(&cluster).await;
    let mut instances = BTreeSet::new();
    for name in &names {
        let applied = &by[name];
        assert_eq!(applied.len(), 1, "{name} applied once: {applied:?}");
        instances.insert(applied[0].clone());
    }
    assert_eq!(
        instances,
        BTreeSet::from(["replica-a".to_owned(), "replica-b".to_owned()]),
        "both replicas took part ({balanced:?})"
    );
    assert_eq!(holders(&cluster).await, balanced, "the shards stayed put");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_active_controller_hands_its_stacks_over_within_the_lease_duration() {
    let cluster = TestCluster::start().await;
    install(&cluster).await;
    let lease = Duration::from_secs(3);
    let mut a = run_controller(&cluster, "replica-a", "3s");
    until(
        "replica-a holds every shard",
        Duration::from_secs(60),
        cluster.dir(),
        || async {
            let h = holders(&cluster).await;
            (h.len() == 4 && h.values().all(|v| v == "replica-a")).then_some(())
        },
    )
    .await;
    let names: Vec<String> = (0..4).map(|i| format!("s{i}")).collect();
    create_stacks(&cluster, &names, &["x"]).await;
    until_ready(&cluster, &names, Duration::from_secs(90), cluster.dir()).await;
    let _b = run_controller(&cluster, "replica-b", "3s");
    // replica-b is up (its member Lease), and replica-a still holds everything.
    until(
        "replica-b is up",
        Duration::from_secs(30),
        cluster.dir(),
        || async {
            let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), "krt-system");
            leases
                .get_opt("krt-controller-member-replica-b")
                .await
                .ok()
                .flatten()
                .map(|_| ())
        },
    )
    .await;
    a.start_kill().expect("replica-a is killed");
    a.wait().await.expect("replica-a ends");
    let killed = Instant::now();
    // A change made while no replica holds the shards.
    let api = stacks_api(&cluster);
    for name in &names {
        let patch = json!({"spec": stack(name, &["x", "z"])["spec"]});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    until(
        "replica-b holds every shard",
        lease + Duration::from_secs(3),
        cluster.dir(),
        || async {
            let h = holders(&cluster).await;
            (h.len() == 4 && h.values().all(|v| v == "replica-b")).then_some(())
        },
    )
    .await;
    let handed_over = killed.elapsed();
    until_ready(&cluster, &names, Duration::from_secs(30), cluster.dir()).await;
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), "team-a");
    for name in &names {
        assert!(cms.get_opt(&format!("{name}-z")).await.unwrap().is_some());
    }
    assert!(handed_over <= lease, "handed over after {handed_over:?}");
    eprintln!(
        "handover after {handed_over:?}; all reconciled after {:?}",
        killed.elapsed()
    );
}

/// The controller process's peak resident set (`VmHWM`), in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line");
    kib / 1024.0
}

/// The README's figure: 200 Stacks of 5 ConfigMaps each reach Ready under one
/// `krt controller run` process; prints the time and the process's peak RSS.
/// Run with `cargo test -p krt-cli --test suite controller:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (about a minute): run it for the README's figure"]
async fn two_hundred_stacks_of_five_config_maps_reach_ready() {
    let cluster = TestCluster::start().await;
    install(&cluster).await;
    let controller = run_controller(&cluster, "replica-a", "15s");
    let pid = controller.id().expect("a pid");
    until(
        "replica-a holds every shard",
        Duration::from_secs(60),
        cluster.dir(),
        || async { (holders(&cluster).await.len() == 4).then_some(()) },
    )
    .await;
    let names: Vec<String> = (0..200).map(|i| format!("s{i:03}")).collect();
    let started = Instant::now();
    // A production-like interval: the figure is the time to converge, not drift checks.
    create_stacks_every(&cluster, &names, &["a", "b", "c", "d", "e"], "5m").await;
    until_ready(&cluster, &names, Duration::from_secs(900), cluster.dir()).await;
    let took = started.elapsed();
    eprintln!(
        "200 Stacks x 5 ConfigMaps Ready in {:.1} s; controller peak RSS {:.0} MiB",
        took.as_secs_f64(),
        peak_rss_mib(pid)
    );
    // The Stacks' own (the namespace also holds the cluster's root CA bundle).
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), "team-a");
    let stacks_own = ListParams::default().labels(krt_stack::STACK_LABEL);
    assert_eq!(cms.list(&stacks_own).await.unwrap().items.len(), 1000);
}
