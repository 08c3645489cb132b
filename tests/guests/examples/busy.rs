//! `apply` calls `resolve` up to a million times and reports the first error it gets.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, _, _) {
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
