//! `apply` allocates (and touches) memory until the host's cap stops it.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;
use std::hint::black_box;

hostile! {
    fn apply(_, _, _) {
        let mut kept = Vec::new();
        loop {
            kept.push(black_box(vec![7u8; 1 << 20]));
            black_box(&kept);
        }
    }
}
