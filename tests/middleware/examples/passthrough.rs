//! Hands every call to the next link unchanged: the cost of a link itself.
#![cfg(target_arch = "wasm32")]

use exports::kusion::runtime::runtime::*;
use kusion::runtime::runtime as next;

wit_bindgen::generate!({
    path: "../../wit",
    world: "middleware",
    merge_structurally_equal_types: true,
});

struct Passthrough;

impl Guest for Passthrough {
    krt_test_middleware::pass_through!(apply, read, delete, watch);
}

export!(Passthrough);
