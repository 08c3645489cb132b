//! `runtime::read` and `runtime::delete` against the in-memory cluster.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
mod support;

use krt_guest::model::{
    ApiError, DeleteRequest, PropagationPolicy, ReadOptions, StatusCode, StatusKind,
};
use krt_guest::runtime;
use serde_json::json;
use support::{FakeCluster, FakeHost, Request, Verb, configmap, resource};

fn seed(c: &FakeCluster) {
    c.put("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "web"}, "data": {"a": "1"}}));
}

#[test]
fn read_returns_the_normalized_live_object_of_the_plan_or_prior() {
    let c = FakeCluster::new();
    seed(&c);
    let plan = configmap("cfg", json!({"a": "2"}));
    let r = runtime::read(&c, None, Some(&plan), &ReadOptions::default());
    assert!(r.status.is_none());
    let res = r.resource.unwrap();
    assert_eq!(res.attributes["data"]["a"], "1");
    assert!(res.attributes.pointer("/metadata/uid").is_none());
    assert_eq!(res.extensions, plan.extensions);
    let r = runtime::read(&c, Some(&plan), None, &ReadOptions::default());
    assert!(r.resource.is_some());
}

#[test]
fn read_of_a_missing_object_is_none_without_error() {
    let c = FakeCluster::new();
    let r = runtime::read(
        &c,
        None,
        Some(&configmap("nope", json!({}))),
        &ReadOptions::default(),
    );
    assert_eq!(r.resource, None);
    assert_eq!(r.status, None);
}

#[test]
fn read_of_an_unserved_kind_is_none_with_a_warning() {
    let c = FakeCluster::new();
    let plan = resource(
        "x.io/v1:Thing:web:t",
        json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"}}),
    );
    let r = runtime::read(&c, None, Some(&plan), &ReadOptions::default());
    assert_eq!(r.resource, None);
    let status = r.status.unwrap();
    assert_eq!(status.kind, StatusKind::Warning);
    assert_eq!(status.code, StatusCode::KindNotInstalled);
}

#[test]
fn read_needs_a_resource_and_maps_errors() {
    let c = FakeCluster::new();
    let r = runtime::read(&c, None, None, &ReadOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::InvalidArgument);
    c.fail_next(
        Verb::Get,
        ApiError::api(401, "Unauthorized", "Unauthorized"),
    );
    let r = runtime::read(
        &c,
        None,
        Some(&configmap("cfg", json!({}))),
        &ReadOptions::default(),
    );
    assert_eq!(r.status.unwrap().code, StatusCode::Unauthenticated);
}

#[test]
fn read_uses_the_default_namespace_for_three_segment_ids() {
    let c = FakeCluster::new();
    c.put("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "team"}}));
    let plan = resource(
        "v1:ConfigMap:cfg",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}}),
    );
    let options = ReadOptions {
        default_namespace: Some("team".into()),
    };
    assert!(
        runtime::read(&c, None, Some(&plan), &options)
            .resource
            .is_some()
    );
    assert!(
        runtime::read(&c, None, Some(&plan), &ReadOptions::default())
            .resource
            .is_none()
    );
}

#[test]
fn delete_succeeds_when_gone_and_passes_the_propagation_policy() {
    let c = FakeCluster::new();
    seed(&c);
    let options = DeleteRequest {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let r = runtime::delete(
        &c,
        &FakeHost::default(),
        &configmap("cfg", json!({})),
        &options,
    );
    assert_eq!(r.status, None);
    assert!(c.object("configmaps", Some("web"), "cfg").is_none());
    assert!(c.log().iter().any(|r| matches!(r, Request::Delete { options, .. } if options.propagation_policy == Some(PropagationPolicy::Foreground))));
    let r = runtime::delete(
        &c,
        &FakeHost::default(),
        &configmap("cfg", json!({})),
        &options,
    );
    assert_eq!(r.status, None);
}

#[test]
fn delete_dry_run_keeps_the_object() {
    let c = FakeCluster::new();
    seed(&c);
    let r = runtime::delete(
        &c,
        &FakeHost::default(),
        &configmap("cfg", json!({})),
        &DeleteRequest {
            dry_run: true,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    assert!(c.object("configmaps", Some("web"), "cfg").is_some());
}

#[test]
fn delete_names_pending_finalizers() {
    let c = FakeCluster::new();
    c.put("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "web", "finalizers": ["example.com/keep"]}}));
    let r = runtime::delete(
        &c,
        &FakeHost::default(),
        &configmap("cfg", json!({})),
        &DeleteRequest::default(),
    );
    let status = r.status.unwrap();
    assert_eq!(status.kind, StatusKind::Info);
    assert!(
        status.message.contains("example.com/keep"),
        "{}",
        status.message
    );
}

#[test]
fn delete_of_an_unserved_kind_is_a_warning_and_errors_are_mapped() {
    let c = FakeCluster::new();
    let thing = resource(
        "x.io/v1:Thing:web:t",
        json!({"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"}}),
    );
    let status = runtime::delete(&c, &FakeHost::default(), &thing, &DeleteRequest::default())
        .status
        .unwrap();
    assert_eq!(status.kind, StatusKind::Warning);
    assert_eq!(status.code, StatusCode::KindNotInstalled);

    seed(&c);
    c.fail_next(
        Verb::Delete,
        ApiError::api(
            403,
            "Forbidden",
            "configmaps \"cfg\" is forbidden: user cannot delete",
        ),
    );
    let status = runtime::delete(
        &c,
        &FakeHost::default(),
        &configmap("cfg", json!({})),
        &DeleteRequest::default(),
    )
    .status
    .unwrap();
    assert_eq!(status.code, StatusCode::PermissionDenied);
    assert!(status.message.contains("user cannot delete"));
}

#[test]
fn foreground_delete_waits_and_names_the_finalizers_that_block_it() {
    let c = FakeCluster::new();
    c.put("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "web", "finalizers": ["example.com/keep"]}}));
    let host = FakeHost::default();
    let options = DeleteRequest {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let status = runtime::delete(&c, &host, &configmap("cfg", json!({})), &options)
        .status
        .expect("blocked");
    assert_eq!(status.kind, StatusKind::Error);
    assert_eq!(status.code, StatusCode::Timeout);
    assert!(
        status.message.contains("example.com/keep"),
        "{}",
        status.message
    );
    let slept: u32 = host.slept.borrow().iter().sum();
    assert!(
        slept >= runtime::DELETE_WAIT_MS,
        "waited {slept} ms before giving up"
    );
    assert!(c.object("configmaps", Some("web"), "cfg").is_some());
}
