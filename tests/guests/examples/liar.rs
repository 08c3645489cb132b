//! `apply` returns attributes that are not JSON; `read` (through `apply` with dry-run) returns a JSON array as a resource.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, plan, o) {
        let attributes = if o.dry_run {
            "[1, 2, 3]"
        } else {
            "{\"apiVersion\": \"v1\", \"kind\":"
        };
        rt::ApplyResponse {
            resource: Some(t::Resource {
                id: plan.map(|p| p.id).unwrap_or_default(),
                type_: "Kubernetes".into(),
                attributes: attributes.into(),
                depends_on: Vec::new(),
                extensions: "{}".into(),
            }),
            action: rt::Action::Create,
            ..applied(None)
        }
    }
}
