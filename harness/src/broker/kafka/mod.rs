//! Apache Kafka: one topic of `partitions` partitions read by one consumer group, the consumer
//! modelled as librdkafka (confluent-kafka) runs it. [docs/kafka.md](../../../../docs/kafka.md)
//! tells the same for users.
//!
//! - Record `seq` goes to partition `(seq - 1) % partitions` (distinct keys spread evenly: one
//!   key per record), at the next offset. Each partition is read in order by one member.
//! - A consumer's first poll joins the group (`group.rs`, `rebalance.rs`). A poll (a receive
//!   whose batch is used up) fetches up to `max_poll_records` records from the member's
//!   partitions at its positions and returns them to the application at once, as
//!   `consume(num_messages)` does; each later receive hands the next record of that batch. A
//!   poll resets the member's `max.poll.interval.ms`; a member blocked in a poll that found
//!   nothing is polling, so its interval does not run.
//! - An ack is `commitSync` of the record's offset + 1 on its partition: it settles every record
//!   before it. The coordinator refuses it (CommitFailedException: UNKNOWN_MEMBER_ID,
//!   ILLEGAL_GENERATION) when the consumer's member was removed, or the record was handed under
//!   a member id it no longer has: a stale ack, logged with `CommitFenced`. A commit the
//!   committed offset already covers is accepted and changes nothing (Kafka would move the
//!   offset back; the model keeps the later one).
//! - Auto-commit (`enable_auto_commit`): a poll stores the offsets of everything it returned;
//!   a timer every `auto_commit_interval` from the member's join commits what is stored, and so
//!   does a revoke. Stored is not processed: a kill after such a commit loses the rest of the
//!   batch; a kill before the next one has the records since the last commit processed twice.
//! - A release is a seek back to the record (fetched again at the next poll; the batch's other
//!   records of that partition are dropped; the offset a poll stored stays stored); Kafka has
//!   no per-record nack, and no delay. An
//!   extension extends nothing (only a poll resets `max.poll.interval.ms`).
//! - No delivery limit and no DLQ: a poison record is fetched again until someone commits past
//!   it. A redrive moves nothing.
//!
//! No model reads a clock; `next_due` is the exact next instant a timer of the group acts
//! (`timers.rs`). Here: the model's state and what it answers of it; `fetch.rs` a consumer's
//! receives and polls, `commits.rs` commits and seeks, `members.rs` finding members,
//! `rebalance.rs` the group's changes, `idle.rs` the consumers a round of hand-outs passes over.

mod commits;
mod fetch;
mod group;
mod idle;
mod members;
mod partition;
mod rebalance;
mod timers;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_idle;
#[cfg(test)]
mod tests_rebalance;

use super::queue;
use super::state::Counts;
#[cfg(test)]
use super::state::MessageState;
#[cfg(test)]
use crate::record::WorkerId;
use crate::record::{Batched, Event, EventKind, Nanos, Seq};
use group::Member;
use members::MemberIndex;
use partition::Partition;
use timers::TimerIndex;

/// The consumer's `partition.assignment.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignment {
    /// Eager: every member revokes everything at a rebalance.
    Range,
    /// Incremental: only the partitions that move are revoked.
    CooperativeSticky,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KafkaConfig {
    pub partitions: u32,
    pub max_poll_interval: Nanos,
    pub session_timeout: Nanos,
    /// Heartbeats every this from a member's join; a dead member's session ends
    /// `session_timeout` after its last one.
    pub heartbeat_interval: Nanos,
    pub max_poll_records: u32,
    /// `auto.commit.interval.ms` when `enable.auto.commit` is on.
    pub auto_commit: Option<Nanos>,
    pub assignment: Assignment,
    /// `group.instance.id` set (to the worker's number).
    pub static_membership: bool,
    /// The broker's `group.initial.rebalance.delay.ms` (3 s): how long the first rebalance of
    /// an empty group waits for more members.
    pub initial_rebalance_delay: Nanos,
}

/// The group coordinator's rebalance in progress.
#[derive(Debug, Clone, Copy)]
struct Pending {
    why: crate::record::RebalanceWhy,
    /// The first rebalance of an empty group completes no earlier than this.
    not_before: Nanos,
}

#[derive(Debug, Clone)]
pub struct Kafka {
    config: KafkaConfig,
    partitions: Vec<Partition>,
    /// The members' entries, in the order they were made ([`Member::seat`]).
    members: Vec<Member>,
    /// The seat of the last entry made.
    next_seat: u64,
    index: MemberIndex,
    timers: TimerIndex,
    generation: u32,
    next_member_id: u32,
    pending: Option<Pending>,
    /// The owner (member id) of each partition in the last generation.
    owners: Vec<Option<u32>>,
    published: u64,
    /// Records handed out and not committed.
    leased: u64,
    /// Drops what is committed ([`Kafka::forgetting_settled`]): what [`Kafka::held`] counts.
    #[cfg(test)]
    forget: bool,
    /// Someone joined, was taken back or a rebalance completed during a round of receives:
    /// the waiting consumers poll again.
    repoll: bool,
    /// Once a folding run asks ([`Kafka::tell_batched`]): committed records fetched batches
    /// still hold, and each leaving its batch, since the run last took them.
    batched: Option<Vec<Batched>>,
    /// Consumers whose receive would change nothing now, a bit per worker slot (`idle.rs`).
    idle: Vec<u64>,
}

impl Kafka {
    /// A model that keeps every record.
    #[cfg(test)]
    pub fn new(config: KafkaConfig) -> Kafka {
        Kafka::with(config, false)
    }

    /// A model that drops a record once committed and out of every fetched batch; it answers
    /// and logs as [`Kafka::new`] does (but `receive_count` of a dropped record is `None`).
    /// What sim runs use.
    pub fn forgetting_settled(config: KafkaConfig) -> Kafka {
        Kafka::with(config, true)
    }

    fn with(config: KafkaConfig, forget: bool) -> Kafka {
        let n = config.partitions.max(1);
        Kafka {
            config: KafkaConfig {
                partitions: n,
                ..config
            },
            partitions: (0..n).map(|_| Partition::new(forget)).collect(),
            members: Vec::new(),
            next_seat: 0,
            index: MemberIndex::default(),
            timers: TimerIndex::default(),
            generation: 0,
            next_member_id: 0,
            pending: None,
            owners: vec![None; n as usize],
            published: 0,
            leased: 0,
            #[cfg(test)]
            forget,
            repoll: false,
            batched: None,
            idle: Vec::new(),
        }
    }

    /// From now on, says when a committed record is still in fetched batches (the batch a
    /// consumer works through hands it out after its commit) and when it leaves each.
    pub fn tell_batched(&mut self) {
        self.batched.get_or_insert_with(Vec::new);
    }

    /// Moves what it said since the last call to `out`.
    pub fn take_batched(&mut self, out: &mut Vec<Batched>) {
        if let Some(b) = &mut self.batched {
            out.append(b);
        }
    }

    /// The partition and offset of record `seq` (from 1).
    fn place(&self, seq: Seq) -> (u32, u64) {
        let i = u64::from(seq) - 1;
        let n = u64::from(self.config.partitions);
        ((i % n) as u32, i / n)
    }

    fn seq_of(&self, partition: u32, offset: u64) -> Seq {
        (offset * u64::from(self.config.partitions) + u64::from(partition) + 1) as Seq
    }

    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        self.published += 1;
        let seq = self.published as Seq;
        let (p, _) = self.place(seq);
        self.partitions[p as usize].push();
        self.wake_readers(p);
        log.push(Event {
            at: now,
            kind: EventKind::Published { seq },
        });
        seq
    }

    /// Kafka has no DLQ: nothing to move back.
    pub fn redrive(&mut self, _now: Nanos, _log: &mut [Event]) -> usize {
        0
    }

    /// True once after a round of receives in which the group changed so that a consumer
    /// already told "nothing" may get records now.
    pub fn take_repoll(&mut self) -> bool {
        std::mem::take(&mut self.repoll)
    }

    pub fn counts(&self) -> Counts {
        let deleted: u64 = self.partitions.iter().map(|p| p.committed).sum();
        Counts {
            delayed: 0,
            visible: self.published - deleted - self.leased,
            leased: self.leased,
            deleted,
            dead_lettered: 0,
        }
    }

    #[cfg(test)]
    pub fn state(&self, seq: Seq) -> Option<MessageState> {
        if seq == 0 || u64::from(seq) > self.published {
            return None;
        }
        let (p, off) = self.place(seq);
        let part = &self.partitions[p as usize];
        if off < part.committed {
            return Some(MessageState::Deleted);
        }
        let r = part.rec(off).expect("an uncommitted record is kept");
        Some(match r.holder {
            Some(h) => MessageState::Leased {
                worker: h.worker,
                nonce: r.nonce,
                lease_end: h.lease_end,
            },
            None => MessageState::Visible,
        })
    }

    pub fn receive_count(&self, seq: Seq) -> Option<u32> {
        if seq == 0 || u64::from(seq) > self.published {
            return None;
        }
        let (p, off) = self.place(seq);
        self.partitions[p as usize].rec(off).map(|r| r.deliveries)
    }

    /// Records the model holds for the topic: every record, or (forgetting) those not yet
    /// committed. A committed record still in a fetched batch is kept too, until handed out
    /// (at most `max_poll_records` per member); [`Kafka::entries`] counts it.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        if self.forget {
            (self.published - self.counts().deleted) as usize
        } else {
            self.published as usize
        }
    }

    #[cfg(test)]
    pub fn table_room(&self) -> usize {
        self.partitions.iter().map(Partition::kept).sum()
    }

    /// Entries of every per-record structure: the partitions' records and the batches.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.table_room() + self.members.iter().map(|m| m.batch.len()).sum::<usize>()
    }

    /// The generation of the last completed rebalance.
    #[cfg(test)]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The member id owning each partition in the current generation (`None`: nobody, as
    /// during an eager rebalance).
    #[cfg(test)]
    pub fn owners(&self) -> Vec<Option<(u32, WorkerId)>> {
        (0..self.config.partitions)
            .map(|p| {
                self.members
                    .iter()
                    .find(|m| m.in_group && m.owns(p))
                    .map(|m| (m.id, m.worker))
            })
            .collect()
    }

    /// How many members of the group own partition `p` (at most one).
    #[cfg(test)]
    pub fn owners_of(&self, p: u32) -> usize {
        self.members
            .iter()
            .filter(|m| m.in_group && m.owns(p))
            .count()
    }

    #[cfg(test)]
    pub fn partitions(&self) -> u32 {
        self.config.partitions
    }

    /// Partition `p`'s committed offset.
    #[cfg(test)]
    pub fn committed(&self, p: u32) -> u64 {
        self.partitions[p as usize].committed
    }
}
