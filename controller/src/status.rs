//! Writing a Stack's status: a JSON merge patch of the status subresource
//! that names every field (absent ones as `null`, so they are removed), sent
//! only when the status changed, so a reconcile that finds nothing to do
//! writes nothing.

use crate::crd::{Stack, StackStatus};
use crate::inventory::status_params;
use kube::Api;
use kube::api::Patch;
use serde_json::{Value, json};

/// The status of one Stack as last read or written by this reconcile.
pub struct StatusWriter {
    api: Api<Stack>,
    name: String,
    /// The status as it is now on the server, as far as this reconcile knows.
    pub current: StackStatus,
}

impl StatusWriter {
    /// A writer for `stack`, starting from its status.
    pub fn new(client: kube::Client, stack: &Stack) -> Self {
        StatusWriter {
            api: Api::namespaced(client, stack.namespace_or_default()),
            name: stack.name().to_owned(),
            current: stack.status.clone().unwrap_or_default(),
        }
    }

    /// Writes `status` unless it is what the server has.
    ///
    /// # Errors
    /// The patch failed.
    pub async fn write(&mut self, status: StackStatus) -> Result<(), kube::Error> {
        if status == self.current {
            return Ok(());
        }
        self.api
            .patch_status(&self.name, &status_params(), &Patch::Merge(patch(&status)))
            .await?;
        self.current = status;
        Ok(())
    }
}

/// The merge patch that makes the server's status exactly `status`.
pub fn patch(status: &StackStatus) -> Value {
    json!({"status": {
        "observedGeneration": status.observed_generation,
        "conditions": status.conditions,
        "inventory": status.inventory,
        "inventoryCount": status.inventory_count,
        "lastAppliedRevision": status.last_applied_revision,
        "components": status.components,
        "lastAttemptedRevision": status.last_attempted_revision,
        "resources": status.resources,
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_are_removed() {
        let p = patch(&StackStatus::default());
        assert_eq!(p["status"]["lastAppliedRevision"], Value::Null);
        assert_eq!(p["status"]["conditions"], json!([]));
        assert!(
            p["status"]
                .as_object()
                .unwrap()
                .contains_key("observedGeneration")
        );
    }
}
