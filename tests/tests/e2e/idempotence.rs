//! Idempotence through the CLI against krt-sim (issue 18): one row per kind the
//! embedded cluster serves, each a manifest written the way charts write them,
//! with fields the API server defaults or canonicalizes (quantities in other
//! units, probes, named ports, int-or-string target ports, claim templates,
//! ports with no protocol, empty securityContexts, Secret `stringData`, ...).
//! Applied twice in each mode, the second apply is all `unchanged`, its preview
//! shows no update, and no write reaches the simulator: none in its request
//! counts, none in its watch events.

use crate::support::{TestCluster, krt, show};
use futures::StreamExt;
use krt_testkit::kinds::{KINDS, KindSample};
use kube::api::{ListParams, WatchEvent, WatchParams};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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

/// A writer of an object: its `managedFields` entry's manager, operation and subresource.
type Writer = (String, String, String);

/// Each writer's `managedFields` entry of `object` (its time moves with each write of it).
fn writers(object: &Value) -> BTreeMap<Writer, Value> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let writer = (
                text(&m["manager"]),
                text(&m["operation"]),
                text(&m["subresource"]),
            );
            (writer, m.clone())
        })
        .collect()
}

/// Whether the change from `before` to `after` was written by someone else than krt: each
/// writer whose `managedFields` entry moved is another manager (a controller's taints on a
/// Node, say). An entry's time has a second's resolution, so a writer's second write within
/// the same second may move nothing: the change is then the latest writer's, and krt's when
/// krt is among the latest.
fn foreign(before: &Value, after: &Value) -> bool {
    let (before, after) = (writers(before), writers(after));
    let moved: Vec<&Writer> = after
        .keys()
        .chain(before.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    if !moved.is_empty() {
        return moved.iter().all(|(manager, _, _)| manager != "krt");
    }
    let time = |entry: &Value| entry["time"].as_str().unwrap_or_default().to_owned();
    let latest = after.values().map(time).max().unwrap_or_default();
    !after
        .iter()
        .any(|((manager, _, _), entry)| manager == "krt" && time(entry) == latest)
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
    async fn start(cluster: &TestCluster, rows: &[&'static KindSample]) -> Watches {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        // Only the table's own objects, per kind: a real cluster's controllers write others of
        // the same kinds all the time (the Events they record about the table's objects).
        let mut names: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for row in rows {
            let object: Value = serde_saphyr::from_str(row.yaml).expect("a sample parses");
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            names.entry(row.kind).or_default().insert(name.to_owned());
        }
        for row in rows.iter().copied() {
            let ours = names[row.kind].clone();
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
            let mut raw: BTreeMap<String, Value> = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| (name_of(o), o.clone()))
                .collect();
            let mut seen: BTreeMap<String, Value> = raw
                .iter()
                .map(|(name, o)| (name.clone(), written_part(o)))
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
                    if !ours.contains(&name) {
                        continue;
                    }
                    let now = (what != "DELETED").then(|| written_part(&object));
                    let before = match &now {
                        Some(now) => seen.insert(name.clone(), now.clone()),
                        None => seen.remove(&name),
                    };
                    let earlier = raw.insert(name.clone(), object.clone());
                    let by_another =
                        now.is_some() && earlier.is_some_and(|earlier| foreign(&earlier, &object));
                    if before != now && !by_another {
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
fn stack_yaml(rows: &[&KindSample]) -> String {
    rows.iter()
        .map(|r| r.yaml)
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The rows of the table whose kind `cluster` serves, or that a CRD of the table defines: all of
/// them on krt-sim; a real cluster may lack some (an alpha version it does not enable), which
/// are named and left out.
async fn served_rows(cluster: &TestCluster) -> Vec<&'static KindSample> {
    let discovery = kube::Discovery::new(cluster.client.clone())
        .run()
        .await
        .expect("discovery");
    let defined_here = |group: &str| {
        KINDS.iter().any(|r| {
            r.kind == "CustomResourceDefinition" && r.yaml.contains(&format!("group: {group}\n"))
        })
    };
    let (served, missing): (Vec<&KindSample>, Vec<&KindSample>) = KINDS.iter().partition(|r| {
        let (group, version) = r.api_version.split_once('/').unwrap_or(("", r.api_version));
        defined_here(group)
            || discovery
                .resolve_gvk(&kube::api::GroupVersionKind::gvk(group, version, r.kind))
                .is_some()
    });
    for row in missing {
        eprintln!(
            "not served by this cluster, left out: {} {}",
            row.api_version, row.kind
        );
    }
    served
}

/// Applies the table twice in `mode`: the second apply is all unchanged, its
/// preview (and a separate preview) shows no update, and nothing is written.
async fn second_apply_changes_nothing(mode: &str) {
    let cluster = TestCluster::start().await;
    let rows = served_rows(&cluster).await;
    let file = cluster.dir().join("table.yaml");
    std::fs::write(&file, stack_yaml(&rows)).unwrap();
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
            .contains(&format!("Applied: {} created, 0 updated", rows.len())),
        "{}",
        show(&first)
    );

    let watches = Watches::start(&cluster, &rows).await;
    cluster.reset_requests();
    let mut json = vec!["-o", "json"];
    json.extend_from_slice(&apply);
    let second = krt(&cluster.kubeconfig, &json, None).await;
    let preview = krt(
        &cluster.kubeconfig,
        &["--mode", mode, "preview", "-f", file],
        None,
    )
    .await;
    let requests = cluster.requests();
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
        serde_json::json!({"unchanged": rows.len()}),
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
                rows.len()
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
        stack_yaml(&rows).replace("LOG_LEVEL: info", "LOG_LEVEL: debug"),
    )
    .unwrap();
    let watches = Watches::start(&cluster, &rows).await;
    let change = krt(&cluster.kubeconfig, &apply, None).await;
    let writes = watches.stop().await;
    assert_eq!(change.code, 0, "{}", show(&change));
    assert!(
        change.stdout.contains(&format!(
            "Applied: 0 created, 1 updated, 0 replaced, 0 deleted, {} unchanged",
            rows.len() - 1
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
async fn the_table_has_a_row_for_every_kind_the_simulator_serves_for_writing() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "it checks the table against what krt-sim serves",
    )
    .await;
    let discovery = kube::Discovery::new(cluster.client.clone())
        .run()
        .await
        .expect("discovery");
    let mut missing = Vec::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            // A kind served read-only (ComponentStatus: get and list, as
            // kube-apiserver serves it) has nothing to apply.
            if !caps.supports_operation(kube::discovery::verbs::PATCH) {
                continue;
            }
            if !KINDS
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
