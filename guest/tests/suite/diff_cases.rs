//! Diff golden cases (k8s-semantics §8.2 D2–D6) from `fixtures/diff_cases.json`: each case
//! lists the expected changes `[path, before, after]` in order, text the unified diff must
//! contain, and text (Secret values) that must appear nowhere in the result.

use krt_guest::diff::diff;
use krt_guest::model::FieldChange;
use serde::Deserialize;
use serde_json::Value;

/// One golden case.
#[derive(Deserialize)]
struct Case {
    name: String,
    before: Option<Value>,
    after: Option<Value>,
    #[serde(default)]
    ignore: Vec<String>,
    changes: Vec<(String, Option<String>, Option<String>)>,
    #[serde(default)]
    unified_contains: Vec<String>,
    #[serde(default)]
    never_contains: Vec<String>,
}

fn cases() -> Vec<Case> {
    serde_json::from_str(include_str!("../fixtures/diff_cases.json")).expect("valid fixture")
}

#[test]
fn golden_cases() {
    let cases = cases();
    assert!(cases.len() >= 25, "fixture has {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = diff(case.before.as_ref(), case.after.as_ref(), &case.ignore);
        let want: Vec<FieldChange> = case
            .changes
            .iter()
            .map(|(path, before, after)| FieldChange {
                path: path.clone(),
                before: before.clone(),
                after: after.clone(),
            })
            .collect();
        if got.changes != want {
            failures.push(format!(
                "{}:\n  got  {:?}\n  want {:?}",
                case.name, got.changes, want
            ));
        }
        if got.changes.is_empty() != got.unified.is_empty() {
            failures.push(format!("{}: unified diff {:?}", case.name, got.unified));
        }
        for needle in &case.unified_contains {
            if !got
                .unified
                .lines()
                .any(|line| line.contains(needle.as_str()))
            {
                failures.push(format!(
                    "{}: unified diff lacks {needle:?}:\n{}",
                    case.name, got.unified
                ));
            }
        }
        let everything = format!("{got:?}");
        for secret in &case.never_contains {
            if everything.contains(secret.as_str()) {
                failures.push(format!("{}: result shows {secret:?}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn diff_is_symmetric_in_paths() {
    for case in cases() {
        let forward = diff(case.before.as_ref(), case.after.as_ref(), &case.ignore);
        let backward = diff(case.after.as_ref(), case.before.as_ref(), &case.ignore);
        let mut forward: Vec<_> = forward.changes.iter().map(|c| c.path.clone()).collect();
        let mut backward: Vec<_> = backward.changes.iter().map(|c| c.path.clone()).collect();
        forward.sort();
        backward.sort();
        assert_eq!(forward, backward, "{}", case.name);
    }
}

/// A tiny deterministic generator of Kubernetes-shaped but hostile JSON.
struct Hostile(u64);

impl Hostile {
    const KEYS: [&'static str; 40] = [
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "status",
        "conditions",
        "type",
        "reason",
        "message",
        "containers",
        "initContainers",
        "name",
        "data",
        "stringData",
        "replicas",
        "observedGeneration",
        "generation",
        "phase",
        "containerStatuses",
        "state",
        "waiting",
        "resources",
        "limits",
        "requests",
        "ports",
        "port",
        "containerPort",
        "env",
        "template",
        "deletionTimestamp",
        "creationTimestamp",
        "annotations",
        "labels",
        "updateStrategy",
        "rollingUpdate",
        "partition",
        "loadBalancer",
        "ingress",
        "desiredNumberScheduled",
        "*",
    ];
    const STRINGS: [&'static str; 16] = [
        "",
        "v1",
        "apps/v1",
        "batch/v1",
        "Secret",
        "Deployment",
        "Pod",
        "StatefulSet",
        "True",
        "Running",
        "Pending",
        "CrashLoopBackOff",
        "1Gi",
        "1e99999",
        "2024-05-01T12:00:00Z",
        "é.*[",
    ];

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.next() % if depth == 0 { 6 } else { 9 } {
            0 => Value::Null,
            1 => Value::Bool(self.next().is_multiple_of(2)),
            2 => {
                let numbers = [
                    serde_json::json!(i64::MAX),
                    serde_json::json!(i64::MIN),
                    serde_json::json!(u64::MAX),
                    serde_json::json!(1e300),
                    serde_json::json!(0.5),
                    serde_json::json!(-1),
                    serde_json::json!(3),
                ];
                numbers[(self.next() % 7) as usize].clone()
            }
            3..=5 => Value::String(self.pick(&Self::STRINGS).to_owned()),
            6 => Value::Array(
                (0..self.next() % 4)
                    .map(|_| self.value(depth - 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..self.next() % 6)
                    .map(|_| (self.pick(&Self::KEYS).to_owned(), self.value(depth - 1)))
                    .collect(),
            ),
        }
    }

    fn object(&mut self) -> Value {
        let mut object = match self.value(5) {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let api_version = self.pick(&["v1", "apps/v1", "batch/v1", "x/v1"]);
        let kind = self.pick(&[
            "Pod",
            "Secret",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "Job",
            "Service",
            "Widget",
        ]);
        object.insert("apiVersion".into(), api_version.into());
        object.insert("kind".into(), kind.into());
        Value::Object(object)
    }
}

#[test]
fn hostile_json_never_panics() {
    let mut generator = Hostile(0x9E37_79B9_7F4A_7C15);
    let ignore = [
        "spec.*",
        "metadata.labels.a.b",
        "*[0]",
        "/status/x~1y",
        "[",
        "data[name=x]",
    ]
    .map(String::from);
    for _ in 0..2000 {
        let (before, after) = (generator.object(), generator.object());
        let result = diff(Some(&before), Some(&after), &ignore);
        assert_eq!(result.changes.is_empty(), result.unified.is_empty());
        assert!(
            diff(Some(&before), Some(&before), &[]).changes.is_empty(),
            "{before}"
        );
        let _ = krt_guest::health::compute(&before, Some(i64::MAX));
        let _ = krt_guest::health::compute(&after, Some(i64::MIN));
    }
}
