//! Cluster selection as kubectl does it, through the `krt` binary:
//! `KUBECONFIG` with several files merged, `--context`, `-n`, the context's
//! namespace, and clear errors for broken files.

use crate::support::{Run, TestCluster, assert_contains, krt_env, show, temp_dir};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kc-test}\ndata: {k: v}\n";

/// A kubeconfig with clusters `sim` (the simulator) and `dead` (nothing listens),
/// contexts `good` (namespace `team-a`) and `bad`, and the simulator's admin.
fn two_contexts(cluster: &TestCluster, current: &str) -> String {
    let (sim_url, admin) = (cluster.url(), cluster.admin_user());
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster: {{server: {sim_url}}}
- name: dead
  cluster: {{server: 'http://127.0.0.1:9'}}
contexts:
- name: good
  context: {{cluster: sim, user: me, namespace: team-a}}
- name: bad
  context: {{cluster: dead, user: me}}
current-context: {current}
users:
- name: me
  user: {admin}
"
    )
}

/// Asserts that `run` succeeded and applied [`CM`] to `namespace`, not to `elsewhere`.
async fn assert_applied_to(cluster: &TestCluster, run: &Run, namespace: &str, elsewhere: &str) {
    assert_eq!(run.code, 0, "{}", show(run));
    assert!(cluster.get_configmap(namespace, "kc-test").await.is_some());
    assert!(cluster.get_configmap(elsewhere, "kc-test").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_switch_and_the_contexts_namespace() {
    let cluster = TestCluster::start().await;
    cluster.create_namespace("team-a").await;
    let dir = temp_dir("contexts");
    let file = dir.path().join("config");
    std::fs::write(&file, two_contexts(&cluster, "bad")).unwrap();
    let path = file.to_str().unwrap();

    let unreachable = krt_env(
        dir.path(),
        &["apply", "-f", "-"],
        &[("KUBECONFIG", path)],
        Some(CM),
    )
    .await;
    assert_eq!(unreachable.code, 1, "{}", unreachable.stdout);
    assert!(
        unreachable.stderr.contains("127.0.0.1:9"),
        "names the server:\n{}",
        unreachable.stderr
    );

    let good = krt_env(
        dir.path(),
        &["--context", "good", "apply", "-f", "-"],
        &[("KUBECONFIG", path)],
        Some(CM),
    )
    .await;
    assert_applied_to(&cluster, &good, "team-a", "default").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_flag_overrides_the_context() {
    let cluster = TestCluster::start().await;
    cluster.create_namespace("team-a").await;
    cluster.create_namespace("team-b").await;
    let dir = temp_dir("nsflag");
    let file = dir.path().join("config");
    std::fs::write(&file, two_contexts(&cluster, "good")).unwrap();
    let run = krt_env(
        dir.path(),
        &[
            "--kubeconfig",
            file.to_str().unwrap(),
            "-n",
            "team-b",
            "apply",
            "-f",
            "-",
        ],
        &[],
        Some(CM),
    )
    .await;
    assert_applied_to(&cluster, &run, "team-b", "team-a").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_kubeconfig_files_are_merged() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("merged");
    let clusters = dir.path().join("clusters");
    let contexts = dir.path().join("contexts");
    std::fs::write(
        &clusters,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster: {{server: {}}}\nusers:\n- name: me\n  user: {}\n",
            cluster.url(),
            cluster.admin_user()
        ),
    )
    .unwrap();
    std::fs::write(
        &contexts,
        "apiVersion: v1\nkind: Config\ncontexts:\n- name: merged\n  context: {cluster: sim, user: me}\ncurrent-context: merged\n",
    )
    .unwrap();
    let joined = format!("{}:{}", contexts.display(), clusters.display());
    let run = krt_env(
        dir.path(),
        &["apply", "-f", "-"],
        &[("KUBECONFIG", &joined)],
        Some(CM),
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert_contains(&run.stderr, "using cluster");
    assert!(cluster.get_configmap("default", "kc-test").await.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_kubeconfig_is_named_and_nothing_else_happens() {
    let dir = temp_dir("broken");
    let file = dir.path().join("config");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Config\nclusters: [this is: not valid\n",
    )
    .unwrap();
    let run = krt_env(
        dir.path(),
        &["apply", "-f", "-"],
        &[("KUBECONFIG", file.to_str().unwrap())],
        Some(CM),
    )
    .await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(file.to_str().unwrap()),
        "names the file:\n{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("embedded cluster"),
        "never falls back to the simulator:\n{}",
        run.stderr
    );
}
