//! The simulator's surface as a table of HTTP cases (`fixtures/surface_cases.json`), one per
//! difference from kube-apiserver that was fixed: served kinds, discovery, OpenAPI, decoding and
//! `fieldValidation`, the `scale` subresource, label selectors, verbs and tables.
//!
//! Each case is a list of steps run against a fresh simulator: a request (method, path, query,
//! headers, body) and what its response must show — the code, values at JSON pointers, pointers
//! that must be absent, arrays that must hold a matching item, the `Warning` headers and the
//! media type. A step without expectations must succeed.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use serde_json::{Map, Value};

struct Answer {
    code: u16,
    body: Value,
    warnings: Vec<String>,
    content_type: String,
}

/// Sends one step as the admin, with a JSON content type unless the step names one.
async fn send(sim: &krt_sim::Sim, step: &Value) -> Answer {
    let method = step["method"].as_str().unwrap_or("GET");
    let mut headers: Vec<(&str, &str)> = step["headers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            (
                name.as_str(),
                value.as_str().expect("header values are strings"),
            )
        })
        .collect();
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
    {
        headers.insert(0, ("content-type", "application/json"));
    }
    let uri = common::http::step_uri(step);
    let body = common::http::step_body(step);
    let token = Some(sim.admin_token());
    let request = common::http::request(sim, method, &uri, token, &headers, body).await;
    let (code, answer, bytes) = common::http::read(request).await;
    let header = |name| {
        answer
            .get_all(name)
            .iter()
            .map(|v| v.to_str().expect("ASCII header").to_string())
            .collect::<Vec<_>>()
    };
    Answer {
        code,
        body: common::http::parse(&bytes),
        warnings: header("warning"),
        content_type: header("content-type").join(","),
    }
}

/// Whether `item` has every field of `subset`, recursively (each item of a list in `subset`
/// like some item of the list in `item`).
fn contains(item: &Value, subset: &Value) -> bool {
    match (item, subset) {
        (Value::Object(i), Value::Object(s)) => s
            .iter()
            .all(|(k, v)| i.get(k).is_some_and(|x| contains(x, v))),
        (Value::Array(i), Value::Array(s)) => s.iter().all(|v| i.iter().any(|x| contains(x, v))),
        _ => item == subset,
    }
}

/// The problems of `answer` against `expect`.
fn check(answer: &Answer, expect: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(code) = expect.get("code")
        && code.as_u64() != Some(u64::from(answer.code))
    {
        problems.push(format!("code {} instead of {code}", answer.code));
    }
    for (pointer, want) in expect
        .get("fields")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match answer.body.pointer(pointer) {
            Some(got) if got == want => {}
            got => problems.push(format!("{pointer} is {got:?}, not {want}")),
        }
    }
    for pointer in expect
        .get("absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let pointer = pointer.as_str().expect("pointer");
        if let Some(got) = answer.body.pointer(pointer) {
            problems.push(format!("{pointer} is present: {got}"));
        }
    }
    for (pointer, subset) in expect
        .get("contains")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let items = answer.body.pointer(pointer).and_then(Value::as_array);
        if !items.is_some_and(|items| items.iter().any(|i| contains(i, subset))) {
            problems.push(format!("{pointer} has no item like {subset}"));
        }
    }
    if let Some(want) = expect.get("warnings") {
        let want: Vec<&str> = want
            .as_array()
            .expect("warnings")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if answer.warnings != want {
            problems.push(format!(
                "warnings {:?} instead of {want:?}",
                answer.warnings
            ));
        }
    }
    if let Some(want) = expect.get("contentType").and_then(Value::as_str)
        && answer.content_type != want
    {
        problems.push(format!(
            "content type {:?} instead of {want:?}",
            answer.content_type
        ));
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fixed_difference_answers_as_kube_apiserver_does() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../fixtures/surface_cases.json")).expect("cases parse");
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        assert!(case["difference"].is_string(), "{name}: says what it fixes");
        let sim = krt_sim::Sim::start().await.expect("sim starts");
        for (i, step) in case["steps"].as_array().expect("steps").iter().enumerate() {
            let answer = send(&sim, step).await;
            let problems = match step["expect"].as_object() {
                Some(expect) => check(&answer, expect),
                None if (200..300).contains(&answer.code) => Vec::new(),
                None => vec![format!("code {}: {}", answer.code, answer.body)],
            };
            if !problems.is_empty() {
                failures.push(format!("{name}, step {i}: {}", problems.join("; ")));
                break;
            }
        }
        sim.shutdown().await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
