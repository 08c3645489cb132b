//! The plan shared by preview and apply: a server dry run of every input
//! resource (against its recorded state, for client-side merges; in a
//! stand-in namespace when its own is still to be created; none when the CRD
//! of its kind is), the runtime's diff of the live and predicted objects, and
//! a delete for each recorded resource that is no longer in the input.

use crate::apply::uid_of;
use crate::gone;
use crate::graph::Stack;
use crate::ownership::{self, Owner, Ownership};
use crate::report::{DiffReport, ErrorReport, Outcome, ResourceReport};
use crate::runtime::Runtime;
use crate::state::State;
use futures::StreamExt;
use krt_guest::id::ResourceId;
use krt_guest::model::{
    Action, ApplyOptions, ObjectDiff, Observation, ReadOptions, Resource, Status, StatusCode,
};
use krt_guest::target::Manifest;
use serde_json::Value;

/// What the preview predicts for one input resource.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The predicted action; `None` when the dry run failed.
    pub action: Option<Action>,
    /// The dry run's failure or note.
    pub status: Option<Status>,
    /// Live vs predicted (a create's whole object, an update's changes).
    pub diff: ObjectDiff,
    /// The live object is being deleted (a Namespace still Terminating): the
    /// apply waits until it is gone, then creates it again.
    pub terminating: bool,
    /// What the dry run saw of the object (absent, when its Namespace or CRD
    /// is still to be created): the write starts from it instead of reading
    /// the object again. `None` when the write must read first.
    pub observation: Option<Observation>,
    /// The live object's `metadata.uid`, when the dry run saw one: what the
    /// state records for an `unchanged` object, which is not written.
    pub uid: Option<String>,
}

impl Planned {
    fn failed(status: Status) -> Self {
        Planned {
            action: None,
            status: Some(status),
            diff: ObjectDiff::default(),
            terminating: false,
            observation: None,
            uid: None,
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
    /// Whether each of `deletes` is ours to delete, by index: the apply
    /// checks again right before it deletes.
    pub ownership: Vec<Ownership>,
}

impl Plan {
    /// Whether any dry run failed.
    pub fn failed(&self) -> bool {
        self.planned.iter().any(|p| p.action.is_none())
    }

    /// Whether anything would change (a recorded resource that left the
    /// input is at least forgotten by the state).
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
        out.extend(self.deletes.iter().zip(&self.ownership).map(|(d, o)| {
            let mut r = ResourceReport::new(&d.id, Outcome::Planned);
            r.action = Some(Action::Delete);
            match o {
                Ownership::Absent => r.result = Outcome::Absent,
                Ownership::NotOurs(why, _) => {
                    r.result = Outcome::NotOurs;
                    r.error = Some(ErrorReport::from(&Ownership::not_ours_status(&d.id, why)));
                }
                Ownership::Unknown(status) => {
                    r.result = Outcome::Failed;
                    r.error = Some(ErrorReport::from(status));
                }
                Ownership::Owned(_) => {}
            }
            r
        }));
        out
    }
}

/// How the plan predicts one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prediction {
    /// A server dry run in its own namespace.
    DryRun,
    /// Its Namespace is still to be created, so the server cannot dry-run it
    /// there: one dry run in [`STAND_IN_NAMESPACE`] validates it, and the
    /// plan itself is the prediction.
    StandIn,
    /// The CRD of its kind is still to be created: the plan itself is the
    /// prediction, unvalidated.
    Plan,
}

/// Dry-runs every input resource, `concurrency` at a time, and asks the
/// runtime for each diff. Namespaces and CRDs go first: a resource whose
/// Namespace they will create is dry-run once in a stand-in namespace that
/// exists, and one whose CRD they will create is predicted as a create from
/// its plan alone, so neither costs a dry run that can only fail. Any other
/// failed dry run fails the plan. Each recorded resource that left the input
/// is a delete, checked for whether `owner` owns it ([`ownership::check`]).
pub async fn plan<R: Runtime>(
    runtime: &R,
    stack: &Stack,
    state: &State,
    options: &ApplyOptions,
    concurrency: usize,
    owner: &Owner,
) -> Plan {
    let dry = ApplyOptions {
        dry_run: true,
        ..options.clone()
    };
    let dry = &dry;
    let concurrency = concurrency.max(1);
    let (first, rest): (Vec<usize>, Vec<usize>) =
        (0..stack.resources.len()).partition(|&i| provides_for_others(&stack.resources[i]));
    let mut planned: Vec<Option<Planned>> = vec![None; stack.resources.len()];
    let recorded: std::collections::HashMap<&str, &Resource> =
        state.resources.iter().map(|r| (r.id.as_str(), r)).collect();
    let recorded = &recorded;
    let predict_all = |indices: Vec<(usize, Prediction)>| {
        futures::stream::iter(indices)
            .map(|(i, how)| async move {
                let resource = &stack.resources[i];
                let prior = recorded.get(resource.id.as_str()).copied();
                let p = predict(runtime, resource, prior, dry, how).await;
                (i, p)
            })
            .buffer_unordered(concurrency)
            .collect::<Vec<_>>()
    };
    for (i, p) in predict_all(first.iter().map(|&i| (i, Prediction::DryRun)).collect()).await {
        planned[i] = Some(p);
    }
    let created = |d: usize| {
        planned[d]
            .as_ref()
            .is_some_and(|p| p.action == Some(Action::Create))
    };
    let rest = rest
        .into_iter()
        .map(|i| {
            let resource = &stack.resources[i];
            let waits_for = |needs: &dyn Fn(&Resource) -> bool| {
                stack.deps[i]
                    .iter()
                    .any(|&d| created(d) && needs(&stack.resources[d]))
            };
            let how = if waits_for(&|d| defines_kind_of(d, resource)) {
                Prediction::Plan
            } else if waits_for(&|d| {
                creates_namespace_of(d, resource, dry.default_namespace.as_deref())
            }) {
                Prediction::StandIn
            } else {
                Prediction::DryRun
            };
            (i, how)
        })
        .collect();
    for (i, p) in predict_all(rest).await {
        planned[i] = Some(p);
    }
    let planned = planned
        .into_iter()
        .map(|p| p.expect("every resource was predicted"))
        .collect();
    let inputs: std::collections::HashSet<&str> =
        stack.resources.iter().map(|r| r.id.as_str()).collect();
    let deletes: Vec<Resource> = state
        .resources
        .iter()
        .filter(|r| !inputs.contains(r.id.as_str()))
        .cloned()
        .collect();
    let mut delete_diffs = Vec::with_capacity(deletes.len());
    for d in &deletes {
        // A removal that cannot be shown is still a delete: show nothing for it.
        let diff = runtime.diff(Some(&d.attributes), None, &[]).await;
        delete_diffs.push(diff.unwrap_or_default());
    }
    let read = ReadOptions {
        default_namespace: options.default_namespace.clone(),
    };
    let uid_of = |id: &str| state.uid(id).map(str::to_owned);
    let ownership =
        ownership::check_all(runtime, &deletes, &uid_of, owner, &read, concurrency).await;
    Plan {
        planned,
        deletes,
        delete_diffs,
        ownership,
    }
}

/// Predicts one resource as `how` says.
async fn predict<R: Runtime>(
    runtime: &R,
    resource: &Resource,
    prior: Option<&Resource>,
    dry: &ApplyOptions,
    how: Prediction,
) -> Planned {
    // What the server would store is the plan itself: the object does not
    // exist yet (and, with its Namespace or CRD still to come, cannot).
    let predicted_create = || async {
        match runtime
            .diff(None, Some(&resource.attributes), &dry.ignore_paths)
            .await
        {
            Ok(diff) => Planned {
                action: Some(Action::Create),
                status: None,
                diff,
                terminating: false,
                observation: Some(Observation::Absent),
                uid: None,
            },
            Err(status) => Planned::failed(status),
        }
    };
    match how {
        Prediction::Plan => return predicted_create().await,
        Prediction::StandIn => {
            return match stand_in_failure(runtime, resource, dry).await {
                Some(status) => Planned::failed(status),
                None => predicted_create().await,
            };
        }
        Prediction::DryRun => {}
    }
    let observed = runtime
        .apply_observed(prior, Some(resource), None, dry)
        .await;
    let r = observed.response;
    if let Some(live) = r.live.as_ref().filter(|l| gone::is_terminating(l)) {
        // What the server would store is a new object, once this one is gone.
        let mut planned = predicted_create().await;
        if planned.action.is_some() {
            planned.terminating = true;
            planned.observation = None;
            planned.status = Some(krt_guest::errors::info(
                StatusCode::Unknown,
                gone::TERMINATING,
                format!(
                    "{} is being deleted ({}); apply waits until it is gone, then creates it",
                    resource.id,
                    gone::held_by(live)
                ),
            ));
        }
        return planned;
    }
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
    // A replace deletes and reads again; only a create or an update writes
    // against what the dry run saw.
    let observation = matches!(r.action, Action::Create | Action::Update)
        .then_some(observed.observation)
        .flatten();
    Planned {
        action: Some(r.action),
        status: r.status,
        diff,
        terminating: false,
        observation,
        uid: r.live.as_ref().and_then(uid_of).map(str::to_owned),
    }
}

/// The namespace a resource whose Namespace is still to be created is dry-run in,
/// to validate it before anything is written.
const STAND_IN_NAMESPACE: &str = "default";

/// Dry-runs `resource` as if it were in [`STAND_IN_NAMESPACE`]: the failure, when
/// it is the object's own fault (invalid, illegal, too large, a kind the cluster
/// does not serve) and so would fail in its own namespace too.
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
    if let Some(own) = &namespace {
        // What names the object's own namespace moves with it: an Event's involvedObject, a
        // RoleBinding's subjects (the server checks some of them against the namespace).
        move_namespace_references(&mut moved.attributes, own);
    }
    moved.attributes["metadata"]["namespace"] = STAND_IN_NAMESPACE.into();
    // It cannot exist in its own namespace; in the stand-in, no read is needed
    // either: a dry run validates the object whether or not one is there.
    let status = runtime
        .apply_observed(None, Some(&moved), Some(&Observation::Absent), dry)
        .await
        .response
        .status?;
    let own_fault = matches!(
        status.code,
        StatusCode::Invalid
            | StatusCode::IllegalManifest
            | StatusCode::InvalidArgument
            | StatusCode::BadRequest
            | StatusCode::TooLarge
            | StatusCode::KindNotInstalled
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

/// Sets every `namespace` field below `value` that names `own` to [`STAND_IN_NAMESPACE`].
fn move_namespace_references(value: &mut Value, own: &str) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "namespace" && child.as_str() == Some(own) {
                    *child = STAND_IN_NAMESPACE.into();
                } else {
                    move_namespace_references(child, own);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| move_namespace_references(item, own)),
        _ => {}
    }
}

/// Whether `resource` is a Namespace or a CRD: what other resources may need
/// to exist before the server can dry-run them.
fn provides_for_others(resource: &Resource) -> bool {
    let a = &resource.attributes;
    (a["apiVersion"] == "v1" && a["kind"] == "Namespace")
        || (a["kind"] == "CustomResourceDefinition"
            && a["apiVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("apiextensions.k8s.io/")))
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
