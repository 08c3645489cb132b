//! The `krt` binary against a simulator.

use crate::support::{
    TestCluster, assert_contains, cache_dir, krt, krt_bin, krt_in, show, temp_dir, workspace,
};

/// The summary of applying the quickstart a second time: nothing changes.
const QUICKSTART_UNCHANGED: &str = "Applied: 0 created, 0 updated, 0 replaced, 0 deleted, 4 unchanged, 0 failed, 0 timed out, 0 skipped";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quickstart_applies_then_reports_unchanged() {
    let cluster = TestCluster::start().await;
    let file = workspace().join("examples/quickstart.yaml");
    let file = file.to_str().unwrap();

    let first = krt(&cluster.kubeconfig, &["apply", "-f", file], None).await;
    assert_eq!(first.code, 0, "{}", show(&first));
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
        .get_deployment("quickstart", "web")
        .await
        .expect("deployment exists");
    assert_eq!(live["spec"]["replicas"], 2);
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    let config_before = cluster
        .get_configmap("quickstart", "web-config")
        .await
        .expect("configmap exists");

    let second = krt(&cluster.kubeconfig, &["apply", "-f", file], None).await;
    assert_eq!(second.code, 0, "stderr:\n{}", second.stderr);
    assert_contains(&second.stdout, "Nothing to change.");
    assert_contains(&second.stdout, QUICKSTART_UNCHANGED);
    // Controllers keep writing the Deployment's status, so compare what only a
    // write of ours would change: the ConfigMap's resourceVersion and the
    // Deployment's generation.
    let config_after = cluster
        .get_configmap("quickstart", "web-config")
        .await
        .unwrap();
    assert_eq!(
        config_after["metadata"]["resourceVersion"], config_before["metadata"]["resourceVersion"],
        "an unchanged apply must not write"
    );
    let again = cluster.get_deployment("quickstart", "web").await.unwrap();
    assert_eq!(
        again["metadata"]["generation"],
        live["metadata"]["generation"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_yaml_fails_clearly_and_writes_nothing() {
    let cluster = TestCluster::start().await;
    let before = cluster
        .names("v1", "ConfigMap", "configmaps", Some("default"))
        .await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\napiVersion: v1\nkind: [broken\n";
    let run = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(run.code, 1, "{}", show(&run));
    assert_contains(&run.stderr, "error: '-' is not valid YAML");
    assert_contains(&run.stderr, "nothing was applied");
    assert_eq!(
        cluster
            .names("v1", "ConfigMap", "configmaps", Some("default"))
            .await,
        before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_documents_are_all_listed_and_nothing_is_written() {
    let cluster = TestCluster::start().await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok-one}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\nkind: Secret\nmetadata: {name: s}\n";
    let run = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(run.code, 1);
    assert_contains(&run.stderr, "document 2: missing metadata.name");
    assert_contains(&run.stderr, "document 3: missing apiVersion");
    assert!(cluster.get_configmap("default", "ok-one").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_delete_through_the_cli() {
    let cluster = TestCluster::start().await;
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli-cm, namespace: default}\ndata: {k: v}\n";
    let read_missing = krt(&cluster.kubeconfig, &["read", "-f", "-"], Some(input)).await;
    assert_eq!(read_missing.code, 0, "{}", read_missing.stderr);
    assert_contains(&read_missing.stdout, "# not found");

    let apply = krt(&cluster.kubeconfig, &["apply", "-f", "-"], Some(input)).await;
    assert_eq!(apply.code, 0, "{}", apply.stderr);
    let read = krt(&cluster.kubeconfig, &["read", "-f", "-"], Some(input)).await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_contains(&read.stdout, "k: v");
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
    assert!(cluster.get_configmap("default", "cli-cm").await.is_none());
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
    assert_eq!(first.code, 0, "{}", show(&first));
    assert_contains(&first.stderr, "using the embedded cluster krt-sim");
    assert_contains(&first.stdout, "Applied: 4 created");
    assert!(dir.path().join(".krt/sim-state.json").exists());

    let second = krt_in(dir.path(), &args, None).await;
    assert_eq!(second.code, 0, "stderr:\n{}", second.stderr);
    assert_contains(&second.stdout, QUICKSTART_UNCHANGED);
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
    let sim = |verb: &'static str| {
        let dir = dir.path().to_owned();
        async move { krt_in(&dir, &["--cluster", "sim", verb, "-f", "-"], Some(RBAC_APP)).await }
    };
    let preview = sim("preview").await;
    assert_eq!(preview.code, 0, "{}", show(&preview));
    for id in ids {
        assert!(
            preview.stdout.contains(&format!("+ create    {id}")),
            "{id} previewed as a create:\n{}",
            preview.stdout
        );
    }
    let apply = sim("apply").await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert_contains(&apply.stdout, "Applied: 3 created, 0 updated");
    let read = sim("read").await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_contains(&read.stdout, "name: config-reader");
    assert!(!read.stdout.contains("# not found"), "{}", read.stdout);
    let again = sim("apply").await;
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_contains(
        &again.stdout,
        "0 created, 0 updated, 0 replaced, 0 deleted, 3 unchanged",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secrets_create_preview_masks_its_values() {
    let cluster = TestCluster::start().await;
    let input = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\nstringData: {password: hunter2}\n";
    let run = krt(&cluster.kubeconfig, &["preview", "-f", "-"], Some(input)).await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert_contains(&run.stdout, "+ create    v1:Secret:default:creds");
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

/// A process whose address space cannot hold 4 GiB for each memory of the
/// instance pool (here 64 GiB under `ulimit -v`; valgrind's is smaller) still
/// runs its components: their memories bounds-checked, with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limited_address_space_runs_components_bounds_checked() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("address-space");
    let file = dir.path().join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: limited\n  namespace: default\ndata:\n  k: v\n",
    )
    .unwrap();
    let out = tokio::process::Command::new("sh")
        .args(["-c", "ulimit -v 67108864 && exec \"$@\"", "sh"])
        .arg(krt_bin())
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .args(["apply", "--yes", "-f"])
        .arg(&file)
        .current_dir(dir.path())
        .env("XDG_CACHE_HOME", cache_dir())
        .env("HOME", dir.path())
        .env_remove("KUBECONFIG")
        .output()
        .await
        .expect("krt runs under sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_contains(
        &stderr,
        "cannot reserve 4096 MiB of address space for each of 128 instance memories; \
         reserving their limit instead, with a bounds check on every memory access",
    );
    let live = cluster.get_configmap("default", "limited").await;
    assert_eq!(live.expect("the ConfigMap was created")["data"]["k"], "v");
}
