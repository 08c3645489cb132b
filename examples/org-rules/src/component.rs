//! The wasm32 component glue, after `guest/src/component.rs`: binds the
//! `guest` library's [`Cluster`], [`WatchStream`] and [`HostServices`] to the
//! WIT imports, and exports `runtime`: `apply` checks the plan against
//! [`rules`](crate::rules) first, everything else goes straight to the library.

use guest::cluster::{Cluster, HostServices, WatchStream};
use guest::model as m;
use serde_json::Value;

wit_bindgen::generate!({ path: "../../wit", world: "kubernetes-runtime" });

use exports::kusion::runtime::runtime as rt;
use kusion::runtime::{host, kubernetes as k8s, types as t};

/// The component: exports `runtime`.
struct Component;

export!(Component);

/// The WIT imports as the library's cluster and host services.
struct Imports;

/// Maps between two enums with the same variant names.
macro_rules! map_enum {
    ($value:expr, $from:ident::$fty:ident => $to:ident::$tty:ident { $($variant:ident),* $(,)? }) => {
        match $value { $($from::$fty::$variant => $to::$tty::$variant,)* }
    };
}

// ---- values in ----

fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text)
}

fn resource_in(r: t::Resource) -> Result<m::Resource, m::Status> {
    let bad = |what: &str, e: serde_json::Error| {
        guest::errors::illegal_manifest(format!(
            "resource '{}': {what} is not valid JSON: {e}",
            r.id
        ))
    };
    let attributes = parse(&r.attributes).map_err(|e| bad("attributes", e))?;
    let extensions = match r.extensions.trim() {
        "" => Value::Object(Default::default()),
        text => parse(text).map_err(|e| bad("extensions", e))?,
    };
    Ok(m::Resource {
        id: r.id,
        type_: r.type_,
        attributes,
        depends_on: r.depends_on,
        extensions,
    })
}

fn resources_in(
    a: Option<t::Resource>,
    b: Option<t::Resource>,
) -> Result<(Option<m::Resource>, Option<m::Resource>), m::Status> {
    Ok((
        a.map(resource_in).transpose()?,
        b.map(resource_in).transpose()?,
    ))
}

fn policy_in(p: t::PropagationPolicy) -> m::PropagationPolicy {
    map_enum!(p, t::PropagationPolicy => m::PropagationPolicy { Background, Foreground, Orphan })
}

fn error_in(e: k8s::ApiError) -> m::ApiError {
    m::ApiError {
        source: map_enum!(e.source, k8s::ErrorSource => m::ErrorSource { Api, Transport, Timeout, Policy, Limit }),
        code: e.code,
        reason: e.reason,
        message: e.message,
        causes: e
            .causes
            .into_iter()
            .map(|c| m::Cause {
                field: c.field,
                reason: c.reason,
                message: c.message,
            })
            .collect(),
        retry_after_seconds: e.retry_after_seconds,
    }
}

fn object_in(text: &str) -> Result<Value, m::ApiError> {
    parse(text).map_err(|e| {
        m::ApiError::api(
            500,
            "InternalError",
            format!("the host returned an object that is not valid JSON: {e}"),
        )
    })
}

// ---- values out ----

fn resource_out(r: m::Resource) -> t::Resource {
    t::Resource {
        id: r.id,
        type_: r.type_,
        attributes: r.attributes.to_string(),
        depends_on: r.depends_on,
        extensions: if r.extensions.is_null() {
            "{}".to_owned()
        } else {
            r.extensions.to_string()
        },
    }
}

fn status_out(s: m::Status) -> t::Status {
    t::Status {
        kind: map_enum!(s.kind, m::StatusKind => t::StatusKind { Error, Warning, Info }),
        code: map_enum!(s.code, m::StatusCode => t::StatusCode { Unknown, Unavailable, Unimplemented, Canceled, InvalidArgument, NotFound, AlreadyExists, PermissionDenied, Internal, Unauthenticated, IllegalManifest, Conflict, FieldConflict, ImmutableField, Throttled, KindNotInstalled, Timeout, Invalid, BadRequest, NamespaceTerminating, Unsupported, TooLarge, ServerError, Unreachable, LimitExceeded }),
        reason: s.reason,
        message: s.message,
        retryable: s.retryable,
        causes: s
            .causes
            .into_iter()
            .map(|c| t::Cause {
                field: c.field,
                reason: c.reason,
                message: c.message,
            })
            .collect(),
        retry_after_ms: s.retry_after_ms,
    }
}

fn health_out(h: m::Health) -> t::Health {
    t::Health {
        state: map_enum!(h.state, m::HealthState => t::HealthState { NotFound, Terminating, InProgress, Current, Failed, Unknown }),
        reason: h.reason,
        message: h.message,
    }
}

fn patch_type_out(p: m::PatchType) -> t::PatchType {
    map_enum!(p, m::PatchType => t::PatchType { JsonMerge, StrategicMerge, Apply, JsonPatch })
}

fn api_out(a: &m::ApiResource) -> k8s::ApiResource {
    k8s::ApiResource {
        group: a.group.clone(),
        version: a.version.clone(),
        kind: a.kind.clone(),
        plural: a.plural.clone(),
        namespaced: a.namespaced,
    }
}

// ---- imports ----

/// A WIT watch stream as the library's [`WatchStream`].
struct Stream(k8s::WatchStream);

impl WatchStream for Stream {
    fn next(&mut self, timeout_ms: u32) -> Result<Option<m::WatchEvent>, m::ApiError> {
        let Some(event) = self.0.next(timeout_ms).map_err(error_in)? else {
            return Ok(None);
        };
        Ok(Some(m::WatchEvent {
            type_: map_enum!(event.type_, k8s::EventType => m::EventType { Added, Modified, Deleted, Bookmark }),
            object: object_in(&event.object)?,
        }))
    }
}

impl Cluster for Imports {
    type Watch = Stream;

    fn resolve(&self, api_version: &str, kind: &str) -> Result<m::ApiResource, m::ApiError> {
        let a = k8s::resolve(api_version, kind).map_err(error_in)?;
        Ok(m::ApiResource {
            group: a.group,
            version: a.version,
            kind: a.kind,
            plural: a.plural,
            namespaced: a.namespaced,
        })
    }

    fn get(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, m::ApiError> {
        k8s::get(&api_out(r), ns, name)
            .map_err(error_in)?
            .as_deref()
            .map(object_in)
            .transpose()
    }

    fn create(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        object: &Value,
        o: &m::CreateOptions,
    ) -> Result<Value, m::ApiError> {
        let options = k8s::CreateOptions {
            dry_run: o.dry_run,
            field_manager: o.field_manager.clone(),
        };
        object_in(&k8s::create(&api_out(r), ns, &object.to_string(), &options).map_err(error_in)?)
    }

    fn patch(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        name: &str,
        ty: m::PatchType,
        body: &Value,
        o: &m::PatchOptions,
    ) -> Result<Value, m::ApiError> {
        let options = k8s::PatchOptions {
            dry_run: o.dry_run,
            field_manager: o.field_manager.clone(),
            force: o.force,
        };
        object_in(
            &k8s::patch(
                &api_out(r),
                ns,
                name,
                patch_type_out(ty),
                &body.to_string(),
                &options,
            )
            .map_err(error_in)?,
        )
    }

    fn delete(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        name: &str,
        o: &m::DeleteOptions,
    ) -> Result<Option<Value>, m::ApiError> {
        let options = k8s::DeleteOptions {
            dry_run: o.dry_run,
            propagation_policy: o.propagation_policy.map(|p| map_enum!(p, m::PropagationPolicy => t::PropagationPolicy { Background, Foreground, Orphan })),
            preconditions: o.preconditions.clone().map(|p| k8s::Preconditions {
                uid: p.uid,
                resource_version: p.resource_version,
            }),
            grace_period_seconds: o.grace_period_seconds,
        };
        k8s::delete(&api_out(r), ns, name, &options)
            .map_err(error_in)?
            .as_deref()
            .map(object_in)
            .transpose()
    }

    fn list(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        o: &m::ListOptions,
    ) -> Result<m::ObjectList, m::ApiError> {
        let options = k8s::ListOptions {
            label_selector: o.label_selector.clone(),
            field_selector: o.field_selector.clone(),
            limit: o.limit,
            continue_token: o.continue_token.clone(),
        };
        let list = k8s::list(&api_out(r), ns, &options).map_err(error_in)?;
        Ok(m::ObjectList {
            items: list
                .items
                .iter()
                .map(|i| object_in(i))
                .collect::<Result<_, _>>()?,
            resource_version: list.resource_version,
            continue_token: list.continue_token,
        })
    }

    fn watch(
        &self,
        r: &m::ApiResource,
        ns: Option<&str>,
        o: &m::WatchOptions,
    ) -> Result<Stream, m::ApiError> {
        let options = k8s::WatchOptions {
            label_selector: o.label_selector.clone(),
            field_selector: o.field_selector.clone(),
            resource_version: o.resource_version.clone(),
            timeout_seconds: o.timeout_seconds,
            allow_bookmarks: o.allow_bookmarks,
        };
        k8s::watch(&api_out(r), ns, &options)
            .map(Stream)
            .map_err(error_in)
    }
}

impl HostServices for Imports {
    fn log(&self, level: m::LogLevel, message: &str, fields: &[(&str, &str)]) {
        let level =
            map_enum!(level, m::LogLevel => host::LogLevel { Trace, Debug, Info, Warn, Error });
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        host::log(level, message, &fields);
    }

    fn progress(&self, e: &m::Progress) {
        host::progress(&host::ProgressEvent {
            id: e.id.clone(),
            phase: e.phase.clone(),
            message: e.message.clone(),
            health: e.health.clone().map(health_out),
        });
    }

    fn sleep(&self, ms: u32) {
        host::sleep(ms);
    }
}

// ---- exports ----

impl rt::Guest for Component {
    fn apply(
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        o: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let options = m::ApplyOptions {
            dry_run: o.dry_run,
            mode: map_enum!(o.mode, rt::ApplyMode => m::ApplyMode { ServerSide, ClientSideThreeWay }),
            field_manager: o.field_manager,
            force: o.force,
            replace_on_immutable: o.replace_on_immutable,
            default_namespace: o.default_namespace,
            offline: o.offline,
            ignore_paths: o.ignore_paths,
        };
        let rejected = |status| m::ApplyResponse {
            resource: None,
            live: None,
            action: m::Action::Unchanged,
            status: Some(status),
            retries: 0,
        };
        let r = match resources_in(prior, plan) {
            // The organisation's rules come first: a violating plan never reaches the cluster.
            Ok((prior, plan)) => match plan
                .as_ref()
                .and_then(|p| crate::rules::check(&p.id, &p.attributes))
            {
                Some(violation) => rejected(violation),
                None => guest::runtime::apply(
                    &Imports,
                    &Imports,
                    prior.as_ref(),
                    plan.as_ref(),
                    &options,
                ),
            },
            Err(status) => rejected(status),
        };
        rt::ApplyResponse {
            resource: r.resource.map(resource_out),
            live: r.live.map(|v| v.to_string()),
            action: map_enum!(r.action, m::Action => rt::Action { Create, Update, Unchanged, Delete, Replace }),
            status: r.status.map(status_out),
            retries: r.retries,
        }
    }

    fn read(
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        o: rt::ReadOptions,
    ) -> rt::ReadResponse {
        let options = m::ReadOptions {
            default_namespace: o.default_namespace,
        };
        let r = match resources_in(prior, plan) {
            Ok((prior, plan)) => {
                guest::runtime::read(&Imports, prior.as_ref(), plan.as_ref(), &options)
            }
            Err(status) => m::ReadResponse {
                resource: None,
                status: Some(status),
            },
        };
        rt::ReadResponse {
            resource: r.resource.map(resource_out),
            status: r.status.map(status_out),
        }
    }

    fn delete(resource: t::Resource, o: rt::DeleteOptions) -> rt::DeleteResponse {
        let options = m::DeleteRequest {
            dry_run: o.dry_run,
            propagation_policy: o.propagation_policy.map(policy_in),
            default_namespace: o.default_namespace,
        };
        let status = match resource_in(resource) {
            Ok(resource) => guest::runtime::delete(&Imports, &resource, &options).status,
            Err(status) => Some(status),
        };
        rt::DeleteResponse {
            status: status.map(status_out),
        }
    }

    fn watch(resource: t::Resource, o: rt::WatchOptions) -> rt::WatchResponse {
        let options = m::WatchRequest {
            timeout_ms: o.timeout_ms,
            default_namespace: o.default_namespace,
        };
        let r = match resource_in(resource) {
            Ok(resource) => guest::runtime::watch(&Imports, &Imports, &resource, &options),
            Err(status) => m::WatchResponse {
                resource: None,
                health: m::Health::new(
                    m::HealthState::Unknown,
                    status.reason.clone(),
                    status.message.clone(),
                ),
                status: Some(status),
            },
        };
        rt::WatchResponse {
            resource: r.resource.map(resource_out),
            health: health_out(r.health),
            status: r.status.map(status_out),
        }
    }
}
