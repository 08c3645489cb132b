//! RBAC as kube-apiserver enforces it, through the in-process API: one row per rule of the
//! authorizer, escalation prevention, aggregation, the default policy and the review APIs.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use krt_sim::api::{Cluster, Request, Response, UserInfo};
use serde_json::{Value, json};

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const AUTHZ: &str = "/apis/authorization.k8s.io/v1";

fn body(v: Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// Creates `object` at `path` as a trusted caller; it must succeed.
fn setup(cluster: &Cluster, path: &str, object: Value) {
    let r = cluster.handle(&Request::post(path, body(object)));
    assert_eq!(r.code, 201, "setup {path}: {}", r.body);
}

fn role(name: &str, rules: Value) -> Value {
    json!({"metadata": {"name": name}, "rules": rules})
}

fn binding(name: &str, kind: &str, role: &str, subjects: Value) -> Value {
    json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}])
}

fn ns_path(ns: &str, resource: &str) -> String {
    format!("{RBAC}/namespaces/{ns}/{resource}")
}

/// A cluster with namespaces `team-a` and `team-b`, a ConfigMap and a Secret `x` in each, and:
/// - `jane`: Role `reader` (get/list/watch configmaps and pods) in team-a;
/// - `viewer`: ClusterRole `view` in team-a; `lead`: ClusterRole `admin` in team-a;
/// - `named`: get of the ConfigMap `x` only (resourceNames) in team-a;
/// - the ServiceAccount `team-a/deployer`: edit in team-a; the group `auditors`: view everywhere;
/// - `system:anonymous`: `/openapi/*`; `dangling`: a binding to a Role that does not exist.
fn cluster() -> Cluster {
    let cluster = Cluster::new(1000);
    for ns in ["team-a", "team-b"] {
        setup(
            &cluster,
            "/api/v1/namespaces",
            json!({"metadata": {"name": ns}}),
        );
        setup(
            &cluster,
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            json!({"metadata": {"name": "x"}, "data": {"k": "v"}}),
        );
        setup(
            &cluster,
            &format!("/api/v1/namespaces/{ns}/secrets"),
            json!({"metadata": {"name": "x"}, "stringData": {"k": "v"}}),
        );
    }
    let a = |r: &str| ns_path("team-a", r);
    setup(
        &cluster,
        &a("roles"),
        role(
            "reader",
            json!([{"apiGroups": [""], "resources": ["configmaps", "pods"], "verbs": ["get", "list", "watch"]}]),
        ),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding("jane-reads", "Role", "reader", user("jane")),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding("viewer", "ClusterRole", "view", user("viewer")),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding("lead", "ClusterRole", "admin", user("lead")),
    );
    setup(
        &cluster,
        &a("roles"),
        role(
            "one-configmap",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["x"], "verbs": ["get", "list"]}]),
        ),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding("named", "Role", "one-configmap", user("named")),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding(
            "deployer",
            "ClusterRole",
            "edit",
            json!([{"kind": "ServiceAccount", "name": "deployer", "namespace": "team-a"}]),
        ),
    );
    setup(
        &cluster,
        &format!("{RBAC}/clusterrolebindings"),
        binding(
            "auditors",
            "ClusterRole",
            "view",
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "auditors"}]),
        ),
    );
    setup(
        &cluster,
        &format!("{RBAC}/clusterroles"),
        role(
            "openapi-reader",
            json!([{"nonResourceURLs": ["/openapi/*"], "verbs": ["get"]}]),
        ),
    );
    setup(
        &cluster,
        &format!("{RBAC}/clusterrolebindings"),
        binding(
            "anonymous-openapi",
            "ClusterRole",
            "openapi-reader",
            user("system:anonymous"),
        ),
    );
    setup(
        &cluster,
        &a("rolebindings"),
        binding("dangling", "Role", "nope", user("dangling")),
    );
    cluster
}

fn jane() -> UserInfo {
    UserInfo::new("jane", &[])
}

fn deployer() -> UserInfo {
    UserInfo::new(
        "system:serviceaccount:team-a:deployer",
        &["system:serviceaccounts", "system:serviceaccounts:team-a"],
    )
}

/// One row of the table: who sends what, and the code (and, for 403, the message) expected.
struct Row {
    rule: &'static str,
    user: UserInfo,
    request: Request,
    code: u16,
    message: &'static str,
}

fn get(user: UserInfo, path: &str) -> Request {
    Request::get(path).as_user(user)
}

fn check(cluster: &Cluster, rows: Vec<Row>) {
    let total = rows.len();
    for row in rows {
        let response = cluster.handle(&row.request.as_user(row.user));
        assert_eq!(response.code, row.code, "{}: {}", row.rule, response.body);
        if row.code == 403 {
            assert_eq!(response.body["reason"], "Forbidden", "{}", row.rule);
            assert_eq!(response.body["message"], row.message, "{}", row.rule);
        }
    }
    println!("{total} rows pass");
}

#[test]
fn the_authorizer_allows_what_bindings_grant_and_nothing_else() {
    let cluster = cluster();
    let cm = |ns: &str| format!("/api/v1/namespaces/{ns}/configmaps");
    let new_cm = || body(json!({"metadata": {"name": "new"}, "data": {}}));
    let anonymous = UserInfo::anonymous();
    let rows = vec![
        Row {
            rule: "a Role's verbs in its namespace",
            user: jane(),
            request: get(jane(), &format!("{}/x", cm("team-a"))),
            code: 200,
            message: "",
        },
        Row {
            rule: "the same resource in another namespace (named)",
            user: jane(),
            request: Request::get(&format!("{}/x", cm("team-b"))),
            code: 403,
            message: r#"configmaps "x" is forbidden: User "jane" cannot get resource "configmaps" in API group "" in the namespace "team-b""#,
        },
        Row {
            rule: "the collection in another namespace",
            user: jane(),
            request: Request::get(&cm("team-b")),
            code: 403,
            message: r#"configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "team-b""#,
        },
        Row {
            rule: "a verb the Role lacks",
            user: jane(),
            request: Request::post(&cm("team-a"), new_cm()),
            code: 403,
            message: r#"configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "team-a""#,
        },
        Row {
            rule: "a resource the Role lacks, deleted as a collection",
            user: jane(),
            request: Request::delete("/api/v1/namespaces/team-a/secrets"),
            code: 403,
            message: r#"secrets is forbidden: User "jane" cannot deletecollection resource "secrets" in API group "" in the namespace "team-a""#,
        },
        Row {
            rule: "a cluster-scoped list",
            user: jane(),
            request: Request::get("/api/v1/namespaces"),
            code: 403,
            message: r#"namespaces is forbidden: User "jane" cannot list resource "namespaces" in API group "" at the cluster scope"#,
        },
        Row {
            rule: "a named group's resource",
            user: jane(),
            request: Request::get("/apis/apps/v1/namespaces/team-a/deployments"),
            code: 403,
            message: r#"deployments.apps is forbidden: User "jane" cannot list resource "deployments" in API group "apps" in the namespace "team-a""#,
        },
        Row {
            rule: "a subresource is not its resource",
            user: jane(),
            request: Request::patch(
                "/api/v1/namespaces/team-a/pods/p/status",
                "application/merge-patch+json",
                b"{}".to_vec(),
            ),
            code: 403,
            message: r#"pods "p" is forbidden: User "jane" cannot patch resource "pods/status" in API group "" in the namespace "team-a""#,
        },
        Row {
            rule: "discovery for every authenticated user (system:discovery)",
            user: jane(),
            request: Request::get("/apis"),
            code: 200,
            message: "",
        },
        Row {
            rule: "discovery of a group version (/apis/*)",
            user: jane(),
            request: Request::get("/apis/apps/v1"),
            code: 200,
            message: "",
        },
        Row {
            rule: "no discovery for the unauthenticated",
            user: anonymous.clone(),
            request: Request::get("/apis"),
            code: 403,
            message: r#"forbidden: User "system:anonymous" cannot get path "/apis""#,
        },
        Row {
            rule: "/version for the unauthenticated (system:public-info-viewer)",
            user: anonymous.clone(),
            request: Request::get("/version"),
            code: 200,
            message: "",
        },
        Row {
            rule: "a non-resource URL rule with a trailing *",
            user: anonymous.clone(),
            request: Request::get("/openapi/v2"),
            code: 200,
            message: "",
        },
        Row {
            rule: "a trailing * matches below the prefix only",
            user: anonymous.clone(),
            request: Request::get("/openapi"),
            code: 403,
            message: r#"forbidden: User "system:anonymous" cannot get path "/openapi""#,
        },
        Row {
            rule: "view reads ConfigMaps",
            user: UserInfo::new("viewer", &[]),
            request: Request::get(&format!("{}/x", cm("team-a"))),
            code: 200,
            message: "",
        },
        Row {
            rule: "view cannot read Secrets",
            user: UserInfo::new("viewer", &[]),
            request: Request::get("/api/v1/namespaces/team-a/secrets/x"),
            code: 403,
            message: r#"secrets "x" is forbidden: User "viewer" cannot get resource "secrets" in API group "" in the namespace "team-a""#,
        },
        Row {
            rule: "resourceNames allow get of the name",
            user: UserInfo::new("named", &[]),
            request: Request::get(&format!("{}/x", cm("team-a"))),
            code: 200,
            message: "",
        },
        Row {
            rule: "resourceNames do not allow a list",
            user: UserInfo::new("named", &[]),
            request: Request::get(&cm("team-a")),
            code: 403,
            message: r#"configmaps is forbidden: User "named" cannot list resource "configmaps" in API group "" in the namespace "team-a""#,
        },
        Row {
            rule: "resourceNames allow a list selecting the name by field",
            user: UserInfo::new("named", &[]),
            request: Request::get(&cm("team-a")).query("fieldSelector", "metadata.name=x"),
            code: 200,
            message: "",
        },
        Row {
            rule: "a ServiceAccount subject (edit in team-a)",
            user: deployer(),
            request: Request::post(&cm("team-a"), new_cm()),
            code: 201,
            message: "",
        },
        Row {
            rule: "a ServiceAccount subject outside its binding's namespace",
            user: deployer(),
            request: Request::post(&cm("team-b"), new_cm()),
            code: 403,
            message: r#"configmaps is forbidden: User "system:serviceaccount:team-a:deployer" cannot create resource "configmaps" in API group "" in the namespace "team-b""#,
        },
        Row {
            rule: "a Group subject of a ClusterRoleBinding, in every namespace",
            user: UserInfo::new("ann", &["auditors"]),
            request: Request::get(&cm("team-b")),
            code: 200,
            message: "",
        },
        Row {
            rule: "system:masters may do anything",
            user: UserInfo::new("root", &["system:masters"]),
            request: Request::get("/api/v1/namespaces/team-b/secrets/x"),
            code: 200,
            message: "",
        },
        Row {
            rule: "a binding to a missing role says so",
            user: UserInfo::new("dangling", &[]),
            request: Request::get(&cm("team-a")),
            code: 403,
            message: r#"configmaps is forbidden: User "dangling" cannot list resource "configmaps" in API group "" in the namespace "team-a": RBAC: role.rbac.authorization.k8s.io "nope" not found"#,
        },
        Row {
            rule: "authorization comes before routing",
            user: jane(),
            request: Request::get("/apis/example.com/v1/widgets"),
            code: 403,
            message: r#"widgets.example.com is forbidden: User "jane" cannot list resource "widgets" in API group "example.com" at the cluster scope"#,
        },
    ];
    check(&cluster, rows);
    let denied =
        cluster.handle(&Request::get("/api/v1/namespaces/team-b/configmaps/x").as_user(jane()));
    assert_eq!(
        denied.body["details"],
        json!({"name": "x", "kind": "configmaps"})
    );
    let denied = cluster.handle(&Request::get("/apis").as_user(UserInfo::anonymous()));
    assert_eq!(denied.body["details"], json!({}));
    // Watches are authorized as `watch`.
    let Err(refused) = cluster.watch(
        &Request::get(&cm("team-b"))
            .query("watch", "1")
            .as_user(jane()),
    ) else {
        panic!("a watch in team-b is refused");
    };
    assert_eq!(
        refused.body["message"],
        r#"configmaps is forbidden: User "jane" cannot watch resource "configmaps" in API group "" in the namespace "team-b""#
    );
    assert!(
        cluster
            .watch(&Request::get(&cm("team-a")).as_user(jane()))
            .is_ok()
    );
}

#[test]
fn roles_and_bindings_grant_no_more_than_their_writer_holds() {
    let cluster = cluster();
    let lead = || UserInfo::new("lead", &[]);
    let roles = ns_path("team-a", "roles");
    let bindings = ns_path("team-a", "rolebindings");
    let nodes = role(
        "node-reader",
        json!([{"apiGroups": [""], "resources": ["nodes", "secrets"], "verbs": ["get", "list"]}]),
    );
    let to_admin = binding("jane-admin", "ClusterRole", "cluster-admin", user("jane"));
    let refused_role = "roles.rbac.authorization.k8s.io \"node-reader\" is forbidden: user \"lead\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"get\" \"list\"]}";
    let rows = vec![
        Row {
            rule: "a Role within what the writer holds (admin: secrets)",
            user: lead(),
            request: Request::post(
                &roles,
                body(role(
                    "secret-reader",
                    json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
                )),
            ),
            code: 201,
            message: "",
        },
        Row {
            rule: "a Role with more than the writer holds",
            user: lead(),
            request: Request::post(&roles, body(nodes.clone())),
            code: 403,
            message: refused_role,
        },
        Row {
            rule: "a RoleBinding to cluster-admin",
            user: lead(),
            request: Request::post(&bindings, body(to_admin.clone())),
            code: 403,
            message: "rolebindings.rbac.authorization.k8s.io \"jane-admin\" is forbidden: user \"lead\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}",
        },
        Row {
            rule: "a RoleBinding to a role within what the writer holds",
            user: lead(),
            request: Request::post(
                &bindings,
                body(binding("jane-view", "ClusterRole", "view", user("jane"))),
            ),
            code: 201,
            message: "",
        },
        Row {
            rule: "a RoleBinding is checked in its own namespace",
            user: lead(),
            request: Request::post(
                &ns_path("team-b", "rolebindings"),
                body(binding("jane-view", "ClusterRole", "view", user("jane"))),
            ),
            code: 403,
            message: r#"rolebindings.rbac.authorization.k8s.io is forbidden: User "lead" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team-b""#,
        },
    ];
    check(&cluster, rows);
    // An update and a server-side apply are checked as a create is.
    setup(&cluster, &roles, role("grown", json!([])));
    let patch = Request::patch(
        &format!("{roles}/grown"),
        "application/merge-patch+json",
        body(json!({"rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]})),
    );
    let r = cluster.handle(&patch.clone().as_user(lead()));
    assert_eq!(r.code, 403, "{}", r.body);
    let apply = Request::patch(
        &format!("{roles}/node-reader"),
        "application/apply-patch+yaml",
        body(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "node-reader"}, "rules": nodes["rules"]}),
        ),
    )
    .query("fieldManager", "lead");
    let r = cluster.handle(&apply.clone().as_user(lead()));
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (403, Some(refused_role))
    );
    // With `escalate` on roles the same writes succeed; with `bind` on cluster-admin, the binding.
    setup(
        &cluster,
        &roles,
        role(
            "escalator",
            json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]},
                   {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                    "resourceNames": ["cluster-admin"], "verbs": ["bind"]}]),
        ),
    );
    setup(
        &cluster,
        &bindings,
        binding("lead-escalates", "Role", "escalator", user("lead")),
    );
    for request in [
        Request::post(&roles, body(nodes.clone())),
        patch,
        Request::post(&bindings, body(to_admin)),
    ] {
        let r = cluster.handle(&request.as_user(lead()));
        assert!(r.code == 200 || r.code == 201, "{}", r.body);
    }
    let bound =
        cluster.handle(&Request::get("/api/v1/namespaces/team-a/secrets/x").as_user(jane()));
    assert_eq!(bound.code, 200, "jane is cluster-admin in team-a now");
    // A ClusterRole is checked against what the writer holds cluster-wide.
    let r = cluster.handle(
        &Request::post(
            &format!("{RBAC}/clusterroles"),
            body(role(
                "x",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
            )),
        )
        .as_user(UserInfo::new("root", &["system:masters"])),
    );
    assert_eq!(r.code, 201, "system:masters escalate freely: {}", r.body);
}

fn rules_of(cluster: &Cluster, name: &str) -> Vec<Value> {
    let r = cluster.handle(&Request::get(&format!("{RBAC}/clusterroles/{name}")));
    r.body["rules"].as_array().cloned().unwrap_or_default()
}

fn ssar(cluster: &Cluster, user: UserInfo, attributes: Value) -> Value {
    let r = cluster.handle(
        &Request::post(
            &format!("{AUTHZ}/selfsubjectaccessreviews"),
            body(
                json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attributes}}),
            ),
        )
        .as_user(user),
    );
    assert_eq!(r.code, 201, "{}", r.body);
    r.body["status"].clone()
}

#[test]
fn aggregated_cluster_roles_gather_labelled_rules() {
    let cluster = cluster();
    let widgets = json!({"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]});
    let can_get = |cluster: &Cluster| {
        ssar(
            cluster,
            UserInfo::new("viewer", &[]),
            json!({"namespace": "team-a", "verb": "get", "group": "example.com", "resource": "widgets"}),
        )["allowed"]
            .clone()
    };
    assert!(!rules_of(&cluster, "view").contains(&widgets));
    assert!(
        rules_of(&cluster, "view").len() >= 10
            && rules_of(&cluster, "admin").len() > rules_of(&cluster, "edit").len(),
        "admin, edit and view are filled in from the start"
    );
    assert_eq!(can_get(&cluster), json!(false));
    setup(
        &cluster,
        &format!("{RBAC}/clusterroles"),
        json!({"metadata": {"name": "widget-viewer",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}, "rules": [widgets]}),
    );
    cluster.reconcile();
    assert!(rules_of(&cluster, "view").contains(&widgets));
    assert!(
        rules_of(&cluster, "edit").contains(&widgets),
        "edit aggregates view"
    );
    assert!(
        rules_of(&cluster, "admin").contains(&widgets),
        "admin aggregates edit"
    );
    assert_eq!(can_get(&cluster), json!(true));
    // A changed labelled role changes the aggregate; an unlabelled one leaves it.
    let r = cluster.handle(&Request::patch(
        &format!("{RBAC}/clusterroles/widget-viewer"),
        "application/merge-patch+json",
        body(
            json!({"metadata": {"labels": {"rbac.authorization.k8s.io/aggregate-to-view": null}}}),
        ),
    ));
    assert_eq!(r.code, 200);
    cluster.reconcile();
    assert!(!rules_of(&cluster, "view").contains(&widgets));
    assert_eq!(can_get(&cluster), json!(false));
}

#[test]
fn the_default_policy_is_seeded_as_a_real_servers() {
    let cluster = Cluster::new(100);
    let get = |path: &str| cluster.handle(&Request::get(path)).body;
    for name in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
        "system:service-account-issuer-discovery",
    ] {
        let role = get(&format!("{RBAC}/clusterroles/{name}"));
        assert_eq!(
            role["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults",
            "{name}"
        );
        assert_eq!(
            role["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"], "true",
            "{name}"
        );
    }
    let edit = get(&format!("{RBAC}/clusterroles/edit"));
    assert_eq!(
        edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"],
        "true"
    );
    assert_eq!(
        edit["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"],
        json!({"rbac.authorization.k8s.io/aggregate-to-edit": "true"})
    );
    let admin = get(&format!("{RBAC}/clusterrolebindings/cluster-admin"));
    assert_eq!(admin["subjects"][0]["name"], "system:masters");
    let viewer = get(&format!(
        "{RBAC}/clusterrolebindings/system:public-info-viewer"
    ));
    assert_eq!(
        common::names(&viewer["subjects"]),
        ["system:authenticated", "system:unauthenticated"]
    );
    // A fresh authenticated user may discover and review itself, and nothing else.
    let nobody = UserInfo::new("nobody", &[]);
    assert_eq!(
        cluster
            .handle(&Request::get("/api/v1").as_user(nobody.clone()))
            .code,
        200
    );
    assert_eq!(
        cluster
            .handle(&Request::get("/api/v1/pods").as_user(nobody.clone()))
            .code,
        403
    );
}

#[test]
fn review_apis_answer_as_the_rbac_authorizer_words_it() {
    let cluster = cluster();
    let status = ssar(
        &cluster,
        jane(),
        json!({"namespace": "team-a", "verb": "list", "resource": "configmaps"}),
    );
    assert_eq!(
        status,
        json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "jane-reads/team-a" of Role "reader" to User "jane""#})
    );
    assert_eq!(
        ssar(
            &cluster,
            jane(),
            json!({"namespace": "team-a", "verb": "delete", "resource": "configmaps"})
        ),
        json!({"allowed": false})
    );
    let status = ssar(
        &cluster,
        UserInfo::new("ann", &["auditors"]),
        json!({"namespace": "team-b", "verb": "get", "resource": "pods"}),
    );
    assert_eq!(
        status["reason"],
        r#"RBAC: allowed by ClusterRoleBinding "auditors" of ClusterRole "view" to Group "auditors""#
    );
    let status = ssar(
        &cluster,
        deployer(),
        json!({"namespace": "team-a", "verb": "create", "resource": "configmaps"}),
    );
    assert_eq!(
        status["reason"],
        r#"RBAC: allowed by RoleBinding "deployer/team-a" of ClusterRole "edit" to ServiceAccount "deployer/team-a""#
    );
    // A non-resource review.
    let r = cluster.handle(
        &Request::post(
            &format!("{AUTHZ}/selfsubjectaccessreviews"),
            body(json!({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/apis/apps"}}})),
        )
        .as_user(jane()),
    );
    assert_eq!(r.body["status"]["allowed"], true);
    assert_eq!(r.body["kind"], "SelfSubjectAccessReview");
    // Neither attribute kind is invalid.
    let r = cluster.handle(
        &Request::post(
            &format!("{AUTHZ}/selfsubjectaccessreviews"),
            body(json!({"spec": {}})),
        )
        .as_user(jane()),
    );
    assert_eq!(r.code, 422);
    assert_eq!(
        r.body["message"],
        r#".authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#
    );
    // SelfSubjectRulesReview: the rules in a namespace.
    let r = cluster.handle(
        &Request::post(
            &format!("{AUTHZ}/selfsubjectrulesreviews"),
            body(json!({"spec": {"namespace": "team-a"}})),
        )
        .as_user(jane()),
    );
    assert_eq!(r.code, 201, "{}", r.body);
    let rules = r.body["status"]["resourceRules"].as_array().unwrap();
    assert!(rules.contains(&json!({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps", "pods"]})));
    assert!(rules.contains(
        &json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]})
    ));
    assert_eq!(r.body["status"]["incomplete"], false);
    let urls = &r.body["status"]["nonResourceRules"];
    assert!(urls.as_array().unwrap().iter().any(|u| {
        u["nonResourceURLs"]
            .as_array()
            .unwrap()
            .contains(&json!("/apis/*"))
    }));
    // SubjectAccessReview: needs create on it, asks about someone else.
    let sar = body(
        json!({"spec": {"user": "jane", "groups": ["system:authenticated"],
        "resourceAttributes": {"namespace": "team-b", "verb": "get", "resource": "configmaps"}}}),
    );
    let path = format!("{AUTHZ}/subjectaccessreviews");
    let r = cluster.handle(&Request::post(&path, sar.clone()).as_user(jane()));
    assert_eq!(
        (r.code, r.body["message"].as_str().unwrap()),
        (
            403,
            r#"subjectaccessreviews.authorization.k8s.io is forbidden: User "jane" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope"#
        )
    );
    let root = UserInfo::new("root", &["system:masters"]);
    let r = cluster.handle(&Request::post(&path, sar).as_user(root.clone()));
    assert_eq!(
        (r.code, &r.body["status"]),
        (201, &json!({"allowed": false}))
    );
    let r = cluster.handle(
        &Request::post(
            &path,
            body(json!({"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})),
        )
        .as_user(root),
    );
    assert_eq!(r.code, 422);
    assert!(r.body["message"].as_str().unwrap().ends_with(
        "spec.user: Invalid value: \"\": at least one of user or group must be specified"
    ));
    // LocalSubjectAccessReview: admin may create them in its namespace; the namespaces agree.
    let local = format!("{AUTHZ}/namespaces/team-a/localsubjectaccessreviews");
    let review = |ns: &str| {
        body(json!({"spec": {"user": "jane",
            "resourceAttributes": {"namespace": ns, "verb": "watch", "resource": "pods"}}}))
    };
    let r = cluster
        .handle(&Request::post(&local, review("team-a")).as_user(UserInfo::new("lead", &[])));
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["status"]["allowed"], true);
    assert_eq!(r.body["metadata"]["namespace"], "team-a");
    let r = cluster
        .handle(&Request::post(&local, review("team-b")).as_user(UserInfo::new("lead", &[])));
    assert_eq!(r.code, 422);
    assert!(r.body["message"].as_str().unwrap().contains("spec.resourceAttributes.namespace: Invalid value: \"team-b\": must match metadata.namespace"));
    // Reviews are not stored or listed.
    let r = cluster.handle(&Request::get(&format!("{AUTHZ}/selfsubjectaccessreviews")));
    assert_eq!(r.code, 405);
}

fn discovered(cluster: &Cluster, path: &str) -> Vec<(String, Value)> {
    let r: Response = cluster.handle(&Request::get(path));
    r.body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r["verbs"].clone()))
        .collect()
}

#[test]
fn discovery_lists_the_review_kinds_create_only() {
    let cluster = Cluster::new(10);
    let create = json!(["create"]);
    let authz = discovered(&cluster, AUTHZ);
    let names: Vec<&str> = authz.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "localsubjectaccessreviews",
            "selfsubjectaccessreviews",
            "selfsubjectrulesreviews",
            "subjectaccessreviews"
        ]
    );
    assert!(authz.iter().all(|(_, verbs)| *verbs == create));
    let authn = discovered(&cluster, "/apis/authentication.k8s.io/v1");
    assert_eq!(
        authn,
        [
            ("selfsubjectreviews".to_string(), create.clone()),
            ("tokenreviews".to_string(), create.clone())
        ]
    );
    let core = discovered(&cluster, "/api/v1");
    assert!(core.contains(&("serviceaccounts/token".to_string(), create)));
    // The authentication layer answers these; the core does not.
    for path in [
        "/apis/authentication.k8s.io/v1/tokenreviews",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        "/api/v1/namespaces/default/serviceaccounts/default/token",
    ] {
        assert_eq!(
            cluster.handle(&Request::post(path, b"{}".to_vec())).code,
            404,
            "{path}"
        );
    }
}
