//! The imports called as a guest would call them, with no component and no
//! wasm: a store's state over krt-sim, each import a method of its view
//! (Spin's factors-test style). Policy refusals, the request budget and the
//! host-call limit, the mapping of cluster errors, watch streams in the
//! resource table, and a middleware's next link (a stand-in [`NextLink`]).

use crate::bindings::kubernetes::{
    self as k, ApiResource, CreateOptions, ErrorSource, Host as _, HostWatchStream as _,
};
use crate::bindings::next::{self, Host as _};
use crate::bindings::types as t;
use crate::cluster::KubeCluster;
use crate::link::{BoxFuture, Limits, LinkSettings, NextLink, Role};
use crate::policy::Policy;
use crate::state::{HostState, LimitHit};
use krt_stack::{Event, EventSink};
use krt_testkit::{TestCluster, assert_contains};
use std::sync::{Arc, Mutex};
use wasmtime::component::Resource;

/// A store's state for a link of `role` under `policy` and `limits`, over `sim`.
fn state(
    sim: &TestCluster,
    role: Role,
    policy: Policy,
    limits: Limits,
    next: Option<Arc<dyn NextLink>>,
) -> HostState {
    let cluster = Arc::new(KubeCluster::new(sim.client.clone(), "default"));
    let events: Arc<dyn EventSink> = Arc::new(|_: &Event<'_>| {});
    let link = Arc::new(LinkSettings {
        role,
        limits,
        policy: Arc::new(policy),
    });
    HostState::new(cluster, events, link, next)
}

/// A policy of ConfigMaps in `team-a`.
fn team_a() -> Policy {
    Policy {
        namespaces: vec!["team-a".into()],
        kinds: vec!["ConfigMap".into()],
        ..Policy::unrestricted()
    }
}

/// A simulator with namespace `team-a`, and a runtime's state under [`team_a`].
async fn team_a_runtime() -> (TestCluster, HostState) {
    let sim = TestCluster::start().await;
    sim.create_namespace("team-a").await;
    let state = state(&sim, Role::Runtime, team_a(), Limits::default(), None);
    (sim, state)
}

fn configmaps() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    }
}

fn configmap(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"k":"v"}}}}"#
    )
}

fn create_options() -> CreateOptions {
    CreateOptions {
        dry_run: false,
        field_manager: None,
    }
}

/// Reads ConfigMap `namespace/name` through the `kubernetes` import of `s`.
async fn get_configmap(
    s: &mut HostState,
    namespace: &str,
    name: &str,
) -> wasmtime::Result<Result<Option<String>, k::ApiError>> {
    s.krt_view()
        .get(configmaps(), Some(namespace.into()), name.into())
        .await
}

/// The API error an import answered (not a trap), checked to be `code` and
/// `reason` from `source`.
#[track_caller]
fn api_error<T: std::fmt::Debug>(
    answer: wasmtime::Result<Result<T, k::ApiError>>,
    code: u16,
    reason: &str,
    source: ErrorSource,
) -> k::ApiError {
    let err = answer.unwrap().unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str(), err.source),
        (code, reason, source)
    );
    err
}

/// Requests the simulator answered whose path names `name`.
fn asked(sim: &TestCluster, name: &str) -> Vec<String> {
    sim.sim()
        .requests()
        .iter()
        .filter(|(_, path, _)| path.contains(name))
        .map(|(verb, path, _)| format!("{verb} {path}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_policy_refuses_never_reaches_the_cluster() {
    let sim = TestCluster::start().await;
    sim.create_namespace("team-b").await;
    let mut runtime = state(&sim, Role::Runtime, team_a(), Limits::default(), None);
    let refused = get_configmap(&mut runtime, "team-b", "theirs")
        .await
        .expect("no trap")
        .unwrap_err();
    assert_eq!((refused.code, refused.source), (403, ErrorSource::Policy));
    assert_contains(&refused.message, "team-b");
    assert_contains(&refused.message, "--allow-namespace team-b");
    assert_eq!(asked(&sim, "theirs"), Vec::<String>::new());
    // A middleware's refusal names it, and how to grant it.
    let role = Role::Middleware {
        name: "rules".into(),
        position: 1,
        links: 2,
    };
    let mut middleware = state(&sim, role, Policy::default(), Limits::default(), None);
    let refused = get_configmap(&mut middleware, "team-a", "mine")
        .await
        .expect("no trap")
        .unwrap_err();
    assert!(
        refused
            .message
            .starts_with("middleware `rules` (link 1 of 2): krt's policy denies"),
        "{}",
        refused.message
    );
    assert_contains(&refused.message, "--middleware-policy rules=FILE");
    assert_eq!(asked(&sim, "mine"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_budget_and_the_host_call_limit_hold() {
    let sim = TestCluster::start().await;
    sim.create_namespace("team-a").await;
    let budget = Policy {
        max_requests: 2,
        ..team_a()
    };
    let mut s = state(&sim, Role::Runtime, budget, Limits::default(), None);
    for name in ["a", "b"] {
        let found = get_configmap(&mut s, "team-a", name).await.unwrap();
        assert_eq!(found.map_err(|e| e.code), Ok(None));
    }
    let spent = get_configmap(&mut s, "team-a", "c").await;
    let spent = api_error(spent, 429, "RequestBudgetExceeded", ErrorSource::Limit);
    assert_contains(&spent.message, "--max-requests N");
    assert_eq!(asked(&sim, "configmaps/c"), Vec::<String>::new());

    let limits = Limits {
        max_host_calls: 1,
        ..Limits::default()
    };
    let mut s = state(&sim, Role::Runtime, team_a(), limits, None);
    let first = get_configmap(&mut s, "team-a", "a").await;
    assert!(first.is_ok());
    let trapped = get_configmap(&mut s, "team-a", "a").await;
    assert!(trapped.is_err(), "the second call traps");
    assert_eq!(s.limit_hit(), Some(LimitHit::HostCalls(1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_answers_map_to_values_and_api_errors() {
    let (_sim, mut s) = team_a_runtime().await;
    let mut view = s.krt_view();
    let ns = || Some("team-a".to_owned());
    let missing = view.get(configmaps(), ns(), "x".into()).await.unwrap();
    assert_eq!(missing.map_err(|e| e.code), Ok(None), "404 is none");
    let created = view
        .create(configmaps(), ns(), configmap("x"), create_options())
        .await
        .unwrap()
        .expect("created");
    assert_contains(&created, r#""uid""#);
    let again = view
        .create(configmaps(), ns(), configmap("x"), create_options())
        .await;
    api_error(again, 409, "AlreadyExists", ErrorSource::Api);
    let invalid = view
        .create(
            configmaps(),
            ns(),
            configmap("Not_A_Name"),
            create_options(),
        )
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!((invalid.code, invalid.reason.as_str()), (422, "Invalid"));
    assert!(
        !invalid.causes.is_empty(),
        "the causes are kept: {invalid:?}"
    );
    // The host resolves the kind: a guest's wrong plural or scope is not trusted.
    let lying = ApiResource {
        plural: "secrets".into(),
        namespaced: false,
        ..configmaps()
    };
    let found = view.get(lying, ns(), "x".into()).await.unwrap();
    assert!(
        found.expect("found").is_some(),
        "read as the ConfigMap it is"
    );
    // A kind the cluster does not serve.
    let unknown = view
        .resolve("example.com/v1".into(), "Widget".into())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(unknown.code, 404, "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_is_a_resource_of_the_store_that_delivers_events() {
    let (_sim, mut s) = team_a_runtime().await;
    let mut view = s.krt_view();
    // Only ours: the namespace's kube-root-ca.crt comes at a time of its own.
    let options = k::WatchOptions {
        label_selector: Some("watched=yes".into()),
        field_selector: None,
        resource_version: None,
        timeout_seconds: Some(30),
        allow_bookmarks: false,
    };
    let stream = k::Host::watch(&mut view, configmaps(), Some("team-a".into()), options)
        .await
        .unwrap()
        .expect("a watch");
    let rep = stream.rep();
    let labelled = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w","labels":{"watched":"yes"}}}"#;
    view.create(
        configmaps(),
        Some("team-a".into()),
        labelled.into(),
        create_options(),
    )
    .await
    .unwrap()
    .expect("created");
    let event = view
        .next(Resource::new_borrow(rep), 5_000)
        .await
        .unwrap()
        .expect("no error")
        .expect("an event");
    assert_eq!(event.type_, k::EventType::Added);
    assert_contains(&event.object, r#""name":"w""#);
    // Nothing more: the wait ends empty, within the time asked.
    let quiet = view.next(Resource::new_borrow(rep), 200).await.unwrap();
    assert!(matches!(quiet, Ok(None)), "{quiet:?}");
    view.drop(stream).await.unwrap();
    assert!(
        view.next(Resource::new_borrow(rep), 10).await.is_err(),
        "a dropped stream is gone from the table"
    );
}

/// A next link that answers every apply with what it was handed, counting calls.
#[derive(Default)]
struct Echo {
    applied: Mutex<Vec<String>>,
}

impl NextLink for Echo {
    fn apply(
        &self,
        _: Option<t::Resource>,
        plan: Option<t::Resource>,
        _: next::ApplyOptions,
    ) -> BoxFuture<'_, next::ApplyResponse> {
        Box::pin(async move {
            if let Some(plan) = &plan {
                self.applied.lock().unwrap().push(plan.id.clone());
            }
            next::ApplyResponse {
                resource: plan,
                live: None,
                action: next::Action::Create,
                status: None,
                retries: 0,
            }
        })
    }

    fn read(
        &self,
        _: Option<t::Resource>,
        _: Option<t::Resource>,
        _: next::ReadOptions,
    ) -> BoxFuture<'_, next::ReadResponse> {
        Box::pin(async { unreachable!("the tests read nothing") })
    }

    fn delete(
        &self,
        _: t::Resource,
        _: next::DeleteOptions,
    ) -> BoxFuture<'_, next::DeleteResponse> {
        Box::pin(async { unreachable!("the tests delete nothing") })
    }

    fn watch(&self, _: t::Resource, _: next::WatchOptions) -> BoxFuture<'_, next::WatchResponse> {
        Box::pin(async { unreachable!("the tests watch nothing") })
    }
}

fn apply_options() -> next::ApplyOptions {
    next::ApplyOptions {
        dry_run: true,
        mode: next::ApplyMode::ServerSide,
        field_manager: None,
        force: false,
        replace_on_immutable: false,
        default_namespace: None,
        offline: false,
        ignore_paths: Vec::new(),
    }
}

fn wit_resource(id: &str, attributes: &str) -> t::Resource {
    t::Resource {
        id: id.into(),
        type_: "Kubernetes".into(),
        attributes: attributes.into(),
        depends_on: Vec::new(),
        extensions: "{}".into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_middleware_hands_on_to_its_next_link_only_what_parses() {
    let sim = TestCluster::start().await;
    let echo = Arc::new(Echo::default());
    let role = Role::Middleware {
        name: "rules".into(),
        position: 1,
        links: 2,
    };
    let next: Arc<dyn NextLink> = echo.clone();
    let mut s = state(&sim, role, Policy::default(), Limits::default(), Some(next));
    let mut view = s.krt_view();
    let plan = wit_resource("v1:ConfigMap:a:x", &configmap("x"));
    let answer = view.apply(None, Some(plan), apply_options()).await.unwrap();
    assert!(answer.status.is_none(), "{:?}", answer.status);
    assert_eq!(
        answer.resource.expect("the plan back").id,
        "v1:ConfigMap:a:x"
    );
    let broken = wit_resource("v1:ConfigMap:a:y", "{not json");
    let answer = view
        .apply(None, Some(broken), apply_options())
        .await
        .unwrap();
    let status = answer.status.expect("a status");
    assert_eq!(status.reason, "MiddlewareInvalidRequest");
    assert!(
        status.message.starts_with(
            "middleware `rules` (link 1 of 2) handed an invalid request to the next link's \
             runtime.apply"
        ),
        "{}",
        status.message
    );
    assert_eq!(
        *echo.applied.lock().unwrap(),
        ["v1:ConfigMap:a:x"],
        "what does not parse never reaches the next link"
    );
    // The runtime at the end of a chain has no next link: a call traps.
    let mut runtime = state(
        &sim,
        Role::Runtime,
        Policy::default(),
        Limits::default(),
        None,
    );
    let plan = wit_resource("v1:ConfigMap:a:x", &configmap("x"));
    let trapped = runtime
        .krt_view()
        .apply(None, Some(plan), apply_options())
        .await;
    assert!(trapped.is_err());
}
