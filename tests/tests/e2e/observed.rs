//! `observed-apply`: a write that starts from what a dry run saw reads
//! nothing, and is made against exactly that version; an object that changed
//! since, or appeared since, is read and merged rather than overwritten. The
//! same answers in the sandbox and natively, and behind middleware, which see
//! `runtime.apply` alone while the observation goes around them.

use crate::support::{
    Runtimes, TestCluster, client_side, configmap_requests, foreign_write, guests, resource, verbs,
};
use krt_host::model::{Action, ApplyOptions, Observation, Resource};
use krt_host::{ComponentRuntime, ComponentSource, Middleware, Runtime};
use serde_json::{Value, json};

fn configmap(name: &str, data: Value) -> Resource {
    resource(
        krt_testkit::configmap(name)
            .namespace("default")
            .data(data)
            .value(),
    )
}

fn dry_run() -> ApplyOptions {
    ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    }
}

async fn live_data(cluster: &TestCluster, name: &str) -> Value {
    cluster
        .get_configmap("default", name)
        .await
        .expect("the ConfigMap exists")["data"]
        .clone()
}

/// The component runtime and the native one over `cluster`, by name.
async fn both(cluster: &TestCluster) -> (ComponentRuntime, krt_host::NativeRuntime) {
    let kc = cluster.kube_cluster("default");
    (cluster.runtime_in(kc.clone()).await, cluster.native_in(kc))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_from_a_dry_runs_observation_reads_nothing_unless_the_object_changed_since() {
    let cluster = TestCluster::start().await;
    let (component, native) = both(&cluster).await;
    seen_then_written(&cluster, &component, "in-sandbox").await;
    seen_then_written(&cluster, &native, "native").await;
}

async fn seen_then_written<R: Runtime>(cluster: &TestCluster, rt: &R, name: &str) {
    let real = ApplyOptions::default();
    let v1 = configmap(name, json!({"a": "1"}));
    let created = rt.apply(None, Some(&v1), &real).await;
    assert_eq!(created.status, None, "{name}: {created:?}");

    // Unchanged since the dry run: the write alone, no read, no second dry run.
    let v2 = configmap(name, json!({"a": "2"}));
    let preview = rt
        .apply_observed(Some(&v1), Some(&v2), None, &dry_run())
        .await;
    assert_eq!(
        preview.response.action,
        Action::Update,
        "{name}: {preview:?}"
    );
    let seen = preview.observation.expect("the dry run says what it saw");
    assert!(matches!(seen, Observation::Seen(_)), "{name}: {seen:?}");
    cluster.reset_requests();
    let write = rt
        .apply_observed(Some(&v1), Some(&v2), Some(&seen), &real)
        .await;
    assert_eq!(write.response.status, None, "{name}: {write:?}");
    assert_eq!(
        (write.response.action, write.response.retries),
        (Action::Update, 0)
    );
    assert_eq!(
        write.response.live.as_ref().map(|l| &l["data"]),
        Some(&json!({"a": "1"})),
        "{name}: the object before the write is the one seen"
    );
    assert_eq!(
        configmap_requests(&cluster.requests(), "default", name),
        verbs(&[("PATCH", 1)]),
        "{name}"
    );
    assert_eq!(live_data(cluster, name).await, json!({"a": "2"}));

    // Changed by another manager after the dry run: the write against the
    // seen version is refused, the object read again, and the plan applied
    // to it, keeping the other manager's field.
    let v3 = configmap(name, json!({"a": "3"}));
    let preview = rt
        .apply_observed(Some(&v2), Some(&v3), None, &dry_run())
        .await;
    let seen = preview.observation.expect("the dry run says what it saw");
    foreign_write(cluster, name, "b", "theirs").await;
    cluster.reset_requests();
    let write = rt
        .apply_observed(Some(&v2), Some(&v3), Some(&seen), &real)
        .await;
    assert_eq!(write.response.status, None, "{name}: {write:?}");
    assert_eq!(
        (write.response.action, write.response.retries),
        (Action::Update, 1)
    );
    assert_eq!(
        configmap_requests(&cluster.requests(), "default", name),
        verbs(&[("GET", 1), ("PATCH", 2), ("PATCH dryRun", 1)]),
        "{name}: the refused write, the read, the dry run and the write"
    );
    assert_eq!(
        live_data(cluster, name).await,
        json!({"a": "3", "b": "theirs"})
    );
    let Some(Observation::Seen(last)) = write.observation else {
        panic!("{name}: the write says what it saw: {write:?}");
    };
    let last: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(last["data"], json!({"a": "2", "b": "theirs"}), "{name}");

    // An observation of another object, or one no runtime made (the plan
    // itself, with no resourceVersion; not JSON), is ignored: the call reads
    // first. (`absent` names no object: given for one that exists, it is
    // merged into: see the test of absent observations.)
    let other = configmap(&format!("{name}-other"), json!({"a": "1"}));
    let created = rt.apply(None, Some(&other), &real).await;
    assert_eq!(created.status, None, "{name}: {created:?}");
    let other_seen = rt
        .apply_observed(None, Some(&other), None, &dry_run())
        .await
        .observation
        .expect("the dry run says what it saw");
    assert!(
        matches!(other_seen, Observation::Seen(_)),
        "{name}: {other_seen:?}"
    );
    let v4 = configmap(name, json!({"a": "4"}));
    for wrong in [
        other_seen,
        Observation::Seen(serde_json::to_string(&v4.attributes).unwrap()),
        Observation::Seen("not JSON".into()),
    ] {
        cluster.reset_requests();
        let write = rt
            .apply_observed(Some(&v3), Some(&v4), Some(&wrong), &real)
            .await;
        assert_eq!(write.response.status, None, "{name}: {wrong:?}: {write:?}");
        let requests = configmap_requests(&cluster.requests(), "default", name);
        assert_eq!(
            requests.first(),
            Some(&("GET".to_owned(), 1)),
            "{name}: {wrong:?}"
        );
    }
    assert_eq!(live_data(cluster, name).await["a"], "4");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_from_an_absent_observation_reads_nothing_and_merges_into_an_object_that_appeared()
{
    let cluster = TestCluster::start().await;
    let (component, native) = both(&cluster).await;
    absent_then_created(&cluster, &component, "in-sandbox").await;
    absent_then_created(&cluster, &native, "native").await;
}

async fn absent_then_created<R: Runtime>(cluster: &TestCluster, rt: &R, name: &str) {
    let real = ApplyOptions::default();
    let client_side = client_side();
    for (how, options) in [("ssa", &real), ("csa", &client_side)] {
        // Absent, as a dry run found it: the create alone.
        let fresh = format!("{name}-{how}-fresh");
        let plan = configmap(&fresh, json!({"a": "1"}));
        let preview = rt.apply_observed(None, Some(&plan), None, &dry_run()).await;
        assert_eq!(
            preview.observation,
            Some(Observation::Absent),
            "{preview:?}"
        );
        cluster.reset_requests();
        let write = rt
            .apply_observed(None, Some(&plan), Some(&Observation::Absent), options)
            .await;
        assert_eq!(write.response.status, None, "{name} {how}: {write:?}");
        assert_eq!(write.response.action, Action::Create, "{name} {how}");
        let requests = cluster.requests();
        let (on_object, posts) = if how == "ssa" {
            (verbs(&[("PATCH", 1)]), 0)
        } else {
            (Vec::new(), 1)
        };
        assert_eq!(
            configmap_requests(&requests, "default", &fresh),
            on_object,
            "{name} {how}: no read"
        );
        assert_eq!(
            requests.count("POST", "/api/v1/namespaces/default/configmaps"),
            posts,
            "{name} {how}: a client-side create posts to the collection"
        );

        // Created by someone else since it was seen absent: merged into, and
        // reported as the update it is, the other writer's field kept.
        let raced = format!("{name}-{how}-raced");
        cluster
            .create(
                "configmaps",
                krt_testkit::configmap(&raced)
                    .namespace("default")
                    .data(json!({"x": "theirs"}))
                    .value(),
            )
            .await;
        let plan = configmap(&raced, json!({"a": "1"}));
        let write = rt
            .apply_observed(None, Some(&plan), Some(&Observation::Absent), options)
            .await;
        assert_eq!(write.response.status, None, "{name} {how}: {write:?}");
        assert_eq!(write.response.action, Action::Update, "{name} {how}");
        assert_eq!(
            live_data(cluster, &raced).await,
            json!({"a": "1", "x": "theirs"}),
            "{name} {how}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_middleware_the_observation_goes_around_them_and_they_still_see_every_write() {
    let cluster = TestCluster::start().await;
    let options = krt_host::EngineOptions {
        cache_dir: Some(krt_testkit::cache_dir()),
        ..krt_host::EngineOptions::default()
    };
    let link = |path: &str| Middleware::file(std::path::Path::new(path));
    let rt = ComponentRuntime::builder(ComponentSource::Default)
        .middleware(link(guests::PASSTHROUGH))
        .middleware(link(guests::TAGGER))
        .build(cluster.kube_cluster("default"), &options)
        .await
        .expect("the chain loads");
    let real = ApplyOptions::default();
    let team = async |cluster: &TestCluster| {
        cluster
            .get_configmap("default", "behind")
            .await
            .expect("the ConfigMap exists")["metadata"]["annotations"]["team"]
            .clone()
    };

    let v1 = configmap("behind", json!({"a": "1"}));
    let preview = rt.apply_observed(None, Some(&v1), None, &dry_run()).await;
    assert_eq!(preview.response.action, Action::Create, "{preview:?}");
    assert_eq!(preview.observation, Some(Observation::Absent));
    cluster.reset_requests();
    let write = rt
        .apply_observed(None, Some(&v1), preview.observation.as_ref(), &real)
        .await;
    assert_eq!(write.response.status, None, "{write:?}");
    assert_eq!(write.response.action, Action::Create);
    assert_eq!(
        configmap_requests(&cluster.requests(), "default", "behind"),
        verbs(&[("PATCH", 1)]),
        "no read"
    );
    assert_eq!(team(&cluster).await, "platform", "the tagger ran");

    let v2 = configmap("behind", json!({"a": "2"}));
    let preview = rt
        .apply_observed(Some(&v1), Some(&v2), None, &dry_run())
        .await;
    assert_eq!(preview.response.action, Action::Update, "{preview:?}");
    assert!(
        matches!(preview.observation, Some(Observation::Seen(_))),
        "{preview:?}"
    );
    cluster.reset_requests();
    let write = rt
        .apply_observed(Some(&v1), Some(&v2), preview.observation.as_ref(), &real)
        .await;
    assert_eq!(write.response.status, None, "{write:?}");
    assert_eq!(write.response.action, Action::Update);
    assert_eq!(
        configmap_requests(&cluster.requests(), "default", "behind"),
        verbs(&[("PATCH", 1)]),
        "no read, no second dry run"
    );
    assert_eq!(live_data(&cluster, "behind").await, json!({"a": "2"}));
    assert_eq!(team(&cluster).await, "platform", "the tagger ran again");
}
