//! Real `kubectl` against the simulator (with its default validation, which reads the OpenAPI
//! v3 documents): client-side apply, server-side apply with a conflict between two managers and
//! `--force-conflicts`, the upgrade from client-side to server-side apply, `get` tables and
//! `-o json`, `diff`, `delete --wait` on an object with a finalizer, `rollout status`, `wait`,
//! `get --watch`, and HTTPS with a bearer token.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::path::Path;

use common::{Kubectl, eventually, path};

const APP: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports:
        - containerPort: 80
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_apply_get_and_delete() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("app.yaml", APP);
    let first = k.ok(&["apply", "-f", path(&manifest)]);
    assert_eq!(
        first,
        "namespace/demo created\nconfigmap/settings created\ndeployment.apps/web created\n"
    );
    let again = k.ok(&["apply", "-f", path(&manifest)]);
    assert_eq!(
        again,
        "namespace/demo unchanged\nconfigmap/settings unchanged\ndeployment.apps/web unchanged\n"
    );

    let changed = k.file(
        "app2.yaml",
        &APP.replace("mode: fast", "mode: safe")
            .replace("replicas: 2", "replicas: 3"),
    );
    let out = k.ok(&["apply", "-f", path(&changed)]);
    assert!(out.contains("configmap/settings configured"), "{out}");
    assert!(out.contains("deployment.apps/web configured"), "{out}");

    let table = k.ok(&["get", "deployment", "web", "-n", "demo"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{table}"
    );
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|row| row.starts_with("web ")),
        "{table}"
    );

    let d = k.json(&["get", "deployment", "web", "-n", "demo", "-o", "json"]);
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["metadata"]["generation"], 2);
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"],
        "TCP"
    );
    assert_eq!(d["metadata"]["uid"].as_str().map(str::len), Some(36));
    let cm = k.json(&["get", "configmap", "settings", "-n", "demo", "-o", "json"]);
    assert_eq!(cm["data"]["mode"], "safe");

    let deleted = k.ok(&["delete", "-f", path(&changed)]);
    assert!(
        deleted.contains("configmap \"settings\" deleted"),
        "{deleted}"
    );
    assert!(deleted.contains("namespace \"demo\" deleted"), "{deleted}");
    let missing = k.run(&["get", "configmap", "settings", "-n", "demo"]);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("(NotFound)"), "{stderr}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_conflicts_between_managers_and_force() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let cm = |value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: default\ndata:\n  owner: {value}\n"
        )
    };
    let alpha = k.file("alpha.yaml", &cm("alpha"));
    let beta = k.file("beta.yaml", &cm("beta"));
    let ssa = |manager: &str, file: &Path, force: bool| {
        let mut args = vec![
            "apply",
            "--server-side",
            "--field-manager",
            manager,
            "-f",
            path(file),
        ];
        if force {
            args.push("--force-conflicts");
        }
        k.run(&args)
    };
    let out = ssa("alpha", &alpha, false);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "configmap/shared serverside-applied\n"
    );

    let conflict = ssa("beta", &beta, false);
    assert!(!conflict.status.success());
    let stderr = String::from_utf8_lossy(&conflict.stderr);
    assert!(
        stderr.contains("Apply failed with 1 conflict: conflict with \"alpha\": .data.owner"),
        "{stderr}"
    );

    let forced = ssa("beta", &beta, true);
    common::assert_success(&forced, "kubectl");
    let live = k.json(&[
        "get",
        "configmap",
        "shared",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert_eq!(live["data"]["owner"], "beta");
    let owners_of_owner: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter(|e| !e["fieldsV1"]["f:data"]["f:owner"].is_null())
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(
        owners_of_owner,
        vec!["beta"],
        "forcing took .data.owner from alpha"
    );

    let rv = live["metadata"]["resourceVersion"].clone();
    let again = ssa("beta", &beta, false);
    assert!(again.status.success());
    let after = k.json(&["get", "configmap", "shared", "-o", "json"]);
    assert_eq!(
        after["metadata"]["resourceVersion"], rv,
        "re-applying is a no-op"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_wait_diff_and_watch() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("app.yaml", APP);
    k.ok(&["apply", "-f", path(&manifest)]);
    let rollout = k.ok(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "demo",
        "--timeout=20s",
    ]);
    let (waiting, done) = rollout
        .trim_end()
        .rsplit_once('\n')
        .unwrap_or(("", rollout.trim_end()));
    assert_eq!(done, "deployment \"web\" successfully rolled out");
    assert!(
        waiting
            .lines()
            .all(|l| l.starts_with("Waiting for deployment \"web\" rollout to finish: ")),
        "only progress lines come before the end of the rollout: {rollout}"
    );
    let waited = k.ok(&[
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "-n",
        "demo",
        "--timeout=20s",
    ]);
    assert_eq!(waited, "deployment.apps/web condition met\n");
    let pods = k.json(&["get", "pods", "-n", "demo", "-l", "app=web", "-o", "json"]);
    assert_eq!(pods["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(pods["items"][0]["status"]["phase"], "Running");

    let changed = k.file("app3.yaml", &APP.replace("replicas: 2", "replicas: 3"));
    let diff = k.run(&["diff", "-f", path(&changed)]);
    assert_eq!(diff.status.code(), Some(1), "differences found");
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("-  replicas: 2") && text.contains("+  replicas: 3"),
        "{text}"
    );

    let watched = k.ok(&[
        "get",
        "configmaps",
        "-n",
        "demo",
        "--watch",
        "--request-timeout=1s",
    ]);
    let rows: Vec<Vec<&str>> = watched
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "DATA", "AGE"], "{watched}");
    assert_eq!(rows[1][..2], ["kube-root-ca.crt", "1"], "{watched}");
    assert_eq!(rows[2][..2], ["settings", "1"], "{watched}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_waits_for_finalizers() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let held = k.file(
        "held.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: default\n  finalizers: [example.com/hold]\ndata:\n  a: b\n",
    );
    k.ok(&["apply", "-f", path(&held)]);
    let mut deleting = k.spawn(&["delete", "configmap", "held", "--wait", "--timeout=30s"]);
    let get = krt_sim::api::Request::get("/api/v1/namespaces/default/configmaps/held");
    eventually(10, "the deletionTimestamp", || {
        sim.cluster().handle(&get).body["metadata"]["deletionTimestamp"].is_string()
    });
    assert!(
        deleting.try_wait().expect("kubectl status").is_none(),
        "kubectl delete --wait returned while a finalizer held the object"
    );
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let out = deleting.wait_with_output().expect("kubectl delete ends");
    common::assert_success(&out, "kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "configmap \"held\" deleted\n"
    );
    assert_eq!(sim.cluster().handle(&get).code, 404);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_takes_over_from_client_side_apply() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("app.yaml", APP);
    k.ok(&["apply", "-f", path(&manifest)]);
    let changed = k.file("app-ssa.yaml", &APP.replace("mode: fast", "mode: slow"));
    let out = k.ok(&["apply", "--server-side", "-f", path(&changed)]);
    assert!(
        out.contains("configmap/settings serverside-applied"),
        "{out}"
    );
    let cm = k.json(&[
        "get",
        "configmap",
        "settings",
        "-n",
        "demo",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert_eq!(cm["data"]["mode"], "slow");
    let owners: Vec<(&str, &str)> = cm["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter(|e| !e["fieldsV1"]["f:data"]["f:mode"].is_null())
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default(),
                e["operation"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(owners, [("kubectl", "Apply")]);
    let last = cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .expect("annotation kept");
    assert!(
        last.contains("\"slow\""),
        "the annotation follows the apply: {last}"
    );
    // Back to client-side apply: the annotation is current, so nothing reverts.
    k.ok(&["apply", "-f", path(&changed)]);
    let cm = k.json(&["get", "configmap", "settings", "-n", "demo", "-o", "json"]);
    assert_eq!(cm["data"]["mode"], "slow");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_bearer_token() {
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        tls: true,
        token: Some("s3cret".into()),
        ..krt_sim::SimConfig::default()
    })
    .await
    .expect("sim starts");
    assert!(sim.url().starts_with("https://127.0.0.1:"), "{}", sim.url());
    assert!(
        sim.ca_pem()
            .is_some_and(|p| p.starts_with("-----BEGIN CERTIFICATE-----"))
    );
    let k = Kubectl::new(&sim);
    let namespaces = k.ok(&["get", "namespaces"]);
    assert!(
        namespaces
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "default",
                    "Active",
                    l.split_whitespace().last().unwrap_or_default()
                ]),
        "{namespaces}"
    );
    let without = k.run(&["get", "namespaces", "--token", "wrong"]);
    assert!(!without.status.success());
    let stderr = String::from_utf8_lossy(&without.stderr);
    assert!(stderr.contains("Unauthorized"), "{stderr}");
    sim.shutdown().await;
}

const QUANTITIES: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: sized
  namespace: default
spec:
  selector:
    matchLabels: {app: sized}
  template:
    metadata:
      labels: {app: sized}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources:
          limits: {memory: 1024Mi, cpu: 1000m}
          requests: {memory: 512Mi, cpu: 250m}
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: default
stringData:
  password: s3cr3t
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_stores_canonical_quantities_and_records_ownership() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("sized.yaml", QUANTITIES);
    let out = k.ok(&["apply", "--server-side", "-f", path(&manifest)]);
    assert_eq!(
        out,
        "deployment.apps/sized serverside-applied\nsecret/creds serverside-applied\n"
    );
    let yaml = k.ok(&[
        "get",
        "deployment",
        "sized",
        "-o",
        "yaml",
        "--show-managed-fields",
    ]);
    assert!(yaml.contains("memory: 1Gi"), "{yaml}");
    assert!(yaml.contains("cpu: \"1\""), "{yaml}");
    let d = k.json(&[
        "get",
        "deployment",
        "sized",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["resources"]["limits"],
        serde_json::json!({"memory": "1Gi", "cpu": "1"})
    );
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    let managed = d["metadata"]["managedFields"].as_array().expect("managed");
    assert_eq!(managed.len(), 1, "{managed:?}");
    assert_eq!(managed[0]["manager"], "kubectl");
    assert_eq!(managed[0]["operation"], "Apply");
    let owned = &managed[0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]
        ["f:resources"];
    assert_eq!(
        owned["f:limits"],
        serde_json::json!({"f:cpu": {}, "f:memory": {}}),
        "the applier owns the map's keys, not the map: {owned}"
    );
    let secret = k.json(&["get", "secret", "creds", "-o", "json"]);
    assert_eq!(secret["data"]["password"], "czNjcjN0");
    assert!(secret["stringData"].is_null(), "{secret}");

    // The same manifest applied again is no change: the stored form is what it canonicalizes to.
    k.ok(&["apply", "--server-side", "-f", path(&manifest)]);
    let again = k.json(&[
        "get",
        "deployment",
        "sized",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert_eq!(again["spec"], d["spec"]);
    assert_eq!(again["metadata"]["generation"], 1);
    assert_eq!(
        again["metadata"]["managedFields"][0]["fieldsV1"],
        managed[0]["fieldsV1"]
    );
    sim.shutdown().await;
}

/// Kinds a new user's app carries beyond workloads: RBAC, policy, quotas, scheduling and
/// admission configuration.
const POLICY_KINDS: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: team
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: team
rules:
- apiGroups: [\"\"]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reader
  namespace: team
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
- kind: ServiceAccount
  name: default
  namespace: team
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: deployment-viewer
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: deployment-viewer
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: deployment-viewer
subjects:
- kind: Group
  name: viewers
  apiGroup: rbac.authorization.k8s.io
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny-ingress
  namespace: team
spec:
  podSelector:
    matchLabels: {app: web}
  policyTypes: [Ingress]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: team
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: team
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 512Mi}
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: team
spec:
  hard: {pods: \"10\", requests.memory: 2048Mi}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
description: for the front end
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: check
webhooks:
- name: check.example.com
  clientConfig: {url: \"https://example.com/check\"}
  rules:
  - operations: [CREATE]
    apiGroups: [\"\"]
    apiVersions: [v1]
    resources: [configmaps]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: inject
webhooks:
- name: inject.example.com
  clientConfig: {url: \"https://example.com/inject\"}
  sideEffects: None
  admissionReviewVersions: [v1]
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_policy_and_admission_kinds_apply_get_explain_and_delete() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let manifest = k.file("policy.yaml", POLICY_KINDS);
    let applied = k.ok(&["apply", "--server-side", "-f", path(&manifest)]);
    assert_eq!(
        applied,
        "namespace/team serverside-applied
role.rbac.authorization.k8s.io/reader serverside-applied
rolebinding.rbac.authorization.k8s.io/reader serverside-applied
clusterrole.rbac.authorization.k8s.io/deployment-viewer serverside-applied
clusterrolebinding.rbac.authorization.k8s.io/deployment-viewer serverside-applied
networkpolicy.networking.k8s.io/deny-ingress serverside-applied
poddisruptionbudget.policy/web serverside-applied
limitrange/defaults serverside-applied
resourcequota/quota serverside-applied
priorityclass.scheduling.k8s.io/high serverside-applied
validatingwebhookconfiguration.admissionregistration.k8s.io/check serverside-applied
mutatingwebhookconfiguration.admissionregistration.k8s.io/inject serverside-applied
"
    );

    // Tables with kube-apiserver's printer columns, by the short names discovery gives.
    let table = k.ok(&["get", "rolebinding", "-n", "team"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "ROLE", "AGE"], "{table}");
    assert!(table.contains("Role/reader"), "{table}");
    let table = k.ok(&["get", "netpol", "-n", "team"]);
    assert!(table.contains("deny-ingress   app=web"), "{table}");
    let table = k.ok(&["get", "pdb", "-n", "team"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "MIN",
            "AVAILABLE",
            "MAX",
            "UNAVAILABLE",
            "ALLOWED",
            "DISRUPTIONS",
            "AGE"
        ],
        "{table}"
    );
    let names = k.ok(&["get", "limits,quota,pc,clusterrole", "-A", "-o", "name"]);
    for name in [
        "limitrange/defaults",
        "resourcequota/quota",
        "priorityclass.scheduling.k8s.io/high",
        "clusterrole.rbac.authorization.k8s.io/deployment-viewer",
    ] {
        assert!(names.lines().any(|l| l == name), "{name} in {names}");
    }

    // Stored as kube-apiserver stores them: canonical quantities, defaults, ownership.
    let quota = k.json(&["get", "quota", "quota", "-n", "team", "-o", "json"]);
    assert_eq!(quota["spec"]["hard"]["requests.memory"], "2Gi", "{quota}");
    let pc = k.json(&[
        "get",
        "priorityclass",
        "high",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert_eq!(pc["value"], 1000);
    assert_eq!(pc["metadata"]["managedFields"][0]["manager"], "kubectl");
    assert_eq!(
        pc["metadata"]["managedFields"][0]["fieldsV1"]["f:value"],
        serde_json::json!({})
    );

    // `kubectl explain` reads the OpenAPI v3 schema of each kind.
    for (field, says) in [
        ("role.rules", "PolicyRule"),
        ("rolebinding.roleRef", "RoleRef"),
        ("networkpolicy.spec.podSelector", "LabelSelector"),
        ("pdb.spec.minAvailable", "IntOrString"),
        ("priorityclass.value", "integer"),
        (
            "validatingwebhookconfiguration.webhooks.sideEffects",
            "string",
        ),
        ("resourcequota.spec.hard", "map[string]Quantity"),
    ] {
        let out = k.ok(&["explain", field]);
        assert!(out.contains(says), "kubectl explain {field}: {out}");
        let last = field.rsplit('.').next().unwrap_or_default();
        assert!(
            out.contains(&format!("FIELD: {last}")),
            "kubectl explain {field}: {out}"
        );
    }

    // A wrongly typed field is refused, naming the field; nothing is stored.
    let bad = k.file(
        "bad-pc.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: bad\nvalue: lots\n",
    );
    let out = k.run(&["apply", "--server-side", "-f", path(&bad)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".value: expected numeric (int or float), got string"),
        "{stderr}"
    );
    assert!(!k.run(&["get", "priorityclass", "bad"]).status.success());

    let deleted = k.ok(&["delete", "-f", path(&manifest), "--wait", "--timeout=30s"]);
    for line in [
        "role.rbac.authorization.k8s.io \"reader\" deleted",
        "clusterrolebinding.rbac.authorization.k8s.io \"deployment-viewer\" deleted",
        "priorityclass.scheduling.k8s.io \"high\" deleted",
        "mutatingwebhookconfiguration.admissionregistration.k8s.io \"inject\" deleted",
        "namespace \"team\" deleted",
    ] {
        assert!(deleted.lines().any(|l| l == line), "{line} in {deleted}");
    }
    let left = k.ok(&[
        "get",
        "clusterrole,pc,validatingwebhookconfigurations",
        "-o",
        "name",
    ]);
    assert!(
        !left.contains("deployment-viewer") && !left.contains("high") && !left.contains("check"),
        "{left}"
    );
    let gone = k.run(&["get", "role", "reader", "-n", "team"]);
    assert!(String::from_utf8_lossy(&gone.stderr).contains("(NotFound)"));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_follow_kubectls_validate_flag() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let role = k.file(
        "role.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n  namespace: default\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n  colour: red\n",
    );
    // --validate=strict (the default) asks the server for fieldValidation=Strict.
    let out = k.run(&["create", "-f", path(&role)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("strict decoding error: unknown field \"rules[0].colour\""),
        "{stderr}"
    );
    assert!(!k.run(&["get", "role", "r"]).status.success());
    // --validate=warn: stored without the field, and the server's Warning header printed.
    let out = k.run(&["create", "--validate=warn", "-f", path(&role)]);
    common::assert_success(&out, "kubectl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: unknown field \"rules[0].colour\""),
        "{stderr}"
    );
    let stored = k.json(&["get", "role", "r", "-o", "json"]);
    assert_eq!(
        stored["rules"][0],
        serde_json::json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]})
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_lists_every_builtin_kind() {
    use std::collections::BTreeSet;
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    // kubectl names a resource once per group (at its preferred version), as `plural.group`.
    let name = |group: &str, plural: &str| {
        if group.is_empty() {
            plural.to_string()
        } else {
            format!("{plural}.{group}")
        }
    };
    let derived: BTreeSet<String> = krt_sim::api::builtin_resources()
        .map(|r| name(r.group, r.plural))
        .collect();
    let namespaced: BTreeSet<String> = krt_sim::api::builtin_resources()
        .filter(|r| r.namespaced)
        .map(|r| name(r.group, r.plural))
        .collect();
    let listed = |extra: &[&str]| -> BTreeSet<String> {
        let mut args = vec!["api-resources", "-o", "name"];
        args.extend_from_slice(extra);
        k.ok(&args).lines().map(str::to_string).collect()
    };
    let all = listed(&[]);
    assert_eq!(
        all, derived,
        "kubectl api-resources against k8s-openapi's v1_33 set"
    );
    assert_eq!(listed(&["--namespaced=true"]), namespaced);
    assert!(
        all.contains("roles.rbac.authorization.k8s.io")
            && all.contains("leases.coordination.k8s.io")
    );
    println!("kubectl api-resources lists {} resource types", all.len());
    // Each listable one is servable: kubectl lists every one of them (an empty list, or the
    // cluster's own); the review kinds are create-only.
    let listable = listed(&["--verbs=list"]);
    assert!(
        listable.len() + 6 == all.len() && !listable.contains("tokenreviews.authentication.k8s.io")
    );
    let every: Vec<&str> = listable.iter().map(String::as_str).collect();
    let joined = every.join(",");
    let out = k.run(&["get", &joined, "-A", "-o", "name"]);
    common::assert_success(&out, "kubectl");
    sim.shutdown().await;
}
