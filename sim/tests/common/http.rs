//! Raw HTTP/1.1 requests to a plain-HTTP simulator, with any headers.

use http_body_util::{BodyExt, Full};
use hyper::HeaderMap;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
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

/// Sends `method path` with `headers` and `body` to `sim`; answers the status code, the
/// response headers and the body.
pub async fn send(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, HeaderMap, Vec<u8>) {
    let (mut sender, addr) = connect(sim).await;
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    let response = sender.send_request(request).await.expect("response");
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
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let (code, _, bytes) = send(sim, method, path, &headers, body).await;
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}
