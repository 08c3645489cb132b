//! The capability policy: which cluster calls a guest component may make.
//!
//! Every `kusion:runtime/kubernetes` import is checked against a [`Policy`]
//! before it reaches the cluster. A refusal goes back to the guest as an
//! `api-error` with `source: policy` whose message names the rule and says how
//! to allow the call; the host also logs it (target `krt::policy`).
//!
//! A policy comes from a YAML file ([`Policy::load`]) or from the resources
//! being applied ([`Policy::for_resources`], krt's default); its fields are
//! public, so a command line or a controller can widen or narrow it.

mod glob;

use krt_guest::model::{ApiResource, Resource};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// A Kubernetes API verb, as the host's imports use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    /// Read one object.
    Get,
    /// List objects.
    List,
    /// Watch objects.
    Watch,
    /// Create an object.
    Create,
    /// Patch an object (including server-side apply).
    Patch,
    /// Delete an object.
    Delete,
}

impl Verb {
    /// Every verb.
    pub const ALL: [Verb; 6] = [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Patch,
        Verb::Delete,
    ];

    /// Whether the verb changes the cluster (unless run as a dry run).
    pub fn writes(self) -> bool {
        matches!(self, Verb::Create | Verb::Patch | Verb::Delete)
    }

    fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Verb {
    type Err = String;

    /// A verb by its lowercase name (`get`, `list`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verb::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Verb::ALL.iter().map(|v| v.name()).collect();
                format!("unknown verb '{s}' (expected one of {})", names.join(", "))
            })
    }
}

/// What a guest may do with the cluster. Patterns are shell-style globs
/// (`*`, `?`). As a YAML file (every field optional):
///
/// ```yaml
/// namespaces: [team-a, "team-a-*"]   # none when absent
/// kinds: [ConfigMap, apps/Deployment] # `Kind` for the core group, `group/Kind` otherwise
/// readKinds: [apps/ReplicaSet, Pod]    # kinds that may only be read (get, list, watch)
/// verbs: [get, list, watch, create, patch, delete]  # all when absent
/// readOnly: false                      # true: only reads and dry runs
/// fieldManagers: [krt]                 # the default
/// clusterScoped: false                 # cluster-scoped kinds (Namespace, ClusterRole, ...)
/// maxRequests: 1000                    # cluster calls per operation
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// Namespaces the guest may touch (globs). A `Namespace` object counts as
    /// being in the namespace it names; calls across all namespaces need `*`.
    pub namespaces: Vec<String>,
    /// Kinds the guest may touch: `Kind` for the core group, `group/Kind`
    /// otherwise (globs, so `apps/*` or `*`).
    pub kinds: Vec<String>,
    /// Kinds the guest may only read (get, list, watch), in the allowed
    /// namespaces: the children a watch inspects to explain progress.
    pub read_kinds: Vec<String>,
    /// Verbs the guest may use.
    pub verbs: BTreeSet<Verb>,
    /// Only reads and dry-run writes (which change nothing) are allowed.
    pub read_only: bool,
    /// Field managers the guest may write as (globs); a write that names none
    /// is allowed (server-side apply then uses `krt`, which must match).
    pub field_managers: Vec<String>,
    /// Whether cluster-scoped kinds may be touched at all.
    pub cluster_scoped: bool,
    /// Most cluster calls one operation (one export call) may make.
    pub max_requests: u32,
}

impl Default for Policy {
    /// Nothing allowed but the defaults of the optional rules: no namespaces,
    /// no kinds, every verb, writes allowed, field manager `krt`, no
    /// cluster-scoped kinds, 1,000 requests per operation.
    fn default() -> Self {
        Policy {
            namespaces: Vec::new(),
            kinds: Vec::new(),
            read_kinds: Vec::new(),
            verbs: Verb::ALL.into_iter().collect(),
            read_only: false,
            field_managers: vec!["krt".into()],
            cluster_scoped: false,
            max_requests: 1000,
        }
    }
}

/// A YAML policy file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("failed to read policy file '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid policy.
    #[error("invalid policy file '{}': {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
}

/// The kinds whose objects a watch of `group`/`kind` reads to explain its
/// progress (see the guest's watch): they are readable under the default policy.
fn children_of(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("apps", "Deployment") => &["apps/ReplicaSet", "Pod"],
        ("apps", "StatefulSet" | "DaemonSet" | "ReplicaSet") | ("batch", "Job") => &["Pod"],
        ("batch", "CronJob") => &["batch/Job", "Pod"],
        ("", "Service") => &["discovery.k8s.io/EndpointSlice"],
        _ => &[],
    }
}

/// One cluster call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The verb.
    pub verb: Verb,
    /// The kind, as resolved by the host (never as claimed by the guest).
    pub resource: &'a ApiResource,
    /// The namespace; `None` for cluster-scoped kinds or all namespaces.
    pub namespace: Option<&'a str>,
    /// The object's name, when the call is about one object.
    pub name: Option<&'a str>,
    /// The field manager a write names.
    pub field_manager: Option<&'a str>,
    /// Whether the call is a dry run.
    pub dry_run: bool,
}

/// A refused call: the rule that refused it and how to allow it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("krt's policy denies {what}: {reason}; to allow it, {flag} (or {file} in the policy file)")]
pub struct Denial {
    /// The policy field that refused the call, for example `namespaces`.
    pub rule: &'static str,
    /// The call, for example `create v1/ConfigMap team-b/cfg`.
    pub what: String,
    /// Why the rule refuses it.
    pub reason: String,
    /// The command-line change that would allow it, for example
    /// ``add `--allow-kind Secret` ``.
    pub flag: String,
    /// The same change in a policy file, for example ``add `Secret` under `kinds:` ``.
    pub file: String,
}

impl Denial {
    /// The refusal as a middleware sees it: `link` names the middleware in
    /// the chain, and the hint says how to grant the call in the policy file
    /// of `--middleware-policy NAME=FILE` (a middleware's grants are separate
    /// from the runtime's, and it has none by default).
    pub fn for_middleware(&self, link: &str, name: &str) -> String {
        format!(
            "{link}: krt's policy denies {}: {}; a middleware has no cluster access unless \
             granted: to allow it, {} in a policy file for this middleware and pass \
             `--middleware-policy {name}=FILE`",
            self.what, self.reason, self.file
        )
    }
}

impl Policy {
    /// Everything allowed: every namespace, kind, verb and field manager,
    /// cluster-scoped kinds, and the default request budget.
    pub fn unrestricted() -> Policy {
        Policy {
            namespaces: vec!["*".into()],
            kinds: vec!["*".into()],
            field_managers: vec!["*".into()],
            cluster_scoped: true,
            ..Policy::default()
        }
    }

    /// krt's default policy for applying `resources`: their namespaces
    /// (`default_namespace` for those that name none) and their kinds, plus
    /// read-only access to the children a watch inspects (a Deployment's
    /// ReplicaSets and Pods, a Job's Pods, ...), nothing else. A `Namespace` resource allows the namespace it names; resources
    /// without a namespace allow cluster-scoped kinds (only of the listed kinds).
    pub fn for_resources(resources: &[Resource], default_namespace: &str) -> Policy {
        let mut namespaces = BTreeSet::new();
        let mut kinds = BTreeSet::new();
        let mut read_kinds = BTreeSet::new();
        let mut cluster_scoped = false;
        for r in resources {
            let a = &r.attributes;
            let api_version = a["apiVersion"].as_str().unwrap_or_default();
            let kind = a["kind"].as_str().unwrap_or_default();
            let group = api_version.split_once('/').map_or("", |(g, _)| g);
            kinds.insert(kind_key(group, kind));
            read_kinds.extend(children_of(group, kind).iter().map(|k| k.to_string()));
            match a["metadata"]["namespace"].as_str() {
                Some(ns) => {
                    namespaces.insert(ns.to_string());
                }
                None => {
                    cluster_scoped = true;
                    namespaces.insert(default_namespace.to_string());
                }
            }
            if group.is_empty()
                && kind == "Namespace"
                && let Some(name) = a["metadata"]["name"].as_str()
            {
                namespaces.insert(name.to_string());
            }
        }
        Policy {
            namespaces: namespaces.into_iter().collect(),
            kinds: kinds.into_iter().collect(),
            read_kinds: read_kinds.into_iter().collect(),
            cluster_scoped,
            ..Policy::default()
        }
    }

    /// Parses a YAML policy; `source` names it in errors.
    ///
    /// # Errors
    /// Invalid YAML, an unknown field or a value of the wrong type.
    pub fn from_yaml(source: &Path, text: &str) -> Result<Policy, PolicyError> {
        if text.trim().is_empty() {
            return Ok(Policy::default());
        }
        serde_saphyr::from_str(text).map_err(|e| PolicyError::Parse {
            path: source.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Reads a YAML policy file.
    ///
    /// # Errors
    /// An unreadable file, or as [`Policy::from_yaml`].
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Policy::from_yaml(path, &text)
    }

    /// Also allows writing as `field_manager` (the CLI's `--field-manager`).
    pub fn allow_field_manager(&mut self, field_manager: &str) {
        if !glob::any(&self.field_managers, field_manager) {
            self.field_managers.push(field_manager.to_string());
        }
    }

    /// Checks only the kind rule, for discovery (`resolve`) of `resource`.
    ///
    /// # Errors
    /// The kind is not allowed.
    pub fn check_kind(&self, resource: &ApiResource) -> Result<(), Denial> {
        let kind = kind_key(&resource.group, &resource.kind);
        if glob::any(&self.kinds, &kind) || glob::any(&self.read_kinds, &kind) {
            Ok(())
        } else {
            Err(kind_denial(format!("resolve {kind}"), &kind, &self.kinds))
        }
    }

    /// Checks one call.
    ///
    /// # Errors
    /// The [`Denial`] of the first rule that refuses the call.
    pub fn check(&self, req: &Request<'_>) -> Result<(), Denial> {
        let r = req.resource;
        let kind = kind_key(&r.group, &r.kind);
        let what = describe(req, &kind);
        let deny = |rule, reason: String, flag: String, file: String| {
            Err(Denial {
                rule,
                what: what.clone(),
                reason,
                flag,
                file,
            })
        };
        let readable = !req.verb.writes() && glob::any(&self.read_kinds, &kind);
        if !glob::any(&self.kinds, &kind) && !readable {
            return Err(kind_denial(what, &kind, &self.kinds));
        }
        if !self.verbs.contains(&req.verb) {
            let verb = req.verb;
            return deny(
                "verbs",
                format!("verb `{verb}` is not allowed"),
                format!("add `--allow-verb {verb}`"),
                format!("add `{verb}` under `verbs:`"),
            );
        }
        if self.read_only && req.verb.writes() && !req.dry_run {
            return deny(
                "readOnly",
                "the policy is read-only (only reads and dry runs)".into(),
                "drop `--read-only`".into(),
                "set `readOnly: false`".into(),
            );
        }
        self.check_scope(req, &deny)?;
        if matches!(req.verb, Verb::Create | Verb::Patch)
            && let Some(manager) = req.field_manager
            && !glob::any(&self.field_managers, manager)
        {
            return deny(
                "fieldManagers",
                format!(
                    "field manager `{manager}` is not among {:?}",
                    self.field_managers
                ),
                format!("add `--allow-field-manager {manager}`"),
                format!("add `{manager}` under `fieldManagers:`"),
            );
        }
        Ok(())
    }

    fn check_scope(
        &self,
        req: &Request<'_>,
        deny: &dyn Fn(&'static str, String, String, String) -> Result<(), Denial>,
    ) -> Result<(), Denial> {
        let r = req.resource;
        let namespace_rule = |ns: &str| {
            if glob::any(&self.namespaces, ns) {
                Ok(())
            } else {
                deny(
                    "namespaces",
                    format!(
                        "namespace `{ns}` is not among the allowed namespaces {:?}",
                        self.namespaces
                    ),
                    format!("add `--allow-namespace {ns}`"),
                    format!("add `{ns}` under `namespaces:`"),
                )
            }
        };
        if !r.namespaced {
            if !self.cluster_scoped {
                return deny(
                    "clusterScoped",
                    format!("`{}` is cluster-scoped", kind_key(&r.group, &r.kind)),
                    "add `--allow-cluster-scoped`".into(),
                    "set `clusterScoped: true`".into(),
                );
            }
            // A Namespace object is governed by the namespace it names.
            return match (r.group.is_empty() && r.kind == "Namespace", req.name) {
                (true, Some(name)) => namespace_rule(name),
                _ => Ok(()),
            };
        }
        match req.namespace {
            Some(ns) => namespace_rule(ns),
            None if self.namespaces.iter().any(|p| p == "*") => Ok(()),
            None => deny(
                "namespaces",
                "calls across all namespaces need every namespace allowed".into(),
                "add `--allow-namespace '*'`".into(),
                "add `\"*\"` under `namespaces:`".into(),
            ),
        }
    }
}

fn kind_denial(what: String, kind: &str, kinds: &[String]) -> Denial {
    Denial {
        rule: "kinds",
        what,
        reason: format!("kind `{kind}` is not among the allowed kinds {kinds:?}"),
        flag: format!("add `--allow-kind {kind}`"),
        file: format!("add `{kind}` under `kinds:`"),
    }
}

/// `Kind` for the core group, `group/Kind` otherwise.
fn kind_key(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

fn describe(req: &Request<'_>, kind: &str) -> String {
    let mut what = format!("{} {kind}", req.verb);
    match (req.namespace, req.name) {
        (Some(ns), Some(name)) if req.resource.namespaced => what += &format!(" {ns}/{name}"),
        (_, Some(name)) => what += &format!(" {name}"),
        (Some(ns), None) if req.resource.namespaced => what += &format!(" in namespace {ns}"),
        (None, None) if req.resource.namespaced => what += " in all namespaces",
        _ => {}
    }
    if req.dry_run {
        what += " (dry run)";
    }
    what
}

#[cfg(test)]
mod tests;
