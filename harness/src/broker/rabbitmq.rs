//! RabbitMQ (as measured on 3.10.8): a queue whose deliveries are held by the consumer's channel.
//!
//! - There is no lease timer. A delivery stays the consumer's until it acks, nacks, or its
//!   channel or connection closes. A consumer that dies closes its connection: every delivery it
//!   held is requeued at that instant and handed out at once, flagged `redelivered`.
//! - `consumer_timeout`: the server checks on a periodic channel tick (`timeout_check_every`);
//!   a delivery whose age has passed the timeout at a tick closes the holder's channel (406
//!   PRECONDITION_FAILED) and requeues everything it held. The holder's later ack fails (its
//!   delivery tag belongs to the closed channel) and counts as a stale ack. The ticks are
//!   modelled at multiples of `timeout_check_every` from the start of the run.
//! - Quorum queues put returned messages at the head, in the order they were returned, and count
//!   every return (connection close, channel close, nack with requeue) against
//!   `delivery_limit`: with limit L the (L+1)-th return dead-letters the message (through the
//!   DLX to the dead-letter queue, or drops it when `dead_letter` is off). Classic queues put a
//!   returned message back at its original position and have no delivery limit.
//! - A nack with requeue returns the message at once: RabbitMQ has no "hand back with a delay".
//!   A consumer that must hand a message back for a while uses the retry-queue idiom instead:
//!   it publishes the message to a wait queue whose per-message TTL dead-letters it back to this
//!   queue, and acks the delivery. The message re-enters at the tail after the delay, as a new
//!   message: its delivery count (and so `delivery_limit`) starts again from zero.
//! - `prefetch` bounds the unacked deliveries one consumer holds; a sim consumer takes one
//!   message at a time, so a delivery it left without ack or nack keeps counting against it.

use std::collections::{BTreeSet, VecDeque};

use super::leases::LeaseIndex;
use super::messages::{log_ack, log_lease_moved, MessageTable, Messages};
use super::queue::{AckRefused, Handout, Receipt, VisibilityError};
use super::state::MessageState;
use crate::record::{earliest, AckOutcome, Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueType {
    Quorum,
    Classic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RabbitMqConfig {
    pub queue_type: QueueType,
    pub consumer_timeout: Nanos,
    /// The channel tick on which the consumer timeout is checked (> 0).
    pub timeout_check_every: Nanos,
    /// Quorum only; 0 = none. The (L+1)-th return dead-letters.
    pub delivery_limit: u32,
    /// Unacked deliveries one consumer may hold (>= 1).
    pub prefetch: u32,
    /// A dead-letter exchange routes dead messages to a DLQ; without it they are dropped.
    pub dead_letter: bool,
}

/// What the model keeps per message besides its state and deliveries.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PerMessage {
    /// Deliveries made before it last re-entered the queue from the retry queue; its returns
    /// are counted from there.
    returns_from: u32,
    /// A classic queue's position of the message: where it was published (or re-entered).
    position: u64,
}

/// Messages ready for delivery, in the queue type's order.
#[derive(Debug, Clone)]
enum Ready {
    /// Returns first, in return order; then the rest in publish order.
    Quorum {
        returns: VecDeque<Seq>,
        fresh: VecDeque<Seq>,
    },
    /// By position: a returned message keeps the position it was published (or redriven) at.
    Classic {
        ordered: BTreeSet<(u64, Seq)>,
        next: u64,
    },
}

impl Ready {
    /// Message `seq` enters at the tail; a classic queue gives it its next `position`.
    fn push_new(&mut self, seq: Seq, m: &mut PerMessage) {
        match self {
            Ready::Quorum { fresh, .. } => fresh.push_back(seq),
            Ready::Classic { ordered, next } => {
                *next += 1;
                m.position = *next;
                ordered.insert((*next, seq));
            }
        }
    }

    /// Message `seq` is returned: at the head of a quorum queue, at its position in a classic one.
    fn push_return(&mut self, seq: Seq, m: &PerMessage) {
        match self {
            Ready::Quorum { returns, .. } => returns.push_back(seq),
            Ready::Classic { ordered, .. } => {
                ordered.insert((m.position, seq));
            }
        }
    }

    fn pop(&mut self) -> Option<Seq> {
        match self {
            Ready::Quorum { returns, fresh } => returns.pop_front().or_else(|| fresh.pop_front()),
            Ready::Classic { ordered, .. } => ordered.pop_first().map(|(_, s)| s),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Ready::Quorum { returns, fresh } => returns.is_empty() && fresh.is_empty(),
            Ready::Classic { ordered, .. } => ordered.is_empty(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RabbitMq {
    config: RabbitMqConfig,
    messages: Messages<PerMessage>,
    ready: Ready,
    /// (tick at which the delivery times out, seq) of unacked deliveries; an entry whose
    /// message is no longer delivered with that tick is stale ([`LeaseIndex`]).
    timeouts: LeaseIndex,
    /// Unacked deliveries per consumer (index worker - 1), in delivery order.
    held: Vec<Vec<Seq>>,
    /// (back at, seq) of messages in the retry queue's TTL (never stale: a message leaves the
    /// retry queue only when its TTL ends).
    waiting: LeaseIndex,
    dlq: Vec<Seq>,
}

impl RabbitMq {
    /// A model that remembers every message it was given.
    #[cfg(test)]
    pub fn new(config: RabbitMqConfig) -> RabbitMq {
        RabbitMq::with(config, Messages::remembering())
    }

    /// A model that forgets a message once it is deleted (acked, or dropped past the delivery
    /// limit without a dead-letter exchange), holding only the messages in the queue, the
    /// retry queue and the DLQ; it answers and logs as [`RabbitMq::new`] does (but
    /// `receive_count` of a forgotten message is `None`). What sim runs use.
    pub fn forgetting_settled(config: RabbitMqConfig) -> RabbitMq {
        RabbitMq::with(config, Messages::forgetting())
    }

    fn with(config: RabbitMqConfig, messages: Messages<PerMessage>) -> RabbitMq {
        let ready = match config.queue_type {
            QueueType::Quorum => Ready::Quorum {
                returns: VecDeque::new(),
                fresh: VecDeque::new(),
            },
            QueueType::Classic => Ready::Classic {
                ordered: BTreeSet::new(),
                next: 0,
            },
        };
        RabbitMq {
            config,
            messages,
            ready,
            timeouts: LeaseIndex::default(),
            held: Vec::new(),
            waiting: LeaseIndex::default(),
            dlq: Vec::new(),
        }
    }

    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = self.messages.publish(now, log);
        self.ready.push_new(seq, self.messages.extra_mut(seq));
        seq
    }

    /// The first check tick at which a delivery made at `at` has passed the consumer timeout
    /// (its age strictly more than the timeout).
    pub fn timeout_tick(&self, at: Nanos) -> Nanos {
        let every = self.config.timeout_check_every.max(1);
        let k = at.saturating_add(self.config.consumer_timeout) / every + 1;
        k.saturating_mul(every)
    }

    /// Exact: every change that makes the earliest timeout stale trims it
    /// ([`RabbitMq::timeout_moved`]).
    pub fn next_due(&self) -> Option<Nanos> {
        earliest(self.timeouts.first_end(), self.waiting.first_end())
    }

    /// Messages whose retry-queue TTL ended re-enter at the tail; consumer timeouts due by
    /// `now` each close their holder's channel, requeueing all it held.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        loop {
            let (messages, waiting) = (&self.messages, &mut self.waiting);
            let Some((t, seqs)) = waiting.pop_due(now, |t, seq| in_retry_queue(messages, t, seq))
            else {
                break;
            };
            for seq in seqs {
                let delivery = self.messages.msg(seq).deliveries;
                let m = self.messages.extra_mut(seq);
                m.returns_from = delivery;
                self.ready.push_new(seq, m);
                self.messages.set_state(seq, MessageState::Visible);
                log.push(Event {
                    at: t,
                    kind: EventKind::LeaseExpired { seq, delivery },
                });
            }
        }
        loop {
            self.trim_timeouts();
            let Some(t) = self.timeouts.first_end().filter(|&t| t <= now) else {
                break;
            };
            let seq = self.timeouts.first_seq().expect("an entry at the top");
            let MessageState::Leased { worker, .. } = self.messages.msg(seq).state else {
                unreachable!("only unacked deliveries have a current timeout")
            };
            self.close_channel(t, worker, log);
        }
    }

    /// After a timeout at `ended` stopped being current: drops stale entries from the index's
    /// top, so that [`RabbitMq::next_due`] is exact (one further down is dropped when it
    /// reaches the top).
    fn timeout_moved(&mut self, ended: Nanos) {
        if self.timeouts.first_end() == Some(ended) {
            self.trim_timeouts();
        }
    }

    fn trim_timeouts(&mut self) {
        let (messages, timeouts) = (&self.messages, &mut self.timeouts);
        timeouts.trim(|t, seq| messages.leased_until(seq, t));
    }

    pub fn can_hand_out(&self) -> bool {
        !self.ready.is_empty()
    }

    fn held_mut(&mut self, worker: WorkerId) -> &mut Vec<Seq> {
        let i = (worker - 1) as usize;
        if self.held.len() <= i {
            self.held.resize_with(i + 1, Vec::new);
        }
        &mut self.held[i]
    }

    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let prefetch = self.config.prefetch as usize;
        if self.held_mut(worker).len() >= prefetch {
            return None;
        }
        let seq = self.ready.pop()?;
        let tick = self.timeout_tick(now);
        let h = self.messages.deliver(now, seq, worker, tick, log);
        self.timeouts.insert(tick, seq);
        self.held_mut(worker).push(seq);
        Some(h)
    }

    /// The holder acks on its open channel; any other ack fails (the channel it was delivered
    /// on is closed, so the tag is unknown): refused and counted as stale.
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
        let outcome = if self.messages.is_current(receipt, worker) {
            let ended = self.settle(receipt.seq, worker);
            self.messages.set_state(receipt.seq, MessageState::Deleted);
            if let Some(t) = ended {
                self.timeout_moved(t);
            }
            AckOutcome::Deleted
        } else if matches!(state, MessageState::Deleted | MessageState::DeadLettered) {
            AckOutcome::StaleGone
        } else {
            AckOutcome::StaleRejected
        };
        log_ack(log, now, receipt, worker, delivery, outcome);
        match outcome {
            AckOutcome::Deleted => Ok(outcome),
            _ => Err(AckRefused(receipt)),
        }
    }

    /// The holder hands the message back: with no delay, nack with requeue (a return, at
    /// once); with a delay, the retry-queue idiom (published to a TTL queue that dead-letters it
    /// back after `delay`, and the delivery acked).
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        delay: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        if !self.messages.is_current(receipt, worker) {
            return Err(VisibilityError::StaleReceipt);
        }
        let seq = receipt.seq;
        let delivery = self.messages.msg(seq).deliveries;
        let back = now.saturating_add(delay);
        log_lease_moved(log, now, seq, worker, delivery, back);
        let ended = self.settle(seq, worker);
        if delay == 0 {
            self.give_back(now, seq, log);
        } else {
            self.messages
                .set_state(seq, MessageState::Delayed { until: back });
            self.waiting.insert(back, seq);
        }
        if let Some(t) = ended {
            self.timeout_moved(t);
        }
        Ok(())
    }

    /// There is no lease to extend: a heartbeat only learns whether the delivery is still held.
    pub fn extend(&mut self, receipt: Receipt, worker: WorkerId) -> Result<(), VisibilityError> {
        if self.messages.is_current(receipt, worker) {
            Ok(())
        } else {
            Err(VisibilityError::StaleReceipt)
        }
    }

    /// The consumer's connection closed (it died): everything it held is requeued now.
    pub fn connection_closed(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        self.close_channel(now, worker, log);
    }

    /// Requeues every delivery `worker` holds, in delivery order.
    fn close_channel(&mut self, at: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        let held = std::mem::take(self.held_mut(worker));
        for seq in held {
            let ended = self.timeout_of(seq);
            self.give_back(at, seq, log);
            if let Some(t) = ended {
                self.timeout_moved(t);
            }
        }
    }

    /// The tick at which `seq`'s unacked delivery times out, if it has one.
    fn timeout_of(&self, seq: Seq) -> Option<Nanos> {
        match self.messages.msg(seq).state {
            MessageState::Leased { lease_end, .. } => Some(lease_end),
            _ => None,
        }
    }

    /// Forgets the unacked delivery of `seq` held by `worker` (acked or nacked).
    /// Answers the tick its timeout was at: pass it to [`RabbitMq::timeout_moved`] once the
    /// message's state has changed.
    fn settle(&mut self, seq: Seq, worker: WorkerId) -> Option<Nanos> {
        let ended = self.timeout_of(seq);
        let held = self.held_mut(worker);
        if let Some(i) = held.iter().position(|&s| s == seq) {
            held.remove(i);
        }
        ended
    }

    /// A return: requeued, or past the delivery limit dead-lettered (dropped without a DLX).
    fn give_back(&mut self, at: Nanos, seq: Seq, log: &mut Vec<Event>) {
        let m = self.messages.msg(seq);
        let (delivery, extra) = (m.deliveries, m.extra);
        let returns = delivery - extra.returns_from;
        let limit = match self.config.queue_type {
            QueueType::Quorum => self.config.delivery_limit,
            QueueType::Classic => 0,
        };
        // Every delivery since the message (re-)entered the queue ended in a return, so this is
        // return number `returns`.
        if limit > 0 && returns > limit {
            if self.config.dead_letter {
                self.messages.set_state(seq, MessageState::DeadLettered);
                self.dlq.push(seq);
                log.push(Event {
                    at,
                    kind: EventKind::DeadLettered { seq, delivery },
                });
            } else {
                self.messages.set_state(seq, MessageState::Deleted);
                log.push(Event {
                    at,
                    kind: EventKind::Dropped { seq, delivery },
                });
            }
        } else {
            self.messages.set_state(seq, MessageState::Visible);
            self.ready.push_return(seq, &extra);
            log.push(Event {
                at,
                kind: EventKind::LeaseExpired { seq, delivery },
            });
        }
    }

    /// An operator shovels the DLQ back to the queue's tail with a fresh delivery budget.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        let entries = std::mem::take(&mut self.dlq);
        for &seq in &entries {
            self.messages.redriven(now, seq, log);
            let m = self.messages.extra_mut(seq);
            m.returns_from = 0;
            self.ready.push_new(seq, m);
        }
        entries.len()
    }

    /// Entries of every per-message structure (the table's messages, the ready queue, timers,
    /// unacked deliveries, the retry queue and the DLQ).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        let ready = match &self.ready {
            Ready::Quorum { returns, fresh } => returns.len() + fresh.len(),
            Ready::Classic { ordered, .. } => ordered.len(),
        };
        self.messages.held()
            + ready
            + self.timeouts.len()
            + self.held.iter().map(Vec::len).sum::<usize>()
            + self.waiting.len()
            + self.dlq.len()
    }

    /// Dead-lettered messages, in the order they arrived in the DLQ.
    #[cfg(test)]
    pub fn dlq(&self) -> &[Seq] {
        &self.dlq
    }

    /// The unacked deliveries `worker` holds.
    #[cfg(test)]
    pub fn held_by(&self, worker: WorkerId) -> &[Seq] {
        self.held
            .get((worker - 1) as usize)
            .map_or(&[], |v| v.as_slice())
    }
}

/// True when retry-queue entry `(t, seq)` is current: the message waits there until `t`.
fn in_retry_queue(messages: &Messages<PerMessage>, t: Nanos, seq: Seq) -> bool {
    matches!(messages.state(seq), Some(MessageState::Delayed { until }) if until == t)
}

impl MessageTable for RabbitMq {
    type Extra = PerMessage;

    fn messages(&self) -> &Messages<PerMessage> {
        &self.messages
    }
}
