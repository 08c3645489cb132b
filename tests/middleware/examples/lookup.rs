//! Asks for cluster access (world `cluster-middleware`): `apply` reads the
//! ConfigMap `org-settings` of the plan's namespace. When the read is refused
//! (a middleware has no cluster access unless granted) or fails, the apply is
//! refused with the error's message; when it works, the plan is handed on with
//! the annotation `krt.dev/org-settings: found` or `absent`.
#![cfg(target_arch = "wasm32")]

use exports::kusion::runtime::runtime::*;
use kusion::runtime::kubernetes::{self as k8s, ApiResource};
use kusion::runtime::runtime as next;
use kusion::runtime::types::{StatusCode, StatusKind};
use serde_json::Value;

wit_bindgen::generate!({
    path: "../../wit",
    world: "cluster-middleware",
    merge_structurally_equal_types: true,
});

struct Lookup;

fn refused(e: k8s::ApiError) -> ApplyResponse {
    let policy = matches!(e.source, k8s::ErrorSource::Policy);
    let status = Status {
        kind: StatusKind::Error,
        code: if policy {
            StatusCode::PermissionDenied
        } else {
            StatusCode::Unknown
        },
        reason: if policy {
            "PolicyDenied"
        } else {
            "LookupFailed"
        }
        .into(),
        message: e.message,
        retryable: false,
        causes: Vec::new(),
        retry_after_ms: None,
    };
    ApplyResponse {
        resource: None,
        live: None,
        action: Action::Unchanged,
        status: Some(status),
        retries: 0,
    }
}

impl Guest for Lookup {
    fn apply(
        prior: Option<Resource>,
        plan: Option<Resource>,
        options: ApplyOptions,
    ) -> ApplyResponse {
        let Some(mut plan) = plan else {
            return next::apply(prior.as_ref(), None, &options);
        };
        let Ok(mut object) = serde_json::from_str::<Value>(&plan.attributes) else {
            return next::apply(prior.as_ref(), Some(&plan), &options);
        };
        let namespace = object["metadata"]["namespace"].as_str().map(str::to_owned);
        let configmaps = ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        };
        let found = match k8s::get(&configmaps, namespace.as_deref(), "org-settings") {
            Ok(found) => found.is_some(),
            Err(e) => return refused(e),
        };
        object["metadata"]["annotations"]["krt.dev/org-settings"] =
            if found { "found" } else { "absent" }.into();
        plan.attributes = object.to_string();
        next::apply(prior.as_ref(), Some(&plan), &options)
    }

    krt_test_middleware::pass_through!(read, delete, watch);
}

export!(Lookup);
