//! The host's retries against the simulator's fault injection: 429 with
//! `Retry-After` is retried (and waited for), 5xx on reads is retried, a 5xx
//! on a write is not blindly re-sent, and every retry stays within bounds.

use crate::support::{Cluster, resource};
use host::Runtime;
use host::model::{ApplyOptions, ReadOptions};
use serde_json::json;
use sim::{Fault, FaultAction};
use std::time::{Duration, Instant};

fn configmap(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_requests_are_retried_after_the_servers_retry_after() {
    let cluster = Cluster::start().await;
    let kc = cluster.kube_cluster("default");
    let rt = cluster.runtime_in(kc.clone()).await;
    cluster.sim().inject_fault(Fault {
        verb: Some("GET".into()),
        path: Some("/configmaps/throttled".into()),
        times: 2,
        action: FaultAction::Status {
            code: 429,
            retry_after_seconds: Some(1),
        },
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
async fn server_errors_are_retried_on_reads_but_not_on_writes() {
    let cluster = Cluster::start().await;
    let kc = cluster.kube_cluster("default");
    let rt = cluster.runtime_in(kc.clone()).await;
    let cm = resource(configmap("flaky"));
    assert_eq!(
        rt.apply(None, Some(&cm), &ApplyOptions::default())
            .await
            .status,
        None
    );

    cluster
        .sim()
        .inject_fault(Fault::status("GET", "/configmaps/flaky", 503, 2));
    let read = rt.read(None, Some(&cm), &ReadOptions::default()).await;
    assert_eq!(read.status, None, "a read survives two 503s");
    assert!(read.resource.is_some());
    let after_reads = kc.retries();
    assert_eq!(after_reads, 2);

    cluster
        .sim()
        .inject_fault(Fault::status("PATCH", "/configmaps/flaky", 500, 1));
    let changed = resource(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "flaky", "namespace": "default"}, "data": {"k": "changed"}}));
    let write = rt
        .apply(None, Some(&changed), &ApplyOptions::default())
        .await;
    let status = write.status.expect("the 500 on the write is reported");
    assert!(status.is_error());
    assert!(
        status.retryable,
        "the guest marks a server error retryable: {status:?}"
    );
    assert_eq!(
        kc.retries(),
        after_reads,
        "a write is never re-sent by the host"
    );
}
