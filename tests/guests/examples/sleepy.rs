//! `apply` sleeps in the host five times for 200 ms: a second of host time
//! and almost no guest execution.
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
        for _ in 0..5 {
            host::sleep(200);
        }
        applied(None)
    }
}

common::export_apply_only!(G);
