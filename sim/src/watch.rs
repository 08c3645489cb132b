//! Watches as pull cursors over the store's event history: the initial state (or a replay from a
//! resourceVersion), then every later event, filtered by namespace and selectors; 410 Gone once
//! the history no longer reaches the cursor. The HTTP server streams a cursor; an in-process
//! caller polls it.

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::api::{Params, flag};
use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::selectors::Filter;
use crate::status::ApiError;
use crate::store::{Event, EventType};
use crate::table;

/// A watch on one resource type: call [`Watch::poll`] for the events committed since the last
/// call.
#[derive(Debug)]
pub struct Watch {
    group: String,
    resource: String,
    namespace: Option<String>,
    filter: Filter,
    rt: ResourceType,
    /// Whether event objects are rendered as Tables (`Accept: ...;as=Table`).
    table: bool,
    /// Every event up to this version has been delivered (or filtered out).
    rv: u64,
    pending: VecDeque<Value>,
    bookmarks: bool,
    timeout_seconds: Option<u64>,
}

impl Watch {
    /// Starts a watch of `rt` in `namespace` (all when `None`) with the WATCH query parameters
    /// (`resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`; selectors in `filter`).
    ///
    /// Without a `resourceVersion` (or with "0") the first events are `ADDED` for every matching
    /// object; with one, the retained events after it are replayed.
    ///
    /// # Errors
    /// 410 Expired when `resourceVersion` is older than the retained history; 400 when it is not
    /// a number.
    pub(crate) fn start(
        cluster: &Cluster,
        rt: &ResourceType,
        namespace: Option<&str>,
        filter: Filter,
        params: &Params,
        table: bool,
    ) -> Result<Self, ApiError> {
        let requested = match params.get("resourceVersion").map(String::as_str) {
            None | Some("" | "0") => None,
            Some(v) => Some(
                v.parse::<u64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {v:?}")))?,
            ),
        };
        let mut watch = Self {
            group: rt.group.clone(),
            resource: rt.plural.clone(),
            namespace: namespace.map(str::to_string),
            filter,
            rt: rt.clone(),
            table,
            rv: 0,
            pending: VecDeque::new(),
            bookmarks: flag(params, "allowWatchBookmarks"),
            timeout_seconds: params
                .get("timeoutSeconds")
                .and_then(|t| t.parse::<u64>().ok()),
        };
        let state = cluster.store.lock();
        match requested {
            Some(from) => {
                let events = state
                    .events_since(from)
                    .map_err(|oldest| ApiError::expired(from, oldest))?;
                watch.pending = events.iter().filter_map(|e| watch.translate(e)).collect();
            }
            None => {
                watch.pending = state
                    .list(&watch.group, &watch.resource, watch.namespace.as_deref())
                    .into_iter()
                    .filter(|(_, o)| watch.filter.matches(o))
                    .map(|(_, o)| watch.event("ADDED", o))
                    .collect();
            }
        }
        watch.rv = state.resource_version();
        Ok(watch)
    }

    /// The events (`{"type": "ADDED"|"MODIFIED"|"DELETED", "object": ...}`) not yet returned;
    /// empty when there are none yet.
    ///
    /// # Errors
    /// 410 Expired when the history was compacted past this watch (it must be restarted).
    pub fn poll(&mut self, cluster: &Cluster) -> Result<Vec<Value>, ApiError> {
        let mut out: Vec<Value> = self.pending.drain(..).collect();
        let state = cluster.store.lock();
        if state.resource_version() > self.rv {
            let events = state
                .events_since(self.rv)
                .map_err(|oldest| ApiError::expired(self.rv, oldest))?;
            out.extend(events.iter().filter_map(|e| self.translate(e)));
            self.rv = state.resource_version();
        }
        Ok(out)
    }

    /// A `BOOKMARK` event at the version this watch has seen up to.
    pub fn bookmark(&self) -> Value {
        json!({"type": "BOOKMARK", "object": {"kind": self.rt.kind, "apiVersion": self.rt.api_version(),
            "metadata": {"resourceVersion": self.rv.to_string()}}})
    }

    /// Whether the client asked for bookmarks (`allowWatchBookmarks`).
    pub fn wants_bookmarks(&self) -> bool {
        self.bookmarks
    }

    /// The `timeoutSeconds` asked for, if any.
    pub fn timeout_seconds(&self) -> Option<u64> {
        self.timeout_seconds
    }

    /// The event a watcher of this scope sees for `event`, if any: an object entering the
    /// selection is `ADDED`, one leaving it is `DELETED`.
    fn translate(&self, event: &Event) -> Option<Value> {
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
        let kind = match (event.kind, was, is) {
            (EventType::Deleted, true, _) | (_, true, false) => "DELETED",
            (_, false, true) => "ADDED",
            (_, true, true) => "MODIFIED",
            (EventType::Deleted, false, _) | (_, false, false) => return None,
        };
        Some(self.event(kind, &event.object))
    }

    fn event(&self, kind: &str, object: &Value) -> Value {
        if self.table {
            json!({"type": kind, "object": table::convert(&self.rt, object)})
        } else {
            json!({"type": kind, "object": object})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Request;

    fn configmap(name: &str, app: &str) -> Vec<u8> {
        json!({"metadata": {"name": name, "labels": {"app": app}}, "data": {"k": "v"}})
            .to_string()
            .into_bytes()
    }

    const CM: &str = "/api/v1/namespaces/default/configmaps";

    #[test]
    fn replays_from_a_version_and_reports_selection_changes() {
        let cluster = Cluster::new(100);
        let created = cluster.handle(&Request::post(CM, configmap("a", "web")));
        let rv = created.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let mut all = cluster
            .watch(&Request::get(CM).query("resourceVersion", &rv))
            .unwrap();
        let mut web = cluster
            .watch(&Request::get(CM).query("labelSelector", "app=web"))
            .unwrap();
        assert_eq!(web.poll(&cluster).unwrap()[0]["type"], "ADDED");
        cluster.handle(&Request::post(CM, configmap("b", "db")));
        cluster.handle(&Request::put(&format!("{CM}/a"), configmap("a", "db")));
        let types = |events: Vec<Value>| -> Vec<String> {
            events
                .iter()
                .map(|e| format!("{} {}", e["type"], e["object"]["metadata"]["name"]))
                .collect()
        };
        assert_eq!(
            types(all.poll(&cluster).unwrap()),
            ["\"ADDED\" \"b\"", "\"MODIFIED\" \"a\""]
        );
        assert_eq!(types(web.poll(&cluster).unwrap()), ["\"DELETED\" \"a\""]);
        assert!(all.poll(&cluster).unwrap().is_empty());
    }

    #[test]
    fn too_old_versions_are_gone() {
        let cluster = Cluster::new(2);
        let mut watch = cluster.watch(&Request::get(CM)).unwrap();
        for name in ["a", "b", "c"] {
            cluster.handle(&Request::post(CM, configmap(name, "x")));
        }
        let gone = watch.poll(&cluster).unwrap_err();
        assert_eq!((gone.code, gone.reason), (410, "Expired"));
        let err = cluster
            .watch(&Request::get(CM).query("resourceVersion", "2"))
            .unwrap_err();
        assert_eq!(err.code, 410);
        assert_eq!(err.body["reason"], "Expired");
    }
}
