//! `apply` returns attributes that are not JSON; `read` (through `apply` with dry-run) returns a JSON array as a resource.
#![cfg(target_arch = "wasm32")]

#[path = "../common.rs"]
mod common;

use common::*;

struct G;

impl G {
    fn run(
        _: Option<t::Resource>,
        plan: Option<t::Resource>,
        o: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let attributes = if o.dry_run {
            "[1, 2, 3]"
        } else {
            "{\"apiVersion\": \"v1\", \"kind\":"
        };
        rt::ApplyResponse {
            resource: Some(t::Resource {
                id: plan.map(|p| p.id).unwrap_or_default(),
                type_: "Kubernetes".into(),
                attributes: attributes.into(),
                depends_on: Vec::new(),
                extensions: "{}".into(),
            }),
            action: rt::Action::Create,
            ..applied(None)
        }
    }
}

common::export_apply_only!(G);
