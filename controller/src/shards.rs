//! Sharing Stacks between replicas. Stacks are assigned to a fixed number of
//! shards by a hash of `namespace/name`; each shard is a Lease
//! (`krt-controller-shard-N`) that one replica holds at a time, through
//! [`kube_lease_manager`]. A replica reconciles only the Stacks of the shards
//! it holds.
//!
//! Every replica competes for every shard, so a shard whose holder dies is
//! taken over as soon as its Lease expires. The crate waits a random
//! 0.1–1 s after an expired Lease before taking it, against collisions, so the
//! Leases carry the lease duration less that second: a dead replica's shards
//! move within the lease duration.
//! Replicas also hold a member Lease each (`krt-controller-member-IDENTITY`),
//! from which each one counts the live replicas and its fair share,
//! `ceil(shards / replicas)`: a replica holding more than that, once the
//! membership and its shards have been steady for two lease durations,
//! releases the extra shards (after their running reconciles finish) and
//! leaves them to the others for two lease durations.

use crate::metrics::Metrics;
use futures::channel::mpsc;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{Notify, OwnedRwLockReadGuard, RwLock, watch};

/// The prefix of the controller's Lease names.
pub const LEASE_PREFIX: &str = "krt-controller";

/// How replicas share shards.
#[derive(Debug, Clone)]
pub struct ShardSettings {
    /// This replica's identity (unique among the replicas: a pod name).
    pub identity: String,
    /// The namespace of the Leases.
    pub namespace: String,
    /// How many shards Stacks are spread over (at least 1).
    pub shards: u32,
    /// The longest a dead replica's shards wait for another replica (whole
    /// seconds, at least [`MIN_LEASE_DURATION`]).
    pub lease_duration: Duration,
}

/// The shortest lease duration: the Leases carry one second less, and a
/// holder renews at least a second before expiry.
pub const MIN_LEASE_DURATION: Duration = Duration::from_secs(3);

/// The most kube-lease-manager waits after a Lease expired before taking it.
const TAKEOVER_WAIT_SECS: u64 = 1;

impl ShardSettings {
    fn whole_secs(&self) -> u64 {
        self.lease_duration
            .as_secs()
            .max(MIN_LEASE_DURATION.as_secs())
    }

    /// The `leaseDurationSeconds` of the Leases: the lease duration less the
    /// takeover wait, so that expiry plus the wait stays within it.
    fn lease_secs(&self) -> u64 {
        self.whole_secs() - TAKEOVER_WAIT_SECS
    }

    /// How long before expiry a holder renews: two thirds of the Lease's
    /// duration, so it renews every third of it (and at least 1 s before expiry).
    fn grace_secs(&self) -> u64 {
        (self.lease_secs() * 2 / 3).clamp(1, self.lease_secs() - 1)
    }

    /// How long membership and holdings must be steady before a replica
    /// gives shards away, and how long it leaves a released shard alone.
    fn settle(&self) -> Duration {
        Duration::from_secs(self.whole_secs() * 2)
    }
}

/// The name of shard `i`'s Lease.
pub fn shard_lease(i: usize) -> String {
    format!("{LEASE_PREFIX}-shard-{i}")
}

/// The name of the member Lease of `identity`.
pub fn member_lease(identity: &str) -> String {
    let safe: String = identity
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{LEASE_PREFIX}-member-{}", safe.trim_matches(['-', '.']))
}

/// The shard of the Stack `namespace/name` among `shards`: stable across
/// processes and versions (the first 8 bytes of a SHA-256).
pub fn shard_of(namespace: &str, name: &str, shards: u32) -> usize {
    let digest = Sha256::digest(format!("{namespace}/{name}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(shards.max(1))) as usize
}

/// One shard as this replica sees it.
struct Slot {
    /// Whether this replica holds the shard's Lease.
    held: Arc<AtomicBool>,
    /// Reconciles hold it shared; a release waits for them with it exclusive.
    gate: Arc<RwLock<()>>,
    /// Asks the shard's driver to give the shard away.
    release: Notify,
}

/// The shards of this replica: which it holds, and the reconciles running in them.
pub struct Shards {
    settings: ShardSettings,
    slots: Vec<Slot>,
    /// When membership or this replica's holdings last changed.
    changed: Mutex<Instant>,
    /// Told `()` whenever a shard is acquired (to reconcile its Stacks).
    acquired: mpsc::UnboundedSender<()>,
    metrics: Arc<Metrics>,
}

/// A running reconcile's hold on its shard: the shard is not given away while
/// it lives.
pub struct Entered {
    _gate: OwnedRwLockReadGuard<()>,
    /// Whether this replica still holds the shard.
    pub held: Arc<AtomicBool>,
}

impl Shards {
    /// The shards of `settings`, none held yet; `acquired` is told about each
    /// acquisition.
    pub fn new(
        settings: ShardSettings,
        acquired: mpsc::UnboundedSender<()>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let slots = (0..settings.shards.max(1))
            .map(|_| Slot {
                held: Arc::new(AtomicBool::new(false)),
                gate: Arc::new(RwLock::new(())),
                release: Notify::new(),
            })
            .collect();
        Shards {
            settings,
            slots,
            changed: Mutex::new(Instant::now()),
            acquired,
            metrics,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &ShardSettings {
        &self.settings
    }

    /// The shard of the Stack `namespace/name`.
    pub fn of(&self, namespace: &str, name: &str) -> usize {
        shard_of(namespace, name, self.settings.shards)
    }

    /// Whether this replica holds shard `i`.
    pub fn holds(&self, i: usize) -> bool {
        self.slots[i].held.load(Ordering::Acquire)
    }

    /// How many shards this replica holds.
    pub fn held_count(&self) -> usize {
        (0..self.slots.len()).filter(|&i| self.holds(i)).count()
    }

    /// Enters shard `i` for a reconcile: `None` when this replica does not
    /// hold it (or is giving it away).
    pub async fn enter(&self, i: usize) -> Option<Entered> {
        let slot = &self.slots[i];
        let gate = slot.gate.clone().read_owned().await;
        slot.held.load(Ordering::Acquire).then(|| Entered {
            _gate: gate,
            held: slot.held.clone(),
        })
    }

    fn touch(&self) {
        *self.changed.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.metrics.shards_held.set(self.held_count() as i64);
    }

    fn steady_for(&self) -> Duration {
        self.changed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
    }

    fn manager(&self, client: &kube::Client, lease: String) -> LeaseManagerBuilder {
        LeaseManagerBuilder::new(client.clone(), lease)
            .with_namespace(&self.settings.namespace)
            .with_identity(&self.settings.identity)
            .with_duration(self.settings.lease_secs())
            .with_grace(self.settings.grace_secs())
    }

    /// Holds this replica's member Lease, drives every shard's Lease and
    /// balances shards between the live replicas, until `stop` turns true;
    /// then gives every shard back (after its running reconciles) and the
    /// member Lease too.
    pub async fn run(self: Arc<Self>, client: kube::Client, stop: watch::Receiver<bool>) {
        let member = self.hold_member(client.clone(), stop.clone());
        let drivers = futures::future::join_all(
            (0..self.slots.len()).map(|i| self.clone().drive(i, client.clone(), stop.clone())),
        );
        let balance = self.clone().balance(client, stop);
        tokio::join!(member, drivers, balance);
    }

    /// Holds the member Lease until `stop`.
    async fn hold_member(&self, client: kube::Client, mut stop: watch::Receiver<bool>) {
        let name = member_lease(&self.settings.identity);
        let manager = loop {
            match self.manager(&client, name.clone()).build().await {
                Ok(m) => break m,
                Err(e) => {
                    tracing::warn!(error = %e, lease = %name, "cannot set up the member Lease; retrying");
                    if sleep_or_stop(Duration::from_secs(1), &mut stop).await {
                        return;
                    }
                }
            }
        };
        let (rx, task) = manager.watch().await;
        stopped(&mut stop).await;
        drop(rx);
        finish(task).await;
    }

    /// Competes for shard `i`'s Lease and tracks whether it is held, until `stop`.
    async fn drive(
        self: Arc<Self>,
        i: usize,
        client: kube::Client,
        mut stop: watch::Receiver<bool>,
    ) {
        let slot = &self.slots[i];
        let name = shard_lease(i);
        loop {
            if *stop.borrow() {
                return;
            }
            let manager: LeaseManager = match self.manager(&client, name.clone()).build().await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, lease = %name, "cannot set up the shard Lease; retrying");
                    if sleep_or_stop(Duration::from_secs(1), &mut stop).await {
                        return;
                    }
                    continue;
                }
            };
            let (mut rx, task) = manager.watch().await;
            let giving_away = loop {
                tokio::select! {
                    changed = rx.changed() => {
                        if changed.is_err() {
                            // The manager's task ended on an error: start over.
                            break false;
                        }
                        let now = *rx.borrow_and_update();
                        if slot.held.swap(now, Ordering::AcqRel) != now {
                            tracing::info!(shard = i, held = now, identity = %self.settings.identity, "shard {}", if now { "acquired" } else { "lost" });
                            self.touch();
                            if now {
                                let _ = self.acquired.unbounded_send(());
                            }
                        }
                    }
                    () = slot.release.notified() => break true,
                    () = stopped(&mut stop) => break false,
                }
            };
            // Wait for the shard's running reconciles, then let the Lease go.
            let gate = slot.gate.write().await;
            if slot.held.swap(false, Ordering::AcqRel) {
                tracing::info!(shard = i, identity = %self.settings.identity, "shard released");
            }
            drop(rx);
            finish(task).await;
            drop(gate);
            self.touch();
            if giving_away && sleep_or_stop(self.settings.settle(), &mut stop).await {
                return;
            }
        }
    }

    /// Gives shards above the fair share away, when membership and holdings
    /// have been steady; cleans up member Leases long expired.
    async fn balance(self: Arc<Self>, client: kube::Client, mut stop: watch::Receiver<bool>) {
        let leases: Api<Lease> = Api::namespaced(client, &self.settings.namespace);
        let tick = (self.settings.lease_duration / 3).max(Duration::from_millis(200));
        let mut members: Vec<String> = Vec::new();
        loop {
            if sleep_or_stop(tick, &mut stop).await {
                return;
            }
            let list = match leases.list(&ListParams::default()).await {
                Ok(list) => list.items,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot list the controller's Leases");
                    continue;
                }
            };
            let now = SystemTime::now();
            let prefix = format!("{LEASE_PREFIX}-member-");
            let mut alive = Vec::new();
            for lease in &list {
                let name = lease.metadata.name.clone().unwrap_or_default();
                if !name.starts_with(&prefix) {
                    continue;
                }
                match expiry(lease) {
                    Some(until) if until > now => alive.push(name),
                    Some(until)
                        if now.duration_since(until).unwrap_or_default()
                            > self.settings.settle() * 5 =>
                    {
                        // A replica gone for long: its member Lease is garbage.
                        let _ = leases.delete(&name, &DeleteParams::default()).await;
                    }
                    _ => {}
                }
            }
            alive.sort();
            if alive != members {
                tracing::info!(replicas = ?alive, "controller replicas changed");
                members = alive;
                self.touch();
            }
            let shards = self.slots.len();
            let target = shards.div_ceil(members.len().max(1));
            let held: Vec<usize> = (0..shards).filter(|&i| self.holds(i)).collect();
            if held.len() > target && self.steady_for() >= self.settings.settle() {
                for &i in held.iter().rev().take(held.len() - target) {
                    tracing::info!(shard = i, target, "giving shard away to balance");
                    self.slots[i].release.notify_one();
                }
                self.touch();
            }
        }
    }
}

/// When `lease` expires, if it is held.
fn expiry(lease: &Lease) -> Option<SystemTime> {
    let spec = lease.spec.as_ref()?;
    spec.holder_identity.as_ref()?;
    let renewed: SystemTime = spec.renew_time.as_ref()?.0.into();
    let duration = u64::try_from(spec.lease_duration_seconds?).ok()?;
    Some(renewed + Duration::from_secs(duration))
}

/// Waits for a lease manager's task to release its Lease and end.
async fn finish(task: tokio::task::JoinHandle<kube_lease_manager::Result<LeaseManager>>) {
    match task.await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "releasing a Lease failed"),
        Err(e) => tracing::warn!(error = %e, "a Lease task panicked"),
    }
}

/// Waits until `stop` is true (or its sender is gone).
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Sleeps for `d`; true when `stop` turned true first.
async fn sleep_or_stop(d: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => *stop.borrow(),
        () = stopped(stop) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_spread_over_shards_stably() {
        let mut counts = [0usize; 4];
        for i in 0..400 {
            counts[shard_of("team", &format!("s{i}"), 4)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 60), "{counts:?}");
        assert_eq!(shard_of("team-a", "web", 4), shard_of("team-a", "web", 4));
        assert_eq!(shard_of("a", "b", 1), 0);
        assert_eq!(member_lease("Pod_1.x"), "krt-controller-member-pod-1.x");
    }

    #[test]
    fn holders_renew_well_before_expiry() {
        let s = |secs| ShardSettings {
            identity: "a".into(),
            namespace: "krt-system".into(),
            shards: 4,
            lease_duration: Duration::from_secs(secs),
        };
        assert_eq!((s(3).lease_secs(), s(3).grace_secs()), (2, 1));
        assert_eq!((s(15).lease_secs(), s(15).grace_secs()), (14, 9));
        assert_eq!((s(1).lease_secs(), s(1).grace_secs()), (2, 1));
    }
}
