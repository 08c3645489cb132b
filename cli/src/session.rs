//! What the commands share: the checked input stack, a connected cluster with
//! a component runtime, and the state backend.

use crate::args::{
    ClusterArg, ComponentArg, GlobalArgs, InputArgs, ModeArg, StateArg, StateOrInputArgs,
};
use crate::output::Printer;
use anyhow::Context;
use krt_guest::model::{ApplyMode, Resource};
use krt_host::oci::{OciOptions, OciStore, RegistryCredentials, VerificationPolicy, VerifyKey};
use krt_host::policy::Policy;
use krt_host::{
    ClusterChoice, ComponentRuntime, ComponentSource, ConnectOptions, Connected, EngineOptions,
    Impersonation, KubernetesBackend, Middleware, connect,
};
use krt_stack::state::check_stack_name;
use krt_stack::{
    Binding, ClusterIdentity, LocalBackend, Owner, Run, Stack, State, StateBackend, StateLock,
    Targets,
};
use std::time::Duration;

/// A connected runtime and the state backend.
pub struct Session {
    /// The runtime (guest events go to tracing; commands attach their display).
    pub runtime: ComponentRuntime,
    /// Where the stack's state is kept.
    pub backend: Box<dyn StateBackend>,
    /// Which cluster this is, as a state records it.
    pub cluster: ClusterIdentity,
    /// The chain, middleware outermost first then the runtime, as a state
    /// records it: files by path, registry components pinned to the digest
    /// this run resolved, `built-in` for krt's own guest.
    pub components: Vec<String>,
    /// Keeps an embedded simulator alive.
    _connected: Connected,
}

impl Session {
    /// The state of `stack`, bound to this session's cluster: a state of
    /// another cluster that records resources is refused before anything is
    /// written ([`State::bind`]).
    ///
    /// # Errors
    /// An unreadable state, or one of another cluster.
    pub async fn load_state(&self, stack: &str, printer: &Printer) -> anyhow::Result<State> {
        let (state, binding) = self.bound(stack).await?;
        if let Binding::Rebound(before) = binding {
            printer.note(rebound(stack, &before));
        }
        Ok(state)
    }

    /// Opens a run of `stack` ([`Run::open`]): its state, bound to this
    /// cluster (a state that recorded no resources of its cluster is rebound,
    /// and that is said), under its lock.
    ///
    /// # Errors
    /// A state of another cluster, a lock another run holds, or an unreadable state.
    pub async fn run(&self, stack: &str, printer: &Printer) -> anyhow::Result<Run<'_>> {
        let run = Run::open(self.backend.as_ref(), stack, Some(&self.cluster)).await?;
        if let Some(Binding::Rebound(before)) = run.binding() {
            printer.note(rebound(stack, before));
        }
        Ok(run)
    }

    /// Takes the lock of `stack` once its state is known to be of this
    /// cluster: a state of another cluster is refused before the lock (a
    /// Secret, for `--state kubernetes`) is written.
    ///
    /// # Errors
    /// A state of another cluster, or the lock could not be taken.
    pub async fn lock(&self, stack: &str) -> anyhow::Result<Box<dyn StateLock>> {
        self.bound(stack).await?;
        Ok(self.backend.lock(stack).await?)
    }

    /// The state of `stack` bound to this cluster, and how.
    async fn bound(&self, stack: &str) -> anyhow::Result<(State, Binding)> {
        let mut state = self.backend.load(stack).await?;
        let binding = state.bind(&self.cluster)?;
        Ok((state, binding))
    }
}

/// The note that the state of `stack` now describes this cluster instead of `before`.
fn rebound(stack: &str, before: &impl std::fmt::Display) -> String {
    format!(
        "the state of stack '{stack}' recorded no resources of its cluster ({before}); it now \
         describes this one"
    )
}

/// Loads and checks every input file as one stack. Every problem is printed
/// (with "nothing was applied"); `None` then.
pub fn load_stack(input: &InputArgs, printer: &Printer) -> Option<Stack> {
    match krt_stack::graph::load(&input.files) {
        Ok(stack) => Some(stack),
        Err(e) => {
            printer.error(e.problems.join("\n"));
            printer.note("invalid input: nothing was applied");
            None
        }
    }
}

/// `stack` with the mark of the stack `--stack` names on every resource
/// ([`Owner::mark_all`]): it is part of each object's first write. A resource
/// whose own label names another stack is an input error, printed; `None` then.
pub fn owned(stack: &Stack, global: &GlobalArgs, printer: &Printer) -> Option<Stack> {
    let mut stack = stack.clone();
    match Owner::stack(&global.stack).mark_all(&mut stack) {
        Ok(()) => Some(stack),
        Err(problems) => {
            printer.error(problems.join("\n"));
            printer.note("invalid input: nothing was applied");
            None
        }
    }
}

/// The local state backend of `--state-dir`.
pub fn local_backend(global: &GlobalArgs) -> LocalBackend {
    LocalBackend::new(&global.state_dir)
}

/// How the global options choose the cluster, with at most `max_in_flight`
/// requests at once (`None`: the connection's default).
pub fn connect_options(global: &GlobalArgs, max_in_flight: Option<usize>) -> ConnectOptions {
    ConnectOptions {
        choice: match global.cluster {
            ClusterArg::Auto => ClusterChoice::Auto,
            ClusterArg::Sim => ClusterChoice::Sim,
            ClusterArg::Kubeconfig => ClusterChoice::Kubeconfig,
        },
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
        namespace: global.namespace.clone(),
        sim_state: Some(global.sim_state.clone()),
        max_in_flight,
        impersonate: global
            .as_user
            .as_ref()
            .map(|user| Impersonation::user(user.clone(), global.as_groups.clone())),
    }
}

/// Connects to the cluster (at most `concurrency` requests in flight, the
/// ceiling of the adaptive limit), loads the component (with a per-call time
/// limit above `watch_timeout`, and room for `concurrency` instances at once)
/// and opens the state backend. The capability policy covers `scope` and the
/// resources recorded in the stack's state, and allows writing as `field_manager`.
///
/// # Errors
/// An invalid stack name, no usable cluster, or a component that does not load.
pub async fn open(
    global: &GlobalArgs,
    printer: &Printer,
    watch_timeout: Duration,
    scope: &[Resource],
    field_manager: Option<&str>,
    concurrency: usize,
) -> anyhow::Result<Session> {
    check_stack_name(&global.stack)?;
    let connected = connect(&connect_options(global, Some(concurrency))).await?;
    printer.note(format!("using {}", connected.description));
    let cluster = connected.identity().await?;
    let mut registries = Registries::new(global);
    let (source, runtime_name) = match &global.component {
        Some(arg) => registries.source(arg, printer).await?,
        None => (ComponentSource::Default, "built-in".to_owned()),
    };
    let mut links = Vec::new();
    for arg in &global.middleware {
        links.push((arg.name(), registries.source(arg, printer).await?));
    }
    let mut engine = EngineOptions::default();
    engine.max_instances = engine
        .max_instances
        .max(u32::try_from(concurrency).unwrap_or(u32::MAX));
    engine.limits.call_timeout = engine
        .limits
        .call_timeout
        .max(watch_timeout + Duration::from_secs(30));
    let components: Vec<String> = links
        .iter()
        .map(|(_, (_, recorded))| recorded.clone())
        .chain([runtime_name])
        .collect();
    let mut chain = ComponentRuntime::builder(source);
    for middleware in middleware(global, links, &engine)? {
        chain = chain.middleware(middleware);
    }
    let runtime = chain
        .build(connected.cluster.clone(), &engine)
        .await
        .with_context(|| match (&global.component, global.middleware.is_empty()) {
            (_, false) => {
                "failed to load the chain (the --middleware components, then the runtime)"
                    .to_owned()
            }
            (Some(c), true) => format!("failed to load the runtime component {c}"),
            (None, true) => "failed to load the built-in runtime component".to_owned(),
        })?;
    let backend: Box<dyn StateBackend> = match global.state {
        StateArg::Local => Box::new(local_backend(global)),
        StateArg::Kubernetes => {
            let namespace = global
                .state_namespace
                .clone()
                .unwrap_or_else(|| connected.cluster.default_namespace().to_owned());
            Box::new(KubernetesBackend::new(
                connected.cluster.client().clone(),
                &namespace,
            ))
        }
    };
    // The capability policy: by default exactly the namespaces and kinds of
    // the resources in scope (the input and the stack's recorded state).
    // Whether the state is of this cluster is checked where it is loaded for
    // use (Session::load_state), before anything is written.
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
        cluster,
        components,
        _connected: connected,
    })
}

/// The `--middleware` links, outermost first, each named after its file's
/// stem or its repository's last segment, with the runtime's limits (so its wall-clock limit covers the
/// runtime's) and the cluster access `--middleware-policy` grants it: none
/// without.
///
/// # Errors
/// A `--middleware-policy` naming no middleware, or a policy file that
/// cannot be read or parsed.
fn middleware(
    global: &GlobalArgs,
    links: Vec<(String, (ComponentSource, String))>,
    engine: &EngineOptions,
) -> anyhow::Result<Vec<Middleware>> {
    let mut links: Vec<Middleware> = links
        .into_iter()
        .map(|(name, (source, _))| Middleware {
            limits: engine.limits.clone(),
            ..Middleware::new(name, source)
        })
        .collect();
    for (name, file) in &global.middleware_policies {
        let named: Vec<&mut Middleware> = links.iter_mut().filter(|m| &m.name == name).collect();
        if named.is_empty() {
            let names: Vec<String> = global
                .middleware
                .iter()
                .map(|m| format!("`{}`", m.name()))
                .collect();
            anyhow::bail!(
                "--middleware-policy {name}={}: no --middleware is named `{name}` (a middleware \
                 is named after its file's stem; the chain has {})",
                file.display(),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
        let policy = Policy::load(file)?;
        for m in named {
            m.policy = policy.clone();
        }
    }
    Ok(links)
}

/// The runtime's apply mode for `--mode`.
pub fn apply_mode(global: &GlobalArgs) -> ApplyMode {
    match global.mode {
        ModeArg::ServerSide => ApplyMode::ServerSide,
        ModeArg::ClientSide => ApplyMode::ClientSideThreeWay,
    }
}

/// Opens a session that only reads and keeps states: no watch, no field
/// manager, the host's default number of requests in flight, and `scope` in
/// the policy's scope.
///
/// # Errors
/// As [`open`].
pub async fn open_reading(
    global: &GlobalArgs,
    printer: &Printer,
    scope: &[Resource],
) -> anyhow::Result<Session> {
    let in_flight = krt_host::DEFAULT_MAX_IN_FLIGHT;
    open(global, printer, Duration::ZERO, scope, None, in_flight).await
}

/// [`open_targets`] for a command that only reads the targets (no watch, the
/// host's default number of requests in flight).
///
/// # Errors
/// As [`open_targets`].
pub async fn open_read_targets(
    global: &GlobalArgs,
    printer: &Printer,
    files: &StateOrInputArgs,
) -> anyhow::Result<Option<(Session, State, Targets)>> {
    let in_flight = krt_host::DEFAULT_MAX_IN_FLIGHT;
    open_targets(global, printer, files, Duration::ZERO, in_flight).await
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
    files: &StateOrInputArgs,
    watch_timeout: Duration,
    concurrency: usize,
) -> anyhow::Result<Option<(Session, State, Targets)>> {
    let input = if files.files.is_empty() {
        None
    } else {
        let args = InputArgs {
            files: files.files.clone(),
        };
        match load_stack(&args, printer) {
            Some(stack) => Some(stack),
            None => return Ok(None),
        }
    };
    let scope = input
        .as_ref()
        .map(|s| s.resources.as_slice())
        .unwrap_or_default();
    let session = open(global, printer, watch_timeout, scope, None, concurrency).await?;
    let state = session.load_state(&global.stack, printer).await?;
    let targets = krt_stack::targets(input.as_ref(), &state);
    Ok(Some((session, state, targets)))
}

/// The registries of a run, set up on first use from the global options:
/// `--insecure-registry`, `--registry-ca`, `--verify-key` and the user's
/// Docker credentials.
pub struct Registries<'a> {
    global: &'a GlobalArgs,
    store: Option<OciStore>,
}

impl<'a> Registries<'a> {
    /// Nothing set up yet.
    pub fn new(global: &'a GlobalArgs) -> Self {
        Registries {
            global,
            store: None,
        }
    }

    /// The store, built on first use.
    ///
    /// # Errors
    /// An unreadable credentials file, CA file or cache directory.
    pub fn store(&mut self) -> anyhow::Result<&OciStore> {
        if self.store.is_none() {
            let credentials = RegistryCredentials::from_user_config()
                .context("cannot read the registry credentials file")?;
            let keys = self
                .global
                .verify_keys
                .iter()
                .map(|path| VerifyKey::from_file(path))
                .collect::<Result<Vec<_>, _>>()?;
            self.store = Some(OciStore::new(OciOptions {
                insecure_registries: self.global.insecure_registries.clone(),
                ca_certificates: self.global.registry_cas.clone(),
                credentials,
                verification: VerificationPolicy::require(keys),
                ..OciOptions::default()
            })?);
        }
        Ok(self.store.as_ref().expect("set above"))
    }

    /// `arg` as a component source and as a state records it. A registry
    /// component is fetched now (a tag resolved to its digest, which is
    /// printed) and loaded by that digest, from the cache.
    ///
    /// # Errors
    /// As [`OciStore::fetch`].
    pub async fn source(
        &mut self,
        arg: &ComponentArg,
        printer: &Printer,
    ) -> anyhow::Result<(ComponentSource, String)> {
        match arg {
            ComponentArg::File(path) => Ok((
                ComponentSource::File(path.clone()),
                path.display().to_string(),
            )),
            ComponentArg::Oci(reference) => {
                let store = self.store()?.clone();
                let fetched = store.fetch(reference).await?;
                printer.note(format!(
                    "component {reference}: {} ({}, {} bytes)",
                    fetched.digest,
                    if fetched.cached { "cached" } else { "pulled" },
                    fetched.component.len()
                ));
                let recorded = fetched.pinned.to_string();
                Ok((
                    ComponentSource::Oci {
                        reference: fetched.pinned,
                        store,
                    },
                    recorded,
                ))
            }
        }
    }
}
