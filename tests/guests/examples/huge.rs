//! `apply` returns a 4 MiB `live` string.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, _, _) {
        rt::ApplyResponse {
            live: Some(format!("\"{}\"", "x".repeat(4 << 20))),
            ..applied(None)
        }
    }
}
