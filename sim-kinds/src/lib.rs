//! krt-sim's built-in kinds: every listable resource type of k8s-openapi's targeted Kubernetes
//! minor (feature `v1_36`) and the create-only review kinds (`authentication.k8s.io`,
//! `authorization.k8s.io`), each listed once by its Rust type. Everything else about a kind is read
//! off that type: group, version, kind and plural from [`k8s_openapi::Resource`], the scope from
//! its `Scope`, the fields it has from its `Deserialize` impl ([`probe`]), and its schema from its
//! [`schemars::JsonSchema`] impl.
//!
//! The list is in kube-apiserver's discovery order of groups (the aggregator's group
//! priorities), the preferred version of a group before its others.
//!
//! It is a crate of its own because it instantiates the typed decoding and the schema of every
//! kind, most of krt-sim's code generation: built once and cached, it is not rebuilt when the
//! rest of krt-sim changes, and each can have its own optimization level.

use std::borrow::Cow;

use k8s_openapi::api::{
    admissionregistration, apiserverinternal, apps, authentication, authorization, autoscaling,
    batch, certificates, coordination, core, discovery, events, flowcontrol, networking, node,
    policy, rbac, resource, scheduling, storage, storagemigration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope, Resource, SubResourceScope};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One step of a path into an object: a field or map key, or a list index.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A struct field or map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// What deserializing a JSON object into a Rust type found.
#[derive(Debug, Default)]
pub struct Probe {
    /// The fields the type does not have.
    pub unknown: Vec<Vec<Step>>,
    /// The first value the type cannot hold, with serde's message.
    pub error: Option<(Vec<Step>, String)>,
}

/// Deserializes `value` into `T`, recording every field `T` ignored and the first failure.
pub fn probe<T: DeserializeOwned>(value: &Value) -> Probe {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(ignored_steps(&path));
    let result: Result<T, _> =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value, &mut record));
    let error = result.err().map(|e| {
        let steps = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(Step::Key(key.clone())),
                _ => None,
            })
            .collect();
        (steps, e.inner().to_string())
    });
    Probe { unknown, error }
}

fn ignored_steps(path: &serde_ignored::Path<'_>) -> Vec<Step> {
    use serde_ignored::Path;
    match path {
        Path::Root => Vec::new(),
        Path::Seq { parent, index } => {
            let mut steps = ignored_steps(parent);
            steps.push(Step::Index(*index));
            steps
        }
        Path::Map { parent, key } => {
            let mut steps = ignored_steps(parent);
            steps.push(Step::Key(key.clone()));
            steps
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_steps(parent),
    }
}

/// Whether a k8s-openapi scope is a namespace's.
trait Scope {
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// A subresource's kind (`Scale`) is addressed through its parent's path.
impl Scope for SubResourceScope {
    const NAMESPACED: bool = false;
}

/// One built-in kind at one group/version, as its k8s-openapi type describes it; its
/// [`BuiltinResource`] fields are read through it (`builtin.group`).
pub struct Builtin {
    /// Where the kind is served: group, version, kind, plural and scope.
    pub resource: BuiltinResource,
    /// Deserializes a JSON object into the Rust type, reporting what it ignored.
    pub probe: fn(&serde_json::Value) -> Probe,
    /// Adds the type's schema (and those it refers to) to the generator's definitions, returning
    /// a reference to it.
    pub define: fn(&mut SchemaGenerator) -> Schema,
    /// The type's OpenAPI definition name (`io.k8s.api.apps.v1.Deployment`).
    pub schema_name: fn() -> Cow<'static, str>,
}

impl std::ops::Deref for Builtin {
    type Target = BuiltinResource;

    fn deref(&self) -> &BuiltinResource {
        &self.resource
    }
}

const fn builtin<T>() -> Builtin
where
    T: Resource + DeserializeOwned + JsonSchema,
    T::Scope: Scope,
{
    Builtin {
        resource: BuiltinResource {
            group: T::GROUP,
            version: T::VERSION,
            kind: T::KIND,
            plural: T::URL_PATH_SEGMENT,
            namespaced: <T::Scope as Scope>::NAMESPACED,
        },
        probe: probe::<T>,
        define: define::<T>,
        schema_name: T::schema_name,
    }
}

fn define<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

macro_rules! builtins {
    ($($ty:ty),* $(,)?) => {
        &[$(builtin::<$ty>()),*]
    };
}

/// Every built-in kind, in discovery order.
pub static BUILTINS: &[Builtin] = builtins![
    core::v1::ComponentStatus,
    core::v1::ConfigMap,
    core::v1::Endpoints,
    core::v1::Event,
    core::v1::LimitRange,
    core::v1::Namespace,
    core::v1::Node,
    core::v1::PersistentVolumeClaim,
    core::v1::PersistentVolume,
    core::v1::Pod,
    core::v1::PodTemplate,
    core::v1::ReplicationController,
    core::v1::ResourceQuota,
    core::v1::Secret,
    core::v1::ServiceAccount,
    core::v1::Service,
    apiregistration::v1::APIService,
    apps::v1::ControllerRevision,
    apps::v1::DaemonSet,
    apps::v1::Deployment,
    apps::v1::ReplicaSet,
    apps::v1::StatefulSet,
    events::v1::Event,
    authentication::v1::SelfSubjectReview,
    authentication::v1::TokenReview,
    authorization::v1::LocalSubjectAccessReview,
    authorization::v1::SelfSubjectAccessReview,
    authorization::v1::SelfSubjectRulesReview,
    authorization::v1::SubjectAccessReview,
    autoscaling::v2::HorizontalPodAutoscaler,
    autoscaling::v1::HorizontalPodAutoscaler,
    batch::v1::CronJob,
    batch::v1::Job,
    certificates::v1::CertificateSigningRequest,
    certificates::v1beta1::ClusterTrustBundle,
    certificates::v1beta1::PodCertificateRequest,
    certificates::v1alpha1::ClusterTrustBundle,
    networking::v1::IngressClass,
    networking::v1::Ingress,
    networking::v1::IPAddress,
    networking::v1::NetworkPolicy,
    networking::v1::ServiceCIDR,
    networking::v1beta1::IPAddress,
    networking::v1beta1::ServiceCIDR,
    policy::v1::PodDisruptionBudget,
    rbac::v1::ClusterRoleBinding,
    rbac::v1::ClusterRole,
    rbac::v1::RoleBinding,
    rbac::v1::Role,
    storage::v1::CSIDriver,
    storage::v1::CSINode,
    storage::v1::CSIStorageCapacity,
    storage::v1::StorageClass,
    storage::v1::VolumeAttachment,
    storage::v1::VolumeAttributesClass,
    storage::v1beta1::VolumeAttributesClass,
    admissionregistration::v1::MutatingAdmissionPolicy,
    admissionregistration::v1::MutatingAdmissionPolicyBinding,
    admissionregistration::v1::MutatingWebhookConfiguration,
    admissionregistration::v1::ValidatingAdmissionPolicy,
    admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    admissionregistration::v1::ValidatingWebhookConfiguration,
    admissionregistration::v1beta1::MutatingAdmissionPolicy,
    admissionregistration::v1beta1::MutatingAdmissionPolicyBinding,
    admissionregistration::v1alpha1::MutatingAdmissionPolicy,
    admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
    apiextensions::v1::CustomResourceDefinition,
    scheduling::v1::PriorityClass,
    scheduling::v1alpha2::PodGroup,
    scheduling::v1alpha2::Workload,
    coordination::v1::Lease,
    coordination::v1beta1::LeaseCandidate,
    coordination::v1alpha2::LeaseCandidate,
    node::v1::RuntimeClass,
    discovery::v1::EndpointSlice,
    resource::v1::DeviceClass,
    resource::v1::ResourceClaim,
    resource::v1::ResourceClaimTemplate,
    resource::v1::ResourceSlice,
    resource::v1beta2::DeviceClass,
    resource::v1beta2::DeviceTaintRule,
    resource::v1beta2::ResourceClaim,
    resource::v1beta2::ResourceClaimTemplate,
    resource::v1beta2::ResourceSlice,
    resource::v1beta1::DeviceClass,
    resource::v1beta1::ResourceClaim,
    resource::v1beta1::ResourceClaimTemplate,
    resource::v1beta1::ResourceSlice,
    resource::v1alpha3::DeviceTaintRule,
    resource::v1alpha3::ResourcePoolStatusRequest,
    flowcontrol::v1::FlowSchema,
    flowcontrol::v1::PriorityLevelConfiguration,
    apiserverinternal::v1alpha1::StorageVersion,
    storagemigration::v1beta1::StorageVersionMigration,
];

/// `autoscaling/v1` `Scale`, the kind of every `/scale` subresource.
pub static SCALE: Builtin = builtin::<autoscaling::v1::Scale>();

/// `ObjectMeta`, the typed part of a custom resource.
pub static OBJECT_META: Builtin = Builtin {
    resource: BuiltinResource {
        group: "meta.k8s.io",
        version: "v1",
        kind: "ObjectMeta",
        plural: "",
        namespaced: false,
    },
    probe: probe::<ObjectMeta>,
    define: define::<ObjectMeta>,
    schema_name: ObjectMeta::schema_name,
};

/// A built-in resource served at one group/version, as its k8s-openapi type names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinResource {
    /// API group ("" for core).
    pub group: &'static str,
    /// API version (`v1`, `v1beta2`).
    pub version: &'static str,
    /// Kind (`Deployment`).
    pub kind: &'static str,
    /// Plural resource name used in paths (`deployments`).
    pub plural: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

/// Every built-in resource the cluster serves (k8s-openapi's `v1_36` set), in discovery order.
pub fn builtin_resources() -> impl Iterator<Item = BuiltinResource> {
    BUILTINS.iter().map(|b| b.resource)
}

/// The built-in kind `kind` at `group`/`version`.
pub fn find(group: &str, version: &str, kind: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.group == group && b.version == version && b.kind == kind)
}
