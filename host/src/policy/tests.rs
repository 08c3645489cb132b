use super::*;
use serde_json::json;

fn ar(group: &str, kind: &str, namespaced: bool) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: "v1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
        namespaced,
    }
}

fn req<'a>(
    verb: Verb,
    resource: &'a ApiResource,
    ns: Option<&'a str>,
    name: &'a str,
) -> Request<'a> {
    Request {
        verb,
        resource,
        namespace: ns,
        name: Some(name),
        field_manager: None,
        dry_run: false,
    }
}

use krt_testkit::{assert_contains, resource};

/// Asserts that `p` denies `request` by `rule`, with a message that holds `hint`.
#[track_caller]
fn assert_denied(p: &Policy, request: &Request<'_>, rule: &str, hint: &str) {
    let denial = p.check(request).unwrap_err();
    assert_eq!(denial.rule, rule);
    assert_contains(&denial.to_string(), hint);
}

fn quickstart() -> Policy {
    Policy::for_resources(
        &[
            resource(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "qs"}})),
            resource(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "qs"}}),
            ),
            resource(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "qs"}}),
            ),
        ],
        "default",
    )
}

#[test]
fn default_policy_is_the_specs_namespaces_and_kinds() {
    let p = quickstart();
    assert_eq!(p.namespaces, ["default", "qs"]);
    assert_eq!(p.kinds, ["ConfigMap", "Namespace", "apps/Deployment"]);
    assert!(p.cluster_scoped);
    let cm = ar("", "ConfigMap", true);
    let deploy = ar("apps", "Deployment", true);
    let ns = ar("", "Namespace", false);
    assert!(p.check(&req(Verb::Patch, &cm, Some("qs"), "cfg")).is_ok());
    assert!(
        p.check(&req(Verb::Delete, &deploy, Some("qs"), "web"))
            .is_ok()
    );
    assert!(p.check(&req(Verb::Create, &ns, None, "qs")).is_ok());

    assert_denied(
        &p,
        &req(Verb::Create, &cm, Some("team-b"), "x"),
        "namespaces",
        "add `--allow-namespace team-b`",
    );

    let secret = ar("", "Secret", true);
    assert_denied(
        &p,
        &req(Verb::Get, &secret, Some("qs"), "token"),
        "kinds",
        "`--allow-kind Secret`",
    );

    // A Namespace object is checked against the namespace it names.
    let denial = p
        .check(&req(Verb::Delete, &ns, None, "kube-system"))
        .unwrap_err();
    assert_eq!(denial.rule, "namespaces");
}

#[test]
fn cluster_scoped_kinds_need_the_flag() {
    let p = Policy::for_resources(
        &[resource(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "qs"}}),
        )],
        "default",
    );
    assert!(!p.cluster_scoped);
    let p = Policy {
        kinds: vec!["*".into()],
        ..p
    };
    let role = ar("rbac.authorization.k8s.io", "ClusterRole", false);
    assert_denied(
        &p,
        &req(Verb::Create, &role, None, "admin"),
        "clusterScoped",
        "--allow-cluster-scoped",
    );
}

#[test]
fn read_only_allows_reads_and_dry_runs() {
    let p = Policy {
        read_only: true,
        ..Policy::unrestricted()
    };
    let cm = ar("", "ConfigMap", true);
    assert!(p.check(&req(Verb::Get, &cm, Some("a"), "x")).is_ok());
    let mut write = req(Verb::Patch, &cm, Some("a"), "x");
    assert_eq!(p.check(&write).unwrap_err().rule, "readOnly");
    write.dry_run = true;
    assert!(p.check(&write).is_ok());
}

#[test]
fn verbs_field_managers_and_all_namespaces() {
    let mut p = Policy {
        verbs: [Verb::Get, Verb::List].into_iter().collect(),
        namespaces: vec!["team-*".into()],
        kinds: vec!["*".into()],
        ..Policy::default()
    };
    let cm = ar("", "ConfigMap", true);
    assert!(p.check(&req(Verb::Get, &cm, Some("team-a"), "x")).is_ok());
    assert_denied(
        &p,
        &req(Verb::Delete, &cm, Some("team-a"), "x"),
        "verbs",
        "--allow-verb delete",
    );

    p.verbs.insert(Verb::Patch);
    let mut write = req(Verb::Patch, &cm, Some("team-a"), "x");
    write.field_manager = Some("helm");
    assert_eq!(p.check(&write).unwrap_err().rule, "fieldManagers");
    p.allow_field_manager("helm");
    assert!(p.check(&write).is_ok());

    let list = Request {
        name: None,
        ..req(Verb::List, &cm, None, "")
    };
    assert_contains(
        &p.check(&list).unwrap_err().to_string(),
        "--allow-namespace '*'",
    );
}

#[test]
fn yaml_file_and_verb_names() {
    let text =
        "namespaces: [team-a]\nkinds: [ConfigMap]\nverbs: [get]\nreadOnly: true\nmaxRequests: 5\n";
    let p = Policy::from_yaml(Path::new("p.yaml"), text).unwrap();
    assert_eq!(p.namespaces, ["team-a"]);
    assert_eq!(p.verbs, [Verb::Get].into_iter().collect());
    assert!(p.read_only);
    assert_eq!(p.max_requests, 5);
    assert_eq!(p.field_managers, ["krt"]);

    let err = Policy::from_yaml(Path::new("p.yaml"), "namespace: [a]\n").unwrap_err();
    assert!(
        err.to_string().starts_with("invalid policy file 'p.yaml'"),
        "{err}"
    );
    assert_eq!("delete".parse::<Verb>(), Ok(Verb::Delete));
    assert!(
        "remove"
            .parse::<Verb>()
            .unwrap_err()
            .contains("expected one of get")
    );
}

#[test]
fn the_default_policy_lets_a_watch_read_a_workloads_children_but_not_write_them() {
    let deployment = krt_testkit::deployment("web")
        .namespace("team-a")
        .resource();
    let policy = Policy::for_resources(&[deployment], "default");
    let replicasets = ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        kind: "ReplicaSet".into(),
        plural: "replicasets".into(),
        namespaced: true,
    };
    let call = |verb, namespace| Request {
        verb,
        resource: &replicasets,
        namespace: Some(namespace),
        name: None,
        field_manager: None,
        dry_run: false,
    };
    assert!(policy.check_kind(&replicasets).is_ok());
    assert!(policy.check(&call(Verb::List, "team-a")).is_ok());
    assert!(policy.check(&call(Verb::Watch, "team-a")).is_ok());
    let write = policy.check(&call(Verb::Delete, "team-a")).unwrap_err();
    assert_eq!(write.rule, "kinds");
    let elsewhere = policy.check(&call(Verb::List, "team-b")).unwrap_err();
    assert_eq!(elsewhere.rule, "namespaces");
}

#[test]
fn a_middleware_denial_names_the_link_and_its_own_grant() {
    let denial = Policy::default()
        .check(&req(
            Verb::Get,
            &ar("", "ConfigMap", true),
            Some("default"),
            "x",
        ))
        .unwrap_err();
    assert_eq!(denial.rule, "kinds");
    let runtime = denial.to_string();
    assert!(
        runtime.contains(
            "add `--allow-kind ConfigMap` (or add `ConfigMap` under `kinds:` in the policy file)"
        ),
        "{runtime}"
    );
    let middleware = denial.for_middleware("middleware `lookup` (link 1 of 2)", "lookup");
    assert!(
        middleware.starts_with(
            "middleware `lookup` (link 1 of 2): krt's policy denies get ConfigMap default/x"
        ),
        "{middleware}"
    );
    assert!(
        middleware.ends_with(
            "add `ConfigMap` under `kinds:` in a policy file for this middleware and pass \
             `--middleware-policy lookup=FILE`"
        ),
        "{middleware}"
    );
    assert!(!middleware.contains("--allow-kind"), "{middleware}");
}
