//! Redis Streams (as measured on 7.0.15): one stream, one consumer group.
//!
//! - XREADGROUP `>` hands each new entry out once; it then stays in its owner's pending entries
//!   list (PEL) until acked. Nothing is redelivered automatically, not even when the owner dies.
//! - An idle consumer runs XAUTOCLAIM before reading new entries: it takes every entry idle for
//!   at least `min_idle`, lowest entry id first, and each claim adds one to the entry's delivery
//!   count and resets its idle time. With `claim_every` = 0 an idle consumer claims at the
//!   instant an entry reaches `min_idle` (as a long poll would); a positive value models a
//!   periodic claimer: an entry becomes claimable at the first tick (a multiple of
//!   `claim_every` from the start of the run) at or after it reaches `min_idle`.
//! - XACK from any consumer is accepted (1 the first time, 0 after); an ack by a consumer whose
//!   entry was claimed away counts as a stale ack.
//! - A heartbeat is the owner's `XCLAIM <self> 0 <id> JUSTID` (idle time reset, delivery count
//!   unchanged); handing an entry back early is the owner's `XCLAIM ... IDLE` (claimable after
//!   the delay, at most `min_idle`). Another consumer's entry is not touched (refused).
//! - `max_deliveries` (0 = none) is the consumer-side rule, since Redis has no DLQ: a claim that
//!   would make delivery `max_deliveries + 1` instead adds the entry to `<stream>:dead` and acks
//!   it (counted in `dlq`).

use std::collections::{BTreeSet, VecDeque};

use super::leases::LeaseIndex;
use super::messages::{log_ack, log_lease_moved, MessageTable, Messages};
use super::queue::{AckRefused, Handout, Receipt, VisibilityError};
use super::state::MessageState;
use crate::record::{AckOutcome, Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedisStreamsConfig {
    pub min_idle: Nanos,
    /// 0 = claim at the instant an entry reaches `min_idle`.
    pub claim_every: Nanos,
    /// 0 = no consumer-side limit.
    pub max_deliveries: u32,
}

#[derive(Debug, Clone)]
pub struct RedisStreams {
    config: RedisStreamsConfig,
    messages: Messages,
    /// Entries no consumer read yet, in id order.
    fresh: VecDeque<Seq>,
    /// (claimable from, seq) of pending entries not idle long enough yet; an entry whose message
    /// is no longer pending until then, or is claimable already, is stale ([`LeaseIndex`]).
    idle: LeaseIndex,
    /// Pending entries XAUTOCLAIM would take now, by entry id.
    claimable: BTreeSet<Seq>,
    /// Entries the consumer rule moved to `<stream>:dead`, in that order.
    dead: Vec<Seq>,
}

impl RedisStreams {
    /// A model that remembers every entry it was given.
    #[cfg(test)]
    pub fn new(config: RedisStreamsConfig) -> RedisStreams {
        RedisStreams::with(config, Messages::remembering())
    }

    /// A model that forgets an entry once it is acked, holding only the entries not yet read
    /// or still pending and those in the dead stream (a redrive may take them back); it answers
    /// and logs as [`RedisStreams::new`] does (but `receive_count` of a forgotten entry is
    /// `None`). What sim runs use.
    pub fn forgetting_settled(config: RedisStreamsConfig) -> RedisStreams {
        RedisStreams::with(config, Messages::forgetting())
    }

    fn with(config: RedisStreamsConfig, messages: Messages) -> RedisStreams {
        RedisStreams {
            config,
            messages,
            fresh: VecDeque::new(),
            idle: LeaseIndex::default(),
            claimable: BTreeSet::new(),
            dead: Vec::new(),
        }
    }

    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = self.messages.publish(now, log);
        self.fresh.push_back(seq);
        seq
    }

    /// When an entry idle since `since` can be claimed (rounded up to the claimer's tick).
    pub fn claimable_at(&self, since: Nanos) -> Nanos {
        self.on_tick(since.saturating_add(self.config.min_idle))
    }

    /// The first claim tick at or after `at`.
    fn on_tick(&self, at: Nanos) -> Nanos {
        match self.config.claim_every {
            0 => at,
            every => at.div_ceil(every).saturating_mul(every),
        }
    }

    /// Exact: every change that makes the earliest entry stale trims it ([`RedisStreams::unpend`]).
    pub fn next_due(&self) -> Option<Nanos> {
        self.idle.first_end()
    }

    /// Entries that reached `min_idle` (at a claim tick) become claimable; their owner keeps
    /// them until someone claims.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        loop {
            let (messages, claimable, idle) = (&self.messages, &self.claimable, &mut self.idle);
            let Some((t, seqs)) =
                idle.pop_due(now, |t, seq| still_idle(messages, claimable, t, seq))
            else {
                break;
            };
            for seq in seqs {
                self.claimable.insert(seq);
                let delivery = self.messages.msg(seq).deliveries;
                log.push(Event {
                    at: t,
                    kind: EventKind::LeaseExpired { seq, delivery },
                });
            }
        }
    }

    pub fn can_hand_out(&self) -> bool {
        !self.claimable.is_empty() || !self.fresh.is_empty()
    }

    /// XAUTOCLAIM first, then XREADGROUP `>`.
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        while let Some(seq) = self.claimable.pop_first() {
            let delivery = self.messages.msg(seq).deliveries;
            let max = self.config.max_deliveries;
            if max > 0 && delivery >= max {
                // The consumer rule: XADD <stream>:dead, XACK.
                self.messages.set_state(seq, MessageState::DeadLettered);
                self.dead.push(seq);
                log.push(Event {
                    at: now,
                    kind: EventKind::DeadLettered { seq, delivery },
                });
                continue;
            }
            return Some(self.hand(now, seq, worker, log));
        }
        let seq = self.fresh.pop_front()?;
        Some(self.hand(now, seq, worker, log))
    }

    fn hand(&mut self, now: Nanos, seq: Seq, worker: WorkerId, log: &mut Vec<Event>) -> Handout {
        let at = self.claimable_at(now);
        self.idle.insert(at, seq);
        self.messages.deliver(now, seq, worker, at, log)
    }

    /// Takes a pending entry out of the claimable set, or leaves its idle entry stale; call
    /// [`RedisStreams::idle_moved`] once its state has changed.
    fn unpend(&mut self, seq: Seq) -> Option<Nanos> {
        match self.messages.msg(seq).state {
            MessageState::Leased { lease_end, .. } if !self.claimable.remove(&seq) => {
                Some(lease_end)
            }
            _ => None,
        }
    }

    /// After an idle entry ending at `ended` went stale: drops stale entries from the index's
    /// top, so that [`RedisStreams::next_due`] is exact (one further down is dropped when it
    /// reaches the top).
    fn idle_moved(&mut self, ended: Option<Nanos>) {
        if ended.is_some() && self.idle.first_end() == ended {
            let (messages, claimable, idle) = (&self.messages, &self.claimable, &mut self.idle);
            idle.trim(|t, seq| still_idle(messages, claimable, t, seq));
        }
    }

    /// XACK from anyone: the pending entry is acked whoever owns it.
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
        let outcome = match state {
            MessageState::Leased { .. } => {
                let current = self.messages.is_current(receipt, worker);
                let ended = self.unpend(receipt.seq);
                self.messages.set_state(receipt.seq, MessageState::Deleted);
                self.idle_moved(ended);
                if current {
                    AckOutcome::Deleted
                } else {
                    AckOutcome::StaleDeleted
                }
            }
            _ => AckOutcome::StaleGone,
        };
        log_ack(log, now, receipt, worker, delivery, outcome);
        Ok(outcome)
    }

    /// The owner resets the entry's idle time (XCLAIM to itself, JUSTID).
    pub fn touch(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        self.repend(now, receipt, worker, self.claimable_at(now), log)
    }

    /// The owner makes the entry claimable after `delay` (at most `min_idle`): XCLAIM to itself
    /// with `IDLE min_idle - delay`, JUSTID.
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        delay: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let at = self.on_tick(now.saturating_add(delay.min(self.config.min_idle)));
        self.repend(now, receipt, worker, at, log)
    }

    fn repend(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        at: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        if !self.messages.is_current(receipt, worker) {
            return Err(VisibilityError::StaleReceipt);
        }
        let seq = receipt.seq;
        let ended = self.unpend(seq);
        let delivery = self.messages.msg(seq).deliveries;
        log_lease_moved(log, now, seq, worker, delivery, at);
        self.messages.set_state(
            seq,
            MessageState::Leased {
                worker,
                nonce: receipt.nonce,
                lease_end: at,
            },
        );
        if at <= now {
            self.claimable.insert(seq);
            log.push(Event {
                at: now,
                kind: EventKind::LeaseExpired { seq, delivery },
            });
        } else {
            self.idle.insert(at, seq);
        }
        self.idle_moved(ended);
        Ok(())
    }

    /// An operator adds the dead stream's entries back to the stream, with a fresh budget.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        let entries = std::mem::take(&mut self.dead);
        for &seq in &entries {
            self.messages.redriven(now, seq, log);
            self.fresh.push_back(seq);
        }
        entries.len()
    }

    /// Entries of every per-message structure (the table's messages, the unread entries, idle
    /// timers, claimable entries and the dead stream).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.messages.held()
            + self.fresh.len()
            + self.idle.len()
            + self.claimable.len()
            + self.dead.len()
    }

    /// Entries moved to `<stream>:dead`, in that order.
    #[cfg(test)]
    pub fn dlq(&self) -> &[Seq] {
        &self.dead
    }

    /// True when entry `seq` is pending and XAUTOCLAIM would take it now.
    #[cfg(test)]
    pub fn is_claimable(&self, seq: Seq) -> bool {
        self.claimable.contains(&seq)
    }
}

/// True when index entry `(t, seq)` is current: the entry is pending until `t` and not
/// claimable yet.
fn still_idle(messages: &Messages, claimable: &BTreeSet<Seq>, t: Nanos, seq: Seq) -> bool {
    messages.leased_until(seq, t) && !claimable.contains(&seq)
}

impl MessageTable for RedisStreams {
    type Extra = ();

    fn messages(&self) -> &Messages {
        &self.messages
    }
}
