//! `apply` creates the planned ConfigMap, then panics before it answers.
#![cfg(target_arch = "wasm32")]

#[path = "../common.rs"]
mod common;

use common::*;

struct G;

impl G {
    fn run(
        _: Option<t::Resource>,
        plan: Option<t::Resource>,
        _: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let namespace = meta(&plan, "namespace");
        let object = plan.map(|p| p.attributes).unwrap_or_default();
        let options = k8s::CreateOptions {
            dry_run: false,
            field_manager: Some("krt".into()),
        };
        if let Err(e) = k8s::create(&configmaps(), Some(&namespace), &object, &options) {
            return applied(Some(status(t::StatusCode::Internal, &e.reason, e.message)));
        }
        panic!("boom after the first write");
    }
}

common::export_apply_only!(G);
