//! Counting the API requests the server answers, by verb and path, so tests
//! and benchmarks can say how many requests a client needed.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// How many API requests were answered, keyed by verb and path. The verb is the
/// HTTP method, `WATCH` for a watch, with ` dryRun` appended for dry runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts(BTreeMap<(String, String), u64>);

impl RequestCounts {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// Requests with this verb (`GET`, `WATCH`, `PATCH dryRun`, ...) and exact path.
    pub fn count(&self, verb: &str, path: &str) -> u64 {
        self.0
            .get(&(verb.to_owned(), path.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Requests with this verb, whatever the path.
    pub fn verb(&self, verb: &str) -> u64 {
        self.0
            .iter()
            .filter(|((v, _), _)| v == verb)
            .map(|(_, n)| n)
            .sum()
    }

    /// Each verb and path with its count, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, u64)> {
        self.0
            .iter()
            .map(|((v, p), n)| (v.as_str(), p.as_str(), *n))
    }
}

/// The live counter behind [`RequestCounts`].
#[derive(Debug, Default)]
pub(crate) struct Counter(Mutex<RequestCounts>);

impl Counter {
    /// Counts one request.
    pub(crate) fn add(&self, method: &str, path: &str, watch: bool, dry_run: bool) {
        let verb = match (watch, dry_run) {
            (true, _) => "WATCH".to_owned(),
            (false, true) => format!("{method} dryRun"),
            (false, false) => method.to_owned(),
        };
        *self.lock().0.entry((verb, path.to_owned())).or_default() += 1;
    }

    /// What was counted so far.
    pub(crate) fn snapshot(&self) -> RequestCounts {
        self.lock().clone()
    }

    /// Starts counting from zero.
    pub(crate) fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RequestCounts> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
