//! WATCH streams: initial state or replay from a resourceVersion, then live events, filtered by
//! namespace and selectors, with bookmarks and a timeout; 410 Gone for a too-old version.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::WatchEvent;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::cluster::Cluster;
use crate::handlers::{Params, Target, flag};
use crate::selectors::Filter;
use crate::status::ApiError;
use crate::store::{Event, EventType};

/// How often bookmarks are sent when asked for.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(1);

struct Scope {
    group: String,
    resource: String,
    namespace: Option<String>,
    filter: Filter,
}

impl Scope {
    /// The event a watcher of this scope sees for `event`, if any.
    fn translate(&self, event: &Event) -> Option<WatchEvent<Value>> {
        let k = &event.key;
        if k.group != self.group
            || k.resource != self.resource
            || self.namespace.as_ref().is_some_and(|ns| *ns != k.namespace)
        {
            return None;
        }
        let was = event
            .previous
            .as_ref()
            .is_some_and(|p| self.filter.matches(p));
        let is = self.filter.matches(&event.object);
        let object = event.object.clone();
        match (event.kind, was, is) {
            (EventType::Deleted, true, _) => Some(WatchEvent::Deleted(object)),
            (EventType::Deleted, false, _) => None,
            (_, false, true) => Some(WatchEvent::Added(object)),
            (_, true, true) => Some(WatchEvent::Modified(object)),
            (_, true, false) => Some(WatchEvent::Deleted(object)),
            (_, false, false) => None,
        }
    }
}

fn line(event: &impl serde::Serialize) -> Bytes {
    let mut bytes = serde_json::to_vec(event).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

/// Starts a watch on `target` and returns the streaming response.
///
/// # Errors
/// 410 Expired when `resourceVersion` is older than the retained history; 400 when it is not a number.
pub fn serve(
    cluster: &Arc<Cluster>,
    target: &Target,
    filter: Filter,
    params: &Params,
) -> Result<Response, ApiError> {
    let scope = Scope {
        group: target.rt.group.clone(),
        resource: target.rt.plural.clone(),
        namespace: target.namespace.clone(),
        filter,
    };
    let requested = match params.get("resourceVersion").map(String::as_str) {
        None | Some("" | "0") => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {v:?}")))?,
        ),
    };
    let timeout = params
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let bookmarks = flag(params, "allowWatchBookmarks");
    let (kind, api_version) = (target.rt.kind.clone(), target.rt.api_version());

    let (initial, mut events, mut rv) = {
        let state = cluster.store.lock();
        let events = state.subscribe();
        let rv = state.resource_version();
        let initial: Vec<Bytes> = match requested {
            Some(from) => state
                .events_since(from)
                .map_err(|oldest| ApiError::expired(from, oldest))?
                .iter()
                .filter_map(|e| scope.translate(e))
                .map(|e| line(&e))
                .collect(),
            None => state
                .list(&scope.group, &scope.resource, scope.namespace.as_deref())
                .into_iter()
                .filter(|(_, o)| scope.filter.matches(o))
                .map(|(_, o)| line(&WatchEvent::Added(o.clone())))
                .collect(),
        };
        (initial, events, rv)
    };

    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let mut closer = cluster.faults.watch_closer();
    tokio::spawn(async move {
        for bytes in initial {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
        ticker.tick().await;
        loop {
            let out = tokio::select! {
                () = &mut deadline => return,
                _ = closer.changed() => return,
                _ = ticker.tick(), if bookmarks => {
                    line(&json!({"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version,
                        "metadata": {"resourceVersion": rv.to_string()}}}))
                }
                received = events.recv() => match received {
                    Ok(event) => {
                        rv = rv.max(event.rv);
                        match scope.translate(&event) {
                            Some(e) => line(&e),
                            None => continue,
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        line(&WatchEvent::<Value>::ErrorStatus(ApiError::expired(rv, rv + 1).to_status()))
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if tx.send(out).await.is_err() {
                return;
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<Bytes, Infallible>(b), rx))
    });
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response())
}
