//! Opens a TCP connection with `std::net` and reads a file with `std::fs`, so the
//! component imports `wasi:sockets` and `wasi:filesystem` (even when LTO drops what
//! is unused).
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
        let outcome = std::net::TcpStream::connect("10.0.0.1:80")
            .map(|_| ())
            .and_then(|()| std::fs::read_to_string("/etc/hostname").map(|_| ()));
        applied(Some(status(
            t::StatusCode::Internal,
            "Connected",
            format!("{outcome:?}"),
        )))
    }
}

common::export_apply_only!(G);
