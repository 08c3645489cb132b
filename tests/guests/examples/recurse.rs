//! `apply` recurses without bound until the stack overflows.
#![cfg(target_arch = "wasm32")]

#[path = "../common.rs"]
mod common;

use common::*;
use std::hint::black_box;

struct G;

fn deep(n: u64) -> u64 {
    if n == u64::MAX {
        return 0;
    }
    let frame = black_box([n; 32]);
    deep(black_box(n + 1)).wrapping_add(frame[7])
}

impl G {
    fn run(
        _: Option<t::Resource>,
        _: Option<t::Resource>,
        _: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let depth = deep(0);
        applied(Some(status(
            t::StatusCode::Internal,
            "Unreachable",
            depth.to_string(),
        )))
    }
}

common::export_apply_only!(G);
