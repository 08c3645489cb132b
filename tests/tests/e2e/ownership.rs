//! krt deletes only what it owns: a state is bound to its cluster, every
//! object krt writes carries its stack's `krt.dev/stack` label, the state
//! records each object's UID, and a prune or destroy leaves alone an object
//! without the label, with another stack's, or with another UID.

use crate::support::{Run, TestCluster, krt_at, krt_in, local_state, show, state_ids, temp_dir};
use serde_json::{Value, json};
use std::path::Path;

/// Runs `krt --kubeconfig K ARGS` in `dir`.
async fn krt(dir: &Path, cluster: &TestCluster, args: &[&str]) -> Run {
    krt_at(dir, &cluster.kubeconfig, args, None).await
}

/// A ConfigMap manifest `default/<name>`.
fn configmap(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: \"{name}\", namespace: default}}\ndata: {{v: \"{value}\"}}\n---\n"
    )
}

/// Writes `text` to `dir/<file>` and returns its path.
fn input(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The live ConfigMap `default/<name>`, read directly.
async fn live(cluster: &TestCluster, name: &str) -> Option<Value> {
    cluster.get_configmap("default", name).await
}

/// Creates ConfigMap `default/<name>` directly, as another user would, with `labels`.
async fn someone_creates(cluster: &TestCluster, name: &str, labels: Value) {
    cluster
        .create(
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "namespace": "default", "labels": labels},
                   "data": {"owner": "someone else"}}),
        )
        .await;
}

/// Deletes ConfigMap `default/<name>` directly.
async fn someone_deletes(cluster: &TestCluster, name: &str) {
    cluster
        .api("v1", "ConfigMap", "configmaps", Some("default"))
        .delete(name, &Default::default())
        .await
        .expect("deleted directly");
}

/// The writes the simulator answered (creates, updates, patches that are no
/// dry run, deletes).
fn writes(cluster: &TestCluster) -> u64 {
    let r = cluster.requests();
    ["POST", "PUT", "PATCH", "DELETE"]
        .iter()
        .map(|v| r.verb(v))
        .sum()
}

/// The `-o json` report's resource `id`.
fn reported(run: &Run, id: &str) -> Value {
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(run)));
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not reported: {}", show(run)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_from_another_cluster_prunes_nothing_there() {
    let dir = temp_dir("ownership-clusters");
    let a = input(dir.path(), "a.yaml", &configmap("precious", "mine"));
    let b = input(dir.path(), "b.yaml", &configmap("other", "mine"));

    // The embedded cluster keeps its identity across runs: the state is its.
    let sim = ["--cluster", "sim", "--sim-state", ".krt/sim.json"];
    let first = krt_in(dir.path(), &[&sim[..], &["apply", "-f", &a]].concat(), None).await;
    assert_eq!(first.code, 0, "{}", show(&first));
    let recorded = local_state(dir.path(), "default");
    assert_eq!(recorded["version"], 2);
    let sim_uid = recorded["cluster"]["kubeSystemUid"]
        .as_str()
        .unwrap()
        .to_owned();
    let again = krt_in(dir.path(), &[&sim[..], &["apply", "-f", &a]].concat(), None).await;
    assert_eq!(again.code, 0, "{}", show(&again));
    assert!(
        again.stdout.contains("Nothing to change."),
        "{}",
        show(&again)
    );

    // Another cluster, where someone else has their own `default/precious`.
    let real = TestCluster::start().await;
    someone_creates(&real, "precious", json!({})).await;
    real.reset_requests();
    let refused = krt(dir.path(), &real, &["apply", "-f", &b, "--yes"]).await;
    assert_eq!(refused.code, 1, "{}", show(&refused));
    for said in [
        "describes another cluster",
        &format!("kube-system UID {sim_uid}"),
        real.url(),
        "--stack NAME",
        "--state-dir DIR",
        "krt state rebind default",
    ] {
        assert!(refused.stderr.contains(said), "{said}: {}", show(&refused));
    }
    assert_eq!(writes(&real), 0, "refused before any write");
    assert!(live(&real, "precious").await.is_some());
    assert!(live(&real, "other").await.is_none());
    let preview = krt(dir.path(), &real, &["preview", "-f", &b]).await;
    assert_eq!(preview.code, 1, "{}", show(&preview));
    assert!(
        preview.stderr.contains("describes another cluster"),
        "{}",
        show(&preview)
    );

    // Rebinding asks; with no terminal it needs --yes.
    let asked = krt(dir.path(), &real, &["state", "rebind"]).await;
    assert_eq!(asked.code, 1, "{}", show(&asked));
    assert!(asked.stderr.contains("pass --yes"), "{}", show(&asked));
    let rebound = krt(dir.path(), &real, &["state", "rebind", "--yes"]).await;
    assert_eq!(rebound.code, 0, "{}", show(&rebound));
    assert!(
        rebound
            .stdout
            .contains(&format!("(it described {}", "http://")),
        "{}",
        show(&rebound)
    );
    let bound = local_state(dir.path(), "default");
    assert_ne!(bound["cluster"]["kubeSystemUid"], sim_uid.as_str());
    assert!(
        bound.get("uids").is_none(),
        "the other cluster's UIDs are forgotten: {bound}"
    );

    // Now the apply runs here, and the other user's ConfigMap, which krt never
    // wrote, is left alone: not ours, forgotten by the state, exit 4.
    let applied = krt(
        dir.path(),
        &real,
        &["-o", "json", "apply", "-f", &b, "--yes"],
    )
    .await;
    assert_eq!(applied.code, 4, "{}", show(&applied));
    let left = reported(&applied, "v1:ConfigMap:default:precious");
    assert_eq!(left["result"], "not-ours", "{left}");
    assert_eq!(left["error"]["reason"], "NotOurs");
    assert!(
        left["error"]["message"]
            .as_str()
            .unwrap()
            .contains("it has no krt.dev/stack label"),
        "{left}"
    );
    assert_eq!(
        reported(&applied, "v1:ConfigMap:default:other")["result"],
        "created"
    );
    let theirs = live(&real, "precious")
        .await
        .expect("their ConfigMap survives");
    assert_eq!(theirs["data"]["owner"], "someone else");
    assert_eq!(
        state_ids(dir.path(), "default"),
        ["v1:ConfigMap:default:other"]
    );
    let ours = live(&real, "other").await.unwrap();
    assert_eq!(ours["metadata"]["labels"]["krt.dev/stack"], "default");
    assert_eq!(
        local_state(dir.path(), "default")["uids"]["v1:ConfigMap:default:other"],
        ours["metadata"]["uid"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_leaves_alone_an_object_someone_replaced() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("ownership-replaced");
    let file = input(
        dir.path(),
        "stack.yaml",
        &[
            configmap("x", "1"),
            configmap("y", "1"),
            configmap("z", "1"),
        ]
        .concat(),
    );
    let apply = krt(dir.path(), &cluster, &["apply", "-f", &file, "--yes"]).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));

    // Someone deletes x and y and creates their own, y even with krt's label;
    // z is gone.
    for name in ["x", "y", "z"] {
        someone_deletes(&cluster, name).await;
    }
    someone_creates(&cluster, "x", json!({})).await;
    someone_creates(&cluster, "y", json!({"krt.dev/stack": "default"})).await;

    let preview = krt(dir.path(), &cluster, &["destroy", "--yes", "--wait=false"]).await;
    assert_eq!(preview.code, 4, "{}", show(&preview));
    for line in [
        "! not ours  v1:ConfigMap:default:x",
        "left alone: it has no krt.dev/stack label",
        "! not ours  v1:ConfigMap:default:y",
        "it is another object than the one this stack wrote",
        "= absent    v1:ConfigMap:default:z",
        "Plan: 0 to delete, 2 not ours (left alone), 1 already gone.",
    ] {
        assert!(preview.stdout.contains(line), "{line}: {}", show(&preview));
    }
    assert!(
        preview
            .stderr
            .contains("not ours: v1:ConfigMap:default:x was not deleted"),
        "{}",
        show(&preview)
    );
    for name in ["x", "y"] {
        let theirs = live(&cluster, name).await.expect("theirs survives");
        assert_eq!(theirs["data"]["owner"], "someone else");
    }
    assert!(state_ids(dir.path(), "default").is_empty(), "all forgotten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prune_reports_an_object_already_gone_as_absent_and_force_deletes_the_unowned() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("ownership-prune");
    let both = input(
        dir.path(),
        "stack.yaml",
        &[
            configmap("keep", "1"),
            configmap("gone", "1"),
            configmap("moved", "1"),
        ]
        .concat(),
    );
    let apply = krt(dir.path(), &cluster, &["apply", "-f", &both, "--yes"]).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    someone_deletes(&cluster, "gone").await;
    // Another stack takes `moved` over (its label says so).
    cluster
        .api("v1", "ConfigMap", "configmaps", Some("default"))
        .patch(
            "moved",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"krt.dev/stack": "team-b"}}})),
        )
        .await
        .unwrap();
    let one = input(dir.path(), "stack.yaml", &configmap("keep", "1"));

    let preview = krt(dir.path(), &cluster, &["preview", "-f", &one]).await;
    assert_eq!(preview.code, 0, "{}", show(&preview));
    for line in [
        "= absent    v1:ConfigMap:default:gone",
        "! not ours  v1:ConfigMap:default:moved",
        "its krt.dev/stack label names another stack: \"team-b\"",
        "(--force-delete-unowned would delete it)",
        "0 to delete, 1 unchanged, 1 not ours (left alone), 1 already gone.",
    ] {
        assert!(preview.stdout.contains(line), "{line}: {}", show(&preview));
    }
    let forced = krt(
        dir.path(),
        &cluster,
        &["preview", "-f", &one, "--force-delete-unowned"],
    )
    .await;
    assert!(
        forced
            .stdout
            .contains("deleted because of --force-delete-unowned")
            && forced.stdout.contains("1 to delete"),
        "{}",
        show(&forced)
    );

    cluster.reset_requests();
    let pruned = krt(
        dir.path(),
        &cluster,
        &[
            "-o",
            "json",
            "apply",
            "-f",
            &one,
            "--yes",
            "--force-delete-unowned",
        ],
    )
    .await;
    assert_eq!(pruned.code, 0, "{}", show(&pruned));
    assert_eq!(
        reported(&pruned, "v1:ConfigMap:default:gone")["result"],
        "absent"
    );
    assert_eq!(
        reported(&pruned, "v1:ConfigMap:default:moved")["result"],
        "deleted"
    );
    assert!(live(&cluster, "moved").await.is_none());
    assert_eq!(
        cluster
            .requests()
            .count("DELETE", "/api/v1/namespaces/default/configmaps/gone"),
        0,
        "nothing to delete: no DELETE"
    );
    assert_eq!(
        state_ids(dir.path(), "default"),
        ["v1:ConfigMap:default:keep"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_from_before_ownership_gets_marks_uids_and_its_cluster_and_deletes_nothing() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("ownership-migration");
    // What an older krt left: objects without the label, a version 1 state
    // with neither UIDs nor a cluster.
    someone_creates(&cluster, "old-a", json!({})).await;
    someone_creates(&cluster, "old-b", json!({})).await;
    let record = |name: &str| {
        json!({"id": format!("v1:ConfigMap:default:{name}"), "type": "Kubernetes",
               "attributes": {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": name, "namespace": "default"},
                              "data": {"owner": "someone else"}}})
    };
    std::fs::create_dir_all(dir.path().join(".krt/state")).unwrap();
    let v1 = json!({"version": 1, "stack": "default", "serial": 3,
                    "updatedAt": "2026-11-30T10:00:00Z",
                    "resources": [record("old-a"), record("old-b")]});
    std::fs::write(dir.path().join(".krt/state/default.json"), v1.to_string()).unwrap();

    // old-a stays in the input and takes the mark; old-b left it, but was
    // never marked, so it is not deleted on the way.
    let file = input(
        dir.path(),
        "stack.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old-a, namespace: default}\ndata: {owner: someone else}\n",
    );
    let apply = krt(dir.path(), &cluster, &["apply", "-f", &file, "--yes"]).await;
    assert_eq!(apply.code, 4, "{}", show(&apply));
    assert!(
        apply
            .stdout
            .contains("~ update    v1:ConfigMap:default:old-a"),
        "{}",
        show(&apply)
    );
    assert!(
        apply.stdout.contains("+    krt.dev/stack: default"),
        "{}",
        show(&apply)
    );
    assert!(
        apply
            .stdout
            .contains("! not ours  v1:ConfigMap:default:old-b"),
        "{}",
        show(&apply)
    );
    assert!(live(&cluster, "old-b").await.is_some(), "nothing deleted");
    let marked = live(&cluster, "old-a").await.unwrap();
    assert_eq!(marked["metadata"]["labels"]["krt.dev/stack"], "default");
    let migrated = local_state(dir.path(), "default");
    assert_eq!(migrated["version"], 2);
    assert!(
        migrated["cluster"]["kubeSystemUid"].is_string(),
        "{migrated}"
    );
    assert_eq!(
        migrated["uids"]["v1:ConfigMap:default:old-a"],
        marked["metadata"]["uid"]
    );
    assert_eq!(
        state_ids(dir.path(), "default"),
        ["v1:ConfigMap:default:old-a"]
    );

    // From now on it is the stack's like any other: a re-apply writes nothing,
    // a destroy deletes it.
    cluster.reset_requests();
    let again = krt(dir.path(), &cluster, &["apply", "-f", &file, "--yes"]).await;
    assert_eq!(again.code, 0, "{}", show(&again));
    assert_eq!(writes(&cluster), 0, "{:?}", cluster.requests());
    let destroy = krt(dir.path(), &cluster, &["destroy", "--yes"]).await;
    assert_eq!(destroy.code, 0, "{}", show(&destroy));
    assert!(live(&cluster, "old-a").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_secret_copied_to_another_cluster_is_refused() {
    let origin = TestCluster::start().await;
    let dir = temp_dir("ownership-secret");
    let file = input(dir.path(), "stack.yaml", &configmap("a", "1"));
    let args = ["--state", "kubernetes", "--stack", "web"];
    let apply = krt(
        dir.path(),
        &origin,
        &[&args[..], &["apply", "-f", &file, "--yes"]].concat(),
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    let mut secret = origin
        .get("v1", "Secret", "secrets", Some("default"), "krt-state-web")
        .await
        .expect("the state Secret");
    let metadata = secret["metadata"].as_object_mut().unwrap();
    metadata.retain(|k, _| matches!(k.as_str(), "name" | "namespace" | "labels"));

    let copy =
        TestCluster::simulated(Default::default(), "a second cluster beside the first").await;
    copy.create("secrets", secret).await;
    someone_creates(&copy, "a", json!({"krt.dev/stack": "web"})).await;
    let destroy = krt(
        dir.path(),
        &copy,
        &[&args[..], &["destroy", "--yes"]].concat(),
    )
    .await;
    assert_eq!(destroy.code, 1, "{}", show(&destroy));
    assert!(
        destroy.stderr.contains("describes another cluster"),
        "{}",
        show(&destroy)
    );
    assert!(live(&copy, "a").await.is_some());
}
