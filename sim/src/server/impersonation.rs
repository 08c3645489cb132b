//! Impersonation, as kube-apiserver's filter does it: `Impersonate-User` (a ServiceAccount's
//! user name impersonates that account), `Impersonate-Group`, `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` headers each need the `impersonate` verb on what they name, and
//! the request then runs as the user they describe.

use std::collections::BTreeMap;

use axum::http::HeaderMap;

use crate::auth::{ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, UserInfo};
use crate::status::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA: &str = "impersonate-extra-";

/// One thing a request asks to impersonate: the `impersonate` verb on it is authorized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `authentication.k8s.io` for uids and extras, "" otherwise.
    pub group: &'static str,
    /// `users`, `serviceaccounts`, `groups`, `uids` or `userextras`.
    pub resource: &'static str,
    /// The extra's key, for `userextras`.
    pub subresource: String,
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The user, account, group, UID or extra value.
    pub name: String,
}

impl Target {
    fn new(group: &'static str, resource: &'static str, name: &str) -> Self {
        Self {
            group,
            resource,
            subresource: String::new(),
            namespace: String::new(),
            name: name.to_string(),
        }
    }

    /// How kube's impersonation filter lists it in a 400 (`{Kind  name}` with its namespace).
    fn describe(&self) -> String {
        let kind = match self.resource {
            "users" => "User",
            "serviceaccounts" => "ServiceAccount",
            "groups" => "Group",
            "uids" => "UID",
            _ => "UserExtra",
        };
        format!("{{{kind} {} {}}}", self.namespace, self.name)
    }
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// The user the impersonation headers describe, each part authorized by `allowed` for
/// `requester`; `None` when the request has no such headers.
///
/// # Errors
/// 400 when groups, a UID or extras are asked for without a user; the Forbidden `allowed`
/// returns for the first part the requester may not impersonate.
pub fn impersonate(
    headers: &HeaderMap,
    allowed: impl Fn(&Target) -> Result<(), ApiError>,
) -> Result<Option<UserInfo>, ApiError> {
    let username = values(headers, USER).first().copied().unwrap_or_default();
    let requested_groups = values(headers, GROUP);
    let uid = values(headers, UID).first().copied().unwrap_or_default();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut targets = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    if !username.is_empty() {
        match service_account(username) {
            Some((namespace, name)) => {
                targets.push(Target {
                    namespace: namespace.to_string(),
                    ..Target::new("", "serviceaccounts", name)
                });
                if requested_groups.is_empty() {
                    groups.push("system:serviceaccounts".into());
                    groups.push(format!("system:serviceaccounts:{namespace}"));
                }
            }
            None => targets.push(Target::new("", "users", username)),
        }
    }
    for group in &requested_groups {
        targets.push(Target::new("", "groups", group));
        groups.push((*group).to_string());
    }
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(EXTRA) else {
            continue;
        };
        let key = percent_decode(key);
        let Ok(value) = value.to_str() else { continue };
        targets.push(Target {
            subresource: key.clone(),
            ..Target::new("authentication.k8s.io", "userextras", value)
        });
        extra.entry(key).or_default().push(value.to_string());
    }
    if !uid.is_empty() {
        targets.push(Target::new("authentication.k8s.io", "uids", uid));
    }
    if targets.is_empty() {
        return Ok(None);
    }
    if username.is_empty() {
        let listed: Vec<String> = targets.iter().map(Target::describe).collect();
        return Err(ApiError::bad_request(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    for target in &targets {
        allowed(target)?;
    }
    if username == ANONYMOUS {
        if !groups.iter().any(|g| g == UNAUTHENTICATED) {
            groups.push(UNAUTHENTICATED.into());
        }
    } else if !groups
        .iter()
        .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
    {
        groups.push(AUTHENTICATED.into());
    }
    Ok(Some(UserInfo {
        username: username.to_string(),
        uid: uid.to_string(),
        groups,
        extra,
    }))
}

/// The namespace and name of a ServiceAccount user name (`system:serviceaccount:ns:name`).
fn service_account(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// `%XX` sequences decoded, as Go's `url.PathUnescape`; a malformed key is kept as sent.
fn percent_decode(key: &str) -> String {
    percent_encoding::percent_decode_str(key)
        .decode_utf8()
        .map_or_else(|_| key.to_string(), |k| k.into_owned())
}
