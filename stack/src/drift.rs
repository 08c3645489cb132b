//! Drift: for each recorded resource, what re-applying the recorded plan
//! would change, as the server's dry run says.

use crate::graph::Targets;
use crate::report::{DiffReport, ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use futures::StreamExt;
use krt_guest::model::{Action, ApplyMode, ApplyOptions, ObjectDiff, Resource, Status, StatusCode};

/// The drift of one recorded resource: `in-sync`, `drifted` (with the diff
/// from live to recorded), `missing`, or `failed` (with the status). `mode`
/// and `default_namespace` are those of the apply that recorded it.
pub async fn drift_of<R: Runtime>(
    runtime: &R,
    recorded: &Resource,
    mode: ApplyMode,
    default_namespace: Option<&str>,
) -> (Outcome, Option<ObjectDiff>, Option<Status>) {
    let options = ApplyOptions {
        dry_run: true,
        force: true,
        mode,
        default_namespace: default_namespace.map(str::to_owned),
        ..ApplyOptions::default()
    };
    let r = runtime
        .apply(Some(recorded), Some(recorded), &options)
        .await;
    if let Some(status) = r.status.filter(Status::is_error) {
        return (Outcome::Failed, None, Some(status));
    }
    match r.action {
        Action::Unchanged => (Outcome::InSync, None, None),
        Action::Create => (Outcome::Missing, None, None),
        _ => {
            let predicted = r.resource.as_ref().map(|p| &p.attributes);
            match runtime.diff(r.live.as_ref(), predicted, &[]).await {
                Ok(diff) => (Outcome::Drifted, Some(diff), None),
                Err(status) => (Outcome::Failed, None, Some(status)),
            }
        }
    }
}

/// The drift of every target of stack `stack`, `concurrency` at a time, in
/// order; a target that is not recorded fails with `NotInState`.
pub async fn drift<R: Runtime>(
    runtime: &R,
    stack: &str,
    targets: &Targets,
    mode: ApplyMode,
    default_namespace: Option<&str>,
    concurrency: usize,
) -> Vec<ResourceReport> {
    futures::stream::iter(targets)
        .map(|(resource, recorded)| async move {
            let Some(recorded) = recorded else {
                let mut r = ResourceReport::new(&resource.id, Outcome::Failed);
                r.error = Some(ErrorReport {
                    code: StatusCode::NotFound,
                    reason: "NotInState".into(),
                    message: format!("{} is not recorded in stack '{stack}'", resource.id),
                });
                return r;
            };
            let (outcome, diff, status) =
                drift_of(runtime, recorded, mode, default_namespace).await;
            let mut r = ResourceReport::new(&resource.id, outcome);
            r.diff = diff.as_ref().map(DiffReport::from);
            r.error = status.as_ref().map(ErrorReport::from);
            r
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}
