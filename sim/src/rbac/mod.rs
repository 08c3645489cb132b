//! Authorization as kube-apiserver's chain does it for krt-sim: members of `system:masters`
//! may do anything, everyone else what the RBAC objects in the store grant them (kube's
//! `plugin/pkg/auth/authorizer/rbac/rbac.go` and `pkg/registry/rbac/validation/rule.go`).
//! A request without a user (a trusted in-process caller) is not checked.
//!
//! - [`attributes`]: what a request asks to do.
//! - [`rules`]: whether a rule allows it, whether rules cover others.
//! - [`escalation`]: writes of roles and bindings grant no more than the writer holds.
//! - [`bootstrap`]: the default roles and bindings of a new cluster.

pub(crate) mod attributes;
pub(crate) mod bootstrap;
pub(crate) mod escalation;
pub(crate) mod rules;

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use attributes::Attributes;

use crate::auth::{MASTERS, UserInfo};
use crate::status::ApiError;
use crate::store::{Key, State};

/// The RBAC API group.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// The answer of the authorizer chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Why (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`), or the
    /// errors met evaluating the bindings; empty when nothing needs saying.
    pub reason: String,
}

/// The rules one binding grants one user, and the binding as RBAC's reasons describe it.
struct Grant {
    source: String,
    rules: Vec<PolicyRule>,
}

fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_value(value.clone()).ok()
}

/// The rules of a Role or ClusterRole object.
pub(crate) fn rules_of(role: &Value) -> Vec<PolicyRule> {
    decode(&role["rules"]).unwrap_or_default()
}

/// A binding's name, role reference and subjects.
fn binding_of(object: &Value) -> Option<(String, RoleRef, Vec<Subject>)> {
    let name = object["metadata"]["name"].as_str()?.to_string();
    let role_ref = decode(&object["roleRef"])?;
    let subjects = decode(&object["subjects"]).unwrap_or_default();
    Some((name, role_ref, subjects))
}

fn describe_subject(subject: &Subject, binding_namespace: &str) -> String {
    if subject.kind == "ServiceAccount" {
        let ns = subject
            .namespace
            .as_deref()
            .filter(|ns| !ns.is_empty())
            .unwrap_or(binding_namespace);
        format!("{} \"{}/{ns}\"", subject.kind, subject.name)
    } else {
        format!("{} {:?}", subject.kind, subject.name)
    }
}

/// Whether `subject` is `user` (a ServiceAccount subject without a namespace is one of the
/// binding's namespace).
fn applies(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.username == subject.name,
        "Group" => user.in_group(&subject.name),
        "ServiceAccount" => {
            let ns = subject
                .namespace
                .as_deref()
                .filter(|ns| !ns.is_empty())
                .unwrap_or(namespace);
            !ns.is_empty()
                && user.username == format!("system:serviceaccount:{ns}:{}", subject.name)
        }
        _ => false,
    }
}

fn rbac_key(resource: &str, namespace: &str, name: &str) -> Key {
    Key::of(GROUP, resource, namespace, name)
}

/// The rules of the role `role_ref` names (a Role of `namespace`, or a ClusterRole).
///
/// # Errors
/// The lister's words for a missing role, or an unsupported kind.
fn role_rules(
    state: &State,
    role_ref: &RoleRef,
    namespace: &str,
) -> Result<Vec<PolicyRule>, String> {
    let (resource, singular, ns) = match role_ref.kind.as_str() {
        "Role" => ("roles", "role", namespace),
        "ClusterRole" => ("clusterroles", "clusterrole", ""),
        other => return Err(format!("unsupported role reference kind: {other:?}")),
    };
    let object = state
        .get(&rbac_key(resource, ns, &role_ref.name))
        .ok_or_else(|| format!("{singular}.{GROUP} {:?} not found", role_ref.name))?;
    Ok(rules_of(object))
}

/// What the bindings grant `user` in `namespace` (cluster-wide alone for `""`): the
/// ClusterRoleBindings first, then the namespace's RoleBindings, as kube's `VisitRulesFor`;
/// and the errors met (bindings to missing roles).
fn grants(state: &State, user: &UserInfo, namespace: &str) -> (Vec<Grant>, Vec<String>) {
    let mut grants = Vec::new();
    let mut errors = Vec::new();
    for (_, object) in state.list(GROUP, "clusterrolebindings", None) {
        let Some((name, role_ref, subjects)) = binding_of(object) else {
            continue;
        };
        let Some(subject) = subjects.iter().find(|s| applies(user, s, "")) else {
            continue;
        };
        match role_rules(state, &role_ref, "") {
            Ok(rules) => grants.push(Grant {
                source: format!(
                    "ClusterRoleBinding {:?} of {} {:?} to {}",
                    name,
                    role_ref.kind,
                    role_ref.name,
                    describe_subject(subject, "")
                ),
                rules,
            }),
            Err(e) => errors.push(e),
        }
    }
    if namespace.is_empty() {
        return (grants, errors);
    }
    for (_, object) in state.list(GROUP, "rolebindings", Some(namespace)) {
        let Some((name, role_ref, subjects)) = binding_of(object) else {
            continue;
        };
        let Some(subject) = subjects.iter().find(|s| applies(user, s, namespace)) else {
            continue;
        };
        match role_rules(state, &role_ref, namespace) {
            Ok(rules) => grants.push(Grant {
                source: format!(
                    "RoleBinding \"{}/{namespace}\" of {} {:?} to {}",
                    name,
                    role_ref.kind,
                    role_ref.name,
                    describe_subject(subject, namespace)
                ),
                rules,
            }),
            Err(e) => errors.push(e),
        }
    }
    (grants, errors)
}

/// Go's `utilerrors.NewAggregate(errs).Error()`.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Every rule the bindings grant `user` in `namespace` (kube's `RulesFor`), and the errors met.
pub(crate) fn rules_for(
    state: &State,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let (grants, errors) = grants(state, user, namespace);
    (grants.into_iter().flat_map(|g| g.rules).collect(), errors)
}

/// The decision of kube-apiserver's authorizer chain (`system:masters`, then RBAC) on
/// `attributes` for `user`.
pub fn authorize(state: &State, user: &UserInfo, attributes: &Attributes) -> Decision {
    if user.in_group(MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let (grants, errors) = grants(state, user, &attributes.namespace);
    for grant in grants {
        if grant.rules.iter().any(|r| rules::allows(r, attributes)) {
            return Decision {
                allowed: true,
                reason: format!("RBAC: allowed by {}", grant.source),
            };
        }
    }
    Decision {
        allowed: false,
        reason: if errors.is_empty() {
            String::new()
        } else {
            format!("RBAC: {}", aggregate(&errors))
        },
    }
}

/// 403 Forbidden as kube-apiserver answers a denied request (`responsewriters.Forbidden`):
/// `secrets "x" is forbidden: User "jane" cannot get resource "secrets" in API group "" in
/// the namespace "y"`, `forbidden: User "x" cannot get path "/apis"` for non-resource paths.
pub fn forbidden(user: &UserInfo, attributes: &Attributes, reason: &str) -> ApiError {
    let who = &user.username;
    let verb = &attributes.verb;
    let mut message = if !attributes.resource_request {
        format!("User {who:?} cannot {verb} path {:?}", attributes.path)
    } else if attributes.namespace.is_empty() {
        format!(
            "User {who:?} cannot {verb} resource {:?} in API group {:?} at the cluster scope",
            attributes.combined_resource(),
            attributes.group
        )
    } else {
        format!(
            "User {who:?} cannot {verb} resource {:?} in API group {:?} in the namespace {:?}",
            attributes.combined_resource(),
            attributes.group,
            attributes.namespace
        )
    };
    if !reason.is_empty() {
        message = format!("{message}: {reason}");
    }
    let resource = if attributes.resource_request {
        attributes.resource.as_str()
    } else {
        ""
    };
    forbidden_error(&attributes.group, resource, &attributes.name, message)
}

/// kube's `NewForbidden(groupResource, name, err)`: 403 with `details` {name, group, kind}.
pub(crate) fn forbidden_error(group: &str, resource: &str, name: &str, cause: String) -> ApiError {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let message = if qualified.is_empty() {
        format!("forbidden: {cause}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {cause}")
    } else {
        format!("{qualified} {name:?} is forbidden: {cause}")
    };
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    ApiError {
        details: Some(Box::new(StatusDetails {
            name: some(name),
            group: some(group),
            kind: some(resource),
            ..StatusDetails::default()
        })),
        ..ApiError::new(403, "Forbidden", message)
    }
}

/// Authorizes a request of `user`.
///
/// # Errors
/// 403 Forbidden when the chain does not allow it.
pub(crate) fn check(
    state: &State,
    user: &UserInfo,
    attributes: &Attributes,
) -> Result<(), ApiError> {
    let decision = authorize(state, user, attributes);
    if decision.allowed {
        Ok(())
    } else {
        Err(forbidden(user, attributes, &decision.reason))
    }
}
