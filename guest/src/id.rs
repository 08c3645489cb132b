//! Resource ids: `apiVersion:kind[:namespace]:name`, joined with `:`.
//!
//! The apiVersion may contain `/` (`apps/v1`) but none of the segments may
//! contain `:`. Three segments name an object without a namespace in the id
//! (cluster-scoped, or namespaced in the defaulted namespace); four segments
//! carry the namespace. The name is never read as a namespace.

use std::fmt;

/// A parsed resource id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceId {
    /// `apiVersion`, for example `apps/v1` or `v1`.
    pub api_version: String,
    /// Kind, for example `Deployment`.
    pub kind: String,
    /// Namespace, when the id names one.
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
}

/// Why an id could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The id does not have three or four `:`-separated segments.
    #[error(
        "invalid resource id '{id}': expected 'apiVersion:kind:name' or 'apiVersion:kind:namespace:name', found {segments} segment(s)"
    )]
    SegmentCount {
        /// The id as given.
        id: String,
        /// How many segments it has.
        segments: usize,
    },
    /// A segment is empty.
    #[error("invalid resource id '{id}': the {segment} segment is empty")]
    EmptySegment {
        /// The id as given.
        id: String,
        /// Which segment (`apiVersion`, `kind`, `namespace`, `name`).
        segment: &'static str,
    },
}

impl ResourceId {
    /// Builds an id from its parts; an empty namespace is left out.
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        ResourceId {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.filter(|ns| !ns.is_empty()).map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// Parses `apiVersion:kind[:namespace]:name`.
    ///
    /// # Errors
    /// [`IdError`] when the id has fewer than three or more than four segments,
    /// or an empty segment.
    pub fn parse(id: &str) -> Result<Self, IdError> {
        let parts: Vec<&str> = id.split(':').collect();
        let (api_version, kind, namespace, name) = match parts.as_slice() {
            [api_version, kind, name] => (*api_version, *kind, None, *name),
            [api_version, kind, ns, name] => (*api_version, *kind, Some(*ns), *name),
            _ => {
                return Err(IdError::SegmentCount {
                    id: id.to_owned(),
                    segments: parts.len(),
                });
            }
        };
        let segments = [
            ("apiVersion", api_version),
            ("kind", kind),
            ("namespace", namespace.unwrap_or("-")),
            ("name", name),
        ];
        if let Some((segment, _)) = segments.iter().find(|(_, value)| value.is_empty()) {
            return Err(IdError::EmptySegment {
                id: id.to_owned(),
                segment,
            });
        }
        Ok(ResourceId::new(api_version, kind, namespace, name))
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:", self.api_version, self.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, "{ns}:")?;
        }
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_namespaced_and_cluster_scoped_ids() {
        let id = ResourceId::parse("apps/v1:Deployment:web:nginx").unwrap();
        assert_eq!(
            id,
            ResourceId::new("apps/v1", "Deployment", Some("web"), "nginx")
        );
        assert_eq!(id.to_string(), "apps/v1:Deployment:web:nginx");

        let id = ResourceId::parse("v1:Namespace:web").unwrap();
        assert_eq!(id.namespace, None);
        assert_eq!(id.name, "web");
        assert_eq!(id.to_string(), "v1:Namespace:web");

        let id = ResourceId::parse("networking.k8s.io/v1:Ingress:ns:ing").unwrap();
        assert_eq!(id.api_version, "networking.k8s.io/v1");
    }

    #[test]
    fn rejects_malformed_ids() {
        assert!(matches!(
            ResourceId::parse("v1:ConfigMap"),
            Err(IdError::SegmentCount { segments: 2, .. })
        ));
        assert!(matches!(
            ResourceId::parse("a:b:c:d:e"),
            Err(IdError::SegmentCount { segments: 5, .. })
        ));
        assert_eq!(
            ResourceId::parse("v1:ConfigMap::x"),
            Err(IdError::EmptySegment {
                id: "v1:ConfigMap::x".into(),
                segment: "namespace"
            })
        );
        assert!(ResourceId::parse("").is_err());
        let msg = ResourceId::parse(":Kind:n").unwrap_err().to_string();
        assert!(msg.contains("apiVersion segment is empty"), "{msg}");
    }
}
