//! Misbehaves before it ever calls the next link: `apply` loops forever (the
//! CPU limit must stop it), `delete` panics (a trap). `read` and `watch`
//! pass through.
#![cfg(target_arch = "wasm32")]

use exports::kusion::runtime::runtime::*;
use kusion::runtime::runtime as next;

wit_bindgen::generate!({
    path: "../../wit",
    world: "middleware",
    merge_structurally_equal_types: true,
});

struct Spinner;

impl Guest for Spinner {
    fn apply(
        prior: Option<Resource>,
        plan: Option<Resource>,
        options: ApplyOptions,
    ) -> ApplyResponse {
        let mut n: u64 = 0;
        while std::hint::black_box(n) != u64::MAX {
            n = n.wrapping_add(1);
        }
        next::apply(prior.as_ref(), plan.as_ref(), &options)
    }

    krt_test_middleware::pass_through!(read, watch);

    fn delete(_: Resource, _: DeleteOptions) -> DeleteResponse {
        panic!("the spinner middleware refuses to delete anything");
    }
}

export!(Spinner);
