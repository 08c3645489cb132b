//! Shared by the hostile guests: the `kubernetes-runtime` bindings and
//! trivial responses for the exports a guest does not misuse.
#![allow(
    dead_code,
    unused_imports,
    reason = "each guest uses some of the helpers"
)]

wit_bindgen::generate!({ path: "../../wit", world: "kubernetes-runtime" });

pub use exports::kusion::runtime::runtime::{self as rt, Guest};
pub use kusion::runtime::{host, kubernetes as k8s, types as t};

/// An error status.
pub fn status(code: t::StatusCode, reason: &str, message: String) -> t::Status {
    t::Status {
        kind: t::StatusKind::Error,
        code,
        reason: reason.into(),
        message,
        retryable: false,
        causes: Vec::new(),
        retry_after_ms: None,
    }
}

/// An apply response with `status` and nothing else.
pub fn applied(status: Option<t::Status>) -> rt::ApplyResponse {
    rt::ApplyResponse {
        resource: None,
        live: None,
        action: rt::Action::Unchanged,
        status,
        retries: 0,
    }
}

/// Nothing read.
pub fn read_nothing() -> rt::ReadResponse {
    rt::ReadResponse {
        resource: None,
        status: None,
    }
}

/// Deleted.
pub fn deleted() -> rt::DeleteResponse {
    rt::DeleteResponse { status: None }
}

/// Nothing watched.
pub fn watched() -> rt::WatchResponse {
    rt::WatchResponse {
        resource: None,
        health: t::Health {
            state: t::HealthState::Unknown,
            reason: String::new(),
            message: String::new(),
        },
        status: None,
    }
}

/// The `metadata.<field>` of a plan's attributes (a crude scan; enough for tests).
pub fn meta(plan: &Option<t::Resource>, field: &str) -> String {
    let Some(plan) = plan else {
        return String::new();
    };
    let key = format!("\"{field}\":\"");
    plan.attributes
        .find(&key)
        .map(|i| {
            let rest = &plan.attributes[i + key.len()..];
            rest[..rest.find('"').unwrap_or(0)].to_string()
        })
        .unwrap_or_default()
}

/// The core-group ConfigMap resource.
pub fn configmaps() -> k8s::ApiResource {
    k8s::ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    }
}

/// Implements the exports other than `apply` trivially and exports `$guest`.
macro_rules! export_apply_only {
    ($guest:ident) => {
        impl common::Guest for $guest {
            fn apply(
                prior: Option<common::t::Resource>,
                plan: Option<common::t::Resource>,
                options: common::rt::ApplyOptions,
            ) -> common::rt::ApplyResponse {
                $guest::run(prior, plan, options)
            }
            fn read(
                _: Option<common::t::Resource>,
                _: Option<common::t::Resource>,
                _: common::rt::ReadOptions,
            ) -> common::rt::ReadResponse {
                common::read_nothing()
            }
            fn delete(
                _: common::t::Resource,
                _: common::rt::DeleteOptions,
            ) -> common::rt::DeleteResponse {
                common::deleted()
            }
            fn watch(
                _: common::t::Resource,
                _: common::rt::WatchOptions,
            ) -> common::rt::WatchResponse {
                common::watched()
            }
        }
        common::export!($guest with_types_in common);
    };
}
pub(crate) use export_apply_only;
