//! `kubectl auth can-i` against the simulator: the review APIs answer as a real server's do.
//! The server does not authenticate yet (every HTTP request is the trusted caller, as a
//! `system:masters` member), so the answers are an administrator's.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
mod common;

use common::Kubectl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_answers_through_self_subject_access_reviews() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    assert_eq!(k.ok(&["auth", "can-i", "create", "pods"]).trim(), "yes");
    assert_eq!(
        k.ok(&["auth", "can-i", "get", "secrets", "-n", "kube-system"])
            .trim(),
        "yes"
    );
    assert_eq!(k.ok(&["auth", "can-i", "get", "/apis"]).trim(), "yes");
    assert_eq!(
        k.ok(&[
            "auth",
            "can-i",
            "create",
            "selfsubjectaccessreviews.authorization.k8s.io"
        ])
        .trim(),
        "yes"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_list_shows_the_rules_of_a_self_subject_rules_review() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let out = k.ok(&["auth", "can-i", "--list"]);
    let header = out.lines().next().unwrap_or_default();
    for column in ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"] {
        assert!(header.contains(column), "{out}");
    }
    // cluster-admin's rules, through the cluster-admin binding of system:masters.
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
    let out = k.ok(&[
        "api-resources",
        "--api-group=authorization.k8s.io",
        "-o",
        "wide",
    ]);
    for kind in [
        "LocalSubjectAccessReview",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
        "SubjectAccessReview",
    ] {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == kind))
            .unwrap_or_else(|| panic!("{kind} missing: {out}"));
        assert!(line.contains("[create]"), "{line}");
    }
    let verbs = k.ok(&["api-resources", "--verbs=list", "-o", "name"]);
    assert!(!verbs.contains("subjectaccessreviews"), "{verbs}");
    sim.shutdown().await;
}
