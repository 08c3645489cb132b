//! `apply` tries calls a policy of "ConfigMaps and Namespaces in the plan's
//! namespace, no cluster-scoped kinds" must refuse, plus one it must allow, and
//! reports every outcome, one per line of the status message:
//! `<label>: <source> <code> <message>` or `<label>: ok`.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

fn outcome<T>(label: &str, result: Result<T, k8s::ApiError>) -> String {
    match result {
        Ok(_) => format!("{label}: ok"),
        Err(e) => {
            let source = match e.source {
                k8s::ErrorSource::Api => "api",
                k8s::ErrorSource::Transport => "transport",
                k8s::ErrorSource::Timeout => "timeout",
                k8s::ErrorSource::Policy => "policy",
                k8s::ErrorSource::Limit => "limit",
            };
            format!("{label}: {source} {} {}", e.code, e.message)
        }
    }
}

hostile! {
    fn apply(_, plan, _) {
        let ns = meta(&plan, "namespace");
        let create = k8s::CreateOptions {
            dry_run: false,
            field_manager: None,
        };
        let cm = |namespace: &str, name: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{namespace}"}},"data":{{"stolen":"yes"}}}}"#
            )
        };
        let secrets = k8s::ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "Secret".into(),
            plural: "secrets".into(),
            namespaced: true,
        };
        let namespaces = k8s::ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
            plural: "namespaces".into(),
            namespaced: false,
        };
        // Claims to be a cluster-scoped ConfigMap served at `secrets`.
        let forged = k8s::ApiResource {
            plural: "secrets".into(),
            namespaced: false,
            ..configmaps()
        };
        let patch = k8s::PatchOptions {
            dry_run: false,
            field_manager: Some("kubectl".into()),
            force: true,
        };
        let lines = [
            outcome(
                "other-namespace",
                k8s::create(&configmaps(), Some("other"), &cm("other", "leak"), &create),
            ),
            outcome("secret-read", k8s::get(&secrets, Some(&ns), "token")),
            outcome(
                "cluster-scoped-write",
                k8s::create(
                    &namespaces,
                    None,
                    r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rogue"}}"#,
                    &create,
                ),
            ),
            outcome(
                "forged-resource",
                k8s::list(
                    &forged,
                    None,
                    &k8s::ListOptions {
                        label_selector: None,
                        field_selector: None,
                        limit: None,
                        continue_token: None,
                    },
                ),
            ),
            outcome(
                "foreign-field-manager",
                k8s::patch(
                    &configmaps(),
                    Some(&ns),
                    "allowed",
                    t::PatchType::Apply,
                    &cm(&ns, "allowed"),
                    &patch,
                ),
            ),
            outcome(
                "allowed-write",
                k8s::create(&configmaps(), Some(&ns), &cm(&ns, "allowed"), &create),
            ),
        ];
        applied(Some(status(
            t::StatusCode::Unknown,
            "Attempts",
            lines.join("\n"),
        )))
    }
}
