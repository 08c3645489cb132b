//! The warning kube-apiserver adds to every request of a deprecated resource (errors
//! included): its types' prerelease lifecycle (`APILifecycleDeprecated`, `APILifecycleRemoved`,
//! `APILifecycleReplacement` of k8s.io/api's `zz_generated.prerelease-lifecycle.go`), which
//! k8s-openapi does not carry, and core v1 Endpoints' own warning.

use crate::registry::ResourceType;

/// The Kubernetes minor krt-sim answers as (`/version`, OpenAPI `info`): the one its kinds are
/// k8s-openapi's set of, and the one deprecations are judged against.
pub const MINOR: u32 = 36;

/// `v1.36.0-krt-sim`.
pub fn git_version() -> String {
    format!("v1.{MINOR}.0-krt-sim")
}

/// When served prerelease kinds of one group version were deprecated and are removed
/// (Kubernetes 1.x minors), and what replaces them.
struct Lifecycle {
    group: &'static str,
    version: &'static str,
    kinds: &'static [&'static str],
    deprecated: u32,
    removed: u32,
    replacement: Option<&'static str>,
}

const fn lifecycle(
    (group, version): (&'static str, &'static str),
    kinds: &'static [&'static str],
    (deprecated, removed): (u32, u32),
) -> Lifecycle {
    Lifecycle {
        group,
        version,
        kinds,
        deprecated,
        removed,
        replacement: None,
    }
}

/// The four kinds of dynamic resource allocation's beta versions.
const DRA: &[&str] = &[
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
];

/// The kinds krt-sim serves that Kubernetes 1.36 deprecates (their generated lifecycle).
const DEPRECATED: &[Lifecycle] = &[
    lifecycle(
        ("admissionregistration.k8s.io", "v1alpha1"),
        &["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"],
        (35, 38),
    ),
    lifecycle(
        ("certificates.k8s.io", "v1alpha1"),
        &["ClusterTrustBundle"],
        (34, 37),
    ),
    lifecycle(
        ("coordination.k8s.io", "v1alpha2"),
        &["LeaseCandidate"],
        (35, 38),
    ),
    lifecycle(
        ("coordination.k8s.io", "v1beta1"),
        &["LeaseCandidate"],
        (36, 39),
    ),
    lifecycle(
        ("networking.k8s.io", "v1beta1"),
        &["IPAddress", "ServiceCIDR"],
        (34, 37),
    ),
    lifecycle(
        ("resource.k8s.io", "v1alpha3"),
        &["DeviceTaintRule"],
        (36, 39),
    ),
    lifecycle(("resource.k8s.io", "v1beta1"), DRA, (35, 38)),
    lifecycle(("resource.k8s.io", "v1beta2"), DRA, (36, 39)),
    Lifecycle {
        replacement: Some("storage.k8s.io/v1 VolumeAttributesClass"),
        ..lifecycle(
            ("storage.k8s.io", "v1beta1"),
            &["VolumeAttributesClass"],
            (34, 37),
        )
    },
];

/// The warning of every request a resource of type `rt` serves, if it is deprecated.
pub fn warning(rt: &ResourceType) -> Option<String> {
    if rt.custom {
        return None;
    }
    let (group, version, kind) = (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str());
    match (group, version, kind) {
        ("", "v1", "Endpoints") => {
            return Some(
                "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
                    .into(),
            );
        }
        ("", "v1", "ComponentStatus") => {
            return Some("v1 ComponentStatus is deprecated in v1.19+".into());
        }
        _ => {}
    }
    let entry = DEPRECATED
        .iter()
        .find(|l| l.group == group && l.version == version && l.kinds.contains(&kind))
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
            for kind in l.kinds {
                assert!(
                    crate::kinds::find(l.group, l.version, kind).is_some(),
                    "{}/{} {kind} is not served",
                    l.group,
                    l.version,
                );
            }
            assert!(l.deprecated < l.removed);
        }
    }
}
