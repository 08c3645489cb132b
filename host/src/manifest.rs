//! Reading Kubernetes manifests (multi-document YAML or JSON) into Kusion
//! resources, validating the whole input before anything touches a cluster.

use guest::model::Resource;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// A manifest that cannot be used; the message names the source and document.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ManifestError(pub String);

/// Reads `path` (`-` for standard input) and returns one resource per
/// non-empty document, with its ID derived from the manifest.
///
/// # Errors
/// Unreadable file, invalid YAML, a document that is not a mapping, a missing
/// `apiVersion`/`kind`/`metadata.name`, or a duplicate ID. Every problem is
/// listed, one per line.
pub fn load(path: &Path) -> Result<Vec<Resource>, ManifestError> {
    let name = path.display().to_string();
    let text = if name == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| ManifestError(format!("failed to read standard input: {e}")))?;
        text
    } else {
        let bytes = std::fs::read(path)
            .map_err(|e| ManifestError(format!("failed to read '{name}': {e}")))?;
        String::from_utf8(bytes)
            .map_err(|e| ManifestError(format!("'{name}' is not UTF-8 text: {e}")))?
    };
    parse(&name, &text)
}

/// Parses manifest text; `source` names it in error messages.
///
/// # Errors
/// As [`load`].
pub fn parse(source: &str, text: &str) -> Result<Vec<Resource>, ManifestError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text)
        .map_err(|e| ManifestError(format!("'{source}' is not valid YAML: {e}")))?;
    let mut problems = Vec::new();
    let mut resources = Vec::new();
    let mut ids = HashSet::new();
    for (index, doc) in docs.into_iter().enumerate() {
        let n = index + 1;
        if doc.is_null() {
            continue;
        }
        let items = match doc.get("kind").and_then(Value::as_str) {
            Some(kind) if kind.ends_with("List") && doc.get("items").is_some() => {
                doc["items"].as_array().cloned().unwrap_or_default()
            }
            _ => vec![doc],
        };
        for object in items {
            match resource_of(object) {
                Ok(resource) => {
                    if !ids.insert(resource.id.clone()) {
                        problems.push(format!(
                            "{source}: document {n}: duplicate resource {}",
                            resource.id
                        ));
                    }
                    resources.push(resource);
                }
                Err(problem) => problems.push(format!("{source}: document {n}: {problem}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(resources)
    } else {
        Err(ManifestError(problems.join("\n")))
    }
}

/// The Kusion resource of one manifest: ID `apiVersion:kind[:namespace]:name`.
fn resource_of(object: Value) -> Result<Resource, String> {
    if !object.is_object() {
        return Err("not a mapping (a Kubernetes object was expected)".into());
    }
    let text = |v: &Value, what: &str| -> Result<String, String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            Value::Null => Err(format!("missing {what}")),
            _ => Err(format!("{what} must be a non-empty string")),
        }
    };
    let api_version = text(&object["apiVersion"], "apiVersion")?;
    let kind = text(&object["kind"], "kind")?;
    let name = text(&object["metadata"]["name"], "metadata.name")?;
    let namespace = match &object["metadata"]["namespace"] {
        Value::Null => None,
        other => Some(text(other, "metadata.namespace")?),
    };
    for (what, value) in [
        ("apiVersion", &api_version),
        ("kind", &kind),
        ("metadata.name", &name),
    ] {
        if value.contains(':') {
            return Err(format!("{what} '{value}' must not contain ':'"));
        }
    }
    let id = match &namespace {
        Some(ns) => format!("{api_version}:{kind}:{ns}:{name}"),
        None => format!("{api_version}:{kind}:{name}"),
    };
    Ok(Resource {
        id,
        type_: "Kubernetes".into(),
        attributes: object,
        depends_on: Vec::new(),
        extensions: Value::Object(Default::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_ids_and_skips_empty_documents() {
        let text = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: demo}\ndata: {a: b}\n";
        let rs = parse("t.yaml", text).unwrap();
        let ids: Vec<_> = rs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["v1:Namespace:demo", "v1:ConfigMap:demo:cfg"]);
    }

    #[test]
    fn lists_every_problem_with_its_document() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n- 1\n---\nkind: Pod\nmetadata: {name: p}\n";
        let err = parse("bad.yaml", text).unwrap_err().0;
        assert!(
            err.contains("bad.yaml: document 1: missing metadata.name"),
            "{err}"
        );
        assert!(err.contains("bad.yaml: document 2: not a mapping"), "{err}");
        assert!(
            err.contains("bad.yaml: document 3: missing apiVersion"),
            "{err}"
        );
    }

    #[test]
    fn rejects_duplicates_and_malformed_yaml() {
        let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";
        let err = parse("d.yaml", &format!("{doc}---\n{doc}")).unwrap_err().0;
        assert!(err.contains("duplicate resource v1:ConfigMap:a"), "{err}");
        let err = parse("m.yaml", "apiVersion: v1\nkind: [unclosed\n")
            .unwrap_err()
            .0;
        assert!(err.starts_with("'m.yaml' is not valid YAML"), "{err}");
    }
}
