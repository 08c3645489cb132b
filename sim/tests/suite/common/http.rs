//! Raw HTTP/1.1 requests to a plain-HTTP simulator, with any headers.

use http_body_util::{BodyExt, Full};
use hyper::HeaderMap;
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// A new HTTP/1.1 connection to the plain-HTTP `sim`, and the `host` header for it.
pub async fn connect(sim: &krt_sim::Sim) -> (SendRequest<Full<Bytes>>, String) {
    let addr = sim.url().trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    (sender, addr)
}

/// Sends `method path` with `headers` and `body` to `sim` on a new connection, as the holder of
/// `token` (none: only the given headers); answers the response with its body unread (a watch
/// streams).
pub async fn request(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Response<Incoming> {
    let (mut sender, addr) = connect(sim).await;
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    sender.send_request(request).await.expect("response")
}

/// Reads `response` whole: the status code, the headers and the body.
pub async fn read(response: Response<Incoming>) -> (u16, HeaderMap, Vec<u8>) {
    let code = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (code, headers, bytes.to_vec())
}

/// Sends `method path` with a JSON `body` as the holder of `token` (none: anonymous); answers
/// the status code and the JSON answer (`null` when it is not JSON).
pub async fn json(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    let headers = [("content-type", "application/json")];
    let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let response = request(sim, method, path, token, &headers, body).await;
    let (code, _, bytes) = read(response).await;
    (code, parse(&bytes))
}

/// `bytes` as JSON; `null` when they are not JSON.
pub fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// A table step's `path` with its `query` object (string values) appended, percent-encoded.
pub fn step_uri(step: &Value) -> String {
    let path = step["path"].as_str().expect("path");
    let Some(query) = step["query"].as_object() else {
        return path.to_string();
    };
    let pairs: Vec<String> = query
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                encode(v.as_str().expect("query values are strings"))
            )
        })
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

/// A table step's `body`: none, a string sent as it is, or JSON.
pub fn step_body(step: &Value) -> Vec<u8> {
    match &step["body"] {
        Value::Null => Vec::new(),
        Value::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    }
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
