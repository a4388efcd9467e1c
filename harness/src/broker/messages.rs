//! The per-message bookkeeping the RabbitMQ, NATS and Redis models share: each message's state
//! in the common vocabulary, its delivery count and its receipt nonces, with the state counts
//! kept in step.

use super::queue::{Handout, Receipt};
use super::state::{Counts, MessageState};
use crate::record::{Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone)]
pub(crate) struct Msg {
    pub state: MessageState,
    /// Deliveries since publish (or since the last redrive).
    pub deliveries: u32,
    /// Deliveries ever; the last receipt's nonce (never reused, not even after a redrive).
    pub nonce: u32,
}

/// What the RabbitMQ, NATS and Redis models answer from their [`Messages`] alone: counts, a
/// message's state and delivery count.
pub(crate) trait MessageTable {
    fn messages(&self) -> &Messages;

    fn counts(&self) -> Counts {
        self.messages().counts()
    }

    fn state(&self, seq: Seq) -> Option<MessageState> {
        self.messages().get(seq).map(|m| m.state)
    }

    fn receive_count(&self, seq: Seq) -> Option<u32> {
        self.messages().get(seq).map(|m| m.deliveries)
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Messages {
    msgs: Vec<Msg>,
    counts: Counts,
}

impl Messages {
    /// Appends a visible message; returns its seq.
    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = Seq::try_from(self.msgs.len() + 1).expect("fewer than 2^32 messages");
        self.msgs.push(Msg {
            state: MessageState::Visible,
            deliveries: 0,
            nonce: 0,
        });
        self.counts.visible += 1;
        log.push(Event {
            at: now,
            kind: EventKind::Published { seq },
        });
        seq
    }

    #[inline]
    pub fn get(&self, seq: Seq) -> Option<&Msg> {
        seq.checked_sub(1).and_then(|i| self.msgs.get(i as usize))
    }

    #[inline]
    pub fn msg(&self, seq: Seq) -> &Msg {
        &self.msgs[(seq - 1) as usize]
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    #[inline]
    pub fn set_state(&mut self, seq: Seq, new: MessageState) {
        let m = &mut self.msgs[(seq - 1) as usize];
        *self.counts.slot(m.state) -= 1;
        *self.counts.slot(new) += 1;
        m.state = new;
    }

    /// Hands message `seq` to `worker` as its next delivery, the lease (or the kind's
    /// equivalent) ending at `lease_end`; logs the delivery.
    pub fn deliver(
        &mut self,
        now: Nanos,
        seq: Seq,
        worker: WorkerId,
        lease_end: Nanos,
        log: &mut Vec<Event>,
    ) -> Handout {
        let m = &mut self.msgs[(seq - 1) as usize];
        m.deliveries += 1;
        m.nonce += 1;
        let (delivery, nonce) = (m.deliveries, m.nonce);
        self.set_state(
            seq,
            MessageState::Leased {
                worker,
                nonce,
                lease_end,
            },
        );
        log.push(Event {
            at: now,
            kind: EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end,
            },
        });
        Handout {
            receipt: Receipt { seq, nonce },
            receive_count: delivery,
            lease_end,
        }
    }

    /// True when message `seq` is delivered with its lease (or the kind's equivalent) ending at
    /// `end`: a lease index's entry `(end, seq)` is current, not stale.
    pub fn leased_until(&self, seq: Seq, end: Nanos) -> bool {
        self.get(seq).is_some_and(
            |m| matches!(m.state, MessageState::Leased { lease_end, .. } if lease_end == end),
        )
    }

    /// The delivery count of the delivery a receipt belongs to.
    pub fn delivery_of(&self, r: Receipt) -> u32 {
        let m = self.msg(r.seq);
        // Deliveries since the last redrive keep nonce - deliveries constant.
        r.nonce.saturating_sub(m.nonce - m.deliveries)
    }

    /// True when `receipt` is the current delivery of its message, held by `worker`.
    pub fn is_current(&self, receipt: Receipt, worker: WorkerId) -> bool {
        matches!(
            self.get(receipt.seq).map(|m| m.state),
            Some(MessageState::Leased { worker: w, nonce, .. }) if w == worker && nonce == receipt.nonce
        )
    }

    /// A redrive gives message `seq` a fresh delivery budget and makes it visible.
    pub fn redriven(&mut self, now: Nanos, seq: Seq, log: &mut Vec<Event>) {
        self.msgs[(seq - 1) as usize].deliveries = 0;
        self.set_state(seq, MessageState::Visible);
        log.push(Event {
            at: now,
            kind: EventKind::Redriven { seq },
        });
    }
}

/// Logs an ack of `receipt` by `worker` with `outcome`.
pub(crate) fn log_ack(
    log: &mut Vec<Event>,
    now: Nanos,
    receipt: Receipt,
    worker: WorkerId,
    delivery: u32,
    outcome: crate::record::AckOutcome,
) {
    log.push(Event {
        at: now,
        kind: EventKind::Acked {
            seq: receipt.seq,
            worker,
            delivery,
            outcome,
        },
    });
}

/// Logs that the holder (or, where the kind allows it, anyone) moved the lease of `seq` to end
/// at `lease_end`.
pub(crate) fn log_lease_moved(
    log: &mut Vec<Event>,
    now: Nanos,
    seq: Seq,
    worker: WorkerId,
    delivery: u32,
    lease_end: Nanos,
) {
    log.push(Event {
        at: now,
        kind: EventKind::VisibilityChanged {
            seq,
            worker,
            delivery,
            lease_end,
        },
    });
}
