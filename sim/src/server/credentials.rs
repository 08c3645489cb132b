//! The authentication APIs, answered where the credentials are: `TokenRequest` (the
//! `serviceaccounts/token` subresource, `kubectl create token`), `TokenReview` and
//! `SelfSubjectReview` (`kubectl auth whoami`).

use serde_json::{Value, json};

use super::authn::Authenticator;
use super::tokens::{Binding, Grant, Ref, lookup};
use crate::auth::UserInfo;
use crate::request::{Response, parse_body};
use crate::status::{ApiError, Subject, cause};
use crate::store::State;

/// The authentication API a path names.
pub enum Endpoint {
    /// `POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`.
    TokenRequest {
        /// The ServiceAccount's namespace.
        namespace: String,
        /// The ServiceAccount.
        name: String,
    },
    /// `POST /apis/authentication.k8s.io/v1/tokenreviews`.
    TokenReview,
    /// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`.
    SelfSubjectReview,
}

impl Endpoint {
    /// The endpoint `path` names, if it is one of these.
    pub fn of(path: &str) -> Option<Self> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match segments.as_slice() {
            [
                "api",
                "v1",
                "namespaces",
                namespace,
                "serviceaccounts",
                name,
                "token",
            ] => Some(Self::TokenRequest {
                namespace: (*namespace).to_string(),
                name: (*name).to_string(),
            }),
            ["apis", "authentication.k8s.io", "v1", "tokenreviews"] => Some(Self::TokenReview),
            ["apis", "authentication.k8s.io", "v1", "selfsubjectreviews"] => {
                Some(Self::SelfSubjectReview)
            }
            _ => None,
        }
    }

    /// Answers `request` from `user`.
    pub fn serve(
        &self,
        request: &crate::request::Request,
        user: &UserInfo,
        authenticator: &Authenticator,
        state: &State,
    ) -> Response {
        if request.method != "POST" {
            return ApiError::method_not_allowed().into();
        }
        let body = request.body.as_slice();
        let answer = match self {
            Self::TokenRequest { namespace, name } => {
                token_request(namespace, name, body, authenticator, state)
            }
            Self::TokenReview => token_review(body, authenticator, state).and_then(|mut review| {
                // The request's fields are its manager's, as for every create.
                if let Some(rt) = state.find_type("authentication.k8s.io", "v1", "tokenreviews") {
                    crate::routes::record_answered_create(request, &rt, &mut review)?;
                }
                Ok(review)
            }),
            Self::SelfSubjectReview => Ok(json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
                "metadata": {"creationTimestamp": crate::meta::now()},
                "status": {"userInfo": user},
            })),
        };
        match answer {
            Ok(object) => Response::json(201, object),
            Err(e) => e.into(),
        }
    }
}

/// The shortest and longest validity a TokenRequest may ask for.
const MIN_SECONDS: i64 = 600;
const MAX_SECONDS: i64 = 1 << 32;
/// What a TokenRequest without `expirationSeconds` gets.
const DEFAULT_SECONDS: i64 = 3600;

fn invalid(name: &str, field: &str, message: String) -> ApiError {
    let subject = Subject {
        group: "authentication.k8s.io",
        resource: "serviceaccounts",
        name,
    };
    ApiError::invalid(
        "TokenRequest",
        &subject,
        vec![cause("FieldValueInvalid", field, message)],
    )
}

fn token_request(
    namespace: &str,
    name: &str,
    body: &[u8],
    authenticator: &Authenticator,
    state: &State,
) -> Result<Value, ApiError> {
    let request = parse_body(body)?;
    let Some(account) = lookup(state, "serviceaccounts", namespace, name) else {
        return Err(ApiError::new(
            404,
            "NotFound",
            format!("serviceaccounts \"{name}\" not found"),
        ));
    };
    let spec = &request["spec"];
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_SECONDS);
    if seconds < MIN_SECONDS {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes"),
        ));
    }
    if seconds > MAX_SECONDS {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!(
                "Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds"
            ),
        ));
    }
    let audiences = strings(&spec["audiences"]);
    let binding = bound_object(namespace, &spec["boundObjectRef"], state)?;
    let grant = Grant {
        namespace,
        account: Ref {
            name: name.to_string(),
            uid: account["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        },
        audiences: audiences.clone(),
        seconds,
        binding,
    };
    let (token, expires) = authenticator
        .issuer()
        .issue(grant)
        .map_err(|e| ApiError::new(500, "InternalError", e))?;
    let audiences = if audiences.is_empty() {
        vec![super::tokens::ISSUER.to_string()]
    } else {
        audiences
    };
    let mut spec = spec.clone();
    if !spec.is_object() {
        spec = json!({});
    }
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(seconds);
    Ok(json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
        "spec": spec,
        "status": {
            "token": token,
            "expirationTimestamp": crate::meta::format_unix(u64::try_from(expires).unwrap_or_default()),
        },
    }))
}

/// The Pod or Secret `reference` names, checked to exist (with its UID when given).
fn bound_object(
    namespace: &str,
    reference: &Value,
    state: &State,
) -> Result<Option<Binding>, ApiError> {
    if reference.is_null() {
        return Ok(None);
    }
    let kind = reference["kind"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    let resource = match kind {
        "Pod" => "pods",
        "Secret" => "secrets",
        other => {
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {other}"
            )));
        }
    };
    let Some(live) = lookup(state, resource, namespace, name) else {
        return Err(ApiError::new(
            404,
            "NotFound",
            format!("{resource} \"{name}\" not found"),
        ));
    };
    let uid = live["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(given) = reference["uid"].as_str().filter(|u| !u.is_empty())
        && given != uid
    {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "the UID in the bound object reference ({given}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        ));
    }
    let reference = Ref {
        name: name.to_string(),
        uid,
    };
    Ok(Some(if kind == "Pod" {
        Binding::Pod(reference)
    } else {
        Binding::Secret(reference)
    }))
}

fn token_review(
    body: &[u8],
    authenticator: &Authenticator,
    state: &State,
) -> Result<Value, ApiError> {
    let mut review = parse_body(body)?;
    let token = review["spec"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let audiences = strings(&review["spec"]["audiences"]);
    let status = match authenticator.token_user(&token, &audiences, state) {
        Ok((user, matched)) => {
            let mut status = json!({"authenticated": true, "user": user});
            if !matched.is_empty() {
                status["audiences"] = json!(matched);
            }
            status
        }
        Err(reason) => json!({"user": {}, "error": reason}),
    };
    review["status"] = status;
    review["metadata"]["creationTimestamp"] = Value::Null;
    Ok(review)
}

/// The strings of a JSON list (`spec.audiences`); none when it is absent.
fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
