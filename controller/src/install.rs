//! What runs the controller in a cluster (`krt controller install`): the
//! `stacks.krt.dev` CRD, a Namespace, a ServiceAccount, the RBAC it needs and
//! a Deployment of `krt controller run` replicas sharing the Stacks.
//!
//! RBAC comes in two parts: `krt-controller` covers what the controller
//! itself reads and writes (Stacks and their status, the ConfigMaps they
//! name, Events, its Leases), and `krt-controller-apply` what Stacks may be
//! given to apply — every kind, as Flux's controllers get, because each
//! Stack's capability policy, enforced in krt's sandbox at every call, is the
//! tenancy boundary. Narrow `krt-controller-apply` to the kinds your Stacks
//! use for a second line of defence.

use crate::crd::Stack;
use kube::CustomResourceExt;
use serde_json::{Value, json};

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
    vec![
        crd(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns, false)}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": meta("krt-controller", true)}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": meta("krt-controller", false),
        "rules": [
            {"apiGroups": ["krt.dev"], "resources": ["stacks"],
             "verbs": ["get", "list", "watch", "patch", "update"]},
            {"apiGroups": ["krt.dev"], "resources": ["stacks/status", "stacks/finalizers"],
             "verbs": ["get", "patch", "update"]},
            {"apiGroups": [""], "resources": ["configmaps"],
             "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["events.k8s.io"], "resources": ["events"],
             "verbs": ["create", "patch"]},
        ]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": meta("krt-controller-apply", false),
               "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": meta("krt-controller", false),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "krt-controller"},
               "subjects": subject}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": meta("krt-controller-apply", false),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "krt-controller-apply"},
               "subjects": subject}),
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
    ]
}

fn deployment(options: &InstallOptions, metadata: Value) -> Value {
    let field = |path: &str| json!({"fieldRef": {"fieldPath": path}});
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
                        "args": [
                            "controller", "run",
                            "--identity", "$(POD_NAME)",
                            "--lease-namespace", "$(POD_NAMESPACE)",
                            "--shards", options.shards.to_string(),
                            "--metrics-address", "0.0.0.0:8080",
                        ],
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

    #[test]
    fn the_deployment_runs_the_controller_with_its_options() {
        let all = manifests(&InstallOptions {
            namespace: "krt-system".into(),
            image: "krt:0.1.0".into(),
            replicas: 3,
            shards: 8,
        });
        let kinds: Vec<&str> = all.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "CustomResourceDefinition",
                "Namespace",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRole",
                "ClusterRoleBinding",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
                "Deployment"
            ]
        );
        let deployment = all.last().unwrap();
        assert_eq!(deployment["spec"]["replicas"], 3);
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "krt:0.1.0");
        let args: Vec<&str> = container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(&args[..2], ["controller", "run"]);
        assert!(args.windows(2).any(|w| w == ["--shards", "8"]), "{args:?}");
    }
}
