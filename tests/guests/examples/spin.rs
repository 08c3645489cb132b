//! `apply` never returns: a CPU-bound infinite loop.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;
use std::hint::black_box;

hostile! {
    fn apply(_, _, _) {
        let mut n = 0u64;
        loop {
            n = black_box(n.wrapping_add(1));
        }
    }
}
