//! The key an object is stored under.

use crate::registry::ResourceType;

/// Where an object lives: group, plural resource, namespace ("" when cluster-scoped) and name.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Key {
    /// API group ("" for core).
    pub group: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace, "" for cluster-scoped objects.
    pub namespace: String,
    /// Object name.
    pub name: String,
}

impl Key {
    /// Key of the object `name` in `namespace` ("" when cluster-scoped) of `resource` in `group`.
    pub fn of(
        group: impl Into<String>,
        resource: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Key of an object of `rt` in `namespace` called `name`.
    pub fn new(rt: &ResourceType, namespace: &str, name: &str) -> Self {
        Self {
            group: rt.group.clone(),
            resource: rt.plural.clone(),
            namespace: if rt.namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
            name: name.to_string(),
        }
    }
}
