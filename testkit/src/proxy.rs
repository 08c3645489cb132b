//! A counting proxy in front of a real cluster: on the real tier, everything a test and krt send
//! goes through it, so that the tests that count requests count them there as krt-sim does.
//!
//! It listens on `http://127.0.0.1:<port>` and forwards each request with kube-rs's
//! [`kube::Client::send`]: as the kubeconfig's user, or, when the request carries its own
//! `Authorization` (a ServiceAccount token), with that header and no other credential.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};
use krt_sim::{RequestCounter, RequestCounts};

/// A running proxy; it stops when dropped.
pub(crate) struct Proxy {
    url: String,
    counter: Arc<RequestCounter>,
    task: tokio::task::JoinHandle<()>,
}

struct Upstream {
    /// The kubeconfig's user.
    admin: kube::Client,
    /// The cluster's address and CA, without credentials.
    bare: kube::Client,
    counter: Arc<RequestCounter>,
}

impl Proxy {
    /// Starts a proxy forwarding to the cluster `admin` and `bare` reach.
    pub(crate) async fn start(admin: kube::Client, bare: kube::Client) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the proxy binds a loopback port");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("the proxy's address")
        );
        let counter = Arc::new(RequestCounter::default());
        let upstream = Arc::new(Upstream {
            admin,
            bare,
            counter: counter.clone(),
        });
        let app = axum::Router::new().fallback(forward).with_state(upstream);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Proxy { url, counter, task }
    }

    /// Where it listens.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The requests forwarded since the start or the last [`reset`](Proxy::reset).
    pub(crate) fn requests(&self) -> RequestCounts {
        self.counter.snapshot()
    }

    /// Counts from zero again.
    pub(crate) fn reset(&self) {
        self.counter.reset();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Headers that belong to one connection, not to the request or response carried.
const HOP_BY_HOP: [HeaderName; 4] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::HOST,
    header::CONTENT_LENGTH,
];

async fn forward(State(upstream): State<Arc<Upstream>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let query = parts.uri.query().unwrap_or_default();
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_owned())
    };
    let watching = parts.method == axum::http::Method::GET
        && param("watch").is_some_and(|v| v == "1" || v == "true");
    upstream.counter.add(
        parts.method.as_str(),
        parts.uri.path(),
        watching,
        param("dryRun").is_some(),
    );
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    for name in &HOP_BY_HOP {
        parts.headers.remove(name);
    }
    let client = match parts.headers.contains_key(header::AUTHORIZATION) {
        true => &upstream.bare,
        false => &upstream.admin,
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let mut outgoing = http::Request::new(kube::client::Body::from(body));
    *outgoing.method_mut() = parts.method;
    *outgoing.uri_mut() = path.parse().expect("a path and query parse as a URI");
    *outgoing.headers_mut() = parts.headers;
    match client.send(outgoing).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            for name in &HOP_BY_HOP {
                parts.headers.remove(name);
            }
            Response::from_parts(parts, Body::new(body))
        }
        Err(e) => (
            StatusCode::BAD_GATEWAY,
            format!("krt-testkit's proxy could not reach the cluster: {e}"),
        )
            .into_response(),
    }
}
