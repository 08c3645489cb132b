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

/// The live counter behind [`RequestCounts`]: a [`Sim`](crate::Sim)'s, or that of anything else
/// that sees requests to count the same way (krt-testkit's proxy in front of a real cluster).
#[derive(Debug, Default)]
pub struct RequestCounter(Mutex<RequestCounts>);

impl RequestCounter {
    /// Counts one request: `method` on `path`, as `WATCH` when it is a watch and as
    /// `"<method> dryRun"` when it is a dry run.
    pub fn add(&self, method: &str, path: &str, watch: bool, dry_run: bool) {
        let verb = match (watch, dry_run) {
            (true, _) => "WATCH".to_owned(),
            (false, true) => format!("{method} dryRun"),
            (false, false) => method.to_owned(),
        };
        *self.lock().0.entry((verb, path.to_owned())).or_default() += 1;
    }

    /// What was counted so far.
    pub fn snapshot(&self) -> RequestCounts {
        self.lock().clone()
    }

    /// Starts counting from zero.
    pub fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RequestCounts> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
