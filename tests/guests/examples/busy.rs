//! `apply` calls `resolve` up to a million times and reports the first error it gets.
#![cfg(target_arch = "wasm32")]

#[path = "../common.rs"]
mod common;

use common::*;

struct G;

impl G {
    fn run(
        _: Option<t::Resource>,
        _: Option<t::Resource>,
        _: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        for _ in 0..1_000_000 {
            if let Err(e) = k8s::resolve("v1", "ConfigMap") {
                return applied(Some(status(
                    t::StatusCode::LimitExceeded,
                    &e.reason,
                    e.message,
                )));
            }
        }
        applied(None)
    }
}

common::export_apply_only!(G);
