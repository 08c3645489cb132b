//! `krt --as USER --as-group GROUP`, as kubectl's flags: every request, the
//! state Secret's included, goes to the API server impersonating the user, so
//! the server authorizes it as them; a kubeconfig user who may not
//! impersonate is refused, and nothing changes.

use crate::support::{Run, TestCluster, krt_at, show, temp_dir};
use krt_sim::StaticToken;
use krt_sim::auth::UserInfo;
use serde_json::json;
use std::path::Path;

/// The token of `bob`, a user with no rights at all.
const BOB: &str = "bob-token";

/// A ConfigMap manifest `<namespace>/<name>`, written to `dir/<name>.yaml`.
fn manifest(dir: &Path, namespace: &str, name: &str) -> String {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
             data: {{k: v}}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

async fn live(cluster: &TestCluster, namespace: &str, name: &str) -> bool {
    cluster.get_configmap(namespace, name).await.is_some()
}

/// `krt apply -f FILE --yes` with the state in a Secret of team-a, as `args` say.
async fn apply(dir: &Path, kubeconfig: &Path, file: &str, args: &[&str]) -> Run {
    let common = [
        "apply",
        "-f",
        file,
        "--yes",
        "--state",
        "kubernetes",
        "--state-namespace",
        "team-a",
    ];
    krt_at(dir, kubeconfig, &[&common[..], args].concat(), None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn krt_as_sends_every_request_as_that_user() {
    let cluster = TestCluster::simulated(
        krt_sim::SimConfig {
            tls: true,
            users: vec![StaticToken {
                token: BOB.into(),
                user: UserInfo::new("bob", &[]),
            }],
            ..krt_sim::SimConfig::default()
        },
        "bob authenticates with a krt-sim static token",
    )
    .await;
    cluster.create_namespace("team-a").await;
    let edit = |name: &str, kind: &str, subject: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name, "namespace": "team-a"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "edit"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                             "name": subject}]})
    };
    cluster
        .create("rolebindings", edit("alice-edit", "User", "alice"))
        .await;
    cluster
        .create("rolebindings", edit("editors", "Group", "team-a-editors"))
        .await;
    let dir = temp_dir("impersonation");
    let admin = cluster.kubeconfig.clone();

    // Alice may edit team-a: the ConfigMap and the state Secret are written as her.
    let mine = manifest(dir.path(), "team-a", "alices");
    let run = apply(dir.path(), &admin, &mine, &["--as", "alice", "-s", "alice"]).await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert!(live(&cluster, "team-a", "alices").await);
    let secret = cluster
        .get("v1", "Secret", "secrets", Some("team-a"), "krt-state-alice")
        .await;
    assert!(
        secret.is_some(),
        "the state is kept as alice: {}",
        show(&run)
    );

    // The state goes as her too: not in default, where she has no rights.
    let elsewhere = manifest(dir.path(), "team-a", "state-elsewhere");
    let args = [
        "apply",
        "-f",
        &elsewhere,
        "--yes",
        "--state",
        "kubernetes",
        "--state-namespace",
        "default",
        "--as",
        "alice",
        "-s",
        "alice-3",
    ];
    let run = krt_at(dir.path(), &admin, &args, None).await;
    assert_ne!(run.code, 0, "{}", show(&run));
    assert!(
        run.stderr.contains("User \"alice\" cannot")
            && run.stderr.contains("secrets")
            && run.stderr.contains("in the namespace \"default\""),
        "{}",
        show(&run)
    );
    assert!(!live(&cluster, "team-a", "state-elsewhere").await);

    // Not in default, where she has no rights: the server's words, nothing written.
    let theirs = manifest(dir.path(), "default", "not-hers");
    let run = apply(
        dir.path(),
        &admin,
        &theirs,
        &["--as", "alice", "-s", "alice-2"],
    )
    .await;
    assert_ne!(run.code, 0, "{}", show(&run));
    assert!(
        run.stdout.contains(
            "configmaps \"not-hers\" is forbidden: User \"alice\" cannot get resource \
             \"configmaps\" in API group \"\" in the namespace \"default\""
        ),
        "{}",
        show(&run)
    );
    assert!(!live(&cluster, "default", "not-hers").await);

    // A group given with --as-group counts.
    let group = manifest(dir.path(), "team-a", "carols");
    let run = apply(
        dir.path(),
        &admin,
        &group,
        &[
            "--as",
            "carol",
            "--as-group",
            "team-a-editors",
            "-s",
            "carol",
        ],
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert!(live(&cluster, "team-a", "carols").await);

    // Bob may not impersonate anyone.
    let bobs = cluster.kubeconfig_as("bob", &krt_sim::Credential::Token(BOB.into()));
    let refused = manifest(dir.path(), "team-a", "via-bob");
    let run = apply(dir.path(), &bobs, &refused, &["--as", "alice", "-s", "bob"]).await;
    assert_ne!(run.code, 0, "{}", show(&run));
    assert!(
        run.stderr.contains(
            "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" \
             in API group \"\" at the cluster scope"
        ),
        "{}",
        show(&run)
    );
    assert!(!live(&cluster, "team-a", "via-bob").await);

    // --as-group alone is refused by the CLI, as kubectl refuses it.
    let run = apply(dir.path(), &admin, &group, &["--as-group", "x"]).await;
    assert_eq!(run.code, 2, "{}", show(&run));
    assert!(run.stderr.contains("--as <USER>"), "{}", show(&run));
}
