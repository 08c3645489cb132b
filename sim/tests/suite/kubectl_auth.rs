//! RBAC through real `kubectl`: a user with a limited token is refused in the API server's
//! words, an escalating binding is refused, impersonation needs the impersonate verb;
//! reviews created from manifests (sent as JSON) carry their answer; `auth can-i` (sent as
//! protobuf); the discovery of the review kinds. The default kubeconfig is the admin's
//! (`krt-sim-admin` in `system:masters`).

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use common::{Kubectl, path};
use krt_sim::api::UserInfo;
use krt_sim::{Credential, Sim, SimConfig, StaticToken};
use serde_json::json;

const TEAM: &str = "apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: deployer, namespace: team-a}
rules:
- apiGroups: [\"\"]
  resources: [configmaps]
  verbs: [get, list, create]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings]
  verbs: [get, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}
";

const ESCALATING: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-admin, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}
";

fn stderr(out: &std::process::Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_with_a_limited_token_is_held_to_its_bindings() {
    let jane = StaticToken {
        token: "jane-token".into(),
        user: UserInfo::new("jane", &[]),
    };
    let sim = Sim::start_with(SimConfig {
        users: vec![jane],
        tls: true,
        ..SimConfig::default()
    })
    .await
    .expect("sim starts");
    let k = Kubectl::new(&sim);
    let team = k.file("team.yaml", TEAM);
    k.ok(&["apply", "-f", path(&team)]);
    let jane = k.as_user(&sim, "jane", &Credential::Token("jane-token".into()));
    let settings = k.file(
        "settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team-a}\ndata: {k: v}\n",
    );
    let made = jane.run(&["apply", "-f", path(&settings)]);
    common::assert_success(&made, "kubectl");
    let listed = jane.run(&["get", "configmaps", "-n", "team-a", "-o", "name"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("configmap/settings"));
    assert_eq!(
        stderr(&jane.run(&["get", "configmaps", "-n", "default"])),
        r#"Error from server (Forbidden): configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    assert_eq!(
        stderr(&jane.run(&["delete", "configmap", "settings", "-n", "team-a"])),
        r#"Error from server (Forbidden): configmaps "settings" is forbidden: User "jane" cannot delete resource "configmaps" in API group "" in the namespace "team-a""#
    );
    assert_eq!(
        stderr(&jane.run(&["get", "nodes"])),
        r#"Error from server (Forbidden): nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope"#
    );
    // Jane may create bindings in team-a, but not one granting more than she holds.
    let escalating = k.file("escalating.yaml", ESCALATING);
    let refused = stderr(&jane.run(&["create", "-f", path(&escalating)]));
    assert!(
        refused.contains(r#"rolebindings.rbac.authorization.k8s.io "jane-admin" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:"#),
        "{refused}"
    );
    assert!(
        refused.contains(r#"{APIGroups:["*"], Resources:["*"], Verbs:["*"]}"#),
        "{refused}"
    );
    // Impersonation needs the impersonate verb: jane lacks it, the admin holds it.
    assert_eq!(
        stderr(&jane.run(&["get", "configmaps", "-n", "team-a", "--as", "ann"])),
        r#"Error from server (Forbidden): users "ann" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope"#
    );
    let impersonated = k.ok(&[
        "get",
        "configmaps",
        "-n",
        "team-a",
        "--as",
        "jane",
        "-o",
        "name",
    ]);
    assert!(
        impersonated.contains("configmap/settings"),
        "{impersonated}"
    );
    assert_eq!(
        stderr(&k.run(&["get", "configmaps", "-n", "default", "--as", "jane"])),
        r#"Error from server (Forbidden): configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_created_with_kubectl_carry_their_answer() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let ssar = k.file(
        "ssar.yaml",
        "apiVersion: authorization.k8s.io/v1
kind: SelfSubjectAccessReview
spec:
  resourceAttributes: {namespace: kube-system, verb: get, resource: secrets}
",
    );
    // kubectl asks the OpenAPI documents whether a kind's PATCH takes `fieldValidation`; a
    // create-only kind has no PATCH, so kubectl falls back to the protobuf OpenAPI v2, which the
    // simulator does not serve: validation is left to the server.
    let create = |file: &std::path::Path| {
        k.json(&[
            "create",
            "--validate=false",
            "-f",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])
    };
    let review = create(&ssar);
    assert_eq!(review["kind"], "SelfSubjectAccessReview");
    assert_eq!(review["status"]["allowed"], true, "{review}");
    let sar = k.file(
        "sar.yaml",
        "apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: jane
  groups: [system:authenticated]
  nonResourceAttributes: {verb: get, path: /apis/apps/v1}
",
    );
    let review = create(&sar);
    assert_eq!(
        review["status"],
        json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""})
    );
    let ssrr = k.file(
        "ssrr.yaml",
        "apiVersion: authorization.k8s.io/v1
kind: SelfSubjectRulesReview
spec: {namespace: default}
",
    );
    let review = create(&ssrr);
    let rules = review["status"]["resourceRules"].as_array().unwrap();
    assert!(
        rules.contains(&json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})),
        "cluster-admin's rules through the binding of system:masters: {review}"
    );
    // A bad review is refused in the API server's words.
    let bad = k.file(
        "bad.yaml",
        "apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  resourceAttributes: {verb: get, resource: pods}
",
    );
    let out = k.run(&["create", "--validate=false", "-f", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "spec.user: Invalid value: \"\": at least one of user or group must be specified"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_answers_through_self_subject_access_and_rules_reviews() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    assert_eq!(k.ok(&["auth", "can-i", "create", "pods"]).trim(), "yes");
    assert_eq!(k.ok(&["auth", "can-i", "get", "/apis"]).trim(), "yes");
    let out = k.ok(&["auth", "can-i", "--list"]);
    let header = out.lines().next().unwrap_or_default();
    for column in ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"] {
        assert!(header.contains(column), "{out}");
    }
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(rows.contains(&vec!["*.*", "[]", "[]", "[*]"]), "{out}");
    assert!(rows.contains(&vec!["[*]", "[]", "[*]"]), "{out}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_lists_the_review_kinds_create_only() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    for (group, kinds) in [
        (
            "authorization.k8s.io",
            &[
                "LocalSubjectAccessReview",
                "SelfSubjectAccessReview",
                "SelfSubjectRulesReview",
                "SubjectAccessReview",
            ][..],
        ),
        (
            "authentication.k8s.io",
            &["SelfSubjectReview", "TokenReview"][..],
        ),
    ] {
        let group_flag = format!("--api-group={group}");
        let out = k.ok(&["api-resources", &group_flag, "-o", "wide"]);
        for kind in kinds {
            let words: Vec<&str> = out
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|w| w.contains(kind))
                .unwrap_or_else(|| panic!("{kind} missing: {out}"));
            let at = words.iter().position(|w| w == kind).unwrap();
            assert_eq!(words[at + 1..], ["create"], "{out}");
        }
    }
    let listable = k.ok(&["api-resources", "--verbs=list", "-o", "name"]);
    assert!(!listable.contains("subjectaccessreviews"), "{listable}");
    sim.shutdown().await;
}
