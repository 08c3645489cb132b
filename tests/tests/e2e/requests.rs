//! How many requests krt needs, counted at the simulator: discovery once
//! however many callers miss at once, the requests per object of a create in
//! a new namespace, an unchanged re-apply and an update, and the waits that
//! `krt.dev/wait`, `krt.dev/timeout` and `--wait-for` ask for.

use crate::support::{
    Run, Runtimes, TestCluster, configmap_requests, krt_at, resource, show, temp_dir, verbs,
};
use krt_host::Runtime;
use krt_host::model::ApplyOptions;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

async fn krt(dir: &Path, cluster: &TestCluster, args: &[&str]) -> Run {
    krt_at(dir, &cluster.kubeconfig, args, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_is_fetched_once_however_many_callers_miss_at_once() {
    let cluster = TestCluster::start().await;
    let (rt, kc) = cluster.counted_runtime().await;
    cluster.reset_requests();
    let applies = (0..16).map(|i| {
        let rt = &rt;
        async move {
            let cm = resource(
                krt_testkit::configmap(&format!("c{i}"))
                    .namespace("default")
                    .value(),
            );
            rt.apply(None, Some(&cm), &ApplyOptions::default()).await
        }
    });
    let answers = futures::future::join_all(applies).await;
    assert!(answers.iter().all(|a| a.status.is_none()), "{answers:?}");
    let requests = cluster.requests();
    assert_eq!(requests.count("GET", "/api/v1"), 1, "{requests:?}");
    assert_eq!(kc.discovery_fetches(), 1);
}

/// `n` ConfigMaps in namespace `ns` and the Namespace, as one YAML stream.
fn namespaced_configmaps(ns: &str, n: usize, value: &str) -> String {
    let mut yaml = format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n");
    for i in 0..n {
        yaml += &format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}, namespace: {ns}}}\ndata: {{v: '{value}'}}\n"
        );
    }
    yaml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_per_object_are_few_for_creates_updates_and_unchanged_objects() {
    const N: usize = 20;
    let cluster = TestCluster::start().await;
    let dir = temp_dir("requests");
    let file = dir.path().join("stack.yaml");
    std::fs::write(&file, namespaced_configmaps("fresh", N, "a")).unwrap();
    let file = file.to_str().unwrap();

    // Create in a namespace still to be created: each ConfigMap is validated
    // by one dry run in the stand-in namespace (none in its own, which cannot
    // work), written once, and read neither before (it cannot exist yet) nor
    // after (a ConfigMap is current as written).
    cluster.reset_requests();
    let apply = krt(dir.path(), &cluster, &["apply", "-f", file, "--yes"]).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    let created = cluster.requests();
    for i in 0..N {
        let name = format!("cm-{i}");
        assert_eq!(
            configmap_requests(&created, "default", &name),
            verbs(&[("PATCH dryRun", 1)]),
            "{created:?}"
        );
        assert_eq!(
            configmap_requests(&created, "fresh", &name),
            verbs(&[("PATCH", 1)]),
            "{created:?}"
        );
    }
    assert_eq!(created.count("GET", "/api/v1"), 1, "one discovery");
    assert_eq!(
        created.count("GET", "/api/v1/namespaces/kube-system"),
        1,
        "one read of the cluster's identity, which the state records"
    );
    assert_eq!(
        created.verb("WATCH"),
        0,
        "nothing waited for needed a watch"
    );
    // 2 per ConfigMap; the Namespace's read and dry run, and its write
    // from what the dry run saw; 1 discovery; 1 identity.
    assert_eq!(created.total(), 2 * N as u64 + 3 + 1 + 1, "{created:?}");

    // Unchanged: one read and one dry run each, no write.
    cluster.reset_requests();
    let again = krt(dir.path(), &cluster, &["apply", "-f", file, "--yes"]).await;
    assert_eq!(again.code, 0, "{}", show(&again));
    assert!(
        again.stdout.contains("Nothing to change."),
        "{}",
        show(&again)
    );
    let unchanged = cluster.requests();
    assert_eq!(
        configmap_requests(&unchanged, "fresh", "cm-0"),
        verbs(&[("GET", 1), ("PATCH dryRun", 1)])
    );
    // 1 discovery, 1 identity.
    assert_eq!(
        unchanged.total(),
        2 * (N as u64 + 1) + 1 + 1,
        "{unchanged:?}"
    );

    // Update: the preview's read and dry run, then the write, against the
    // version the preview read: nothing is read twice.
    std::fs::write(
        dir.path().join("stack.yaml"),
        namespaced_configmaps("fresh", N, "b"),
    )
    .unwrap();
    cluster.reset_requests();
    let update = krt(dir.path(), &cluster, &["apply", "-f", file, "--yes"]).await;
    assert_eq!(update.code, 0, "{}", show(&update));
    let updated = cluster.requests();
    assert_eq!(
        configmap_requests(&updated, "fresh", "cm-0"),
        verbs(&[("GET", 1), ("PATCH", 1), ("PATCH dryRun", 1)])
    );
    assert_eq!(updated.total(), 3 * N as u64 + 2 + 1 + 1, "{updated:?}");
}

/// The `-o json` report of `run`, by resource ID.
fn report(run: &Run) -> Vec<(String, Value)> {
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(run)));
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

const INGRESS: &str = "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations: {ANNOTATIONS}
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
";

fn ingress(name: &str, annotations: &str) -> String {
    INGRESS
        .replace(
            "name: web\n  namespace",
            &format!("name: {name}\n  namespace"),
        )
        .replace("{ANNOTATIONS}", annotations)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_that_never_report_an_address_need_not_hold_the_apply() {
    // On a cluster with no ingress controller an Ingress never gets an
    // address; these two are not waited for at all (no watch is opened).
    let cluster = TestCluster::start().await;
    let dir = temp_dir("waits");
    let file = dir.path().join("stack.yaml");
    let yaml = [
        ingress("exists", "{krt.dev/wait: exists}"),
        ingress("none", "{krt.dev/wait: none}"),
    ]
    .join("---\n");
    std::fs::write(&file, yaml).unwrap();
    let file = file.to_str().unwrap();
    let started = Instant::now();
    let apply = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", file, "--yes", "--timeout", "5m"],
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "nothing waited for the 5 minutes"
    );
    assert!(
        apply.stdout.contains(
            "Not waited for until healthy (2 resource(s), by krt.dev/wait or --wait-for): \
             networking.k8s.io/v1:Ingress:default:exists (wait: exists), \
             networking.k8s.io/v1:Ingress:default:none (wait: none)."
        ),
        "{}",
        show(&apply)
    );
    let exists = apply
        .stdout
        .lines()
        .find(|l| l.contains("Ingress:default:exists ") && l.contains("create"))
        .unwrap_or_else(|| panic!("{}", show(&apply)));
    assert!(exists.contains("created    exists"), "{exists}");
    assert_eq!(cluster.requests().verb("WATCH"), 0);

    // The same through -o json, and `--wait-for` naming other kinds.
    std::fs::write(dir.path().join("stack.yaml"), ingress("plain", "{}")).unwrap();
    let json = krt(
        dir.path(),
        &cluster,
        &[
            "-o",
            "json",
            "apply",
            "-f",
            file,
            "--yes",
            "--wait-for",
            "Deployment,Service",
        ],
    )
    .await;
    assert_eq!(json.code, 0, "{}", show(&json));
    let resources = report(&json);
    let plain = &resources
        .iter()
        .find(|(id, _)| id == "networking.k8s.io/v1:Ingress:default:plain")
        .unwrap()
        .1;
    assert_eq!(plain["result"], "created");
    assert_eq!(plain["wait"], "exists");
    assert!(plain.get("health").is_none(), "{plain}");
}

/// A claim of a StorageClass no provisioner serves: Pending for good, on
/// krt-sim as on a real cluster.
const UNPROVISIONED_CLAIM: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: slow
  namespace: default
  annotations: {krt.dev/timeout: 1s}
spec:
  storageClassName: nobody-provisions-this
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resources_timeout_bounds_its_own_wait() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("timeout");
    let file = dir.path().join("stack.yaml");
    std::fs::write(&file, UNPROVISIONED_CLAIM).unwrap();
    let started = Instant::now();
    let apply = krt(
        dir.path(),
        &cluster,
        &[
            "apply",
            "-f",
            file.to_str().unwrap(),
            "--yes",
            "--timeout",
            "5m",
        ],
    )
    .await;
    assert_eq!(apply.code, 3, "timed out: {}", show(&apply));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        apply
            .stderr
            .contains("PersistentVolumeClaim default/slow did not become ready within 1000 ms"),
        "{}",
        show(&apply)
    );
}
