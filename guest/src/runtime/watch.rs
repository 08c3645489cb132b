//! `runtime.watch`: follow one object with a name field-selector watch until it
//! is current, failed, or the timeout passes (a timeout is never a success).

use super::{now_unix_secs, result_resource};
use crate::cluster::{Cluster, HostServices, WatchStream};
use crate::errors::{self, Operation};
use crate::health;
use crate::model::{
    ApiError, ErrorSource, EventType, Health, HealthState, Progress, Resource, Status, StatusCode,
    WatchOptions, WatchRequest, WatchResponse,
};
use crate::target::{Manifest, Target};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The longest single wait for an event, so the clock is checked regularly.
const MAX_NEXT_MS: u32 = 1000;

/// Pause before re-listing after a failed or closed watch.
const RELIST_DELAY_MS: u32 = 200;

/// Watches `resource` until it is current (status `None`), failed (an error
/// status with the health's reason and message) or `timeout_ms` passes (a
/// `timeout` error naming the last health message). Progress events are emitted
/// on every health change.
pub fn watch<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    resource: &Resource,
    options: &WatchRequest,
) -> WatchResponse {
    let target = match Manifest::from_resource(resource)
        .and_then(|m| m.resolve(cluster, options.default_namespace.as_deref()))
    {
        Ok(target) => target,
        Err(status) => {
            return WatchResponse {
                resource: None,
                health: Health::new(
                    HealthState::Unknown,
                    status.reason.clone(),
                    status.message.clone(),
                ),
                status: Some(status),
            };
        }
    };
    let mut watcher = Watcher {
        cluster,
        host,
        resource,
        target: &target,
        deadline: Instant::now() + Duration::from_millis(u64::from(options.timeout_ms)),
        timeout_ms: options.timeout_ms,
        object: None,
        health: None,
    };
    let status = watcher.run().err();
    WatchResponse {
        resource: watcher
            .object
            .as_ref()
            .map(|o| result_resource(resource, o)),
        health: watcher
            .health
            .unwrap_or_else(|| Health::new(HealthState::Unknown, "", "health not observed")),
        status,
    }
}

struct Watcher<'a, C, H> {
    cluster: &'a C,
    host: &'a H,
    resource: &'a Resource,
    target: &'a Target,
    deadline: Instant,
    timeout_ms: u32,
    /// The last observed object.
    object: Option<Value>,
    /// The last computed health.
    health: Option<Health>,
}

/// How a followed stream ended without an error.
enum Flow {
    /// The object became current.
    Current,
    /// The stream closed or expired: re-GET and re-watch.
    Relist,
}

impl<C: Cluster, H: HostServices> Watcher<'_, C, H> {
    fn remaining_ms(&self) -> u32 {
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .as_millis();
        u32::try_from(left).unwrap_or(u32::MAX)
    }

    /// Records a new observation; `Some(result)` when the watch is decided.
    fn observe(&mut self, object: Option<Value>) -> Option<Result<(), Status>> {
        let health = match &object {
            Some(obj) => health::compute(obj, now_unix_secs()),
            None => Health::new(HealthState::NotFound, "NotFound", "Resource not found"),
        };
        self.object = object;
        if self.health.as_ref() != Some(&health) {
            self.host.progress(&Progress {
                id: self.resource.id.clone(),
                phase: "waiting".into(),
                message: format!("{}: {}", self.target.subject, health.message),
                health: Some(health.clone()),
            });
        }
        let verdict = match health.state {
            HealthState::Current => Some(Ok(())),
            HealthState::Failed => Some(Err(Status::error(
                StatusCode::Unknown,
                if health.reason.is_empty() {
                    "Failed".to_owned()
                } else {
                    health.reason.clone()
                },
                format!("{} failed: {}", self.target.subject, health.message),
            ))),
            _ => None,
        };
        self.health = Some(health);
        verdict
    }

    fn timeout(&self) -> Status {
        let last = self
            .health
            .as_ref()
            .map_or("no observation", |h| h.message.as_str());
        Status {
            retryable: true,
            ..Status::error(
                StatusCode::Timeout,
                "WatchTimeout",
                format!(
                    "{} did not become ready within {} ms; last status: {last}",
                    self.target.subject, self.timeout_ms
                ),
            )
        }
    }

    /// Transient failures (transport, host timeout, expired watch) re-list;
    /// anything else ends the watch.
    fn transient(err: &ApiError) -> bool {
        errors::is_gone(err) || matches!(err.source, ErrorSource::Transport | ErrorSource::Timeout)
    }

    fn run(&mut self) -> Result<(), Status> {
        loop {
            let live = match self.cluster.get(
                &self.target.api,
                self.target.namespace.as_deref(),
                &self.target.name,
            ) {
                Ok(live) => live,
                Err(e) if Self::transient(&e) && self.remaining_ms() > RELIST_DELAY_MS => {
                    self.host.sleep(RELIST_DELAY_MS);
                    continue;
                }
                Err(e) => {
                    return Err(errors::map_api_error(
                        &e,
                        &self.target.subject,
                        Operation::Get,
                    ));
                }
            };
            let resource_version = live
                .as_ref()
                .and_then(|o| o.pointer("/metadata/resourceVersion"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(verdict) = self.observe(live) {
                return verdict;
            }
            if self.remaining_ms() == 0 {
                return Err(self.timeout());
            }
            let options = WatchOptions {
                field_selector: Some(format!("metadata.name={}", self.target.name)),
                resource_version,
                timeout_seconds: Some(self.remaining_ms().div_ceil(1000).max(1)),
                allow_bookmarks: true,
                ..WatchOptions::default()
            };
            let stream = match self.cluster.watch(
                &self.target.api,
                self.target.namespace.as_deref(),
                &options,
            ) {
                Ok(stream) => stream,
                Err(e) if Self::transient(&e) && self.remaining_ms() > RELIST_DELAY_MS => {
                    self.host.sleep(RELIST_DELAY_MS);
                    continue;
                }
                Err(e) => {
                    return Err(errors::map_api_error(
                        &e,
                        &self.target.subject,
                        Operation::Watch,
                    ));
                }
            };
            match self.follow(stream)? {
                Flow::Current => return Ok(()),
                Flow::Relist if self.remaining_ms() == 0 => return Err(self.timeout()),
                Flow::Relist => {}
            }
        }
    }

    /// Reads events until the object is current, failed (an error), the
    /// timeout passes (an error), or the stream must be re-listed.
    fn follow(&mut self, mut stream: C::Watch) -> Result<Flow, Status> {
        loop {
            let remaining = self.remaining_ms();
            if remaining == 0 {
                return Err(self.timeout());
            }
            match stream.next(remaining.min(MAX_NEXT_MS)) {
                Ok(Some(event)) => {
                    let object = match event.type_ {
                        EventType::Bookmark => continue,
                        EventType::Deleted => None,
                        EventType::Added | EventType::Modified => Some(event.object),
                    };
                    if let Some(verdict) = self.observe(object) {
                        return verdict.map(|()| Flow::Current);
                    }
                }
                Ok(None) => {
                    // Health rules that age (an unschedulable Pod) need a fresh look.
                    if let Some(verdict) = self.observe(self.object.clone()) {
                        return verdict.map(|()| Flow::Current);
                    }
                }
                Err(e) if Self::transient(&e) => return Ok(Flow::Relist),
                Err(e) => {
                    return Err(errors::map_api_error(
                        &e,
                        &self.target.subject,
                        Operation::Watch,
                    ));
                }
            }
        }
    }
}
