//! The controller's metrics, served in the Prometheus text format (0.0.4) at
//! `/metrics` (and `/healthz` for probes):
//!
//! | metric | type | what |
//! |---|---|---|
//! | `krt_controller_reconciles_total{result}` | counter | reconciles that ended `ready`, `progressing`, `failed` or `stalled`, and `error` (a retried failure) |
//! | `krt_controller_reconcile_failures_total{reason}` | counter | reconciles that did not end Ready, by condition reason |
//! | `krt_controller_reconcile_duration_seconds` | histogram | how long each reconcile took |
//! | `krt_controller_queue_depth` | gauge | Stacks of this replica's shards waiting to be reconciled |
//! | `krt_controller_reconciles_in_flight` | gauge | reconciles running now |
//! | `krt_controller_shards_held` | gauge | shards this replica holds |
//! | `krt_controller_resource_writes_total{action}` | counter | resources `created`, `updated`, `replaced`, `deleted` |

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::Duration;

/// The `result` label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    /// `ready`, `progressing`, `failed`, `stalled` or `error`.
    pub result: &'static str,
}

/// The `reason` label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    /// A condition reason.
    pub reason: &'static str,
}

/// The `action` label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabel {
    /// `created`, `updated`, `replaced` or `deleted`.
    pub action: &'static str,
}

/// Every metric of one controller process.
pub struct Metrics {
    registry: Registry,
    /// Reconciles by how they ended.
    pub reconciles: Family<ResultLabel, Counter>,
    /// Reconciles that did not end Ready, by reason.
    pub failures: Family<ReasonLabel, Counter>,
    /// Reconcile durations.
    pub duration: Histogram,
    /// Stacks waiting to be reconciled (set by the controller before each scrape).
    pub queue_depth: Gauge,
    /// Reconciles running now.
    pub in_flight: Gauge,
    /// Shards held.
    pub shards_held: Gauge,
    /// Resource writes by action.
    pub writes: Family<ActionLabel, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("krt_controller");
        let reconciles = Family::<ResultLabel, Counter>::default();
        registry.register(
            "reconciles",
            "Stack reconciles by how they ended",
            reconciles.clone(),
        );
        let failures = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "reconcile_failures",
            "Stack reconciles that did not end Ready, by condition reason",
            failures.clone(),
        );
        let duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        registry.register(
            "reconcile_duration_seconds",
            "How long each Stack reconcile took",
            duration.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "queue_depth",
            "Stacks of this replica's shards waiting to be reconciled",
            queue_depth.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "reconciles_in_flight",
            "Stack reconciles running now",
            in_flight.clone(),
        );
        let shards_held = Gauge::default();
        registry.register(
            "shards_held",
            "Shards this replica holds",
            shards_held.clone(),
        );
        let writes = Family::<ActionLabel, Counter>::default();
        registry.register(
            "resource_writes",
            "Resources written, by action",
            writes.clone(),
        );
        Metrics {
            registry,
            reconciles,
            failures,
            duration,
            queue_depth,
            in_flight,
            shards_held,
            writes,
        }
    }
}

impl Metrics {
    /// Counts one finished reconcile.
    pub fn reconciled(&self, result: &'static str, reason: Option<&'static str>, took: Duration) {
        self.reconciles.get_or_create(&ResultLabel { result }).inc();
        if let Some(reason) = reason {
            self.failures.get_or_create(&ReasonLabel { reason }).inc();
        }
        self.duration.observe(took.as_secs_f64());
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// Serves `/metrics` (after `refresh` updates the gauges computed on
/// demand) and `/healthz` on `listener` until the process ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    refresh: Arc<dyn Fn() + Send + Sync>,
) -> std::io::Result<()> {
    let app = Router::new()
        .route(
            "/metrics",
            get(move || {
                let (metrics, refresh) = (metrics.clone(), refresh.clone());
                async move {
                    refresh();
                    (
                        [(CONTENT_TYPE, prometheus_text::CONTENT_TYPE)],
                        metrics.encode(),
                    )
                        .into_response()
                }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }));
    axum::serve(listener, app).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconciles_are_counted_in_the_prometheus_text_format() {
        let m = Metrics::default();
        m.reconciled("ready", None, Duration::from_millis(20));
        m.reconciled("stalled", Some("PolicyDenied"), Duration::from_millis(3));
        m.writes
            .get_or_create(&ActionLabel { action: "created" })
            .inc_by(5);
        m.queue_depth.set(2);
        let text = m.encode();
        for line in [
            "krt_controller_reconciles_total{result=\"ready\"} 1",
            "krt_controller_reconciles_total{result=\"stalled\"} 1",
            "krt_controller_reconcile_failures_total{reason=\"PolicyDenied\"} 1",
            "krt_controller_reconcile_duration_seconds_count 2",
            "krt_controller_resource_writes_total{action=\"created\"} 5",
            "krt_controller_queue_depth 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
        }
        assert!(text.contains("# TYPE krt_controller_reconcile_duration_seconds histogram"));
    }
}
