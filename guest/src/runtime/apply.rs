//! `runtime.apply`: make the cluster match the plan, by server-side apply or a
//! client-side three-way merge, with no-op detection, optimistic-concurrency
//! retries, immutable-field replacement and server (or offline) dry runs.

use super::delete::{delete_target, wait_gone};
use super::{
    DEFAULT_FIELD_MANAGER, MAX_CONFLICT_RETRIES, immutable, last_applied, resolve_patiently,
    result_resource,
};
use crate::cluster::{Cluster, HostServices};
use crate::errors::{self, Operation};
use crate::merge;
use crate::model::{
    Action, ApiError, ApplyMode, ApplyOptions, ApplyResponse, CreateOptions, LogLevel, Observation,
    ObservedResponse, PatchOptions, PatchType, Progress, PropagationPolicy, Resource, Status,
    StatusCode,
};
use crate::normalize::{self, LAST_APPLIED_ANNOTATION};
use crate::target::{self, Manifest, Target};
use serde_json::Value;
use std::rc::Rc;

/// How long (in slept milliseconds) a replace waits for the old object to disappear.
const REPLACE_WAIT_MS: u32 = 60_000;

/// The reason of the note on a client-side update that changes nothing but the
/// recorded configuration (the last-applied annotation).
pub const LAST_APPLIED_ONLY: &str = "LastAppliedOnly";

/// Makes the cluster match `plan`; a `None` plan deletes `prior`.
///
/// `prior` is the last applied state: the "original" of the client-side
/// three-way merge. The response carries the server's object, normalized.
pub fn apply<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    prior: Option<&Resource>,
    plan: Option<&Resource>,
    options: &ApplyOptions,
) -> ApplyResponse {
    apply_observed(cluster, host, prior, plan, None, options).response
}

/// [`apply`], starting from `observation` (what an earlier apply of this plan
/// saw) instead of reading the object first, when it is given and is of this
/// object; it returns what it saw, for a later call. Given
/// [`Observation::Seen`], a write is made without the dry run before it, with
/// the seen `resourceVersion` as its precondition (WIT `observed-apply`).
pub fn apply_observed<C: Cluster, H: HostServices>(
    cluster: &C,
    host: &H,
    prior: Option<&Resource>,
    plan: Option<&Resource>,
    observation: Option<&Observation>,
    options: &ApplyOptions,
) -> ObservedResponse {
    let mut response = ApplyResponse {
        resource: None,
        live: None,
        action: Action::Unchanged,
        status: None,
        retries: 0,
    };
    let mut seen = None;
    let result = match (plan, prior) {
        (Some(plan), _) => Manifest::from_resource(plan)
            .and_then(|m| {
                let namespace = options.default_namespace.as_deref();
                if options.dry_run {
                    // A preview does not wait for a CRD to arrive.
                    m.resolve(cluster, namespace)
                } else {
                    resolve_patiently(cluster, host, &plan.id, &m, namespace)
                }
            })
            .and_then(|target| {
                let mut applier = Applier {
                    cluster,
                    host,
                    options,
                    plan,
                    prior,
                    target,
                    live: None,
                    observed: false,
                    read: false,
                    retries: 0,
                    refreshes: 0,
                    note: None,
                };
                let outcome = applier.run(observation);
                response.live = applier.live.as_deref().map(normalize::normalize_result);
                response.retries = applier.retries;
                seen = applier.observation();
                outcome
            })
            .map(|(object, action, warning)| {
                let object = Rc::try_unwrap(object).map_or_else(
                    |shared| normalize::normalize_result(&shared),
                    normalize::into_result,
                );
                response.resource = Some(result_resource(plan, object));
                response.action = action;
                response.status = warning;
            }),
        (None, Some(prior)) => delete_prior(cluster, prior, options, &mut response),
        (None, None) => Err(errors::invalid_argument(
            "apply needs a plan, or a prior resource to delete; both are empty",
        )),
    };
    if let Err(status) = result {
        response.status = Some(status);
    }
    if let Some(status) = &response.status {
        let id = plan.or(prior).map(|r| r.id.as_str()).unwrap_or("");
        host.log(LogLevel::Debug, &status.message, &[("id", id)]);
    }
    ObservedResponse {
        response,
        observation: seen,
    }
}

/// `apply` with no plan: delete the prior's object (action `delete`).
fn delete_prior<C: Cluster>(
    cluster: &C,
    prior: &Resource,
    options: &ApplyOptions,
    response: &mut ApplyResponse,
) -> Result<(), Status> {
    response.action = Action::Delete;
    let target = match Target::of(prior, cluster, options.default_namespace.as_deref()) {
        Ok(target) => target,
        Err(status) if status.code == StatusCode::KindNotInstalled => {
            response.status = Some(Status::warning(status.code, status.reason, status.message));
            return Ok(());
        }
        Err(status) => return Err(status),
    };
    let live = cluster
        .get(&target.api, target.namespace.as_deref(), &target.name)
        .map_err(|e| errors::map_api_error(&e, &target.subject, Operation::Get))?;
    response.live = live.as_ref().map(normalize::normalize_result);
    if live.is_none() {
        return Ok(());
    }
    response.status = delete_target(cluster, &target, options.dry_run, None, None)?;
    Ok(())
}

/// Whether a server-side apply that was to create the object found it there
/// already: its managedFields hold more entries than this apply's own.
fn existed_before(result: &Value) -> bool {
    result["metadata"]["managedFields"]
        .as_array()
        .is_some_and(|entries| entries.len() > 1)
}

/// An object's `metadata.resourceVersion`.
fn resource_version(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("resourceVersion")
}

/// `body` with `live`'s resourceVersion as a precondition (M11).
fn with_resource_version(mut body: Value, live: &Value) -> Value {
    if let (Some(rv), Some(root)) = (resource_version(live).cloned(), body.as_object_mut())
        && let Some(meta) = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()))
            .as_object_mut()
    {
        meta.insert("resourceVersion".into(), rv);
    }
    body
}

/// The state of one apply of a plan.
struct Applier<'a, C, H> {
    cluster: &'a C,
    host: &'a H,
    options: &'a ApplyOptions,
    plan: &'a Resource,
    prior: Option<&'a Resource>,
    target: Target,
    /// The live object as last read, or as observed by an earlier call (raw).
    live: Option<Rc<Value>>,
    /// Whether `live` is an earlier call's observation that this call has
    /// not read again: a write is then made without a dry run before it.
    observed: bool,
    /// Whether `live` is known at all (read, or observed).
    read: bool,
    /// Optimistic-concurrency retries so far.
    retries: u32,
    /// Reads made again because a dry run answered from a newer object than `live`.
    refreshes: u32,
    /// A note on the outcome (an update of the recorded configuration only).
    note: Option<Status>,
}

/// What a write attempt asks the retry loop to do.
enum Step {
    /// Finished with this object and action.
    Done(Rc<Value>, Action),
    /// Re-read and try again (an optimistic-concurrency conflict or a create race).
    Retry(ApiError),
    /// Read again and compare again: the dry run answered from a newer object than the one
    /// read (a controller wrote it in between, such as a Deployment's revision annotation), so
    /// comparing the two would report the controller's change as ours.
    Refresh,
}

/// Most reads made again for [`Step::Refresh`] in one apply; past them the comparison is made
/// as it stands (an object some controller writes all the time).
const MAX_REFRESHES: u32 = 3;

impl<C: Cluster, H: HostServices> Applier<'_, C, H> {
    fn field_manager(&self) -> String {
        self.options
            .field_manager
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| DEFAULT_FIELD_MANAGER.to_owned())
    }

    fn namespace(&self) -> Option<&str> {
        self.target.namespace.as_deref()
    }

    fn progress(&self, phase: &str, message: String) {
        self.host.progress(&Progress {
            id: self.plan.id.clone(),
            phase: phase.to_owned(),
            message,
            health: None,
        });
    }

    fn map(&self, err: &ApiError, op: Operation) -> Status {
        errors::map_api_error(err, &self.target.subject, op)
    }

    fn get(&mut self) -> Result<(), Status> {
        self.live = self
            .cluster
            .get_live(&self.target.api, self.namespace(), &self.target.name)
            .map_err(|e| self.map(&e, Operation::Get))?
            .map(Rc::new);
        self.observed = false;
        self.read = true;
        Ok(())
    }

    /// Starts from `observation` when it is of this object: no read.
    fn observe(&mut self, observation: &Observation) -> bool {
        let live = match observation {
            Observation::Absent => None,
            Observation::Seen(text) => match serde_json::from_str::<Value>(text) {
                Ok(live) if self.is_this_object(&live) => Some(live),
                _ => return false,
            },
        };
        self.live = live.map(Rc::new);
        self.observed = true;
        self.read = true;
        true
    }

    /// Whether `object` is the target: its kind, namespace and name.
    fn is_this_object(&self, object: &Value) -> bool {
        let meta = &object["metadata"];
        object["kind"].as_str() == Some(self.target.api.kind.as_str())
            && meta["name"].as_str() == Some(self.target.name.as_str())
            && meta["namespace"].as_str() == self.namespace()
            && meta["resourceVersion"].is_string()
    }

    /// What this call saw before it wrote, for a later call.
    fn observation(&self) -> Option<Observation> {
        if !self.read {
            return None;
        }
        Some(match &self.live {
            None => Observation::Absent,
            Some(live) => Observation::Seen(crate::model::json_text(live)),
        })
    }

    /// GET (unless `observation` stands for it), then write; on a conflict
    /// re-GET and retry (M11). The status is M10's drift warning, when the
    /// write overwrites fields changed outside the tool.
    fn run(
        &mut self,
        observation: Option<&Observation>,
    ) -> Result<(Rc<Value>, Action, Option<Status>), Status> {
        if !observation.is_some_and(|o| self.observe(o)) {
            self.get()?;
        }
        loop {
            let step = match self.options.mode {
                ApplyMode::ServerSide => self.server_side()?,
                ApplyMode::ClientSideThreeWay => self.client_side()?,
            };
            match step {
                Step::Done(object, action) => {
                    // After a conflict on a real write, "nothing left to do" means the
                    // plan's change was made while this apply ran: by the earlier write
                    // (whose answer was lost, and resent into the conflict) or by a
                    // concurrent writer. Either way the object was updated.
                    let action = match action {
                        Action::Unchanged if self.retries > 0 && !self.options.dry_run => {
                            Action::Update
                        }
                        action => action,
                    };
                    let warning = match (action, &self.live) {
                        (Action::Update, Some(live)) => self.drift_warning(live, &object),
                        _ => None,
                    };
                    let warning = warning.or_else(|| self.note.take());
                    return Ok((object, action, warning));
                }
                Step::Refresh => {
                    self.refreshes += 1;
                    self.get()?;
                }
                Step::Retry(_) if self.retries < MAX_CONFLICT_RETRIES => {
                    self.retries += 1;
                    self.progress(
                        "retrying",
                        format!(
                            "{} changed while applying; retry {}/{MAX_CONFLICT_RETRIES}",
                            self.target.subject, self.retries
                        ),
                    );
                    // Back off a little more on every retry: 0.1 s, 0.2 s, 0.4 s, ...
                    self.host.sleep(100u32 << (self.retries - 1).min(4));
                    self.get()?;
                }
                Step::Retry(err) => {
                    let mut status = self.map(&err, Operation::Patch);
                    status.message = format!(
                        "{} (gave up after {} retries)",
                        status.message, self.retries
                    );
                    return Err(status);
                }
            }
        }
    }

    fn patch(&self, patch_type: PatchType, body: &Value, dry_run: bool) -> Result<Value, ApiError> {
        let options = PatchOptions {
            dry_run,
            field_manager: Some(self.field_manager()),
            force: patch_type == PatchType::Apply && self.options.force,
        };
        self.cluster.patch(
            &self.target.api,
            self.namespace(),
            &self.target.name,
            patch_type,
            body,
            &options,
        )
    }

    /// Server-side apply: dry run first to detect a no-op, then the real request.
    /// From an observation the real request goes alone, preconditioned on the
    /// seen `resourceVersion`.
    fn server_side(&mut self) -> Result<Step, Status> {
        let body = self.target.object.clone();
        let Some(live) = self.live.clone() else {
            if self.options.dry_run && self.options.offline {
                return Ok(Step::Done(body.into(), Action::Create));
            }
            return self.write_apply(&body, self.options.dry_run, Action::Create);
        };
        if self.observed && !self.options.dry_run {
            let body = with_resource_version(body, &live);
            return match self.patch(PatchType::Apply, &body, false) {
                Ok(result) => Ok(self.written(&live, result)),
                Err(e) => self.write_failed(e),
            };
        }
        let predicted = if self.options.dry_run && self.options.offline {
            merge::apply_locally(&live, PatchType::Apply, &body)?
        } else {
            match self.patch(PatchType::Apply, &body, true) {
                Ok(result) => result,
                Err(e) => return self.write_failed(e),
            }
        };
        if self.stale(&live, &predicted) {
            return Ok(Step::Refresh);
        }
        if let Some(step) = self.check_immutable(&live, &predicted)? {
            return Ok(step);
        }
        if self.unchanged(&live, &predicted) {
            return Ok(Step::Done(live, Action::Unchanged));
        }
        if self.options.dry_run {
            return Ok(Step::Done(predicted.into(), Action::Update));
        }
        self.write_apply(&body, false, Action::Update)
    }

    fn write_apply(&mut self, body: &Value, dry_run: bool, action: Action) -> Result<Step, Status> {
        match self.patch(PatchType::Apply, body, dry_run) {
            Ok(result) => {
                let action = match action {
                    Action::Create if self.observed && existed_before(&result) => Action::Update,
                    action => action,
                };
                Ok(Step::Done(result.into(), action))
            }
            Err(e) => self.write_failed(e),
        }
    }

    /// A write made with no dry run before it (from an observation): an
    /// update, unless what the server stored equals the live object.
    fn written(&mut self, live: &Value, result: Value) -> Step {
        if self.unchanged(live, &result) {
            match self.recorded_configuration_moves(live) {
                Some(note) if self.options.mode == ApplyMode::ClientSideThreeWay => {
                    self.note = Some(note);
                }
                _ => return Step::Done(result.into(), Action::Unchanged),
            }
        }
        Step::Done(result.into(), Action::Update)
    }

    /// Client-side three-way merge: create when absent, else patch from prior, plan and live.
    ///
    /// Whether anything changes is decided by what the server would store: the patch
    /// applied locally when that already equals live (`1Gi` for `1024Mi`, ignored
    /// paths), else the server's dry run of it (the defaults a whole-list replace drops
    /// come back there). A patch that changes nothing is not sent, unless it moves the
    /// recorded configuration (the last-applied annotation) forward: that write is an
    /// update with a `LastAppliedOnly` note.
    fn client_side(&mut self) -> Result<Step, Status> {
        let Some(live) = self.live.clone() else {
            return self.create();
        };
        let original = self.original(&live);
        let modified = last_applied::annotate(&self.target.object, Some(&live));
        let computed = merge::three_way(original.as_ref(), &modified, Some(&live))?;
        if merge::is_empty(&computed.body) {
            return Ok(Step::Done(live, Action::Unchanged));
        }
        let body = with_resource_version(computed.body, &live);
        if self.observed && !self.options.dry_run {
            return match self.patch(computed.type_, &body, false) {
                Ok(result) => Ok(self.written(&live, result)),
                Err(e) => self.write_failed(e),
            };
        }
        let offline = self.options.dry_run && self.options.offline;
        let predicted = match merge::apply_locally(&live, computed.type_, &body) {
            Ok(local) if offline || self.unchanged(&live, &local) => local,
            Err(status) if offline => return Err(status),
            _ => match self.patch(computed.type_, &body, true) {
                Ok(result) => result,
                Err(e) => return self.write_failed(e),
            },
        };
        if self.stale(&live, &predicted) {
            return Ok(Step::Refresh);
        }
        if let Some(step) = self.check_immutable(&live, &predicted)? {
            return Ok(step);
        }
        if self.unchanged(&live, &predicted) {
            let Some(note) = self.recorded_configuration_moves(&live) else {
                return Ok(Step::Done(live, Action::Unchanged));
            };
            self.note = Some(note);
        }
        if self.options.dry_run {
            return Ok(Step::Done(predicted.into(), Action::Update));
        }
        match self.patch(computed.type_, &body, false) {
            Ok(result) => Ok(Step::Done(result.into(), Action::Update)),
            Err(e) => self.write_failed(e),
        }
    }

    /// When the plan's configuration differs from the one `live` records (its
    /// last-applied annotation), compared as the diff compares: a note saying that
    /// only the recorded configuration changes, naming its fields.
    fn recorded_configuration_moves(&self, live: &Value) -> Option<Status> {
        let config = last_applied::strip(&self.target.object);
        let recorded = last_applied::recorded(live);
        let changes =
            crate::diff::diff(recorded.as_ref(), Some(&config), &self.options.ignore_paths).changes;
        if recorded.is_some() && changes.is_empty() {
            return None;
        }
        let fields = if recorded.is_none() {
            "it records none yet".to_owned()
        } else {
            let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
            format!("at {}", paths.join(", "))
        };
        Some(errors::info(
            StatusCode::Unknown,
            LAST_APPLIED_ONLY,
            format!(
                "only the recorded configuration of {} changes ({LAST_APPLIED_ANNOTATION}, {fields}); \
                 the server would store its other fields as they are",
                self.target.subject
            ),
        ))
    }

    /// The three-way "original": the plan kubectl (or krt) recorded in the live
    /// object's last-applied annotation, else the prior; for server-side apply the prior.
    /// Either is sanitized (M1), so a prior that is the server's object works too.
    fn original(&self, live: &Value) -> Option<Value> {
        let recorded = match self.options.mode {
            ApplyMode::ClientSideThreeWay => last_applied::recorded(live),
            ApplyMode::ServerSide => None,
        };
        recorded
            .or_else(|| {
                self.prior
                    .map(|p| &p.attributes)
                    .filter(|a| a.is_object())
                    .cloned()
            })
            .map(|o| last_applied::strip(&target::sanitize(&o, self.namespace())))
    }

    /// M10: a warning naming the fields changed outside the tool that `result` overwrites.
    fn drift_warning(&self, live: &Value, result: &Value) -> Option<Status> {
        let original = self.original(live)?;
        let fields = crate::diff::overwritten(&original, live, result, &self.options.ignore_paths);
        if fields.is_empty() {
            return None;
        }
        let names: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
        Some(Status {
            causes: fields
                .iter()
                .map(|f| crate::model::Cause {
                    field: f.path.clone(),
                    reason: "FieldChangedOutside".into(),
                    message: format!(
                        "last applied {}, live {}",
                        f.before.as_deref().unwrap_or("(absent)"),
                        f.after.as_deref().unwrap_or("(absent)")
                    ),
                })
                .collect(),
            ..Status::warning(
                StatusCode::Unknown,
                "DriftOverwritten",
                format!(
                    "{} of {} changed outside the tool and {} overwritten",
                    names.join(", "),
                    self.target.subject,
                    if self.options.dry_run {
                        "would be"
                    } else {
                        "was"
                    }
                ),
            )
        })
    }

    fn create(&mut self) -> Result<Step, Status> {
        let object = last_applied::annotate(&self.target.object, None);
        if self.options.dry_run && self.options.offline {
            return Ok(Step::Done(object.into(), Action::Create));
        }
        let options = CreateOptions {
            dry_run: self.options.dry_run,
            field_manager: Some(self.field_manager()),
        };
        match self
            .cluster
            .create(&self.target.api, self.namespace(), &object, &options)
        {
            Ok(result) => Ok(Step::Done(result.into(), Action::Create)),
            // Someone created it since our GET: read it and patch instead.
            Err(e) if errors::is_already_exists(&e) && !self.options.dry_run => Ok(Step::Retry(e)),
            Err(e) => Err(self.map(&e, Operation::Create)),
        }
    }

    /// Handles a failed write (or its dry run): retry conflicts, replace or
    /// report immutable-field changes, map everything else.
    fn write_failed(&mut self, err: ApiError) -> Result<Step, Status> {
        if errors::is_optimistic_conflict(&err) {
            return Ok(Step::Retry(err));
        }
        if errors::is_immutable(&err) {
            if self.options.replace_on_immutable {
                return self.replace(&errors::immutable_fields(&err));
            }
            return Err(self.map(&err, Operation::Patch));
        }
        let op = if self.live.is_some() {
            Operation::Patch
        } else {
            Operation::Create
        };
        Err(self.map(&err, op))
    }

    /// Known immutable fields changed by a write that the server accepted
    /// (or would accept): replace, or report `immutable-field`.
    fn check_immutable(&mut self, live: &Value, result: &Value) -> Result<Option<Step>, Status> {
        let changed =
            immutable::changed_fields(&self.target.api.group, &self.target.api.kind, live, result);
        if changed.is_empty() {
            return Ok(None);
        }
        if self.options.replace_on_immutable {
            return self.replace(&changed).map(Some);
        }
        Err(Status {
            causes: changed
                .iter()
                .map(|field| crate::model::Cause {
                    field: field.clone(),
                    reason: "FieldValueInvalid".into(),
                    message: errors::IMMUTABLE_MESSAGE.into(),
                })
                .collect(),
            ..Status::error(
                StatusCode::ImmutableField,
                "FieldImmutable",
                format!(
                    "{} of {} cannot be changed in place; the object must be replaced (set replace-on-immutable to delete and recreate it)",
                    changed.join(", "),
                    self.target.subject
                ),
            )
        })
    }

    /// Deletes the object (foreground), waits until it is gone, and creates it again.
    fn replace(&mut self, fields: &[String]) -> Result<Step, Status> {
        let fields = if fields.is_empty() {
            "an immutable field".to_owned()
        } else {
            fields.join(", ")
        };
        self.progress(
            "replacing",
            format!(
                "{fields} of {} cannot change in place; deleting and recreating it",
                self.target.subject
            ),
        );
        if self.options.dry_run {
            return Ok(Step::Done(
                self.target.object.clone().into(),
                Action::Replace,
            ));
        }
        delete_target(
            self.cluster,
            &self.target,
            false,
            Some(PropagationPolicy::Foreground),
            None,
        )?;
        wait_gone(self.cluster, self.host, &self.target, REPLACE_WAIT_MS)?;
        let object = self.target.object.clone();
        let created = match self.options.mode {
            ApplyMode::ServerSide => self.patch(PatchType::Apply, &object, false),
            ApplyMode::ClientSideThreeWay => self.cluster.create(
                &self.target.api,
                self.namespace(),
                &last_applied::annotate(&object, None),
                &CreateOptions {
                    dry_run: false,
                    field_manager: Some(self.field_manager()),
                },
            ),
        };
        created
            .map(|result| Step::Done(result.into(), Action::Replace))
            .map_err(|e| self.map(&e, Operation::Create))
    }

    /// Whether the server's dry run (`predicted`) answered from a newer object than `live`,
    /// and another read is still allowed.
    fn stale(&self, live: &Value, predicted: &Value) -> bool {
        self.refreshes < MAX_REFRESHES && resource_version(live) != resource_version(predicted)
    }

    /// Whether the result equals live once both are normalized and ignore paths dropped:
    /// exactly equal, found without copying either, or else as the diff compares them.
    fn unchanged(&self, live: &Value, result: &Value) -> bool {
        normalize::equal_for_diff(live, result)
            || crate::diff::diff(Some(live), Some(result), &self.options.ignore_paths)
                .changes
                .is_empty()
    }
}
