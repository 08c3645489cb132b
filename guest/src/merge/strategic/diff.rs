//! Patch generation (rules M5–M7): two-way diffs of maps and merge lists, and
//! the union of the deletions and additions/changes patches.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::Error;
use super::directive::{DELETE, PATCH, RETAIN_KEYS, delete_from_key, set_order_key};
use super::list::{Elements, elements, key_of, require_key};
use super::schema::{PatchMeta, Schema, Strategy};
use super::value::{key_string, same};

/// Which half of the three-way patch a diff computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// live → plan, ignoring deletions: what to add or change.
    AddsAndChanges,
    /// prior → plan, ignoring additions and changes: what to delete.
    Deletions,
}

impl Mode {
    fn changes(self) -> bool {
        self == Mode::AddsAndChanges
    }

    fn deletions(self) -> bool {
        self == Mode::Deletions
    }
}

/// The patch from `old` to `new` (M6), with `$setElementOrder` directives.
///
/// # Errors
///
/// [`Error::MissingMergeKey`], [`Error::NoMergeKey`] and [`Error::MixedList`]
/// for merge lists that cannot be matched.
pub(super) fn diff(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    schema: &Schema,
    mode: Mode,
) -> Result<Map<String, Value>, Error> {
    Differ { schema, mode }.maps(old, new, Some(schema.root()), false)
}

struct Differ<'a> {
    schema: &'a Schema,
    mode: Mode,
}

impl Differ<'_> {
    /// M6: the patch of one map of type `ty`.
    fn maps(
        &self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        ty: Option<&str>,
        retain_keys: bool,
    ) -> Result<Map<String, Value>, Error> {
        let mut patch = Map::new();
        for (key, new_value) in new {
            let Some(old_value) = old.get(key) else {
                if self.mode.changes() {
                    patch.insert(key.clone(), new_value.clone());
                }
                continue;
            };
            if key == PATCH {
                if !same(old_value, new_value) {
                    patch.insert(key.clone(), new_value.clone());
                }
                continue;
            }
            let meta = self.schema.field(ty, key);
            match (old_value, new_value) {
                (Value::Object(o), Value::Object(n)) if meta.strategy() != Strategy::Replace => {
                    let sub = self.maps(o, n, meta.ty(), meta.has_retain_keys())?;
                    if !sub.is_empty() {
                        patch.insert(key.clone(), Value::Object(sub));
                    }
                }
                (Value::Array(o), Value::Array(n)) if meta.strategy() == Strategy::Merge => {
                    self.list(key, o, n, &meta, &mut patch)?;
                }
                _ => {
                    if self.mode.changes() && !same(old_value, new_value) {
                        patch.insert(key.clone(), new_value.clone());
                    }
                }
            }
        }
        if self.mode.deletions() {
            for key in old.keys().filter(|key| !new.contains_key(*key)) {
                patch.insert(key.clone(), Value::Null);
            }
        }
        if retain_keys {
            let mut retained: Vec<&String> = new
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k)
                .collect();
            let clears = old
                .iter()
                .any(|(k, v)| !v.is_null() && !new.contains_key(k));
            if !retained.is_empty() && (!patch.is_empty() || clears) {
                retained.sort();
                let retained = retained.into_iter().map(|k| Value::String(k.clone()));
                patch.insert(RETAIN_KEYS.to_owned(), retained.collect());
            }
        }
        Ok(patch)
    }

    /// M7: the patch of merge list `field`, written into the parent `patch`.
    fn list(
        &self,
        field: &str,
        old: &[Value],
        new: &[Value],
        meta: &PatchMeta,
        patch: &mut Map<String, Value>,
    ) -> Result<(), Error> {
        if old.is_empty() {
            if !new.is_empty() && self.mode.changes() {
                patch.insert(field.to_owned(), Value::Array(new.to_vec()));
            }
            return Ok(());
        }
        match elements(field, &[old, new])? {
            Elements::Maps => self.list_of_maps(field, old, new, meta, patch),
            Elements::Scalars | Elements::Empty => {
                self.list_of_scalars(field, old, new, patch);
                Ok(())
            }
        }
    }

    fn list_of_maps(
        &self,
        field: &str,
        old: &[Value],
        new: &[Value],
        meta: &PatchMeta,
        patch: &mut Map<String, Value>,
    ) -> Result<(), Error> {
        let key = require_key(meta.merge_key(), field)?;
        let old = keyed(old, key, field)?;
        let new = keyed(new, key, field)?;
        let by_key: HashMap<&str, &Map<String, Value>> =
            old.iter().rev().map(|(k, e)| (k.as_str(), *e)).collect();

        let (mut changes, mut directives) = (Vec::new(), Vec::new());
        for (k, element) in &new {
            match by_key.get(k.as_str()) {
                Some(old_element) => {
                    let mut sub =
                        self.maps(old_element, element, meta.ty(), meta.has_retain_keys())?;
                    if !sub.is_empty() {
                        sub.insert(key.to_owned(), element[key].clone());
                        changes.push(Value::Object(sub));
                    }
                }
                None if self.mode.changes() => {
                    // The plan's own `$patch` elements go last, like deletions.
                    let target = if element.contains_key(PATCH) {
                        &mut directives
                    } else {
                        &mut changes
                    };
                    target.push(Value::Object((*element).clone()));
                }
                None => {}
            }
        }
        changes.append(&mut directives);
        if self.mode.deletions() {
            let kept: HashSet<&str> = new.iter().map(|(k, _)| k.as_str()).collect();
            let mut deleted = HashSet::new();
            for (k, element) in &old {
                if !kept.contains(k.as_str()) && deleted.insert(k.as_str()) {
                    let mut directive = Map::new();
                    directive.insert(key.to_owned(), element[key].clone());
                    directive.insert(PATCH.to_owned(), Value::String(DELETE.to_owned()));
                    changes.push(Value::Object(directive));
                }
            }
        }

        let order_changed = common_order_differs(
            old.iter().map(|(k, _)| k.clone()),
            new.iter().map(|(k, _)| k.clone()),
        );
        let set_order = !changes.is_empty() || (self.mode.changes() && order_changed);
        if set_order && !new.is_empty() {
            let order = new.iter().map(|(_, e)| {
                let mut item = Map::new();
                item.insert(key.to_owned(), e[key].clone());
                Value::Object(item)
            });
            patch.insert(set_order_key(field), order.collect());
        }
        if !changes.is_empty() {
            patch.insert(field.to_owned(), Value::Array(changes));
        }
        Ok(())
    }

    fn list_of_scalars(
        &self,
        field: &str,
        old: &[Value],
        new: &[Value],
        patch: &mut Map<String, Value>,
    ) {
        let old_set: HashSet<String> = old.iter().map(key_string).collect();
        let new_set: HashSet<String> = new.iter().map(key_string).collect();
        let only_in = |list: &[Value], other: &HashSet<String>| {
            let mut seen = HashSet::new();
            list.iter()
                .filter(|v| !other.contains(&key_string(v)) && seen.insert(key_string(v)))
                .cloned()
                .collect::<Vec<_>>()
        };
        let added = if self.mode.changes() {
            only_in(new, &old_set)
        } else {
            Vec::new()
        };
        let removed = if self.mode.deletions() {
            only_in(old, &new_set)
        } else {
            Vec::new()
        };
        let changed = self.mode.changes()
            && (!added.is_empty()
                || common_order_differs(old.iter().map(key_string), new.iter().map(key_string)));
        if (!removed.is_empty() || changed) && !new.is_empty() {
            patch.insert(set_order_key(field), Value::Array(new.to_vec()));
        }
        if !added.is_empty() {
            patch.insert(field.to_owned(), Value::Array(added));
        }
        if !removed.is_empty() {
            patch.insert(delete_from_key(field), Value::Array(removed));
        }
    }
}

/// Whether the elements that both lists hold come in a different order.
///
/// Upstream compares the whole lists, so a live list with server-only
/// elements (an injected volume, a controller's finalizer) gets a
/// `$setElementOrder` on every apply; comparing only the common elements
/// keeps such a patch `{}` while still fixing every order the plan sets.
fn common_order_differs(
    old: impl Iterator<Item = String>,
    new: impl Iterator<Item = String>,
) -> bool {
    let (old, new): (Vec<String>, Vec<String>) = (old.collect(), new.collect());
    let old_set: HashSet<&String> = old.iter().collect();
    let new_set: HashSet<&String> = new.iter().collect();
    old.iter()
        .filter(|k| new_set.contains(k))
        .ne(new.iter().filter(|k| old_set.contains(k)))
}

/// The elements of a list of objects, each with its merge-key string.
type Keyed<'v> = Vec<(String, &'v Map<String, Value>)>;

/// The elements of a list of objects with their merge-key strings.
fn keyed<'v>(list: &'v [Value], key: &'static str, field: &str) -> Result<Keyed<'v>, Error> {
    list.iter()
        .filter_map(Value::as_object)
        .map(|element| Ok((key_of(element, key, field)?, element)))
        .collect()
}
