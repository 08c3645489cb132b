//! The authorization review APIs of `authorization.k8s.io/v1` (kube's
//! `pkg/registry/authorization/*`): `SelfSubjectAccessReview` (`kubectl auth can-i`),
//! `SelfSubjectRulesReview` (`kubectl auth can-i --list`), `SubjectAccessReview` and
//! `LocalSubjectAccessReview`. Each is created (never stored) and answered with its `status`.

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, NonResourceRule, ResourceAttributes, ResourceRule,
    SubjectAccessReviewStatus, SubjectRulesReviewStatus,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::target::Target;
use crate::auth::UserInfo;
use crate::rbac::{self, Attributes, rules::items};
use crate::request::{Request, Response, parse_body};
use crate::status::{ApiError, Subject};
use crate::store::Store;
use crate::validation::rules::Errors;

/// The API group of the review kinds.
pub(super) const GROUP: &str = "authorization.k8s.io";

/// The `spec` of an access review of any of the three kinds.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AccessSpec {
    resource_attributes: Option<ResourceAttributes>,
    non_resource_attributes: Option<NonResourceAttributes>,
    user: Option<String>,
    groups: Option<Vec<String>>,
    uid: Option<String>,
    extra: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

fn attributes_of(spec: &AccessSpec) -> Attributes {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    if let Some(r) = &spec.resource_attributes {
        Attributes {
            verb: s(&r.verb),
            resource_request: true,
            group: s(&r.group),
            version: r
                .version
                .clone()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "*".into()),
            resource: s(&r.resource),
            subresource: s(&r.subresource),
            namespace: s(&r.namespace),
            name: s(&r.name),
            ..Attributes::default()
        }
    } else {
        let n = spec.non_resource_attributes.clone().unwrap_or_default();
        Attributes {
            verb: s(&n.verb),
            path: s(&n.path),
            ..Attributes::default()
        }
    }
}

fn invalid(errors: Errors) -> Result<(), ApiError> {
    if errors.0.is_empty() {
        return Ok(());
    }
    let subject = Subject {
        group: GROUP,
        resource: "",
        name: "",
    };
    // kube-apiserver names no kind, in the message or the details: its internal review
    // object carries none (`.authorization.k8s.io "" is invalid`).
    Err(ApiError::invalid("", &subject, errors.0))
}

/// kube's `ValidateSelfSubjectAccessReviewSpec`: exactly one of the attribute kinds.
fn check_attributes(spec: &AccessSpec, errors: &mut Errors) {
    match (&spec.resource_attributes, &spec.non_resource_attributes) {
        (Some(_), Some(n)) => errors.invalid(
            "spec.nonResourceAttributes",
            &serde_json::to_value(n).unwrap_or_default(),
            "cannot be specified in combination with resourceAttributes",
        ),
        (None, None) => errors.invalid(
            "spec.resourceAttributes",
            &json!("null"),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        _ => {}
    }
}

fn decision_status(decision: rbac::Decision) -> Value {
    let status = SubjectAccessReviewStatus {
        allowed: decision.allowed,
        reason: (!decision.reason.is_empty()).then_some(decision.reason),
        ..SubjectAccessReviewStatus::default()
    };
    serde_json::to_value(status).unwrap_or_default()
}

fn rules_status(user: &UserInfo, state: &crate::store::State, namespace: &str) -> Value {
    // Only RBAC lists rules (kube's privileged-group authorizer lists none).
    let (rules, errors) = rbac::rules_for(state, user, namespace);
    let mut status = SubjectRulesReviewStatus::default();
    for rule in rules {
        let list = |v: &Option<Vec<String>>| (!items(v).is_empty()).then(|| items(v).to_vec());
        if !items(&rule.resources).is_empty() {
            status.resource_rules.push(ResourceRule {
                verbs: rule.verbs.clone(),
                api_groups: list(&rule.api_groups),
                resources: list(&rule.resources),
                resource_names: list(&rule.resource_names),
            });
        }
        if !items(&rule.non_resource_urls).is_empty() {
            status.non_resource_rules.push(NonResourceRule {
                verbs: rule.verbs.clone(),
                non_resource_urls: list(&rule.non_resource_urls),
            });
        }
    }
    if !errors.is_empty() {
        status.evaluation_error = Some(errors.join(", "));
    }
    serde_json::to_value(status).unwrap_or_default()
}

/// Answers a `POST` of a review to `target` (its collection) by `request.user`: the review
/// with its `status`, 201 Created.
///
/// # Errors
/// 400 for a body that is not a review, a missing namespace or user; 422 for invalid specs.
pub(super) fn create(
    store: &Store,
    target: &Target,
    request: &Request,
) -> Result<Response, ApiError> {
    let kind = target.rt.kind.as_str();
    let mut review = parse_body(&request.body)?;
    if !review.is_object() {
        return Err(ApiError::bad_request(format!(
            "error decoding request body: expected a {kind} object"
        )));
    }
    review["apiVersion"] = json!(format!("{GROUP}/v1"));
    review["kind"] = json!(kind);
    if review["metadata"].get("creationTimestamp").is_none() {
        review["metadata"]["creationTimestamp"] = Value::Null;
    }
    let caller = request.user.clone().unwrap_or_else(|| UserInfo {
        username: "system:apiserver".into(),
        groups: vec![
            crate::auth::MASTERS.into(),
            crate::auth::AUTHENTICATED.into(),
        ],
        ..UserInfo::default()
    });
    let state = store.lock();
    if kind == "SelfSubjectRulesReview" {
        let namespace = review["spec"]["namespace"].as_str().unwrap_or_default();
        if namespace.is_empty() {
            return Err(ApiError::bad_request("no namespace on request"));
        }
        // The registry answers with a new review: its spec and metadata are not the request's.
        let answer = json!({"apiVersion": review["apiVersion"], "kind": kind,
            "metadata": {"creationTimestamp": null}, "spec": {},
            "status": rules_status(&caller, &state, namespace)});
        return Ok(Response::json(201, answer));
    }
    // An absent spec decodes as Go's zero value, which validation then refuses.
    let given = match &review["spec"] {
        Value::Null => json!({}),
        spec => spec.clone(),
    };
    let spec: AccessSpec = serde_json::from_value(given)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: spec: {e}")))?;
    let mut errors = Errors::default();
    check_attributes(&spec, &mut errors);
    let user = match kind {
        "SelfSubjectAccessReview" => caller,
        _ => {
            let user = spec.user.clone().unwrap_or_default();
            let groups = spec.groups.clone().unwrap_or_default();
            if user.is_empty() && groups.is_empty() {
                errors.invalid(
                    "spec.user",
                    &json!(user),
                    "at least one of user or group must be specified",
                );
            }
            UserInfo {
                username: user,
                uid: spec.uid.clone().unwrap_or_default(),
                groups,
                extra: spec.extra.clone().unwrap_or_default(),
            }
        }
    };
    if kind == "LocalSubjectAccessReview" {
        let namespace = target.namespace.clone().unwrap_or_default();
        match review["metadata"]["namespace"].as_str() {
            None | Some("") => review["metadata"]["namespace"] = json!(namespace),
            Some(ns) if ns != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            Some(_) => {}
        }
        if let Some(n) = &spec.non_resource_attributes {
            errors.invalid(
                "spec.nonResourceAttributes",
                &serde_json::to_value(n).unwrap_or_default(),
                "disallowed on this kind of request",
            );
        }
        if let Some(r) = &spec.resource_attributes {
            let ns = r.namespace.clone().unwrap_or_default();
            if ns != namespace {
                errors.invalid(
                    "spec.resourceAttributes.namespace",
                    &json!(ns),
                    "must match metadata.namespace",
                );
            }
        }
    }
    invalid(errors)?;
    super::write::record_answered_create(request, &target.rt, &mut review)?;
    let decision = rbac::authorize(&state, &user, &attributes_of(&spec));
    review["status"] = decision_status(decision);
    Ok(Response::json(201, review))
}
