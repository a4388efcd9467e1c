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
//! (`timers.rs`).

mod group;
mod partition;
mod rebalance;
mod timers;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rebalance;

use super::messages::log_ack;
use super::queue::{AckRefused, Handout, Receipt, VisibilityError};
use super::state::{Counts, MessageState};
use crate::record::{AckOutcome, Batched, Event, EventKind, Nanos, Seq, WorkerId};
use group::Member;
use partition::{Holder, Partition};

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
    members: Vec<Member>,
    generation: u32,
    next_member_id: u32,
    pending: Option<Pending>,
    /// The owner (member id) of each partition in the last generation.
    owners: Vec<Option<u32>>,
    published: u64,
    /// Records handed out and not committed.
    leased: u64,
    forget: bool,
    /// Someone joined, was taken back or a rebalance completed during a round of receives:
    /// the waiting consumers poll again.
    repoll: bool,
    /// Once a folding run asks ([`Kafka::tell_batched`]): committed records fetched batches
    /// still hold, and each leaving its batch, since the run last took them.
    batched: Option<Vec<Batched>>,
}

impl Kafka {
    /// A model that keeps every record.
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
            generation: 0,
            next_member_id: 0,
            pending: None,
            owners: vec![None; n as usize],
            published: 0,
            leased: 0,
            forget,
            repoll: false,
            batched: None,
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

    pub fn config(&self) -> &KafkaConfig {
        &self.config
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
        log.push(Event {
            at: now,
            kind: EventKind::Published { seq },
        });
        seq
    }

    /// The member entry of `worker`'s consumer process while it lives (in the group or not).
    fn live_entry(&self, worker: WorkerId) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.worker == worker && m.alive)
    }

    /// The member `worker` is in the group as now.
    fn current(&self, worker: WorkerId) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.worker == worker && m.alive && m.in_group)
    }

    /// The application takes its next record: from its batch, or by a poll.
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let i = match self.live_entry(worker) {
            Some(i) if !self.members[i].batch.is_empty() => return Some(self.hand(now, i, log)),
            Some(i) if self.members[i].in_group => i,
            Some(i) => {
                // Removed, its batch done: its poll joins as a new member.
                self.members.remove(i);
                self.join(now, worker, log)
            }
            None => self.join(now, worker, log),
        };
        self.poll(now, i, log)
    }

    /// A poll of member `i`: rejoins a rebalance in progress, then fetches.
    fn poll(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) -> Option<Handout> {
        self.members[i].last_poll = now;
        self.members[i].waiting = true;
        if self.pending.is_some() && !self.members[i].rejoined {
            self.rejoin(now, i, log);
            self.try_complete(now, log);
        }
        let eager = self.config.assignment == Assignment::Range;
        if self.pending.is_some() && eager {
            return None;
        }
        if !self.fetch(now, i) {
            return None;
        }
        self.members[i].waiting = false;
        Some(self.hand(now, i, log))
    }

    /// Fetches up to `max_poll_records` into member `i`'s batch, the first partition in turn;
    /// stores their end offsets. False when there was nothing.
    fn fetch(&mut self, now: Nanos, i: usize) -> bool {
        let m = &mut self.members[i];
        let n = m.owned.len();
        let mut room = self.config.max_poll_records as u64;
        for k in 0..n {
            let o = &mut m.owned[(m.next_first + k) % n];
            let part = &mut self.partitions[o.partition as usize];
            let take = (part.end() - o.position).min(room);
            for off in o.position..o.position + take {
                part.rec_mut(off).in_batches += 1;
                m.batch.push_back((o.partition, off));
            }
            o.position += take;
            o.stored = o.position;
            room -= take;
        }
        if n > 0 {
            m.next_first = (m.next_first + 1) % n;
        }
        if m.batch.is_empty() {
            return false;
        }
        if let Some(every) = self.config.auto_commit {
            if m.commit_due.is_none_or(|t| t <= now) {
                let since = now - m.joined_at;
                m.commit_due = Some(m.joined_at + (since / every + 1) * every);
            }
        }
        true
    }

    /// Hands member `i`'s next batch record to the application.
    fn hand(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) -> Handout {
        let m = &mut self.members[i];
        let (p, off) = m.batch.pop_front().expect("a batch record");
        let holder = Holder {
            worker: m.worker,
            member: m.id,
            lease_end: m.last_poll + self.config.max_poll_interval,
        };
        let seq = self.seq_of(p, off);
        let part = &mut self.partitions[p as usize];
        let committed = off < part.committed;
        let r = part.rec_mut(off);
        r.in_batches -= 1;
        if committed {
            left_batch(&mut self.batched, seq);
        }
        r.deliveries += 1;
        r.nonce += 1;
        let (delivery, nonce) = (r.deliveries, r.nonce);
        if !committed {
            self.leased += u64::from(r.holder.is_none());
            r.holder = Some(holder);
        }
        self.trim(p);
        log.push(Event {
            at: now,
            kind: EventKind::Delivered {
                seq,
                worker: holder.worker,
                delivery,
                lease_end: holder.lease_end,
            },
        });
        Handout {
            receipt: Receipt { seq, nonce },
            receive_count: delivery,
            lease_end: holder.lease_end,
        }
    }

    /// `commitSync` of the record's offset + 1, by `worker`.
    pub fn ack(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<AckOutcome, AckRefused> {
        if receipt.seq == 0 || u64::from(receipt.seq) > self.published {
            return Err(AckRefused(receipt));
        }
        let (p, off) = self.place(receipt.seq);
        // Kafka has no redrive: a receipt's delivery number is its nonce.
        if !self.may_commit(receipt, worker) {
            let outcome = AckOutcome::StaleRejected;
            log_ack(log, now, receipt, worker, receipt.nonce, outcome);
            log.push(Event {
                at: now,
                kind: EventKind::CommitFenced {
                    seq: receipt.seq,
                    worker,
                },
            });
            return Err(AckRefused(receipt));
        }
        if off < self.partitions[p as usize].committed {
            log_ack(
                log,
                now,
                receipt,
                worker,
                receipt.nonce,
                AckOutcome::Covered,
            );
            return Ok(AckOutcome::Covered);
        }
        Ok(self.commit(now, p, off + 1, worker, Some(receipt), log))
    }

    /// Whether the coordinator takes `worker`'s commit of `receipt`: its consumer is a member,
    /// and the record's current delivery (if this is it) was handed under that member.
    fn may_commit(&self, receipt: Receipt, worker: WorkerId) -> bool {
        let Some(m) = self.current(worker) else {
            return false;
        };
        let (p, off) = self.place(receipt.seq);
        match self.partitions[p as usize].rec(off) {
            Some(r) if r.nonce == receipt.nonce => r.holder.is_none_or(|h| h.member == m.id),
            _ => true,
        }
    }

    /// Moves partition `p`'s committed offset to `to` (past it), settling every record before
    /// it; the record of `receipt` is the committer's own.
    fn commit(
        &mut self,
        now: Nanos,
        p: u32,
        to: u64,
        worker: WorkerId,
        receipt: Option<Receipt>,
        log: &mut Vec<Event>,
    ) -> AckOutcome {
        let from = self.partitions[p as usize].committed;
        let mut own = AckOutcome::Deleted;
        for off in from..to {
            let seq = self.seq_of(p, off);
            let r = self.partitions[p as usize].rec_mut(off);
            if let (Some(b), 1..) = (&mut self.batched, r.in_batches) {
                b.push(Batched {
                    seq,
                    change: r.in_batches as i32,
                });
            }
            let held = r.holder.take().is_some();
            self.leased -= u64::from(held);
            // The committer's own record: a plain delete when its delivery was the current one.
            let outcome = match receipt {
                Some(rc) if rc.seq == seq && (rc.nonce != r.nonce || !held) => {
                    AckOutcome::StaleDeleted
                }
                _ => AckOutcome::Deleted,
            };
            if receipt.is_some_and(|rc| rc.seq == seq) {
                own = outcome;
            }
            log.push(Event {
                at: now,
                kind: EventKind::Acked {
                    seq,
                    worker,
                    delivery: receipt
                        .filter(|rc| rc.seq == seq)
                        .map_or(r.deliveries, |rc| rc.nonce),
                    outcome,
                },
            });
        }
        self.partitions[p as usize].committed = to;
        self.trim(p);
        own
    }

    /// Lets a forgetting partition drop what nobody can fetch again.
    fn trim(&mut self, p: u32) {
        let keep_from = self
            .members
            .iter()
            .filter(|m| m.in_group)
            .flat_map(|m| m.owned.iter())
            .filter(|o| o.partition == p)
            .map(|o| o.position)
            .min()
            .unwrap_or(u64::MAX);
        self.partitions[p as usize].trim(keep_from);
    }

    /// A seek back to the record: the member fetches it again at its next poll.
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let i = self.holder_entry(receipt, worker)?;
        let (p, off) = self.place(receipt.seq);
        let m = &mut self.members[i];
        let (parts, batched, n) = (
            &mut self.partitions,
            &mut self.batched,
            self.config.partitions,
        );
        m.batch.retain(|&(q, o)| {
            if q == p {
                leave_batch(&mut parts[q as usize], q, o, n, batched);
            }
            q != p
        });
        if let Some(o) = m.owned.iter_mut().find(|o| o.partition == p) {
            // The position only: what a poll stored stays stored (auto-commit may still commit
            // past the record).
            o.position = off;
        }
        let r = self.partitions[p as usize].rec_mut(off);
        r.holder = None;
        self.leased -= 1;
        let delivery = r.deliveries;
        self.trim(p);
        log.push(Event {
            at: now,
            kind: EventKind::LeaseExpired {
                seq: receipt.seq,
                delivery,
            },
        });
        Ok(())
    }

    /// Nothing extends `max.poll.interval.ms` but a poll: accepted for the current holder,
    /// changing nothing.
    pub fn extend(&mut self, receipt: Receipt, worker: WorkerId) -> Result<(), VisibilityError> {
        self.holder_entry(receipt, worker).map(|_| ())
    }

    /// The member entry of `worker` when it is in the group and holds `receipt`'s record under
    /// its current member id, on a partition it owns.
    fn holder_entry(&self, receipt: Receipt, worker: WorkerId) -> Result<usize, VisibilityError> {
        if receipt.seq == 0 || u64::from(receipt.seq) > self.published {
            return Err(VisibilityError::StaleReceipt);
        }
        let (p, off) = self.place(receipt.seq);
        let i = self
            .members
            .iter()
            .position(|m| m.worker == worker && m.alive && m.in_group)
            .ok_or(VisibilityError::StaleReceipt)?;
        let m = &self.members[i];
        let held = self.partitions[p as usize].rec(off).is_some_and(|r| {
            r.nonce == receipt.nonce && r.holder.is_some_and(|h| h.member == m.id)
        });
        if held && m.owns(p) {
            Ok(i)
        } else {
            Err(VisibilityError::StaleReceipt)
        }
    }

    /// The consumer process died: it stops heartbeating (removed `session_timeout` after its
    /// last heartbeat) and its batch is gone.
    pub fn consumer_died(&mut self, now: Nanos, worker: WorkerId) {
        let mut k = 0;
        while k < self.members.len() {
            let m = &mut self.members[k];
            if m.worker != worker || !m.alive {
                k += 1;
                continue;
            }
            let n = self.config.partitions;
            for (p, o) in m.batch.drain(..) {
                leave_batch(&mut self.partitions[p as usize], p, o, n, &mut self.batched);
            }
            if m.in_group {
                m.alive = false;
                m.waiting = false;
                m.died_at = now;
                k += 1;
            } else {
                self.members.remove(k);
            }
        }
        for p in 0..self.config.partitions {
            self.trim(p);
        }
    }

    /// Kafka has no DLQ: nothing to move back.
    pub fn redrive(&mut self, _now: Nanos, _log: &mut [Event]) -> usize {
        0
    }

    /// True when a poll could change something: nobody joined yet, a rebalance is in
    /// progress, a member works (it will poll), a dead member may be restarted, or a waiting
    /// member has records to take.
    pub fn can_hand_out(&self) -> bool {
        self.members.is_empty()
            || self.pending.is_some()
            || self.members.iter().any(|m| {
                !m.alive
                    || !m.waiting
                    || !m.batch.is_empty()
                    || m.owned
                        .iter()
                        .any(|o| o.position < self.partitions[o.partition as usize].end())
            })
    }

    /// Records `worker`'s last poll returned that the application has not taken yet.
    pub fn held_from_poll(&self, worker: WorkerId) -> u32 {
        self.live_entry(worker)
            .map_or(0, |i| self.members[i].batch.len() as u32)
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
    pub fn held(&self) -> usize {
        if self.forget {
            (self.published - self.counts().deleted) as usize
        } else {
            self.published as usize
        }
    }

    pub fn table_room(&self) -> usize {
        self.partitions.iter().map(Partition::kept).sum()
    }

    /// Entries of every per-record structure: the partitions' records and the batches.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.table_room() + self.members.iter().map(|m| m.batch.len()).sum::<usize>()
    }

    /// The generation of the last completed rebalance.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The member id owning each partition in the current generation (`None`: nobody, as
    /// during an eager rebalance).
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
    pub fn owners_of(&self, p: u32) -> usize {
        self.members
            .iter()
            .filter(|m| m.in_group && m.owns(p))
            .count()
    }

    pub fn partitions(&self) -> u32 {
        self.config.partitions
    }

    /// Partition `p`'s committed offset.
    pub fn committed(&self, p: u32) -> u64 {
        self.partitions[p as usize].committed
    }
}

/// Record `off` of partition `p` (of `n`) leaves one fetched batch without being handed out.
fn leave_batch(part: &mut Partition, p: u32, off: u64, n: u32, batched: &mut Option<Vec<Batched>>) {
    part.rec_mut(off).in_batches -= 1;
    if off < part.committed {
        left_batch(batched, (off * u64::from(n) + u64::from(p) + 1) as Seq);
    }
}

/// Committed record `seq` left one of the fetched batches that held it.
fn left_batch(batched: &mut Option<Vec<Batched>>, seq: Seq) {
    if let Some(b) = batched {
        b.push(Batched { seq, change: -1 });
    }
}
