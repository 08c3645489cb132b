//! One conformance suite, two implementations: every case runs against the
//! sandboxed `ComponentRuntime` and the `NativeRuntime` (same guest logic,
//! natively), each on its own simulator.

use crate::support::{
    Runtimes, TestCluster, apply_ok, configmap, read_and_delete_missing, resource, watch_for,
};
use krt_host::model::{
    Action, ApplyOptions, DeleteRequest, HealthState, PropagationPolicy, ReadOptions, StatusCode,
};
use krt_host::{KubeCluster, Runtime};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Which implementation a case runs on.
#[derive(Clone, Copy)]
enum Kind {
    Component,
    Native,
}

/// Runs `case` with a runtime of `kind` whose context namespace is `namespace`.
macro_rules! with_runtime {
    ($kind:expr, $cluster:expr, $kc:expr, |$rt:ident| $body:expr) => {
        match $kind {
            Kind::Component => {
                let $rt = $cluster.runtime_in($kc).await;
                $body
            }
            Kind::Native => {
                let $rt = $cluster.native_in($kc);
                $body
            }
        }
    };
}

/// Declares each case once per implementation.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod component {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::Kind::Component).await })*
        }
        mod native {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() { super::$case(super::Kind::Native).await })*
        }
    };
}

conformance!(
    create_update_noop,
    read_missing_and_delete_missing,
    delete_foreground_removes_dependents,
    ssa_conflict_then_force,
    watch_deployment_to_ready,
    crd_then_custom_resource_in_one_run,
    namespace_from_the_context,
    discovery_is_cached_and_refreshed_on_a_miss,
    dropping_a_call_cancels_it,
);

fn deployment(name: &str, replicas: u32) -> Value {
    krt_testkit::deployment(name)
        .namespace("default")
        .replicas(replicas)
        .value()
}

async fn create_update_noop(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let v1 = resource(configmap("cfg", json!({"a": "1"})));
        let created = rt.apply(None, Some(&v1), &ApplyOptions::default()).await;
        assert_eq!((created.action, created.status), (Action::Create, None));
        let v2 = resource(configmap("cfg", json!({"a": "2"})));
        let updated = rt
            .apply(Some(&v1), Some(&v2), &ApplyOptions::default())
            .await;
        assert_eq!((updated.action, updated.status), (Action::Update, None));
        assert_eq!(
            updated.resource.unwrap().attributes["data"],
            json!({"a": "2"})
        );
        let before = cluster.get_configmap("default", "cfg").await.unwrap();
        let noop = rt
            .apply(Some(&v2), Some(&v2), &ApplyOptions::default())
            .await;
        assert_eq!((noop.action, noop.status), (Action::Unchanged, None));
        let after = cluster.get_configmap("default", "cfg").await.unwrap();
        assert_eq!(
            after["metadata"]["resourceVersion"],
            before["metadata"]["resourceVersion"]
        );
    })
}

async fn read_missing_and_delete_missing(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let missing = resource(configmap("ghost", json!({})));
        read_and_delete_missing(&rt, &missing).await;
    })
}

async fn delete_foreground_removes_dependents(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let web = resource(deployment("fg", 1));
        apply_ok(&rt, &web).await;
        let ready = rt.watch(&web, &watch_for(20_000)).await;
        assert_eq!(ready.health.state, HealthState::Current, "{:?}", ready);
        assert!(
            !cluster
                .names("apps/v1", "ReplicaSet", "replicasets", Some("default"))
                .await
                .is_empty()
        );
        let options = DeleteRequest {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..Default::default()
        };
        let status = rt.delete(&web, &options).await;
        assert!(status.as_ref().is_none_or(|s| !s.is_error()), "{status:?}");
        wait_until("the deployment and its replicasets are gone", || async {
            cluster.get_deployment("default", "fg").await.is_none()
                && cluster
                    .names("apps/v1", "ReplicaSet", "replicasets", Some("default"))
                    .await
                    .is_empty()
        })
        .await;
    })
}

async fn ssa_conflict_then_force(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), "default", &ar);
        api.patch(
            "owned",
            &PatchParams::apply("other-team"),
            &Patch::Apply(configmap("owned", json!({"k": "theirs"}))),
        )
        .await
        .unwrap();
        let ours = resource(configmap("owned", json!({"k": "ours"})));
        let conflict = rt.apply(None, Some(&ours), &ApplyOptions::default()).await;
        let status = conflict.status.expect("a conflict");
        assert_eq!(status.code, StatusCode::FieldConflict, "{status:?}");
        assert!(
            status
                .causes
                .iter()
                .any(|c| c.field.contains("data.k") && c.message.contains("other-team")),
            "{status:?}"
        );
        let live = cluster.get_configmap("default", "owned").await.unwrap();
        assert_eq!(live["data"]["k"], "theirs");
        let forced = rt
            .apply(
                None,
                Some(&ours),
                &ApplyOptions {
                    force: true,
                    ..Default::default()
                },
            )
            .await;
        assert_eq!(forced.status, None);
        let live = cluster.get_configmap("default", "owned").await.unwrap();
        assert_eq!(live["data"]["k"], "ours");
    })
}

async fn watch_deployment_to_ready(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let web = resource(deployment("web", 3));
        apply_ok(&rt, &web).await;
        let done = rt.watch(&web, &watch_for(20_000)).await;
        assert_eq!(done.status, None, "{done:?}");
        assert_eq!(done.health.state, HealthState::Current);
        let live = done.resource.expect("the watched object");
        assert_eq!(live.attributes["spec"]["replicas"], 3);
    })
}

async fn crd_then_custom_resource_in_one_run(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        let crd = resource(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
        );
        let widget = resource(json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}));
        let early = rt.read(None, Some(&widget), &ReadOptions::default()).await;
        assert!(early.resource.is_none());
        assert_eq!(
            early.status.map(|s| s.code),
            Some(StatusCode::KindNotInstalled)
        );
        apply_ok(&rt, &crd).await;
        let established = rt.watch(&crd, &watch_for(10_000)).await;
        assert_eq!(
            established.health.state,
            HealthState::Current,
            "{established:?}"
        );
        let created = rt
            .apply(None, Some(&widget), &ApplyOptions::default())
            .await;
        assert_eq!((created.action, created.status), (Action::Create, None));
        assert_eq!(created.resource.unwrap().attributes["spec"]["size"], 3);

        // An object nested 122 levels deep, near the 128 that serde_json
        // parses (its managedFields nest the same fields 4 levels deeper), is
        // created, then updated at its deepest field: every recursion of the
        // guest (parse, merge, diff, print) fits its stack.
        let nested = |leaf: &str| {
            let mut spec = json!({"leaf": leaf});
            for _ in 0..120 {
                spec = json!({"n": spec});
            }
            resource(json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "deep", "namespace": "default"}, "spec": spec}))
        };
        let created = rt
            .apply(None, Some(&nested("a")), &ApplyOptions::default())
            .await;
        assert_eq!((created.action, created.status), (Action::Create, None));
        let updated = rt
            .apply(
                Some(&nested("a")),
                Some(&nested("b")),
                &ApplyOptions::default(),
            )
            .await;
        assert_eq!((updated.action, updated.status), (Action::Update, None));
        let mut leaf = &updated.resource.unwrap().attributes["spec"];
        while let Some(inner) = leaf.get("n") {
            leaf = inner;
        }
        assert_eq!(leaf["leaf"], "b");
    })
}

async fn namespace_from_the_context(kind: Kind) {
    let cluster = TestCluster::start().await;
    cluster.create_namespace("team-a").await;
    with_runtime!(kind, cluster, cluster.kube_cluster("team-a"), |rt| {
        let mut cm = resource(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ctx"}, "data": {"k": "v"}}),
        );
        cm.id = "v1:ConfigMap:ctx".into();
        let created = rt.apply(None, Some(&cm), &ApplyOptions::default()).await;
        assert_eq!(created.status, None);
        assert_eq!(
            created.resource.unwrap().attributes["metadata"]["namespace"],
            "team-a"
        );
        assert!(cluster.get_configmap("team-a", "ctx").await.is_some());
        assert!(cluster.get_configmap("default", "ctx").await.is_none());
    })
}

async fn discovery_is_cached_and_refreshed_on_a_miss(kind: Kind) {
    let cluster = TestCluster::start().await;
    let kc: Arc<KubeCluster> = cluster.kube_cluster("default");
    with_runtime!(kind, cluster, kc.clone(), |rt| {
        for i in 0..5 {
            let cm = resource(configmap(&format!("d{i}"), json!({"i": i.to_string()})));
            apply_ok(&rt, &cm).await;
        }
        assert_eq!(
            kc.discovery_fetches(),
            1,
            "one discovery for five ConfigMaps"
        );
        let gadget = resource(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g", "namespace": "default"}}));
        let missing = rt
            .apply(None, Some(&gadget), &ApplyOptions::default())
            .await;
        assert_eq!(
            missing.status.map(|s| s.code),
            Some(StatusCode::KindNotInstalled)
        );
        let after_miss = kc.discovery_fetches();
        assert!(after_miss >= 2, "a miss asks the server again");
        let crd = resource(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Gadget", "plural": "gadgets"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema":
                    {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
        );
        apply_ok(&rt, &crd).await;
        rt.watch(&crd, &watch_for(10_000)).await;
        let created = rt
            .apply(None, Some(&gadget), &ApplyOptions::default())
            .await;
        assert_eq!(
            created.status, None,
            "the CRD's kind is found after it was created"
        );
        let fetches = kc.discovery_fetches();
        let again = resource(configmap("d9", json!({})));
        apply_ok(&rt, &again).await;
        assert_eq!(
            kc.discovery_fetches(),
            fetches,
            "known kinds are not rediscovered"
        );
    })
}

async fn dropping_a_call_cancels_it(kind: Kind) {
    let cluster = TestCluster::start().await;
    with_runtime!(kind, cluster, cluster.kube_cluster("default"), |rt| {
        // A Deployment whose Pods never become ready keeps a watch waiting.
        let mut stuck = deployment("stuck", 1);
        stuck["spec"]["template"]["metadata"]["annotations"] =
            json!({"sim.krt.dev/fail": "image-pull"});
        let stuck = resource(stuck);
        apply_ok(&rt, &stuck).await;
        let started = tokio::time::Instant::now();
        let long = watch_for(60_000);
        let watch = rt.watch(&stuck, &long);
        let outcome = tokio::time::timeout(Duration::from_millis(500), watch).await;
        assert!(outcome.is_err(), "the watch is still waiting: {outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
        // The runtime is not poisoned: the next call succeeds at once.
        let cm = resource(configmap("after-cancel", json!({"k": "v"})));
        let next = tokio::time::timeout(
            Duration::from_secs(10),
            rt.apply(None, Some(&cm), &ApplyOptions::default()),
        )
        .await
        .expect("the next call is not blocked by the canceled one");
        assert_eq!(next.status, None);
    })
}

/// Polls `check` every 50 ms for up to 20 s.
async fn wait_until<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
