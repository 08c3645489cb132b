//! The object a request path addresses.

use crate::registry::ResourceType;
use crate::status::Subject;
use crate::store::Key;

/// A parsed resource path.
#[derive(Debug, Clone)]
pub struct Target {
    /// The resource type addressed.
    pub rt: ResourceType,
    /// Namespace from the path.
    pub namespace: Option<String>,
    /// Object name from the path.
    pub name: Option<String>,
    /// `status`, `scale`, ...
    pub subresource: Option<String>,
}

impl Target {
    /// The status-error subject for this target.
    pub fn subject(&self) -> Subject<'_> {
        Subject {
            group: &self.rt.group,
            resource: &self.rt.plural,
            name: self.name.as_deref().unwrap_or_default(),
        }
    }

    /// The store key of the object `name` of this type in the path's namespace.
    pub fn key_of(&self, name: &str) -> Key {
        Key::new(
            &self.rt,
            self.namespace.as_deref().unwrap_or_default(),
            name,
        )
    }

    /// The store key of the object the path names.
    pub fn key(&self) -> Key {
        self.key_of(self.name.as_deref().unwrap_or_default())
    }
}
