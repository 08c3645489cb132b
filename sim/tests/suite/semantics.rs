//! The simulator answers as kube-apiserver does: a table of request/response cases
//! (`fixtures/semantics_cases.json`), each a sequence of HTTP requests to one simulator with
//! the code and the fields each answer must have — defaults, canonical quantities, validation,
//! server-side apply bookkeeping, CRD schemas, finalizers and the controllers' convergence.
//!
//! A step: `method`, `path`, optional `query` (object), `content_type` and `body`; `expect`
//! holds the `code`, `body` (JSON pointer → exact value), `present` and `absent` (pointers) and
//! `message` (a substring of the Status message). With `eventually`, the step is retried until
//! it matches (the controllers run on a timer).

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::time::{Duration, Instant};

use serde_json::Value;

/// Sends one step as the admin; answers the code and the JSON answer.
async fn send(sim: &krt_sim::Sim, step: &Value) -> (u16, Value) {
    let method = step["method"].as_str().expect("method");
    let content_type = step["content_type"].as_str().unwrap_or("application/json");
    let headers = [("content-type", content_type)];
    let uri = common::http::step_uri(step);
    let body = common::http::step_body(step);
    let token = Some(sim.admin_token());
    let request = common::http::request(sim, method, &uri, token, &headers, body).await;
    let (code, _, bytes) = common::http::read(request).await;
    (code, common::http::parse(&bytes))
}

/// What is wrong with an answer, if anything.
fn mismatch(expect: &Value, code: u16, body: &Value) -> Option<String> {
    if expect["code"].as_u64() != Some(u64::from(code)) {
        return Some(format!("code {code}, expected {}", expect["code"]));
    }
    for (pointer, want) in expect["body"].as_object().into_iter().flatten() {
        let got = body.pointer(pointer);
        if got != Some(want) {
            return Some(format!("{pointer} is {got:?}, expected {want}"));
        }
    }
    for pointer in expect["present"].as_array().into_iter().flatten() {
        let pointer = pointer.as_str().expect("pointer");
        if body.pointer(pointer).is_none_or(Value::is_null) {
            return Some(format!("{pointer} is missing"));
        }
    }
    for pointer in expect["absent"].as_array().into_iter().flatten() {
        let pointer = pointer.as_str().expect("pointer");
        if let Some(v) = body.pointer(pointer) {
            return Some(format!("{pointer} is {v}, expected nothing"));
        }
    }
    if let Some(text) = expect["message"].as_str() {
        let message = body["message"].as_str().unwrap_or_default();
        if !message.contains(text) {
            return Some(format!("message {message:?} lacks {text:?}"));
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_answers_as_kube_apiserver_does() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../fixtures/semantics_cases.json")).expect("cases");
    assert!(cases.len() >= 20, "the table lost its cases");
    let sim = krt_sim::Sim::start().await.expect("simulator");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("name");
        for (i, step) in case["steps"].as_array().expect("steps").iter().enumerate() {
            let deadline = Instant::now() + Duration::from_secs(10);
            let problem = loop {
                let (code, body) = send(&sim, step).await;
                match mismatch(&step["expect"], code, &body) {
                    Some(_) if step["eventually"] == true && Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(25)).await;
                    }
                    Some(problem) => break Some(format!("{problem}\n  answer: {body}")),
                    None => break None,
                }
            };
            if let Some(problem) = problem {
                failures.push(format!("{name}, step {i}: {problem}"));
                break;
            }
        }
    }
    sim.shutdown().await;
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_mismatch_is_reported() {
    let expect =
        serde_json::json!({"code": 201, "body": {"/a": 1}, "absent": ["/b"], "message": "x"});
    assert!(mismatch(&expect, 200, &serde_json::json!({"a": 1})).is_some());
    assert!(mismatch(&expect, 201, &serde_json::json!({"a": 2, "message": "x"})).is_some());
    assert!(
        mismatch(
            &expect,
            201,
            &serde_json::json!({"a": 1, "b": 0, "message": "x"})
        )
        .is_some()
    );
    assert!(mismatch(&expect, 201, &serde_json::json!({"a": 1, "message": "y"})).is_some());
    assert!(mismatch(&expect, 201, &serde_json::json!({"a": 1, "message": "xx"})).is_none());
}
