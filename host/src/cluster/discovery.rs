//! Discovery: the REST resource serving an `apiVersion` + `kind`, from one
//! fetch of its group version's resource list, shared by concurrent callers
//! (single flight) and kept for the process.

use krt_guest::model::{ApiError, ApiResource};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

/// The resource list of one group version, as last fetched.
struct Fetched {
    /// When the fetch was sent.
    sent: Instant,
    /// The kinds served (`None`: the group version is not served), or the failure.
    kinds: Result<Option<HashMap<String, ApiResource>>, ApiError>,
}

/// The slot of one group version: its last fetch, behind an async lock so
/// that one caller fetches while the others wait for its answer.
type Slot = Arc<tokio::sync::Mutex<Option<Fetched>>>;

/// The process's discovery cache.
#[derive(Default)]
pub(super) struct Discovery {
    /// Every kind found so far, by `(apiVersion, kind)`.
    found: RwLock<HashMap<(String, String), ApiResource>>,
    /// One slot per `apiVersion`.
    slots: Mutex<HashMap<String, Slot>>,
    /// Resource lists fetched.
    fetches: AtomicU64,
}

impl Discovery {
    /// How many resource lists were fetched.
    pub(super) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// Resolves `kind` of `api_version`. A kind found before is answered from
    /// the cache. Otherwise the group version's list is fetched with `fetch`
    /// (`Ok(None)` when the server does not serve it) unless a fetch sent since
    /// this call began already answered: concurrent callers share one request,
    /// and a kind created moments ago (a new CRD) is still found.
    pub(super) async fn resolve<F, Fut>(
        &self,
        api_version: &str,
        kind: &str,
        fetch: F,
    ) -> Result<ApiResource, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<Vec<ApiResource>>, ApiError>>,
    {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(hit) = self.cached(&key) {
            return Ok(hit);
        }
        let asked = Instant::now();
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(api_version.to_owned())
            .or_default()
            .clone();
        let mut last = slot.lock().await;
        let answered = last.as_ref().is_some_and(|f| {
            f.sent >= asked || matches!(&f.kinds, Ok(Some(kinds)) if kinds.contains_key(kind))
        });
        if !answered {
            let sent = Instant::now();
            self.fetches.fetch_add(1, Ordering::Relaxed);
            let kinds = fetch().await.map(|served| {
                served.map(|list| {
                    list.into_iter()
                        .map(|ar| (ar.kind.clone(), ar))
                        .collect::<HashMap<_, _>>()
                })
            });
            if let Ok(Some(kinds)) = &kinds {
                let mut found = self.found.write().unwrap_or_else(PoisonError::into_inner);
                for (k, ar) in kinds {
                    found.insert((api_version.to_owned(), k.clone()), ar.clone());
                }
            }
            *last = Some(Fetched { sent, kinds });
        }
        let fetched = last.as_ref().expect("a fetch was recorded");
        match &fetched.kinds {
            Ok(Some(kinds)) if kinds.contains_key(kind) => Ok(kinds[kind].clone()),
            Ok(_) => Err(ApiError {
                message: format!(
                    "no resource type {api_version}/{kind} is served by the cluster (is the CRD installed?)"
                ),
                ..ApiError::api(404, "NotFound", "")
            }),
            Err(err) => Err(err.clone()),
        }
    }

    fn cached(&self, key: &(String, String)) -> Option<ApiResource> {
        self.found
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn configmaps() -> Vec<ApiResource> {
        vec![ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        }]
    }

    #[tokio::test]
    async fn concurrent_misses_share_one_fetch() {
        let discovery = Discovery::default();
        let calls = AtomicUsize::new(0);
        let resolve = || async {
            discovery
                .resolve("v1", "ConfigMap", || async {
                    calls.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Ok(Some(configmaps()))
                })
                .await
        };
        let answers = futures::future::join_all((0..16).map(|_| resolve())).await;
        assert!(
            answers
                .iter()
                .all(|a| a.as_ref().unwrap().plural == "configmaps")
        );
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert_eq!(discovery.fetches(), 1);
    }

    #[tokio::test]
    async fn a_kind_missing_from_an_older_list_is_fetched_again() {
        let discovery = Discovery::default();
        let none = discovery
            .resolve("example.com/v1", "Widget", || async { Ok(None) })
            .await
            .unwrap_err();
        assert_eq!(none.code, 404);
        assert!(none.message.contains("example.com/v1/Widget"), "{none:?}");
        let widget = ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        let found = discovery
            .resolve("example.com/v1", "Widget", || async {
                Ok(Some(vec![widget.clone()]))
            })
            .await
            .unwrap();
        assert_eq!(found, widget);
        assert_eq!(discovery.fetches(), 2);
        // Found once, answered from the cache from then on.
        let again = discovery
            .resolve("example.com/v1", "Widget", || async { unreachable!() })
            .await;
        assert_eq!(again.unwrap(), widget);
    }
}
