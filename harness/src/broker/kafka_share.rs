//! A Kafka share group (KIP-932, Kafka 4.x): the records of a topic's partitions shared by the
//! group's members, each record acquired, acknowledged and counted on its own.
//!
//! - Records go to the partitions in turn (record n to partition (n - 1) mod `partitions`), each
//!   at the next offset of its partition.
//! - A fetch acquires one record: the lowest available offset of the next partition that has
//!   one, the partitions taken in turn (Kafka rotates the partitions of a share fetch). Every
//!   member fetches from every partition (as when the group has at least as many members as
//!   partitions; how the assignor splits partitions among fewer members is not modelled). The
//!   in-flight bound `group.share.partition.max.record.locks` (2000 records a partition by
//!   default) is not modelled.
//! - Each acquisition counts a delivery and starts the record's acquisition lock
//!   (`group.share.record.lock.duration.ms`).
//! - ACCEPT (`ack`) acknowledges the record: done. RELEASE makes it available again at once
//!   (a share group has no delayed release: a release with a delay is a release now). REJECT
//!   archives it at once. RENEW (Kafka 4.2 and later, KIP-1222; `extend`) starts the lock again
//!   in full.
//! - When the lock ends unacknowledged the record is available again, lowest offset first in
//!   its partition: a released or expired record is fetched before later offsets.
//! - When a record whose delivery count has reached `group.share.delivery.count.limit` is
//!   released or its lock ends, it is archived instead (it stays in the log and is never
//!   delivered again): counted in `dlq`, logged as dead-lettered.
//! - Acknowledgements are matched by offset and member: one from a member that does not hold
//!   the record's current acquisition (its lock ended, the record is available, acquired by
//!   another member, acknowledged or archived) fails with INVALID_RECORD_STATE and changes
//!   nothing: a stale ack. One from the member holding the current acquisition is applied,
//!   whichever of that member's deliveries it came from.
//! - A consumer that dies closes its connection: the broker ends its share session and releases
//!   every record it had acquired at once (archiving those at the limit).

use std::collections::{BTreeSet, VecDeque};

use super::leases::LeaseIndex;
use super::messages::{log_ack, log_lease_moved, MessageTable, Messages};
use super::queue::{AckRefused, Handout, Receipt, VisibilityError};
use super::state::MessageState;
use crate::record::{AckOutcome, Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KafkaShareConfig {
    /// `group.share.record.lock.duration.ms`.
    pub record_lock_duration: Nanos,
    /// `group.share.delivery.count.limit` (>= 1).
    pub delivery_count_limit: u32,
    /// The topic's partitions (>= 1).
    pub partitions: u32,
}

/// The available records of one share partition.
#[derive(Debug, Clone, Default)]
struct SharePartition {
    /// Never acquired, in offset order.
    fresh: VecDeque<Seq>,
    /// Available again (released, lock ended, redriven), lowest offset first.
    again: BTreeSet<Seq>,
}

impl SharePartition {
    /// The lowest available offset's record.
    fn lowest(&self) -> Option<Seq> {
        match (self.fresh.front(), self.again.first()) {
            (Some(&f), Some(&a)) => Some(f.min(a)),
            (f, a) => f.or(a).copied(),
        }
    }

    fn take_lowest(&mut self) -> Option<Seq> {
        let seq = self.lowest()?;
        if self.fresh.front() == Some(&seq) {
            self.fresh.pop_front();
        } else {
            self.again.remove(&seq);
        }
        Some(seq)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.fresh.len() + self.again.len()
    }
}

#[derive(Debug, Clone)]
pub struct KafkaShare {
    config: KafkaShareConfig,
    messages: Messages,
    partitions: Vec<SharePartition>,
    /// The partition the next fetch looks at first.
    turn: usize,
    /// (lock end, seq) of acquired records; an entry whose record is no longer acquired with
    /// that end is stale and skipped ([`LeaseIndex`]).
    locks: LeaseIndex,
    /// The records each member (worker - 1) holds acquired.
    acquired: Vec<Vec<Seq>>,
    /// Records archived at the delivery count limit or rejected, in that order.
    archived: Vec<Seq>,
}

impl KafkaShare {
    /// A model that remembers every record it was given.
    #[cfg(test)]
    pub fn new(config: KafkaShareConfig) -> KafkaShare {
        KafkaShare::with(config, Messages::remembering())
    }

    /// A model that forgets a record once it is acknowledged (archived ones are kept: a redrive
    /// may take them back); it answers and logs as [`KafkaShare::new`] does (but
    /// `receive_count` of a forgotten record is `None`). What sim runs use.
    pub fn forgetting_settled(config: KafkaShareConfig) -> KafkaShare {
        KafkaShare::with(config, Messages::forgetting())
    }

    fn with(config: KafkaShareConfig, messages: Messages) -> KafkaShare {
        KafkaShare {
            config,
            messages,
            partitions: vec![SharePartition::default(); config.partitions.max(1) as usize],
            turn: 0,
            locks: LeaseIndex::default(),
            acquired: Vec::new(),
            archived: Vec::new(),
        }
    }

    fn partition_of(&self, seq: Seq) -> usize {
        (seq as usize - 1) % self.partitions.len()
    }

    /// Message `seq` is available: into its partition's records available again.
    fn available_again(&mut self, seq: Seq) {
        let p = self.partition_of(seq);
        self.partitions[p].again.insert(seq);
    }

    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = self.messages.publish(now, log);
        let p = self.partition_of(seq);
        self.partitions[p].fresh.push_back(seq);
        seq
    }

    /// Exact: every change that makes the earliest lock stale trims it ([`KafkaShare::lock_moved`]).
    pub fn next_due(&self) -> Option<Nanos> {
        self.locks.first_end()
    }

    /// Locks ending by `now` end: one instant's together, lowest record first.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        while let Some((t, seqs)) = self.messages.pop_due_leases(&mut self.locks, now) {
            for seq in seqs {
                self.let_go(seq);
                self.acquisition_ended(t, seq, log);
            }
        }
    }

    /// After an acquisition whose lock ended at `ended` stopped being current, so that
    /// [`KafkaShare::next_due`] is exact.
    fn lock_moved(&mut self, ended: Nanos) {
        self.messages.lease_moved(&mut self.locks, ended);
    }

    /// The holder of `seq`'s acquisition no longer holds it (the state changes next).
    fn let_go(&mut self, seq: Seq) {
        if let Some(MessageState::Leased { worker, .. }) = self.messages.state(seq) {
            let held = self.held_mut(worker);
            if let Some(i) = held.iter().position(|&s| s == seq) {
                held.swap_remove(i);
            }
        }
    }

    fn held_mut(&mut self, worker: WorkerId) -> &mut Vec<Seq> {
        let i = (worker.max(1) - 1) as usize;
        if self.acquired.len() <= i {
            self.acquired.resize_with(i + 1, Vec::new);
        }
        &mut self.acquired[i]
    }

    /// An acquisition ended without an acknowledgement (released, lock ended, holder gone): the
    /// record is available again, or archived at the delivery count limit.
    fn acquisition_ended(&mut self, at: Nanos, seq: Seq, log: &mut Vec<Event>) {
        let delivery = self.messages.msg(seq).deliveries;
        if delivery >= self.config.delivery_count_limit {
            self.archive(at, seq, delivery, log);
        } else {
            self.messages.set_state(seq, MessageState::Visible);
            self.available_again(seq);
            log.push(Event {
                at,
                kind: EventKind::LeaseExpired { seq, delivery },
            });
        }
    }

    fn archive(&mut self, at: Nanos, seq: Seq, delivery: u32, log: &mut Vec<Event>) {
        self.messages.set_state(seq, MessageState::DeadLettered);
        self.archived.push(seq);
        log.push(Event {
            at,
            kind: EventKind::DeadLettered { seq, delivery },
        });
    }

    pub fn can_hand_out(&self) -> bool {
        self.messages.counts().visible > 0
    }

    /// A share fetch of one record by `worker`.
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let n = self.partitions.len();
        let p = (0..n)
            .map(|i| (self.turn + i) % n)
            .find(|&p| self.partitions[p].lowest().is_some())?;
        let seq = self.partitions[p].take_lowest()?;
        self.turn = (p + 1) % n;
        let end = now.saturating_add(self.config.record_lock_duration);
        self.locks.insert(end, seq);
        self.held_mut(worker).push(seq);
        Some(self.messages.deliver(now, seq, worker, end, log))
    }

    /// The end of the lock of record `seq` if `worker` holds its acquisition.
    fn held_by(&self, seq: Seq, worker: WorkerId) -> Option<Nanos> {
        match self.messages.state(seq) {
            Some(MessageState::Leased {
                worker: holder,
                lease_end,
                ..
            }) if holder == worker => Some(lease_end),
            _ => None,
        }
    }

    /// ACCEPT: applied when `worker` holds the record's current acquisition; refused
    /// (INVALID_RECORD_STATE) otherwise.
    pub fn ack(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<AckOutcome, AckRefused> {
        let Some(state) = self.messages.state(receipt.seq) else {
            return Err(AckRefused(receipt));
        };
        let delivery = self.messages.delivery_of(receipt);
        let outcome = if let Some(end) = self.held_by(receipt.seq, worker) {
            let current = self.messages.is_current(receipt, worker);
            self.let_go(receipt.seq);
            self.messages.set_state(receipt.seq, MessageState::Deleted);
            self.lock_moved(end);
            if current {
                AckOutcome::Deleted
            } else {
                AckOutcome::StaleDeleted
            }
        } else if matches!(state, MessageState::Deleted | MessageState::DeadLettered) {
            AckOutcome::StaleGone
        } else {
            AckOutcome::StaleRejected
        };
        log_ack(log, now, receipt, worker, delivery, outcome);
        match outcome {
            AckOutcome::Deleted | AckOutcome::StaleDeleted => Ok(outcome),
            _ => Err(AckRefused(receipt)),
        }
    }

    /// RELEASE by the holder: available again at once (archived at the limit); `delay` is not
    /// Kafka's to honour.
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        self.given_back(now, receipt, worker, false, log)
    }

    /// REJECT by the holder: archived at once, never delivered again.
    #[cfg(test)]
    pub fn reject(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        self.given_back(now, receipt, worker, true, log)
    }

    /// The holder ends its acquisition now: the record archived (`reject`) or released.
    fn given_back(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        reject: bool,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let seq = receipt.seq;
        let end = self
            .held_by(seq, worker)
            .ok_or(VisibilityError::StaleReceipt)?;
        let delivery = self.messages.msg(seq).deliveries;
        self.let_go(seq);
        if reject {
            self.archive(now, seq, delivery, log);
        } else {
            log_lease_moved(log, now, seq, worker, delivery, now);
            self.acquisition_ended(now, seq, log);
        }
        self.lock_moved(end);
        Ok(())
    }

    /// RENEW by the holder: the lock starts again for a full `record_lock_duration`.
    pub fn renew(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let Some(MessageState::Leased {
            worker: holder,
            nonce,
            lease_end,
        }) = self.messages.state(receipt.seq)
        else {
            return Err(VisibilityError::StaleReceipt);
        };
        if holder != worker {
            return Err(VisibilityError::StaleReceipt);
        }
        let delivery = self.messages.msg(receipt.seq).deliveries;
        let end = now.saturating_add(self.config.record_lock_duration);
        self.locks.insert(end, receipt.seq);
        self.messages.set_state(
            receipt.seq,
            MessageState::Leased {
                worker,
                nonce,
                lease_end: end,
            },
        );
        self.lock_moved(lease_end);
        log_lease_moved(log, now, receipt.seq, worker, delivery, end);
        Ok(())
    }

    /// The member's connection closed: every record it holds is released now, lowest first.
    pub fn member_gone(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        let mut held = std::mem::take(self.held_mut(worker));
        held.sort_unstable();
        for seq in held {
            let Some(end) = self.held_by(seq, worker) else {
                continue;
            };
            self.acquisition_ended(now, seq, log);
            self.lock_moved(end);
        }
    }

    /// An operator makes the archived records available again with a fresh delivery count.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        let entries = std::mem::take(&mut self.archived);
        for &seq in &entries {
            self.messages.redriven(now, seq, log);
            self.available_again(seq);
        }
        entries.len()
    }

    /// Entries of every per-record structure (the table's records, the available records, the
    /// locks, the members' acquisitions and the archived records).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.messages.held()
            + self
                .partitions
                .iter()
                .map(SharePartition::len)
                .sum::<usize>()
            + self.locks.len()
            + self.acquired.iter().map(Vec::len).sum::<usize>()
            + self.archived.len()
    }

    /// Archived records, in the order they were archived.
    #[cfg(test)]
    pub fn archived(&self) -> &[Seq] {
        &self.archived
    }
}

impl MessageTable for KafkaShare {
    type Extra = ();

    fn messages(&self) -> &Messages {
        &self.messages
    }
}
