//! NATS JetStream (as measured on 2.9.10): one pull consumer with explicit acks.
//!
//! - AckWait is the lease: a delivery not acked within it is redelivered. Each in-progress ack
//!   (`+WPI`) restarts a full AckWait. `backoff` replaces AckWait per delivery (delivery n waits
//!   `backoff[n-1]`, the last value repeating).
//! - `nak` redelivers at once; `nak` with a delay, after it.
//! - Acks are matched by stream sequence only: an ack, in-progress or nak from an earlier
//!   delivery is accepted and acts on the message under its current holder (nats-server issue
//!   6937). Such acks count as stale acks.
//! - A consumer's death changes nothing until AckWait ends.
//! - Redeliveries are handed out before new messages, in the order they became due (one
//!   instant's, lowest stream sequence first). New messages are handed out only while fewer
//!   than `max_ack_pending` are delivered and unacked.
//! - At `max_deliver` (0 = unlimited) the server stops delivering when the last allowed delivery
//!   ends unacked and emits a MAX_DELIVERIES advisory; the message stays in the stream. It counts
//!   in `dlq` (reports say "MaxDeliver reached").

use std::collections::VecDeque;

use super::leases::LeaseIndex;
use super::messages::{log_ack, log_lease_moved, MessageTable, Messages};
use super::queue::{AckRefused, Handout, Receipt, VisibilityError};
use super::state::MessageState;
use crate::record::{AckOutcome, Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatsConfig {
    pub ack_wait: Nanos,
    /// Per-delivery AckWait; empty = `ack_wait` for every delivery.
    pub backoff: Vec<Nanos>,
    /// 0 = unlimited.
    pub max_deliver: u32,
    /// Delivered-and-unacked messages above which no new message is handed out (>= 1).
    pub max_ack_pending: u32,
}

impl NatsConfig {
    /// How long delivery number `delivery` (1-based) may stay unacked.
    pub fn wait(&self, delivery: u32) -> Nanos {
        match self.backoff.len() {
            0 => self.ack_wait,
            n => self.backoff[(delivery.max(1) as usize - 1).min(n - 1)],
        }
    }
}

#[derive(Debug, Clone)]
pub struct Nats {
    config: NatsConfig,
    messages: Messages,
    /// Never delivered, in stream order.
    fresh: VecDeque<Seq>,
    /// Due for redelivery, in the order they became due. May hold messages acked meanwhile
    /// (skipped on receive).
    redeliver: VecDeque<Seq>,
    /// (AckWait or nak delay end, seq) of delivered, unacked messages; an entry whose message
    /// is no longer delivered with that end is stale and skipped ([`LeaseIndex`]).
    deadlines: LeaseIndex,
    /// Delivered at least once, neither acked nor given up on.
    ack_pending: u64,
    /// Messages whose MaxDeliver was reached, in that order.
    dlq: Vec<Seq>,
}

impl Nats {
    /// A model that remembers every message it was given.
    #[cfg(test)]
    pub fn new(config: NatsConfig) -> Nats {
        Nats::with(config, Messages::remembering())
    }

    /// A model that forgets a message once it is acked, holding only the messages not yet
    /// acked (those whose MaxDeliver was reached included: a redrive may take them back); it
    /// answers and logs as [`Nats::new`] does (but `receive_count` of a forgotten message is
    /// `None`). What sim runs use.
    pub fn forgetting_settled(config: NatsConfig) -> Nats {
        Nats::with(config, Messages::forgetting())
    }

    fn with(config: NatsConfig, messages: Messages) -> Nats {
        Nats {
            config,
            messages,
            fresh: VecDeque::new(),
            redeliver: VecDeque::new(),
            deadlines: LeaseIndex::default(),
            ack_pending: 0,
            dlq: Vec::new(),
        }
    }

    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = self.messages.publish(now, log);
        self.fresh.push_back(seq);
        seq
    }

    /// Exact: every change that makes the earliest entry stale trims it ([`Nats::wait_moved`]).
    pub fn next_due(&self) -> Option<Nanos> {
        self.deadlines.first_end()
    }

    /// Deadlines due by `now` end: one instant's together, lowest sequence first.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        while let Some((t, seqs)) = self.messages.pop_due_leases(&mut self.deadlines, now) {
            for seq in seqs {
                self.wait_ended(t, seq, log);
            }
        }
    }

    /// After a delivery's wait that ended at `ended` stopped being current (acked, nak'ed,
    /// restarted), so that [`Nats::next_due`] is exact.
    fn wait_moved(&mut self, ended: Nanos) {
        self.messages.lease_moved(&mut self.deadlines, ended);
    }

    /// A delivery's wait ended unacked: redeliver, or stop at MaxDeliver.
    fn wait_ended(&mut self, at: Nanos, seq: Seq, log: &mut Vec<Event>) {
        let delivery = self.messages.msg(seq).deliveries;
        let max = self.config.max_deliver;
        if max > 0 && delivery >= max {
            self.messages.set_state(seq, MessageState::DeadLettered);
            self.ack_pending -= 1;
            self.dlq.push(seq);
            log.push(Event {
                at,
                kind: EventKind::DeadLettered { seq, delivery },
            });
        } else {
            self.messages.set_state(seq, MessageState::Visible);
            self.redeliver.push_back(seq);
            log.push(Event {
                at,
                kind: EventKind::LeaseExpired { seq, delivery },
            });
        }
    }

    fn may_deliver_new(&self) -> bool {
        self.ack_pending < u64::from(self.config.max_ack_pending)
    }

    pub fn can_hand_out(&self) -> bool {
        !self.redeliver.is_empty() || (!self.fresh.is_empty() && self.may_deliver_new())
    }

    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let seq = loop {
            match self.redeliver.pop_front() {
                Some(seq) if self.messages.state(seq) == Some(MessageState::Visible) => break seq,
                Some(_) => continue, // acked while waiting for redelivery
                None => {
                    if !self.may_deliver_new() {
                        return None;
                    }
                    let seq = self.fresh.pop_front()?;
                    self.ack_pending += 1;
                    break seq;
                }
            }
        };
        let delivery = self.messages.msg(seq).deliveries + 1;
        let end = now.saturating_add(self.config.wait(delivery));
        self.deadlines.insert(end, seq);
        Some(self.messages.deliver(now, seq, worker, end, log))
    }

    /// Accepted from any delivery of the message: it is acked under whoever holds it now.
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
            MessageState::Deleted | MessageState::DeadLettered => AckOutcome::StaleGone,
            _ => {
                let current = self.messages.is_current(receipt, worker);
                // A message waiting in the redelivery queue is skipped there lazily.
                self.messages.set_state(receipt.seq, MessageState::Deleted);
                if let MessageState::Leased { lease_end, .. } = state {
                    self.wait_moved(lease_end);
                }
                self.ack_pending -= 1;
                if current {
                    AckOutcome::Deleted
                } else {
                    AckOutcome::StaleDeleted
                }
            }
        };
        log_ack(log, now, receipt, worker, delivery, outcome);
        Ok(outcome)
    }

    /// `nak` (from any delivery of the message): the current delivery ends now, or after
    /// `delay`. A message already waiting for redelivery, acked or given up on is left alone.
    pub fn nak(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        delay: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let Some(state) = self.messages.state(receipt.seq) else {
            return Err(VisibilityError::StaleReceipt);
        };
        let MessageState::Leased {
            worker: holder,
            nonce,
            lease_end,
        } = state
        else {
            return Ok(());
        };
        let delivery = self.messages.msg(receipt.seq).deliveries;
        let end = now.saturating_add(delay);
        log_lease_moved(log, now, receipt.seq, worker, delivery, end);
        if delay == 0 {
            self.wait_ended(now, receipt.seq, log);
        } else {
            self.messages.set_state(
                receipt.seq,
                MessageState::Leased {
                    worker: holder,
                    nonce,
                    lease_end: end,
                },
            );
            self.deadlines.insert(end, receipt.seq);
        }
        self.wait_moved(lease_end);
        Ok(())
    }

    /// `+WPI` (from any delivery of the message): the current delivery's wait restarts in full.
    pub fn in_progress(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let Some(state) = self.messages.state(receipt.seq) else {
            return Err(VisibilityError::StaleReceipt);
        };
        match state {
            MessageState::Leased {
                worker: holder,
                nonce,
                lease_end,
            } => {
                let delivery = self.messages.msg(receipt.seq).deliveries;
                let end = now.saturating_add(self.config.wait(delivery));
                self.deadlines.insert(end, receipt.seq);
                self.messages.set_state(
                    receipt.seq,
                    MessageState::Leased {
                        worker: holder,
                        nonce,
                        lease_end: end,
                    },
                );
                self.wait_moved(lease_end);
                log_lease_moved(log, now, receipt.seq, worker, delivery, end);
                Ok(())
            }
            // Waiting for its redelivery: nothing to restart.
            MessageState::Visible | MessageState::Delayed { .. } => Ok(()),
            MessageState::Deleted | MessageState::DeadLettered => {
                Err(VisibilityError::StaleReceipt)
            }
        }
    }

    /// An operator republishes the messages whose MaxDeliver was reached, with a fresh budget.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        let entries = std::mem::take(&mut self.dlq);
        for &seq in &entries {
            self.messages.redriven(now, seq, log);
            self.ack_pending += 1;
            self.redeliver.push_back(seq);
        }
        entries.len()
    }

    /// Entries of every per-message structure (the table's messages, the queues, timers and
    /// the messages whose MaxDeliver was reached).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.messages.held()
            + self.fresh.len()
            + self.redeliver.len()
            + self.deadlines.len()
            + self.dlq.len()
    }

    /// Messages whose MaxDeliver was reached, in that order.
    #[cfg(test)]
    pub fn dlq(&self) -> &[Seq] {
        &self.dlq
    }
}

impl MessageTable for Nats {
    type Extra = ();

    fn messages(&self) -> &Messages {
        &self.messages
    }
}
