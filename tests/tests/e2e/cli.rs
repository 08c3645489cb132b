//! The `krt` binary against a simulator.

use crate::support::{SimCluster, krt, krt_in, temp_dir, workspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quickstart_applies_then_reports_unchanged() {
    let cluster = SimCluster::start().await;
    let file = workspace().join("examples/quickstart.yaml");
    let file = file.to_str().unwrap();

    let first = krt(&cluster.kubeconfig, &["apply", "-f", file], None).await;
    assert_eq!(
        first.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        first.stdout, first.stderr
    );
    for id in [
        "v1:Namespace:quickstart",
        "v1:ConfigMap:quickstart:web-config",
        "apps/v1:Deployment:quickstart:web",
        "v1:Service:quickstart:web",
    ] {
        assert!(
            first
                .stdout
                .lines()
                .any(|l| l.contains("created") && l.ends_with(id)),
            "{id} not reported created:\n{}",
            first.stdout
        );
    }
    assert!(
        first
            .stdout
            .contains(
                "Applied: 4 created, 0 updated, 0 replaced, 0 deleted, 0 unchanged, 0 failed, 0 timed out, 0 skipped"
            ),
        "{}",
        first.stdout
    );
    assert!(
        first.stdout.contains("      +  GREETING: hello from krt\n"),
        "a create's preview shows the object it will create:\n{}",
        first.stdout
    );
    let live = cluster
        .get(
            "apps/v1",
            "Deployment",
            "deployments",
            Some("quickstart"),
            "web",
        )
        .await
        .expect("deployment exists");
    assert_eq!(live["spec"]["replicas"], 2);
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    let config_before = cluster
        .get(
            "v1",
            "ConfigMap",
            "configmaps",
            Some("quickstart"),
            "web-config",
        )
        .await
        .expect("configmap exists");

    let second = krt(&cluster.kubeconfig, &["apply", "-f", file], None).await;
    assert_eq!(second.code, 0, "stderr:\n{}", second.stderr);
    assert!(
        second.stdout.contains("Nothing to change."),
        "{}",
        second.stdout
    );
    assert!(
        second
            .stdout
            .contains(
                "Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 4 unchanged, 0 failed, 0 timed out, 0 skipped"
            ),
        "{}",
        second.stdout
    );
    // Controllers keep writing the Deployment's status, so compare what only a
    // write of ours would change: the ConfigMap's resourceVersion and the
    // Deployment's generation.
    let config_after = cluster
        .get(
            "v1",
            "ConfigMap",
            "configmaps",
            Some("quickstart"),
            "web-config",
        )
        .await
        .unwrap();
    assert_eq!(
        config_after["metadata"]["resourceVersion"], config_before["metadata"]["resourceVersion"],
        "an unchanged apply must not write"
    );
    let again = cluster
        .get(
            "apps/v1",
            "Deployment",
            "deployments",
            Some("quickstart"),
            "web",
        )
        .await
        .unwrap();
    assert_eq!(
        again["metadata"]["generation"],
        live["metadata"]["generation"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_yaml_fails_clearly_and_writes_nothing() {
    let cluster = SimCluster::start().await;
    let before = cluster
        .names("v1", "ConfigMap", "configmaps", Some("default"))
        .await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\napiVersion: v1\nkind: [broken\n";
    let run = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("error: '-' is not valid YAML"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was applied"), "{}", run.stderr);
    assert_eq!(
        cluster
            .names("v1", "ConfigMap", "configmaps", Some("default"))
            .await,
        before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_documents_are_all_listed_and_nothing_is_written() {
    let cluster = SimCluster::start().await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok-one}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\nkind: Secret\nmetadata: {name: s}\n";
    let run = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("document 2: missing metadata.name"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("document 3: missing apiVersion"),
        "{}",
        run.stderr
    );
    assert!(
        cluster
            .get("v1", "ConfigMap", "configmaps", Some("default"), "ok-one")
            .await
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_delete_through_the_cli() {
    let cluster = SimCluster::start().await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-cm, namespace: default}\ndata: {k: v}\n";
    let read_missing = krt(&cluster.kubeconfig, &["read", "-f", "-"], Some(input)).await;
    assert_eq!(read_missing.code, 0, "{}", read_missing.stderr);
    assert!(
        read_missing.stdout.contains("# not found"),
        "{}",
        read_missing.stdout
    );

    let apply = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(apply.code, 0, "{}", apply.stderr);
    let read = krt(&cluster.kubeconfig, &["read", "-f", "-"], Some(input)).await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(read.stdout.contains("k: v"), "{}", read.stdout);
    assert!(
        !read.stdout.contains("managedFields"),
        "read output is normalized:\n{}",
        read.stdout
    );

    let delete = krt(&cluster.kubeconfig, &["delete", "-f", "-"], Some(input)).await;
    assert_eq!(delete.code, 0, "{}", delete.stderr);
    assert!(
        delete
            .stdout
            .contains("deleted    v1:ConfigMap:default:cli-cm"),
        "{}",
        delete.stdout
    );
    assert!(
        cluster
            .get("v1", "ConfigMap", "configmaps", Some("default"), "cli-cm")
            .await
            .is_none()
    );
    let again = krt(&cluster.kubeconfig, &["delete", "-f", "-"], Some(input)).await;
    assert_eq!(
        again.code, 0,
        "deleting a missing object succeeds: {}",
        again.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_cluster_remembers_earlier_runs() {
    let dir = temp_dir("embedded");
    let file = workspace().join("examples/quickstart.yaml");
    let args = ["--cluster", "sim", "apply", "-f", file.to_str().unwrap()];

    let first = krt_in(dir.path(), &args, None).await;
    assert_eq!(
        first.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        first.stdout, first.stderr
    );
    assert!(
        first.stderr.contains("using the embedded cluster krt-sim"),
        "{}",
        first.stderr
    );
    assert!(
        first.stdout.contains("Applied: 4 created"),
        "{}",
        first.stdout
    );
    assert!(dir.path().join(".krt/sim-state.json").exists());

    let second = krt_in(dir.path(), &args, None).await;
    assert_eq!(second.code, 0, "stderr:\n{}", second.stderr);
    assert!(
        second
            .stdout
            .contains(
                "Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 4 unchanged, 0 failed, 0 timed out, 0 skipped"
            ),
        "{}",
        second.stdout
    );
}

/// An app with RBAC: a ServiceAccount, a Role and a RoleBinding that grants it the Role.
const RBAC_APP: &str = "apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: config-reader, namespace: default}
rules:
- apiGroups: [\"\"]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-reads-config, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: config-reader}
subjects:
- {kind: ServiceAccount, name: reader, namespace: default}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_with_rbac_previews_and_applies_on_the_embedded_cluster() {
    let dir = temp_dir("rbac");
    let ids = [
        "v1:ServiceAccount:default:reader",
        "rbac.authorization.k8s.io/v1:Role:default:config-reader",
        "rbac.authorization.k8s.io/v1:RoleBinding:default:reader-reads-config",
    ];
    let preview = krt_in(
        dir.path(),
        &["--cluster", "sim", "preview", "-f", "-"],
        Some(RBAC_APP),
    )
    .await;
    assert_eq!(preview.code, 0, "{}\n{}", preview.stdout, preview.stderr);
    for id in ids {
        assert!(
            preview.stdout.contains(&format!("+ create    {id}")),
            "{id} previewed as a create:\n{}",
            preview.stdout
        );
    }
    let apply = krt_in(
        dir.path(),
        &["--cluster", "sim", "apply", "-f", "-"],
        Some(RBAC_APP),
    )
    .await;
    assert_eq!(apply.code, 0, "{}\n{}", apply.stdout, apply.stderr);
    assert!(
        apply.stdout.contains("Applied: 3 created, 0 updated"),
        "{}",
        apply.stdout
    );
    let read = krt_in(
        dir.path(),
        &["--cluster", "sim", "read", "-f", "-"],
        Some(RBAC_APP),
    )
    .await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(
        read.stdout.contains("name: config-reader"),
        "{}",
        read.stdout
    );
    assert!(!read.stdout.contains("# not found"), "{}", read.stdout);
    let again = krt_in(
        dir.path(),
        &["--cluster", "sim", "apply", "-f", "-"],
        Some(RBAC_APP),
    )
    .await;
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains("0 created, 0 updated, 0 replaced, 0 deleted, 3 unchanged"),
        "{}",
        again.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secrets_create_preview_masks_its_values() {
    let cluster = SimCluster::start().await;
    let input = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\nstringData: {password: hunter2}\n";
    let run = krt(&cluster.kubeconfig, &["preview", "-f", "-"], Some(input)).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("+ create    v1:Secret:default:creds"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("***"),
        "the value is masked:\n{}",
        run.stdout
    );
    assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
    assert!(
        !run.stdout.contains("aHVudGVyMg"),
        "no base64 of the value either:\n{}",
        run.stdout
    );
}
