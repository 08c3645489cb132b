//! Simulated controllers: each pass moves every object one step toward its desired state, so
//! rollouts, health and watches are observable. Passes run every `controller_interval` and right
//! after each write.

mod gc;
mod infra;
mod workloads;

use std::sync::Arc;

use crate::cluster::Cluster;

/// Runs the controllers until the task is aborted.
pub async fn run(cluster: Arc<Cluster>) {
    loop {
        let notified = cluster.changed.notified();
        {
            let mut state = cluster.store.lock();
            gc::reconcile(&mut state);
            workloads::reconcile(&mut state);
            infra::reconcile(&mut state);
        }
        tokio::select! {
            () = notified => tokio::time::sleep(cluster.controller_interval / 4).await,
            () = tokio::time::sleep(cluster.controller_interval) => {}
        }
    }
}
