//! What server-side apply needs to know about a kind's shape: list types (atomic, set, map with
//! keys), which maps are atomic, which objects are maps rather than structs, and what the kind's
//! Go zero value holds.
//!
//! Built-in kinds read kube-apiserver's recorded schemas ([`super::recorded`]); a built-in kind
//! the recorded server does not serve is free-form, as are custom resources without schema
//! markers (atomic lists, granular maps). Every kind's `metadata` is the recorded `ObjectMeta`.

use super::recorded::{self, Node};

/// How a list merges under server-side apply (`x-kubernetes-list-type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole; owned as one field.
    Atomic,
    /// A set of scalars; each value owned separately.
    Set,
    /// Items identified by these key fields; each item owned separately.
    Map(Vec<String>),
}

/// The definition every kind's `metadata` is.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Pointer fields whose Go JSON tag lacks `omitempty` (two alpha APIs of 1.36 declare them so):
/// unset, they are written as `null`, and a new object's Go zero value has them (so a create
/// does not add them as members). No schema records it: by kind, the map-field names of each
/// (list items skipped).
const NULL_WHEN_UNSET: &[(&str, &str, &[&str])] = &[
    (
        "scheduling.k8s.io/v1alpha2",
        "PodGroup",
        &["spec", "podGroupTemplateRef"],
    ),
    (
        "scheduling.k8s.io/v1alpha2",
        "Workload",
        &["spec", "podGroupTemplates", "schedulingConstraints"],
    ),
];

/// The [`NULL_WHEN_UNSET`] fields of `kind` at `api_version`.
fn null_when_unset(api_version: &str, kind: &str) -> impl Iterator<Item = &'static [&'static str]> {
    NULL_WHEN_UNSET
        .iter()
        .filter(move |(v, k, _)| *v == api_version && *k == kind)
        .map(|(_, _, names)| *names)
}

/// Writes `null` for each unset [`NULL_WHEN_UNSET`] field of `object` (of `kind` at
/// `api_version`), as Go's encoder does.
pub fn write_nulls(api_version: &str, kind: &str, object: &mut serde_json::Value) {
    fn write(value: &mut serde_json::Value, names: &[&str]) {
        match (value, names) {
            (serde_json::Value::Array(items), _) => {
                items.iter_mut().for_each(|item| write(item, names));
            }
            (serde_json::Value::Object(map), [last]) => {
                map.entry(*last).or_insert(serde_json::Value::Null);
            }
            (serde_json::Value::Object(map), [first, rest @ ..]) => {
                if let Some(child) = map.get_mut(*first) {
                    write(child, rest);
                }
            }
            _ => {}
        }
    }
    for names in null_when_unset(api_version, kind) {
        write(object, names);
    }
}

/// The shape information for one kind.
#[derive(Debug, Clone)]
pub struct Schema {
    custom: bool,
    status_subresource: bool,
    /// The kind's [`NULL_WHEN_UNSET`] fields.
    nulls: Vec<&'static [&'static str]>,
    /// The `metadata` fields a write to `status` may change, and so own (the rest of
    /// `metadata` and `spec` are its strategy's reset fields).
    status_metadata: &'static [&'static str],
    /// Whether writes to the main resource own no `spec` field either: a
    /// CertificateSigningRequest's, whose spec only its creation sets (its strategy's reset
    /// fields are `spec` and `status`).
    spec_reset: bool,
    /// A custom resource's `openAPIV3Schema`, for its list and map types.
    structural: Option<serde_json::Value>,
    /// A built-in kind's recorded definition (free-form when the server does not serve it).
    recorded: Node,
}

impl Schema {
    /// Schema of `kind` at `api_version` (`custom` for CRD-served kinds).
    pub fn new(api_version: &str, kind: &str, custom: bool) -> Self {
        Self {
            custom,
            status_subresource: false,
            nulls: match custom {
                true => Vec::new(),
                false => null_when_unset(api_version, kind).collect(),
            },
            status_metadata: &[],
            spec_reset: !custom
                && kind == "CertificateSigningRequest"
                && api_version.starts_with("certificates.k8s.io/"),
            structural: None,
            recorded: match custom {
                true => Node::Deduced,
                false => recorded::kind(api_version, kind).unwrap_or(Node::Deduced),
            },
        }
    }

    /// The recorded schema node at `names`: under `metadata` for every kind, elsewhere for
    /// built-in kinds only.
    fn recorded(&self, names: &[&str]) -> Option<Node> {
        let (root, rest) = match names.split_first() {
            Some((&"metadata", rest)) => (recorded::definition(OBJECT_META)?, rest),
            _ if self.custom => return None,
            _ => (self.recorded, names),
        };
        Some(rest.iter().fold(root, |node, name| node.child(name)))
    }

    /// The same schema for a custom resource whose CRD declares `structural` as its
    /// `openAPIV3Schema`: its `x-kubernetes-list-type`, `-list-map-keys` and `-map-type`
    /// markers and declared properties apply.
    #[must_use]
    pub fn with_structural(mut self, structural: Option<serde_json::Value>) -> Self {
        self.structural = structural;
        self
    }

    /// The structural schema node at `names` (list items skipped), when one is declared.
    fn node(&self, names: &[&str]) -> Option<crate::crd::Node<'_>> {
        let mut node = crate::crd::Node(self.structural.as_ref()?);
        for name in names {
            if let Some(items) = node.items() {
                node = items;
            }
            node = node.child(name)?;
        }
        Some(node)
    }

    /// The same schema for a kind with a `status` subresource: writes to the main resource
    /// own no status field, writes to `status` nothing else (the API server's reset fields).
    #[must_use]
    pub fn with_status_subresource(mut self, status_subresource: bool) -> Self {
        self.status_subresource = status_subresource;
        self
    }

    /// The same schema with the `metadata` fields a write to `status` may own.
    #[must_use]
    pub fn with_status_metadata(mut self, fields: &'static [&'static str]) -> Self {
        self.status_metadata = fields;
        self
    }

    /// Whether a write to `subresource` may own `path` (see
    /// [`Schema::with_status_subresource`] and [`Schema::with_status_metadata`]).
    pub fn owns(&self, subresource: Option<&str>, path: &super::Path) -> bool {
        use super::fieldset::PathElement::Field;
        let first = |name: &str| path.first() == Some(&Field(name.into()));
        let status = first("status");
        match subresource {
            Some("status") => {
                status
                    || first("metadata")
                        && matches!(path.get(1), Some(Field(field))
                            if self.status_metadata.contains(&field.as_str()))
            }
            _ => !(self.status_subresource && status || self.spec_reset && first("spec")),
        }
    }

    /// The list type of the field reached by the map-field names `names` (list items skipped).
    pub fn list_type(&self, names: &[&str]) -> ListType {
        if let Some(node) = self.recorded(names) {
            return node.list_type();
        }
        match self.node(names).map(|n| n.list_type()) {
            Some((Some("set"), _)) => ListType::Set,
            Some((Some("map"), keys)) if !keys.is_empty() => {
                ListType::Map(keys.into_iter().map(str::to_string).collect())
            }
            _ => ListType::Atomic,
        }
    }

    /// Whether the map at `names` is atomic (owned and replaced as one field), like a LabelSelector.
    pub fn is_atomic_map(&self, names: &[&str]) -> bool {
        match self.recorded(names) {
            Some(node) => node.is_atomic_map(),
            None => self.node(names).is_some_and(|n| n.atomic_map()),
        }
    }

    /// Whether the keys of the map at `names` are map keys rather than declared struct fields
    /// (a `map[string]T` such as labels, or a free-form object, such as any map of a custom
    /// resource whose schema declares no fields there): server-side apply owns each such key by
    /// itself.
    pub fn has_map_keys(&self, names: &[&str]) -> bool {
        if let Some(node) = self.recorded(names) {
            return node.has_map_keys();
        }
        let root = self.structural.as_ref().map(crate::crd::Node);
        let node = if names.is_empty() {
            root
        } else {
            self.node(names)
        };
        !node.is_some_and(|n| n.declares_fields())
    }

    /// Whether the field at `names` is `null` in the kind's Go zero value ([`NULL_WHEN_UNSET`]).
    pub fn is_zero_null(&self, names: &[&str]) -> bool {
        self.nulls.contains(&names)
    }

    /// Whether the field at `names` is present in the zero value of the kind's Go type, where
    /// its parent is: a non-pointer struct (`metadata`, `spec`, `status`, pod templates and
    /// their metadata and spec, update strategies, ...), or a list, map or struct pointer its
    /// parent requires (a PodSpec's `containers`, a Deployment's `selector`: `null`). Nothing
    /// inside a list item is, as no item is in a zero value.
    pub fn is_zero_struct(&self, names: &[&str]) -> bool {
        let Some((last, parent)) = names.split_last() else {
            return false;
        };
        if names == ["metadata"] {
            return true;
        }
        self.recorded(parent)
            .is_some_and(|p| p.child(last).in_zero_value(p.requires(last)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn ports_key_on_port_and_protocol() {
        let svc = Schema::new("v1", "Service", false);
        assert_eq!(
            svc.list_type(&["spec", "ports"]),
            ListType::Map(keys(&["port", "protocol"]))
        );
        let deploy = Schema::new("apps/v1", "Deployment", false);
        assert_eq!(
            deploy.list_type(&["spec", "template", "spec", "containers", "ports"]),
            ListType::Map(keys(&["containerPort", "protocol"]))
        );
        assert_eq!(
            deploy.list_type(&["spec", "template", "spec", "containers"]),
            ListType::Map(keys(&["name"]))
        );
        assert_eq!(
            deploy.list_type(&["spec", "template", "spec", "containers", "args"]),
            ListType::Atomic
        );
        assert_eq!(
            deploy.list_type(&["status", "conditions"]),
            ListType::Map(keys(&["type"]))
        );
        // Both selectors are atomic: a LabelSelector, and a Service's `map[string]string`
        // marked so.
        assert!(deploy.is_atomic_map(&["spec", "selector"]));
        assert!(svc.is_atomic_map(&["spec", "selector"]));
        assert!(!deploy.is_atomic_map(&["spec", "template", "metadata", "labels"]));
        assert!(deploy.has_map_keys(&["spec", "template", "metadata", "labels"]));
        assert!(!deploy.has_map_keys(&["spec", "template", "metadata"]));
    }

    #[test]
    fn the_zero_value_holds_non_pointer_structs_and_required_lists() {
        let deploy = Schema::new("apps/v1", "Deployment", false);
        for present in [
            &["spec"][..],
            &["spec", "strategy"],
            &["spec", "template", "metadata"],
            &["spec", "template", "spec", "containers"],
        ] {
            assert!(deploy.is_zero_struct(present), "{present:?}");
        }
        // A required pointer is there too, as null: a Deployment's `selector`.
        assert!(deploy.is_zero_struct(&["spec", "selector"]));
        for absent in [
            &["spec", "replicas"][..],
            &["spec", "template", "spec", "affinity"],
        ] {
            assert!(!deploy.is_zero_struct(absent), "{absent:?}");
        }
    }

    #[test]
    fn custom_resources_have_atomic_lists_but_set_finalizers() {
        let cr = Schema::new("example.com/v1", "Widget", true);
        assert_eq!(cr.list_type(&["spec", "containers"]), ListType::Atomic);
        assert_eq!(cr.list_type(&["metadata", "finalizers"]), ListType::Set);
    }
}
