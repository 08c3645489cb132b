//! Server-side apply and `managedFields` bookkeeping: who owns which field, conflicts between
//! managers, and removal of fields a manager stops applying.

mod compare;
mod fieldset;
mod merge;
mod recorded;
mod schema;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, StatusCause, Time,
};
use krt_guest::normalize::LAST_APPLIED_ANNOTATION as LAST_APPLIED;
use serde_json::Value;

pub use fieldset::{FieldSet, Path};
pub use recorded::{each_quantity, fill_zero_structs};
pub use schema::ListType;
pub use schema::{Schema, write_nulls};

/// Who is writing: the field manager, the API version it writes in, and the subresource.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    /// `fieldManager`.
    pub manager: &'a str,
    /// apiVersion of the request.
    pub api_version: &'a str,
    /// `Some("status")` for status-subresource writes.
    pub subresource: Option<&'a str>,
    /// Seconds since the epoch, for the entry's `time`.
    pub now: i64,
}

/// One field another manager owns that an apply would change.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The owner as apimachinery prints it (`"mgr"`, or `"mgr" using apps/v1` for Update owners).
    pub owner: String,
    /// The field, as `.spec.replicas`.
    pub field: String,
    /// The field's path.
    pub path: Path,
}

/// The manager `kubectl apply --server-side` uses by default, the only one that takes over
/// client-side apply's fields.
const KUBECTL: &str = "kubectl";

fn last_applied(object: &Value) -> Option<Value> {
    object["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .filter(|s| !s.is_empty())
        .and_then(|s| serde_json::from_str(s).ok())
}

/// Whether an apply by `manager` may take over `conflicts` because the object was managed by
/// client-side apply (apimachinery `lastappliedmanager.go`): the manager is `kubectl` and every
/// conflicting field is in the last-applied annotation and in the live object. The apply is
/// then forced.
pub fn upgrades_client_side_apply(
    live: &Value,
    conflicts: &[Conflict],
    schema: &Schema,
    manager: &str,
) -> bool {
    if manager != KUBECTL {
        return false;
    }
    let Some(last) = last_applied(live) else {
        return false;
    };
    let (last, live) = (
        FieldSet::of_object(&last, schema),
        FieldSet::of_object(live, schema),
    );
    conflicts
        .iter()
        .all(|c| last.contains(&c.path) && live.contains(&c.path))
}

/// Keeps the last-applied annotation in step with an apply by `kubectl`, so that going back to
/// client-side apply works (apimachinery `lastappliedupdater.go`): when `applied` has the
/// annotation, it becomes `config` (without the annotation, keys sorted as Go writes them).
pub fn sync_last_applied(applied: &mut Value, config: &Value, manager: &str) {
    if manager != KUBECTL || last_applied(applied).is_none() {
        return;
    }
    let mut last = config.clone();
    if let Some(annotations) = last
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(LAST_APPLIED);
    }
    applied["metadata"]["annotations"][LAST_APPLIED] = Value::String(sorted(&last).to_string());
}

/// `value` with every object's keys in order, as Go's `json.Marshal` writes maps (and kubectl
/// writes the annotation), so the same configuration gives the same text.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The message of a 409 for `conflicts` (apimachinery `managedfields/internal/conflict.go`).
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    let n = conflicts.len();
    let body = if n == 1 {
        format!(
            "conflict with {}: {}",
            conflicts[0].owner, conflicts[0].field
        )
    } else {
        let mut owners: Vec<&str> = conflicts.iter().map(|c| c.owner.as_str()).collect();
        owners.sort_unstable();
        owners.dedup();
        let mut lines = Vec::new();
        for owner in owners {
            lines.push(format!("conflicts with {owner}:"));
            lines.extend(
                conflicts
                    .iter()
                    .filter(|c| c.owner == owner)
                    .map(|c| format!("- {}", c.field)),
            );
        }
        lines.join("\n")
    };
    format!(
        "Apply failed with {n} conflict{}: {body}",
        if n == 1 { "" } else { "s" }
    )
}

/// The `FieldManagerConflict` causes for `conflicts`.
pub fn conflict_causes(conflicts: &[Conflict]) -> Vec<StatusCause> {
    conflicts
        .iter()
        .map(|c| StatusCause {
            reason: Some("FieldManagerConflict".into()),
            message: Some(format!("conflict with {}", c.owner)),
            field: Some(c.field.clone()),
        })
        .collect()
}

/// `object`'s managedFields entries, each set read in the object's own version: an entry of
/// another version names fields as that version does (an events.k8s.io write to a core Event
/// owns `f:note`, the core write `f:message`), and is renamed here as it is compared.
fn entries_of(object: &Value) -> Vec<ManagedFieldsEntry> {
    let mut entries: Vec<ManagedFieldsEntry> =
        serde_json::from_value(object["metadata"]["managedFields"].clone()).unwrap_or_default();
    for e in &mut entries {
        rename_fields(object, e, Direction::ToStored);
    }
    entries
}

/// Which way [`rename_fields`] renames.
#[derive(Clone, Copy)]
enum Direction {
    /// From the entry's version to the object's.
    ToStored,
    /// From the object's version to the entry's.
    ToEntry,
}

/// Renames the top-level fields of `entry`'s set between its version and `object`'s, where
/// the two name them differently: core `v1` and `events.k8s.io/v1` Events.
fn rename_fields(object: &Value, entry: &mut ManagedFieldsEntry, direction: Direction) {
    use crate::events::convert::{EVENTS_VERSION, core_field, events_field};
    let stored = object["apiVersion"].as_str().unwrap_or_default();
    let version = entry.api_version.as_deref().unwrap_or_default();
    let to_events = match (stored, version, direction) {
        ("v1", EVENTS_VERSION, Direction::ToEntry)
        | (EVENTS_VERSION, "v1", Direction::ToStored) => true,
        ("v1", EVENTS_VERSION, Direction::ToStored)
        | (EVENTS_VERSION, "v1", Direction::ToEntry) => false,
        _ => return,
    };
    if object["kind"] != "Event" {
        return;
    }
    let Some(FieldsV1(Value::Object(fields))) = entry.fields_v1.as_mut() else {
        return;
    };
    *fields = std::mem::take(fields)
        .into_iter()
        .map(|(key, value)| match key.strip_prefix("f:") {
            Some(name) if to_events => (format!("f:{}", events_field(name)), value),
            Some(name) => (format!("f:{}", core_field(name)), value),
            None => (key, value),
        })
        .collect();
}

fn set_of(entry: &ManagedFieldsEntry) -> FieldSet {
    entry
        .fields_v1
        .as_ref()
        .map(|f| FieldSet::from_fields_v1(&f.0))
        .unwrap_or_default()
}

fn is_writer(entry: &ManagedFieldsEntry, writer: &Writer<'_>, operation: &str) -> bool {
    entry.manager.as_deref() == Some(writer.manager)
        && entry.operation.as_deref() == Some(operation)
        && entry.subresource.as_deref() == writer.subresource
}

fn owner_display(entry: &ManagedFieldsEntry) -> String {
    let mut s = format!("{:?}", entry.manager.as_deref().unwrap_or_default());
    if let Some(sub) = &entry.subresource {
        s.push_str(&format!(" with subresource {sub:?}"));
    }
    if entry.operation.as_deref() == Some("Update") {
        s.push_str(&format!(
            " using {}",
            entry.api_version.as_deref().unwrap_or_default()
        ));
    }
    s
}

fn entry(writer: &Writer<'_>, operation: &str, set: &FieldSet) -> ManagedFieldsEntry {
    ManagedFieldsEntry {
        api_version: Some(writer.api_version.to_string()),
        fields_type: Some("FieldsV1".into()),
        fields_v1: Some(FieldsV1(set.to_fields_v1())),
        manager: Some(writer.manager.to_string()),
        operation: Some(operation.to_string()),
        subresource: writer.subresource.map(str::to_string),
        time: Some(Time(
            k8s_openapi::jiff::Timestamp::from_second(writer.now)
                .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        )),
    }
}

/// Stores `entries` in `object`, without those that own nothing, in the order the API server
/// keeps them (`sortEncodedManagedFields`: operation, time, manager, apiVersion, subresource).
fn store_entries(object: &mut Value, entries: Vec<ManagedFieldsEntry>) {
    let mut entries: Vec<ManagedFieldsEntry> = entries
        .into_iter()
        .filter(|e| {
            e.fields_v1
                .as_ref()
                .is_some_and(|f| f.0.as_object().is_some_and(|m| !m.is_empty()))
        })
        .map(|mut e| {
            rename_fields(object, &mut e, Direction::ToEntry);
            e
        })
        .collect();
    entries.sort_by(|p, q| {
        let seconds = |e: &ManagedFieldsEntry| e.time.as_ref().map_or(0, |t| t.0.as_second());
        (p.operation.as_deref(), seconds(p), p.manager.as_deref())
            .cmp(&(q.operation.as_deref(), seconds(q), q.manager.as_deref()))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert(
                "managedFields".into(),
                serde_json::to_value(entries).unwrap_or(Value::Null),
            );
        }
    }
}

/// Takes what `comparison` changed away from every manager but `writer` (structured-merge-diff's
/// `Updater.update`): fields another manager owns that were modified or added conflict
/// (unless `force`, when they move to the writer), removed fields leave their owners.
///
/// # Errors
/// The conflicts, when there are some and `force` is false.
fn take_changes(
    entries: &mut [ManagedFieldsEntry],
    comparison: &compare::Comparison,
    writer: &Writer<'_>,
    operation: &str,
    force: bool,
) -> Result<(), Vec<Conflict>> {
    let mut conflicts = Vec::new();
    for e in entries
        .iter_mut()
        .filter(|e| !is_writer(e, writer, operation))
    {
        let owned = set_of(e);
        let lost: Vec<Path> = owned
            .0
            .iter()
            .filter(|p| comparison.modified.contains(p) || comparison.added.contains(p))
            .cloned()
            .collect();
        if !force && !lost.is_empty() {
            let owner = owner_display(e);
            conflicts.extend(lost.iter().map(|p| Conflict {
                owner: owner.clone(),
                field: fieldset::display(p),
                path: p.clone(),
            }));
            continue;
        }
        let mut kept = owned.difference(&comparison.removed);
        for p in &lost {
            kept.0.remove(p);
        }
        e.fields_v1 = Some(FieldsV1(kept.to_fields_v1()));
    }
    if conflicts.is_empty() {
        Ok(())
    } else {
        Err(conflicts)
    }
}

/// Server-side apply of `config` by `writer` onto `live` (for a create: a skeleton with only
/// apiVersion, kind and metadata name/namespace), as structured-merge-diff's `Updater.Apply`:
/// merge, own what the configuration sets, prune what the manager stopped applying, and take
/// the changed fields from the other managers. Returns the new object with its
/// `managedFields`.
///
/// # Errors
/// The conflicts with other managers' fields, when there are some and `force` is false.
pub fn server_side_apply(
    live: &Value,
    config: &Value,
    schema: &Schema,
    writer: &Writer<'_>,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let mut entries = entries_of(live);
    let mut config_set = FieldSet::of_object(config, schema);
    config_set.0.retain(|p| schema.owns(writer.subresource, p));
    let mut merged = merge::merge_config(live, config, schema);

    let previous = entries
        .iter()
        .find(|e| is_writer(e, writer, "Apply"))
        .map(set_of)
        .unwrap_or_default();
    let others: Vec<FieldSet> = entries
        .iter()
        .filter(|e| !is_writer(e, writer, "Apply"))
        .map(set_of)
        .collect();
    // Shallowest first: removing an item takes its children with it, and removing a child
    // first would change the key the item is found by.
    for path in &previous.difference(&config_set).0 {
        if !config_set.touches(path) && !others.iter().any(|o| o.touches(path)) {
            fieldset::remove(&mut merged, path);
        }
    }

    let comparison = compare::compare(live, &merged, schema);
    take_changes(&mut entries, &comparison, writer, "Apply", force)?;
    match entries.iter_mut().find(|e| is_writer(e, writer, "Apply")) {
        Some(e) => *e = entry(writer, "Apply", &config_set),
        None => entries.push(entry(writer, "Apply", &config_set)),
    }
    store_entries(&mut merged, entries);
    Ok(merged)
}

/// Records a non-apply write (create, update, patch) of `new` over `old` by `writer`, as
/// structured-merge-diff's `Updater.Update`: the writer gains what it added or modified and
/// loses what it removed; every other manager loses all three. `managedFields` sent in `new`
/// replace the live ones (how clients migrate ownership). An existing object nobody owns
/// anything of stays untracked (apimachinery's `skipNonAppliedManager`): only an apply starts
/// tracking it again.
pub fn record_update(old: Option<&Value>, new: &mut Value, schema: &Schema, writer: &Writer<'_>) {
    let empty = Value::Object(serde_json::Map::new());
    let existed = old.is_some();
    let old = old.unwrap_or(&empty);
    let sent = &new["metadata"]["managedFields"];
    let mut entries = if sent.is_array() && *sent != old["metadata"]["managedFields"] {
        entries_of(new)
    } else {
        entries_of(old)
    };
    if existed && entries.is_empty() {
        store_entries(new, entries);
        return;
    }
    let mut comparison = compare::compare(old, new, schema);
    for set in [
        &mut comparison.added,
        &mut comparison.modified,
        &mut comparison.removed,
    ] {
        set.0.retain(|p| schema.owns(writer.subresource, p));
    }
    if comparison.added.is_empty()
        && comparison.modified.is_empty()
        && comparison.removed.is_empty()
    {
        store_entries(new, entries);
        return;
    }
    // Never fails when forced.
    let _ = take_changes(&mut entries, &comparison, writer, "Update", true);
    let mine = entries
        .iter()
        .find(|e| is_writer(e, writer, "Update"))
        .map(set_of)
        .unwrap_or_default();
    let mut mine = FieldSet(
        mine.0
            .union(&comparison.added.0)
            .chain(comparison.modified.0.iter())
            .cloned()
            .collect(),
    )
    .difference(&comparison.removed);
    mine.0.retain(|p| schema.owns(writer.subresource, p));
    let updated = entry(writer, "Update", &mine);
    match entries.iter_mut().find(|e| is_writer(e, writer, "Update")) {
        Some(e) => *e = updated,
        None => entries.push(updated),
    }
    store_entries(new, entries);
}

/// `managedFields` with every `time` removed, to tell a real ownership change from a re-stamp.
pub fn ownership(object: &Value) -> Vec<ManagedFieldsEntry> {
    let mut entries = entries_of(object);
    for e in &mut entries {
        e.time = None;
    }
    entries
}

#[cfg(test)]
mod tests;
