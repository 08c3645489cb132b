//! How many requests are in flight at once. The limit adapts, TCP Vegas style
//! (the algorithm of the `tower-acc` crate): each answer's round trip is
//! compared with the no-load one, and the limit grows while they stay alike
//! and shrinks while requests queue. A `429 Too Many Requests` (the API
//! server's priority and fairness turning work away) halves it. It never
//! exceeds the ceiling (`--concurrency`).

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};
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

/// Vegas re-measures the no-load round trip every `PROBE_EVERY` × limit answers
/// or so. Its default (30) takes a sustained queue for the new no-load time
/// within a run and stops shrinking; once in a long while is enough for runs
/// of seconds to minutes.
const PROBE_EVERY: usize = 1000;

fn vegas(limit: usize, ceiling: usize) -> Vegas {
    Vegas::builder()
        .initial_limit(limit)
        .max_limit(ceiling)
        .probe_multiplier(PROBE_EVERY)
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
        self.limiter.record(self.sent.elapsed(), outcome);
        self.permit.take();
    }
}

impl Limiter {
    /// Adjusts the limit to one request's round trip and outcome, while that
    /// request still counts as in flight.
    fn record(&self, rtt: Duration, outcome: Outcome) {
        let mut control = self.lock();
        let in_flight = control.permits - self.permits.available_permits();
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
            self.permits.add_permits(wanted - control.permits);
            control.permits = wanted;
        } else if wanted < control.permits {
            // Only free permits can be taken away; the rest go as requests finish.
            control.permits -= self.permits.forget_permits(control.permits - wanted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps the limiter full: as many requests in flight as it allows, each
    /// answered after `latency(in flight)`, `answers` times.
    async fn load(limiter: &Limiter, answers: usize, latency: fn(usize) -> Duration) {
        for _ in 0..answers {
            let held: Vec<Permit<'_>> = futures::future::join_all(
                (0..limiter.permits.available_permits()).map(|_| limiter.acquire()),
            )
            .await;
            let in_flight = held.len();
            for permit in held {
                limiter.record(latency(in_flight), Outcome::Answered);
                drop(permit);
            }
        }
    }

    #[tokio::test]
    async fn grows_to_the_ceiling_while_round_trips_stay_flat() {
        let limiter = Limiter::new(64);
        assert_eq!(limiter.stats().limit, INITIAL_LIMIT);
        load(&limiter, 100, |_| Duration::from_millis(5)).await;
        let stats = limiter.stats();
        assert_eq!(stats.limit, 64, "{stats:?}");
        assert_eq!(stats.peak, 64, "never more than the ceiling: {stats:?}");
    }

    #[tokio::test]
    async fn shrinks_when_round_trips_grow_with_the_load() {
        let limiter = Limiter::new(64);
        load(&limiter, 100, |_| Duration::from_millis(5)).await;
        assert_eq!(limiter.stats().limit, 64);
        // A server that answers in 5 ms up to 8 requests at once, and queues
        // the rest: each 8 more in flight add 5 ms.
        load(&limiter, 100, |n| {
            Duration::from_millis(5 * n.max(8) as u64 / 8)
        })
        .await;
        let stats = limiter.stats();
        assert!(stats.limit < 32, "{stats:?}");
    }

    #[tokio::test]
    async fn a_throttled_request_halves_the_limit() {
        let limiter = Limiter::new(64);
        load(&limiter, 100, |_| Duration::from_millis(5)).await;
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
