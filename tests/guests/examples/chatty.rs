//! `apply` floods the host with 4 KiB log records, forever.
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
        let line = "flood ".repeat(700);
        loop {
            host::log(host::LogLevel::Info, &line, &[]);
        }
    }
}

common::export_apply_only!(G);
