//! `apply` allocates (and touches) memory until the host's cap stops it.
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
        let mut kept = Vec::new();
        loop {
            kept.push(black_box(vec![7u8; 1 << 20]));
            black_box(&kept);
        }
    }
}

common::export_apply_only!(G);
