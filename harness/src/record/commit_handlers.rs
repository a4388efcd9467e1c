//! Live Kafka's handlers as its commits tell them. A consumer's proxy sees when a record was
//! fetched and when a commit covered it, not when the consumer's poll handed the record to its
//! handler: librdkafka fetches ahead, so a handler span from one fetch to the next says nothing
//! of the handler. A consumer handles one record at a time and takes the next after committing
//! the last, so a record a commit covered alone was handed over at the later of its fetch and
//! the same worker's previous commit, and its handler ended with that commit. A commit covering
//! several records (a batch commit) or made on a timer (auto-commit) does not tell when each
//! handler ended. A consumer that commits each record may still cover two at once now and then
//! (a record it did not commit, its provider call failed, is covered by the next one's commit):
//! its handlers are timed over the records committed alone, unless most were committed in
//! batches.

use crate::record::Nanos;

/// What the commits of a live Kafka run tell of its handlers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommitHandlers {
    /// Each record a commit covered alone: its handler's time, from its hand-over to the commit
    /// (as the commit's answer reached the worker), in commit order.
    pub timed: Vec<Nanos>,
    /// Commits that covered more than one record the worker had fetched.
    pub batched_commits: u64,
    /// The records those commits covered.
    pub batched_records: u64,
    /// The consumers were told to commit on a timer (`broker.enable_auto_commit`).
    pub auto_commit: bool,
}

impl CommitHandlers {
    /// Why the handlers cannot be timed from the commits, in words; `None` when they can.
    pub fn unmeasurable(&self) -> Option<String> {
        if self.auto_commit {
            return Some(
                "the consumers commit on a timer (enable.auto.commit): a commit says when the \
                 timer fired, not when a handler ended, and the proxy sees a record's fetch, not \
                 its hand-over to the handler"
                    .to_string(),
            );
        }
        if self.batched_records > self.timed.len() as u64 {
            return Some(format!(
                "{} {} covered {} records at once (a commit after a batch): a commit says when \
                 the last of its records was done, not when each handler ended, and the proxy \
                 sees a record's fetch, not its hand-over to the handler",
                self.batched_commits,
                if self.batched_commits == 1 {
                    "commit"
                } else {
                    "commits"
                },
                self.batched_records,
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_commit_or_a_batch_commit_cannot_time_the_handlers() {
        // Every record committed alone, by commits the consumer made: timed.
        let alone = CommitHandlers {
            timed: vec![50_000_000, 90_000_000],
            ..CommitHandlers::default()
        };
        assert_eq!(alone.unmeasurable(), None);
        // Told to auto-commit: whatever the commits covered.
        let auto = CommitHandlers {
            auto_commit: true,
            ..alone.clone()
        };
        assert!(auto.unmeasurable().unwrap().contains("enable.auto.commit"));
        // One commit covered 2 records (a record not committed, then the next's commit): the
        // 2 records committed alone are still the most, and timed.
        let now_and_then = CommitHandlers {
            batched_commits: 1,
            batched_records: 2,
            ..alone.clone()
        };
        assert_eq!(now_and_then.unmeasurable(), None);
        // Two commits covered 7 records between them: more than the 2 committed alone.
        let batch = CommitHandlers {
            batched_commits: 2,
            batched_records: 7,
            ..alone
        };
        assert!(batch
            .unmeasurable()
            .unwrap()
            .starts_with("2 commits covered 7 records at once"));
    }
}
