//! The shared state behind the HTTP server and the controllers.

use std::time::Duration;

use tokio::sync::Notify;

use crate::faults::Faults;
use crate::store::Store;

/// Everything a request handler or controller can reach.
pub struct Cluster {
    /// The objects.
    pub store: Store,
    /// Injected failures.
    pub faults: Faults,
    /// How long simulated controllers wait between steps.
    pub controller_interval: Duration,
    /// `host:port` the server answers on.
    pub address: String,
    /// Woken after every committed write, so controllers react at once.
    pub changed: Notify,
}
