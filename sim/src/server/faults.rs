//! Fault injection for reliability tests: failing the next requests that match a verb and path,
//! adding latency, timing out after a write was applied, closing watches and expiring
//! resourceVersions. Reached through [`crate::Sim`] or the binary's `/admin/*` endpoints:
//!
//! - `POST /admin/faults` with a JSON [`Fault`] body adds a rule; `DELETE /admin/faults` clears them;
//! - `POST /admin/close-watches` ends every open watch stream;
//! - `POST /admin/expire` forgets the event history, so older resourceVersions get 410 Gone.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde::Deserialize;
use tokio::sync::watch;

use super::Shared;
use crate::status::ApiError;

/// What a matching request suffers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "type"
)]
pub enum FaultAction {
    /// Fail with this HTTP code (500, 503, 429, 409, ...) and a matching Status reason.
    Status {
        /// HTTP code.
        code: u16,
        /// `Retry-After` seconds (sent for any code when set; 429 defaults to 1).
        #[serde(default)]
        retry_after_seconds: Option<i32>,
    },
    /// Wait this long before handling the request normally.
    Latency {
        /// Milliseconds.
        millis: u64,
    },
    /// Apply the write, then answer 504 Timeout as if the response was lost.
    TimeoutAfterApply,
}

/// One fault rule: the next `times` requests matching `verb` and `path` suffer `action`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fault {
    /// HTTP method to match (`PATCH`), any when absent.
    #[serde(default)]
    pub verb: Option<String>,
    /// Substring of the request path to match, any when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// How many requests to affect.
    #[serde(default = "one")]
    pub times: usize,
    /// What happens to them.
    pub action: FaultAction,
}

fn one() -> usize {
    1
}

impl Fault {
    /// A rule failing the next `times` requests matching `verb` and `path` with `code`.
    pub fn status(verb: &str, path: &str, code: u16, times: usize) -> Self {
        Self {
            verb: Some(verb.to_string()),
            path: Some(path.to_string()),
            times,
            action: FaultAction::Status {
                code,
                retry_after_seconds: None,
            },
        }
    }

    fn matches(&self, verb: &str, path: &str) -> bool {
        self.times > 0
            && self
                .verb
                .as_deref()
                .is_none_or(|v| v.eq_ignore_ascii_case(verb))
            && self.path.as_deref().is_none_or(|p| path.contains(p))
            && !path.starts_with("/admin/")
    }
}

/// The active fault rules and the watch-closing signal.
pub struct Faults {
    rules: Mutex<Vec<Fault>>,
    close_watches: watch::Sender<u64>,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            rules: Mutex::new(Vec::new()),
            close_watches: watch::channel(0).0,
        }
    }
}

fn error_for(code: u16, retry_after: Option<i32>) -> ApiError {
    let (reason, message) = match code {
        409 => (
            "Conflict",
            "Operation cannot be fulfilled: the object has been modified (injected)",
        ),
        429 => (
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later (injected)",
        ),
        503 => (
            "ServiceUnavailable",
            "the server is currently unable to handle the request (injected)",
        ),
        504 => (
            "Timeout",
            "the server was unable to return a response in the time allotted, but may still be processing the request (injected)",
        ),
        _ => ("InternalError", "Internal error occurred: injected fault"),
    };
    let error = ApiError::new(code, reason, message);
    match retry_after.or((code == 429).then_some(1)) {
        Some(seconds) => error.with_retry_after(seconds),
        None => error,
    }
}

impl Faults {
    /// Adds a rule.
    pub fn inject(&self, fault: Fault) {
        self.lock().push(fault);
    }

    /// Removes every rule.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Ends every open watch stream.
    pub fn close_watches(&self) {
        self.close_watches.send_modify(|n| *n += 1);
    }

    /// A receiver that changes when watches must close.
    pub fn watch_closer(&self) -> watch::Receiver<u64> {
        self.close_watches.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Fault>> {
        self.rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self, verb: &str, path: &str, after: bool) -> Option<FaultAction> {
        let mut rules = self.lock();
        let rule = rules.iter_mut().find(|r| {
            r.matches(verb, path) && (r.action == FaultAction::TimeoutAfterApply) == after
        })?;
        rule.times -= 1;
        let action = rule.action.clone();
        rules.retain(|r| r.times > 0);
        Some(action)
    }

    /// Runs before a request: sleeps for latency rules, or returns the injected error.
    pub async fn before(&self, verb: &str, path: &str) -> Option<ApiError> {
        match self.take(verb, path, false)? {
            FaultAction::Status {
                code,
                retry_after_seconds,
            } => Some(error_for(code, retry_after_seconds)),
            FaultAction::Latency { millis } => {
                tokio::time::sleep(Duration::from_millis(millis)).await;
                None
            }
            FaultAction::TimeoutAfterApply => None,
        }
    }

    /// Runs after a successful request: the 504 of a timeout-after-apply rule.
    pub async fn after(&self, verb: &str, path: &str) -> Option<ApiError> {
        self.take(verb, path, true).map(|_| error_for(504, None))
    }
}

/// The `/admin/*` endpoints.
pub fn admin_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/admin/faults",
            post(
                |State(c): State<Arc<Shared>>, axum::Json(f): axum::Json<Fault>| async move {
                    c.faults.inject(f);
                    StatusCode::NO_CONTENT
                },
            )
            .delete(|State(c): State<Arc<Shared>>| async move {
                c.faults.clear();
                StatusCode::NO_CONTENT
            }),
        )
        .route(
            "/admin/close-watches",
            post(|State(c): State<Arc<Shared>>| async move {
                c.faults.close_watches();
                StatusCode::NO_CONTENT
            }),
        )
        .route(
            "/admin/expire",
            post(|State(c): State<Arc<Shared>>| async move {
                c.cluster.expire_resource_versions();
                StatusCode::NO_CONTENT
            }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rules_fire_the_given_number_of_times_on_matching_requests() {
        let faults = Faults::default();
        faults.inject(Fault::status("PATCH", "/deployments/", 429, 2));
        assert!(
            faults
                .before("GET", "/apis/apps/v1/namespaces/d/deployments/x")
                .await
                .is_none()
        );
        let e = faults
            .before("PATCH", "/apis/apps/v1/namespaces/d/deployments/x")
            .await
            .unwrap();
        assert_eq!((e.code, e.reason), (429, "TooManyRequests"));
        assert_eq!(e.details.unwrap().retry_after_seconds, Some(1));
        assert!(
            faults
                .before("PATCH", "/apis/apps/v1/namespaces/d/deployments/x")
                .await
                .is_some()
        );
        assert!(
            faults
                .before("PATCH", "/apis/apps/v1/namespaces/d/deployments/x")
                .await
                .is_none()
        );
    }

    #[test]
    fn rules_parse_from_admin_json() {
        let f: Fault = serde_json::from_str(
            r#"{"verb": "POST", "times": 3, "action": {"type": "status", "code": 503, "retryAfterSeconds": 2}}"#,
        )
        .unwrap();
        assert_eq!(f.times, 3);
        assert_eq!(
            f.action,
            FaultAction::Status {
                code: 503,
                retry_after_seconds: Some(2)
            }
        );
    }
}
