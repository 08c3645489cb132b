//! Reliability under the simulator's faults: server errors, throttling and lost
//! responses on writes neither fail an apply nor duplicate a write (counted from
//! the server's own watch events), a concurrent writer between read and patch is
//! survived, and an API server that goes away mid-run stops the run with a clear
//! error and a state that a re-run completes from.
//!
//! Watch streams closed mid-rollout and 410 Gone are covered by
//! `watch_health::watch_outlives_410_gone_and_closed_streams` (a Deployment rolled out while every
//! stream is closed and its history expired, again and again).

use crate::support::{
    Runtimes, TestCluster, client_for, client_side, fault, krt_in, krt_spawn, resource, show,
    state_ids, temp_dir,
};
use futures::TryStreamExt;
use krt_host::Runtime;
use krt_host::model::{Action, ApplyOptions, StatusCode};
use krt_sim::{Fault, FaultAction, Sim, SimConfig};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

fn configmap(name: &str, value: &str) -> Value {
    crate::support::configmap(name, json!({"k": value}))
}

fn configmaps(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    let ar = ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
    };
    Api::namespaced_with(client.clone(), ns, &ar)
}

/// The latest resourceVersion of the ConfigMaps in `ns`: writes are counted from here.
async fn mark(client: &kube::Client, ns: &str) -> String {
    let list = configmaps(client, ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    list.metadata.resource_version.unwrap()
}

/// Every write to the ConfigMaps of `ns` since `from`, as the server's watch
/// reports them: `ADDED name`, `MODIFIED name`, `DELETED name`.
async fn writes_since(client: &kube::Client, ns: &str, from: &str) -> Vec<String> {
    let events: Vec<WatchEvent<DynamicObject>> = configmaps(client, ns)
        .watch(&WatchParams::default().timeout(1), from)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    events
        .into_iter()
        .filter_map(|e| {
            let (kind, o) = match e {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(_) => return None,
                WatchEvent::Error(e) => panic!("watch failed: {e:?}"),
            };
            Some(format!("{kind} {}", o.metadata.name.unwrap()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_and_lost_responses_on_writes_complete_without_duplicate_writes() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it injects faults into krt-sim's answers",
    )
    .await;
    let (rt, kc) = cluster.counted_runtime().await;
    let from = mark(&cluster.client, "default").await;

    // Server-side apply: two 503s, then a write the server applies but whose
    // answer is lost (504). The host sends the same apply again: a no-op.
    let sim = cluster.sim();
    sim.inject_fault(Fault::status("PATCH", "/configmaps/ssa", 503, 2));
    sim.inject_fault(fault(
        "PATCH",
        "/configmaps/ssa",
        FaultAction::TimeoutAfterApply,
    ));
    let applied = rt
        .apply(
            None,
            Some(&resource(configmap("ssa", "1"))),
            &ApplyOptions::default(),
        )
        .await;
    assert_eq!(applied.status, None, "{applied:?}");
    assert_eq!(applied.action, Action::Create);
    assert_eq!(
        kc.retries(),
        3,
        "two 503s and one lost answer, each resent once"
    );

    // Client-side create: the POST is applied and its answer lost. The host
    // reads the object back instead of posting it again (which would be a 409).
    sim.inject_fault(fault("POST", "/configmaps", FaultAction::TimeoutAfterApply));
    let created = rt
        .apply(None, Some(&resource(configmap("csa", "1"))), &client_side())
        .await;
    assert_eq!(created.status, None, "{created:?}");
    assert_eq!(created.action, Action::Create);

    // Client-side update whose answer is lost: the resent patch carries the old
    // resourceVersion, so it cannot apply twice; the guest re-reads and finds
    // the object already as planned.
    sim.inject_fault(fault(
        "PATCH",
        "/configmaps/csa",
        FaultAction::TimeoutAfterApply,
    ));
    let prior = resource(configmap("csa", "1"));
    let updated = rt
        .apply(
            Some(&prior),
            Some(&resource(configmap("csa", "2"))),
            &client_side(),
        )
        .await;
    assert_eq!(updated.status, None, "{updated:?}");
    assert_eq!(updated.action, Action::Update);
    let live = cluster.get_configmap("default", "csa").await.unwrap();
    assert_eq!(live["data"]["k"], "2");

    assert_eq!(
        writes_since(&cluster.client, "default", &from).await,
        ["ADDED ssa", "ADDED csa", "MODIFIED csa"],
        "exactly the intended writes reached the store"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_writes_wait_for_retry_after_and_endless_errors_give_up_in_bounds() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it injects faults into krt-sim's answers",
    )
    .await;
    let (rt, kc) = cluster.counted_runtime().await;
    let from = mark(&cluster.client, "default").await;

    cluster.sim().inject_fault(fault(
        "PATCH",
        "/configmaps/throttled",
        FaultAction::Status {
            code: 429,
            retry_after_seconds: Some(2),
        },
    ));
    let started = Instant::now();
    let applied = rt
        .apply(
            None,
            Some(&resource(configmap("throttled", "1"))),
            &ApplyOptions::default(),
        )
        .await;
    assert_eq!(applied.status, None, "{applied:?}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "Retry-After honoured"
    );
    assert_eq!(kc.retries(), 1);

    // A server that keeps failing: five retries with back-off, then a clear,
    // retryable error, and nothing written.
    cluster
        .sim()
        .inject_fault(Fault::status("PATCH", "/configmaps/broken", 503, 100));
    let failed = rt
        .apply(
            None,
            Some(&resource(configmap("broken", "1"))),
            &ApplyOptions::default(),
        )
        .await;
    let status = failed.status.expect("the apply fails");
    assert_eq!(status.code, StatusCode::Unavailable, "{status:?}");
    assert!(status.retryable);
    assert!(
        status.message.contains("unable to handle the request"),
        "{status:?}"
    );
    assert_eq!(kc.retries(), 1 + 5, "bounded: five retries of the write");
    assert_eq!(
        writes_since(&cluster.client, "default", &from).await,
        ["ADDED throttled"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_writer_between_read_and_patch_is_retried_and_its_change_survives() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it injects faults into krt-sim's answers",
    )
    .await;
    let rt = cluster.runtime().await;
    let v1 = resource(configmap("contended", "1"));
    assert_eq!(rt.apply(None, Some(&v1), &client_side()).await.status, None);

    // krt's patch is held up long enough for another writer to get in first.
    cluster.sim().inject_fault(fault(
        "PATCH",
        "/configmaps/contended",
        FaultAction::Latency { millis: 800 },
    ));
    let v2 = resource(configmap("contended", "2"));
    let options = client_side();
    let apply = rt.apply(Some(&v1), Some(&v2), &options);
    let other_writer = async {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let patch = json!({"metadata": {"labels": {"owner": "someone-else"}}});
        configmaps(&cluster.client, "default")
            .patch("contended", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("the other writer's patch");
    };
    let (applied, ()) = tokio::join!(apply, other_writer);
    assert_eq!(applied.status, None, "{applied:?}");
    assert_eq!(applied.retries, 1, "one conflict, re-read and retried");
    let live = cluster.get_configmap("default", "contended").await.unwrap();
    assert_eq!(live["data"]["k"], "2");
    assert_eq!(live["metadata"]["labels"]["owner"], "someone-else");
}

/// `count` ConfigMaps, one file each, in `dir/manifests`.
fn manifests(dir: &Path, ns: &str, count: usize) -> std::path::PathBuf {
    let out = dir.join("manifests");
    std::fs::create_dir_all(&out).unwrap();
    for i in 0..count {
        std::fs::write(
            out.join(format!("cm-{i:03}.yaml")),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:03}\n  namespace: {ns}\ndata:\n  i: \"{i}\"\n"
            ),
        )
        .unwrap();
    }
    out
}

async fn configmap_ids(client: &kube::Client, ns: &str) -> Vec<String> {
    let list = configmaps(client, ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    let mut ids: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .filter(|n| n.starts_with("cm-"))
        .map(|n| format!("v1:ConfigMap:{ns}:{n}"))
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_lost_mid_run_stops_it_clearly_and_a_rerun_finishes() {
    let dir = temp_dir("unreachable");
    let sim_state = dir.path().join("sim-state.json");
    // The same server again: its objects from the state file, its admin token as configured
    // (a generated one would be new at every start).
    let config = || SimConfig {
        state_file: Some(sim_state.clone()),
        token: Some("restarted-admin".into()),
        ..SimConfig::default()
    };
    let sim = Sim::start_with(config()).await.unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let files = manifests(dir.path(), "default", 40);
    // Slow writes, one at a time, so the server can be stopped mid-run.
    sim.inject_fault(Fault {
        times: 10_000,
        ..fault(
            "PATCH",
            "/configmaps/cm-",
            FaultAction::Latency { millis: 50 },
        )
    });
    let args = [
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "apply",
        "-f",
        files.to_str().unwrap(),
        "--concurrency",
        "1",
    ];
    // Output goes to files, so a run that hangs can still be diagnosed.
    let (out, err) = (dir.path().join("krt.out"), dir.path().join("krt.err"));
    let mut child = krt_spawn(
        dir.path(),
        &args,
        std::fs::File::create(&out).unwrap().into(),
        std::fs::File::create(&err).unwrap().into(),
    );
    let state_file = dir.path().join(".krt/state/default.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&state_file).is_ok_and(|t| t.matches("cm-").count() >= 5) {
        assert!(
            Instant::now() < deadline,
            "the run never recorded 5 objects"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let url = sim.url().to_owned();
    sim.shutdown().await;

    let ended = tokio::time::timeout(Duration::from_secs(90), child.wait()).await;
    let stderr = std::fs::read_to_string(&err).unwrap();
    let code = ended
        .unwrap_or_else(|_| panic!("krt still runs 90 s after the server stopped:\n{stderr}"))
        .unwrap()
        .code();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot reach the API server at {url}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("the API server became unreachable, so "),
        "{stderr}"
    );
    let recorded = state_ids(dir.path(), "default");

    // Back on the same address with the same objects: the state recorded
    // exactly what was applied, and a re-run does the rest.
    let sim = Sim::start_with(SimConfig {
        listen: url.trim_start_matches("http://").parse().unwrap(),
        ..config()
    })
    .await
    .unwrap();
    let client = client_for(&sim).await;
    let applied = configmap_ids(&client, "default").await;
    assert!(
        !applied.is_empty() && applied.len() < 40,
        "stopped mid-run: {applied:?}"
    );
    assert_eq!(
        recorded, applied,
        "the state lists exactly what was applied"
    );
    let rerun = krt_in(dir.path(), &args, None).await;
    assert_eq!(rerun.code, 0, "{}", show(&rerun));
    assert_eq!(configmap_ids(&client, "default").await.len(), 40);
    assert_eq!(state_ids(dir.path(), "default").len(), 40);
}

/// A tiny deterministic generator for kill delays (xorshift), seeded per run.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_never_corrupts_the_state_and_a_rerun_converges() {
    const RUNS: usize = 20;
    const OBJECTS: usize = 200;
    let cluster = TestCluster::start().await;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("kill delays seeded with {seed}");
    let mut random = Xorshift(seed);

    // How long one uninterrupted run takes, to kill within it.
    let timing = temp_dir("sigkill-timing");
    cluster.create_namespace("timing").await;
    let files = manifests(timing.path(), "timing", OBJECTS);
    let kubeconfig = cluster.kubeconfig.to_str().unwrap();
    let apply = |files: &Path| {
        vec![
            "--kubeconfig".to_owned(),
            kubeconfig.to_owned(),
            "apply".to_owned(),
            "-f".to_owned(),
            files.to_str().unwrap().to_owned(),
        ]
    };
    let started = Instant::now();
    let full = krt_in(
        timing.path(),
        &apply(&files).iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    )
    .await;
    assert_eq!(full.code, 0, "{}", full.stderr);
    let span = started.elapsed().as_millis() as u64;

    for run in 0..RUNS {
        let ns = format!("kill-{run}");
        cluster.create_namespace(&ns).await;
        let dir = temp_dir("sigkill");
        let files = manifests(dir.path(), &ns, OBJECTS);
        let from = mark(&cluster.client, &ns).await;
        let args = apply(&files);
        let mut child = krt_spawn(
            dir.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            std::process::Stdio::null(),
            std::process::Stdio::null(),
        );
        let delay = random.below(span.max(1));
        tokio::time::sleep(Duration::from_millis(delay)).await;
        child.start_kill().unwrap(); // SIGKILL
        child.wait().await.unwrap();

        let live = configmap_ids(&cluster.client, &ns).await;
        if dir.path().join(".krt/state/default.json").exists() {
            let recorded = state_ids(dir.path(), "default");
            let unapplied: Vec<&String> = recorded.iter().filter(|id| !live.contains(id)).collect();
            assert!(
                unapplied.is_empty(),
                "run {run} (killed after {delay} ms): the state lists objects never applied: {unapplied:?}"
            );
        }

        let rerun = krt_in(
            dir.path(),
            &apply(&files).iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        )
        .await;
        assert_eq!(
            rerun.code, 0,
            "run {run} (killed after {delay} ms): {}",
            rerun.stderr
        );
        let recorded = state_ids(dir.path(), "default");
        assert_eq!(recorded.len(), OBJECTS, "run {run}: one state entry each");
        assert_eq!(recorded, configmap_ids(&cluster.client, &ns).await);
        // The test's objects only: the namespace's kube-root-ca.crt, which the
        // simulator publishes as kube-controller-manager does, may land after the mark.
        let writes: Vec<String> = writes_since(&cluster.client, &ns, &from)
            .await
            .into_iter()
            .filter(|w| {
                w.split_once(' ')
                    .is_some_and(|(_, name)| name.starts_with("cm-"))
            })
            .collect();
        let created = writes.iter().filter(|w| w.starts_with("ADDED ")).count();
        assert_eq!(
            (created, writes.len()),
            (OBJECTS, OBJECTS),
            "run {run} (killed after {delay} ms): each object written once: {writes:?}"
        );
    }
}
