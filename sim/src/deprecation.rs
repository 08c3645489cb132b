//! The warning kube-apiserver adds to every request of a deprecated resource (errors
//! included): its types' prerelease lifecycle (`APILifecycleDeprecated`, `APILifecycleRemoved`,
//! `APILifecycleReplacement` of k8s.io/api's `zz_generated.prerelease-lifecycle.go`), which
//! k8s-openapi does not carry, and core v1 Endpoints' own warning.

use crate::rbac::Attributes;

/// The Kubernetes minor krt-sim answers as (`/version`, OpenAPI `info`): the one its kinds are
/// k8s-openapi's set of, and the one deprecations are judged against.
pub const MINOR: u32 = 36;

/// `v1.36.0-krt-sim`.
pub fn git_version() -> String {
    format!("v1.{MINOR}.0-krt-sim")
}

/// When a served prerelease kind was deprecated and is removed (Kubernetes 1.x minors), and
/// what replaces it.
struct Lifecycle {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    deprecated: u32,
    removed: u32,
    replacement: Option<&'static str>,
}

const fn lifecycle(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    (deprecated, removed): (u32, u32),
) -> Lifecycle {
    Lifecycle {
        group,
        version,
        kind,
        deprecated,
        removed,
        replacement: None,
    }
}

/// The kinds krt-sim serves that Kubernetes 1.36 deprecates (its generated lifecycle of each).
const DEPRECATED: &[Lifecycle] = &[
    lifecycle(
        "admissionregistration.k8s.io",
        "v1alpha1",
        "MutatingAdmissionPolicy",
        (35, 38),
    ),
    lifecycle(
        "admissionregistration.k8s.io",
        "v1alpha1",
        "MutatingAdmissionPolicyBinding",
        (35, 38),
    ),
    lifecycle(
        "certificates.k8s.io",
        "v1alpha1",
        "ClusterTrustBundle",
        (34, 37),
    ),
    lifecycle(
        "coordination.k8s.io",
        "v1alpha2",
        "LeaseCandidate",
        (35, 38),
    ),
    lifecycle("coordination.k8s.io", "v1beta1", "LeaseCandidate", (36, 39)),
    lifecycle("networking.k8s.io", "v1beta1", "IPAddress", (34, 37)),
    lifecycle("networking.k8s.io", "v1beta1", "ServiceCIDR", (34, 37)),
    lifecycle("resource.k8s.io", "v1alpha3", "DeviceTaintRule", (36, 39)),
    lifecycle("resource.k8s.io", "v1beta1", "DeviceClass", (35, 38)),
    lifecycle("resource.k8s.io", "v1beta1", "ResourceClaim", (35, 38)),
    lifecycle(
        "resource.k8s.io",
        "v1beta1",
        "ResourceClaimTemplate",
        (35, 38),
    ),
    lifecycle("resource.k8s.io", "v1beta1", "ResourceSlice", (35, 38)),
    lifecycle("resource.k8s.io", "v1beta2", "DeviceClass", (36, 39)),
    lifecycle("resource.k8s.io", "v1beta2", "ResourceClaim", (36, 39)),
    lifecycle(
        "resource.k8s.io",
        "v1beta2",
        "ResourceClaimTemplate",
        (36, 39),
    ),
    lifecycle("resource.k8s.io", "v1beta2", "ResourceSlice", (36, 39)),
    Lifecycle {
        replacement: Some("storage.k8s.io/v1 VolumeAttributesClass"),
        ..lifecycle(
            "storage.k8s.io",
            "v1beta1",
            "VolumeAttributesClass",
            (34, 37),
        )
    },
];

/// The warning of a request with `attributes`, if its resource is deprecated.
pub fn warning(attributes: &Attributes) -> Option<String> {
    if !attributes.resource_request {
        return None;
    }
    let (group, version) = (attributes.group.as_str(), attributes.version.as_str());
    if (group, version, attributes.resource.as_str()) == ("", "v1", "endpoints") {
        return Some(
            "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice".into(),
        );
    }
    let kind = crate::kinds::builtin_resources()
        .find(|r| r.group == group && r.version == version && r.plural == attributes.resource)?
        .kind;
    let entry = DEPRECATED
        .iter()
        .find(|l| l.group == group && l.version == version && l.kind == kind)
        .filter(|l| l.deprecated <= MINOR)?;
    let mut text = format!(
        "{group}/{version} {kind} is deprecated in v1.{}+, unavailable in v1.{}+",
        entry.deprecated, entry.removed
    );
    if let Some(replacement) = entry.replacement {
        text.push_str("; use ");
        text.push_str(replacement);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_deprecated_kind_is_served() {
        for l in DEPRECATED {
            assert!(
                crate::kinds::find(l.group, l.version, l.kind).is_some(),
                "{}/{} {} is not served",
                l.group,
                l.version,
                l.kind
            );
            assert!(l.deprecated < l.removed);
        }
    }
}
