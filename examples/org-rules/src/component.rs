//! The component glue: `apply` checks the organisation's rules first; a
//! violating plan never reaches the next link, everything else is handed on.

use exports::kusion::runtime::runtime::*;
use kusion::runtime::runtime as next;
use kusion::runtime::types::{Cause, StatusCode, StatusKind};

wit_bindgen::generate!({ path: "../../wit", world: "middleware", merge_structurally_equal_types: true });

struct OrgRules;

impl Guest for OrgRules {
    fn apply(
        prior: Option<Resource>,
        plan: Option<Resource>,
        options: ApplyOptions,
    ) -> ApplyResponse {
        let object = plan
            .as_ref()
            .map(|p| (p.id.as_str(), serde_json::from_str(&p.attributes)));
        let Some(refusal) = (match object {
            Some((id, Ok(object))) => crate::rules::check(id, &object),
            _ => None, // no plan (a delete), or attributes the runtime will refuse
        }) else {
            return next::apply(prior.as_ref(), plan.as_ref(), &options);
        };
        let causes = refusal.causes.into_iter();
        let causes = causes.map(|c| Cause {
            field: c.field,
            reason: c.reason,
            message: c.message,
        });
        let status = Status {
            kind: StatusKind::Error,
            code: StatusCode::IllegalManifest,
            reason: "OrgRuleViolation".into(),
            message: refusal.message,
            retryable: false,
            causes: causes.collect(),
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
    fn read(prior: Option<Resource>, plan: Option<Resource>, options: ReadOptions) -> ReadResponse {
        next::read(prior.as_ref(), plan.as_ref(), &options)
    }
    fn delete(resource: Resource, options: DeleteOptions) -> DeleteResponse {
        next::delete(&resource, &options)
    }
    fn watch(resource: Resource, options: WatchOptions) -> WatchResponse {
        next::watch(&resource, &options)
    }
}

export!(OrgRules);
