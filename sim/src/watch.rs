//! Watches as pull cursors over the store's event history: the initial state (or a replay from a
//! resourceVersion), then every later event, filtered by namespace and selectors; 410 Gone once
//! the history no longer reaches the cursor. The HTTP server streams a cursor; an in-process
//! caller polls it.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::request::{Params, flag};
use crate::selectors::Filter;
use crate::status::ApiError;
use crate::store::{Event, EventType, Store};
use crate::table;

/// A watch on one resource type of one cluster: call [`Watch::poll`] for the events committed
/// since the last call.
pub struct Watch {
    store: Arc<Store>,
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
    /// How each object is shown to the watcher (another API's view of the same storage).
    present: fn(&Value) -> Value,
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
        store: &Arc<Store>,
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
            store: store.clone(),
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
            present: Value::clone,
        };
        let state = store.lock();
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
    pub fn poll(&mut self) -> Result<Vec<Value>, ApiError> {
        let mut out: Vec<Value> = self.pending.drain(..).collect();
        let state = self.store.lock();
        if state.resource_version() > self.rv {
            let events = state
                .events_since(self.rv)
                .map_err(|oldest| ApiError::expired(self.rv, oldest))?;
            out.extend(events.iter().filter_map(|e| self.translate(e)));
            self.rv = state.resource_version();
        }
        Ok(out)
    }

    /// This watch with every object it delivers shown through `present` (`events.k8s.io`
    /// Events, watched on the core storage).
    pub(crate) fn presented_as(mut self, present: fn(&Value) -> Value) -> Self {
        self.present = present;
        for event in &mut self.pending {
            event["object"] = present(&event["object"]);
        }
        self
    }

    /// A `BOOKMARK` event at the version this watch has seen up to.
    pub fn bookmark(&self) -> Value {
        let object = json!({"kind": self.rt.kind, "apiVersion": self.rt.api_version(),
            "metadata": {"resourceVersion": self.rv.to_string()}});
        json!({"type": "BOOKMARK", "object": (self.present)(&object)})
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
            json!({"type": kind, "object": table::convert(&self.rt, object, table::Include::Metadata)})
        } else {
            json!({"type": kind, "object": (self.present)(object)})
        }
    }
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("group", &self.group)
            .field("resource", &self.resource)
            .field("namespace", &self.namespace)
            .field("rv", &self.rv)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}
