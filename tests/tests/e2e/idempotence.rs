//! Idempotence through the CLI against krt-sim (issue 18): one row per kind the
//! embedded cluster serves, each a manifest written the way charts write them,
//! with fields the API server defaults or canonicalizes (quantities in other
//! units, probes, named ports, int-or-string target ports, claim templates,
//! ports with no protocol, empty securityContexts, Secret `stringData`, ...).
//! Applied twice in each mode, the second apply is all `unchanged`, its preview
//! shows no update, and no write reaches the simulator: none in its request
//! counts, none in its watch events.

use crate::support::{Run, SimCluster, krt};
use futures::StreamExt;
use kube::api::{ListParams, WatchEvent, WatchParams};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One kind of the table: how to reach it, and its manifest.
struct Row {
    api_version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    yaml: &'static str,
}

impl Row {
    /// The collection's path: `/api/v1/namespaces/idem/pods`, `/apis/apps/v1/deployments`.
    fn url(&self) -> String {
        let root = match self.api_version {
            "v1" => "/api/v1".to_owned(),
            group_version => format!("/apis/{group_version}"),
        };
        match self.namespaced {
            true => format!("{root}/namespaces/{NS}/{}", self.plural),
            false => format!("{root}/{}", self.plural),
        }
    }
}

/// The namespace of the table's namespaced objects (the first row creates it).
const NS: &str = "idem";

const ROWS: &[Row] = &[
    Row {
        api_version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        namespaced: false,
        yaml: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: idem\n  labels:\n    team: shop\n",
    },
    Row {
        api_version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: idem
  labels: {}
  annotations: {}
data:
  LOG_LEVEL: info
  PORT: "8080"
"#,
    },
    Row {
        api_version: "v1",
        kind: "Secret",
        plural: "secrets",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: idem
stringData:
  password: hunter2
data:
  token: dG9rZW4=
"#,
    },
    Row {
        api_version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        namespaced: true,
        yaml: "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n  namespace: idem\n",
    },
    Row {
        api_version: "v1",
        kind: "Service",
        plural: "services",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: idem
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: http
  - name: metrics
    port: 9090
    targetPort: 9090
  - name: admin
    port: 8081
"#,
    },
    Row {
        api_version: "apps/v1",
        kind: "Deployment",
        plural: "deployments",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: idem
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      securityContext: {}
      serviceAccountName: web
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - name: http
          containerPort: 8080
        resources:
          requests:
            cpu: 1000m
            memory: 1024Mi
          limits:
            memory: 2048Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
        livenessProbe:
          tcpSocket:
            port: 8080
        securityContext: {}
        envFrom:
        - configMapRef:
            name: web-config
"#,
    },
    Row {
        api_version: "apps/v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: idem
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:16
        ports:
        - name: pg
          containerPort: 5432
        resources:
          requests:
            memory: 512Mi
            cpu: "0.5"
        volumeMounts:
        - name: data
          mountPath: /var/lib/postgresql
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1024Mi
"#,
    },
    Row {
        api_version: "apps/v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: idem
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: fluent-bit:3.0
        ports:
        - containerPort: 2020
        resources:
          limits:
            cpu: 200m
            memory: 0.25Gi
"#,
    },
    Row {
        api_version: "apps/v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: cache
  namespace: idem
spec:
  replicas: 1
  selector:
    matchLabels:
      app: cache
  template:
    metadata:
      labels:
        app: cache
    spec:
      containers:
      - name: redis
        image: redis:7
        ports:
        - containerPort: 6379
          protocol: TCP
"#,
    },
    Row {
        api_version: "v1",
        kind: "Pod",
        plural: "pods",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Pod
metadata:
  name: debug
  namespace: idem
spec:
  containers:
  - name: shell
    image: busybox:1.36
    command: [sleep, infinity]
    resources:
      requests:
        cpu: 100m
        memory: 64Mi
"#,
    },
    Row {
        api_version: "batch/v1",
        kind: "Job",
        plural: "jobs",
        namespaced: true,
        yaml: r#"apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: idem
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox:1.36
        command: ["true"]
        resources:
          requests:
            memory: 128Mi
"#,
    },
    Row {
        api_version: "batch/v1",
        kind: "CronJob",
        plural: "cronjobs",
        namespaced: true,
        yaml: r#"apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: idem
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: busybox:1.36
"#,
    },
    Row {
        api_version: "v1",
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        namespaced: false,
        yaml: r#"apiVersion: v1
kind: PersistentVolume
metadata:
  name: idem-pv
spec:
  capacity:
    storage: 2048Mi
  accessModes: [ReadWriteOnce]
  hostPath:
    path: /tmp/idem
"#,
    },
    Row {
        api_version: "v1",
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: uploads
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1024Mi
"#,
    },
    Row {
        api_version: "storage.k8s.io/v1",
        kind: "StorageClass",
        plural: "storageclasses",
        namespaced: false,
        yaml: "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: idem-fast\nprovisioner: example.com/fast\n",
    },
    Row {
        api_version: "networking.k8s.io/v1",
        kind: "Ingress",
        plural: "ingresses",
        namespaced: true,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              name: http
"#,
    },
    Row {
        api_version: "networking.k8s.io/v1",
        kind: "IngressClass",
        plural: "ingressclasses",
        namespaced: false,
        yaml: "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: idem-nginx\nspec:\n  controller: example.com/ingress-nginx\n",
    },
    Row {
        api_version: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        namespaced: true,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: db
  namespace: idem
spec:
  podSelector:
    matchLabels:
      app: db
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app: web
    ports:
    - port: 5432
    - port: pg
"#,
    },
    Row {
        api_version: "policy/v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        namespaced: true,
        yaml: r#"apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
"#,
    },
    Row {
        api_version: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        namespaced: true,
        yaml: r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  maxReplicas: 4
  metrics:
  - type: Resource
    resource:
      name: memory
      target:
        type: AverageValue
        averageValue: 1024Mi
"#,
    },
    Row {
        api_version: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        plural: "endpointslices",
        namespaced: true,
        yaml: r#"apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: external-db
  namespace: idem
addressType: IPv4
endpoints:
- addresses: ["10.0.0.5"]
ports:
- name: pg
  port: 5432
"#,
    },
    Row {
        api_version: "coordination.k8s.io/v1",
        kind: "Lease",
        plural: "leases",
        namespaced: true,
        yaml: "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: idem\nspec:\n  holderIdentity: web-0\n  leaseDurationSeconds: 15\n",
    },
    Row {
        api_version: "v1",
        kind: "Event",
        plural: "events",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Event
metadata:
  name: deployed
  namespace: idem
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: idem
reason: Deployed
message: deployed by the idempotence suite
type: Normal
"#,
    },
    Row {
        api_version: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        namespaced: false,
        yaml: r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: string
              replicas:
                type: integer
                default: 1
"#,
    },
    Row {
        api_version: "example.com/v1",
        kind: "Widget",
        plural: "widgets",
        namespaced: true,
        yaml: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: blue\n  namespace: idem\nspec:\n  size: large\n",
    },
];

fn show(run: &Run) -> String {
    format!(
        "exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    )
}

/// A write to one of the table's objects, as its watch events show it.
#[derive(Debug)]
struct Write {
    kind: &'static str,
    name: String,
    event: &'static str,
    change: String,
}

/// The table's objects as their watch events see them: every event on them is
/// compared with the version before (the server's own fields and `status`
/// left out, as krt's normalization leaves them out, and krt's entry of
/// `managedFields` kept), so a controller's status update is not a write and
/// anything krt sent is.
struct Watches {
    writes: Arc<Mutex<Vec<Write>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// What of an object a write by krt changes: everything but `status` and the
/// fields the server sets, plus krt's own `managedFields` entries.
fn written_part(object: &Value) -> Value {
    let mut part = krt_guest::normalize::normalize(object);
    let krt: Vec<Value> = object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["manager"] == "krt")
        .cloned()
        .collect();
    part["krtManagedFields"] = Value::Array(krt);
    part
}

impl Watches {
    /// Starts watching every kind of the table from its current version
    /// (objects as plain JSON: the simulator's answer is what is checked).
    async fn start(cluster: &SimCluster) -> Watches {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for row in ROWS {
            let request = kube::core::Request::new(row.url());
            let list = request.list(&ListParams::default()).unwrap();
            let list: Value = cluster
                .client
                .request(list)
                .await
                .unwrap_or_else(|e| panic!("list {}: {e}", row.kind));
            let name_of = |o: &Value| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            let mut seen: BTreeMap<String, Value> = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| (name_of(o), written_part(o)))
                .collect();
            let rv = list["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default();
            let watch = request
                .watch(&WatchParams::default().timeout(120), rv)
                .unwrap();
            let stream = cluster
                .client
                .request_events::<Value>(watch)
                .await
                .unwrap_or_else(|e| panic!("watch {}: {e}", row.kind));
            let writes = writes.clone();
            tasks.push(tokio::spawn(async move {
                let mut stream = stream.boxed();
                while let Some(Ok(event)) = stream.next().await {
                    let (what, object) = match event {
                        WatchEvent::Added(o) => ("ADDED", o),
                        WatchEvent::Modified(o) => ("MODIFIED", o),
                        WatchEvent::Deleted(o) => ("DELETED", o),
                        _ => continue,
                    };
                    let name = name_of(&object);
                    let now = (what != "DELETED").then(|| written_part(&object));
                    let before = match &now {
                        Some(now) => seen.insert(name.clone(), now.clone()),
                        None => seen.remove(&name),
                    };
                    if before != now {
                        writes.lock().unwrap().push(Write {
                            kind: row.kind,
                            name,
                            event: what,
                            change: format!(
                                "before: {}\nafter: {}",
                                before.unwrap_or_default(),
                                now.unwrap_or_default()
                            ),
                        });
                    }
                }
            }));
        }
        Watches { writes, tasks }
    }

    /// Stops watching (after a moment for the last events to arrive): the writes seen.
    async fn stop(self) -> Vec<Write> {
        tokio::time::sleep(Duration::from_millis(500)).await;
        for task in &self.tasks {
            task.abort();
        }
        std::mem::take(&mut *self.writes.lock().unwrap())
    }
}

/// The table as one stack.
fn stack_yaml() -> String {
    ROWS.iter()
        .map(|r| r.yaml)
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Applies the table twice in `mode`: the second apply is all unchanged, its
/// preview (and a separate preview) shows no update, and nothing is written.
async fn second_apply_changes_nothing(mode: &str) {
    let cluster = SimCluster::start().await;
    let file = cluster.dir().join("table.yaml");
    std::fs::write(&file, stack_yaml()).unwrap();
    let file = file.to_str().unwrap();
    let apply = [
        "--mode",
        mode,
        "apply",
        "-f",
        file,
        "--yes",
        "--timeout",
        "60s",
    ];
    let first = krt(&cluster.kubeconfig, &apply, None).await;
    assert_eq!(first.code, 0, "the first apply ({mode}): {}", show(&first));
    assert!(
        first
            .stdout
            .contains(&format!("Applied: {} created, 0 updated", ROWS.len())),
        "{}",
        show(&first)
    );

    let watches = Watches::start(&cluster).await;
    cluster.sim().reset_requests();
    let mut json = vec!["-o", "json"];
    json.extend_from_slice(&apply);
    let second = krt(&cluster.kubeconfig, &json, None).await;
    let preview = krt(
        &cluster.kubeconfig,
        &["--mode", mode, "preview", "-f", file],
        None,
    )
    .await;
    let requests = cluster.sim().requests();
    let writes = watches.stop().await;

    assert_eq!(
        second.code,
        0,
        "the second apply ({mode}): {}",
        show(&second)
    );
    let doc: Value =
        serde_json::from_str(&second.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&second)));
    let not_unchanged: Vec<String> = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] != "unchanged" || r["result"] != "unchanged")
        .map(|r| format!("{} {} {} {}", r["id"], r["action"], r["result"], r["diff"]))
        .collect();
    assert!(
        not_unchanged.is_empty(),
        "false updates in {mode} mode:\n{}\n{}",
        not_unchanged.join("\n"),
        show(&second)
    );
    assert_eq!(
        doc["summary"],
        serde_json::json!({"unchanged": ROWS.len()}),
        "{}",
        show(&second)
    );
    assert!(
        second.stderr.contains("Nothing to change."),
        "{}",
        show(&second)
    );
    for out in [&second.stderr, &preview.stdout] {
        assert!(
            out.contains(&format!(
                "Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, {} unchanged.",
                ROWS.len()
            )) && !out.contains("~ update"),
            "the preview shows an update ({mode}):\n{out}"
        );
    }
    assert_eq!(preview.code, 0, "{}", show(&preview));

    let sent: Vec<(&str, &str, u64)> = requests
        .iter()
        .filter(|(verb, _, _)| ["POST", "PUT", "PATCH", "DELETE"].iter().any(|w| verb == w))
        .collect();
    assert!(
        sent.is_empty(),
        "writes reached the simulator ({mode}): {sent:?}"
    );
    assert!(
        writes.is_empty(),
        "the watch events show writes ({mode}):\n{}",
        writes
            .iter()
            .map(|w| format!("{} {} {}:\n{}", w.event, w.kind, w.name, w.change))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // The same watches see a real change: one value of the ConfigMap.
    std::fs::write(
        cluster.dir().join("table.yaml"),
        stack_yaml().replace("LOG_LEVEL: info", "LOG_LEVEL: debug"),
    )
    .unwrap();
    let watches = Watches::start(&cluster).await;
    let change = krt(&cluster.kubeconfig, &apply, None).await;
    let writes = watches.stop().await;
    assert_eq!(change.code, 0, "{}", show(&change));
    assert!(
        change.stdout.contains(&format!(
            "Applied: 0 created, 1 updated, 0 replaced, 0 deleted, {} unchanged",
            ROWS.len() - 1
        )),
        "{}",
        show(&change)
    );
    let seen: Vec<(&str, &str, &str)> = writes
        .iter()
        .map(|w| (w.event, w.kind, w.name.as_str()))
        .collect();
    assert_eq!(seen, [("MODIFIED", "ConfigMap", "web-config")], "{mode}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_reapplied_server_side_is_unchanged_and_writes_nothing() {
    second_apply_changes_nothing("server-side").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_reapplied_client_side_is_unchanged_and_writes_nothing() {
    second_apply_changes_nothing("client-side").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_has_a_row_for_every_kind_the_simulator_serves() {
    let cluster = SimCluster::start().await;
    let discovery = kube::Discovery::new(cluster.client.clone())
        .run()
        .await
        .expect("discovery");
    let mut missing = Vec::new();
    for group in discovery.groups() {
        for (ar, _) in group.recommended_resources() {
            if !ROWS
                .iter()
                .any(|r| r.kind == ar.kind && r.api_version == ar.api_version)
            {
                missing.push(format!("{}/{}", ar.api_version, ar.kind));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "kinds served without a row in the idempotence table: {missing:?}"
    );
}
