//! Walking a [`Stack`] in dependency order with bounded concurrency: a failed
//! resource stops everything that depends on it, independent ones finish.

use crate::events::{Event, EventSink};
use crate::graph::Stack;
use crate::report::{self, ResourceReport};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::BTreeSet;

/// How one resource of a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its work succeeded.
    Succeeded,
    /// Its work failed.
    Failed,
    /// Not attempted: the resource at this index failed first, and this one
    /// (transitively) waits for it.
    Skipped(usize),
}

/// Runs `work(i)` for every resource `i` of `stack`, at most `concurrency` at
/// a time (at least one), each only after its dependencies succeeded — or,
/// with `reverse` (for deletes), after its dependents did. `work` returns
/// whether it succeeded. Returns each resource's outcome, by index.
pub async fn run<F, Fut>(
    stack: &Stack,
    reverse: bool,
    concurrency: usize,
    mut work: F,
) -> Vec<Outcome>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = bool>,
{
    let n = stack.resources.len();
    let dependents = stack.dependents();
    let (wait_on, release) = if reverse {
        (&dependents, &stack.deps)
    } else {
        (&stack.deps, &dependents)
    };
    let mut rank = vec![0; n];
    for (position, &i) in stack.order.iter().enumerate() {
        rank[i] = if reverse { n - position } else { position };
    }
    let mut waiting: Vec<usize> = wait_on.iter().map(Vec::len).collect();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; n];
    let mut ready: BTreeSet<(usize, usize)> = (0..n)
        .filter(|&i| waiting[i] == 0)
        .map(|i| (rank[i], i))
        .collect();
    let mut running = FuturesUnordered::new();
    loop {
        while running.len() < concurrency.max(1)
            && let Some((_, i)) = ready.pop_first()
        {
            let task = work(i);
            running.push(async move { (i, task.await) });
        }
        let Some((i, ok)) = running.next().await else {
            break;
        };
        outcomes[i] = Some(if ok {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        });
        if ok {
            for &j in &release[i] {
                waiting[j] -= 1;
                if waiting[j] == 0 && outcomes[j].is_none() {
                    ready.insert((rank[j], j));
                }
            }
        } else {
            let mut stack_of: Vec<usize> = release[i].clone();
            while let Some(j) = stack_of.pop() {
                if outcomes[j].is_none() {
                    outcomes[j] = Some(Outcome::Skipped(i));
                    ready.remove(&(rank[j], j));
                    stack_of.extend(&release[j]);
                }
            }
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.expect("every resource is decided once nothing runs"))
        .collect()
}

/// Fills in a report for each resource the walk skipped because a
/// dependency failed, and tells `events` it is finished.
pub(crate) fn skipped(
    stack: &Stack,
    outcomes: &[Outcome],
    reports: &mut [Option<ResourceReport>],
    events: &dyn EventSink,
) {
    for (i, o) in outcomes.iter().enumerate() {
        if let Outcome::Skipped(cause) = o {
            let mut r = ResourceReport::new(&stack.resources[i].id, report::Outcome::Skipped);
            r.skipped_because = Some(stack.resources[*cause].id.clone());
            events.event(&Event::Finished(&r));
            reports[i] = Some(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;
    use std::cell::RefCell;

    /// a <- b <- c, and d alone.
    fn chain() -> Stack {
        let cm = |n: &str, d: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, annotations: {{krt.dev/depends-on: '{d}'}}}}\n---\n"
            )
        };
        let text = format!(
            "{}{}{}{}",
            cm("a", ""),
            cm("b", "v1:ConfigMap:a"),
            cm("c", "v1:ConfigMap:b"),
            cm("d", "")
        );
        Stack::new(parse("s.yaml", &text).unwrap()).unwrap()
    }

    /// Walks [`chain`], each resource succeeding as `succeeds` says: the
    /// outcomes, and the resources in the order they were worked on.
    async fn visits(
        reverse: bool,
        concurrency: usize,
        succeeds: fn(usize) -> bool,
    ) -> (Vec<Outcome>, Vec<usize>) {
        let seen = RefCell::new(Vec::new());
        let out = run(&chain(), reverse, concurrency, |i| {
            seen.borrow_mut().push(i);
            async move { succeeds(i) }
        })
        .await;
        (out, seen.into_inner())
    }

    #[tokio::test]
    async fn runs_in_order_and_reverse() {
        let (out, seen) = visits(false, 1, |_| true).await;
        assert_eq!(out, [Outcome::Succeeded; 4]);
        assert_eq!(seen, [0, 1, 2, 3]);
        let (_, seen) = visits(true, 1, |_| true).await;
        assert_eq!(seen, [3, 2, 1, 0]);
    }

    #[tokio::test]
    async fn a_failure_skips_dependents_but_not_independent_work() {
        let (out, seen) = visits(false, 10, |i| i != 0).await;
        assert_eq!(
            out,
            [
                Outcome::Failed,
                Outcome::Skipped(0),
                Outcome::Skipped(0),
                Outcome::Succeeded
            ]
        );
        assert_eq!(seen, [0, 3]);
    }

    #[tokio::test]
    async fn concurrency_is_bounded() {
        let text: String = (0..6)
            .map(|i| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n---\n"))
            .collect();
        let s = Stack::new(parse("s.yaml", &text).unwrap()).unwrap();
        let active = RefCell::new((0, 0));
        run(&s, false, 2, |_| {
            let active = &active;
            async move {
                {
                    let mut a = active.borrow_mut();
                    a.0 += 1;
                    a.1 = a.1.max(a.0);
                }
                tokio::task::yield_now().await;
                active.borrow_mut().0 -= 1;
                true
            }
        })
        .await;
        assert_eq!(active.borrow().1, 2);
    }
}
