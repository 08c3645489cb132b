//! What the commands share: the checked input stack, a connected cluster with
//! a component runtime, and the state backend.

use super::output::Printer;
use super::{ClusterArg, GlobalArgs, InputArgs, ModeArg, StateArg};
use crate::connect::{ClusterChoice, ConnectOptions, Connected, connect};
use crate::engine::{ComponentSource, EngineOptions};
use crate::manifest;
use crate::runtime::ComponentRuntime;
use crate::stack::Stack;
use crate::state_store::{Backend, KubernetesBackend, LocalBackend, check_stack_name};
use anyhow::Context;
use guest::model::ApplyMode;
use std::time::Duration;

/// A connected runtime and the state backend.
pub struct Session {
    /// The runtime (guest events go to tracing; commands attach their display).
    pub runtime: ComponentRuntime,
    /// Where the stack's state is kept.
    pub backend: Backend,
    /// Keeps an embedded simulator alive.
    _connected: Connected,
}

/// Loads and checks every input file as one stack. Every problem is printed
/// (with "nothing was applied"); `None` then.
pub fn load_stack(input: &InputArgs, printer: &Printer) -> Option<Stack> {
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    for file in &input.files {
        match manifest::load(file) {
            Ok(mut l) => loaded.append(&mut l),
            Err(mut e) => problems.append(&mut e.problems),
        }
    }
    let stack = if problems.is_empty() {
        Stack::new(loaded).map_err(|e| problems = e.problems).ok()
    } else {
        None
    };
    if stack.is_none() {
        printer.error(problems.join("\n"));
        printer.note("invalid input: nothing was applied");
    }
    stack
}

/// Connects to the cluster, loads the component (with a per-call time limit
/// above `watch_timeout`) and opens the state backend.
///
/// # Errors
/// An invalid stack name, no usable cluster, or a component that does not load.
pub async fn open(
    global: &GlobalArgs,
    printer: &Printer,
    watch_timeout: Duration,
    scope: &[guest::model::Resource],
    field_manager: Option<&str>,
) -> anyhow::Result<Session> {
    check_stack_name(&global.stack)?;
    let options = ConnectOptions {
        choice: match global.cluster {
            ClusterArg::Auto => ClusterChoice::Auto,
            ClusterArg::Sim => ClusterChoice::Sim,
            ClusterArg::Kubeconfig => ClusterChoice::Kubeconfig,
        },
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
        namespace: global.namespace.clone(),
        sim_state: Some(global.sim_state.clone()),
    };
    let connected = connect(&options).await?;
    printer.note(format!("using {}", connected.description));
    let source = match &global.component {
        Some(path) => ComponentSource::File(path.clone()),
        None => ComponentSource::Default,
    };
    let mut engine = EngineOptions::default();
    engine.limits.call_timeout = engine
        .limits
        .call_timeout
        .max(watch_timeout + Duration::from_secs(30));
    let runtime = ComponentRuntime::new(&source, connected.cluster.clone(), &engine)
        .await
        .with_context(|| match &global.component {
            Some(p) => format!("failed to load the runtime component '{}'", p.display()),
            None => "failed to load the built-in runtime component".to_owned(),
        })?;
    let backend = match global.state {
        StateArg::Local => Backend::Local(LocalBackend::new(&global.state_dir)),
        StateArg::Kubernetes => {
            let namespace = global
                .state_namespace
                .clone()
                .unwrap_or_else(|| connected.cluster.default_namespace().to_owned());
            Backend::Kubernetes(Box::new(KubernetesBackend::new(
                connected.cluster.client().clone(),
                &namespace,
            )))
        }
    };
    // The capability policy: by default exactly the namespaces and kinds of
    // the resources in scope (the input and the stack's recorded state).
    let recorded = backend.load(&global.stack).await?;
    let mut resources = scope.to_vec();
    resources.extend(recorded.resources.iter().cloned());
    let mut policy = global
        .policy
        .resolve(&resources, connected.cluster.default_namespace())?;
    if let Some(manager) = field_manager {
        policy.allow_field_manager(manager);
    }
    Ok(Session {
        runtime: runtime.with_policy(policy),
        backend,
        _connected: connected,
    })
}

/// The runtime's apply mode for `--mode`.
pub fn apply_mode(global: &GlobalArgs) -> ApplyMode {
    match global.mode {
        ModeArg::ServerSide => ApplyMode::ServerSide,
        ModeArg::ClientSide => ApplyMode::ClientSideThreeWay,
    }
}

/// Opens a session for a command that works on `-f` files or on the recorded
/// resources: loads the input (`None` when invalid; the problems are printed),
/// connects with the input in the policy's scope, and loads the state.
///
/// # Errors
/// As [`open`], or an unreadable state.
pub async fn open_targets(
    global: &GlobalArgs,
    printer: &Printer,
    files: &super::StateOrInputArgs,
    watch_timeout: Duration,
) -> anyhow::Result<Option<(Session, crate::state_store::State, Targets)>> {
    let Some(input) = load_input(files, printer) else {
        return Ok(None);
    };
    let scope = input
        .as_ref()
        .map(|s| s.resources.as_slice())
        .unwrap_or_default();
    let session = open(global, printer, watch_timeout, scope, None).await?;
    let state = session.backend.load(&global.stack).await?;
    let targets = targets(input.as_ref(), &state);
    Ok(Some((session, state, targets)))
}

/// Each resource a command works on with its recorded version, if any.
pub type Targets = Vec<(guest::model::Resource, Option<guest::model::Resource>)>;

/// The input of a command that works on `-f` files or, without them, on every
/// recorded resource: `Some(None)` without files, `Some(Some(stack))` with
/// valid files, `None` when the input is invalid (the problems are printed).
fn load_input(files: &super::StateOrInputArgs, printer: &Printer) -> Option<Option<Stack>> {
    if files.files.is_empty() {
        return Some(None);
    }
    load_stack(
        &InputArgs {
            files: files.files.clone(),
        },
        printer,
    )
    .map(Some)
}

/// The resources a command works on: those of the input (each with its
/// recorded version, if any), or every recorded one.
fn targets(input: Option<&Stack>, state: &crate::state_store::State) -> Targets {
    match input {
        None => state
            .resources
            .iter()
            .map(|r| (r.clone(), Some(r.clone())))
            .collect(),
        Some(stack) => stack
            .order
            .iter()
            .map(|&i| {
                let r = stack.resources[i].clone();
                let recorded = state.get(&r.id).cloned();
                (r, recorded)
            })
            .collect(),
    }
}
