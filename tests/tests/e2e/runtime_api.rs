//! The Rust `Runtime` API (component-backed) against a simulator.

use crate::support::{
    Runtimes, TestCluster, apply_ok, assert_contains, client_side, configmap, foreign_write,
    read_and_delete_missing, resource,
};
use krt_host::Runtime;
use krt_host::model::{Action, ApplyOptions, DeleteRequest, ReadOptions, StatusCode, StatusKind};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_then_update_removes_dropped_fields_and_keeps_foreign_ones() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let opts = ApplyOptions::default();

    let v1 = resource(configmap("app", json!({"a": "1", "b": "2"})));
    let created = rt.apply(None, Some(&v1), &opts).await;
    assert_eq!(created.status, None);
    assert_eq!(created.action, Action::Create);
    let returned = created.resource.expect("server object returned");
    assert_eq!(returned.id, v1.id);
    assert_eq!(returned.attributes["data"], json!({"a": "1", "b": "2"}));
    assert!(
        returned.attributes["metadata"]
            .get("resourceVersion")
            .is_none(),
        "result is normalized"
    );

    foreign_write(&cluster, "app", "c", "foreign").await;

    let v2 = resource(configmap("app", json!({"a": "10"})));
    let updated = rt.apply(Some(&v1), Some(&v2), &opts).await;
    assert_eq!(updated.status, None);
    assert_eq!(updated.action, Action::Update);
    let live = cluster.get_configmap("default", "app").await.unwrap();
    assert_eq!(live["data"], json!({"a": "10", "c": "foreign"}));

    let again = rt.apply(Some(&v2), Some(&v2), &opts).await;
    assert_eq!(again.status, None);
    assert_eq!(again.action, Action::Unchanged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_three_way_removes_dropped_fields_and_keeps_foreign_ones() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let opts = client_side();

    let v1 = resource(configmap("csa", json!({"a": "1", "b": "2"})));
    assert_eq!(rt.apply(None, Some(&v1), &opts).await.status, None);
    foreign_write(&cluster, "csa", "c", "foreign").await;
    let v2 = resource(configmap("csa", json!({"a": "10"})));
    let updated = rt.apply(Some(&v1), Some(&v2), &opts).await;
    assert_eq!(updated.status, None);
    assert_eq!(updated.action, Action::Update);
    let live = cluster.get_configmap("default", "csa").await.unwrap();
    assert_eq!(live["data"], json!({"a": "10", "c": "foreign"}));
    assert_eq!(
        rt.apply(Some(&v2), Some(&v2), &opts).await.action,
        Action::Unchanged
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_of_missing_object_is_absent_and_delete_of_missing_object_succeeds() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let missing = resource(configmap("nope", json!({})));
    let gone = read_and_delete_missing(&rt, &missing).await;
    assert_eq!(
        (gone.kind, gone.code, gone.reason.as_str()),
        (StatusKind::Info, StatusCode::NotFound, "AlreadyGone")
    );
    assert!(
        gone.message
            .contains("ConfigMap default/nope was already gone"),
        "{gone:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_delete_of_existing_object() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let cm = resource(configmap("present", json!({"k": "v"})));
    apply_ok(&rt, &cm).await;
    let read = rt.read(None, Some(&cm), &ReadOptions::default()).await;
    assert_eq!(read.status, None);
    assert_eq!(read.resource.unwrap().attributes["data"], json!({"k": "v"}));
    assert_eq!(rt.delete(&cm, &DeleteRequest::default()).await, None);
    assert!(cluster.get_configmap("default", "present").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ids_fail_clearly_and_write_nothing() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let mut wrong_kind = resource(configmap("idcheck", json!({"k": "v"})));
    wrong_kind.id = "v1:Secret:default:idcheck".into();
    let r = rt
        .apply(None, Some(&wrong_kind), &ApplyOptions::default())
        .await;
    let status = r.status.expect("an error status");
    assert!(status.is_error());
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");
    assert_contains(&status.message, "Secret");
    assert_contains(&status.message, "ConfigMap");

    let mut wrong_ns = resource(configmap("idcheck", json!({"k": "v"})));
    wrong_ns.id = "v1:ConfigMap:other:idcheck".into();
    let status = rt
        .apply(None, Some(&wrong_ns), &ApplyOptions::default())
        .await
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");
    assert_contains(&status.message, "other");
    assert_contains(&status.message, "default");

    let mut garbage = resource(configmap("idcheck", json!({"k": "v"})));
    garbage.id = "not-an-id".into();
    let status = rt
        .apply(None, Some(&garbage), &ApplyOptions::default())
        .await
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");

    assert!(cluster.get_configmap("default", "idcheck").await.is_none());
}
