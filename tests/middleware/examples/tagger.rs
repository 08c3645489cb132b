//! Changes what it hands on: `apply` sets the annotation `team: platform` on
//! every plan that has none, then calls the next link with the changed plan.
#![cfg(target_arch = "wasm32")]

use exports::kusion::runtime::runtime::*;
use kusion::runtime::runtime as next;

wit_bindgen::generate!({
    path: "../../wit",
    world: "middleware",
    merge_structurally_equal_types: true,
});

struct Tagger;

impl Guest for Tagger {
    fn apply(prior: Option<Resource>, plan: Option<Resource>, options: ApplyOptions) -> ApplyResponse {
        let plan = plan.map(|mut plan| {
            if let Ok(mut object) = serde_json::from_str::<serde_json::Value>(&plan.attributes) {
                let annotations = &mut object["metadata"]["annotations"];
                if annotations["team"].is_null() {
                    annotations["team"] = "platform".into();
                }
                plan.attributes = object.to_string();
            }
            plan
        });
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

export!(Tagger);
