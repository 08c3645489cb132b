//! Tenancy by the API server's own rules, on controllers installed by
//! `krt controller install` (its manifests applied to krt-sim, the controller
//! running as their ServiceAccount): each Stack applies as its ServiceAccount,
//! so RBAC and its escalation checks refuse what krt's policy would allow,
//! and nothing a tenant may not read is repeated to it.

use crate::support;

use k8s_openapi::api::events::v1::Event;
use krt_controller::install::TenancyMode;
use krt_controller::{Grant, Grants, Stack};
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};
use std::time::Duration;
use support::{Harness, Setup, apply, bind, client_from, config_map, until};

/// Long enough for a first reconcile on a loaded 2-core machine.
const WITHIN: Duration = Duration::from_secs(60);

/// A Stack of `namespace` running as `account` (none: the default).
fn stack_as(namespace: &str, name: &str, account: Option<&str>, resources: Vec<Value>) -> Value {
    let mut stack = support::stack(namespace, name, "2s", resources);
    if let Some(account) = account {
        stack["spec"]["serviceAccountName"] = account.into();
    }
    stack
}

/// A multi-tenant installation; Stacks of `team-a` may touch `reach` too by krt's policy.
async fn multi(reach: &[&str]) -> Harness {
    let grants = Grants {
        grants: reach
            .iter()
            .map(|ns| Grant {
                stacks: vec!["team-a".into()],
                namespaces: vec![(*ns).into()],
                cluster_scoped: false,
            })
            .collect(),
        ..Grants::default()
    };
    Harness::start_with(Setup {
        grants,
        installed: Some(TenancyMode::Multi),
        ..Setup::default()
    })
    .await
}

/// The Stalled condition's reason and message, once the Stack is Stalled.
async fn stalled(h: &Harness, namespace: &str, name: &str) -> (String, String) {
    let stack = h
        .until_condition(namespace, name, "Stalled", "True", WITHIN)
        .await;
    let c = stack.condition("Stalled").expect("a Stalled condition");
    (c.reason.clone(), c.message.clone())
}

/// Waits until the Stack is Stalled, refused by the API server (`Forbidden`)
/// with a message naming each of `parts`.
async fn forbidden(h: &Harness, namespace: &str, name: &str, parts: &[&str]) {
    let (reason, message) = stalled(h, namespace, name).await;
    assert_eq!(reason, "Forbidden", "{message}");
    for part in parts {
        assert!(message.contains(part), "{part}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_with_only_stack_rights_gets_what_its_account_may_do_and_no_more() {
    let h = multi(&["krt-system"]).await;
    // The tenant may only manage Stacks in team-a.
    apply(
        &h.cluster,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "stacks-only", "namespace": "team-a"},
                "rules": [{"apiGroups": ["krt.dev"], "resources": ["stacks"],
                           "verbs": ["create", "get", "list", "watch"]}]}),
    )
    .await;
    apply(
        &h.cluster,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "tenant-stacks", "namespace": "team-a"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                            "name": "stacks-only"},
                "subjects": [{"kind": "ServiceAccount", "name": "tenant",
                              "namespace": "team-a"}]}),
    )
    .await;
    let tenant = client_from(
        &h.cluster
            .kubeconfig_for_service_account("team-a", "tenant")
            .await,
    )
    .await;
    let own = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(tenant.clone(), "team-a");
    let direct: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(config_map("direct", "x")).unwrap();
    let refused = own
        .create(&PostParams::default(), &direct)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("cannot create resource"),
        "{refused}"
    );
    bind(&h.cluster, "team-a", "deployer", "edit").await;
    bind(&h.cluster, "team-a", "manager", "admin").await;
    let stacks: Api<Stack> = Api::namespaced(tenant, "team-a");
    let create = |stack: Value| {
        let stacks = stacks.clone();
        async move {
            let stack: Stack = serde_json::from_value(stack).unwrap();
            stacks
                .create(&PostParams::default(), &stack)
                .await
                .expect("the tenant may create Stacks");
        }
    };
    let take_over = |name: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "cluster-admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "tenant",
                             "namespace": "team-a"}]})
    };
    // A Pod of the controller's account in the controller's namespace, which
    // krt's policy allows team-a here.
    let pod = krt_testkit::pod("steal")
        .namespace("krt-system")
        .set("/spec/serviceAccountName", json!("krt-controller"))
        .value();
    for (name, account, resources) in [
        // What `edit` allows applies.
        (
            "web",
            "deployer",
            vec![
                config_map("settings", "a"),
                krt_testkit::deployment("web").value(),
            ],
        ),
        // A binding to cluster-admin: `edit` may not bind at all, and `admin`
        // may bind only what it holds (the escalation check).
        (
            "bind",
            "deployer",
            vec![config_map("bind-marker", "x"), take_over("bind")],
        ),
        (
            "escalate",
            "manager",
            vec![config_map("escalate-marker", "x"), take_over("escalate")],
        ),
        ("reach", "deployer", vec![pod]),
    ] {
        create(stack_as("team-a", name, Some(account), resources)).await;
    }

    h.until_condition("team-a", "web", "Ready", "True", WITHIN)
        .await;
    assert!(
        h.cluster
            .get(
                "apps/v1",
                "Deployment",
                "deployments",
                Some("team-a"),
                "web"
            )
            .await
            .is_some()
    );
    forbidden(
        &h,
        "team-a",
        "bind",
        &[
            "Forbidden by the API server",
            "User \"system:serviceaccount:team-a:deployer\" cannot get resource \
             \"rolebindings\" in API group \"rbac.authorization.k8s.io\" in the namespace \
             \"team-a\"",
        ],
    )
    .await;
    forbidden(
        &h,
        "team-a",
        "escalate",
        &[
            "rolebindings.rbac.authorization.k8s.io \"escalate\" is forbidden: user \
             \"system:serviceaccount:team-a:manager\"",
            "is attempting to grant RBAC permissions not currently held",
        ],
    )
    .await;
    forbidden(
        &h,
        "team-a",
        "reach",
        &[
            "\"system:serviceaccount:team-a:deployer\" cannot",
            "in the namespace \"krt-system\"",
        ],
    )
    .await;
    for marker in ["bind-marker", "escalate-marker"] {
        assert!(
            h.config_map("team-a", marker).await.is_none(),
            "nothing else of a refused Stack is written: {marker}"
        );
    }
    for name in ["bind", "escalate"] {
        assert!(
            h.cluster
                .get(
                    "rbac.authorization.k8s.io/v1",
                    "RoleBinding",
                    "rolebindings",
                    Some("team-a"),
                    name
                )
                .await
                .is_none()
        );
    }
    assert!(
        h.cluster
            .get("v1", "Pod", "pods", Some("krt-system"), "steal")
            .await
            .is_none()
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_naming_an_account_of_another_namespace_is_refused_before_any_request() {
    let h = multi(&[]).await;
    h.cluster.reset_requests();
    let mut impostor = stack_as(
        "team-a",
        "impostor",
        Some("system:serviceaccount:krt-system:krt-controller"),
        vec![config_map("never-asked", "x")],
    );
    impostor["spec"]["configMaps"] = json!([{"name": "never-read"}]);
    h.create(impostor).await;
    let (reason, message) = stalled(&h, "team-a", "impostor").await;
    assert_eq!(reason, "InvalidSpec");
    assert_eq!(
        message,
        "spec.serviceAccountName 'system:serviceaccount:krt-system:krt-controller' is a \
         ServiceAccount of namespace 'krt-system': a Stack runs only as an account of its own \
         namespace 'team-a'"
    );
    let asked: Vec<String> = h
        .cluster
        .requests()
        .iter()
        .filter(|(_, path, _)| path.contains("never-"))
        .map(|(verb, path, _)| format!("{verb} {path}"))
        .collect();
    assert!(asked.is_empty(), "requests for the Stack: {asked:?}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_naming_no_account_runs_as_the_default_one() {
    let h = multi(&[]).await;
    h.create(stack_as(
        "team-b",
        "plain",
        None,
        vec![config_map("plain", "x")],
    ))
    .await;
    forbidden(
        &h,
        "team-b",
        "plain",
        &["User \"system:serviceaccount:team-b:default\" cannot"],
    )
    .await;
    assert!(h.config_map("team-b", "plain").await.is_none());
    // Once the account may, the next reconcile applies.
    bind(&h.cluster, "team-b", "default", "edit").await;
    h.until_condition("team-b", "plain", "Ready", "True", WITHIN)
        .await;
    assert!(h.config_map("team-b", "plain").await.is_some());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_cannot_touch_each_other_even_with_a_krt_grant() {
    let h = multi(&["team-b"]).await;
    bind(&h.cluster, "team-a", "deployer", "edit").await;
    bind(&h.cluster, "team-b", "deployer", "edit").await;
    h.create(stack_as(
        "team-b",
        "theirs",
        Some("deployer"),
        vec![config_map("theirs", "b's")],
    ))
    .await;
    h.until_condition("team-b", "theirs", "Ready", "True", WITHIN)
        .await;
    let takeover = krt_testkit::configmap("theirs")
        .namespace("team-b")
        .data(json!({"key": "a's"}))
        .value();
    h.create(stack_as("team-a", "grab", Some("deployer"), vec![takeover]))
        .await;
    forbidden(
        &h,
        "team-a",
        "grab",
        &[
            "\"system:serviceaccount:team-a:deployer\" cannot",
            "in the namespace \"team-b\"",
        ],
    )
    .await;
    let live = h.config_map("team-b", "theirs").await.unwrap();
    assert_eq!(live["data"]["key"], "b's");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_learns_nothing_its_account_may_not_read() {
    learns_nothing(TenancyMode::Multi).await;
}

/// Even where the controller itself may read everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_learns_nothing_its_account_may_not_read_from_a_single_tenant_controller() {
    learns_nothing(TenancyMode::Single).await;
}

/// A Secret of the Stack's namespace and a ConfigMap of another, neither
/// readable by the Stack's account, appear in no status, Event or metric.
async fn learns_nothing(mode: TenancyMode) {
    const SECRET: &str = "hunter2-do-not-echo";
    let h = Harness::start_with(Setup {
        installed: Some(mode),
        ..Setup::default()
    })
    .await;
    h.cluster
        .create(
            "secrets",
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "db", "namespace": "team-a"},
                   "stringData": {"password": SECRET}}),
        )
        .await;
    let leaked = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: leak}}\ndata: {{password: {SECRET}}}\n"
    );
    h.cluster
        .create(
            "configmaps",
            krt_testkit::configmap("shared")
                .namespace("team-b")
                .data(json!({"all.yaml": leaked}))
                .value(),
        )
        .await;
    // `reader` may manage ConfigMaps of team-a, and nothing else.
    apply(
        &h.cluster,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "configmaps-only"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]}),
    )
    .await;
    bind(&h.cluster, "team-a", "reader", "configmaps-only").await;
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                        "stringData": {"password": "mine"}});
    h.create(stack_as("team-a", "peek", Some("reader"), vec![secret]))
        .await;
    let mut borrow = stack_as("team-a", "borrow", Some("reader"), Vec::new());
    borrow["spec"]["configMaps"] = json!([{"name": "shared", "namespace": "team-b"}]);
    h.create(borrow).await;
    forbidden(&h, "team-a", "peek", &["cannot"]).await;
    let borrowed = h
        .until_condition("team-a", "borrow", "Ready", "False", WITHIN)
        .await;
    let ready = borrowed.condition("Ready").unwrap();
    assert_eq!(ready.reason, "SourceForbidden", "{}", ready.message);
    assert!(
        ready.message.contains(
            "configmaps \"shared\" is forbidden: User \"system:serviceaccount:team-a:reader\""
        ),
        "{}",
        ready.message
    );
    assert!(h.config_map("team-a", "leak").await.is_none());
    // Nothing the account may not read shows up where the tenant looks.
    let b64 = {
        use k8s_openapi::ByteString;
        serde_json::to_string(&ByteString(SECRET.as_bytes().to_vec())).unwrap()
    };
    let b64 = b64.trim_matches('"').to_owned();
    let metrics = support::scrape(&h.metrics_url).await;
    let events: Api<Event> = Api::namespaced(h.cluster.client.clone(), "team-a");
    let events = serde_json::to_string(&events.list(&Default::default()).await.unwrap()).unwrap();
    for name in ["peek", "borrow"] {
        let stack = serde_json::to_string(&h.stacks.get(name).await.unwrap()).unwrap();
        for (what, text) in [
            ("status", &stack),
            ("Events", &events),
            ("metrics", &metrics),
        ] {
            assert!(
                !text.contains(SECRET) && !text.contains(&b64),
                "{what} of {name} repeat what its account may not read: {text}"
            );
        }
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_namespace_sources_are_refused_when_switched_off() {
    let h = Harness::start_with(Setup {
        installed: Some(TenancyMode::Multi),
        no_cross_namespace_refs: true,
        ..Setup::default()
    })
    .await;
    bind(&h.cluster, "team-a", "deployer", "edit").await;
    h.cluster.reset_requests();
    let mut stack = stack_as("team-a", "far", Some("deployer"), Vec::new());
    stack["spec"]["configMaps"] = json!([{"name": "elsewhere", "namespace": "team-b"}]);
    h.create(stack).await;
    let (reason, message) = stalled(&h, "team-a", "far").await;
    assert_eq!(reason, "InvalidSpec");
    assert!(
        message.contains("spec.configMaps[0] names a ConfigMap of namespace 'team-b'")
            && message.contains("--no-cross-namespace-refs"),
        "{message}"
    );
    let asked = h
        .cluster
        .requests()
        .iter()
        .any(|(_, path, _)| path.contains("elsewhere"));
    assert!(!asked, "the ConfigMap is never asked for");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_tenant_install_applies_stacks_naming_no_account_as_the_controller() {
    let h = Harness::start_with(Setup {
        installed: Some(TenancyMode::Single),
        ..Setup::default()
    })
    .await;
    h.create(stack_as(
        "team-a",
        "own",
        None,
        vec![
            config_map("own", "x"),
            krt_testkit::deployment("own").value(),
        ],
    ))
    .await;
    h.until_condition("team-a", "own", "Ready", "True", WITHIN)
        .await;
    until("the ConfigMap", WITHIN, || async {
        h.config_map("team-a", "own").await
    })
    .await;
    h.stop().await;
}
