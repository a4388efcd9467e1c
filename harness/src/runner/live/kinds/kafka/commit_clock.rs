//! Handlers timed by their commits ([`CommitHandlers`]): when each worker fetched each record
//! and when its last commit was answered. A record a commit covers alone was handed over at the
//! later of its fetch and the worker's previous commit; its handler ended with this commit.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::records::Held;
use crate::record::{CommitHandlers, Nanos, Seq, WorkerId};

#[derive(Default)]
struct Inner {
    /// (worker, message, delivery) -> when the worker fetched it.
    fetched: HashMap<(WorkerId, Seq, u32), Nanos>,
    /// Each worker's last commit that covered a record, as its answer came.
    last_commit: HashMap<WorkerId, Nanos>,
    out: CommitHandlers,
}

#[derive(Default)]
pub struct CommitClock(Mutex<Inner>);

impl CommitClock {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `worker` fetched delivery `h` at `at`.
    pub fn fetched(&self, worker: WorkerId, h: Held, at: Nanos) {
        self.inner()
            .fetched
            .entry((worker, h.seq, h.delivery))
            .or_insert(at);
    }

    /// A commit of `worker` answered at `at` covered `covered` (the records it had fetched
    /// below the committed offsets, every partition of the commit together).
    pub fn committed(&self, worker: WorkerId, covered: &[Held], at: Nanos) {
        let mut inner = self.inner();
        let fetched: Vec<Option<Nanos>> = covered
            .iter()
            .map(|h| inner.fetched.remove(&(worker, h.seq, h.delivery)))
            .collect();
        match (covered.len(), fetched.as_slice()) {
            (0, _) => return,
            (1, [Some(fetched)]) => {
                let previous = inner.last_commit.get(&worker).copied().unwrap_or(0);
                let handed_over = (*fetched).max(previous);
                inner.out.timed.push(at.saturating_sub(handed_over));
            }
            (1, _) => {}
            (n, _) => {
                inner.out.batched_commits += 1;
                inner.out.batched_records += n as u64;
            }
        }
        inner.last_commit.insert(worker, at);
    }

    /// What the commits told, the consumers having been told to auto-commit or not.
    pub fn take(&self, auto_commit: bool) -> CommitHandlers {
        let mut out = std::mem::take(&mut self.inner().out);
        out.auto_commit = auto_commit;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn held(seq: Seq) -> Held {
        Held { seq, delivery: 1 }
    }

    #[test]
    fn a_record_committed_alone_is_timed_from_its_hand_over() {
        let c = CommitClock::default();
        // Worker 1 fetches records 1, 2, 3 together at 10 ms (librdkafka's prefetch), commits
        // 1 alone at 60 ms, 2 alone at 150 ms: handed over at 10 ms (its fetch) then 60 ms (the
        // previous commit): 50 ms and 90 ms.
        for seq in 1..=3 {
            c.fetched(1, held(seq), 10 * MS);
        }
        c.committed(1, &[held(1)], 60 * MS);
        c.committed(1, &[held(2)], 150 * MS);
        // Record 4 is fetched at 400 ms, after that commit (the worker waited for it): handed
        // over at its fetch, committed at 480 ms: 80 ms.
        c.fetched(1, held(4), 400 * MS);
        c.committed(1, &[held(4)], 480 * MS);
        // Worker 2's commit of nothing it fetched changes nothing.
        c.committed(2, &[], 500 * MS);
        let out = c.take(false);
        assert_eq!(out.timed, [50 * MS, 90 * MS, 80 * MS]);
        assert_eq!((out.batched_commits, out.batched_records), (0, 0));
        assert_eq!(out.unmeasurable(), None);
    }

    #[test]
    fn a_commit_covering_several_records_times_none_of_them() {
        // Records 1-3 fetched at 0, committed together at 300 ms: one batched commit of 3, no
        // handler timed; the auto-commit setting is kept.
        let c = CommitClock::default();
        for seq in 1..=3 {
            c.fetched(1, held(seq), 0);
        }
        c.committed(1, &[held(1), held(2), held(3)], 300 * MS);
        let out = c.take(true);
        assert!(out.timed.is_empty());
        assert_eq!((out.batched_commits, out.batched_records), (1, 3));
        assert!(out.auto_commit);
    }
}
