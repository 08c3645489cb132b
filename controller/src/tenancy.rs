//! Who a Stack acts as, and which of its references a controller accepts.
//!
//! A Stack runs with the rights of a ServiceAccount of its own namespace
//! (`spec.serviceAccountName`, else the controller's
//! `--default-service-account`): its requests impersonate that account, so
//! the API server's RBAC and escalation checks are the second line of
//! defence behind krt's capability policy. A Stack naming no account on a
//! controller without a default runs as the controller itself: the
//! single-tenant case.

use crate::crd::Stack;
use krt_host::Impersonation;

/// The prefix of a ServiceAccount's user name.
const SERVICE_ACCOUNT_USER: &str = "system:serviceaccount:";

/// How a controller separates tenants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tenancy {
    /// The account of the Stack's namespace that Stacks naming none run as
    /// (`--default-service-account`); `None` runs them as the controller.
    pub default_service_account: Option<String>,
    /// Refuse ConfigMap sources of another namespace than the Stack's
    /// (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
}

impl Tenancy {
    /// Who `stack`'s requests impersonate: its ServiceAccount, or the default
    /// one; `None` when it runs as the controller.
    ///
    /// # Errors
    /// The message that Stalls the Stack: an account of another namespace, or
    /// a name that is not a ServiceAccount's.
    pub fn identity(&self, stack: &Stack) -> Result<Option<Impersonation>, String> {
        let namespace = stack.namespace_or_default();
        let (name, field) = match (
            &stack.spec.service_account_name,
            &self.default_service_account,
        ) {
            (Some(name), _) => (name.as_str(), "spec.serviceAccountName"),
            (None, Some(name)) => (name.as_str(), "the controller's --default-service-account"),
            (None, None) => return Ok(None),
        };
        let account = match name.strip_prefix(SERVICE_ACCOUNT_USER) {
            Some(user) => match user.split_once(':') {
                Some((ns, account)) if ns == namespace => account,
                Some((ns, _)) => {
                    return Err(format!(
                        "{field} '{name}' is a ServiceAccount of namespace '{ns}': a Stack runs \
                         only as an account of its own namespace '{namespace}'"
                    ));
                }
                None => name,
            },
            None => name,
        };
        if let Some(problem) = invalid_name(account) {
            return Err(format!(
                "{field} '{name}' is not the name of a ServiceAccount of namespace \
                 '{namespace}': {problem}"
            ));
        }
        Ok(Some(Impersonation::service_account(namespace, account)))
    }

    /// Refuses a reference to `namespace` from a Stack of `own` when
    /// cross-namespace references are off.
    ///
    /// # Errors
    /// The message that Stalls the Stack.
    pub fn check_reference(&self, at: &str, own: &str, namespace: &str) -> Result<(), String> {
        if self.no_cross_namespace_refs && namespace != own {
            return Err(format!(
                "{at} names a ConfigMap of namespace '{namespace}', and this controller refuses \
                 references outside the Stack's namespace '{own}' (--no-cross-namespace-refs): \
                 copy the ConfigMap into '{own}'"
            ));
        }
        Ok(())
    }
}

/// Why `name` is not a valid object name (a DNS-1123 subdomain), if it is not.
fn invalid_name(name: &str) -> Option<&'static str> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 253 {
        Some("it is longer than 253 characters")
    } else if !name.chars().all(|c| alnum(c) || c == '-' || c == '.') {
        Some("it may hold only lowercase letters, digits, '-' and '.'")
    } else if !name.starts_with(alnum) || !name.ends_with(alnum) {
        Some("it must start and end with a lowercase letter or a digit")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::StackSpec;

    fn stack(account: Option<&str>) -> Stack {
        let mut spec: StackSpec = serde_json::from_value(serde_json::json!({})).unwrap();
        spec.service_account_name = account.map(str::to_owned);
        let mut stack = Stack::new("web", spec);
        stack.metadata.namespace = Some("team-a".into());
        stack
    }

    fn user(tenancy: &Tenancy, account: Option<&str>) -> Result<Option<String>, String> {
        tenancy
            .identity(&stack(account))
            .map(|who| who.map(|w| w.user))
    }

    #[test]
    fn a_stack_runs_as_its_account_else_the_default_else_the_controller() {
        let none = Tenancy::default();
        let locked = Tenancy {
            default_service_account: Some("default".into()),
            ..Tenancy::default()
        };
        assert_eq!(user(&none, None), Ok(None));
        assert_eq!(
            user(&none, Some("deployer")),
            Ok(Some("system:serviceaccount:team-a:deployer".into()))
        );
        assert_eq!(
            user(&locked, None),
            Ok(Some("system:serviceaccount:team-a:default".into()))
        );
        assert_eq!(
            user(&locked, Some("system:serviceaccount:team-a:deployer")),
            Ok(Some("system:serviceaccount:team-a:deployer".into()))
        );
    }

    #[test]
    fn an_account_of_another_namespace_or_an_invalid_name_is_refused() {
        let none = Tenancy::default();
        let other = user(
            &none,
            Some("system:serviceaccount:krt-system:krt-controller"),
        );
        assert_eq!(
            other,
            Err(
                "spec.serviceAccountName 'system:serviceaccount:krt-system:krt-controller' is a \
                 ServiceAccount of namespace 'krt-system': a Stack runs only as an account of \
                 its own namespace 'team-a'"
                    .into()
            )
        );
        let bad = user(&none, Some("Admin")).unwrap_err();
        assert!(bad.contains("lowercase letters"), "{bad}");
        let bad = user(&none, Some("krt-system/krt-controller")).unwrap_err();
        assert!(bad.contains("not the name of a ServiceAccount"), "{bad}");
    }

    #[test]
    fn cross_namespace_references_are_refused_only_when_switched_off() {
        let open = Tenancy::default();
        let closed = Tenancy {
            no_cross_namespace_refs: true,
            ..Tenancy::default()
        };
        assert_eq!(open.check_reference("spec.configMaps[0]", "a", "b"), Ok(()));
        assert_eq!(
            closed.check_reference("spec.configMaps[0]", "a", "a"),
            Ok(())
        );
        let refused = closed
            .check_reference("spec.configMaps[0]", "a", "b")
            .unwrap_err();
        assert!(refused.contains("--no-cross-namespace-refs"), "{refused}");
    }
}
