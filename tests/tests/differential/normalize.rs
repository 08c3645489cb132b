//! What is meant to differ between two servers, removed from answers.

use serde_json::{Value, json};
use std::str::FromStr;

/// Removes what is meant to differ between two servers (see the module's doc).
pub fn normalize(value: &mut Value) {
    let is_status = value["kind"] == "Status";
    if value["kind"] == "Table" {
        let allocated: Vec<usize> = value["columnDefinitions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, c)| c["name"] == "Cluster-IP")
            .map(|(i, _)| i)
            .collect();
        let rows = value["rows"].as_array_mut();
        for row in rows.into_iter().flatten() {
            let generated = !row["object"]["metadata"]["generateName"].is_null();
            for (i, cell) in row["cells"]
                .as_array_mut()
                .into_iter()
                .flatten()
                .enumerate()
            {
                // A Table's ages (`5s`, `2m3s`) are the time since creation; a generated name
                // and an allocated cluster IP are the server's pick.
                if cell.as_str().is_some_and(is_age) {
                    *cell = json!("<age>");
                } else if i == 0 && generated {
                    *cell = json!("<generated>");
                } else if allocated.contains(&i) && cell != "None" {
                    *cell = json!("<allocated>");
                }
            }
        }
        if let Some(rows) = value["rows"].as_array_mut() {
            rows.sort_by_key(|row| row["cells"].to_string());
        }
    }
    if let Some(map) = value.as_object_mut() {
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "selfLink",
                "continue",
                "remainingItemCount",
            ] {
                meta.remove(field);
            }
            if let Some(entries) = meta.get_mut("managedFields").and_then(Value::as_array_mut) {
                // Status writes are the controllers', on their own schedule.
                entries.retain(|e| e["subresource"] != "status");
                for entry in entries.iter_mut() {
                    if let Some(entry) = entry.as_object_mut() {
                        entry.remove("time");
                    }
                }
                // Entries are sorted by time first: whether a controller's write fell in the
                // same second as the one before it is timing.
                entries.sort_by_key(|e| {
                    ["operation", "manager", "apiVersion", "subresource"].map(|f| e[f].to_string())
                });
            }
            if meta.contains_key("generateName") {
                meta.insert("name".into(), json!("<generated>"));
            }
        }
        if !is_status && map.contains_key("metadata") {
            map.remove("status");
        }
        if let Some(spec) = map.get_mut("spec").and_then(Value::as_object_mut) {
            for field in ["clusterIP", "clusterIPs"] {
                if spec.contains_key(field) {
                    spec.insert(field.into(), json!("<allocated>"));
                }
            }
        }
        if let Some(items) = map.get_mut("items").and_then(Value::as_array_mut) {
            // By name as normalized: a generated one is `<generated>`.
            items.sort_by_key(|i| {
                let name = match i["metadata"]["generateName"] {
                    Value::Null => i["metadata"]["name"].to_string(),
                    _ => "<generated>".to_string(),
                };
                (i["metadata"]["namespace"].to_string(), name)
            });
        }
    }
    match value {
        Value::Object(map) => {
            // Where discovery says the server listens (`/api`).
            if let Some(Value::String(address)) = map.get_mut("serverAddress") {
                *address = "<address>".into();
            }
            // An object reference's resourceVersion (a claim's `claimRef`).
            if let Some(Value::String(version)) = map.get_mut("resourceVersion") {
                *version = "<resourceVersion>".into();
            }
            // managedFields name list items by key, and an ownerReference's key is its uid.
            if map.keys().any(|k| uids_replaced(k).is_some()) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (uids_replaced(&k).unwrap_or(k), v))
                    .collect();
            }
            map.values_mut().for_each(normalize)
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        Value::String(text) if jiff::Timestamp::from_str(text).is_ok() => *text = "<time>".into(),
        // Who the client is differs by its certificate, the cluster by its CA.
        Value::String(text) if text.starts_with("X509SHA256=") => {
            *text = "X509SHA256=<fingerprint>".into();
        }
        Value::String(text) if text.starts_with("-----BEGIN CERTIFICATE-----") => {
            *text = "<certificate>".into();
        }
        Value::String(text) => {
            // A uid, or one inside a text (a Job's selector as a Table prints it).
            if let Some(free) = uids_replaced(text) {
                *text = free;
            // The projected token volume's random suffix.
            } else if let Some(suffix) = text.strip_prefix("kube-api-access-")
                && suffix.len() == 5
            {
                *text = "kube-api-access-<random>".into();
            }
        }
        _ => {}
    }
}

/// `text` with every UUID in it replaced by `<uid>`, if it has one.
fn uids_replaced(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let (mut i, mut last, mut found) = (0, 0, false);
    while i + 36 <= bytes.len() {
        if text.is_char_boundary(i) && text.is_char_boundary(i + 36) && is_uid(&text[i..i + 36]) {
            out.push_str(&text[last..i]);
            out.push_str("<uid>");
            i += 36;
            last = i;
            found = true;
        } else {
            i += 1;
        }
    }
    found.then(|| out + &text[last..])
}

/// Whether `text` is a UUID (`8-4-4-4-12` hex digits), as uids are.
fn is_uid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The keys of the objects `pointers` name in `body`, sorted: `{pointer: [key, ...]}`.
pub fn keys(body: &Value, pointers: &[String]) -> Value {
    Value::Object(
        pointers
            .iter()
            .map(|pointer| {
                let mut keys: Vec<&String> = body
                    .pointer(pointer)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|map| map.keys())
                    .collect();
                keys.sort();
                (pointer.clone(), json!(keys))
            })
            .collect(),
    )
}

/// Whether `text` is a duration as kubectl's columns print it (`0s`, `2m3s`, `5d`).
fn is_age(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit())
        && text.ends_with(['s', 'm', 'h', 'd', 'y'])
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}
