//! Turning a [`Resource`] into the object a cluster call is about: the id is
//! checked against the manifest, the kind is resolved, and the namespace is
//! defaulted (id, then manifest, then the caller's default, then `default`)
//! and written into the object that is sent.

use crate::cluster::Cluster;
use crate::errors::{self, Operation, Subject};
use crate::id::ResourceId;
use crate::model::{ApiResource, Resource, Status};
use serde_json::{Map, Value};

/// The namespace used when nothing else names one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// `metadata` fields only the server sets; never sent in a write.
const SERVER_METADATA: [&str; 8] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// A manifest whose id was checked, before its kind is resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The parsed id.
    pub id: ResourceId,
    /// The manifest's `apiVersion`.
    pub api_version: String,
    /// The manifest's `kind`.
    pub kind: String,
    /// The manifest's `metadata.name`.
    pub name: String,
    /// The namespace named by the id or the manifest, if any.
    pub namespace: Option<String>,
    /// The manifest itself.
    pub object: Value,
}

/// A resource resolved against the cluster: what every call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The REST resource serving the kind.
    pub api: ApiResource,
    /// The namespace, `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// The object to send: the manifest with the namespace written in and
    /// server-set fields (`status`, `managedFields`, `resourceVersion`, ...) removed.
    pub object: Value,
    /// The object, for messages.
    pub subject: Subject,
}

fn string_at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(object, |v, key| v.get(key))
        .and_then(Value::as_str)
}

impl Manifest {
    /// Parses the id and checks it against the manifest.
    ///
    /// # Errors
    /// `illegal-manifest` when the attributes are not an object or lack
    /// `apiVersion`, `kind` or `metadata.name`, or a Secret's `data` holds a
    /// value that is not base64 (which the API server refuses); `invalid-argument` when the id is
    /// malformed or disagrees with the manifest (naming both values).
    pub fn from_resource(resource: &Resource) -> Result<Manifest, Status> {
        let object = &resource.attributes;
        if !object.is_object() {
            return Err(errors::illegal_manifest(format!(
                "resource '{}': attributes must be a JSON object (a Kubernetes manifest)",
                resource.id
            )));
        }
        let field = |path: &[&str], label: &str| -> Result<String, Status> {
            match string_at(object, path) {
                Some(v) if !v.is_empty() => Ok(v.to_owned()),
                _ => Err(errors::illegal_manifest(format!(
                    "resource '{}': the manifest has no {label} (a non-empty string is required)",
                    resource.id
                ))),
            }
        };
        let api_version = field(&["apiVersion"], "apiVersion")?;
        let kind = field(&["kind"], "kind")?;
        let name = field(&["metadata", "name"], "metadata.name")?;
        let manifest_ns = match object.get("metadata").and_then(|m| m.get("namespace")) {
            None | Some(Value::Null) => None,
            Some(Value::String(ns)) if ns.is_empty() => None,
            Some(Value::String(ns)) => Some(ns.clone()),
            Some(_) => {
                return Err(errors::illegal_manifest(format!(
                    "resource '{}': metadata.namespace must be a string",
                    resource.id
                )));
            }
        };
        let id =
            ResourceId::parse(&resource.id).map_err(|e| errors::invalid_argument(e.to_string()))?;
        let mismatch = |what: &str, in_id: &str, in_manifest: &str| {
            errors::invalid_argument(format!(
                "resource '{}': the id's {what} '{in_id}' does not match the manifest's '{in_manifest}'",
                resource.id
            ))
        };
        if id.api_version != api_version {
            return Err(mismatch("apiVersion", &id.api_version, &api_version));
        }
        if id.kind != kind {
            return Err(mismatch("kind", &id.kind, &kind));
        }
        if id.name != name {
            return Err(mismatch("name", &id.name, &name));
        }
        if let (Some(in_id), Some(in_manifest)) = (&id.namespace, &manifest_ns)
            && in_id != in_manifest
        {
            return Err(mismatch("namespace", in_id, in_manifest));
        }
        if api_version == "v1" && kind == "Secret" {
            check_secret_data(&resource.id, object)?;
        }
        let namespace = id.namespace.clone().or(manifest_ns);
        Ok(Manifest {
            id,
            api_version,
            kind,
            name,
            namespace,
            object: object.clone(),
        })
    }

    /// Completes the manifest with its resolved kind: defaults the namespace of
    /// namespaced kinds and writes it into the object; refuses a namespace in
    /// the id of a cluster-scoped kind.
    ///
    /// # Errors
    /// `invalid-argument` when the id names a namespace for a cluster-scoped kind.
    pub fn target(
        &self,
        api: ApiResource,
        default_namespace: Option<&str>,
    ) -> Result<Target, Status> {
        let namespace = if api.namespaced {
            Some(
                self.namespace
                    .clone()
                    .or_else(|| {
                        default_namespace
                            .filter(|ns| !ns.is_empty())
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned()),
            )
        } else {
            if let Some(ns) = &self.id.namespace {
                return Err(errors::invalid_argument(format!(
                    "resource '{}': {} is cluster-scoped, but the id names namespace '{ns}'; use '{}:{}:{}'",
                    self.id, self.kind, self.api_version, self.kind, self.name
                )));
            }
            None
        };
        let object = sanitize(&self.object, namespace.as_deref());
        Ok(Target {
            subject: Subject {
                api_version: self.api_version.clone(),
                kind: self.kind.clone(),
                namespace: namespace.clone(),
                name: self.name.clone(),
            },
            api,
            namespace,
            name: self.name.clone(),
            object,
        })
    }

    /// The subject for messages before the kind is resolved.
    pub fn subject(&self) -> Subject {
        Subject {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// Resolves the kind with the cluster and completes the target.
    ///
    /// # Errors
    /// `kind-not-installed` when the cluster does not serve the kind, the mapped
    /// error of a failed discovery, and the errors of [`Manifest::target`].
    pub fn resolve<C: Cluster>(
        &self,
        cluster: &C,
        default_namespace: Option<&str>,
    ) -> Result<Target, Status> {
        let api = cluster
            .resolve(&self.api_version, &self.kind)
            .map_err(|e| errors::map_api_error(&e, &self.subject(), Operation::Resolve))?;
        self.target(api, default_namespace)
    }
}

impl Target {
    /// Parses `resource` ([`Manifest::from_resource`]) and resolves it with the
    /// cluster ([`Manifest::resolve`]).
    ///
    /// # Errors
    /// Those of [`Manifest::from_resource`] and [`Manifest::resolve`].
    pub fn of<C: Cluster>(
        resource: &Resource,
        cluster: &C,
        default_namespace: Option<&str>,
    ) -> Result<Target, Status> {
        Manifest::from_resource(resource)?.resolve(cluster, default_namespace)
    }
}

/// Checks that every value of a Secret's `data` is a string of standard base64
/// (line breaks ignored, as the API server decodes it) or `null`.
fn check_secret_data(id: &str, object: &Value) -> Result<(), Status> {
    use base64::Engine as _;
    let Some(data) = object.get("data").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, value) in data {
        let problem = match value {
            Value::Null => continue,
            Value::String(text) => {
                let text: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
                match base64::engine::general_purpose::STANDARD.decode(text) {
                    Ok(_) => continue,
                    Err(e) => format!("is not valid base64 ({e}); put plain text in stringData"),
                }
            }
            _ => "must be a base64 string".to_owned(),
        };
        return Err(errors::illegal_manifest(format!(
            "resource '{id}': Secret data.{key} {problem}"
        )));
    }
    Ok(())
}

/// The manifest as it is sent: server-set fields removed, the namespace set
/// for namespaced kinds and removed for cluster-scoped ones.
pub fn sanitize(object: &Value, namespace: Option<&str>) -> Value {
    let mut out = object.clone();
    if let Some(root) = out.as_object_mut() {
        root.remove("status");
        let meta = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            for key in SERVER_METADATA {
                meta.remove(key);
            }
            match namespace {
                Some(ns) => {
                    meta.insert("namespace".into(), Value::String(ns.to_owned()));
                }
                None => {
                    meta.remove("namespace");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StatusCode;
    use serde_json::json;

    fn resource(id: &str, attributes: Value) -> Resource {
        Resource {
            id: id.into(),
            type_: "Kubernetes".into(),
            attributes,
            depends_on: vec![],
            extensions: json!({}),
        }
    }

    fn api(kind: &str, namespaced: bool) -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
            namespaced,
        }
    }

    #[test]
    fn refuses_secret_data_that_is_not_base64() {
        let secret = |data: Value| {
            let attributes = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": data});
            Manifest::from_resource(&resource("v1:Secret:s", attributes))
        };
        assert!(secret(json!({"a": "aGVs\nbG8=", "b": null, "c": ""})).is_ok());
        let err = secret(json!({"ok": "eA==", "password": "not base64!"})).unwrap_err();
        assert_eq!(err.code, StatusCode::IllegalManifest);
        assert!(
            err.message
                .starts_with("resource 'v1:Secret:s': Secret data.password is not valid base64 ("),
            "{}",
            err.message
        );
        let err = secret(json!({"n": 5})).unwrap_err();
        assert_eq!(
            err.message,
            "resource 'v1:Secret:s': Secret data.n must be a base64 string"
        );
    }

    fn cm(ns: Option<&str>) -> Value {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"a": "1"}});
        if let Some(ns) = ns {
            v["metadata"]["namespace"] = json!(ns);
        }
        v
    }

    #[test]
    fn three_segment_id_of_namespaced_kind_uses_defaults() {
        let m = Manifest::from_resource(&resource("v1:ConfigMap:app", cm(None))).unwrap();
        let t = m.target(api("ConfigMap", true), None).unwrap();
        assert_eq!(t.namespace.as_deref(), Some("default"));
        assert_eq!(t.object["metadata"]["namespace"], "default");
        let t = m.target(api("ConfigMap", true), Some("team")).unwrap();
        assert_eq!(t.namespace.as_deref(), Some("team"));
        assert_eq!(t.name, "app");
    }

    #[test]
    fn namespace_precedence_id_then_manifest() {
        let m = Manifest::from_resource(&resource("v1:ConfigMap:a:app", cm(None))).unwrap();
        let t = m.target(api("ConfigMap", true), Some("team")).unwrap();
        assert_eq!(t.namespace.as_deref(), Some("a"));
        assert_eq!(t.object["metadata"]["namespace"], "a");
        let m = Manifest::from_resource(&resource("v1:ConfigMap:app", cm(Some("b")))).unwrap();
        let t = m.target(api("ConfigMap", true), Some("team")).unwrap();
        assert_eq!(t.namespace.as_deref(), Some("b"));
    }

    #[test]
    fn mismatches_are_invalid_arguments_naming_both_values() {
        let err =
            Manifest::from_resource(&resource("v1:ConfigMap:a:app", cm(Some("b")))).unwrap_err();
        assert_eq!(err.code, StatusCode::InvalidArgument);
        assert!(
            err.message.contains("'a'") && err.message.contains("'b'"),
            "{}",
            err.message
        );
        for id in [
            "v2:ConfigMap:app",
            "v1:Secret:app",
            "v1:ConfigMap:other",
            "bad",
        ] {
            let err = Manifest::from_resource(&resource(id, cm(None))).unwrap_err();
            assert_eq!(err.code, StatusCode::InvalidArgument, "{id}");
        }
    }

    #[test]
    fn missing_fields_are_illegal_manifests() {
        for attrs in [
            json!([]),
            json!({"kind": "ConfigMap", "metadata": {"name": "x"}}),
            json!({"apiVersion": "v1", "metadata": {"name": "x"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 3}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": 1}}),
        ] {
            let err = Manifest::from_resource(&resource("v1:ConfigMap:x", attrs)).unwrap_err();
            assert_eq!(err.code, StatusCode::IllegalManifest);
        }
    }

    #[test]
    fn cluster_scoped_kinds_have_no_namespace() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web", "namespace": "x", "uid": "u"}, "status": {}});
        let m = Manifest::from_resource(&resource("v1:Namespace:web", ns.clone())).unwrap();
        let t = m.target(api("Namespace", false), Some("team")).unwrap();
        assert_eq!(t.namespace, None);
        assert_eq!(
            t.object,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}})
        );
        let m = Manifest::from_resource(&resource("v1:Namespace:x:web", ns)).unwrap();
        let err = m.target(api("Namespace", false), None).unwrap_err();
        assert_eq!(err.code, StatusCode::InvalidArgument);
    }
}
