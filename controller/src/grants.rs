//! What each Stack may touch: its own namespace, and whatever the
//! controller's configuration grants the Stacks of its namespace. The grants
//! come from a YAML file (`krt controller run --config FILE`) and flags:
//!
//! ```yaml
//! grants:
//! - stacks: [platform]        # namespaces of the Stacks granted (globs)
//!   namespaces: ["*"]         # further namespaces their resources may be in (globs)
//!   clusterScoped: true       # cluster-scoped kinds (Namespace, ClusterRole, CRDs, ...)
//! - stacks: ["team-*"]
//!   namespaces: ["shared-config"]
//! verification:               # registry components that must be signed (cosign)
//! - stacks: ["team-*"]        # namespaces of the Stacks the rule is for (globs)
//!   references: ["oci://registry.example.com/*"]  # all `oci` components when empty
//!   keys: [/etc/krt/keys/cosign.pub]              # one of them must verify a signature
//! ```
//!
//! Each Stack becomes one [`Policy`] that krt's sandbox enforces at every
//! cluster call of the Stack's component chain.

use crate::crd::FIELD_MANAGER;
use krt_host::oci::{OciError, VerificationPolicy, VerifyKey};
use krt_host::policy::{Policy, glob};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Extra reach for the Stacks of some namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    /// Namespaces of the Stacks this grant is for (globs).
    pub stacks: Vec<String>,
    /// Further namespaces their resources may be in (globs).
    pub namespaces: Vec<String>,
    /// Whether they may touch cluster-scoped kinds.
    pub cluster_scoped: bool,
}

/// Which registry components the Stacks of some namespaces may run: those
/// `references` match must carry a signature one of `keys` verifies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationRule {
    /// Namespaces of the Stacks this rule is for (globs).
    pub stacks: Vec<String>,
    /// The references it covers (globs over `oci://REGISTRY/REPOSITORY`);
    /// every `oci` component when empty.
    pub references: Vec<String>,
    /// Public key files (PEM, as `cosign.pub`).
    pub keys: Vec<PathBuf>,
}

/// The controller's grants: nothing beyond a Stack's own namespace unless
/// one of them says so; and the signatures registry components need.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grants {
    /// The grants, in any order (they add up).
    pub grants: Vec<Grant>,
    /// The verification rules, in any order (they add up).
    pub verification: Vec<VerificationRule>,
}

/// A grants file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum GrantsError {
    /// The file could not be read.
    #[error("failed to read the controller configuration '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid configuration.
    #[error("invalid controller configuration '{}': {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
}

impl Grants {
    /// Reads a YAML configuration file.
    ///
    /// # Errors
    /// An unreadable file, invalid YAML, or an unknown field.
    pub fn load(path: &Path) -> Result<Grants, GrantsError> {
        let text = std::fs::read_to_string(path).map_err(|source| GrantsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if text.trim().is_empty() {
            return Ok(Grants::default());
        }
        serde_saphyr::from_str(&text).map_err(|e| GrantsError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// The signatures the `oci` components of a Stack in `namespace` need:
    /// the rules for that namespace, their key files read now.
    ///
    /// # Errors
    /// A key file that cannot be read or is not a public key.
    pub fn verification_for(&self, namespace: &str) -> Result<VerificationPolicy, OciError> {
        let mut policy = VerificationPolicy::none();
        for rule in self
            .verification
            .iter()
            .filter(|r| glob::any(&r.stacks, namespace))
        {
            let keys = rule
                .keys
                .iter()
                .map(|path| VerifyKey::from_file(path))
                .collect::<Result<Vec<_>, _>>()?;
            policy = policy.with_rule(rule.references.clone(), keys);
        }
        Ok(policy)
    }

    /// The capability policy of a Stack in `namespace`: any kind, in that
    /// namespace and the granted ones, cluster-scoped kinds only when
    /// granted, written as [`FIELD_MANAGER`].
    pub fn policy_for(&self, namespace: &str) -> Policy {
        let mut namespaces = vec![namespace.to_owned()];
        let mut cluster_scoped = false;
        for grant in self
            .grants
            .iter()
            .filter(|g| glob::any(&g.stacks, namespace))
        {
            namespaces.extend(grant.namespaces.iter().cloned());
            cluster_scoped |= grant.cluster_scoped;
        }
        namespaces.dedup();
        Policy {
            namespaces,
            kinds: vec!["*".into()],
            field_managers: vec![FIELD_MANAGER.into()],
            cluster_scoped,
            ..Policy::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_reaches_its_namespace_and_what_is_granted_to_it() {
        let grants: Grants = serde_saphyr::from_str(
            "grants:\n- stacks: [platform]\n  namespaces: ['*']\n  clusterScoped: true\n\
             - stacks: ['team-*']\n  namespaces: [shared]\n",
        )
        .unwrap();
        let team = grants.policy_for("team-a");
        assert_eq!(team.namespaces, ["team-a", "shared"]);
        assert!(!team.cluster_scoped);
        assert_eq!(team.field_managers, [FIELD_MANAGER]);
        let platform = grants.policy_for("platform");
        assert_eq!(platform.namespaces, ["platform", "*"]);
        assert!(platform.cluster_scoped);
        let other = grants.policy_for("other");
        assert_eq!(other.namespaces, ["other"]);
        assert!(!other.cluster_scoped);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let dir = krt_testkit::temp_dir("grants");
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "grants:\n- stacks: [a]\n  namespace: [b]\n").unwrap();
        let err = Grants::load(&path).unwrap_err().to_string();
        assert!(err.contains("invalid controller configuration"), "{err}");
        assert!(err.contains("namespace"), "{err}");
    }
}
