//! One partition of the topic: its records in offset order and the group's committed offset.
//!
//! A record is committed once the committed offset is past it; until then it is held by the
//! member that was last handed it (its current delivery), or waits to be fetched. A forgetting
//! partition drops a committed record once no fetched batch still holds it.

use std::collections::VecDeque;

use crate::record::{Nanos, WorkerId};

/// Who was last handed a record and has not committed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Holder {
    pub worker: WorkerId,
    /// The member id it was handed under (a removed member's records keep its old id).
    pub member: u32,
    /// Its poll's deadline: the poll that fetched it plus `max.poll.interval.ms`.
    pub lease_end: Nanos,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Rec {
    /// Times handed to a consumer.
    pub deliveries: u32,
    /// The last receipt's nonce (= `deliveries`: Kafka has no redrive).
    pub nonce: u32,
    /// The current delivery's holder, while the record is not committed.
    pub holder: Option<Holder>,
    /// Fetched batches that still hold it (not handed out yet).
    pub in_batches: u32,
}

#[derive(Debug, Clone)]
pub(super) struct Partition {
    /// Offset of `recs[0]`.
    base: u64,
    recs: VecDeque<Rec>,
    /// The group's committed offset: the next record to consume.
    pub committed: u64,
    forget: bool,
}

impl Partition {
    pub fn new(forget: bool) -> Partition {
        Partition {
            base: 0,
            recs: VecDeque::new(),
            committed: 0,
            forget,
        }
    }

    /// The log end offset: the offset the next record gets.
    pub fn end(&self) -> u64 {
        self.base + self.recs.len() as u64
    }

    pub fn push(&mut self) {
        self.recs.push_back(Rec::default());
    }

    /// The record at `offset`, while the partition keeps it.
    pub fn rec(&self, offset: u64) -> Option<&Rec> {
        let i = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        self.recs.get(i)
    }

    /// The record at `offset`, kept by the partition (a fetched one always is).
    pub fn rec_mut(&mut self, offset: u64) -> &mut Rec {
        let i = (offset - self.base) as usize;
        &mut self.recs[i]
    }

    /// Whether [`Partition::trim`] could drop anything: it forgets, and its first record kept
    /// is committed and in no batch.
    pub fn may_trim(&self) -> bool {
        self.forget
            && self.base < self.committed
            && self.recs.front().is_some_and(|r| r.in_batches == 0)
    }

    /// Drops committed records no batch holds, from the front (a forgetting partition), up to
    /// `keep_from` (the lowest position an owner fetches from: a commit by another member can
    /// pass it, and Kafka still serves the owner from its position).
    pub fn trim(&mut self, keep_from: u64) {
        if !self.forget {
            return;
        }
        let upto = self.committed.min(keep_from);
        while self.base < upto && self.recs.front().is_some_and(|r| r.in_batches == 0) {
            self.recs.pop_front();
            self.base += 1;
        }
    }

    /// Records kept in memory.
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        self.recs.len()
    }
}
