//! `apply` returns a 4 MiB `live` string.
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
        rt::ApplyResponse {
            live: Some(format!("\"{}\"", "x".repeat(4 << 20))),
            ..applied(None)
        }
    }
}

common::export_apply_only!(G);
