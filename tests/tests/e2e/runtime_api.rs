//! The Rust `Runtime` API (component-backed) against a simulator.

use crate::support::{Runtimes, SimCluster, foreign_write, resource};
use krt_host::Runtime;
use krt_host::model::{
    Action, ApplyMode, ApplyOptions, DeleteRequest, ReadOptions, StatusCode, StatusKind,
};
use serde_json::json;

fn configmap(name: &str, data: serde_json::Value) -> serde_json::Value {
    krt_testkit::configmap(name)
        .namespace("default")
        .data(data)
        .value()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_then_update_removes_dropped_fields_and_keeps_foreign_ones() {
    let cluster = SimCluster::start().await;
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
    let live = cluster
        .get("v1", "ConfigMap", "configmaps", Some("default"), "app")
        .await
        .unwrap();
    assert_eq!(live["data"], json!({"a": "10", "c": "foreign"}));

    let again = rt.apply(Some(&v2), Some(&v2), &opts).await;
    assert_eq!(again.status, None);
    assert_eq!(again.action, Action::Unchanged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_three_way_removes_dropped_fields_and_keeps_foreign_ones() {
    let cluster = SimCluster::start().await;
    let rt = cluster.runtime().await;
    let opts = ApplyOptions {
        mode: ApplyMode::ClientSideThreeWay,
        ..ApplyOptions::default()
    };

    let v1 = resource(configmap("csa", json!({"a": "1", "b": "2"})));
    assert_eq!(rt.apply(None, Some(&v1), &opts).await.status, None);
    foreign_write(&cluster, "csa", "c", "foreign").await;
    let v2 = resource(configmap("csa", json!({"a": "10"})));
    let updated = rt.apply(Some(&v1), Some(&v2), &opts).await;
    assert_eq!(updated.status, None);
    assert_eq!(updated.action, Action::Update);
    let live = cluster
        .get("v1", "ConfigMap", "configmaps", Some("default"), "csa")
        .await
        .unwrap();
    assert_eq!(live["data"], json!({"a": "10", "c": "foreign"}));
    assert_eq!(
        rt.apply(Some(&v2), Some(&v2), &opts).await.action,
        Action::Unchanged
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_of_missing_object_is_absent_and_delete_of_missing_object_succeeds() {
    let cluster = SimCluster::start().await;
    let rt = cluster.runtime().await;
    let missing = resource(configmap("nope", json!({})));
    let read = rt.read(None, Some(&missing), &ReadOptions::default()).await;
    assert_eq!(read.status, None);
    assert!(read.resource.is_none());
    // A success that says nothing was deleted.
    let gone = rt
        .delete(&missing, &DeleteRequest::default())
        .await
        .expect("a note");
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
    let cluster = SimCluster::start().await;
    let rt = cluster.runtime().await;
    let cm = resource(configmap("present", json!({"k": "v"})));
    assert_eq!(
        rt.apply(None, Some(&cm), &ApplyOptions::default())
            .await
            .status,
        None
    );
    let read = rt.read(None, Some(&cm), &ReadOptions::default()).await;
    assert_eq!(read.status, None);
    assert_eq!(read.resource.unwrap().attributes["data"], json!({"k": "v"}));
    assert_eq!(rt.delete(&cm, &DeleteRequest::default()).await, None);
    assert!(
        cluster
            .get("v1", "ConfigMap", "configmaps", Some("default"), "present")
            .await
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ids_fail_clearly_and_write_nothing() {
    let cluster = SimCluster::start().await;
    let rt = cluster.runtime().await;
    let mut wrong_kind = resource(configmap("idcheck", json!({"k": "v"})));
    wrong_kind.id = "v1:Secret:default:idcheck".into();
    let r = rt
        .apply(None, Some(&wrong_kind), &ApplyOptions::default())
        .await;
    let status = r.status.expect("an error status");
    assert!(status.is_error());
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");
    assert!(
        status.message.contains("Secret") && status.message.contains("ConfigMap"),
        "{}",
        status.message
    );

    let mut wrong_ns = resource(configmap("idcheck", json!({"k": "v"})));
    wrong_ns.id = "v1:ConfigMap:other:idcheck".into();
    let status = rt
        .apply(None, Some(&wrong_ns), &ApplyOptions::default())
        .await
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");
    assert!(
        status.message.contains("other") && status.message.contains("default"),
        "{}",
        status.message
    );

    let mut garbage = resource(configmap("idcheck", json!({"k": "v"})));
    garbage.id = "not-an-id".into();
    let status = rt
        .apply(None, Some(&garbage), &ApplyOptions::default())
        .await
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::InvalidArgument, "{status:?}");

    assert!(
        cluster
            .get("v1", "ConfigMap", "configmaps", Some("default"), "idcheck")
            .await
            .is_none()
    );
}
