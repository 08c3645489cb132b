//! The host's retries of reads against the simulator's fault injection: 429
//! with `Retry-After` is retried (and waited for), 5xx on reads is retried.
//! Writes under faults are in `faults.rs`.

use crate::support::{Runtimes, TestCluster, apply_ok, fault, resource};
use krt_host::Runtime;
use krt_host::model::{ApplyOptions, ReadOptions};
use krt_sim::{Fault, FaultAction};
use serde_json::json;
use std::time::{Duration, Instant};

fn configmap(name: &str) -> serde_json::Value {
    krt_testkit::configmap(name)
        .namespace("default")
        .data(json!({"k": "v"}))
        .value()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_requests_are_retried_after_the_servers_retry_after() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it injects faults into krt-sim's answers",
    )
    .await;
    let (rt, kc) = cluster.counted_runtime().await;
    cluster.sim().inject_fault(Fault {
        times: 2,
        ..fault(
            "GET",
            "/configmaps/throttled",
            FaultAction::Status {
                code: 429,
                retry_after_seconds: Some(1),
            },
        )
    });
    let started = Instant::now();
    let cm = resource(configmap("throttled"));
    let applied = rt.apply(None, Some(&cm), &ApplyOptions::default()).await;
    assert_eq!(applied.status, None);
    assert_eq!(kc.retries(), 2, "each 429 retried once");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "Retry-After (1 s) honoured twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_on_reads_are_retried() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it injects faults into krt-sim's answers",
    )
    .await;
    let (rt, kc) = cluster.counted_runtime().await;
    let cm = resource(configmap("flaky"));
    apply_ok(&rt, &cm).await;

    cluster
        .sim()
        .inject_fault(Fault::status("GET", "/configmaps/flaky", 503, 2));
    let read = rt.read(None, Some(&cm), &ReadOptions::default()).await;
    assert_eq!(read.status, None, "a read survives two 503s");
    assert!(read.resource.is_some());
    assert_eq!(kc.retries(), 2);
}
