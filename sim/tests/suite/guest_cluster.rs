//! `GuestCluster`: krt's `Cluster` calls against the in-process simulator, each answered as a
//! real API server answers krt-host's kube-rs client.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use krt_guest::cluster::{Cluster, WatchStream};
use krt_guest::model::{
    ApiResource, CreateOptions, DeleteOptions, ErrorSource, EventType, ListOptions, PatchOptions,
    PatchType, Preconditions, PropagationPolicy, WatchOptions,
};
use krt_sim::GuestCluster;
use krt_sim::api::Request;
use serde_json::{Value, json};

fn deployments(cluster: &GuestCluster) -> ApiResource {
    cluster.resolve("apps/v1", "Deployment").expect("served")
}

fn web() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}})
}

fn dry_run() -> CreateOptions {
    CreateOptions {
        dry_run: true,
        field_manager: Some("krt".into()),
    }
}

#[test]
fn resolves_built_in_kinds_through_discovery() {
    let cluster = GuestCluster::new();
    assert_eq!(
        deployments(&cluster),
        ApiResource {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            namespaced: true,
        }
    );
    let namespaces = cluster.resolve("v1", "Namespace").expect("served");
    assert_eq!(
        (namespaces.plural.as_str(), namespaces.namespaced),
        ("namespaces", false)
    );
    let missing = cluster.resolve("example.com/v1", "Widget").unwrap_err();
    assert_eq!(
        (missing.source, missing.code, missing.reason.as_str()),
        (ErrorSource::Api, 404, "NotFound")
    );
    assert!(
        missing.message.contains("example.com/v1/Widget"),
        "{}",
        missing.message
    );
}

#[test]
fn a_crd_makes_its_kind_resolvable() {
    let cluster = GuestCluster::new();
    let crds = cluster
        .resolve("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        .expect("served");
    let crd = common::widget_crd();
    // Cluster-scoped: the namespace is left out of the path, as krt-host leaves it out.
    cluster
        .create(&crds, Some("default"), &crd, &CreateOptions::default())
        .expect("create the CRD");
    let widgets = cluster.resolve("example.com/v1", "Widget").expect("served");
    assert_eq!(
        (widgets.plural.as_str(), widgets.namespaced),
        ("widgets", true)
    );
}

#[test]
fn create_get_patch_delete_round_trip() {
    let cluster = GuestCluster::new();
    let kind = deployments(&cluster);
    let ns = Some("default");
    assert_eq!(cluster.get(&kind, ns, "web"), Ok(None));

    let dry = cluster
        .create(&kind, ns, &web(), &dry_run())
        .expect("dry run");
    assert_eq!(dry["spec"]["replicas"], 1, "defaulted");
    assert_eq!(
        cluster.get(&kind, ns, "web"),
        Ok(None),
        "a dry run stores nothing"
    );

    let created = cluster
        .create(&kind, ns, &web(), &CreateOptions::default())
        .expect("create");
    assert!(created["metadata"]["uid"].is_string());
    let again = cluster
        .create(&kind, ns, &web(), &CreateOptions::default())
        .unwrap_err();
    assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));

    let patches = [
        (PatchType::JsonMerge, json!({"spec": {"replicas": 2}}), 2),
        (
            PatchType::StrategicMerge,
            json!({"spec": {"replicas": 3}}),
            3,
        ),
        (
            PatchType::JsonPatch,
            json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]),
            4,
        ),
        (
            PatchType::Apply,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 5}}),
            5,
        ),
    ];
    for (patch_type, body, replicas) in patches {
        let options = PatchOptions {
            force: true,
            ..PatchOptions::default()
        };
        let patched = cluster.patch(&kind, ns, "web", patch_type, &body, &options);
        let patched = patched.unwrap_or_else(|e| panic!("{patch_type:?}: {e:?}"));
        assert_eq!(patched["spec"]["replicas"], replicas, "{patch_type:?}");
    }
    let live = cluster.get(&kind, ns, "web").expect("get").expect("exists");
    let managers: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"krt"),
        "apply's default manager: {managers:?}"
    );

    let stale = DeleteOptions {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..DeleteOptions::default()
    };
    let refused = cluster.delete(&kind, ns, "web", &stale).unwrap_err();
    assert_eq!(refused.code, 409);
    let dry = DeleteOptions {
        dry_run: true,
        ..DeleteOptions::default()
    };
    assert_eq!(cluster.delete(&kind, ns, "web", &dry), Ok(None));
    assert!(cluster.get(&kind, ns, "web").expect("get").is_some());
    assert_eq!(
        cluster.delete(&kind, ns, "web", &DeleteOptions::default()),
        Ok(None)
    );
    let gone = cluster
        .delete(&kind, ns, "web", &DeleteOptions::default())
        .unwrap_err();
    assert_eq!(gone.code, 404);
}

#[test]
fn deletes_held_by_finalizers_return_the_object() {
    let cluster = GuestCluster::new();
    let configmaps = cluster.resolve("v1", "ConfigMap").expect("served");
    let held = json!({"metadata": {"name": "held", "finalizers": ["example.com/keep"]}});
    cluster
        .create(
            &configmaps,
            Some("default"),
            &held,
            &CreateOptions::default(),
        )
        .expect("create");
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..DeleteOptions::default()
    };
    let pending = cluster
        .delete(&configmaps, Some("default"), "held", &foreground)
        .expect("delete")
        .expect("still there");
    assert!(pending["metadata"]["deletionTimestamp"].is_string());
    let finalizers = &pending["metadata"]["finalizers"];
    assert_eq!(
        finalizers,
        &json!(["example.com/keep", "foregroundDeletion"])
    );
}

#[test]
fn invalid_objects_carry_the_status_causes() {
    let cluster = GuestCluster::new();
    let kind = deployments(&cluster);
    let bad = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
        "spec": {"replicas": -1}});
    let failure = cluster
        .create(&kind, Some("default"), &bad, &CreateOptions::default())
        .unwrap_err();
    assert_eq!((failure.code, failure.reason.as_str()), (422, "Invalid"));
    assert!(!failure.causes.is_empty(), "{failure:?}");
    assert!(
        failure.causes.iter().all(|c| !c.field.is_empty()),
        "{failure:?}"
    );
}

#[test]
fn lists_pages_with_kind_and_selectors() {
    let cluster = GuestCluster::new();
    let kind = cluster.resolve("v1", "ConfigMap").expect("served");
    for (name, tier) in [("a", "web"), ("b", "web"), ("c", "db")] {
        let object = json!({"metadata": {"name": name, "labels": {"tier": tier}}});
        cluster
            .create(&kind, Some("default"), &object, &CreateOptions::default())
            .expect("create");
    }
    let options = ListOptions {
        label_selector: Some("tier=web".into()),
        limit: Some(1),
        ..ListOptions::default()
    };
    let page = cluster
        .list(&kind, Some("default"), &options)
        .expect("list");
    assert_eq!(page.items.len(), 1);
    let first = &page.items[0];
    assert_eq!(
        (first["apiVersion"].as_str(), first["kind"].as_str()),
        (Some("v1"), Some("ConfigMap"))
    );
    assert!(!page.resource_version.is_empty());
    let next = ListOptions {
        continue_token: page.continue_token,
        ..options
    };
    let rest = cluster.list(&kind, Some("default"), &next).expect("page 2");
    assert_eq!(rest.items[0]["metadata"]["name"], "b");
    assert_eq!(rest.continue_token, None);
    let db = ListOptions {
        field_selector: Some("metadata.name=c".into()),
        ..ListOptions::default()
    };
    let all = cluster.list(&kind, None, &db).expect("all namespaces");
    assert_eq!(all.items.len(), 1);
}

#[test]
fn watches_replay_stored_events_and_controllers_progress_while_waiting() {
    let cluster = GuestCluster::new();
    let kind = deployments(&cluster);
    let ns = Some("default");
    let created = cluster
        .create(&kind, ns, &web(), &CreateOptions::default())
        .expect("create");
    let rv = created["metadata"]["resourceVersion"].as_str().expect("rv");

    let mut from_now = cluster
        .watch(&kind, ns, &WatchOptions::default())
        .expect("watch");
    let added = from_now.next(0).expect("next").expect("event");
    assert_eq!(
        (added.type_, added.object["metadata"]["name"].as_str()),
        (EventType::Added, Some("web"))
    );

    cluster
        .patch(
            &kind,
            ns,
            "web",
            PatchType::JsonMerge,
            &json!({"spec": {"replicas": 2}}),
            &PatchOptions::default(),
        )
        .expect("patch");
    let resumed = WatchOptions {
        resource_version: Some(rv.to_string()),
        field_selector: Some("metadata.name=web".into()),
        allow_bookmarks: true,
        ..WatchOptions::default()
    };
    let mut replay = cluster.watch(&kind, ns, &resumed).expect("watch");
    let modified = replay.next(0).expect("next").expect("event");
    assert_eq!(
        (modified.type_, modified.object["spec"]["replicas"].as_u64()),
        (EventType::Modified, Some(2))
    );

    // The simulated Deployment controller reports the rollout while the watch waits.
    let ready = loop {
        match replay.next(5_000).expect("next") {
            Some(event) if event.object["status"]["readyReplicas"] == 2 => break true,
            Some(_) => {}
            None => break false,
        }
    };
    assert!(ready, "the controllers never made the Deployment ready");
    assert_eq!(replay.next(0), Ok(None), "nothing left to report");
}

#[test]
fn a_stream_past_its_timeout_seconds_is_expired() {
    let cluster = GuestCluster::new();
    let kind = cluster.resolve("v1", "ConfigMap").expect("served");
    let options = WatchOptions {
        timeout_seconds: Some(0),
        ..WatchOptions::default()
    };
    let mut stream = cluster.watch(&kind, None, &options).expect("watch");
    assert_eq!(stream.next(0).unwrap_err().code, 410);
}

#[test]
fn a_watch_from_a_compacted_version_is_gone() {
    let cluster = GuestCluster::new();
    let kind = cluster.resolve("v1", "ConfigMap").expect("served");
    let object = json!({"metadata": {"name": "a"}});
    let created = cluster
        .create(&kind, Some("default"), &object, &CreateOptions::default())
        .expect("create");
    let old = created["metadata"]["resourceVersion"].as_str().expect("rv");
    let changed = cluster.cluster().handle(&Request::patch(
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        br#"{"data": {"k": "v"}}"#.to_vec(),
    ));
    assert_eq!(changed.code, 200);
    cluster.cluster().expire_resource_versions();
    let from_old = WatchOptions {
        resource_version: Some(old.to_string()),
        ..WatchOptions::default()
    };
    let gone = cluster
        .watch(&kind, Some("default"), &from_old)
        .err()
        .expect("410");
    assert_eq!((gone.code, gone.reason.as_str()), (410, "Expired"));
}
