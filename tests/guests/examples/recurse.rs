//! `apply` recurses without bound until the stack overflows.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;
use std::hint::black_box;

/// Every frame lives on the wasm stack (no locals in linear memory), and the
/// result is combined after the call, so this cannot become a loop.
#[inline(never)]
fn deep(n: u64, salt: u64) -> u64 {
    if n == u64::MAX {
        return salt;
    }
    let next = deep(n.wrapping_add(1), salt.wrapping_mul(31).wrapping_add(n));
    next.rotate_left((n & 63) as u32) ^ salt
}

hostile! {
    fn apply(_, _, _) {
        let depth = deep(0, black_box(7));
        applied(Some(status(
            t::StatusCode::Internal,
            "Unreachable",
            depth.to_string(),
        )))
    }
}
