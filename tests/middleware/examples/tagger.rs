//! Changes what it hands on: sets the annotation `team: platform` on every plan that has no
//! `team` annotation, then calls the next link with the changed plan.
#![cfg(target_arch = "wasm32")]

use exports::kusion::runtime::runtime::*;
use kusion::runtime::runtime as next;
use serde_json::Value;

wit_bindgen::generate!({ path: "../../wit", world: "middleware", merge_structurally_equal_types: true });

struct Tagger;

impl Guest for Tagger {
    fn apply(old: Option<Resource>, mut plan: Option<Resource>, o: ApplyOptions) -> ApplyResponse {
        if let Some(p) = &mut plan
            && let Ok(mut object) = serde_json::from_str::<Value>(&p.attributes)
        {
            let team = &mut object["metadata"]["annotations"]["team"];
            if team.is_null() {
                *team = "platform".into();
            }
            p.attributes = object.to_string();
        }
        next::apply(old.as_ref(), plan.as_ref(), &o)
    }
    fn read(prior: Option<Resource>, plan: Option<Resource>, o: ReadOptions) -> ReadResponse {
        next::read(prior.as_ref(), plan.as_ref(), &o)
    }
    fn delete(resource: Resource, o: DeleteOptions) -> DeleteResponse {
        next::delete(&resource, &o)
    }
    fn watch(resource: Resource, o: WatchOptions) -> WatchResponse {
        next::watch(&resource, &o)
    }
}

export!(Tagger);
