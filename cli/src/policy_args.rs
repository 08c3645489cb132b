//! The capability policy's command-line flags, flattened into every command.

use krt_guest::model::Resource;
use krt_host::policy::{Policy, PolicyError, Verb};
use std::path::PathBuf;

/// Capability-policy flags. Without `--policy`, the policy is krt's default
/// for the resources being applied ([`Policy::for_resources`]); the other
/// flags widen (or, `--read-only` and `--max-requests`, narrow) that base.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PolicyArgs {
    /// Capability policy file (YAML); replaces the default policy derived from the manifests.
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Also allow this namespace (glob; `'*'` for all). Repeatable.
    #[arg(long = "allow-namespace", global = true, value_name = "GLOB")]
    pub allow_namespaces: Vec<String>,
    /// Also allow this kind: `Kind` for the core group, `group/Kind` otherwise (glob). Repeatable.
    #[arg(long = "allow-kind", global = true, value_name = "[GROUP/]KIND")]
    pub allow_kinds: Vec<String>,
    /// Also allow this verb (when the policy file restricts verbs). Repeatable.
    #[arg(long = "allow-verb", global = true, value_name = "VERB")]
    pub allow_verbs: Vec<Verb>,
    /// Also allow writing as this field manager (glob). Repeatable.
    #[arg(long = "allow-field-manager", global = true, value_name = "NAME")]
    pub allow_field_managers: Vec<String>,
    /// Allow cluster-scoped kinds (still only the allowed kinds).
    #[arg(long, global = true)]
    pub allow_cluster_scoped: bool,
    /// Only reads and dry runs reach the cluster.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Most cluster calls per operation.
    #[arg(long, global = true, value_name = "N")]
    pub max_requests: Option<u32>,
}

impl PolicyArgs {
    /// The effective policy: the `--policy` file, or the default for
    /// `resources` (objects without a namespace go to `default_namespace`),
    /// with the flags applied.
    ///
    /// # Errors
    /// The policy file cannot be read or parsed.
    pub fn resolve(
        &self,
        resources: &[Resource],
        default_namespace: &str,
    ) -> Result<Policy, PolicyError> {
        let mut policy = match &self.policy {
            Some(path) => Policy::load(path)?,
            None => Policy::for_resources(resources, default_namespace),
        };
        policy
            .namespaces
            .extend(self.allow_namespaces.iter().cloned());
        policy.kinds.extend(self.allow_kinds.iter().cloned());
        policy.verbs.extend(self.allow_verbs.iter().copied());
        for manager in &self.allow_field_managers {
            policy.allow_field_manager(manager);
        }
        policy.cluster_scoped |= self.allow_cluster_scoped;
        policy.read_only |= self.read_only;
        if let Some(n) = self.max_requests {
            policy.max_requests = n;
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        policy: PolicyArgs,
    }

    #[test]
    fn flags_widen_or_narrow_the_default_policy() {
        let cli = Cli::parse_from([
            "krt",
            "--allow-namespace",
            "team-b",
            "--allow-kind",
            "apps/*",
            "--allow-verb",
            "delete",
            "--read-only",
            "--max-requests",
            "7",
        ]);
        let cm = krt_testkit::configmap("a").namespace("qs").resource();
        let p = cli.policy.resolve(&[cm], "default").unwrap();
        assert_eq!(p.namespaces, ["qs", "team-b"]);
        assert_eq!(p.kinds, ["ConfigMap", "apps/*"]);
        assert!(p.verbs.contains(&Verb::Delete));
        assert!(p.read_only);
        assert_eq!(p.max_requests, 7);
        let bad = Cli::try_parse_from(["krt", "--allow-verb", "remove"]);
        let text = bad.err().expect("an unknown verb is refused").to_string();
        assert!(text.contains("unknown verb 'remove'"), "{text}");
    }
}
