//! One reconcile of one Stack, as kube-runtime's `Controller` calls it:
//! skip Stacks of shards this replica does not hold; keep the finalizer
//! (`kube::runtime::finalizer`); read the inputs, place and check them, then
//! plan and apply them through the Stack's component chain under its policy
//! with krt-stack, recording the inventory in the status; report health,
//! conditions and Events. Deleting a Stack destroys its inventory.

use crate::conditions::{self, Verdict};
use crate::crd::{ApplyMode, FIELD_MANAGER, ResourceHealth, Stack, StackStatus};
use crate::grants::Grants;
use crate::inventory::StatusBackend;
use crate::metrics::{ActionLabel, Metrics};
use crate::outcome::{self, Writes};
use crate::runtimes::Runtimes;
use crate::scope::{self, DiscoveryError};
use crate::shards::{Entered, Shards};
use crate::sources::{self, Chain, InputError};
use crate::status::StatusWriter;
use crate::tenancy::Tenancy;
use krt_host::oci::{OciError, OciOptions};
use krt_host::{ComponentRuntime, KubeCluster};
use krt_stack::model::{ApplyMode as RuntimeMode, ApplyOptions, ReadOptions, WatchRequest};
use krt_stack::ownership::NOT_OURS;
use krt_stack::{
    ApplySettings, DestroySettings, Outcome, Owner, Ran, Run, StateError, TracingSink, WaitFor,
    cascading_delete,
};
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder as EventRecorder};
use kube::runtime::finalizer::{self, finalizer};
use kube::{Resource, ResourceExt};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest `spec.timeout` a Stack may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// How soon a Stack whose resources are still converging is looked at again
/// (unless its interval is shorter).
const RECHECK: Duration = Duration::from_secs(5);

/// How soon a reconcile that failed on an error (not a condition) is retried.
pub const RETRY: Duration = Duration::from_secs(5);

/// A failure that ends a reconcile early; the Controller retries it after [`RETRY`].
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A ConfigMap or component file could not be read.
    #[error("reading the Stack's inputs failed")]
    Input(#[source] InputError),
    /// Discovery failed.
    #[error(transparent)]
    Discovery(DiscoveryError),
    /// The status could not be written.
    #[error("writing the Stack's status failed")]
    Status(#[source] kube::Error),
    /// The inventory could not be saved.
    #[error("saving the Stack's inventory failed")]
    State(#[source] StateError),
    /// Some resources could not be deleted; the finalizer stays.
    #[error("deleting the Stack's resources failed: {0}")]
    Cleanup(String),
}

/// The error of a reconcile.
pub type ReconcileError = finalizer::Error<StepError>;

/// When a Stack was last reconciled to the end by this replica.
#[derive(Debug, Clone, Copy)]
struct Done {
    generation: Option<i64>,
    at: Instant,
    /// When it is due again, from `at`.
    wait: Duration,
}

/// What every reconcile shares.
pub struct Context {
    /// The controller's own client (Stack objects and their status, Events).
    pub client: kube::Client,
    /// The cluster the sandbox reaches, as the controller; a Stack with a
    /// ServiceAccount reaches it [acting as](KubeCluster::acting_as) that account.
    pub cluster: Arc<KubeCluster>,
    /// Who Stacks act as, and which references they may make.
    pub tenancy: Tenancy,
    /// Compiled component chains.
    pub runtimes: Runtimes,
    /// What Stacks may touch beyond their namespace.
    pub grants: Grants,
    /// Where `spec.component.path` may point.
    pub component_dirs: Vec<PathBuf>,
    /// How registries are reached for `oci` components.
    pub registries: OciOptions,
    /// Which shards this replica holds.
    pub shards: Arc<Shards>,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Publishes Events about Stacks.
    pub events: EventRecorder,
    /// Resources worked on at once within one Stack.
    pub resource_concurrency: usize,
    done: Mutex<HashMap<(String, String), Done>>,
    running: Mutex<HashSet<(String, String)>>,
}

impl Context {
    /// A context; nothing reconciled yet.
    #[expect(clippy::too_many_arguments, reason = "one field each, built once")]
    pub fn new(
        client: kube::Client,
        cluster: Arc<KubeCluster>,
        runtimes: Runtimes,
        grants: Grants,
        tenancy: Tenancy,
        component_dirs: Vec<PathBuf>,
        registries: OciOptions,
        shards: Arc<Shards>,
        metrics: Arc<Metrics>,
        events: EventRecorder,
        resource_concurrency: usize,
    ) -> Self {
        Context {
            client,
            cluster,
            tenancy,
            runtimes,
            grants,
            component_dirs,
            registries,
            shards,
            metrics,
            events,
            resource_concurrency: resource_concurrency.max(1),
            done: Mutex::new(HashMap::new()),
            running: Mutex::new(HashSet::new()),
        }
    }

    /// Reads `stack`'s inputs as `cluster` (its identity), with the
    /// registries' settings and its namespace's verification rules.
    async fn read(
        &self,
        cluster: &KubeCluster,
        stack: &Stack,
    ) -> Result<sources::Inputs, InputError> {
        let verification = self
            .grants
            .verification_for(stack.namespace_or_default())
            .map_err(InputError::Oci)?;
        let registries = sources::Registries {
            base: &self.registries,
            verification,
        };
        sources::read(
            cluster.client(),
            stack,
            &self.component_dirs,
            &self.tenancy,
            registries,
        )
        .await
    }

    /// Forgets when Stacks were last reconciled, so that each is reconciled
    /// at its next trigger (a shard just moved here).
    pub fn forget_done(&self) {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// How many Stacks of the shards held here are due and not running: new
    /// generations, deletions, and intervals that have passed.
    pub fn queue_depth<'a>(&self, stacks: impl Iterator<Item = &'a Stack>) -> usize {
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        stacks
            .filter(|s| {
                let key = key(s);
                if !self.shards.holds(self.shards.of(&key.0, &key.1)) || running.contains(&key) {
                    return false;
                }
                let deleting = s.metadata.deletion_timestamp.is_some();
                deleting
                    || done.get(&key).is_none_or(|d| {
                        d.generation != s.metadata.generation || d.at.elapsed() >= d.wait
                    })
            })
            .count()
    }

    /// How long until `stack` is due, when it was reconciled to the end at its
    /// current generation and its wait has not passed.
    fn not_due(&self, stack: &Stack) -> Option<Duration> {
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let d = done.get(&key(stack))?;
        (d.generation == stack.metadata.generation)
            .then(|| d.wait.checked_sub(d.at.elapsed()))
            .flatten()
            .filter(|left| !left.is_zero())
    }

    fn finished(&self, stack: &Stack, wait: Duration) {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key(stack),
                Done {
                    generation: stack.metadata.generation,
                    at: Instant::now(),
                    wait,
                },
            );
    }

    fn running(&self, stack: &Stack, on: bool) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if on {
            running.insert(key(stack));
        } else {
            running.remove(&key(stack));
        }
        self.metrics.in_flight.set(running.len() as i64);
    }

    /// The cluster as `stack` reaches it: acting as its ServiceAccount, or as
    /// the controller when it runs as the controller.
    ///
    /// # Errors
    /// Why the Stack cannot act as the account it names.
    fn cluster_for(&self, stack: &Stack) -> Result<Arc<KubeCluster>, String> {
        match self.tenancy.identity(stack)? {
            Some(who) => self
                .cluster
                .acting_as(&who)
                .map(Arc::new)
                .map_err(|e| chain_message(&e)),
            None => Ok(self.cluster.clone()),
        }
    }

    async fn publish(&self, stack: &Stack, type_: EventType, reason: &str, note: String) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(truncate(note, 1000)),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(e) = self.events.publish(&event, &stack.object_ref(&())).await {
            tracing::warn!(error = %e, stack = %stack.name_any(), "cannot publish an Event");
        }
    }
}

fn key(stack: &Stack) -> (String, String) {
    (
        stack.namespace_or_default().to_owned(),
        stack.name().to_owned(),
    )
}

fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut at = max.saturating_sub(3);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push_str("...");
    }
    text
}

/// Reconciles `stack` (kube-runtime's reconcile function).
///
/// # Errors
/// A [`StepError`] (or a finalizer write that failed): the Controller retries.
pub async fn reconcile(stack: Arc<Stack>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let (namespace, name) = key(&stack);
    let shard = ctx.shards.of(&namespace, &name);
    let Some(entered) = ctx.shards.enter(shard).await else {
        // Another replica's: reconciled here again once this replica takes the shard.
        return Ok(Action::await_change());
    };
    let deleting = stack.metadata.deletion_timestamp.is_some();
    if !deleting && let Some(left) = ctx.not_due(&stack) {
        return Ok(Action::requeue(left));
    }
    tracing::debug!(stack = %format!("{namespace}/{name}"), shard, "reconciling");
    ctx.running(&stack, true);
    let started = Instant::now();
    let api: Api<Stack> = Api::namespaced(ctx.client.clone(), &namespace);
    let result = finalizer(&api, crate::crd::FINALIZER, stack.clone(), |event| {
        let (ctx, entered) = (&ctx, &entered);
        async move {
            match event {
                finalizer::Event::Apply(stack) => apply(&stack, ctx, entered, started).await,
                finalizer::Event::Cleanup(stack) => cleanup(&stack, ctx, entered).await,
            }
        }
    })
    .await;
    ctx.running(&stack, false);
    result
}

/// kube-runtime's error policy: count the failure and retry after [`RETRY`].
pub fn error_policy(stack: Arc<Stack>, error: &ReconcileError, ctx: Arc<Context>) -> Action {
    let message = chain_message(error);
    tracing::warn!(stack = %format!("{}/{}", stack.namespace_or_default(), stack.name()), error = %message, "reconcile failed; retrying");
    ctx.metrics
        .reconciled("error", Some("Error"), Duration::ZERO);
    Action::requeue(RETRY)
}

/// The Stack's `interval` and `timeout`.
fn durations(stack: &Stack) -> Result<(Duration, Duration), String> {
    let parse = |field: &str, text: &str| {
        humantime::parse_duration(text)
            .map_err(|e| format!("spec.{field} '{text}' is not a duration such as 30s or 5m: {e}"))
    };
    let interval = parse("interval", &stack.spec.interval)?;
    let timeout = parse("timeout", &stack.spec.timeout)?;
    if interval < Duration::from_secs(1) {
        return Err(format!(
            "spec.interval '{}' is shorter than 1s",
            stack.spec.interval
        ));
    }
    if timeout > MAX_TIMEOUT {
        return Err(format!(
            "spec.timeout '{}' is longer than {}",
            stack.spec.timeout,
            humantime::format_duration(MAX_TIMEOUT)
        ));
    }
    Ok((interval, timeout))
}

/// The revision of the inputs: a digest of the placed resources, the chain
/// and the settings that change what is applied.
fn revision(graph: &krt_stack::Stack, chain: &Chain, stack: &Stack) -> String {
    let mut h = Sha256::new();
    for r in &graph.resources {
        h.update(r.id.as_bytes());
        h.update(serde_json::to_vec(&r.attributes).unwrap_or_default());
        h.update(r.depends_on.join(",").as_bytes());
        h.update(b"\0");
    }
    h.update(chain.digest().as_bytes());
    h.update(format!("{:?}/{}", stack.spec.mode, stack.spec.prune).as_bytes());
    format!("sha256:{}", sources::hex(&h.finalize()))
}

/// The status for `verdict`, from `current`.
fn with_verdict(current: &StackStatus, verdict: &Verdict, generation: i64) -> StackStatus {
    StackStatus {
        conditions: conditions::conditions(&current.conditions, verdict, generation),
        observed_generation: Some(generation),
        ..current.clone()
    }
}

/// Writes `verdict` onto `base` (the status to write besides the
/// conditions), publishes a Warning Event when a failure is new, counts the
/// reconcile and ends it: the Stack is due again after `wait`.
async fn conclude(
    stack: &Stack,
    ctx: &Context,
    status: &mut StatusWriter,
    verdict: Verdict,
    base: StackStatus,
    started: Instant,
    wait: Duration,
) -> Result<Action, StepError> {
    let generation = stack.metadata.generation.unwrap_or_default();
    let changed = stack
        .condition(conditions::READY)
        .is_none_or(|c| c.reason != verdict.reason() || c.message != verdict.message());
    let desired = StackStatus {
        conditions: conditions::conditions(&base.conditions, &verdict, generation),
        observed_generation: Some(generation),
        ..base
    };
    status.write(desired).await.map_err(StepError::Status)?;
    let (result, type_) = match &verdict {
        Verdict::Ready { .. } => ("ready", EventType::Normal),
        Verdict::Progressing { .. } => ("progressing", EventType::Normal),
        Verdict::Failed { .. } => ("failed", EventType::Warning),
        Verdict::Stalled { .. } => ("stalled", EventType::Warning),
    };
    if changed && type_ == EventType::Warning {
        ctx.publish(stack, type_, verdict.reason(), verdict.message().to_owned())
            .await;
    }
    let reason = (!matches!(verdict, Verdict::Ready { .. })).then(|| verdict.reason());
    ctx.metrics.reconciled(result, reason, started.elapsed());
    ctx.finished(stack, wait);
    Ok(Action::requeue(wait))
}

/// The settings of the apply walk.
fn settings(stack: &Stack, ctx: &Context, timeout: Duration) -> ApplySettings {
    let namespace = Some(stack.namespace_or_default().to_owned());
    ApplySettings {
        options: ApplyOptions {
            mode: match stack.spec.mode {
                ApplyMode::ServerSide => RuntimeMode::ServerSide,
                ApplyMode::ClientSide => RuntimeMode::ClientSideThreeWay,
            },
            field_manager: Some(FIELD_MANAGER.into()),
            // Fields changed by others are taken back: that is drift correction.
            force: true,
            default_namespace: namespace.clone(),
            ..ApplyOptions::default()
        },
        concurrency: ctx.resource_concurrency,
        wait: Some(WatchRequest {
            timeout_ms: u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX),
            default_namespace: namespace.clone(),
        }),
        // Every resource is waited for until healthy before its dependents
        // are written, as `krt apply` does.
        wait_for: WaitFor::All,
        delete: cascading_delete(namespace),
        prune: stack.spec.prune,
        owner: owner(stack),
        force_delete_unowned: false,
        // The inventory lives in the cluster it describes.
        cluster: None,
    }
}

/// The owner whose mark the Stack's objects carry: `namespace.name`.
fn owner(stack: &Stack) -> Owner {
    Owner::object(stack.namespace_or_default(), stack.name())
}

/// The reports of a walk of the Stack's state once that state is saved, and
/// what the walk wrote; publishes a Warning Event naming the objects it left
/// alone because the Stack does not own them.
async fn walked(
    ctx: &Context,
    stack: &Stack,
    ran: Result<Ran, StateError>,
) -> Result<(Vec<krt_stack::ResourceReport>, Writes), StepError> {
    let ran = ran.map_err(StepError::State)?;
    ran.saved.map_err(StepError::State)?;
    let reports = ran.reports;
    let left: Vec<String> = reports
        .iter()
        .filter(|r| r.result == Outcome::NotOurs)
        .filter_map(|r| r.error.as_ref().map(|e| e.message.clone()))
        .collect();
    if !left.is_empty() {
        ctx.publish(stack, EventType::Warning, NOT_OURS, left.join("; "))
            .await;
    }
    let writes = Writes::of(&reports);
    Ok((reports, writes))
}

/// Applies the Stack's spec.
async fn apply(
    stack: &Stack,
    ctx: &Context,
    entered: &Entered,
    started: Instant,
) -> Result<Action, StepError> {
    let mut status = StatusWriter::new(ctx.client.clone(), stack);
    let stalled = |reason, message| Verdict::Stalled { reason, message };
    let (interval, timeout) = match durations(stack) {
        Ok(d) => d,
        Err(message) => {
            let v = stalled("InvalidSpec", message);
            let base = status.current.clone();
            return conclude(
                stack,
                ctx,
                &mut status,
                v,
                base,
                started,
                Duration::from_secs(300),
            )
            .await;
        }
    };
    let namespace = stack.namespace_or_default();
    let cluster = match ctx.cluster_for(stack) {
        Ok(cluster) => cluster,
        Err(message) => {
            let v = stalled("InvalidSpec", message);
            let base = status.current.clone();
            return conclude(stack, ctx, &mut status, v, base, started, interval).await;
        }
    };
    let read = ctx.read(&cluster, stack).await;
    let inputs = match read {
        Ok(inputs) => inputs,
        Err(e) => {
            let verdict = match e {
                InputError::InvalidSpec(m) => stalled("InvalidSpec", m),
                InputError::InvalidManifests(p) => stalled("InvalidManifests", p.join("; ")),
                InputError::SourceNotFound(m) => Verdict::Failed {
                    reason: "SourceNotFound",
                    message: m,
                },
                e @ InputError::Forbidden(_) => Verdict::Failed {
                    reason: "SourceForbidden",
                    message: e.to_string(),
                },
                e @ InputError::ReadComponent { .. } => Verdict::Failed {
                    reason: "ComponentUnavailable",
                    message: chain_message(&e),
                },
                InputError::Oci(e @ OciError::Unsigned { .. }) => Verdict::Failed {
                    reason: "ComponentUnverified",
                    message: chain_message(&e),
                },
                e @ InputError::Oci(_) => Verdict::Failed {
                    reason: "ComponentUnavailable",
                    message: chain_message(&e),
                },
                e @ InputError::Kube { .. } => return Err(StepError::Input(e)),
            };
            let base = status.current.clone();
            return conclude(stack, ctx, &mut status, verdict, base, started, interval).await;
        }
    };
    let policy = ctx.grants.policy_for(namespace);
    let placed = scope::place(&cluster, namespace, inputs.loaded, &policy)
        .await
        .map_err(StepError::Discovery)?;
    let mut graph = match placed {
        Ok(graph) => graph,
        Err(refusal) => {
            let v = stalled(refusal.reason(), refusal.to_string());
            let base = status.current.clone();
            return conclude(stack, ctx, &mut status, v, base, started, interval).await;
        }
    };
    if let Err(problems) = owner(stack).mark_all(&mut graph) {
        let v = stalled("InvalidManifests", problems.join("; "));
        let base = status.current.clone();
        return conclude(stack, ctx, &mut status, v, base, started, interval).await;
    }
    let revision = revision(&graph, &inputs.chain, stack);
    let runtime = match ctx.runtimes.get(&inputs.chain, policy, &cluster).await {
        Ok(runtime) => runtime,
        Err(e) => {
            let message = format!("{} (chain: {})", chain_message(&e), inputs.chain.origins());
            let v = stalled("ComponentInvalid", message);
            let base = status.current.clone();
            return conclude(stack, ctx, &mut status, v, base, started, interval).await;
        }
    };
    let generation = stack.metadata.generation.unwrap_or_default();
    let new_work = status.current.observed_generation != Some(generation)
        || status.current.last_attempted_revision.as_deref() != Some(revision.as_str());
    if new_work {
        let verdict = Verdict::Progressing {
            reason: "Reconciling",
            message: format!("applying revision {revision}"),
        };
        let mut desired = with_verdict(&status.current, &verdict, generation);
        desired.last_attempted_revision = Some(revision.clone());
        status.write(desired).await.map_err(StepError::Status)?;
    }
    let previous_revision = status.current.last_applied_revision.clone();
    let backend = StatusBackend::new(ctx.client.clone(), stack, entered.held.clone());
    let run = Run::open(&backend, stack.name(), None)
        .await
        .map_err(StepError::State)?;
    let settings = settings(stack, ctx, timeout);
    let plan = settings.plan(&runtime, &graph, run.state()).await;
    if plan.failed() {
        run.close().await.map_err(StepError::State)?;
        let verdict = outcome::plan_failed(&plan, &graph);
        let base = status.current.clone();
        return conclude(stack, ctx, &mut status, verdict, base, started, interval).await;
    }
    let ran = run
        .apply(&runtime, &graph, &plan, &settings, &TracingSink)
        .await;
    let (reports, writes) = walked(ctx, stack, ran).await?;
    for (action, ids) in writes.by_action() {
        ctx.metrics
            .writes
            .get_or_create(&ActionLabel { action })
            .inc_by(ids.len() as u64);
    }
    let health = health(
        &runtime,
        &graph,
        &reports,
        namespace,
        ctx.resource_concurrency,
    )
    .await;
    let verdict = outcome::applied(&reports, &health, &revision, &writes);
    if !writes.is_empty() {
        let reason = if previous_revision.as_deref() == Some(revision.as_str()) {
            "DriftCorrected"
        } else {
            "Applied"
        };
        let note = format!("revision {revision}: {}", writes.describe());
        ctx.publish(stack, EventType::Normal, reason, note).await;
    }
    if !stack.spec.prune && !plan.deletes.is_empty() {
        let ids: Vec<String> = plan.deletes.iter().map(|d| d.id.clone()).collect();
        let note = format!(
            "left in the cluster, as prune is off: {}",
            outcome::names(&ids)
        );
        ctx.publish(stack, EventType::Normal, "Orphaned", note)
            .await;
    }
    let entries = backend.entries();
    let mut base = status.current.clone();
    base.inventory_count = Some(entries.len() as i64);
    base.inventory = entries;
    base.last_attempted_revision = Some(revision.clone());
    if !matches!(verdict, Verdict::Failed { .. }) {
        base.last_applied_revision = Some(revision);
        base.components = inputs.chain.components();
    }
    base.resources = health;
    let wait = match verdict {
        Verdict::Progressing { .. } => interval.min(RECHECK),
        _ => interval,
    };
    conclude(stack, ctx, &mut status, verdict, base, started, wait).await
}

/// The health of each resource of `graph`, in dependency order: from the
/// apply's wait where it waited, else read now.
async fn health(
    runtime: &ComponentRuntime,
    graph: &krt_stack::Stack,
    reports: &[krt_stack::ResourceReport],
    namespace: &str,
    concurrency: usize,
) -> Vec<ResourceHealth> {
    let waited: HashMap<&str, &krt_stack::model::Health> = reports
        .iter()
        .filter_map(|r| r.health.as_ref().map(|h| (r.id.as_str(), h)))
        .collect();
    let unread: krt_stack::Targets = graph
        .order
        .iter()
        .map(|&i| &graph.resources[i])
        .filter(|r| !waited.contains_key(r.id.as_str()))
        .map(|r| (r.clone(), None))
        .collect();
    let options = ReadOptions {
        default_namespace: Some(namespace.to_owned()),
    };
    let read = krt_stack::read(runtime, &unread, &options, concurrency).await;
    let read: HashMap<&str, &krt_stack::ResourceReport> =
        read.iter().map(|r| (r.id.as_str(), r)).collect();
    graph
        .order
        .iter()
        .map(|&i| {
            let id = graph.resources[i].id.as_str();
            if let Some(h) = waited.get(id) {
                return outcome::resource_health(id, h);
            }
            match read.get(id) {
                Some(r) if r.result == Outcome::Missing => ResourceHealth {
                    id: id.to_owned(),
                    health: "NotFound".into(),
                    message: None,
                },
                Some(r) => match (&r.health, &r.error) {
                    (Some(h), _) => outcome::resource_health(id, h),
                    (None, e) => ResourceHealth {
                        id: id.to_owned(),
                        health: "Unknown".into(),
                        message: e.as_ref().map(|e| e.message.clone()),
                    },
                },
                None => ResourceHealth {
                    id: id.to_owned(),
                    health: "Unknown".into(),
                    message: None,
                },
            }
        })
        .collect()
}

/// Deletes the Stack's inventory (unless prune is off), dependents first.
async fn cleanup(stack: &Stack, ctx: &Context, entered: &Entered) -> Result<Action, StepError> {
    let namespace = stack.namespace_or_default();
    let backend = StatusBackend::new(ctx.client.clone(), stack, entered.held.clone());
    let ids = backend.ids();
    if !stack.spec.prune {
        let note = format!(
            "the Stack was deleted; its resources stay, as prune is off: {}",
            outcome::names(&ids)
        );
        ctx.publish(stack, EventType::Normal, "Orphaned", note)
            .await;
        return Ok(Action::await_change());
    }
    let policy = ctx.grants.policy_for(namespace);
    // Deleted as the Stack's account, never as the controller on its behalf.
    let cluster = ctx.cluster_for(stack).map_err(StepError::Cleanup)?;
    let read = ctx.read(&cluster, stack).await;
    let chain = match read {
        Ok(inputs) => inputs.chain,
        Err(e) => {
            tracing::info!(error = %e, "the Stack's inputs are gone: deleting its resources with the built-in runtime");
            Chain::default()
        }
    };
    let runtime = match ctx.runtimes.get(&chain, policy.clone(), &cluster).await {
        Ok(r) => r,
        Err(_) => ctx
            .runtimes
            .get(&Chain::default(), policy, &cluster)
            .await
            .map_err(|e| StepError::Cleanup(chain_message(&e)))?,
    };
    let run = Run::open(&backend, stack.name(), None)
        .await
        .map_err(StepError::State)?;
    let graph = krt_stack::Stack::recorded(run.state().resources.clone());
    // Each deletion is waited for (within the Stack's timeout) before what it
    // depends on is deleted; one still held by finalizers then fails the cleanup,
    // which is retried, and the Stack's finalizer stays. Objects the Stack does
    // not own are left alone.
    let wait = durations(stack).map_or(MAX_TIMEOUT, |(_, timeout)| timeout);
    let settings = DestroySettings {
        request: cascading_delete(Some(namespace.to_owned())),
        wait: Some(wait),
        concurrency: ctx.resource_concurrency,
        owner: owner(stack),
        force_unowned: false,
    };
    let ran = run.destroy(&runtime, &graph, &settings, &TracingSink).await;
    let (reports, writes) = walked(ctx, stack, ran).await?;
    ctx.metrics
        .writes
        .get_or_create(&ActionLabel { action: "deleted" })
        .inc_by(writes.deleted.len() as u64);
    let failed: Vec<String> = reports
        .iter()
        .filter(|r| {
            !matches!(
                r.result,
                Outcome::Deleted | Outcome::Absent | Outcome::NotOurs
            )
        })
        .map(|r| match &r.error {
            Some(e) => format!("{}: {}: {}", r.id, e.reason, e.message),
            None => format!("{}: {}", r.id, r.result.word()),
        })
        .collect();
    if !failed.is_empty() {
        let message = failed.join("; ");
        ctx.publish(stack, EventType::Warning, "DeleteFailed", message.clone())
            .await;
        return Err(StepError::Cleanup(message));
    }
    ctx.publish(
        stack,
        EventType::Normal,
        "Deleted",
        format!(
            "the Stack was deleted, and so were its resources: {}",
            outcome::names(&writes.deleted)
        ),
    )
    .await;
    Ok(Action::await_change())
}

/// An error with its causes, one after the other.
fn chain_message(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        message = format!("{message}: {c}");
        cause = c.source();
    }
    message
}
