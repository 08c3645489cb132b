//! Adopting live objects into a stack's state without changing them: the
//! state records each object's UID; the stack's mark is written by the next
//! apply (until then, a destroy leaves the object alone as not ours).

use crate::report::{ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::State;
use krt_guest::model::{ReadOptions, Resource, StatusCode};
use krt_guest::normalize::LAST_APPLIED_ANNOTATION;
use serde_json::Value;

/// What an import recorded as a resource's "last applied" configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedFrom {
    /// The object's `kubectl.kubernetes.io/last-applied-configuration`.
    LastApplied,
    /// The input's manifest.
    Input,
    /// The live object itself (normalized).
    Live,
}

impl RecordedFrom {
    /// How a person would say it: `its last-applied configuration`, ...
    pub fn describe(self) -> &'static str {
        match self {
            RecordedFrom::LastApplied => "its last-applied configuration",
            RecordedFrom::Input => "the input",
            RecordedFrom::Live => "the live object",
        }
    }
}

/// One import target: the resource, and whether it came from the input
/// (rather than an ID alone).
pub type ImportTarget = (Resource, bool);

/// The record to keep for `resource` whose live object is `live`: its
/// last-applied configuration, else the input's manifest (when `from_input`),
/// else the live object.
pub fn adopted(resource: &Resource, live: &Value, from_input: bool) -> (Resource, RecordedFrom) {
    let last_applied = live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object);
    let (attributes, source) = match last_applied {
        Some(a) => (a, RecordedFrom::LastApplied),
        None if from_input => (resource.attributes.clone(), RecordedFrom::Input),
        // The UID is recorded beside the resource, not as part of its configuration.
        None => (krt_guest::normalize::normalize(live), RecordedFrom::Live),
    };
    (
        Resource {
            attributes,
            ..resource.clone()
        },
        source,
    )
}

/// Reads each target in order and records the live ones in `state` (which
/// the caller saves): `imported` with where the record came from, or
/// `failed` for an error or an object that does not exist.
pub async fn import<R: Runtime>(
    runtime: &R,
    targets: &[ImportTarget],
    state: &mut State,
    options: &ReadOptions,
) -> Vec<(ResourceReport, Option<RecordedFrom>)> {
    let mut out = Vec::with_capacity(targets.len());
    for (resource, from_input) in targets {
        let r = runtime.read(None, Some(resource), options).await;
        let mut report = ResourceReport::new(&resource.id, Outcome::Imported);
        let mut source = None;
        match (r.status.filter(|s| s.is_error()), r.resource) {
            (Some(status), _) => {
                report.result = Outcome::Failed;
                report.error = Some(ErrorReport::from(&status));
            }
            (None, None) => {
                report.result = Outcome::Failed;
                report.error = Some(ErrorReport {
                    code: StatusCode::NotFound,
                    reason: "NotFound".into(),
                    message: format!("{} does not exist in the cluster", resource.id),
                });
            }
            (None, Some(live)) => {
                let (record, from) = adopted(resource, &live.attributes, *from_input);
                if let Some(uid) = crate::apply::uid_of(&live.attributes) {
                    state.uids.insert(record.id.clone(), uid.to_owned());
                }
                state.put(record);
                source = Some(from);
            }
        }
        out.push((report, source));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefers_last_applied_then_input_then_live() {
        let resource = krt_testkit::resource(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default"}, "data": {"from": "input"}}));
        let applied = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"from":"kubectl"}}"#;
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
            "annotations": {LAST_APPLIED_ANNOTATION: applied}}, "data": {"from": "live"}});
        let (r, source) = adopted(&resource, &live, true);
        assert_eq!(
            (r.attributes["data"]["from"].as_str(), source),
            (Some("kubectl"), RecordedFrom::LastApplied)
        );
        let plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"from": "live"}});
        assert_eq!(
            adopted(&resource, &plain, true).0.attributes["data"]["from"],
            "input"
        );
        assert_eq!(
            adopted(&resource, &plain, false).0.attributes["data"]["from"],
            "live"
        );
    }
}
