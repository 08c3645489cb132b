//! GET of one object, LIST with selectors and pagination, and WATCH.

use serde_json::{Value, json};

use super::target::Target;
use crate::registry::ResourceType;
use crate::request::Params;
use crate::selectors::{FieldLabels, Filter};
use crate::status::ApiError;
use crate::store::{Key, State, Store};

/// GET one object.
pub fn get(store: &Store, target: &Target) -> Result<(u16, Value), ApiError> {
    Ok((200, existing(&store.lock(), target, &target.key())?))
}

/// The stored object at `key`, which `target` names; not found when there is none.
pub fn existing(state: &State, target: &Target, key: &Key) -> Result<Value, ApiError> {
    state
        .get(key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&target.subject()))
}

/// The label and field selectors of a LIST, WATCH or DELETE of a collection of `rt`.
pub fn filter(rt: &ResourceType, params: &Params) -> Result<Filter, ApiError> {
    let param = |name: &str| params.get(name).map_or("", String::as_str);
    Filter::parse(
        param("labelSelector"),
        param("fieldSelector"),
        FieldLabels::of(&rt.group, &rt.kind),
    )
}

/// An object as a LIST shows it: a built-in kind's items carry no `apiVersion` and `kind` (the
/// list's own say it), as kube-apiserver encodes a typed list; a custom resource's keep them.
fn list_item(rt: &ResourceType, object: &Value) -> Value {
    let mut item = object.clone();
    if !rt.custom
        && let Some(map) = item.as_object_mut()
    {
        map.remove("apiVersion");
        map.remove("kind");
    }
    item
}

/// LIST with `labelSelector`, `fieldSelector`, `limit` and `continue`.
pub fn list(store: &Store, target: &Target, params: &Params) -> Result<(u16, Value), ApiError> {
    let filter = filter(&target.rt, params)?;
    let limit: usize = params
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let after = params.get("continue").filter(|c| !c.is_empty());
    let state = store.lock();
    let matching: Vec<(&Key, &Value)> = state
        .list(
            &target.rt.group,
            &target.rt.plural,
            target.namespace.as_deref(),
        )
        .into_iter()
        .filter(|(k, _)| after.is_none_or(|c| format!("{}/{}", k.namespace, k.name) > *c))
        .filter(|(_, o)| filter.matches(o))
        .collect();
    let page: Vec<Value> = matching
        .iter()
        .take(limit)
        .map(|(_, o)| list_item(&target.rt, o))
        .collect();
    let mut metadata = json!({"resourceVersion": state.resource_version().to_string()});
    if matching.len() > page.len()
        && let Some((k, _)) = matching.get(page.len() - 1)
    {
        metadata["continue"] = Value::String(format!("{}/{}", k.namespace, k.name));
        metadata["remainingItemCount"] = json!(matching.len() - page.len());
    }
    let body = json!({
        "kind": format!("{}List", target.rt.kind),
        "apiVersion": target.rt.api_version(),
        "metadata": metadata,
        "items": page,
    });
    Ok((200, body))
}
