//! States as Secrets, like Helm's release storage: `krt-state-<stack>` holds
//! the state JSON under `data.state`; writes carry the resourceVersion last
//! seen, so a concurrent writer is detected. The lock is a second Secret,
//! `krt-lock-<stack>`, created for the run (the create fails when another run
//! holds it) and deleted at its end.

use futures::future::BoxFuture;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use krt_stack::state::{State, StateBackend, StateError, StateLock, lock_holder};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The label every krt state and lock Secret has.
const STACK_LABEL: &str = "krt.dev/stack";
/// The Secret type of states.
const STATE_TYPE: &str = "krt.dev/state.v1";
/// The Secret type of locks.
const LOCK_TYPE: &str = "krt.dev/lock.v1";

/// States in Secrets of one namespace.
pub struct KubernetesBackend {
    api: Api<Secret>,
    namespace: String,
    /// The resourceVersion of each stack's Secret as last read or written.
    versions: Mutex<BTreeMap<String, String>>,
}

/// A lock Secret created by this run.
struct LockSecret {
    api: Api<Secret>,
    namespace: String,
    name: String,
}

fn state_name(stack: &str) -> String {
    format!("krt-state-{stack}")
}

fn lock_name(stack: &str) -> String {
    format!("krt-lock-{stack}")
}

fn secret(name: &str, stack: &str, type_: &str, key: &str, value: Vec<u8>) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([
                ("app.kubernetes.io/managed-by".to_owned(), "krt".to_owned()),
                (STACK_LABEL.to_owned(), stack.to_owned()),
            ])),
            ..ObjectMeta::default()
        },
        type_: Some(type_.to_owned()),
        data: Some(BTreeMap::from([(key.to_owned(), ByteString(value))])),
        ..Secret::default()
    }
}

impl KubernetesBackend {
    /// States in Secrets of `namespace`, through `client`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        KubernetesBackend {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            versions: Mutex::new(BTreeMap::new()),
        }
    }

    fn err(&self, action: &'static str, name: &str) -> impl FnOnce(kube::Error) -> StateError {
        let what = format!("Secret {}/{name}", self.namespace);
        move |source| StateError::Store {
            action,
            what,
            source: Box::new(source),
        }
    }

    async fn load(&self, stack: &str) -> Result<State, StateError> {
        let name = state_name(stack);
        let Some(found) = self
            .api
            .get_opt(&name)
            .await
            .map_err(self.err("read", &name))?
        else {
            self.versions.lock().expect("versions lock").remove(stack);
            return Ok(State::empty(stack));
        };
        let what = format!("Secret {}/{name}", self.namespace);
        let bytes = found
            .data
            .as_ref()
            .and_then(|d| d.get("state"))
            .map(|b| b.0.as_slice())
            .ok_or_else(|| StateError::Corrupt {
                what: what.clone(),
                message: "it has no `state` key".into(),
            })?;
        let state = State::decode(bytes, &what)?;
        if let Some(rv) = found.metadata.resource_version {
            self.versions
                .lock()
                .expect("versions lock")
                .insert(stack.to_owned(), rv);
        }
        Ok(state)
    }

    async fn save(&self, state: &State) -> Result<(), StateError> {
        let name = state_name(&state.stack);
        let body = serde_json::to_vec(state).expect("a state serializes");
        let mut object = secret(&name, &state.stack, STATE_TYPE, "state", body);
        let known = self
            .versions
            .lock()
            .expect("versions lock")
            .get(&state.stack)
            .cloned();
        let written = match known {
            Some(rv) => {
                object.metadata.resource_version = Some(rv);
                self.api
                    .replace(&name, &PostParams::default(), &object)
                    .await
                    .map_err(self.err("update", &name))?
            }
            None => self
                .api
                .create(&PostParams::default(), &object)
                .await
                .map_err(self.err("create", &name))?,
        };
        if let Some(rv) = written.metadata.resource_version {
            self.versions
                .lock()
                .expect("versions lock")
                .insert(state.stack.clone(), rv);
        }
        Ok(())
    }

    async fn lock(&self, stack: &str) -> Result<LockSecret, StateError> {
        let name = lock_name(stack);
        let object = secret(
            &name,
            stack,
            LOCK_TYPE,
            "holder",
            lock_holder().into_bytes(),
        );
        match self.api.create(&PostParams::default(), &object).await {
            Ok(_) => Ok(LockSecret {
                api: self.api.clone(),
                namespace: self.namespace.clone(),
                name,
            }),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let holder = match self.api.get_opt(&name).await {
                    Ok(Some(s)) => s
                        .data
                        .and_then(|d| {
                            d.get("holder")
                                .map(|h| String::from_utf8_lossy(&h.0).into_owned())
                        })
                        .unwrap_or_else(|| "holder unknown".into()),
                    _ => "holder unknown".into(),
                };
                Err(StateError::Locked {
                    stack: stack.to_owned(),
                    holder: format!("{holder}; lock Secret {}/{name}", self.namespace),
                })
            }
            Err(e) => Err(self.err("create", &name)(e)),
        }
    }

    async fn unlock(&self, stack: &str) -> Result<bool, StateError> {
        let name = lock_name(stack);
        match self.api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(e) => Err(self.err("delete", &name)(e)),
        }
    }

    async fn list(&self) -> Result<Vec<String>, StateError> {
        let params = ListParams::default().labels(STACK_LABEL);
        let list = self
            .api
            .list(&params)
            .await
            .map_err(self.err("list", "krt-state-*"))?;
        let mut stacks: Vec<String> = list
            .items
            .into_iter()
            .filter(|s| s.type_.as_deref() == Some(STATE_TYPE))
            .filter_map(|s| s.metadata.labels?.get(STACK_LABEL).cloned())
            .collect();
        stacks.sort();
        Ok(stacks)
    }
}

impl StateLock for LockSecret {
    fn release(self: Box<Self>) -> BoxFuture<'static, Result<(), StateError>> {
        Box::pin(async move {
            match self.api.delete(&self.name, &DeleteParams::default()).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
                Err(source) => Err(StateError::Store {
                    action: "delete",
                    what: format!("Secret {}/{}", self.namespace, self.name),
                    source: Box::new(source),
                }),
            }
        })
    }
}

impl StateBackend for KubernetesBackend {
    fn describe(&self, stack: &str) -> String {
        format!("Secret {}/{}", self.namespace, state_name(stack))
    }

    fn read_state<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<State, StateError>> {
        Box::pin(self.load(stack))
    }

    fn write_state<'a>(&'a self, state: &'a State) -> BoxFuture<'a, Result<(), StateError>> {
        Box::pin(self.save(state))
    }

    fn take_lock<'a>(
        &'a self,
        stack: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn StateLock>, StateError>> {
        Box::pin(async move { Ok(Box::new(self.lock(stack).await?) as Box<dyn StateLock>) })
    }

    fn remove_lock<'a>(&'a self, stack: &'a str) -> BoxFuture<'a, Result<bool, StateError>> {
        Box::pin(self.unlock(stack))
    }

    fn stacks(&self) -> BoxFuture<'_, Result<Vec<String>, StateError>> {
        Box::pin(self.list())
    }
}
