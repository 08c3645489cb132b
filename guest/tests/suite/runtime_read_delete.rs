//! `runtime::read` and `runtime::delete` against the simulated cluster.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
use crate::support;

use krt_guest::model::{
    ApiError, DeleteRequest, PropagationPolicy, ReadOptions, Resource, StatusCode, StatusKind,
};
use krt_guest::runtime;
use krt_testkit::{assert_contains, configmap, namespace, resource};
use serde_json::json;
use support::{Request, TestCluster, Verb};

/// The ConfigMap `cfg` in namespace `web`, as a plan naming it.
fn cfg() -> Resource {
    configmap("cfg").namespace("web").resource()
}

/// Stores `cfg` holding `a: 1` (and `finalizers`), as another client would.
fn seed(c: &TestCluster, finalizers: &[&str]) {
    let mut object = configmap("cfg")
        .namespace("web")
        .data(json!({"a": "1"}))
        .value();
    if !finalizers.is_empty() {
        object["metadata"]["finalizers"] = json!(finalizers);
    }
    c.put(object);
}

fn stored(c: &TestCluster) -> Option<serde_json::Value> {
    c.object("v1", "ConfigMap", "web", "cfg")
}

/// A `Thing`, a kind the cluster does not serve.
fn thing() -> Resource {
    resource(json!({"apiVersion": "x.io/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "web"}}))
}

#[test]
fn read_returns_the_normalized_live_object_of_the_plan_or_prior() {
    let c = TestCluster::new();
    seed(&c, &[]);
    let mut plan = configmap("cfg")
        .namespace("web")
        .data(json!({"a": "2"}))
        .resource();
    plan.extensions = json!({"note": "kept"});
    let r = runtime::read(&c, None, Some(&plan), &ReadOptions::default());
    assert!(r.status.is_none());
    let res = r.resource.unwrap();
    assert_eq!(res.attributes["data"]["a"], "1");
    assert_eq!(
        res.attributes.pointer("/metadata/uid"),
        stored(&c).unwrap().pointer("/metadata/uid"),
        "the UID tells this object from a later one of the same name"
    );
    assert!(
        res.attributes
            .pointer("/metadata/resourceVersion")
            .is_none()
    );
    assert!(res.attributes.pointer("/metadata/managedFields").is_none());
    assert_eq!(res.extensions, plan.extensions);
    let r = runtime::read(&c, Some(&plan), None, &ReadOptions::default());
    assert_eq!(r.resource.unwrap().attributes["data"]["a"], "1");
}

#[test]
fn read_of_a_missing_object_is_none_without_error() {
    let c = TestCluster::new();
    let plan = configmap("nope").namespace("web").resource();
    let r = runtime::read(&c, None, Some(&plan), &ReadOptions::default());
    assert_eq!(r.resource, None);
    assert_eq!(r.status, None);
}

#[test]
fn read_of_an_unserved_kind_is_none_with_a_warning() {
    let c = TestCluster::new();
    let r = runtime::read(&c, None, Some(&thing()), &ReadOptions::default());
    assert_eq!(r.resource, None);
    let status = r.status.unwrap();
    assert_eq!(status.kind, StatusKind::Warning);
    assert_eq!(status.code, StatusCode::KindNotInstalled);
}

#[test]
fn read_needs_a_resource_and_maps_errors() {
    let c = TestCluster::new();
    let r = runtime::read(&c, None, None, &ReadOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::InvalidArgument);
    c.fail_next(
        Verb::Get,
        ApiError::api(401, "Unauthorized", "Unauthorized"),
    );
    let r = runtime::read(&c, None, Some(&cfg()), &ReadOptions::default());
    assert_eq!(r.status.unwrap().code, StatusCode::Unauthenticated);
}

#[test]
fn read_uses_the_default_namespace_for_three_segment_ids() {
    let c = TestCluster::new();
    c.put(namespace("team").value());
    c.put(configmap("cfg").namespace("team").value());
    let plan = configmap("cfg").resource();
    assert_eq!(plan.id, "v1:ConfigMap:cfg");
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
    let c = TestCluster::new();
    seed(&c, &[]);
    let options = DeleteRequest {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let r = runtime::delete(&c, &c.host(), &cfg(), &options);
    assert_eq!(r.status, None);
    assert!(stored(&c).is_none());
    assert!(c.log().iter().any(|r| matches!(r, Request::Delete { options, .. } if options.propagation_policy == Some(PropagationPolicy::Foreground))));
    let status = runtime::delete(&c, &c.host(), &cfg(), &options)
        .status
        .expect("a note that nothing was deleted");
    assert_eq!(status.kind, StatusKind::Info);
    assert_eq!(status.code, StatusCode::NotFound);
    assert_eq!(status.reason, runtime::ALREADY_GONE);
}

#[test]
fn delete_with_a_uid_deletes_only_the_object_with_that_uid() {
    let c = TestCluster::new();
    seed(&c, &[]);
    let uid = stored(&c).unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut other = cfg();
    other.attributes["metadata"]["uid"] = "not-this-one".into();
    let status = runtime::delete(&c, &c.host(), &other, &DeleteRequest::default())
        .status
        .expect("refused");
    assert_eq!(status.kind, StatusKind::Error);
    assert_eq!(status.code, StatusCode::Conflict);
    assert_eq!(status.reason, runtime::UID_MISMATCH);
    assert_contains(&status.message, "not-this-one");
    assert!(stored(&c).is_some(), "another UID's object stays");
    assert!(
        c.log()
            .iter()
            .any(|r| matches!(r, Request::Delete { options, .. }
        if options.preconditions.as_ref().and_then(|p| p.uid.as_deref()) == Some("not-this-one")))
    );

    let mut same = cfg();
    same.attributes["metadata"]["uid"] = uid.into();
    let r = runtime::delete(&c, &c.host(), &same, &DeleteRequest::default());
    assert_eq!(r.status, None);
    assert!(stored(&c).is_none());
}

#[test]
fn delete_dry_run_keeps_the_object() {
    let c = TestCluster::new();
    seed(&c, &[]);
    let r = runtime::delete(
        &c,
        &c.host(),
        &cfg(),
        &DeleteRequest {
            dry_run: true,
            ..Default::default()
        },
    );
    assert_eq!(r.status, None);
    assert!(stored(&c).is_some());
    assert!(!c.wrote());
}

#[test]
fn delete_names_pending_finalizers() {
    let c = TestCluster::new();
    seed(&c, &["example.com/keep"]);
    let r = runtime::delete(&c, &c.host(), &cfg(), &DeleteRequest::default());
    let status = r.status.unwrap();
    assert_eq!(status.kind, StatusKind::Info);
    assert_contains(&status.message, "example.com/keep");
    assert!(stored(&c).unwrap()["metadata"]["deletionTimestamp"].is_string());
}

#[test]
fn delete_of_an_unserved_kind_is_a_warning_and_errors_are_mapped() {
    let c = TestCluster::new();
    let status = runtime::delete(&c, &c.host(), &thing(), &DeleteRequest::default())
        .status
        .unwrap();
    assert_eq!(status.kind, StatusKind::Warning);
    assert_eq!(status.code, StatusCode::KindNotInstalled);

    seed(&c, &[]);
    c.fail_next(
        Verb::Delete,
        ApiError::api(
            403,
            "Forbidden",
            "configmaps \"cfg\" is forbidden: user cannot delete",
        ),
    );
    let status = runtime::delete(&c, &c.host(), &cfg(), &DeleteRequest::default())
        .status
        .unwrap();
    assert_eq!(status.code, StatusCode::PermissionDenied);
    assert_contains(&status.message, "user cannot delete");
    assert!(stored(&c).is_some());
}

#[test]
fn foreground_delete_waits_and_names_the_finalizers_that_block_it() {
    let c = TestCluster::new();
    seed(&c, &["example.com/keep"]);
    let host = c.host();
    let options = DeleteRequest {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let status = runtime::delete(&c, &host, &cfg(), &options)
        .status
        .expect("blocked");
    assert_eq!(status.kind, StatusKind::Error);
    assert_eq!(status.code, StatusCode::Timeout);
    assert_contains(&status.message, "example.com/keep");
    let slept: u32 = host.slept.borrow().iter().sum();
    assert!(
        slept >= runtime::DELETE_WAIT_MS,
        "waited {slept} ms before giving up"
    );
    assert!(stored(&c).is_some());
}
