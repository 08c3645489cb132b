//! Deletes that wait for what they delete (issue 18), through the CLI against
//! krt-sim: `destroy` deletes a dependency only once its dependent is gone (a
//! test task plays the controller that finalizes it); one nobody finalizes is
//! `terminating` at `--timeout`, stays in the state and keeps its dependency;
//! `--wait=false` is fire and forget and says so; `apply` waits for a
//! Terminating namespace to be gone before creating it again; and destroying a
//! Job removes its Pods too (the server's default would orphan them).

use crate::support::{TestCluster, krt, show};
use krt_testkit::kinds::{KINDS, NAMESPACE};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The finalizer a (simulated) controller of the tests holds objects with.
const HOLD: &str = "example.com/hold";

/// ConfigMap `base`, and ConfigMap `dependent` that depends on it and carries [`HOLD`].
const STACK: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: base
  namespace: default
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  namespace: default
  finalizers: [example.com/hold]
  annotations:
    krt.dev/depends-on: v1:ConfigMap:default:base
data: {b: "2"}
"#;

async fn configmap(cluster: &TestCluster, ns: &str, name: &str) -> Option<Value> {
    cluster.get_configmap(ns, name).await
}

/// Removes every finalizer of ConfigMap `ns/name`, as its controller would.
async fn release(cluster: &TestCluster, ns: &str, name: &str) {
    cluster
        .api("v1", "ConfigMap", "configmaps", Some(ns))
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("the finalizer is removed");
}

/// The IDs the stack's state records.
async fn recorded(cluster: &TestCluster) -> Vec<String> {
    let show = krt(&cluster.kubeconfig, &["-o", "json", "state", "show"], None).await;
    assert_eq!(show.code, 0, "{}", show.stderr);
    let doc: Value = serde_json::from_str(&show.stdout).expect("the state document");
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Applies [`STACK`] from a file in the cluster's directory; the file's path.
async fn apply_stack(cluster: &TestCluster) -> String {
    let file = cluster.dir().join("stack.yaml");
    std::fs::write(&file, STACK).unwrap();
    let file = file.to_str().unwrap().to_owned();
    let apply = krt(&cluster.kubeconfig, &["apply", "-f", &file, "--yes"], None).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_deletes_a_dependency_only_once_its_dependent_is_gone() {
    let cluster = TestCluster::start().await;
    apply_stack(&cluster).await;

    // The controller: once `dependent` is terminating, it finalizes it 2 s
    // later, noting whether `base` was still there all that time.
    let controller = {
        let client = cluster.api("v1", "ConfigMap", "configmaps", Some("default"));
        tokio::spawn(async move {
            let started = Instant::now();
            loop {
                let dependent = client.get_opt("dependent").await.unwrap();
                let terminating = dependent
                    .as_ref()
                    .is_some_and(|d| d.metadata.deletion_timestamp.is_some());
                if terminating {
                    break;
                }
                assert!(started.elapsed() < Duration::from_secs(60), "never deleted");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            let base_kept = client.get_opt("base").await.unwrap().is_some();
            client
                .patch(
                    "dependent",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                )
                .await
                .expect("the finalizer is removed");
            base_kept
        })
    };
    let started = Instant::now();
    let destroy = krt(&cluster.kubeconfig, &["destroy", "--yes"], None).await;
    let took = started.elapsed();
    let base_kept = controller.await.unwrap();
    assert_eq!(destroy.code, 0, "{}", show(&destroy));
    assert!(
        base_kept,
        "base was deleted while its dependent was still terminating"
    );
    assert!(
        took >= Duration::from_secs(2),
        "{took:?}: {}",
        show(&destroy)
    );
    assert!(
        destroy.stdout.contains(&format!(
            "v1:ConfigMap:default:dependent: v1:ConfigMap:default:dependent is terminating, \
             held by finalizers: {HOLD}"
        )),
        "progress while it is terminating: {}",
        show(&destroy)
    );
    assert!(
        destroy
            .stdout
            .contains("Destroyed: 2 deleted, 0 terminating, 0 failed, 0 skipped"),
        "{}",
        show(&destroy)
    );
    assert_eq!(configmap(&cluster, "default", "dependent").await, None);
    assert_eq!(configmap(&cluster, "default", "base").await, None);
    assert_eq!(recorded(&cluster).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_nobody_finalizes_is_terminating_stays_recorded_and_keeps_its_dependency() {
    let cluster = TestCluster::start().await;
    apply_stack(&cluster).await;

    let started = Instant::now();
    let destroy = krt(
        &cluster.kubeconfig,
        &["-o", "json", "destroy", "--yes", "--timeout", "2s"],
        None,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(destroy.code, 3, "{}", show(&destroy));
    let doc: Value = serde_json::from_str(&destroy.stdout).unwrap();
    let resources = doc["resources"].as_array().unwrap();
    let dependent = &resources[0];
    assert_eq!(dependent["id"], "v1:ConfigMap:default:dependent");
    assert_eq!(dependent["result"], "terminating", "{dependent}");
    assert_eq!(dependent["health"]["state"], "terminating");
    assert_eq!(dependent["error"]["reason"], "Terminating");
    assert_eq!(
        dependent["error"]["message"],
        format!(
            "v1:ConfigMap:default:dependent is still terminating after 2s, held by finalizers: {HOLD}"
        )
    );
    let base = &resources[1];
    assert_eq!(base["result"], "skipped", "{base}");
    assert_eq!(base["skippedBecause"], "v1:ConfigMap:default:dependent");
    assert_eq!(doc["summary"], json!({"terminating": 1, "skipped": 1}));
    assert!(
        destroy.stderr.contains(&format!(
            "v1:ConfigMap:default:dependent: Terminating: v1:ConfigMap:default:dependent is still \
             terminating after 2s, held by finalizers: {HOLD}"
        )),
        "{}",
        show(&destroy)
    );
    assert!(configmap(&cluster, "default", "base").await.is_some());
    let dependent = configmap(&cluster, "default", "dependent").await.unwrap();
    assert!(!dependent["metadata"]["deletionTimestamp"].is_null());
    assert_eq!(
        recorded(&cluster).await,
        [
            "v1:ConfigMap:default:base",
            "v1:ConfigMap:default:dependent"
        ]
    );

    // Fire and forget: an accepted DELETE counts, and the summary says so.
    let forget = krt(
        &cluster.kubeconfig,
        &["destroy", "--yes", "--wait=false"],
        None,
    )
    .await;
    assert_eq!(forget.code, 0, "{}", show(&forget));
    assert!(
        forget.stdout.contains(
            "Not waited for until gone (--wait=false): an accepted DELETE counts as deleted, and \
             objects held by finalizers may still exist; still terminating when their DELETE was \
             answered: v1:ConfigMap:default:dependent."
        ),
        "{}",
        show(&forget)
    );
    assert!(configmap(&cluster, "default", "dependent").await.is_some());
    assert_eq!(configmap(&cluster, "default", "base").await, None);
    assert_eq!(recorded(&cluster).await, Vec::<String>::new());
    release(&cluster, "default", "dependent").await;
}

/// Namespace `shop` and a ConfigMap in it.
const NAMESPACED: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data: {a: "1"}
"#;

/// Applies [`NAMESPACED`], holds its ConfigMap with [`HOLD`], and destroys
/// it without waiting: the namespace stays Terminating until the hold goes.
async fn terminating_namespace(cluster: &TestCluster) -> String {
    let file = cluster.dir().join("shop.yaml");
    std::fs::write(&file, NAMESPACED).unwrap();
    let file = file.to_str().unwrap().to_owned();
    let apply = krt(&cluster.kubeconfig, &["apply", "-f", &file, "--yes"], None).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    cluster
        .api("v1", "ConfigMap", "configmaps", Some("shop"))
        .patch(
            "settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [HOLD]}})),
        )
        .await
        .unwrap();
    let destroy = krt(
        &cluster.kubeconfig,
        &["destroy", "--yes", "--wait=false"],
        None,
    )
    .await;
    assert_eq!(destroy.code, 0, "{}", show(&destroy));
    let ns = cluster
        .get("v1", "Namespace", "namespaces", None, "shop")
        .await
        .expect("the namespace is still there");
    assert!(!ns["metadata"]["deletionTimestamp"].is_null(), "{ns}");
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_waits_for_a_terminating_namespace_before_creating_it_again() {
    let cluster = TestCluster::start().await;
    let file = terminating_namespace(&cluster).await;

    let releaser = {
        let api = cluster.api("v1", "ConfigMap", "configmaps", Some("shop"));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            api.patch(
                "settings",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"finalizers": null}})),
            )
            .await
            .unwrap();
        })
    };
    let apply = krt(&cluster.kubeconfig, &["apply", "-f", &file, "--yes"], None).await;
    releaser.await.unwrap();
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(
        apply.stdout.contains(
            "  + create    v1:Namespace:shop\n      Terminating: v1:Namespace:shop is being \
             deleted (held by finalizers: kubernetes); apply waits until it is gone, then creates it"
        ),
        "{}",
        show(&apply)
    );
    assert!(
        apply.stdout.contains(
            "v1:Namespace:shop: v1:Namespace:shop is terminating, held by finalizers: kubernetes"
        ),
        "progress while it waits: {}",
        show(&apply)
    );
    assert!(
        apply
            .stdout
            .contains("Applied: 2 created, 0 updated, 0 replaced, 0 deleted, 0 unchanged"),
        "{}",
        show(&apply)
    );
    let ns = cluster
        .get("v1", "Namespace", "namespaces", None, "shop")
        .await
        .unwrap();
    assert!(ns["metadata"]["deletionTimestamp"].is_null(), "{ns}");
    assert_eq!(
        configmap(&cluster, "shop", "settings").await.unwrap()["data"],
        json!({"a": "1"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_that_stays_terminating_fails_the_apply_naming_its_finalizers() {
    let cluster = TestCluster::start().await;
    let file = terminating_namespace(&cluster).await;
    let apply = krt(
        &cluster.kubeconfig,
        &["apply", "-f", &file, "--yes", "--timeout", "2s"],
        None,
    )
    .await;
    assert_eq!(apply.code, 3, "{}", show(&apply));
    assert!(
        apply.stderr.contains(
            "v1:Namespace:shop: Terminating: v1:Namespace:shop is still terminating after 2s, held \
             by finalizers: kubernetes"
        ),
        "{}",
        show(&apply)
    );
    assert!(
        apply
            .stdout
            .contains("skipped    v1:ConfigMap:shop:settings"),
        "{}",
        show(&apply)
    );
    release(&cluster, "shop", "settings").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroying_a_job_removes_its_pods_too() {
    // The API server's default for a batch/v1 Job orphans its Pods; krt deletes in the
    // background, as `kubectl delete` does.
    let cluster = TestCluster::start().await;
    // The kinds table's Job (it runs to completion), in `default`.
    let job = KINDS
        .iter()
        .find(|k| k.kind == "Job")
        .expect("a Job sample");
    let job = job
        .yaml
        .replace(&format!("namespace: {NAMESPACE}\n"), "namespace: default\n");
    let file = cluster.dir().join("job.yaml");
    std::fs::write(&file, job).unwrap();
    let file = file.to_str().unwrap();
    let apply = krt(&cluster.kubeconfig, &["apply", "-f", file, "--yes"], None).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    let pods = cluster.api("v1", "Pod", "pods", Some("default"));
    let of_the_job = kube::api::ListParams::default().labels("job-name=migrate");
    assert!(
        !pods.list(&of_the_job).await.unwrap().items.is_empty(),
        "the Job ran a Pod"
    );
    let destroy = krt(&cluster.kubeconfig, &["destroy", "--yes"], None).await;
    assert_eq!(destroy.code, 0, "{}", show(&destroy));
    let started = Instant::now();
    loop {
        let left = pods.list(&of_the_job).await.unwrap().items;
        let orphaned: Vec<&str> = left
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        if orphaned.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the Job's Pods outlive it: {orphaned:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
