//! How many requests are in flight at once. The limit adapts, TCP Vegas style
//! (the algorithm of the `tower-acc` crate): each answer's round trip is
//! compared with the no-load one, and the limit grows while they stay alike
//! and shrinks while requests queue. A `429 Too Many Requests` (the API
//! server's priority and fairness turning work away) halves it. It never
//! exceeds the ceiling (`--concurrency`).

use std::sync::{Mutex, MutexGuard, PoisonError};
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;
use tower_acc::{Algorithm, Vegas};

/// The limit a run starts with (or the ceiling, when lower).
const INITIAL_LIMIT: usize = 8;

/// What the request limit did so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitStats {
    /// The most requests ever allowed in flight at once.
    pub ceiling: usize,
    /// The limit now.
    pub limit: usize,
    /// The most requests that were in flight at once.
    pub peak: usize,
    /// Answers received (every attempt, retries included).
    pub answered: u64,
    /// Requests the server throttled with 429.
    pub throttled: u64,
}

/// How a request ended, as the limit sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The server answered (successfully or not): the round trip counts.
    Answered,
    /// The server throttled it (429): the limit halves.
    Throttled,
    /// No answer (a transport failure): says nothing about load.
    Lost,
}

/// The adaptive limit: permits of a semaphore, resized after every answer.
pub(super) struct Limiter {
    permits: Semaphore,
    control: Mutex<Control>,
}

struct Control {
    vegas: Vegas,
    /// Permits the semaphore holds in all (in flight plus available).
    permits: usize,
    ceiling: usize,
    peak: usize,
    answered: u64,
    throttled: u64,
}

fn vegas(limit: usize, ceiling: usize) -> Vegas {
    Vegas::builder()
        .initial_limit(limit)
        .max_limit(ceiling)
        .build()
}

impl Limiter {
    /// A limit that starts low and may grow up to `ceiling` (at least 1).
    pub(super) fn new(ceiling: usize) -> Self {
        let ceiling = ceiling.max(1);
        let start = INITIAL_LIMIT.min(ceiling);
        Limiter {
            permits: Semaphore::new(start),
            control: Mutex::new(Control {
                vegas: vegas(start, ceiling),
                permits: start,
                ceiling,
                peak: 0,
                answered: 0,
                throttled: 0,
            }),
        }
    }

    /// Waits until one more request may be sent.
    pub(super) async fn acquire(&self) -> Permit<'_> {
        let permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let mut control = self.lock();
        let in_flight = control.permits - self.permits.available_permits();
        control.peak = control.peak.max(in_flight);
        Permit {
            limiter: self,
            permit: Some(permit),
            sent: Instant::now(),
        }
    }

    /// What the limit did so far.
    pub(super) fn stats(&self) -> LimitStats {
        let control = self.lock();
        LimitStats {
            ceiling: control.ceiling,
            limit: control.vegas.max_concurrency().min(control.ceiling),
            peak: control.peak,
            answered: control.answered,
            throttled: control.throttled,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The right to have one request in flight; [`Permit::done`] reports how it
/// went. Dropped without that (a cancelled call), it only frees the slot.
pub(super) struct Permit<'a> {
    limiter: &'a Limiter,
    permit: Option<SemaphorePermit<'a>>,
    sent: Instant,
}

impl Permit<'_> {
    /// Feeds the request's round trip and outcome to the limit, then frees the slot.
    pub(super) fn done(mut self, outcome: Outcome) {
        let limiter = self.limiter;
        let rtt = self.sent.elapsed();
        let mut control = limiter.lock();
        let in_flight = control.permits - limiter.permits.available_permits();
        match outcome {
            Outcome::Answered => {
                control.answered += 1;
                control.vegas.update(rtt, in_flight, false, false);
            }
            Outcome::Throttled => {
                control.answered += 1;
                control.throttled += 1;
                let half = (control.vegas.max_concurrency() / 2).max(1);
                control.vegas = vegas(half, control.ceiling);
            }
            Outcome::Lost => {}
        }
        let wanted = control.vegas.max_concurrency().clamp(1, control.ceiling);
        if wanted > control.permits {
            limiter.permits.add_permits(wanted - control.permits);
            control.permits = wanted;
        } else if wanted < control.permits {
            // Only free permits can be taken away; the rest go as requests finish.
            control.permits -= limiter.permits.forget_permits(control.permits - wanted);
        }
        drop(control);
        self.permit.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Sends `requests` requests from `senders` tasks that always have one
    /// waiting, each answered after `latency(in flight)`.
    async fn load(
        limiter: &Arc<Limiter>,
        senders: usize,
        requests: usize,
        latency: fn(usize) -> Duration,
    ) {
        let left = Arc::new(std::sync::atomic::AtomicUsize::new(requests));
        let tasks: Vec<_> = (0..senders)
            .map(|_| {
                let (limiter, left) = (limiter.clone(), left.clone());
                tokio::spawn(async move {
                    use std::sync::atomic::Ordering::Relaxed;
                    while left
                        .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
                        .is_ok()
                    {
                        let permit = limiter.acquire().await;
                        let in_flight = {
                            let c = limiter.lock();
                            c.permits - limiter.permits.available_permits()
                        };
                        tokio::time::sleep(latency(in_flight)).await;
                        permit.done(Outcome::Answered);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn grows_to_the_ceiling_while_round_trips_stay_flat() {
        let limiter = Arc::new(Limiter::new(64));
        assert_eq!(limiter.stats().limit, INITIAL_LIMIT);
        load(&limiter, 200, 3000, |_| Duration::from_millis(5)).await;
        let stats = limiter.stats();
        assert_eq!(stats.limit, 64, "{stats:?}");
        assert_eq!(stats.peak, 64, "never more than the ceiling: {stats:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn shrinks_when_round_trips_grow_with_the_load() {
        let limiter = Arc::new(Limiter::new(64));
        load(&limiter, 200, 3000, |_| Duration::from_millis(5)).await;
        assert_eq!(limiter.stats().limit, 64);
        // A server that takes 5 ms per request beyond 8 in flight: queueing.
        load(&limiter, 200, 3000, |n| {
            Duration::from_millis(5 * (n.max(8) as u64 / 8))
        })
        .await;
        let stats = limiter.stats();
        assert!(stats.limit < 32, "{stats:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_throttled_request_halves_the_limit() {
        let limiter = Arc::new(Limiter::new(64));
        load(&limiter, 200, 3000, |_| Duration::from_millis(5)).await;
        limiter.acquire().await.done(Outcome::Throttled);
        let stats = limiter.stats();
        assert_eq!((stats.limit, stats.throttled), (32, 1), "{stats:?}");
        assert_eq!(limiter.permits.available_permits(), 32);
        limiter.acquire().await.done(Outcome::Throttled);
        assert_eq!(limiter.stats().limit, 16);
    }

    #[tokio::test]
    async fn a_ceiling_of_one_sends_one_at_a_time() {
        let limiter = Limiter::new(1);
        let first = limiter.acquire().await;
        assert!(
            tokio::time::timeout(Duration::from_millis(20), limiter.acquire())
                .await
                .is_err(),
            "a second request waits"
        );
        first.done(Outcome::Answered);
        limiter.acquire().await.done(Outcome::Lost);
        assert_eq!(limiter.stats().limit, 1);
    }
}
