//! `runtime.watch`: follow one object with a name field-selector watch until it
//! is current, failed, or the timeout passes (a timeout is never a success).
//!
//! A stream that ends (closed, or 410 Gone) is resumed from the last seen
//! resourceVersion; when that fails too (the version expired), the object is read
//! again and a new watch starts from there, as client-go's reflector does. While a
//! workload is in progress its children (see [`super::children`]) explain why.

use super::{children, now_unix_secs, result_resource};
use crate::cluster::{Cluster, HostServices, WatchStream};
use crate::errors::{self, Operation};
use crate::health;
use crate::model::{
    ApiError, ErrorSource, EventType, Health, HealthState, Progress, Resource, Status, StatusCode,
    WatchOptions, WatchRequest, WatchResponse,
};
use crate::normalize;
use crate::target::Target;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The longest single wait for an event, so the clock is checked regularly.
const MAX_NEXT_MS: u32 = 1000;

/// Pause before re-listing after a failed or closed watch.
const RELIST_DELAY_MS: u32 = 200;

/// How long the API server may stay unreachable before the watch gives up
/// (shorter outages, such as a restart, are ridden out).
const UNREACHABLE_GRACE: Duration = Duration::from_secs(20);

/// Least time between two looks at a workload's children.
const CHILD_REFRESH_MS: u64 = 1000;

/// Watches `resource` until it is current (status `None`), failed (an error
/// status with the health's reason and message) or `timeout_ms` passes (a
/// `timeout` error naming the last health message). Progress events are emitted
/// on every health change and on every re-watch (phase `rewatching`).
pub fn watch<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    resource: &Resource,
    options: &WatchRequest,
) -> WatchResponse {
    let target = match Target::of(resource, cluster, options.default_namespace.as_deref()) {
        Ok(target) => target,
        Err(status) => return WatchResponse::failed(status),
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
        resource_version: None,
        note: None,
        noted_at: None,
        unreachable_since: None,
    };
    let status = watcher.run().err();
    WatchResponse {
        resource: watcher
            .object
            .take()
            .map(|o| result_resource(resource, normalize::into_result(o))),
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
    /// The last computed health (with the children's note).
    health: Option<Health>,
    /// Where to resume watching: the last resourceVersion seen.
    resource_version: Option<String>,
    /// The children's note and when it was taken.
    note: Option<String>,
    noted_at: Option<Instant>,
    /// Since when every request has failed to reach the API server.
    unreachable_since: Option<Instant>,
}

/// How a followed stream ended without a verdict.
enum Flow {
    /// The object became current.
    Current,
    /// The stream closed or expired after delivering something: resume it.
    Resume,
    /// The stream failed before delivering anything: read the object again.
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

    fn progress(&self, phase: &str, message: String, health: Option<Health>) {
        self.host.progress(&Progress {
            id: self.resource.id.clone(),
            phase: phase.into(),
            message,
            health,
        });
    }

    /// The object's health, with a note on its children while it is in progress.
    fn health_of(&mut self, object: Option<&Value>) -> Health {
        let Some(object) = object else {
            return Health::new(HealthState::NotFound, "NotFound", "Resource not found");
        };
        let mut health = health::compute(object, now_unix_secs());
        let api = &self.target.api;
        if health.state != HealthState::InProgress || !children::followed(&api.group, &api.kind) {
            self.note = None;
            return health;
        }
        let stale = self.noted_at.is_none_or(|at| {
            at.elapsed() >= Duration::from_millis(CHILD_REFRESH_MS)
                || self
                    .health
                    .as_ref()
                    .is_none_or(|h| !h.message.starts_with(&health.message))
        });
        if stale {
            self.note = children::note(self.cluster, &api.group, &api.kind, object);
            self.noted_at = Some(Instant::now());
        }
        if let Some(note) = &self.note {
            health.message = format!("{}; {note}", health.message);
        }
        health
    }

    /// Records a new observation; `Some(result)` when the watch is decided.
    fn observe(&mut self, object: Option<Value>) -> Option<Result<(), Status>> {
        let health = self.health_of(object.as_ref());
        if let Some(rv) = object
            .as_ref()
            .and_then(|o| o.pointer("/metadata/resourceVersion"))
            .and_then(Value::as_str)
        {
            self.resource_version = Some(rv.to_owned());
        }
        self.object = object;
        if self.health.as_ref() != Some(&health) {
            self.progress(
                "waiting",
                format!("{}: {}", self.target.subject, health.message),
                Some(health.clone()),
            );
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

    /// Transient failures (transport, host timeout, expired watch) re-list,
    /// unless the API server has been unreachable for [`UNREACHABLE_GRACE`];
    /// anything else ends the watch.
    fn transient(&mut self, err: &ApiError) -> bool {
        if err.source != ErrorSource::Transport {
            self.unreachable_since = None;
            return errors::is_gone(err) || err.source == ErrorSource::Timeout;
        }
        let since = *self.unreachable_since.get_or_insert_with(Instant::now);
        since.elapsed() < UNREACHABLE_GRACE
    }

    /// The status of a failed call `operation` on the object, which ends the watch.
    fn failed(&self, err: &ApiError, operation: Operation) -> Status {
        errors::map_api_error(err, &self.target.subject, operation)
    }

    /// Reads the object and records it; `Some` when that decides the watch.
    fn relist(&mut self) -> Option<Result<(), Status>> {
        loop {
            match self.cluster.get(
                &self.target.api,
                self.target.namespace.as_deref(),
                &self.target.name,
            ) {
                Ok(live) => {
                    self.unreachable_since = None;
                    // An absent object has no version to resume from: watch from now.
                    self.resource_version = None;
                    return self.observe(live);
                }
                Err(e) if self.transient(&e) && self.remaining_ms() > RELIST_DELAY_MS => {
                    self.host.sleep(RELIST_DELAY_MS);
                }
                Err(e) => {
                    return Some(Err(self.failed(&e, Operation::Get)));
                }
            }
        }
    }

    fn run(&mut self) -> Result<(), Status> {
        let mut list = true;
        loop {
            if list && let Some(verdict) = self.relist() {
                return verdict;
            }
            if self.remaining_ms() == 0 {
                return Err(self.timeout());
            }
            let options = WatchOptions {
                field_selector: Some(format!("metadata.name={}", self.target.name)),
                resource_version: self.resource_version.clone(),
                timeout_seconds: Some(self.remaining_ms().div_ceil(1000).max(1)),
                allow_bookmarks: true,
                ..WatchOptions::default()
            };
            let flow = match self.cluster.watch(
                &self.target.api,
                self.target.namespace.as_deref(),
                &options,
            ) {
                Ok(stream) => {
                    self.unreachable_since = None;
                    self.follow(stream)?
                }
                Err(e) if self.transient(&e) => {
                    self.rewatching(&e, false);
                    if !errors::is_gone(&e) && self.remaining_ms() > RELIST_DELAY_MS {
                        self.host.sleep(RELIST_DELAY_MS);
                    }
                    Flow::Relist
                }
                Err(e) => {
                    return Err(self.failed(&e, Operation::Watch));
                }
            };
            list = match flow {
                Flow::Current => return Ok(()),
                _ if self.remaining_ms() == 0 => return Err(self.timeout()),
                Flow::Resume => self.resource_version.is_none(),
                Flow::Relist => true,
            };
        }
    }

    /// Reports a stream that ended or could not start, and how the watch goes on.
    fn rewatching(&self, err: &ApiError, resume: bool) {
        let how = match (&self.resource_version, resume) {
            (Some(rv), true) => format!("resuming from resourceVersion {rv}"),
            _ => "reading it again".to_owned(),
        };
        let cause = if errors::is_gone(err) {
            "410 Gone"
        } else {
            "connection lost"
        };
        self.progress(
            "rewatching",
            format!(
                "the watch of {} ended ({cause}: {}); {how}",
                self.target.subject,
                err.message.trim()
            ),
            self.health.clone(),
        );
    }

    /// Reads events until the object is current, failed (an error), the
    /// timeout passes (an error), or the stream must be resumed or re-listed.
    fn follow(&mut self, mut stream: C::Watch) -> Result<Flow, Status> {
        let mut delivered = false;
        loop {
            let remaining = self.remaining_ms();
            if remaining == 0 {
                return Err(self.timeout());
            }
            match stream.next(remaining.min(MAX_NEXT_MS)) {
                Ok(Some(event)) => {
                    delivered = true;
                    let object = match event.type_ {
                        EventType::Bookmark => {
                            if let Some(rv) = event
                                .object
                                .pointer("/metadata/resourceVersion")
                                .and_then(Value::as_str)
                            {
                                self.resource_version = Some(rv.to_owned());
                            }
                            continue;
                        }
                        EventType::Deleted => None,
                        EventType::Added | EventType::Modified => Some(event.object),
                    };
                    if let Some(verdict) = self.observe(object) {
                        return verdict.map(|()| Flow::Current);
                    }
                }
                Ok(None) => {
                    // Health rules that age (an unschedulable Pod) and children need a fresh look.
                    if let Some(verdict) = self.observe(self.object.clone()) {
                        return verdict.map(|()| Flow::Current);
                    }
                }
                Err(e) if self.transient(&e) => {
                    self.rewatching(&e, delivered);
                    return Ok(if delivered {
                        Flow::Resume
                    } else {
                        Flow::Relist
                    });
                }
                Err(e) => {
                    return Err(self.failed(&e, Operation::Watch));
                }
            }
        }
    }
}
