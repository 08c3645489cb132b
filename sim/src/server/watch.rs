//! WATCH streams: a [`Watch`] cursor polled whenever the store commits, written as JSON lines
//! or length-prefixed protobuf `WatchEvent` frames (as negotiated), with bookmarks,
//! `timeoutSeconds`, and an `ERROR` event (410 Expired) when the history no longer reaches the
//! stream.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Shared;
use crate::protobuf::{self, negotiate::Format};
use crate::watch::Watch;

/// How often bookmarks are sent when asked for.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(1);

/// How long a watch without `timeoutSeconds` stays open.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// One event on the wire: a JSON line, or a protobuf frame (`None` when its object has no
/// protobuf form, which ends the stream as kube-apiserver's failed encode does).
fn frame(format: Format, event: &Value) -> Option<Bytes> {
    if format == Format::Protobuf {
        return protobuf::watch_frame(event).ok().map(Bytes::from);
    }
    let mut bytes = serde_json::to_vec(event).unwrap_or_default();
    bytes.push(b'\n');
    Some(Bytes::from(bytes))
}

/// Streams `watch` in `format` until its timeout, a closed-watches fault, or the client going
/// away.
pub fn stream(shared: Arc<Shared>, mut watch: Watch, format: Format) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let mut closer = shared.faults.watch_closer();
    let mut changed = shared.changed.subscribe();
    let timeout = watch
        .timeout_seconds()
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    tokio::spawn(async move {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
        ticker.tick().await;
        loop {
            let events = match watch.poll() {
                Ok(events) => events,
                Err(gone) => {
                    let status = serde_json::to_value(gone.to_status()).unwrap_or_default();
                    if let Some(bytes) = frame(format, &json!({"type": "ERROR", "object": status}))
                    {
                        let _ = tx.send(bytes).await;
                    }
                    return;
                }
            };
            for event in &events {
                let Some(bytes) = frame(format, event) else {
                    return;
                };
                if tx.send(bytes).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                () = &mut deadline => return,
                _ = closer.changed() => return,
                _ = ticker.tick(), if watch.wants_bookmarks() => {
                    let Some(bytes) = frame(format, &watch.bookmark()) else {
                        return;
                    };
                    if tx.send(bytes).await.is_err() {
                        return;
                    }
                }
                result = changed.changed() => {
                    if result.is_err() {
                        return;
                    }
                }
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<Bytes, Infallible>(b), rx))
    });
    let content_type = match format {
        Format::Protobuf => format!("{};stream=watch", protobuf::MEDIA_TYPE),
        _ => "application/json".to_string(),
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(stream),
    )
        .into_response()
}
