//! What real `kubectl` shows of the simulator: a CRD's printer columns (and `Age` alone for a
//! CRD declaring none), the Events the simulated controllers record, selected by field and read
//! through both Event APIs, and the `default` ServiceAccount and `kube-root-ca.crt` ConfigMap
//! every namespace gets.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::process::Command;

use common::{Kubectl, eventually, path};
use krt_sim::api::Request;
use serde_json::{Value, json};

/// Each line of kubectl's table output as its whitespace-separated words.
fn rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Each line of kubectl's table output cut into cells at the columns of its header (whose
/// names have no spaces), so an empty cell is `""`.
fn cells(table: &str) -> Vec<Vec<String>> {
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    let starts: Vec<usize> = header
        .char_indices()
        .filter(|(i, c)| *c != ' ' && (*i == 0 || header.as_bytes()[i - 1] == b' '))
        .map(|(i, _)| i)
        .collect();
    std::iter::once(header)
        .chain(lines)
        .map(|line| {
            starts
                .iter()
                .enumerate()
                .map(|(n, start)| {
                    let end = starts.get(n + 1).copied().unwrap_or(line.len());
                    line.get(*start..end.min(line.len()))
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                })
                .collect()
        })
        .collect()
}

/// `words` as owned strings, for comparing with [`rows`].
fn row(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

/// An RFC 3339 time `days` days and an hour ago (a date column shows it as `<days>d`).
fn days_ago(days: u32) -> String {
    let out = Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("{days} days ago 1 hour ago"),
            "+%FT%TZ",
        ])
        .output()
        .expect("date runs");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A namespaced `example.com/v1` CRD of `kind` whose schema keeps any field, with `more` (YAML
/// of further keys of its version, indented as they are) at the end.
fn crd_yaml(kind: &str, more: &str) -> String {
    let singular = kind.to_lowercase();
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {singular}s.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{kind: {kind}, plural: {singular}s, singular: {singular}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
{more}"#
    )
}

/// The Widget CRD's printer columns.
const WIDGET_COLUMNS: &str = r#"    additionalPrinterColumns:
    - name: Ready
      type: string
      jsonPath: .status.conditions[?(@.type=="Ready")].status
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Mode
      type: string
      jsonPath: .spec.mode
      priority: 1
    - name: Since
      type: date
      jsonPath: .status.since
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_show_their_printer_columns() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "-f",
        path(&k.file(
            "crds.yaml",
            &format!(
                "{}---\n{}",
                crd_yaml("Widget", WIDGET_COLUMNS),
                crd_yaml("Gadget", "")
            ),
        )),
    ]);
    eventually(10, "the CRDs to be served", || {
        k.run(&["get", "widgets,gadgets"]).status.success()
    });
    let since = days_ago(30);
    // JSON documents in one YAML stream (a `kind: List` would send kubectl's validation to
    // `/openapi/v2` in protobuf, which the simulator does not serve). The stream opens with
    // `---`: a stream that starts with `{` is read as JSON by kubectl before v1.33.
    let objects = format!(
        r#"---
{{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {{"name": "ready", "namespace": "default"}},
  "spec": {{"replicas": 3, "mode": "fast"}},
  "status": {{"since": "{since}", "conditions": [{{"type": "Synced", "status": "False"}},
                                            {{"type": "Ready", "status": "True"}}]}}}}
---
{{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {{"name": "new", "namespace": "default"}},
  "spec": {{"replicas": 1}}}}
---
{{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {{"name": "g", "namespace": "default"}}}}
"#
    );
    k.ok(&["apply", "-f", path(&k.file("objects.yaml", &objects))]);
    let widgets = k.ok(&["get", "widgets"]);
    // A column whose JSONPath selects nothing is an empty cell, as kubectl prints a null one.
    assert_eq!(
        cells(&widgets),
        [
            row(&["NAME", "READY", "REPLICAS", "SINCE"]),
            row(&["new", "", "1", ""]),
            row(&["ready", "True", "3", "30d"]),
        ],
        "{widgets}"
    );
    let wide = k.ok(&["get", "widgets", "-o", "wide"]);
    assert_eq!(
        cells(&wide),
        [
            row(&["NAME", "READY", "REPLICAS", "MODE", "SINCE"]),
            row(&["new", "", "1", "", ""]),
            row(&["ready", "True", "3", "fast", "30d"]),
        ],
        "{wide}"
    );
    let gadgets = k.ok(&["get", "gadgets"]);
    let gadget_rows = rows(&gadgets);
    assert_eq!(gadget_rows[0], row(&["NAME", "AGE"]), "{gadgets}");
    assert_eq!(gadget_rows.len(), 2, "{gadgets}");
    assert_eq!(gadget_rows[1][0], "g");
    let age = &gadget_rows[1][1];
    assert!(
        age.ends_with('s') && age[..age.len() - 1].parse::<u32>().is_ok(),
        "{gadgets}"
    );
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
";

/// The `items` of an Event list kubectl printed as JSON.
fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_records_the_controllers_events() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", path(&k.file("web.yaml", DEPLOYMENT))]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout=30s"]);
    let deployment = k.json(&["get", "deployment", "web", "-o", "json"]);
    let rs = k.json(&["get", "replicasets", "-l", "app=web", "-o", "json"]);
    let rs_name = rs["items"][0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();

    let scaling = [
        "--field-selector",
        "involvedObject.kind=Deployment,reason=ScalingReplicaSet",
    ];
    let events = k.json(&["get", "events", scaling[0], scaling[1], "-o", "json"]);
    let events = items(&events);
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(
        e["message"],
        format!("Scaled up replica set {rs_name} from 0 to 2")
    );
    assert_eq!(e["type"], "Normal");
    assert_eq!(e["count"], 1);
    assert_eq!(e["source"], json!({"component": "deployment-controller"}));
    assert_eq!(e["reportingComponent"], "deployment-controller");
    assert_eq!(e["involvedObject"]["uid"], deployment["metadata"]["uid"]);
    assert_eq!(e["involvedObject"]["apiVersion"], "apps/v1");
    assert!(e["involvedObject"]["resourceVersion"].is_string());
    assert!(e["firstTimestamp"].is_string() && e["lastTimestamp"].is_string());
    let table = k.ok(&["get", "events", scaling[0], scaling[1]]);
    let lines = rows(&table);
    assert_eq!(
        lines[0],
        row(&["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
    );
    let message = format!("Scaled up replica set {rs_name} from 0 to 2");
    let mut expected = row(&["Normal", "ScalingReplicaSet", "deployment/web"]);
    expected.extend(message.split(' ').map(str::to_string));
    assert_eq!(lines[1][1..], expected[..], "{table}");
    assert_eq!(lines.len(), 2, "{table}");

    let created = k.json(&[
        "get",
        "events",
        "--field-selector",
        "type=Normal,involvedObject.kind=ReplicaSet,reason=SuccessfulCreate",
        "-o",
        "json",
    ]);
    let pods = k.json(&["get", "pods", "-l", "app=web", "-o", "json"]);
    let mut pod_names: Vec<String> = items(&pods)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    pod_names.sort();
    let mut messages: Vec<String> = items(&created)
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    messages.sort();
    let expected: Vec<String> = pod_names
        .iter()
        .map(|p| format!("Created pod: {p}"))
        .collect();
    assert_eq!(messages, expected);
    assert!(
        items(&created)
            .iter()
            .all(|e| e["source"]["component"] == "replicaset-controller"
                && e["involvedObject"]["name"] == rs_name.as_str())
    );

    // The scheduler's and the kubelet's Events about one Pod.
    let pod = &pod_names[0];
    let selector = format!("involvedObject.name={pod}");
    let about_pod = k.json(&["get", "events", "--field-selector", &selector, "-o", "json"]);
    let reasons: Vec<(String, String)> = items(&about_pod)
        .iter()
        .map(|e| {
            (
                e["reason"].as_str().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for expected in [
        (
            "Scheduled".to_string(),
            format!("Successfully assigned default/{pod} to krt-sim-node"),
        ),
        (
            "Pulled".into(),
            "Container image \"nginx:1.25\" already present on machine".into(),
        ),
        ("Created".into(), "Created container: nginx".into()),
        ("Started".into(), "Started container nginx".into()),
    ] {
        assert!(reasons.contains(&expected), "{expected:?} in {reasons:?}");
    }
    let scheduled = k.json(&[
        "get",
        "events",
        "--field-selector",
        &format!("{selector},source=default-scheduler"),
        "-o",
        "json",
    ]);
    assert_eq!(items(&scheduled).len(), 1);
    assert_eq!(items(&scheduled)[0]["action"], "Binding");
    let kubelet = k.json(&[
        "get",
        "events",
        "--field-selector",
        &format!("{selector},source=kubelet,reason=Started"),
        "-o",
        "json",
    ]);
    assert_eq!(
        items(&kubelet)[0]["involvedObject"]["fieldPath"],
        "spec.containers{nginx}"
    );
    assert_eq!(items(&kubelet)[0]["source"]["host"], "krt-sim-node");

    // The same storage through events.k8s.io/v1.
    let v1 = k.json(&["get", "events", "-o", "json"]);
    let new_api = k.json(&["get", "events.v1.events.k8s.io", "-o", "json"]);
    let names = |list: &Value| -> Vec<String> {
        let mut names: Vec<String> = items(list)
            .iter()
            .map(|e| e["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&v1), names(&new_api));
    assert!(names(&v1).len() >= 9, "{:?}", names(&v1));
    let converted = k.json(&[
        "get",
        "events.v1.events.k8s.io",
        scaling[0],
        scaling[1],
        "-o",
        "json",
    ]);
    let converted = &items(&converted)[0];
    assert_eq!(converted["apiVersion"], "events.k8s.io/v1");
    assert_eq!(converted["note"], message);
    assert_eq!(converted["regarding"]["name"], "web");
    assert_eq!(converted["reportingController"], "deployment-controller");
    assert_eq!(
        converted["deprecatedSource"]["component"],
        "deployment-controller"
    );
    assert_eq!(converted["deprecatedCount"], 1);
    assert!(converted.get("message").is_none());

    // An unknown field label is the real server's 400.
    let bad = k.run(&["get", "events", "--field-selector", "spec.nodeName=x"]);
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("field label not supported: spec.nodeName"),
        "{stderr}"
    );

    // `kubectl events --for` lists the Deployment's Events.
    let for_web = k.ok(&["events", "--for", "deployment/web"]);
    let lines = rows(&for_web);
    assert_eq!(
        lines[0],
        row(&["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
    );
    assert_eq!(lines.len(), 2, "{for_web}");
    assert_eq!(lines[1][1..4], expected_head(), "{for_web}");
}

fn expected_head() -> [String; 3] {
    ["Normal", "ScalingReplicaSet", "Deployment/web"].map(str::to_string)
}

/// An `events.k8s.io/v1` Event `e1` about the ConfigMap `cm`, as a request body.
fn events_api_event() -> Vec<u8> {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e1"}, "eventTime": "2025-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Sync", "reason": "Synced", "type": "Normal", "note": "all good",
        "regarding": {"kind": "ConfigMap", "namespace": "default", "name": "cm"}})
    .to_string()
    .into_bytes()
}

#[test]
fn an_events_api_write_owns_its_fields_as_that_api_names_them() {
    let cluster = krt_sim::api::Cluster::new(1000);
    let created = cluster.handle(
        &Request::post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            events_api_event(),
        )
        .query("fieldManager", "ctl"),
    );
    assert_eq!(created.code, 201, "{}", created.body);
    let entry = &created.body["metadata"]["managedFields"][0];
    assert_eq!(entry["apiVersion"], "events.k8s.io/v1");
    let fields = &entry["fieldsV1"];
    assert!(
        fields["f:note"].is_object() && fields["f:regarding"].is_object(),
        "{fields}"
    );
    assert!(fields["f:message"].is_null(), "{fields}");
    // Read through core v1, the entry stays in its version, as kube-apiserver keeps it.
    let core = cluster.handle(&Request::get("/api/v1/namespaces/default/events/e1"));
    assert_eq!(core.body["metadata"]["managedFields"][0], *entry);
    // A core write of the message takes `note` from the events.k8s.io writer: the same field.
    let patched = cluster.handle(
        &Request::new("PATCH", "/api/v1/namespaces/default/events/e1")
            .body(
                "application/merge-patch+json",
                br#"{"message": "edited"}"#.to_vec(),
            )
            .query("fieldManager", "editor"),
    );
    assert_eq!(patched.code, 200, "{}", patched.body);
    let entries = patched.body["metadata"]["managedFields"]
        .as_array()
        .unwrap();
    let of = |manager: &str| {
        entries
            .iter()
            .find(|e| e["manager"] == manager)
            .unwrap_or_else(|| panic!("{manager} in {entries:?}"))
    };
    assert!(of("ctl")["fieldsV1"]["f:note"].is_null(), "{entries:?}");
    assert!(
        of("ctl")["fieldsV1"]["f:regarding"].is_object(),
        "{entries:?}"
    );
    assert_eq!(of("editor")["apiVersion"], "v1");
    assert!(
        of("editor")["fieldsV1"]["f:message"].is_object(),
        "{entries:?}"
    );
}

#[test]
fn events_written_through_either_api_read_through_the_other() {
    let cluster = krt_sim::api::Cluster::new(1000);
    let mut watch = cluster
        .watch(&Request::get(
            "/apis/events.k8s.io/v1/namespaces/default/events",
        ))
        .unwrap();
    let created = cluster.handle(&Request::post(
        "/apis/events.k8s.io/v1/namespaces/default/events",
        events_api_event(),
    ));
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(created.body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(created.body["note"], "all good");
    let core = cluster.handle(&Request::get("/api/v1/namespaces/default/events/e1"));
    assert_eq!(core.code, 200);
    assert_eq!(core.body["apiVersion"], "v1");
    assert_eq!(core.body["message"], "all good");
    assert_eq!(core.body["involvedObject"]["name"], "cm");
    assert_eq!(core.body["reportingComponent"], "example.com/ctl");
    assert!(core.body.get("note").is_none());
    let selected = cluster
        .handle(&Request::get("/api/v1/events").query("fieldSelector", "source=example.com/ctl"));
    assert_eq!(selected.body["items"].as_array().map(Vec::len), Some(1));

    let core_created = cluster.handle(&Request::post(
        "/api/v1/namespaces/default/events",
        json!({"metadata": {"name": "e2"}, "reason": "Old", "message": "from v1",
            "involvedObject": {"kind": "Pod", "name": "p"}, "source": {"component": "c"},
            "count": 4, "type": "Warning"})
        .to_string()
        .into_bytes(),
    ));
    assert_eq!(core_created.code, 201, "{}", core_created.body);
    let seen = cluster.handle(&Request::get(
        "/apis/events.k8s.io/v1/namespaces/default/events/e2",
    ));
    assert_eq!(seen.body["note"], "from v1");
    assert_eq!(seen.body["deprecatedCount"], 4);
    assert_eq!(seen.body["deprecatedSource"]["component"], "c");
    let patched = cluster.handle(
        &Request::new(
            "PATCH",
            "/apis/events.k8s.io/v1/namespaces/default/events/e2",
        )
        .body(
            "application/merge-patch+json",
            br#"{"note": "patched"}"#.to_vec(),
        ),
    );
    assert_eq!(patched.code, 200, "{}", patched.body);
    assert_eq!(patched.body["note"], "patched");
    let core = cluster.handle(&Request::get("/api/v1/namespaces/default/events/e2"));
    assert_eq!(core.body["message"], "patched");

    let watched = watch.poll().unwrap();
    let notes: Vec<(&str, &str)> = watched
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["object"]["note"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            ("ADDED", "all good"),
            ("ADDED", "from v1"),
            ("MODIFIED", "patched")
        ]
    );
    let bad = cluster
        .handle(&Request::get("/apis/events.k8s.io/v1/events").query("fieldSelector", "note=x"));
    assert_eq!(bad.code, 400);
    assert_eq!(bad.body["message"], "field label not supported: note");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_namespace_gets_its_default_account_and_root_ca() {
    let sim = krt_sim::Sim::start_with(krt_sim::SimConfig {
        tls: true,
        token: Some("s3cret".into()),
        ..krt_sim::SimConfig::default()
    })
    .await
    .expect("sim starts");
    let k = Kubectl::new(&sim);
    // The server publishes its CA from the start.
    let ca = sim.ca_pem().expect("a CA").to_string();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        k.ok(&["get", "serviceaccount", "default", "-n", ns]);
        let cm = k.json(&[
            "get",
            "configmap",
            "kube-root-ca.crt",
            "-n",
            ns,
            "-o",
            "json",
        ]);
        assert_eq!(cm["data"]["ca.crt"], ca.as_str(), "{ns}");
    }
    let namespace = r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}"#;
    k.ok(&["apply", "-f", path(&k.file("team.json", namespace))]);
    // The default ServiceAccount and the root CA ConfigMap of `team` both exist.
    let defaults = || {
        k.run(&["get", "serviceaccount", "default", "-n", "team"])
            .status
            .success()
            && k.run(&["get", "configmap", "kube-root-ca.crt", "-n", "team"])
                .status
                .success()
    };
    eventually(10, "the new namespace's defaults", defaults);
    let accounts = k.ok(&["get", "serviceaccounts", "-n", "team", "-o", "name"]);
    assert_eq!(accounts, "serviceaccount/default\n");
    let cm = k.json(&[
        "get",
        "configmap",
        "kube-root-ca.crt",
        "-n",
        "team",
        "-o",
        "json",
    ]);
    assert_eq!(cm["data"], json!({"ca.crt": ca}));
    assert!(
        cm["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Contains a CA bundle"))
    );
    // Deleted, both come back.
    k.ok(&["delete", "configmap", "kube-root-ca.crt", "-n", "team"]);
    k.ok(&["delete", "serviceaccount", "default", "-n", "team"]);
    eventually(10, "the defaults to be recreated", defaults);
}

#[test]
fn watches_as_table_show_the_printer_columns() {
    let cluster = krt_sim::api::Cluster::new(1000);
    let mut crd = common::widget_crd();
    crd["spec"]["names"]["listKind"] = json!("WidgetList");
    crd["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}]);
    let created = cluster.handle(&Request::post(common::CRDS, crd.to_string().into_bytes()));
    assert_eq!(created.code, 201, "{}", created.body);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let mut request = Request::get(widgets);
    request.accept = "application/json;as=Table;v=v1;g=meta.k8s.io".into();
    let mut watch = cluster.watch(&request).unwrap();
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"replicas": 4}});
    let posted = cluster.handle(&Request::post(widgets, widget.to_string().into_bytes()));
    assert_eq!(posted.code, 201, "{}", posted.body);
    let events = watch.poll().unwrap();
    assert_eq!(events.len(), 1);
    let table = &events[0]["object"];
    assert_eq!(table["kind"], "Table");
    assert_eq!(
        common::names(&table["columnDefinitions"]),
        ["Name", "Replicas"]
    );
    assert_eq!(table["rows"][0]["cells"], json!(["w", 4]));
}
