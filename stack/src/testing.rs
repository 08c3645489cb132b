//! The scripted cluster the unit tests of the apply and destroy walks run
//! against.

use crate::runtime::Runtime;
use krt_guest::model::{
    Action, ApplyOptions, ApplyResponse, DeleteRequest, Health, HealthState, ObjectDiff,
    ReadOptions, ReadResponse, Resource, Status, StatusCode, WatchRequest, WatchResponse,
};
use serde_json::{Value, json};
use std::sync::Mutex;

/// A cluster for one walk. Without `held` it is the apply walk's: writes are
/// answered with the plan as the server would return it (normalized, no
/// status) and every watch is recorded with its timeout. With `held` it is
/// destroy's: the delete of `held` is accepted but the object stays (held by
/// a finalizer) for `reads_until_gone` reads, everything else goes at once,
/// and the order of deletes is recorded. Each walk calling what the other
/// does panics.
#[derive(Default)]
pub(crate) struct FakeCluster {
    /// The ID of the object a finalizer holds after its delete (destroy).
    pub(crate) held: Option<&'static str>,
    /// How many more reads still find `held`.
    pub(crate) reads_until_gone: Mutex<usize>,
    /// The deleted IDs, in order.
    pub(crate) deleted: Mutex<Vec<String>>,
    /// The watched IDs with their timeouts, in order.
    pub(crate) watched: Mutex<Vec<(String, u32)>>,
}

impl FakeCluster {
    /// Destroy's cluster: the delete of `held` stays pending for `reads` reads.
    pub(crate) fn finalizing(held: &'static str, reads: usize) -> FakeCluster {
        FakeCluster {
            held: Some(held),
            reads_until_gone: Mutex::new(reads),
            ..FakeCluster::default()
        }
    }

    /// Panics with `why` unless this is the apply walk's cluster.
    fn applying(&self, why: &str) {
        assert!(self.held.is_none(), "{why}");
    }
}

impl Runtime for FakeCluster {
    async fn apply(
        &self,
        _: Option<&Resource>,
        plan: Option<&Resource>,
        _: &ApplyOptions,
    ) -> ApplyResponse {
        self.applying("destroy does not apply");
        let plan = plan.expect("a plan");
        ApplyResponse {
            resource: Some(Resource {
                attributes: krt_guest::normalize::normalize(&plan.attributes),
                ..plan.clone()
            }),
            live: None,
            action: Action::Create,
            status: None,
            retries: 0,
        }
    }

    async fn read(
        &self,
        prior: Option<&Resource>,
        plan: Option<&Resource>,
        _: &ReadOptions,
    ) -> ReadResponse {
        let held = self.held.expect("the apply walk does not read");
        let Some(plan) = plan else {
            // The ownership check before the delete: the object is the stack's.
            let mut live = prior.expect("the recorded resource").clone();
            live.attributes["metadata"]["labels"] = json!({"krt.dev/stack": "s"});
            return ReadResponse {
                resource: Some(live),
                status: None,
            };
        };
        assert_eq!(plan.id, held, "only a pending delete is waited for");
        let mut left = self.reads_until_gone.lock().unwrap();
        let resource = (*left > 0).then(|| {
            *left -= 1;
            let mut r = plan.clone();
            r.attributes["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            r.attributes["metadata"]["finalizers"] = json!(["example.com/hold"]);
            r
        });
        ReadResponse {
            resource,
            status: None,
        }
    }

    async fn delete(&self, resource: &Resource, _: &DeleteRequest) -> Option<Status> {
        let held = self.held.expect("the apply walk deletes nothing");
        self.deleted.lock().unwrap().push(resource.id.clone());
        (resource.id == held)
            .then(|| krt_guest::errors::info(StatusCode::Unknown, "FinalizersPending", "pending"))
    }

    async fn watch(&self, resource: &Resource, options: &WatchRequest) -> WatchResponse {
        self.applying("destroy does not watch");
        self.watched
            .lock()
            .unwrap()
            .push((resource.id.clone(), options.timeout_ms));
        WatchResponse {
            resource: Some(resource.clone()),
            health: Health::new(HealthState::Current, "", "ready"),
            status: None,
        }
    }

    async fn diff(
        &self,
        _: Option<&Value>,
        _: Option<&Value>,
        _: &[String],
    ) -> Result<ObjectDiff, Status> {
        Ok(ObjectDiff::default())
    }

    async fn drift(
        &self,
        _: &Value,
        _: Option<&Value>,
        _: &[String],
    ) -> Result<ObjectDiff, Status> {
        Ok(ObjectDiff::default())
    }

    async fn health(&self, object: &Value) -> Result<Health, Status> {
        self.applying("destroy asks no health");
        Ok(krt_guest::health::compute(object, None))
    }
}
