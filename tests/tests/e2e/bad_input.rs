//! Bad input changes nothing: every input of `tests/data/bad/` (plus the big and deep
//! ones generated here, see `GENERATED.md` there) makes `krt preview` and `krt apply`
//! exit 1 with its own message on stderr (the substrings of `<case>.expect`), and the
//! simulator holds exactly the objects, at the same resourceVersions, as before. Invalid
//! IDs given to the Rust `Runtime` API are refused without a request that writes.

use crate::support::{
    Run, Runtimes, TestCluster, cache_dir, krt_bin, temp_dir, watch_for, workspace,
};
use krt_host::Runtime;
use krt_host::model::{ApplyOptions, DeleteRequest, ReadOptions, Resource, StatusCode};
use kube::api::{Api, DynamicObject};
use kube::discovery::{Discovery, verbs};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One bad input and what stderr must say about it.
struct Case {
    name: String,
    input: Input,
    expect: Vec<String>,
}

/// Where a case's input comes from.
enum Input {
    /// `-f FILE`.
    File(PathBuf),
    /// `-f -` with these bytes on standard input.
    Stdin(Vec<u8>),
}

/// The cases of `tests/data/bad`: each `<case>.expect` and the input beside it.
fn corpus() -> Vec<Case> {
    let dir = workspace().join("tests/data/bad");
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "expect"))
        .map(|expect| {
            let stem = expect.file_stem().unwrap().to_str().unwrap().to_owned();
            let inputs: Vec<PathBuf> = ["yaml", "yml", "json"]
                .iter()
                .map(|ext| dir.join(format!("{stem}.{ext}")))
                .filter(|p| p.exists())
                .collect();
            assert_eq!(inputs.len(), 1, "{stem}: one input beside its .expect");
            Case {
                name: stem,
                input: Input::File(inputs.into_iter().next().unwrap()),
                expect: expectations(&std::fs::read_to_string(&expect).unwrap()),
            }
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn expectations(text: &str) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    assert!(!lines.is_empty(), "an .expect file names a message");
    lines
}

/// The inputs too big or too deep to keep in the repository, written to `dir`.
fn generated(dir: &Path) -> Vec<Case> {
    let write = |name: &str, text: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Input::File(path)
    };
    let depth = 100_000;
    let huge = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: \"{}\"\n",
        "x".repeat(50 << 20)
    );
    let deep_yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let deep_json = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let non_utf8 = std::fs::read(workspace().join("tests/data/bad/non-utf8.yaml")).unwrap();
    vec![
        Case {
            name: "huge-manifest".into(),
            input: write("huge.yaml", huge.as_bytes()),
            expect: vec!["document 1: the object is too large: 52428".into()],
        },
        Case {
            name: "deep-yaml".into(),
            input: write("deep.yaml", deep_yaml.as_bytes()),
            expect: vec!["is not valid YAML".into()],
        },
        Case {
            name: "deep-json".into(),
            input: write("deep.json", deep_json.as_bytes()),
            expect: vec!["is not valid YAML".into()],
        },
        Case {
            name: "non-utf8-stdin".into(),
            input: Input::Stdin(non_utf8),
            expect: vec!["failed to read standard input".into()],
        },
    ]
}

/// Every object the simulator serves, `apiVersion/kind namespace/name` → resourceVersion,
/// listed through discovery like `kubectl get --all-namespaces` on every listable kind.
async fn objects(cluster: &TestCluster) -> BTreeMap<String, String> {
    let discovery = Discovery::new(cluster.client.clone())
        .run()
        .await
        .expect("discovery works");
    let mut all = BTreeMap::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            if !caps.supports_operation(verbs::LIST) {
                continue;
            }
            let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &ar);
            let list = api.list(&Default::default()).await.expect("LIST works");
            for o in list.items {
                let namespace = o.metadata.namespace.as_deref().unwrap_or_default();
                let heartbeat =
                    ar.kind == "Lease" && matches!(namespace, "kube-system" | "kube-node-lease");
                if heartbeat || ar.kind == "Event" {
                    // The control plane's and the nodes' heartbeats and the Events its
                    // controllers record, written all the time on a real cluster; a write of
                    // krt's there would still be among the requests.
                    continue;
                }
                let key = format!(
                    "{}/{} {}/{}",
                    ar.api_version,
                    ar.kind,
                    o.metadata.namespace.unwrap_or_default(),
                    o.metadata.name.unwrap_or_default()
                );
                all.insert(key, o.metadata.resource_version.unwrap_or_default());
            }
        }
    }
    all
}

/// Runs `krt ARGS -f INPUT` for one case in `dir`, with no kubeconfig but the
/// simulator's in the environment.
async fn run(dir: &Path, cluster: &TestCluster, case: &Case, args: &[&str]) -> Run {
    use tokio::io::AsyncWriteExt;
    let (file, stdin): (&str, &[u8]) = match &case.input {
        Input::File(path) => (path.to_str().unwrap(), b""),
        Input::Stdin(bytes) => ("-", bytes),
    };
    let mut child = tokio::process::Command::new(krt_bin())
        .arg("--kubeconfig")
        .arg(&cluster.kubeconfig)
        .args(args)
        .args(["-f", file])
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache_dir())
        .env_remove("KUBECONFIG")
        .env("HOME", dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("krt starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(180), child.wait_with_output())
        .await
        .expect("krt finishes within 3 minutes")
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Checks one case against a fresh simulator; the problems found, if any.
async fn check(case: Arc<Case>) -> Vec<String> {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("bad-input");
    let before = objects(&cluster).await;
    cluster.reset_requests();
    let mut problems = Vec::new();
    for args in [
        &["preview"][..],
        &["apply", "--yes", "--timeout", "20s"][..],
    ] {
        let r = run(dir.path(), &cluster, &case, args).await;
        let missing: Vec<&String> = case
            .expect
            .iter()
            .filter(|e| !r.stderr.contains(e.as_str()))
            .collect();
        let refused = args[0] == "preview" || r.stderr.contains("nothing was applied");
        if r.code != 1 || !missing.is_empty() || !refused {
            problems.push(format!(
                "{} `krt {}`: exit {} (want 1), stderr lacks {missing:?}{}\nstderr:\n{}",
                case.name,
                args[0],
                r.code,
                if refused {
                    ""
                } else {
                    " and 'nothing was applied'"
                },
                r.stderr.chars().take(3000).collect::<String>()
            ));
        }
    }
    let after = objects(&cluster).await;
    let writes = writes(&cluster);
    if after != before || !writes.is_empty() {
        let changed: Vec<String> = after
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, v)| format!("{k} at {v}"))
            .chain(
                before
                    .keys()
                    .filter(|k| !after.contains_key(*k))
                    .map(|k| format!("{k} deleted")),
            )
            .collect();
        problems.push(format!(
            "{}: the cluster changed: {changed:?}; writes sent: {writes:?}",
            case.name,
        ));
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_its_message_and_changes_nothing() {
    let scratch = temp_dir("bad-input-generated");
    let corpus = corpus();
    assert!(
        corpus.len() >= 30,
        "{} cases in tests/data/bad",
        corpus.len()
    );
    let cases: Vec<Arc<Case>> = corpus
        .into_iter()
        .chain(generated(scratch.path()))
        .map(Arc::new)
        .collect();
    let total = cases.len();
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    let mut tasks = tokio::task::JoinSet::new();
    for case in cases {
        let limit = limit.clone();
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await.unwrap();
            check(case).await
        });
    }
    let mut problems = Vec::new();
    while let Some(found) = tasks.join_next().await {
        problems.extend(found.expect("case runs"));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) in {total} cases:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// A ConfigMap resource with the ID `id`.
fn with_id(id: &str, namespace: &str) -> Resource {
    Resource {
        id: id.into(),
        type_: "Kubernetes".into(),
        attributes: json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": namespace}, "data": {"a": "b"}}),
        depends_on: vec![],
        extensions: json!({}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_api_refuses_invalid_ids_and_writes_nothing() {
    let cluster = TestCluster::start().await;
    let rt = cluster.runtime().await;
    let before = objects(&cluster).await;
    cluster.reset_requests();
    let cases = [
        (with_id("v1:ConfigMap", "default"), "found 2 segment(s)"),
        (
            with_id("v1:ConfigMap:a:b:cfg", "default"),
            "found 5 segment(s)",
        ),
        (
            with_id("v1:ConfigMap::cfg", "default"),
            "the namespace segment is empty",
        ),
        (
            with_id(":ConfigMap:cfg", "default"),
            "the apiVersion segment is empty",
        ),
        (
            with_id("v1:ConfigMap:team-a:cfg", "team-b"),
            "the id's namespace 'team-a' does not match the manifest's 'team-b'",
        ),
        (
            with_id("v1:Secret:default:cfg", "default"),
            "the id's kind 'Secret' does not match the manifest's 'ConfigMap'",
        ),
        (
            with_id("v1:ConfigMap:default:other", "default"),
            "the id's name 'other' does not match the manifest's 'cfg'",
        ),
    ];
    for (resource, message) in &cases {
        let id = &resource.id;
        let applied = rt
            .apply(None, Some(resource), &ApplyOptions::default())
            .await;
        let read = rt.read(None, Some(resource), &ReadOptions::default()).await;
        let deleted = rt.delete(resource, &DeleteRequest::default()).await;
        let watch = watch_for(2_000);
        let watched = rt.watch(resource, &watch).await;
        for (call, status) in [
            ("apply", applied.status),
            ("read", read.status),
            ("delete", deleted),
            ("watch", watched.status),
        ] {
            let status = status.unwrap_or_else(|| panic!("{call} of '{id}' succeeded"));
            assert_eq!(
                status.code,
                StatusCode::InvalidArgument,
                "{call} of '{id}': {status:?}"
            );
            assert!(
                status.message.contains(message),
                "{call} of '{id}': {}",
                status.message
            );
        }
    }
    assert_eq!(objects(&cluster).await, before);
    assert_eq!(writes(&cluster), Vec::<String>::new());
}

/// The writes the cluster was sent since the last reset of its request count (a dry run or an
/// access review changes nothing).
fn writes(cluster: &TestCluster) -> Vec<String> {
    cluster
        .requests()
        .iter()
        .filter(|(verb, path, _)| {
            matches!(*verb, "POST" | "PUT" | "PATCH" | "DELETE") && !path.ends_with("reviews")
        })
        .map(|(verb, path, n)| format!("{n}x {verb} {path}"))
        .collect()
}
