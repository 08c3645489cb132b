//! Finding the protobuf message of a kind among the descriptors of every Kubernetes API
//! package (parsed at build time from the `.proto` files k8s-rs-pb ships, see `build.rs`),
//! by the rule in [`message_for`].

use std::sync::OnceLock;

use protobuf::Message;
use protobuf::descriptor::FileDescriptorSet;
use protobuf::reflect::{FileDescriptor, MessageDescriptor};

/// The package of `metav1` (`ObjectMeta`, `Status`, `DeleteOptions`, `WatchEvent`, the legacy
/// discovery documents), whose kinds every group version carries.
pub const META: &str = "apimachinery.pkg.apis.meta.v1";

/// The file descriptor of every API package (`api.apps.v1`, `apimachinery.pkg.apis.meta.v1`, …).
fn files() -> &'static [FileDescriptor] {
    static FILES: OnceLock<Vec<FileDescriptor>> = OnceLock::new();
    FILES.get_or_init(|| {
        // What k8s-rs-pb's `.proto` files parse to (`tests/suite/descriptors.rs` keeps it so).
        let set = FileDescriptorSet::parse_from_bytes(include_bytes!("kubernetes.fds"))
            .expect("the kept descriptor set parses");
        FileDescriptor::new_dynamic_fds(set.file, &[]).expect("the descriptors link")
    })
}

/// The message `full_name` (`apimachinery.pkg.runtime.Unknown`).
pub fn by_full_name(full_name: &str) -> Option<MessageDescriptor> {
    let (package, name) = full_name.rsplit_once('.')?;
    files()
        .iter()
        .filter(|file| file.package() == package)
        .find_map(|file| file.message_by_package_relative_name(name))
}

/// The message of `kind` in `api_version` (`apps/v1`, `v1`).
///
/// The rule: a message named `kind` in a package whose last segment is the version; when more
/// than one package has it (`Event` is in `api.core.v1` and `api.events.v1`), the one with a
/// segment equal to the group's first DNS label (`core` for the core group); when none has it,
/// `metav1`'s (so `DeleteOptions` or `Status` in any group version).
pub fn message_for(api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let label = match group.split('.').next() {
        Some("") | None => "core",
        Some(label) => label,
    };
    let candidates: Vec<(&FileDescriptor, MessageDescriptor)> = files()
        .iter()
        .filter(|file| file.package().rsplit('.').next() == Some(version))
        .filter_map(|file| Some((file, file.message_by_package_relative_name(kind)?)))
        .collect();
    let chosen = match candidates.as_slice() {
        [(_, only)] => Some(only.clone()),
        several => several
            .iter()
            .find(|(file, _)| file.package().split('.').any(|segment| segment == label))
            .map(|(_, message)| message.clone()),
    };
    chosen.or_else(|| by_full_name(&format!("{META}.{kind}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_kind_older_than_1_36_and_its_list_has_its_own_message() {
        for resource in crate::kinds::builtin_resources() {
            let api_version = match resource.group {
                "" => resource.version.to_string(),
                group => format!("{group}/{}", resource.version),
            };
            let go_package = |message: &MessageDescriptor| {
                message
                    .file_descriptor_proto()
                    .options
                    .go_package()
                    .to_string()
            };
            // The create-only review kinds have no List.
            let listable = crate::registry::builtins().iter().any(|rt| {
                rt.group == resource.group
                    && rt.version == resource.version
                    && rt.kind == resource.kind
                    && rt.verbs.iter().any(|v| v == "list")
            });
            let mut kinds = vec![resource.kind.to_string()];
            if listable {
                kinds.push(format!("{}List", resource.kind));
            }
            // A kind Kubernetes 1.36 added has no message in k8s-rs-pb's 1.35 protos (and is
            // served as JSON); neither has its List.
            if message_for(&api_version, resource.kind).is_none() {
                assert!(message_for(&api_version, &format!("{}List", resource.kind)).is_none());
                println!(
                    "no message (newer than 1.35): {api_version} {}",
                    resource.kind
                );
                continue;
            }
            for kind in kinds {
                let message = message_for(&api_version, &kind)
                    .unwrap_or_else(|| panic!("no message for {api_version} {kind}"));
                assert_eq!(message.name(), kind);
                // The Go package the message was generated from ends in the group's directory
                // and the version (`k8s.io/api/apps/v1`, `k8s.io/api/core/v1`).
                let package = go_package(&message);
                assert!(
                    package.ends_with(&format!("/{}", resource.version)),
                    "{api_version} {kind}: {package}"
                );
                let expected_dir = match resource.group {
                    "" => "core",
                    "internal.apiserver.k8s.io" => "apiserverinternal",
                    group => group.split('.').next().unwrap(),
                };
                assert!(
                    package.contains(&format!("/{expected_dir}/")),
                    "{api_version} {kind}: {package}"
                );
            }
        }
    }

    #[test]
    fn meta_kinds_are_found_in_any_group_version() {
        for (api_version, kind) in [
            ("v1", "Status"),
            ("apps/v1", "DeleteOptions"),
            ("meta.k8s.io/v1", "DeleteOptions"),
            ("v1", "APIResourceList"),
            ("v1", "APIGroupList"),
            ("v1", "APIVersions"),
        ] {
            let message = message_for(api_version, kind).unwrap();
            assert_eq!(message.full_name(), format!("{META}.{kind}"));
        }
        assert_eq!(
            message_for("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList")
                .unwrap()
                .full_name(),
            "api.apidiscovery.v2.APIGroupDiscoveryList"
        );
        assert!(message_for("example.com/v1", "Widget").is_none());
    }
}
