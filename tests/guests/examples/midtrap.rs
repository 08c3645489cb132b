//! `apply` creates the planned ConfigMap, then panics before it answers.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, plan, _) {
        let namespace = meta(&plan, "namespace");
        let object = plan.map(|p| p.attributes).unwrap_or_default();
        let options = k8s::CreateOptions {
            dry_run: false,
            field_manager: Some("krt".into()),
        };
        if let Err(e) = k8s::create(&configmaps(), Some(&namespace), &object, &options) {
            return applied(Some(status(t::StatusCode::Internal, &e.reason, e.message)));
        }
        panic!("boom after the first write");
    }
}
