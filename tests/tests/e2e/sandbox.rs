//! The sandbox against hostile and broken guests (`tests/guests`, built by
//! `tests/build.rs`): every one ends in a clear status within a bounded time,
//! the host stays up, the next call on a normal guest succeeds, and no write
//! outside the policy reaches the simulator. Also: refused imports, version
//! mismatches, hot reload and the compile cache.

use crate::support::{
    TestCluster, assert_contains, cache_dir, failure, guests, resource, temp_dir,
};
use krt_host::model::{ApplyOptions, ApplyResponse, Resource, StatusCode};
use krt_host::policy::Policy;
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, Limits, Runtime};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far past a configured limit a call may end.
const SLACK: Duration = Duration::from_secs(1);

fn limits() -> Limits {
    Limits {
        cpu_time: Duration::from_millis(300),
        call_timeout: Duration::from_secs(5),
        max_host_calls: 2_000,
        max_output_bytes: 64 << 10,
        max_response_bytes: 1 << 20,
        ..Limits::default()
    }
}

fn source(path: &str) -> ComponentSource {
    ComponentSource::File(path.into())
}

/// A runtime over `component` with `limits`, reaching `cluster`.
async fn sandbox(
    cluster: &TestCluster,
    component: &ComponentSource,
    limits: Limits,
) -> ComponentRuntime {
    let cluster = Arc::new(KubeCluster::new(cluster.client.clone(), "default"));
    let options = EngineOptions {
        limits,
        max_instances: 8,
        cache_dir: Some(cache_dir()),
        ..EngineOptions::default()
    };
    ComponentRuntime::new(component, cluster, &options)
        .await
        .unwrap_or_else(|e| panic!("{component:?} loads: {e}"))
}

fn configmap(namespace: &str, name: &str) -> Resource {
    krt_testkit::configmap(name)
        .namespace(namespace)
        .labels(json!({"app.kubernetes.io/name": name, "team": "a"}))
        .data(json!({"k": "v"}))
        .resource()
}

async fn apply(rt: &ComponentRuntime, plan: &Resource) -> (ApplyResponse, Duration) {
    let started = Instant::now();
    let response = rt.apply(None, Some(plan), &ApplyOptions::default()).await;
    (response, started.elapsed())
}

/// Asserts a failed call's status: code, reason, and that it names the export.
fn assert_status(response: &ApplyResponse, code: StatusCode, reason: &str) -> String {
    let message = failure(response, code, reason);
    assert_contains(&message, "runtime.apply");
    message
}

/// The host is still fine: swapping the built-in guest in, a normal apply works.
async fn normal_guest_works(rt: &ComponentRuntime, cluster: &TestCluster, name: &str) {
    rt.reload(&ComponentSource::Default)
        .await
        .expect("the built-in guest loads");
    let (response, _) = apply(rt, &configmap("default", name)).await;
    assert_eq!(response.status, None, "{response:?}");
    assert!(cluster.get_configmap("default", name).await.is_some());
}

/// Applies through `guest` under [`limits`]: the call must fail with
/// `LimitExceeded`/`reason` and a message containing `says`, within the CPU
/// limit when `bounded`; a normal guest then still works. The response.
async fn hits_limit(guest: &str, reason: &str, says: &str, bounded: bool) -> ApplyResponse {
    let cluster = TestCluster::start().await;
    let rt = sandbox(&cluster, &source(guest), limits()).await;
    let (response, took) = apply(&rt, &configmap("default", "x")).await;
    let message = assert_status(&response, StatusCode::LimitExceeded, reason);
    assert!(message.contains(says), "{message}");
    if bounded {
        assert!(took < limits().cpu_time + SLACK, "took {took:?}");
    }
    normal_guest_works(&rt, &cluster, "after").await;
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn infinite_loop_stops_at_the_cpu_limit() {
    hits_limit(
        guests::SPIN,
        "GuestCpuLimit",
        "CPU time limit of 300ms",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocating_without_end_hits_the_memory_cap() {
    hits_limit(
        guests::HOG,
        "GuestMemoryLimit",
        "memory limit of 64 MiB",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_overflows_the_stack() {
    hits_limit(guests::RECURSE, "GuestStackOverflow", "runtime.apply", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_response_is_refused() {
    let response = hits_limit(
        guests::HUGE,
        "GuestResponseLimit",
        "limit of 1048576 bytes",
        false,
    )
    .await;
    assert_eq!(response.live, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_flood_hits_the_output_cap() {
    hits_limit(
        guests::CHATTY,
        "GuestOutputLimit",
        "65536 bytes of logs",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_host_calls_hit_the_call_limit_or_the_request_budget() {
    let cluster = TestCluster::start().await;
    // 2,000 host calls must come before the CPU limit, also on a loaded machine
    // (guest time is wall-clock time outside host calls).
    let limits = Limits {
        cpu_time: Duration::from_secs(3),
        ..limits()
    };
    let rt = sandbox(&cluster, &source(guests::BUSY), limits.clone())
        .await
        .with_policy(Policy {
            max_requests: 1_000_000,
            ..Policy::unrestricted()
        });
    let (response, took) = apply(&rt, &configmap("default", "x")).await;
    let message = assert_status(&response, StatusCode::LimitExceeded, "GuestHostCallLimit");
    assert!(message.contains("limit of 2000 host calls"), "{message}");
    assert!(took < limits.cpu_time + SLACK, "took {took:?}");

    // The policy's budget comes first when smaller: the guest gets an error it can report.
    let rt = rt.with_policy(Policy {
        max_requests: 50,
        ..Policy::unrestricted()
    });
    let (response, _) = apply(&rt, &configmap("default", "x")).await;
    let status = response.status.expect("the guest reports the refusal");
    assert_eq!(status.reason, "RequestBudgetExceeded");
    assert_contains(&status.message, "more than 50 cluster requests");
    assert_contains(&status.message, "--max-requests");
    normal_guest_works(&rt, &cluster, "after-busy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_outside_the_policy_never_reach_the_cluster() {
    let cluster = TestCluster::start().await;
    let policy = Policy {
        namespaces: vec!["default".into()],
        kinds: vec!["ConfigMap".into(), "Namespace".into()],
        ..Policy::default()
    };
    let rt = sandbox(&cluster, &source(guests::ROGUE), limits())
        .await
        .with_policy(policy);
    let (response, _) = apply(&rt, &configmap("default", "plan")).await;
    let report = response
        .status
        .expect("the guest reports its attempts")
        .message;
    let outcomes: Vec<(&str, &str)> = report
        .lines()
        .map(|l| l.split_once(": ").expect("label: outcome"))
        .collect();
    let expected = [
        ("other-namespace", "`--allow-namespace other`"),
        ("secret-read", "`--allow-kind Secret`"),
        ("cluster-scoped-write", "`--allow-cluster-scoped`"),
        ("forged-resource", "`--allow-namespace '*'`"),
        ("foreign-field-manager", "`--allow-field-manager kubectl`"),
    ];
    assert_eq!(outcomes.len(), expected.len() + 1, "{report}");
    for ((label, outcome), (want, hint)) in outcomes.iter().zip(expected) {
        assert_eq!(*label, want);
        assert!(
            outcome.starts_with("policy 403 krt's policy denies"),
            "{label}: {outcome}"
        );
        assert!(outcome.contains(hint), "{label}: {outcome}");
    }
    assert_eq!(outcomes[5], ("allowed-write", "ok"), "{report}");

    // Checked directly in the simulator: only the allowed write happened.
    let get =
        |ns: Option<&'static str>, kind, plural, name| cluster.get("v1", kind, plural, ns, name);
    assert!(
        get(Some("other"), "ConfigMap", "configmaps", "leak")
            .await
            .is_none()
    );
    assert!(
        get(None, "Namespace", "namespaces", "rogue")
            .await
            .is_none()
    );
    let allowed = get(Some("default"), "ConfigMap", "configmaps", "allowed").await;
    assert_eq!(
        allowed.expect("allowed write landed")["data"],
        json!({"stolen": "yes"})
    );
    let managers: Vec<Value> =
        cluster.get_configmap("default", "allowed").await.unwrap()["metadata"]["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default();
    assert!(
        managers.iter().all(|m| m["manager"] != "kubectl"),
        "{managers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standard_guest_reports_denials_as_permission_denied() {
    let cluster = TestCluster::start().await;
    let allowed = configmap("default", "app");
    let policy = Policy::for_resources(std::slice::from_ref(&allowed), "default");
    let rt = sandbox(&cluster, &ComponentSource::Default, limits())
        .await
        .with_policy(policy);

    let (response, _) = apply(&rt, &allowed).await;
    assert_eq!(response.status, None, "{response:?}");

    let (response, _) = apply(&rt, &configmap("team-b", "app")).await;
    let status = response.status.expect("denied");
    assert_eq!(
        (status.code, status.reason.as_str()),
        (StatusCode::PermissionDenied, "PolicyDenied")
    );
    assert_contains(&status.message, "add `--allow-namespace team-b`");

    let secret = resource(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "token", "namespace": "default"}, "stringData": {"k": "v"}
    }));
    let (response, _) = apply(&rt, &secret).await;
    let status = response.status.expect("denied");
    assert_eq!(status.code, StatusCode::PermissionDenied);
    assert_contains(&status.message, "add `--allow-kind Secret`");

    assert!(cluster.get_configmap("team-b", "app").await.is_none());
    assert!(
        cluster
            .get("v1", "Secret", "secrets", Some("default"), "token")
            .await
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_in_the_middle_of_an_apply_fails_only_that_call() {
    let cluster = TestCluster::start().await;
    let rt = sandbox(&cluster, &source(guests::MIDTRAP), limits()).await;
    let (response, _) = apply(&rt, &configmap("default", "half")).await;
    let message = assert_status(&response, StatusCode::Internal, "GuestPanic");
    assert!(message.contains("boom after the first write"), "{message}");
    // The write before the trap is not rolled back: there is no transaction.
    assert!(cluster.get_configmap("default", "half").await.is_some());
    // The same runtime keeps serving: the next call gets a fresh instance.
    let (again, _) = apply(&rt, &configmap("default", "half-2")).await;
    assert_status(&again, StatusCode::Internal, "GuestPanic");
    normal_guest_works(&rt, &cluster, "after-midtrap").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_results_are_reported_not_trusted() {
    let cluster = TestCluster::start().await;
    let rt = sandbox(&cluster, &source(guests::LIAR), limits()).await;
    let (response, _) = apply(&rt, &configmap("default", "x")).await;
    let message = assert_status(&response, StatusCode::Internal, "GuestInvalidResult");
    assert!(message.contains("invalid attributes JSON"), "{message}");

    let dry = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    let response = rt.apply(None, Some(&configmap("default", "x")), &dry).await;
    let message = assert_status(&response, StatusCode::Internal, "GuestInvalidResult");
    assert!(message.contains("is not a Kubernetes object"), "{message}");
    normal_guest_works(&rt, &cluster, "after-liar").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_time_is_not_guest_time_but_the_wall_clock_bounds_both() {
    let cluster = TestCluster::start().await;
    // One second asleep in the host against a 300 ms CPU budget: fine.
    let rt = sandbox(&cluster, &source(guests::SLEEPY), limits()).await;
    let (response, took) = apply(&rt, &configmap("default", "x")).await;
    assert_eq!(response.status, None, "{response:?}");
    assert!(took >= Duration::from_secs(1), "took {took:?}");

    // With a 400 ms wall-clock limit the same call is cut off.
    let short = Limits {
        call_timeout: Duration::from_millis(400),
        ..limits()
    };
    let rt = sandbox(&cluster, &source(guests::SLEEPY), short).await;
    let (response, took) = apply(&rt, &configmap("default", "x")).await;
    let status = response.status.expect("deadline status");
    assert_eq!(
        (status.code, status.reason.as_str()),
        (StatusCode::Timeout, "CallTimeout")
    );
    assert_contains(&status.message, "runtime.apply");
    assert!(took < Duration::from_millis(400) + SLACK, "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_imports_and_other_wit_versions_are_refused_at_load() {
    let cluster = TestCluster::start().await;
    let client = Arc::new(KubeCluster::new(cluster.client.clone(), "default"));
    let options = EngineOptions {
        cache_dir: Some(cache_dir()),
        ..EngineOptions::default()
    };
    let refusal =
        async |path: &str| match ComponentRuntime::new(&source(path), client.clone(), &options)
            .await
        {
            Ok(_) => panic!("{path} must be refused"),
            Err(e) => e.to_string(),
        };
    let sockets = refusal(guests::SOCKETS).await;
    assert!(sockets.contains("`wasi:sockets/tcp@0.2.6`"), "{sockets}");
    assert!(
        sockets.contains("`wasi:filesystem/preopens@0.2.6`"),
        "{sockets}"
    );
    assert!(sockets.contains("which krt does not provide"), "{sockets}");
    let unknown = refusal(guests::UNKNOWN).await;
    assert!(unknown.contains("`evil:exfil/send@1.0.0`"), "{unknown}");
    let v2 = refusal(guests::V2).await;
    assert!(
        v2.contains("built against `kusion:runtime@0.2.0`")
            && v2.contains(&format!(
                "implements `kusion:runtime@{}`",
                krt_host::WIT_VERSION
            )),
        "{v2}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_swaps_the_component_for_new_calls_only() {
    let cluster = TestCluster::start().await;
    let slow = Limits {
        cpu_time: Duration::from_secs(2),
        ..limits()
    };
    let rt = sandbox(&cluster, &source(guests::SPIN), slow).await;

    // A call on the old component is in flight while the component is swapped.
    let in_flight = {
        let rt = rt.clone();
        tokio::spawn(async move { apply(&rt, &configmap("default", "x")).await.0 })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    rt.reload(&ComponentSource::Default).await.expect("reload");
    let (fresh, took) = apply(&rt, &configmap("default", "swapped")).await;
    assert_eq!(fresh.status, None, "{fresh:?}");
    assert!(
        took < Duration::from_secs(2),
        "new calls use the new component"
    );
    let old = in_flight.await.expect("task");
    assert_status(&old, StatusCode::LimitExceeded, "GuestCpuLimit");

    // A component that fails to load leaves the current one in place.
    let err = rt.reload(&source(guests::UNKNOWN)).await.unwrap_err();
    assert!(err.to_string().contains("evil:exfil"), "{err}");
    let (still, _) = apply(&rt, &configmap("default", "still")).await;
    assert_eq!(still.status, None, "{still:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compiled_components_are_cached_on_disk_by_content_and_settings() {
    let dir = temp_dir("compile-cache");
    let options = EngineOptions {
        cache_dir: Some(dir.path().to_path_buf()),
        ..EngineOptions::default()
    };
    let cluster = TestCluster::start().await;
    let client = Arc::new(KubeCluster::new(cluster.client.clone(), "default"));
    let load = async |options: &EngineOptions| {
        let engine = krt_host::SharedEngine::new(options).expect("engine");
        ComponentRuntime::with_engine(
            &engine,
            &ComponentSource::Default,
            client.clone(),
            options.limits.clone(),
        )
        .await
        .expect("loads");
        engine.compile_cache_counts().expect("cache enabled")
    };

    // A first run compiles and stores; a second run (a new engine) finds it.
    let (hits, misses) = load(&options).await;
    assert_eq!(hits, 0);
    assert!(misses > 0);
    let stored = std::fs::read_dir(dir.path()).expect("cache dir").count();
    assert!(stored > 0, "nothing stored in {}", dir.path().display());
    let (hits, misses) = load(&options).await;
    assert!(hits > 0);
    assert_eq!(misses, 0, "the second run recompiled");

    // Settings that change the compiled code are a different key: memory
    // reserved at its limit needs a bounds check on every access.
    let checked = EngineOptions {
        memory_reservation: 0,
        ..options.clone()
    };
    let (hits, misses) = load(&checked).await;
    assert_eq!(hits, 0);
    assert!(misses > 0);
    // Within a 4 GiB reservation the memory limit changes no code: the entry
    // compiled for the default limit serves a smaller one.
    let smaller = EngineOptions {
        limits: Limits {
            memory_bytes: 32 << 20,
            ..Limits::default()
        },
        ..options.clone()
    };
    let (hits, misses) = load(&smaller).await;
    assert!(hits > 0);
    assert_eq!(misses, 0, "a smaller memory limit recompiled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_memory_is_never_seen_by_the_next_call() {
    let cluster = TestCluster::start().await;
    let client = Arc::new(KubeCluster::new(cluster.client.clone(), "default"));
    // One instance slot, so every call reuses the memory of the one before;
    // kept resident (reset in place) and handed back to the kernel alike.
    for keep_resident_bytes in [EngineOptions::default().keep_resident_bytes, 0] {
        let options = EngineOptions {
            max_instances: 1,
            cache_dir: Some(cache_dir()),
            keep_resident_bytes,
            ..EngineOptions::default()
        };
        let rt = ComponentRuntime::new(&source(guests::RESIDUE), client.clone(), &options)
            .await
            .expect("the residue guest loads");
        for round in 0..3 {
            let (wrote, _) = apply(&rt, &configmap("default", "write")).await;
            let seen = failure(&wrote, StatusCode::Internal, "Found");
            assert_contains(&seen, "the secret at address");
            let (next, _) = apply(&rt, &configmap("default", "scan")).await;
            let message = failure(&next, StatusCode::Internal, "NotFound");
            assert_contains(&message, "no secret in");
            let scanned: usize = message
                .split_whitespace()
                .find_map(|w| w.parse().ok())
                .expect("the bytes scanned");
            assert!(
                scanned > 4 << 20,
                "round {round}, keep_resident {keep_resident_bytes}: scanned only {scanned} bytes"
            );
        }
    }
}
