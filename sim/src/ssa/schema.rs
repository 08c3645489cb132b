//! What server-side apply needs to know about a kind's shape: list types (atomic, set, map with
//! keys) and which maps are atomic or granular.
//!
//! Built-in list-map keys are the strategic-merge keys of the shared patch schema
//! ([`krt_guest::merge::strategic::list_merge_key`]), widened where SSA's differ ([`SSA_KEYS`]:
//! ports keyed by port and protocol).
//! Custom resources without schema markers have atomic lists.

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

/// Server-side apply's list-map keys (`x-kubernetes-list-map-keys`) where they are wider than
/// the strategic-merge key: ports are keyed by port and protocol, topology spread constraints
/// by topology key and `whenUnsatisfiable`.
static SSA_KEYS: &[(&str, &[&str])] = &[
    ("containerPort", &["containerPort", "protocol"]),
    ("port", &["port", "protocol"]),
    ("topologyKey", &["topologyKey", "whenUnsatisfiable"]),
];

/// The list-map keys of the list at `names` of a built-in kind: its strategic-merge key, or
/// the wider SSA key set of [`SSA_KEYS`]; `None` for lists that are not merged by key.
fn list_map_keys(api_version: &str, kind: &str, names: &[&str]) -> Option<Vec<&'static str>> {
    let key = krt_guest::merge::strategic::list_merge_key(api_version, kind, names)?;
    Some(
        SSA_KEYS
            .iter()
            .find(|(k, _)| *k == key)
            .map_or_else(|| vec![key], |(_, keys)| keys.to_vec()),
    )
}

/// The shape information for one kind.
#[derive(Debug, Clone)]
pub struct Schema {
    api_version: String,
    kind: String,
    custom: bool,
    status_subresource: bool,
    /// A custom resource's `openAPIV3Schema`, for its list and map types.
    structural: Option<serde_json::Value>,
}

impl Schema {
    /// Schema of `kind` at `api_version` (`custom` for CRD-served kinds).
    pub fn new(api_version: &str, kind: &str, custom: bool) -> Self {
        Self {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            custom,
            status_subresource: false,
            structural: None,
        }
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

    /// Whether a write to `subresource` may own `path` (see
    /// [`Schema::with_status_subresource`]).
    pub fn owns(&self, subresource: Option<&str>, path: &super::Path) -> bool {
        let status = path.first() == Some(&super::fieldset::PathElement::Field("status".into()));
        match subresource {
            Some("status") => status,
            _ => !(self.status_subresource && status),
        }
    }

    /// The list type of the field reached by the map-field names `names` (list items skipped).
    pub fn list_type(&self, names: &[&str]) -> ListType {
        match names {
            ["metadata", "finalizers"] => return ListType::Set,
            ["metadata", "ownerReferences"] => return ListType::Map(vec!["uid".into()]),
            _ => {}
        }
        if self.custom {
            return match self.node(names).map(|n| n.list_type()) {
                Some((Some("set"), _)) => ListType::Set,
                Some((Some("map"), keys)) if !keys.is_empty() => {
                    ListType::Map(keys.into_iter().map(str::to_string).collect())
                }
                _ => ListType::Atomic,
            };
        }
        list_map_keys(&self.api_version, &self.kind, names).map_or(ListType::Atomic, |keys| {
            ListType::Map(keys.into_iter().map(str::to_string).collect())
        })
    }

    /// Whether the map at `names` is atomic (owned and replaced as one field), like a LabelSelector.
    pub fn is_atomic_map(&self, names: &[&str]) -> bool {
        if self.custom {
            return self.node(names).is_some_and(|n| n.atomic_map());
        }
        !self.custom && names.last() == Some(&"selector") && self.kind != "Service"
    }

    /// Whether the keys of the map at `names` are map keys rather than declared struct fields
    /// (a `map[string]T` such as labels, or any map of a custom resource, whose schema the
    /// simulator deduces): server-side apply owns each such key by itself.
    pub fn has_map_keys(&self, names: &[&str]) -> bool {
        if self.custom {
            if names.first() == Some(&"metadata") {
                return self.is_granular_map(names);
            }
            let root = self.structural.as_ref().map(crate::crd::Node);
            let node = if names.is_empty() {
                root
            } else {
                self.node(names)
            };
            return !node.is_some_and(|n| n.declares_fields());
        }
        self.is_granular_map(names)
    }

    /// Whether the field at `names` is present in the zero value of the kind's Go type: a
    /// non-pointer struct (`metadata`, `spec`, `status`, pod templates and their metadata and
    /// spec, update strategies, ...) or a field serialized even when empty (a PodSpec's
    /// `containers`).
    pub fn is_zero_struct(&self, names: &[&str]) -> bool {
        if matches!(names, ["metadata"]) {
            return true;
        }
        if self.custom {
            return false;
        }
        const TEMPLATE: &[&str] = &[
            "template",
            "template.metadata",
            "template.spec",
            "template.spec.containers",
        ];
        let path = names.join(".");
        let Some(rest) = path.strip_prefix("spec.") else {
            return matches!(path.as_str(), "spec" | "status")
                || (path == "status.loadBalancer"
                    && matches!(self.kind.as_str(), "Service" | "Ingress"));
        };
        let structs: &[&str] = match self.kind.as_str() {
            "Deployment" => &["strategy"],
            "StatefulSet" | "DaemonSet" => &["updateStrategy"],
            "CronJob" => &[
                "jobTemplate",
                "jobTemplate.metadata",
                "jobTemplate.spec",
                "jobTemplate.spec.template",
                "jobTemplate.spec.template.metadata",
                "jobTemplate.spec.template.spec",
                "jobTemplate.spec.template.spec.containers",
            ],
            "Pod" => &["containers"],
            "PersistentVolumeClaim" => &["resources"],
            "NetworkPolicy" => &["podSelector"],
            "HorizontalPodAutoscaler" => &["scaleTargetRef"],
            "CustomResourceDefinition" => &["names"],
            _ => &[],
        };
        let templated = matches!(
            self.kind.as_str(),
            "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job"
        );
        structs.contains(&rest) || (templated && TEMPLATE.contains(&rest))
    }

    /// Whether the map at `names` is a granular map (a `map[string]T`), like labels.
    pub fn is_granular_map(&self, names: &[&str]) -> bool {
        let last = names.last().copied().unwrap_or_default();
        matches!(
            last,
            "labels"
                | "annotations"
                | "data"
                | "stringData"
                | "binaryData"
                | "nodeSelector"
                | "limits"
                | "requests"
        ) || (self.kind == "Service" && names == ["spec", "selector"])
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
        assert!(deploy.is_atomic_map(&["spec", "selector"]));
        assert!(!svc.is_atomic_map(&["spec", "selector"]));
    }

    #[test]
    fn custom_resources_have_atomic_lists_but_set_finalizers() {
        let cr = Schema::new("example.com/v1", "Widget", true);
        assert_eq!(cr.list_type(&["spec", "containers"]), ListType::Atomic);
        assert_eq!(cr.list_type(&["metadata", "finalizers"]), ListType::Set);
    }
}
