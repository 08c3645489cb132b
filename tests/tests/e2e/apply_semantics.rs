//! Apply semantics across the wasm boundary against the simulator (issue 4, "Done when"):
//! SSA conflicts per field and `force`, client-side three-way merges that keep foreign
//! fields, dry runs that fail validation, immutable fields and replacement, and kubectl
//! interoperation through the last-applied annotation.

use crate::support::{
    Runtimes, TestCluster, apply_ok, assert_contains, client_side, configmap, resource,
};
use krt_guest::normalize::LAST_APPLIED_ANNOTATION as LAST_APPLIED;
use krt_host::Runtime;
use krt_host::model::{Action, ApplyMode, ApplyOptions, StatusCode, StatusKind};
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

fn deployment(name: &str, app: &str, labels: Value, containers: Value) -> Value {
    krt_testkit::deployment(name)
        .namespace("default")
        .labels(labels)
        .set("/spec/selector/matchLabels", json!({"app": app}))
        .set("/spec/template/metadata/labels", json!({"app": app}))
        .containers(containers)
        .value()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssa_conflict_with_another_manager_is_reported_per_field_and_resolved_with_force() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let v1 = resource(configmap(
        "shared",
        json!({"a": "1", "b": "1", "mine": "x"}),
    ));
    let created = rt.apply(None, Some(&v1), &ApplyOptions::default()).await;
    assert_eq!(created.status, None);
    assert_eq!(created.action, Action::Create);

    // Another manager takes `a` and `b` by force.
    cluster
        .api("v1", "ConfigMap", "configmaps", Some("default"))
        .patch(
            "shared",
            &PatchParams::apply("team-b").force(),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "shared"}, "data": {"a": "2", "b": "2"}})),
        )
        .await
        .expect("the other manager applies");

    let v2 = resource(configmap(
        "shared",
        json!({"a": "3", "b": "3", "mine": "x"}),
    ));
    let conflict = rt
        .apply(Some(&v1), Some(&v2), &ApplyOptions::default())
        .await;
    let status = conflict.status.expect("a field conflict");
    assert_eq!(status.kind, StatusKind::Error);
    assert_eq!(status.code, StatusCode::FieldConflict, "{status:?}");
    let mut fields: Vec<&str> = status.causes.iter().map(|c| c.field.as_str()).collect();
    fields.sort_unstable();
    assert_eq!(fields, [".data.a", ".data.b"], "{status:?}");
    for cause in &status.causes {
        assert!(cause.message.contains("team-b"), "{cause:?}");
    }
    assert_contains(&status.message, "team-b");
    let live = cluster.get_configmap("default", "shared").await.unwrap();
    assert_eq!(live["data"]["a"], "2", "nothing written on conflict");

    let forced = rt
        .apply(
            Some(&v1),
            Some(&v2),
            &ApplyOptions {
                force: true,
                ..ApplyOptions::default()
            },
        )
        .await;
    assert_eq!(forced.action, Action::Update);
    // M10: the values team-b set were overwritten; say so, field by field.
    let warning = forced.status.expect("a drift warning");
    assert_eq!(warning.kind, StatusKind::Warning, "{warning:?}");
    let fields: Vec<&str> = warning.causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, ["data.a", "data.b"], "{warning:?}");
    assert_contains(&warning.message, "overwritten");
    let live = cluster.get_configmap("default", "shared").await.unwrap();
    assert_eq!(live["data"], json!({"a": "3", "b": "3", "mine": "x"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_three_way_keeps_a_foreign_label_and_container_and_removes_ours() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let v1 = resource(deployment(
        "merge",
        "merge",
        json!({"ours": "yes", "team": "a"}),
        json!([{"name": "app", "image": "nginx:1"}, {"name": "ours-sidecar", "image": "busybox"}]),
    ));
    let created = rt.apply(None, Some(&v1), &client_side()).await;
    assert_eq!(created.status, None);
    assert_eq!(created.action, Action::Create);

    // Someone else adds a label and a sidecar with a strategic merge patch.
    cluster
        .api("apps/v1", "Deployment", "deployments", Some("default"))
        .patch(
            "merge",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"foreign": "kept"}},
                "spec": {"template": {"spec": {"containers": [
                    {"name": "foreign-sidecar", "image": "envoy"}]}}}})),
        )
        .await
        .expect("foreign writer patches");

    let v2 = resource(deployment(
        "merge",
        "merge",
        json!({"team": "a"}),
        json!([{"name": "app", "image": "nginx:2"}]),
    ));
    let updated = rt.apply(Some(&v1), Some(&v2), &client_side()).await;
    assert_eq!(updated.status, None);
    assert_eq!(updated.action, Action::Update);
    let live = cluster.get_deployment("default", "merge").await.unwrap();
    let labels = &live["metadata"]["labels"];
    assert_eq!(labels["foreign"], "kept", "{labels}");
    assert_eq!(labels["team"], "a", "{labels}");
    assert!(
        labels.get("ours").is_none(),
        "our dropped label is removed: {labels}"
    );
    let containers: Vec<(&str, &str)> = live["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["image"].as_str().unwrap()))
        .collect();
    assert!(containers.contains(&("app", "nginx:2")), "{containers:?}");
    assert!(
        containers.contains(&("foreign-sidecar", "envoy")),
        "{containers:?}"
    );
    assert!(
        !containers.iter().any(|(name, _)| *name == "ours-sidecar"),
        "{containers:?}"
    );
    assert_eq!(containers.len(), 2, "{containers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_that_fails_validation_reports_the_error_and_writes_nothing() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    // The selector does not match the template's labels.
    let mut bad = deployment(
        "invalid",
        "a",
        json!({}),
        json!([{"name": "c", "image": "x"}]),
    );
    bad["spec"]["template"]["metadata"]["labels"] = json!({"app": "b"});
    let bad = resource(bad);
    for mode in [ApplyMode::ServerSide, ApplyMode::ClientSideThreeWay] {
        let preview = rt
            .apply(
                None,
                Some(&bad),
                &ApplyOptions {
                    dry_run: true,
                    mode,
                    ..ApplyOptions::default()
                },
            )
            .await;
        let status = preview.status.expect("a validation error");
        assert_eq!(status.kind, StatusKind::Error);
        assert_eq!(status.code, StatusCode::Invalid, "{mode:?}: {status:?}");
        // Like kube-apiserver, the cause names the template's labels.
        assert_eq!(status.causes.len(), 1, "{status:?}");
        assert_eq!(status.causes[0].field, "spec.template.metadata.labels");
        assert!(status.causes[0].message.contains("selector"), "{status:?}");
        assert!(
            status.message.contains("spec.template.metadata.labels")
                && status.message.contains("selector"),
            "{}",
            status.message
        );
        assert!(preview.resource.is_none(), "no prediction on failure");
    }
    assert!(cluster.get_deployment("default", "invalid").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immutable_selector_change_is_reported_and_replaced_on_request() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let containers = json!([{"name": "c", "image": "nginx"}]);
    let v1 = resource(deployment("sel", "one", json!({}), containers.clone()));
    apply_ok(&rt, &v1).await;
    let old_uid =
        cluster.get_deployment("default", "sel").await.unwrap()["metadata"]["uid"].clone();

    let v2 = resource(deployment("sel", "two", json!({}), containers));
    for mode in [ApplyMode::ServerSide, ApplyMode::ClientSideThreeWay] {
        let refused = rt
            .apply(
                Some(&v1),
                Some(&v2),
                &ApplyOptions {
                    mode,
                    ..ApplyOptions::default()
                },
            )
            .await;
        let status = refused.status.expect("immutable-field");
        assert_eq!(
            status.code,
            StatusCode::ImmutableField,
            "{mode:?}: {status:?}"
        );
        assert!(
            status
                .causes
                .iter()
                .any(|c| c.field.contains("spec.selector")),
            "{status:?}"
        );
        assert_contains(&status.message, "spec.selector");
    }
    let live = cluster.get_deployment("default", "sel").await.unwrap();
    assert_eq!(live["metadata"]["uid"], old_uid, "nothing replaced yet");

    let replaced = rt
        .apply(
            Some(&v1),
            Some(&v2),
            &ApplyOptions {
                replace_on_immutable: true,
                ..ApplyOptions::default()
            },
        )
        .await;
    assert_eq!(replaced.status, None);
    assert_eq!(replaced.action, Action::Replace);
    let live = cluster.get_deployment("default", "sel").await.unwrap();
    assert_ne!(live["metadata"]["uid"], old_uid, "a new object");
    assert_eq!(live["spec"]["selector"]["matchLabels"]["app"], "two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_apply_interoperates_with_kubectl_through_last_applied() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let containers = json!([{"name": "c", "image": "nginx"}]);
    let v1 = resource(deployment(
        "interop",
        "interop",
        json!({"a": "1", "b": "2"}),
        containers.clone(),
    ));
    let created = rt.apply(None, Some(&v1), &client_side()).await;
    assert_eq!(created.status, None);
    let live = cluster.get_deployment("default", "interop").await.unwrap();
    let recorded: Value = serde_json::from_str(
        live["metadata"]["annotations"][LAST_APPLIED]
            .as_str()
            .expect("last-applied written like kubectl"),
    )
    .unwrap();
    assert_eq!(recorded["metadata"]["labels"], json!({"a": "1", "b": "2"}));
    assert!(
        recorded.pointer("/spec/strategy").is_none(),
        "the plan, not the server object"
    );
    assert!(recorded["metadata"].get("annotations").is_none());

    // Applying the same plan again with the server's (defaulted) object as prior,
    // or with no prior at all, makes no request.
    let server_object = resource(created.resource.unwrap().attributes);
    assert!(
        server_object.attributes.pointer("/spec/strategy").is_some(),
        "defaulted"
    );
    for prior in [Some(&server_object), None] {
        let again = rt.apply(prior, Some(&v1), &client_side()).await;
        assert_eq!(again.status, None);
        assert_eq!(
            again.action,
            Action::Unchanged,
            "prior {:?}",
            prior.is_some()
        );
    }
    // The controller keeps writing status (and resourceVersion) and records the revision
    // annotation, when it gets to it: compare what a write of ours would change.
    let ours = |object: &Value| {
        let mut object = object.clone();
        if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
            annotations.remove("deployment.kubernetes.io/revision");
        }
        object
    };
    let (live, after) = (
        ours(&live),
        ours(&cluster.get_deployment("default", "interop").await.unwrap()),
    );
    for pointer in [
        "/metadata/generation",
        "/metadata/annotations",
        "/metadata/labels",
    ] {
        assert_eq!(
            after.pointer(pointer),
            live.pointer(pointer),
            "no write was made: {pointer}"
        );
    }

    // Without a prior, the annotation is the original: a dropped label is removed,
    // a label someone else added is kept.
    cluster
        .api("apps/v1", "Deployment", "deployments", Some("default"))
        .patch(
            "interop",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"foreign": "f"}}})),
        )
        .await
        .unwrap();
    let v2 = resource(deployment(
        "interop",
        "interop",
        json!({"a": "1"}),
        containers,
    ));
    let updated = rt.apply(None, Some(&v2), &client_side()).await;
    assert_eq!(updated.status, None);
    assert_eq!(updated.action, Action::Update);
    let live = cluster.get_deployment("default", "interop").await.unwrap();
    assert_eq!(
        live["metadata"]["labels"],
        json!({"a": "1", "foreign": "f"})
    );
    let recorded: Value = serde_json::from_str(
        live["metadata"]["annotations"][LAST_APPLIED]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["metadata"]["labels"], json!({"a": "1"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equal_quantities_in_another_unit_are_unchanged() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let with_memory = |memory: &str, cpu: &str| {
        resource(deployment(
            "quant",
            "quant",
            json!({}),
            json!([{"name": "c", "image": "nginx",
                "resources": {"limits": {"memory": memory, "cpu": cpu}}}]),
        ))
    };
    let v1 = with_memory("1024Mi", "1");
    for mode in [ApplyMode::ServerSide, ApplyMode::ClientSideThreeWay] {
        let opts = ApplyOptions {
            mode,
            ..ApplyOptions::default()
        };
        let first = rt.apply(None, Some(&v1), &opts).await;
        match mode {
            ApplyMode::ServerSide => assert_eq!(first.status, None),
            // Created by the server-side pass: client-side apply records its
            // configuration, and says that nothing else changes.
            ApplyMode::ClientSideThreeWay => {
                assert_eq!(first.action, Action::Update);
                let note = first.status.expect("a note");
                assert_eq!(note.kind, StatusKind::Info);
                assert_eq!(note.reason, "LastAppliedOnly");
            }
        }
        let v2 = with_memory("1Gi", "1000m");
        let again = rt.apply(Some(&v1), Some(&v2), &opts).await;
        assert_eq!(again.status, None, "{mode:?}");
        assert_eq!(again.action, Action::Unchanged, "{mode:?}");
        let changed = rt
            .apply(Some(&v1), Some(&with_memory("2Gi", "1")), &opts)
            .await;
        assert_eq!(changed.status, None, "{mode:?}");
        assert_eq!(changed.action, Action::Update, "{mode:?}");
        assert_eq!(
            rt.apply(Some(&v1), Some(&v1), &opts).await.action,
            Action::Update,
            "{mode:?}: back to 1024Mi"
        );
    }
}
