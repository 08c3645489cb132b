//! The plan shared by preview and apply: a server dry run of every input
//! resource (against its recorded state, for client-side merges), the
//! runtime's diff of the live and predicted objects, and a delete for each
//! recorded resource that is no longer in the input.

use crate::graph::Stack;
use crate::report::{DiffReport, ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::State;
use futures::StreamExt;
use krt_guest::id::ResourceId;
use krt_guest::model::{Action, ApplyOptions, ObjectDiff, Resource, Status, StatusCode};
use krt_guest::target::Manifest;

/// What the preview predicts for one input resource.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The predicted action; `None` when the dry run failed.
    pub action: Option<Action>,
    /// The dry run's failure or note.
    pub status: Option<Status>,
    /// Live vs predicted (a create's whole object, an update's changes).
    pub diff: ObjectDiff,
}

impl Planned {
    fn failed(status: Status) -> Self {
        Planned {
            action: None,
            status: Some(status),
            diff: ObjectDiff::default(),
        }
    }
}

/// The whole plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One entry per input resource, by index.
    pub planned: Vec<Planned>,
    /// Recorded resources absent from the input, to delete.
    pub deletes: Vec<Resource>,
    /// The removal diff of each of `deletes`, by index.
    pub delete_diffs: Vec<ObjectDiff>,
}

impl Plan {
    /// Whether any dry run failed.
    pub fn failed(&self) -> bool {
        self.planned.iter().any(|p| p.action.is_none())
    }

    /// Whether anything would change.
    pub fn changes(&self) -> bool {
        !self.deletes.is_empty()
            || self
                .planned
                .iter()
                .any(|p| p.action != Some(Action::Unchanged))
    }

    /// How many input resources would get `action`.
    pub fn count(&self, action: Action) -> usize {
        self.planned
            .iter()
            .filter(|p| p.action == Some(action))
            .count()
    }

    /// The report lines of the plan (result `planned`, or `failed`), in
    /// dependency order, then the deletes.
    pub fn reports(&self, stack: &Stack) -> Vec<ResourceReport> {
        let mut out: Vec<ResourceReport> = stack
            .order
            .iter()
            .map(|&i| {
                let p = &self.planned[i];
                let failed = p.status.as_ref().filter(|s| s.is_error());
                let result = if failed.is_some() {
                    Outcome::Failed
                } else {
                    Outcome::Planned
                };
                let mut r = ResourceReport::new(&stack.resources[i].id, result);
                r.action = p.action;
                r.error = failed.map(ErrorReport::from);
                r.diff = (!p.diff.changes.is_empty()).then(|| DiffReport::from(&p.diff));
                r
            })
            .collect();
        out.extend(self.deletes.iter().map(|d| {
            let mut r = ResourceReport::new(&d.id, Outcome::Planned);
            r.action = Some(Action::Delete);
            r
        }));
        out
    }
}

/// Dry-runs every input resource, `concurrency` at a time, and asks the
/// runtime for each diff. A resource that cannot be dry-run because a
/// dependency is itself still to be created (its Namespace, the CRD of its
/// kind) is predicted as a create; any other failed dry run fails the plan.
pub async fn plan<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    state: &State,
    options: &ApplyOptions,
    concurrency: usize,
) -> Plan {
    let dry = ApplyOptions {
        dry_run: true,
        ..options.clone()
    };
    let dry = &dry;
    let mut planned: Vec<Planned> = futures::stream::iter(stack.resources.iter())
        .map(|resource| async move {
            let r = runtime
                .apply(state.get(&resource.id), Some(resource), dry)
                .await;
            if let Some(status) = r.status.clone().filter(Status::is_error) {
                return Planned::failed(status);
            }
            // Creates show the whole predicted object as added, like updates
            // show what changes (normalized, Secret values masked).
            let diff = match r.action {
                Action::Update | Action::Replace | Action::Create => {
                    let predicted = r.resource.as_ref().map(|p| &p.attributes);
                    match runtime
                        .diff(r.live.as_ref(), predicted, &dry.ignore_paths)
                        .await
                    {
                        Ok(diff) => diff,
                        Err(status) => return Planned::failed(status),
                    }
                }
                _ => ObjectDiff::default(),
            };
            Planned {
                action: Some(r.action),
                status: r.status,
                diff,
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    for &i in &stack.order {
        let resource = &stack.resources[i];
        let created = |d: usize| planned[d].action == Some(Action::Create);
        let waits_for_namespace = || {
            stack.deps[i].iter().any(|&d| {
                created(d)
                    && creates_namespace_of(
                        &stack.resources[d],
                        resource,
                        dry.default_namespace.as_deref(),
                    )
            })
        };
        let waits_for_crd = || {
            stack.deps[i]
                .iter()
                .any(|&d| created(d) && defines_kind_of(&stack.resources[d], resource))
        };
        let failure = planned[i].status.as_ref().filter(|s| s.is_error());
        let waits = match failure.map(|s| s.code) {
            Some(StatusCode::NotFound) if waits_for_namespace() => {
                // The server cannot dry-run it yet: validate it in a namespace that exists.
                match stand_in_failure(runtime, resource, dry).await {
                    Some(status) => {
                        planned[i].status = Some(status);
                        false
                    }
                    None => true,
                }
            }
            Some(StatusCode::KindNotInstalled) => waits_for_crd(),
            _ => false,
        };
        if waits {
            // Not dry-runnable before its dependency exists: the plan itself is the prediction.
            planned[i] = match runtime
                .diff(None, Some(&resource.attributes), &dry.ignore_paths)
                .await
            {
                Ok(diff) => Planned {
                    action: Some(Action::Create),
                    status: None,
                    diff,
                },
                Err(status) => Planned::failed(status),
            };
        }
    }
    let deletes: Vec<Resource> = state
        .resources
        .iter()
        .filter(|r| !stack.resources.iter().any(|i| i.id == r.id))
        .cloned()
        .collect();
    let mut delete_diffs = Vec::with_capacity(deletes.len());
    for d in &deletes {
        // A removal that cannot be shown is still a delete: show nothing for it.
        let diff = runtime.diff(Some(&d.attributes), None, &[]).await;
        delete_diffs.push(diff.unwrap_or_default());
    }
    Plan {
        planned,
        deletes,
        delete_diffs,
    }
}

/// The namespace a resource whose Namespace is still to be created is dry-run in,
/// to validate it before anything is written.
const STAND_IN_NAMESPACE: &str = "default";

/// Dry-runs `resource` as if it were in [`STAND_IN_NAMESPACE`]: the failure, when
/// it is the object's own fault (invalid, illegal, too large) and so would fail
/// in its own namespace too.
async fn stand_in_failure<R: Runtime>(
    runtime: &R,
    resource: &Resource,
    dry: &ApplyOptions,
) -> Option<Status> {
    let mut id = ResourceId::parse(&resource.id).ok()?;
    let namespace = id.namespace.replace(STAND_IN_NAMESPACE.to_owned());
    let namespace = namespace.or_else(|| {
        let ns = &resource.attributes["metadata"]["namespace"];
        ns.as_str().map(str::to_owned)
    });
    let namespace = namespace.or_else(|| dry.default_namespace.clone());
    let mut moved = resource.clone();
    moved.id = id.to_string();
    moved.attributes["metadata"]["namespace"] = STAND_IN_NAMESPACE.into();
    let status = runtime.apply(None, Some(&moved), dry).await.status?;
    let own_fault = matches!(
        status.code,
        StatusCode::Invalid
            | StatusCode::IllegalManifest
            | StatusCode::InvalidArgument
            | StatusCode::BadRequest
            | StatusCode::TooLarge
    );
    own_fault.then(|| Status {
        message: format!(
            "{} (dry run in namespace '{STAND_IN_NAMESPACE}', as '{}' is still to be created)",
            status.message,
            namespace.unwrap_or_default()
        ),
        ..status
    })
}

/// Whether `dependency` is the Namespace `resource` is in (named by its ID, its
/// manifest, or else `default_namespace`).
fn creates_namespace_of(
    dependency: &Resource,
    resource: &Resource,
    default_namespace: Option<&str>,
) -> bool {
    let Ok(manifest) = Manifest::from_resource(resource) else {
        return false;
    };
    let a = &dependency.attributes;
    let namespace = manifest.namespace.as_deref().or(default_namespace);
    a["apiVersion"] == "v1"
        && a["kind"] == "Namespace"
        && namespace.is_some_and(|ns| a["metadata"]["name"] == ns)
}

/// Whether `dependency` is the CustomResourceDefinition of `resource`'s kind.
fn defines_kind_of(dependency: &Resource, resource: &Resource) -> bool {
    let (a, r) = (&dependency.attributes, &resource.attributes);
    let group = r["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map(|(group, _)| group);
    a["kind"] == "CustomResourceDefinition"
        && a["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
        && group.is_some_and(|g| a["spec"]["group"] == g)
        && a["spec"]["names"]["kind"] == r["kind"]
}
