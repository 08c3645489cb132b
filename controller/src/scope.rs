//! Placing a Stack's resources and checking their reach before anything is
//! written: a namespaced object that names no namespace goes to the Stack's
//! namespace (its ID says so), every kind must be served by the cluster (or
//! defined by a CRD of the same Stack), and every object must be allowed by
//! the Stack's capability policy. The sandbox enforces that policy at every
//! cluster call anyway; checking it up front makes a Stack that reaches too
//! far change nothing at all.

use crate::crd::FIELD_MANAGER;
use krt_guest::id::ResourceId;
use krt_host::KubeCluster;
use krt_host::model::ApiResource;
use krt_host::policy::{Denial, Policy, Request, Verb};
use krt_stack::manifest::Loaded;
use serde_json::Value;
use std::collections::HashMap;

/// Why a Stack's resources were refused, each problem listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The resources do not form a valid stack (duplicate IDs, unknown
    /// dependencies, cycles).
    #[error("{}", .0.join("; "))]
    InvalidManifests(Vec<String>),
    /// Kinds the cluster does not serve.
    #[error("{}", .0.join("; "))]
    UnknownKinds(Vec<String>),
    /// Objects outside what the Stack may touch.
    #[error("{}", .0.join("; "))]
    PolicyDenied(Vec<String>),
}

impl Refusal {
    /// The condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::InvalidManifests(_) => "InvalidManifests",
            Refusal::UnknownKinds(_) => "UnknownKind",
            Refusal::PolicyDenied(_) => "PolicyDenied",
        }
    }
}

/// Why the check could not run.
#[derive(Debug, thiserror::Error)]
#[error("discovery of {api_version}/{kind} failed: {message}")]
pub struct DiscoveryError {
    /// The apiVersion asked for.
    pub api_version: String,
    /// The kind asked for.
    pub kind: String,
    /// The API server's message.
    pub message: String,
}

/// The outcome of [`place`]: the checked stack, or why it was refused.
pub type Placed = Result<krt_stack::Stack, Refusal>;

/// Places `loaded` in `namespace` (the Stack's) and checks it against
/// `policy`, as described in the module documentation.
///
/// # Errors
/// Discovery failed for another reason than an unknown kind.
pub async fn place(
    cluster: &KubeCluster,
    namespace: &str,
    mut loaded: Vec<Loaded>,
    policy: &Policy,
) -> Result<Placed, DiscoveryError> {
    let defined = crd_kinds(&loaded);
    let mut unknown = Vec::new();
    let mut denied = Vec::new();
    let mut renamed = HashMap::new();
    for l in &mut loaded {
        let a = &l.resource.attributes;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let (api_version, kind, name) = (
            text(&a["apiVersion"]),
            text(&a["kind"]),
            text(&a["metadata"]["name"]),
        );
        let api = match cluster.resolve(&api_version, &kind).await {
            Ok(api) => api,
            Err(e) if e.code == 404 => match defined.get(&(group_of(&api_version), kind.clone())) {
                Some(&(namespaced, ref plural)) => ApiResource {
                    group: group_of(&api_version),
                    version: api_version.rsplit('/').next().unwrap_or_default().into(),
                    kind: kind.clone(),
                    plural: plural.clone(),
                    namespaced,
                },
                None => {
                    unknown.push(format!(
                        "{}: {}: no resource type {api_version}/{kind} is served by the cluster \
                         (is its CRD installed?)",
                        l.origin, l.resource.id
                    ));
                    continue;
                }
            },
            Err(e) => {
                return Err(DiscoveryError {
                    api_version,
                    kind,
                    message: e.message,
                });
            }
        };
        let object_namespace = a["metadata"]["namespace"].as_str().map(str::to_owned);
        let object_namespace = match (api.namespaced, object_namespace) {
            (true, None) => {
                l.resource.attributes["metadata"]["namespace"] = namespace.into();
                let id = ResourceId::new(&api_version, &kind, Some(namespace), &name).to_string();
                renamed.insert(
                    std::mem::replace(&mut l.resource.id, id),
                    l.resource.id.clone(),
                );
                Some(namespace.to_owned())
            }
            (true, ns) => ns,
            (false, _) => None,
        };
        let request = Request {
            verb: Verb::Patch,
            resource: &api,
            namespace: object_namespace.as_deref(),
            name: Some(&name),
            field_manager: Some(FIELD_MANAGER),
            dry_run: false,
        };
        if let Err(denial) = policy.check(&request) {
            denied.push(format!(
                "{}: {}",
                l.origin,
                explain(&denial, namespace, object_namespace.as_deref(), &name)
            ));
        }
    }
    for l in &mut loaded {
        for dep in &mut l.resource.depends_on {
            if let Some(new) = renamed.get(dep) {
                dep.clone_from(new);
            }
        }
    }
    if !unknown.is_empty() {
        return Ok(Err(Refusal::UnknownKinds(unknown)));
    }
    if !denied.is_empty() {
        return Ok(Err(Refusal::PolicyDenied(denied)));
    }
    Ok(krt_stack::Stack::new(loaded).map_err(|e| Refusal::InvalidManifests(e.problems)))
}

/// A refused object, and how the controller's configuration would allow it.
fn explain(denial: &Denial, stack_namespace: &str, namespace: Option<&str>, name: &str) -> String {
    let hint = match denial.rule {
        "namespaces" => format!(
            "a Stack in namespace `{stack_namespace}` may touch only its own namespace unless \
             the controller grants more (`--grant-namespace {stack_namespace}={}`, or a grant \
             in its `--config`)",
            namespace.unwrap_or(name)
        ),
        "clusterScoped" => format!(
            "a Stack may touch cluster-scoped kinds only when the controller grants it \
             (`--grant-cluster-scoped {stack_namespace}`, or `clusterScoped: true` in a grant \
             of its `--config`)"
        ),
        _ => "the controller's policy does not allow it".to_owned(),
    };
    format!(
        "the Stack's policy denies {}: {}; {hint}",
        denial.what, denial.reason
    )
}

/// `apps` for `apps/v1`, empty for `v1`.
fn group_of(api_version: &str) -> String {
    api_version
        .split_once('/')
        .map_or_else(String::new, |(g, _)| g.to_owned())
}

/// The kinds the stack's own CRDs define: (group, kind) → (namespaced, plural).
fn crd_kinds(loaded: &[Loaded]) -> HashMap<(String, String), (bool, String)> {
    loaded
        .iter()
        .map(|l| &l.resource.attributes)
        .filter(|a| {
            a["kind"] == "CustomResourceDefinition"
                && a["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
        })
        .filter_map(|a| {
            let spec = &a["spec"];
            let group = spec["group"].as_str()?.to_owned();
            let kind = spec["names"]["kind"].as_str()?.to_owned();
            let plural = spec["names"]["plural"].as_str()?.to_owned();
            Some(((group, kind), (spec["scope"] != "Cluster", plural)))
        })
        .collect()
}
