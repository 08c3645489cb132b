//! What runs the controller in a cluster (`krt controller install`): the
//! `stacks.krt.dev` CRD, a Namespace, a ServiceAccount, the RBAC it needs and
//! a Deployment of `krt controller run` replicas sharing the Stacks.
//!
//! The ClusterRole `krt-controller` covers what the controller itself reads
//! and writes (Stacks and their status, Events; its Leases are a Role in its
//! namespace) and `impersonate` on ServiceAccounts, plus the ConfigMaps of
//! Stacks that run as the controller when no default account is set. How tenants are separated
//! is [`TenancyMode`]:
//! - [`TenancyMode::Multi`] (the default): that is all the controller may do.
//!   Each Stack applies as its ServiceAccount (`spec.serviceAccountName`,
//!   else the `default` account of its namespace, through
//!   `--default-service-account`), so the API server's RBAC decides what it
//!   may write, behind krt's capability policy;
//! - [`TenancyMode::Single`]: for one-team clusters, `krt-controller-apply` lets
//!   the controller write every kind, and Stacks naming no account run as the
//!   controller, bounded by krt's capability policy alone.

use crate::crd::Stack;
use kube::CustomResourceExt;
use serde_json::{Value, json};

/// How an installation separates tenants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TenancyMode {
    /// Stacks apply as ServiceAccounts of their namespaces; the controller
    /// itself may write no tenant objects.
    #[default]
    Multi,
    /// The controller may write every kind, and Stacks naming no
    /// ServiceAccount run as the controller.
    Single,
}

impl TenancyMode {
    /// `multi` or `single`, as the manifests' annotation says it.
    pub fn word(self) -> &'static str {
        match self {
            TenancyMode::Multi => "multi",
            TenancyMode::Single => "single",
        }
    }
}

/// The annotation that says which [`TenancyMode`] the installed RBAC is for.
pub const TENANCY_ANNOTATION: &str = "krt.dev/tenancy";

/// What the install manifests are made for.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// The controller's namespace (its Deployment, ServiceAccount and Leases).
    pub namespace: String,
    /// The container image, holding the `krt` binary as its entry point.
    pub image: String,
    /// How many replicas share the Stacks.
    pub replicas: u32,
    /// How many shards Stacks are spread over.
    pub shards: u32,
    /// How tenants are separated.
    pub tenancy: TenancyMode,
    /// The account Stacks naming none run as (`--default-service-account`);
    /// `None` is `default` under [`TenancyMode::Multi`] and the controller itself
    /// under [`TenancyMode::Single`].
    pub default_service_account: Option<String>,
}

impl InstallOptions {
    /// The account Stacks naming none run as, if any.
    fn default_account(&self) -> Option<&str> {
        match (&self.default_service_account, self.tenancy) {
            (Some(name), _) => Some(name),
            (None, TenancyMode::Multi) => Some("default"),
            (None, TenancyMode::Single) => None,
        }
    }

    /// What the annotation of the RBAC says about the installation.
    fn tenancy_note(&self) -> String {
        let runs_as = match self.default_account() {
            Some(name) => format!(
                "Stacks naming no spec.serviceAccountName run as the ServiceAccount '{name}' of \
                 their namespace"
            ),
            None => "Stacks naming no spec.serviceAccountName run as the controller".into(),
        };
        match self.tenancy {
            TenancyMode::Multi => format!(
                "multi-tenant: the controller may write no tenant objects itself; each Stack \
                 applies as its ServiceAccount, so the API server's RBAC decides; {runs_as}"
            ),
            TenancyMode::Single => format!(
                "single-tenant: krt-controller-apply lets the controller write every kind, \
                 bounded by krt's capability policy alone; {runs_as}"
            ),
        }
    }
}

/// The labels of everything installed.
fn labels() -> Value {
    json!({"app.kubernetes.io/name": "krt-controller", "app.kubernetes.io/part-of": "krt"})
}

/// The `stacks.krt.dev` CustomResourceDefinition.
pub fn crd() -> Value {
    serde_json::to_value(Stack::crd()).unwrap_or_default()
}

/// Every object of the installation, in the order to apply them.
pub fn manifests(options: &InstallOptions) -> Vec<Value> {
    let ns = options.namespace.as_str();
    let meta = |name: &str, namespaced: bool| {
        let mut m = json!({"name": name, "labels": labels()});
        if namespaced {
            m["namespace"] = ns.into();
        }
        m
    };
    let subject = json!([{"kind": "ServiceAccount", "name": "krt-controller", "namespace": ns}]);
    let mut rules = vec![
        json!({"apiGroups": ["krt.dev"], "resources": ["stacks"],
               "verbs": ["get", "list", "watch", "patch", "update"]}),
        json!({"apiGroups": ["krt.dev"], "resources": ["stacks/status", "stacks/finalizers"],
               "verbs": ["get", "patch", "update"]}),
        json!({"apiGroups": ["events.k8s.io"], "resources": ["events"],
               "verbs": ["create", "patch"]}),
        json!({"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}),
    ];
    if options.default_account().is_none() {
        // Stacks that run as the controller read their ConfigMaps as it.
        rules.push(json!({"apiGroups": [""], "resources": ["configmaps"],
                          "verbs": ["get", "list", "watch"]}));
    }
    let mut role_meta = meta("krt-controller", false);
    role_meta["annotations"] = json!({
        TENANCY_ANNOTATION: options.tenancy.word(),
        "krt.dev/description": options.tenancy_note(),
    });
    let mut all = vec![
        crd(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns, false)}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": meta("krt-controller", true)}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": role_meta, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": meta("krt-controller", false),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "krt-controller"},
               "subjects": subject}),
    ];
    if options.tenancy == TenancyMode::Single {
        let mut apply_meta = meta("krt-controller-apply", false);
        apply_meta["annotations"] = json!({
            TENANCY_ANNOTATION: "single",
            "krt.dev/description": "every kind: only for single-tenant installs, where krt's \
                capability policy is the only boundary between Stacks",
        });
        all.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": apply_meta,
               "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
        );
        all.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": meta("krt-controller-apply", false),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "krt-controller-apply"},
               "subjects": subject}),
        );
    }
    all.extend([
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": meta("krt-controller-leases", true),
               "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                          "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": meta("krt-controller-leases", true),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                           "name": "krt-controller-leases"},
               "subjects": subject}),
        deployment(options, meta("krt-controller", true)),
    ]);
    all
}

fn deployment(options: &InstallOptions, metadata: Value) -> Value {
    let field = |path: &str| json!({"fieldRef": {"fieldPath": path}});
    let mut args = vec![
        "controller".to_owned(),
        "run".into(),
        "--identity".into(),
        "$(POD_NAME)".into(),
        "--lease-namespace".into(),
        "$(POD_NAMESPACE)".into(),
        "--shards".into(),
        options.shards.to_string(),
        "--metrics-address".into(),
        "0.0.0.0:8080".into(),
    ];
    if let Some(account) = options.default_account() {
        args.extend(["--default-service-account".into(), account.to_owned()]);
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": options.replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "krt-controller"}},
            "template": {
                "metadata": {"labels": labels()},
                "spec": {
                    "serviceAccountName": "krt-controller",
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 65532},
                    "containers": [{
                        "name": "controller",
                        "image": options.image,
                        "args": args,
                        "env": [
                            {"name": "POD_NAME", "valueFrom": field("metadata.name")},
                            {"name": "POD_NAMESPACE", "valueFrom": field("metadata.namespace")},
                            {"name": "XDG_CACHE_HOME", "value": "/tmp/cache"},
                        ],
                        "ports": [{"name": "metrics", "containerPort": 8080}],
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"}},
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"}},
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"memory": "1Gi"},
                        },
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                    }],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crd_serves_v1alpha1_with_a_status_subresource() {
        let crd = crd();
        assert_eq!(crd["metadata"]["name"], "stacks.krt.dev");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["name"], "v1alpha1");
        assert!(version["subresources"]["status"].is_object(), "{version}");
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(
            spec["resources"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }

    fn options(tenancy: TenancyMode) -> InstallOptions {
        InstallOptions {
            namespace: "krt-system".into(),
            image: "krt:0.1.0".into(),
            replicas: 3,
            shards: 8,
            tenancy,
            default_service_account: None,
        }
    }

    fn kinds(all: &[Value]) -> Vec<&str> {
        all.iter().map(|o| o["kind"].as_str().unwrap()).collect()
    }

    fn args(all: &[Value]) -> Vec<&str> {
        let deployment = all.last().unwrap();
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect()
    }

    /// The rules of the ClusterRole `name`, as `group/resource:verbs` lines.
    fn rules(all: &[Value], name: &str) -> Vec<String> {
        let role = all
            .iter()
            .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no ClusterRole {name}"));
        role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let list = |v: &Value| {
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_str().unwrap())
                        .collect::<Vec<_>>()
                        .join(",")
                };
                format!(
                    "{}/{}:{}",
                    list(&r["apiGroups"]),
                    list(&r["resources"]),
                    list(&r["verbs"])
                )
            })
            .collect()
    }

    #[test]
    fn the_deployment_runs_the_controller_with_its_options() {
        let all = manifests(&options(TenancyMode::Multi));
        let deployment = all.last().unwrap();
        assert_eq!(deployment["spec"]["replicas"], 3);
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "krt:0.1.0");
        let args = args(&all);
        assert_eq!(&args[..2], ["controller", "run"]);
        assert!(args.windows(2).any(|w| w == ["--shards", "8"]), "{args:?}");
    }

    #[test]
    fn only_a_single_tenant_install_has_the_cluster_role_that_applies_everything() {
        let apply_role = ["ClusterRole", "ClusterRoleBinding"];
        for (mode, extra) in [
            (TenancyMode::Multi, &[][..]),
            (TenancyMode::Single, &apply_role[..]),
        ] {
            let expected = [
                &[
                    "CustomResourceDefinition",
                    "Namespace",
                    "ServiceAccount",
                    "ClusterRole",
                    "ClusterRoleBinding",
                ][..],
                extra,
                &["Role", "RoleBinding", "Deployment"],
            ]
            .concat();
            assert_eq!(kinds(&manifests(&options(mode))), expected, "{mode:?}");
        }
    }

    #[test]
    fn a_multi_tenant_controller_may_only_impersonate_and_runs_stacks_as_default() {
        let all = manifests(&options(TenancyMode::Multi));
        assert_eq!(
            rules(&all, "krt-controller"),
            [
                "krt.dev/stacks:get,list,watch,patch,update",
                "krt.dev/stacks/status,stacks/finalizers:get,patch,update",
                "events.k8s.io/events:create,patch",
                "/serviceaccounts:impersonate",
            ]
        );
        let role = &all[3];
        assert_eq!(role["metadata"]["annotations"][TENANCY_ANNOTATION], "multi");
        let note = role["metadata"]["annotations"]["krt.dev/description"]
            .as_str()
            .unwrap();
        assert!(
            note.contains("run as the ServiceAccount 'default'"),
            "{note}"
        );
        let args = args(&all);
        assert!(
            args.windows(2)
                .any(|w| w == ["--default-service-account", "default"]),
            "{args:?}"
        );
        let named = manifests(&InstallOptions {
            default_service_account: Some("stacks".into()),
            ..options(TenancyMode::Multi)
        });
        let args = self::args(&named);
        assert!(
            args.windows(2)
                .any(|w| w == ["--default-service-account", "stacks"]),
            "{args:?}"
        );
    }

    #[test]
    fn a_single_tenant_controller_applies_everything_as_itself() {
        let all = manifests(&options(TenancyMode::Single));
        assert_eq!(rules(&all, "krt-controller-apply"), ["*/*:*"]);
        assert!(
            rules(&all, "krt-controller").contains(&"/configmaps:get,list,watch".to_owned()),
            "the ConfigMaps of Stacks running as the controller are read as it"
        );
        assert_eq!(
            all[3]["metadata"]["annotations"][TENANCY_ANNOTATION],
            "single"
        );
        let args = args(&all);
        assert!(!args.contains(&"--default-service-account"), "{args:?}");
    }
}
