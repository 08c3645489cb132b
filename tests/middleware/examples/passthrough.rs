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
    fn apply(
        prior: Option<Resource>,
        plan: Option<Resource>,
        options: ApplyOptions,
    ) -> ApplyResponse {
        next::apply(prior.as_ref(), plan.as_ref(), &options)
    }

    fn read(prior: Option<Resource>, plan: Option<Resource>, options: ReadOptions) -> ReadResponse {
        next::read(prior.as_ref(), plan.as_ref(), &options)
    }

    fn delete(resource: Resource, options: DeleteOptions) -> DeleteResponse {
        next::delete(&resource, &options)
    }

    fn watch(resource: Resource, options: WatchOptions) -> WatchResponse {
        next::watch(&resource, &options)
    }
}

export!(Passthrough);
