//! Reading the input of a stack into Kusion resources: plain Kubernetes
//! manifests (multi-document YAML or JSON, `List` kinds) and Kusion's spec
//! format (`resources: [{id, type, attributes, dependsOn, extensions}]`), from
//! files, directories or standard input. Each document is checked on its own
//! here; checks across resources (duplicate IDs, dependencies, cycles) are
//! [`crate::Stack`]'s.

use krt_guest::model::Resource;
use krt_guest::target::Manifest;
use serde_json::Value;
use std::path::Path;

/// The annotation with which a plain manifest names the IDs it depends on,
/// comma-separated (Kusion specs use `dependsOn`).
pub const DEPENDS_ON_ANNOTATION: &str = "krt.dev/depends-on";

/// The largest request body the Kubernetes API server accepts (3 MiB); a
/// bigger object can never be applied, so it is refused with the input checks.
pub const MAX_OBJECT_BYTES: usize = 3 * 1024 * 1024;

/// Input that cannot be used: every problem, each naming its file and document.
#[derive(Debug, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct ManifestError {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl ManifestError {
    fn one(problem: String) -> Self {
        ManifestError {
            problems: vec![problem],
        }
    }
}

/// A resource and where it was read from (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The resource.
    pub resource: Resource,
    /// `FILE: document N` (plus `resource M` inside a Kusion spec).
    pub origin: String,
}

/// Reads `path`: a file, a directory (its `*.yaml`, `*.yml` and `*.json` files
/// in name order, not recursive), or `-` for standard input.
///
/// # Errors
/// An unreadable file or directory, or any problem [`parse`] finds; every
/// problem of every file is listed.
pub fn load(path: &Path) -> Result<Vec<Loaded>, ManifestError> {
    let name = path.display().to_string();
    if name == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| ManifestError::one(format!("failed to read standard input: {e}")))?;
        return parse(&name, &text);
    }
    if path.is_dir() {
        let entries = std::fs::read_dir(path)
            .map_err(|e| ManifestError::one(format!("failed to read directory '{name}': {e}")))?;
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(ManifestError::one(format!(
                "directory '{name}' has no .yaml, .yml or .json files"
            )));
        }
        let mut loaded = Vec::new();
        let mut problems = Vec::new();
        for file in files {
            match load(&file) {
                Ok(mut l) => loaded.append(&mut l),
                Err(mut e) => problems.append(&mut e.problems),
            }
        }
        return if problems.is_empty() {
            Ok(loaded)
        } else {
            Err(ManifestError { problems })
        };
    }
    let bytes = std::fs::read(path)
        .map_err(|e| ManifestError::one(format!("failed to read '{name}': {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| ManifestError::one(format!("'{name}' is not UTF-8 text: {e}")))?;
    parse(&name, &text)
}

/// Parses input text; `source` names it in messages. A document with a
/// top-level `resources` list and no `kind` is a Kusion spec; any other
/// document is a Kubernetes object (or a `…List` of them) whose ID is derived
/// as `apiVersion:kind[:namespace]:name`.
///
/// # Errors
/// Invalid YAML, no document at all, a document that is not a mapping, a
/// `…List` whose `items` is not a list, a `metadata` that is not a mapping, a
/// missing or non-string `apiVersion`/`kind`/`metadata.name`, an object larger
/// than [`MAX_OBJECT_BYTES`], a `type` other than `Kubernetes`, or
/// an ID whose segments disagree with its attributes; every problem is listed.
pub fn parse(source: &str, text: &str) -> Result<Vec<Loaded>, ManifestError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text)
        .map_err(|e| ManifestError::one(format!("'{source}' is not valid YAML: {e}")))?;
    if docs.iter().all(Value::is_null) {
        return Err(ManifestError::one(format!(
            "'{source}' has no resources (it is empty or holds only comments)"
        )));
    }
    let mut problems = Vec::new();
    let mut loaded = Vec::new();
    for (index, doc) in docs.into_iter().enumerate() {
        let at = format!("{source}: document {}", index + 1);
        if doc.is_null() {
            continue;
        }
        if doc.get("resources").is_some() && doc.get("kind").is_none() {
            spec_resources(&at, &doc, &mut loaded, &mut problems);
            continue;
        }
        let items = match (doc.get("kind").and_then(Value::as_str), doc.get("items")) {
            (Some(kind), Some(Value::Array(items))) if kind.ends_with("List") => items.clone(),
            (Some(kind), Some(_)) if kind.ends_with("List") => {
                problems.push(format!("{at}: `items` of a {kind} must be a list"));
                continue;
            }
            _ => vec![doc],
        };
        for object in items {
            match manifest_resource(object) {
                Ok(resource) => loaded.push(Loaded {
                    resource,
                    origin: at.clone(),
                }),
                Err(problem) => problems.push(format!("{at}: {problem}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(loaded)
    } else {
        Err(ManifestError { problems })
    }
}

/// The resources of a Kusion spec document.
fn spec_resources(at: &str, doc: &Value, loaded: &mut Vec<Loaded>, problems: &mut Vec<String>) {
    let Some(items) = doc["resources"].as_array() else {
        problems.push(format!("{at}: `resources` must be a list"));
        return;
    };
    for (index, item) in items.iter().enumerate() {
        let origin = format!("{at}: resource {}", index + 1);
        match spec_resource(item) {
            Ok(resource) => loaded.push(Loaded { resource, origin }),
            Err(problem) => problems.push(format!("{origin}: {problem}")),
        }
    }
}

/// One entry of a Kusion spec, checked: type, attributes and ID segments.
fn spec_resource(item: &Value) -> Result<Resource, String> {
    let id = match &item["id"] {
        Value::String(id) if !id.is_empty() => id.clone(),
        Value::Null => return Err("missing id".into()),
        _ => return Err("id must be a non-empty string".into()),
    };
    match item["type"].as_str() {
        Some("Kubernetes") => {}
        Some(other) => {
            return Err(format!(
                "resource '{id}' has type '{other}'; krt runs only type 'Kubernetes'"
            ));
        }
        None => {
            return Err(format!(
                "resource '{id}': missing type (expected 'Kubernetes')"
            ));
        }
    }
    let depends_on = match &item["dependsOn"] {
        Value::Null => Vec::new(),
        Value::Array(ids) => ids
            .iter()
            .map(|d| d.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("resource '{id}': dependsOn must be a list of IDs"))?,
        _ => return Err(format!("resource '{id}': dependsOn must be a list of IDs")),
    };
    let extensions = match &item["extensions"] {
        Value::Null => Value::Object(Default::default()),
        e @ Value::Object(_) => e.clone(),
        _ => return Err(format!("resource '{id}': extensions must be a mapping")),
    };
    let attributes = item["attributes"].clone();
    check_object(&attributes).map_err(|p| format!("resource '{id}': attributes: {p}"))?;
    let resource = Resource {
        id,
        type_: "Kubernetes".into(),
        attributes,
        depends_on,
        extensions,
    };
    // The runtime's own check of the ID against the manifest, so both agree.
    Manifest::from_resource(&resource).map_err(|status| status.message)?;
    Ok(resource)
}

/// Checks the fields every Kubernetes object needs.
fn check_object(object: &Value) -> Result<(), String> {
    if !object.is_object() {
        return Err("not a mapping (a Kubernetes object was expected)".into());
    }
    let text = |v: &Value, what: &str| -> Result<(), String> {
        match v {
            Value::String(s) if !s.trim().is_empty() && !s.contains(':') => Ok(()),
            Value::String(s) if s.contains(':') => {
                Err(format!("{what} '{s}' must not contain ':'"))
            }
            Value::Null => Err(format!("missing {what}")),
            _ => Err(format!("{what} must be a non-empty string")),
        }
    };
    text(&object["apiVersion"], "apiVersion")?;
    text(&object["kind"], "kind")?;
    if !object["metadata"].is_object() && !object["metadata"].is_null() {
        return Err("metadata must be a mapping".into());
    }
    text(&object["metadata"]["name"], "metadata.name")?;
    if !object["metadata"]["namespace"].is_null() {
        text(&object["metadata"]["namespace"], "metadata.namespace")?;
    }
    let size = serde_json::to_vec(object).map_or(usize::MAX, |json| json.len());
    if size > MAX_OBJECT_BYTES {
        return Err(format!(
            "the object is too large: {size} bytes as JSON; the Kubernetes API server accepts at most {MAX_OBJECT_BYTES} bytes (3 MiB) per request"
        ));
    }
    Ok(())
}

/// The Kusion resource of one plain manifest; its dependencies come from the
/// [`DEPENDS_ON_ANNOTATION`].
fn manifest_resource(object: Value) -> Result<Resource, String> {
    check_object(&object)?;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let (api_version, kind, name) = (
        s(&object["apiVersion"]),
        s(&object["kind"]),
        s(&object["metadata"]["name"]),
    );
    let id = match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{api_version}:{kind}:{ns}:{name}"),
        None => format!("{api_version}:{kind}:{name}"),
    };
    let depends_on = object["metadata"]["annotations"][DEPENDS_ON_ANNOTATION]
        .as_str()
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(Resource {
        id,
        type_: "Kubernetes".into(),
        attributes: object,
        depends_on,
        extensions: Value::Object(Default::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> Vec<String> {
        parse("t.yaml", text)
            .unwrap()
            .into_iter()
            .map(|l| l.resource.id)
            .collect()
    }

    fn problems(text: &str) -> String {
        parse("bad.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn derives_ids_and_skips_empty_documents() {
        let text = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: demo}\ndata: {a: b}\n";
        assert_eq!(ids(text), ["v1:Namespace:demo", "v1:ConfigMap:demo:cfg"]);
    }

    #[test]
    fn lists_every_problem_with_its_document() {
        let err = problems(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n- 1\n---\nkind: Pod\nmetadata: {name: p}\n",
        );
        assert_eq!(
            err,
            "bad.yaml: document 1: missing metadata.name\n\
             bad.yaml: document 2: not a mapping (a Kubernetes object was expected)\n\
             bad.yaml: document 3: missing apiVersion"
        );
    }

    #[test]
    fn rejects_empty_input_bad_lists_and_metadata() {
        assert_eq!(
            problems("# only a comment\n---\n"),
            "'bad.yaml' has no resources (it is empty or holds only comments)"
        );
        assert_eq!(
            problems(
                "kind: List\nitems: {a: 1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: 5\n"
            ),
            "bad.yaml: document 1: `items` of a List must be a list\n\
             bad.yaml: document 2: metadata must be a mapping"
        );
    }

    #[test]
    fn rejects_malformed_yaml() {
        let err = problems("apiVersion: v1\nkind: [unclosed\n");
        assert!(err.starts_with("'bad.yaml' is not valid YAML"), "{err}");
    }

    #[test]
    fn reads_depends_on_from_the_annotation() {
        let text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations: {krt.dev/depends-on: 'apps/v1:Deployment:web, v1:ConfigMap:c'}\n";
        let loaded = parse("t.yaml", text).unwrap();
        assert_eq!(
            loaded[0].resource.depends_on,
            ["apps/v1:Deployment:web", "v1:ConfigMap:c"]
        );
    }

    #[test]
    fn reads_a_kusion_spec() {
        let text = r#"
resources:
  - id: v1:Namespace:demo
    type: Kubernetes
    attributes: {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  - id: v1:ConfigMap:demo:cfg
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: demo}}
    dependsOn: [v1:Namespace:demo]
    extensions: {GVK: "/v1, Kind=ConfigMap"}
"#;
        let loaded = parse("spec.yaml", text).unwrap();
        assert_eq!(loaded[1].resource.id, "v1:ConfigMap:demo:cfg");
        assert_eq!(loaded[1].resource.depends_on, ["v1:Namespace:demo"]);
        assert_eq!(loaded[1].origin, "spec.yaml: document 1: resource 2");
    }

    #[test]
    fn checks_kusion_types_and_id_segments() {
        let text = r#"
resources:
  - id: hashicorp:random:random_password:pw
    type: Terraform
    attributes: {}
  - id: v1:ConfigMap:demo:cfg
    type: Kubernetes
    attributes: {apiVersion: v1, kind: Secret, metadata: {name: cfg, namespace: demo}}
  - id: v1:ConfigMap
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
  - id: v1:ConfigMap:y
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {}}
"#;
        let err = problems(text);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 4, "{err}");
        assert!(
            lines[0].starts_with("bad.yaml: document 1: resource 1: resource 'hashicorp:random:random_password:pw' has type 'Terraform'"),
            "{err}"
        );
        assert!(
            lines[1].starts_with("bad.yaml: document 1: resource 2: "),
            "{err}"
        );
        assert!(lines[1].contains("Secret"), "{err}");
        assert!(lines[2].contains("found 2 segment(s)"), "{err}");
        assert!(
            lines[3].ends_with("attributes: missing metadata.name"),
            "{err}"
        );
    }
}
