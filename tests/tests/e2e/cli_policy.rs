//! The capability policy through the `krt` binary: the default policy (the
//! spec's namespaces and kinds), `--read-only`, and a policy file. Denied calls
//! never reach the cluster.

use crate::support::{TestCluster, krt, show};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guarded, namespace: default}\ndata: {k: v}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_lets_the_preview_run_and_refuses_the_write() {
    let cluster = TestCluster::start().await;
    let run = krt(
        &cluster.kubeconfig,
        &["apply", "--read-only", "--yes", "-f", "-"],
        Some(CM),
    )
    .await;
    assert_eq!(run.code, 1, "{}", show(&run));
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(
        output.contains("+ create"),
        "the dry-run preview is allowed:\n{output}"
    );
    assert!(output.contains("read-only"), "the rule is named:\n{output}");
    assert!(
        output.contains("--read-only"),
        "the fix is named:\n{output}"
    );
    assert!(cluster.get_configmap("default", "guarded").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_file_outside_the_specs_namespace_is_refused_with_the_flag_to_allow_it() {
    let cluster = TestCluster::start().await;
    let policy = cluster.kubeconfig.with_file_name("policy.yaml");
    std::fs::write(&policy, "namespaces: [team-a]\nkinds: [ConfigMap]\n").unwrap();
    let run = krt(
        &cluster.kubeconfig,
        &[
            "apply",
            "--yes",
            "--policy",
            policy.to_str().unwrap(),
            "-f",
            "-",
        ],
        Some(CM),
    )
    .await;
    assert_eq!(run.code, 1, "{}", show(&run));
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(output.contains("--allow-namespace default"), "{output}");
    assert!(cluster.get_configmap("default", "guarded").await.is_none());

    let widened = krt(
        &cluster.kubeconfig,
        &[
            "apply",
            "--yes",
            "--policy",
            policy.to_str().unwrap(),
            "--allow-namespace",
            "default",
            "-f",
            "-",
        ],
        Some(CM),
    )
    .await;
    assert_eq!(widened.code, 0, "{}", show(&widened));
    assert!(cluster.get_configmap("default", "guarded").await.is_some());
}
