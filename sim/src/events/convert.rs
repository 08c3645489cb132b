//! Conversion between the core `v1` Event (the one storage) and `events.k8s.io/v1` Event, field
//! for field as kube's `events/v1` conversion does: `note`↔`message`, `regarding`↔
//! `involvedObject`, `related`, `reportingController`↔`reportingComponent`,
//! `deprecatedSource`↔`source`, `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`↔
//! `firstTimestamp`/`lastTimestamp`, `deprecatedCount`↔`count`; the rest keeps its name.

use serde_json::{Map, Value};

use crate::request::Request;

/// The `events.k8s.io` field names and the core ones they convert to.
const RENAMED: &[(&str, &str)] = &[
    ("note", "message"),
    ("regarding", "involvedObject"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// The `events.k8s.io/v1` name of the core Event field `core` (itself when not renamed).
pub fn events_field(core: &str) -> &str {
    RENAMED
        .iter()
        .find(|(_, c)| *c == core)
        .map_or(core, |(events, _)| events)
}

/// The core name of the `events.k8s.io/v1` Event field `events` (itself when not renamed).
pub fn core_field(events: &str) -> &str {
    RENAMED
        .iter()
        .find(|(e, _)| *e == events)
        .map_or(events, |(_, core)| core)
}

/// The API version of `events.k8s.io` Events.
pub const EVENTS_VERSION: &str = "events.k8s.io/v1";

/// The path prefix of the `events.k8s.io/v1` API and the core one it is served by.
const EVENTS_API: &str = "/apis/events.k8s.io/v1/";
const CORE_API: &str = "/api/v1/";

/// A request on `events.k8s.io/v1` Events as the request on core Events that serves it: the
/// path moved to `/api/v1`, a body converted (an object) or renamed (a JSON merge, strategic
/// merge or JSON patch); `None` for any other request.
pub fn core_request(request: &Request) -> Option<Request> {
    let rest = request.path.strip_prefix(EVENTS_API)?;
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    let events = matches!(
        segments.as_slice(),
        ["events", ..] | ["namespaces", _, "events", ..]
    );
    if !events {
        return None;
    }
    let mut core = request.clone();
    core.path = format!("{CORE_API}{rest}");
    core.addressed_version = Some(EVENTS_VERSION.into());
    if let Ok(body) = serde_json::from_slice::<Value>(&request.body) {
        let converted = if request
            .content_type
            .starts_with("application/json-patch+json")
        {
            json_patch_to_core(&body)
        } else if request.method == "PATCH"
            && !request.content_type.starts_with("application/apply-patch")
        {
            rename(&body, None, RENAMED.iter().copied())
        } else {
            to_core(&body)
        };
        core.body = converted.to_string().into_bytes();
    }
    Some(core)
}

/// A JSON patch's `path`/`from` pointers with their first segment renamed to the core field.
fn json_patch_to_core(patch: &Value) -> Value {
    let Some(ops) = patch.as_array() else {
        return patch.clone();
    };
    let pointer = |p: &Value| -> Value {
        let Some(p) = p.as_str() else {
            return p.clone();
        };
        let (head, tail) = p
            .trim_start_matches('/')
            .split_once('/')
            .map_or((p.trim_start_matches('/'), None), |(h, t)| (h, Some(t)));
        let head = RENAMED
            .iter()
            .find(|(from, _)| *from == head)
            .map_or(head, |(_, to)| to);
        Value::String(match tail {
            Some(t) => format!("/{head}/{t}"),
            None => format!("/{head}"),
        })
    };
    ops.iter()
        .map(|op| {
            let mut op = op.clone();
            for field in ["path", "from"] {
                if !op[field].is_null() {
                    op[field] = pointer(&op[field]);
                }
            }
            op
        })
        .collect()
}

/// `object` with its top-level fields renamed by `pairs` (from, to), and `apiVersion` set.
fn rename(
    object: &Value,
    api_version: Option<&str>,
    pairs: impl Iterator<Item = (&'static str, &'static str)>,
) -> Value {
    let Some(fields) = object.as_object() else {
        return object.clone();
    };
    let pairs: Vec<(&str, &str)> = pairs.collect();
    let mut out = Map::new();
    for (name, value) in fields {
        let name = pairs
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name.as_str(), |(_, to)| to);
        out.insert(name.to_string(), value.clone());
    }
    if let Some(api_version) = api_version {
        out.insert("apiVersion".into(), Value::String(api_version.into()));
    }
    Value::Object(out)
}

/// The fields that core v1 always writes and `events.k8s.io/v1` leaves out when empty
/// (`omitempty` there only).
const OMITTED_WHEN_EMPTY: &[&str] = &["reportingController", "reportingInstance"];

/// A stored core Event as `events.k8s.io/v1` serves it (lists too: each item, which, as
/// every built-in list's item, carries no apiVersion and kind), and a `Status` about core
/// `events` as one about `events.events.k8s.io`.
pub fn to_events_api(object: &Value) -> Value {
    if let Some(items) = object["items"].as_array() {
        let mut list = object.clone();
        list["apiVersion"] = Value::String("events.k8s.io/v1".into());
        list["items"] = items.iter().map(|item| event(item, None)).collect();
        return list;
    }
    match object["kind"].as_str() {
        Some("Event") => event(object, Some("events.k8s.io/v1")),
        Some("Status") => status(object),
        _ => object.clone(),
    }
}

fn event(core: &Value, api_version: Option<&str>) -> Value {
    let mut event = rename(
        core,
        api_version,
        RENAMED.iter().map(|(events, core)| (*core, *events)),
    );
    if let Some(fields) = event.as_object_mut() {
        fields.retain(|name, value| !(OMITTED_WHEN_EMPTY.contains(&name.as_str()) && value == ""));
    }
    event
}

/// A `Status` naming the core resource `events` as kube-apiserver words it for
/// `events.k8s.io`: the group in its details, the qualified resource in its message.
fn status(core: &Value) -> Value {
    let mut status = core.clone();
    if status["details"]["kind"] != "events" || !status["details"]["group"].is_null() {
        return status;
    }
    status["details"]["group"] = Value::String("events.k8s.io".into());
    if let Some(message) = core["message"].as_str() {
        let message = message.replacen("events \"", "events.events.k8s.io \"", 1);
        status["message"] = Value::String(message);
    }
    status
}

/// An `events.k8s.io/v1` Event as the core `v1` Event it is stored as.
pub fn to_core(object: &Value) -> Value {
    rename(object, Some("v1"), RENAMED.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_convert_both_ways() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "message": "hi", "reason": "R",
            "source": {"component": "kubelet"}, "count": 3, "firstTimestamp": "t1",
            "lastTimestamp": "t2", "reportingComponent": "kubelet", "type": "Normal"});
        let events = to_events_api(&core);
        assert_eq!(events["apiVersion"], "events.k8s.io/v1");
        assert_eq!(events["note"], "hi");
        assert_eq!(events["regarding"]["name"], "p");
        assert_eq!(events["deprecatedSource"]["component"], "kubelet");
        assert_eq!(events["deprecatedCount"], 3);
        assert_eq!(events["deprecatedFirstTimestamp"], "t1");
        assert_eq!(events["reportingController"], "kubelet");
        assert!(events.get("message").is_none());
        assert_eq!(to_core(&events), core);
    }

    #[test]
    fn requests_move_to_the_core_api() {
        let post = Request::post(
            "/apis/events.k8s.io/v1/namespaces/d/events",
            br#"{"apiVersion": "events.k8s.io/v1", "kind": "Event", "note": "n"}"#.to_vec(),
        );
        let core = core_request(&post).unwrap();
        assert_eq!(core.path, "/api/v1/namespaces/d/events");
        let body: Value = serde_json::from_slice(&core.body).unwrap();
        assert_eq!(
            (body["message"].as_str(), body["apiVersion"].as_str()),
            (Some("n"), Some("v1"))
        );
        let patch = Request::new("PATCH", "/apis/events.k8s.io/v1/namespaces/d/events/e").body(
            "application/json-patch+json",
            br#"[{"op": "replace", "path": "/note", "value": "x"}]"#.to_vec(),
        );
        let body: Value = serde_json::from_slice(&core_request(&patch).unwrap().body).unwrap();
        assert_eq!(body[0]["path"], "/message");
        assert!(core_request(&Request::get("/apis/events.k8s.io/v1")).is_none());
        assert!(core_request(&Request::get("/api/v1/events")).is_none());
    }
}
