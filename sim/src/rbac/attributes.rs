//! The authorization attributes of a request, as kube-apiserver's `RequestInfoFactory`
//! (`apiserver/pkg/endpoints/request/requestinfo.go`) reads them off the method, path and
//! query: a resource request (verb, group, version, resource, subresource, namespace, name)
//! under `/api` or `/apis`, anything else a non-resource request on its path.

use crate::request::Params;
use crate::selectors::Selector;

/// What a request asks to do, as the authorizer sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or
    /// a special verb (`bind`, `escalate`, `impersonate`).
    pub verb: String,
    /// Whether the request is on a resource (else on the non-resource `path`).
    pub resource_request: bool,
    /// The request path (non-resource requests are authorized on it).
    pub path: String,
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Subresource (`status`, `scale`), or empty.
    pub subresource: String,
    /// Namespace, empty for cluster-scoped requests.
    pub namespace: String,
    /// Object name, empty for collections.
    pub name: String,
}

/// Whether a path segment is a valid object name for a path (`path.IsValidPathSegmentName`).
fn valid_segment(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%'])
}

impl Attributes {
    /// The attributes of a request with `method` on `path` and query `params`.
    pub fn of_request(method: &str, path: &str, params: &Params) -> Self {
        let mut attributes = Self {
            path: path.to_string(),
            verb: match method {
                "POST" => "create",
                "GET" | "HEAD" => "get",
                "PUT" => "update",
                "PATCH" => "patch",
                "DELETE" => "delete",
                _ => "",
            }
            .to_string(),
            ..Self::default()
        };
        let trimmed = path.trim_matches('/');
        let parts: Vec<&str> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split('/').collect()
        };
        let mut rest: &[&str] = match parts.as_slice() {
            ["api", rest @ ..] if parts.len() >= 3 => rest,
            ["apis", group, rest @ ..] if parts.len() >= 4 => {
                attributes.group = (*group).to_string();
                rest
            }
            _ => return attributes,
        };
        attributes.resource_request = true;
        attributes.version = rest[0].to_string();
        rest = &rest[1..];
        if let ["watch" | "proxy", tail @ ..] = rest {
            attributes.verb = rest[0].to_string();
            rest = tail;
        }
        if let ["namespaces", ns, tail @ ..] = rest {
            attributes.namespace = (*ns).to_string();
            if !tail.is_empty() && !matches!(tail[0], "status" | "finalize") {
                rest = tail;
            }
        }
        if let Some(resource) = rest.first() {
            attributes.resource = (*resource).to_string();
        }
        if let Some(name) = rest.get(1) {
            attributes.name = (*name).to_string();
        }
        if let Some(subresource) = rest.get(2).filter(|_| attributes.verb != "proxy") {
            attributes.subresource = (*subresource).to_string();
        }
        if attributes.name.is_empty() && attributes.verb == "get" {
            let watch = params
                .get("watch")
                .is_some_and(|w| !matches!(w.to_lowercase().as_str(), "false" | "0"));
            attributes.verb = if watch { "watch" } else { "list" }.to_string();
            let fields = params
                .get("fieldSelector")
                .map(|s| Selector::parse_fields(s));
            if let Some(Ok(fields)) = fields
                && let Some(name) = fields
                    .exact_match("metadata.name")
                    .filter(|n| valid_segment(n))
            {
                attributes.name = name.to_string();
            }
        }
        if attributes.name.is_empty() && attributes.verb == "delete" {
            attributes.verb = "deletecollection".to_string();
        }
        attributes
    }

    /// The resource with its subresource (`pods/status`), as messages and rules name it.
    pub fn combined_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: &str, path: &str, query: &[(&str, &str)]) -> Attributes {
        let params = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Attributes::of_request(method, path, &params)
    }

    #[test]
    fn paths_map_to_kube_request_info() {
        let a = of("GET", "/api/v1/namespaces/y/secrets/x", &[]);
        assert_eq!(
            (
                a.verb.as_str(),
                a.resource.as_str(),
                a.namespace.as_str(),
                a.name.as_str()
            ),
            ("get", "secrets", "y", "x")
        );
        let a = of(
            "GET",
            "/apis/apps/v1/namespaces/y/deployments",
            &[("watch", "1")],
        );
        assert_eq!((a.verb.as_str(), a.group.as_str()), ("watch", "apps"));
        let a = of(
            "GET",
            "/api/v1/pods",
            &[("fieldSelector", "metadata.name=p")],
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "p"));
        let a = of("DELETE", "/api/v1/namespaces/y/pods", &[]);
        assert_eq!(a.verb, "deletecollection");
        let a = of("PUT", "/api/v1/namespaces/y/status", &[]);
        assert_eq!(
            (a.resource.as_str(), a.name.as_str(), a.subresource.as_str()),
            ("namespaces", "y", "status")
        );
        let a = of(
            "PATCH",
            "/apis/apps/v1/namespaces/y/deployments/d/scale",
            &[],
        );
        assert_eq!(a.combined_resource(), "deployments/scale");
        for path in [
            "/apis",
            "/apis/apps/v1",
            "/api/v1",
            "/version",
            "/openapi/v2",
        ] {
            let a = of("GET", path, &[]);
            assert!(!a.resource_request, "{path}");
            assert_eq!(a.verb, "get");
        }
    }
}
