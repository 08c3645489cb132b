//! Previews, drift and health come from the loaded component's `logic`
//! export: swapping the component swaps what the user sees. A component that
//! exports only `runtime` gets krt's built-in logic.

use crate::support::{Runtimes, TestCluster, assert_contains, guests, krt, resource};
use krt_host::model::HealthState;
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, Runtime};
use serde_json::json;

/// The marker `tests/logic-guest` puts at the top of every diff.
const MARK: &str = "# diff by the marked test component";

fn config(value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: shown, namespace: default}}\ndata: {{k: {value}}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_shows_the_loaded_components_diff() {
    let cluster = TestCluster::start().await;
    let marked = ["--component", guests::MARKED_LOGIC];
    let file = cluster.dir().join("cm.yaml");
    std::fs::write(&file, config("one")).unwrap();
    let file = file.to_str().unwrap();

    let builtin = krt(&cluster.kubeconfig, &["preview", "-f", file], None).await;
    assert_eq!(builtin.code, 0, "{}", builtin.stderr);
    assert_contains(&builtin.stdout, "+  k: one");
    assert!(!builtin.stdout.contains(MARK), "{}", builtin.stdout);

    let args = [&marked[..], &["apply", "-f", file, "--yes"]].concat();
    let swapped = krt(&cluster.kubeconfig, &args, None).await;
    assert_eq!(swapped.code, 0, "{}", swapped.stderr);
    assert_contains(&swapped.stdout, MARK);

    std::fs::write(cluster.dir().join("cm.yaml"), config("two")).unwrap();
    let args = [&marked[..], &["preview", "-f", file]].concat();
    let update = krt(&cluster.kubeconfig, &args, None).await;
    assert_eq!(update.code, 0, "{}", update.stderr);
    let (mark, change) = (
        update.stdout.find(MARK).expect("the marked diff is shown"),
        update
            .stdout
            .find("+  k: two")
            .expect("the change is shown"),
    );
    assert!(mark < change, "{}", update.stdout);

    let args = [&marked[..], &["read"]].concat();
    let read = krt(&cluster.kubeconfig, &args, None).await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_contains(&read.stdout, "# health: Current marked:");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_without_logic_gets_krts_built_in_logic() {
    let cluster = TestCluster::start().await;
    let options = EngineOptions {
        cache_dir: Some(krt_testkit::cache_dir()),
        ..EngineOptions::default()
    };
    let load = |path: &str| {
        let source = ComponentSource::File(path.into());
        let (cluster, options) = (cluster.kube_cluster("default"), options.clone());
        async move {
            ComponentRuntime::new(&source, cluster, &options)
                .await
                .unwrap()
        }
    };
    let bare = load(guests::SLEEPY).await;
    let marked = load(guests::MARKED_LOGIC).await;
    let builtin = cluster.runtime().await;
    assert!(!bare.exports_logic());
    assert!(marked.exports_logic() && builtin.exports_logic());

    let before = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "1"}});
    let after = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "2"}});
    let expected = builtin
        .diff(Some(&before), Some(&after), &[])
        .await
        .unwrap();
    assert_eq!(expected.changes.len(), 1);
    assert_eq!(
        bare.diff(Some(&before), Some(&after), &[]).await.unwrap(),
        expected,
        "the built-in diff stands in"
    );
    let theirs = marked.diff(Some(&before), Some(&after), &[]).await.unwrap();
    assert_eq!(theirs.changes, expected.changes);
    assert_eq!(theirs.unified, format!("{MARK}\n{}", expected.unified));

    let object = resource(krt_testkit::configmap("h").namespace("default")).attributes;
    let health = bare.health(&object).await.unwrap();
    assert_eq!(health.state, HealthState::Current);
    let marked_health = marked.health(&object).await.unwrap();
    assert_eq!(marked_health.message, format!("marked: {}", health.message));
    let drift = marked.drift(&after, Some(&before), &[]).await.unwrap();
    assert!(drift.unified.starts_with(MARK), "{}", drift.unified);
}
