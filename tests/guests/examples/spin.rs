//! `apply` never returns: a CPU-bound infinite loop.
#![cfg(target_arch = "wasm32")]

#[path = "../common.rs"]
mod common;

use common::*;
use std::hint::black_box;

struct G;

impl G {
    fn run(
        _: Option<t::Resource>,
        _: Option<t::Resource>,
        _: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let mut n = 0u64;
        loop {
            n = black_box(n.wrapping_add(1));
        }
    }
}

common::export_apply_only!(G);
