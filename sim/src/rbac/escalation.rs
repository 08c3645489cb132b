//! Escalation prevention on writes of Roles, ClusterRoles and their bindings, as kube's
//! `pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased` storage
//! does it: a role may grant only what its writer holds (in the role's namespace, or
//! cluster-wide) unless the writer may `escalate` it; a binding only what its writer holds of
//! the role it references unless the writer may `bind` that role. Members of `system:masters`
//! and trusted callers are not checked.

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef};
use serde_json::Value;

use super::{Attributes, GROUP, authorize, decode, forbidden_error, rules, rules_for, rules_of};
use crate::auth::{MASTERS, UserInfo};
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::store::State;

/// Whether an update changes only what the garbage collector changes (owner references and
/// finalizers) or what the server maintains, which kube lets through unchecked.
fn only_gc_fields(live: &Value, object: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v["metadata"].as_object_mut() {
            for field in [
                "ownerReferences",
                "finalizers",
                "managedFields",
                "resourceVersion",
            ] {
                m.remove(field);
            }
        }
        v
    };
    strip(live) == strip(object)
}

fn allowed(
    state: &State,
    user: &UserInfo,
    verb: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> bool {
    let attributes = Attributes {
        verb: verb.into(),
        resource_request: true,
        group: GROUP.into(),
        version: "*".into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Attributes::default()
    };
    authorize(state, user, &attributes).allowed
}

/// kube's `ConfirmNoEscalation`: the rules `user` holds in `namespace` cover `wanted`.
fn confirm_no_escalation(
    state: &State,
    user: &UserInfo,
    namespace: &str,
    wanted: &[PolicyRule],
) -> Result<(), String> {
    let (held, errors) = rules_for(state, user, namespace);
    let missing = rules::uncovered(&held, wanted);
    if missing.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.username,
        rules::quoted(&user.groups),
        rules::describe_missing(missing).join("\n")
    );
    if !errors.is_empty() {
        message.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    Err(message)
}

/// Everything: what a ClusterRole with an `aggregationRule` can gather.
fn full_authority() -> Vec<PolicyRule> {
    let all = || Some(vec!["*".to_string()]);
    vec![
        PolicyRule {
            api_groups: all(),
            resources: all(),
            verbs: vec!["*".into()],
            ..PolicyRule::default()
        },
        PolicyRule {
            non_resource_urls: all(),
            verbs: vec!["*".into()],
            ..PolicyRule::default()
        },
    ]
}

/// Checks a write by `user` of `object` (`live`: what it replaces) of type `rt` in
/// `namespace`: Roles, ClusterRoles and their bindings are checked, anything else passes.
///
/// # Errors
/// 403 Forbidden (`... is attempting to grant RBAC permissions not currently held: ...`), or
/// 404 for a binding to a missing role the writer may not bind.
pub(crate) fn check(
    state: &State,
    user: Option<&UserInfo>,
    rt: &ResourceType,
    namespace: &str,
    live: Option<&Value>,
    object: &Value,
) -> Result<(), ApiError> {
    let Some(user) = user.filter(|u| !u.in_group(MASTERS)) else {
        return Ok(());
    };
    let resource = rt.plural.as_str();
    if rt.group != GROUP
        || !matches!(
            resource,
            "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings"
        )
        || live.is_some_and(|live| only_gc_fields(live, object))
    {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let refuse = |cause: String| forbidden_error(GROUP, resource, name, cause);
    match resource {
        "roles" | "clusterroles" => {
            if allowed(state, user, "escalate", resource, namespace, name) {
                return Ok(());
            }
            let wanted = rules_of(object);
            confirm_no_escalation(state, user, namespace, &wanted).map_err(refuse)?;
            let aggregates = |v: &Value| !v["aggregationRule"].is_null();
            if resource == "clusterroles"
                && (aggregates(object) || live.is_some_and(aggregates))
                && confirm_no_escalation(state, user, "", &full_authority()).is_err()
            {
                return Err(refuse(
                    "must have cluster-admin privileges to use the aggregationRule".into(),
                ));
            }
            Ok(())
        }
        _ => {
            let Some(role_ref) = decode::<RoleRef>(&object["roleRef"]) else {
                return Ok(());
            };
            let role_resource = match role_ref.kind.as_str() {
                "Role" => "roles",
                "ClusterRole" => "clusterroles",
                _ => return Ok(()),
            };
            // An empty `apiGroup` is defaulted to rbac.authorization.k8s.io.
            if role_ref
                .api_group
                .as_deref()
                .is_none_or(|g| g.is_empty() || g == GROUP)
                && allowed(
                    state,
                    user,
                    "bind",
                    role_resource,
                    namespace,
                    &role_ref.name,
                )
            {
                return Ok(());
            }
            let wanted = super::role_rules(state, &role_ref, namespace).map_err(|_| {
                ApiError::not_found(&crate::status::Subject {
                    group: GROUP,
                    resource: role_resource,
                    name: &role_ref.name,
                })
            })?;
            confirm_no_escalation(state, user, namespace, &wanted).map_err(refuse)
        }
    }
}
