//! What the apply walk waits for once it has written a resource, and for how
//! long: a resource's own `krt.dev/wait` and `krt.dev/timeout` (annotations of
//! a plain manifest, or the same keys in a Kusion resource's `extensions`),
//! else the stack's [`WaitFor`] kinds, else its health.

use krt_guest::model::Resource;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// The key naming what to wait for: `none`, `exists` or `healthy` (the default).
pub const WAIT_KEY: &str = "krt.dev/wait";

/// The key giving the longest wait for health, as `90s`, `5m` or `1h 30m`
/// (instead of the run's `--timeout`).
pub const TIMEOUT_KEY: &str = "krt.dev/timeout";

/// What the walk waits for after writing a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wait {
    /// Nothing: done once written.
    None,
    /// That it exists, which the write's answer already shows; its health is
    /// not waited for.
    Exists,
    /// That it becomes healthy (current), fails, or the timeout passes.
    Healthy,
}

impl Wait {
    /// The word of the setting: `none`, `exists`, `healthy`.
    pub fn word(self) -> &'static str {
        match self {
            Wait::None => "none",
            Wait::Exists => "exists",
            Wait::Healthy => "healthy",
        }
    }
}

/// A resource's own wait settings; `None` leaves a setting to the stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitSpec {
    /// What to wait for.
    pub wait: Option<Wait>,
    /// How long to wait for health.
    pub timeout: Option<Duration>,
}

impl WaitSpec {
    /// The settings of `resource`: each key from its `extensions` when there,
    /// else from its manifest's annotations.
    ///
    /// # Errors
    /// A value that is not text, a wait other than `none`, `exists` or
    /// `healthy`, or a timeout that is not a duration; the message names the key.
    pub fn of(resource: &Resource) -> Result<WaitSpec, String> {
        let setting = |key: &str| -> Result<Option<String>, String> {
            let annotations = &resource.attributes["metadata"]["annotations"];
            match resource
                .extensions
                .get(key)
                .or_else(|| annotations.get(key))
            {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
                Some(other) => Err(format!("{key} must be text, not {other}")),
            }
        };
        let wait = match setting(WAIT_KEY)?.as_deref() {
            None => None,
            Some("none") => Some(Wait::None),
            Some("exists") => Some(Wait::Exists),
            Some("healthy") => Some(Wait::Healthy),
            Some(other) => {
                return Err(format!(
                    "{WAIT_KEY} must be none, exists or healthy, not '{other}'"
                ));
            }
        };
        let timeout = setting(TIMEOUT_KEY)?
            .map(|text| {
                humantime::parse_duration(&text).map_err(|e| {
                    format!("{TIMEOUT_KEY} must be a duration such as 90s or 5m, not '{text}': {e}")
                })
            })
            .transpose()?;
        Ok(WaitSpec { wait, timeout })
    }
}

/// The kinds the walk waits to become healthy when a resource does not say
/// ([`WAIT_KEY`]); resources of other kinds are only written ([`Wait::Exists`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WaitFor {
    /// Every kind (the default).
    #[default]
    All,
    /// These kinds (`Deployment`, `StatefulSet`, ...; compared ignoring case).
    Kinds(BTreeSet<String>),
}

impl WaitFor {
    /// The kinds in `list`, comma-separated (`*` or `all` for every kind).
    pub fn parse(list: &str) -> WaitFor {
        let kinds: BTreeSet<String> = list
            .split(',')
            .map(|k| k.trim().to_ascii_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        if kinds.iter().any(|k| k == "*" || k == "all") {
            WaitFor::All
        } else {
            WaitFor::Kinds(kinds)
        }
    }

    /// What a resource of `kind` is waited for, unless it says otherwise.
    pub fn wait_of(&self, kind: &str) -> Wait {
        match self {
            WaitFor::All => Wait::Healthy,
            WaitFor::Kinds(kinds) if kinds.contains(&kind.to_ascii_lowercase()) => Wait::Healthy,
            WaitFor::Kinds(_) => Wait::Exists,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(annotations: Value, extensions: Value) -> Resource {
        Resource {
            id: "v1:ConfigMap:c".into(),
            type_: "Kubernetes".into(),
            attributes: json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "annotations": annotations}}),
            depends_on: Vec::new(),
            extensions,
        }
    }

    #[test]
    fn reads_annotations_and_lets_extensions_override_them() {
        let plain = with(
            json!({"krt.dev/wait": "exists", "krt.dev/timeout": "90s"}),
            json!({}),
        );
        assert_eq!(
            WaitSpec::of(&plain).unwrap(),
            WaitSpec {
                wait: Some(Wait::Exists),
                timeout: Some(Duration::from_secs(90)),
            }
        );
        let kusion = with(
            json!({"krt.dev/wait": "exists"}),
            json!({"krt.dev/wait": "none", "krt.dev/timeout": "1h 30m"}),
        );
        assert_eq!(
            WaitSpec::of(&kusion).unwrap(),
            WaitSpec {
                wait: Some(Wait::None),
                timeout: Some(Duration::from_secs(5400)),
            }
        );
        assert_eq!(
            WaitSpec::of(&with(json!(null), json!({}))).unwrap(),
            WaitSpec::default()
        );
    }

    #[test]
    fn refuses_bad_values_naming_the_key() {
        let bad = |annotations: Value| WaitSpec::of(&with(annotations, json!({}))).unwrap_err();
        assert_eq!(
            bad(json!({"krt.dev/wait": "sometimes"})),
            "krt.dev/wait must be none, exists or healthy, not 'sometimes'"
        );
        let timeout = bad(json!({"krt.dev/timeout": "soon"}));
        assert!(
            timeout.starts_with("krt.dev/timeout must be a duration such as 90s or 5m, not 'soon'"),
            "{timeout}"
        );
        let extension = WaitSpec::of(&with(json!({}), json!({"krt.dev/wait": true}))).unwrap_err();
        assert_eq!(extension, "krt.dev/wait must be text, not true");
    }

    #[test]
    fn the_stack_waits_for_the_kinds_it_names() {
        assert_eq!(WaitFor::default().wait_of("Ingress"), Wait::Healthy);
        let some = WaitFor::parse("Deployment, statefulset");
        assert_eq!(some.wait_of("Deployment"), Wait::Healthy);
        assert_eq!(some.wait_of("StatefulSet"), Wait::Healthy);
        assert_eq!(some.wait_of("Ingress"), Wait::Exists);
        assert_eq!(WaitFor::parse("Deployment,*"), WaitFor::All);
    }
}
