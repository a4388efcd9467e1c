//! The per-message bookkeeping the RabbitMQ, NATS and Redis models share: each message's state
//! in the common vocabulary, its delivery count and its receipt nonces (and what else the kind
//! keeps per message, `X`), with the state counts kept in step.
//!
//! Messages are kept in a [`Table`]: every message ever published ([`Messages::remembering`]),
//! or only those not yet deleted ([`Messages::forgetting`], what sim runs use): a message is
//! forgotten once deleted, and a forgotten message still answers as a deleted one (its state is
//! `Deleted`, its receipts' delivery numbers are exact); only its delivery count is gone.

use super::leases::LeaseIndex;
use super::queue::{Handout, Receipt};
use super::state::{Counts, MessageState};
use super::table::{Entry, Table};
use crate::record::{Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone)]
pub(crate) struct Msg<X = ()> {
    pub state: MessageState,
    /// Deliveries since publish (or since the last redrive).
    pub deliveries: u32,
    /// Deliveries ever; the last receipt's nonce (never reused, not even after a redrive).
    pub nonce: u32,
    /// What the kind keeps per message besides.
    pub extra: X,
}

impl<X> Entry for Msg<X> {
    fn deliveries(&self) -> u32 {
        self.deliveries
    }
    fn nonce(&self) -> u32 {
        self.nonce
    }
}

/// What the RabbitMQ, NATS and Redis models answer from their [`Messages`] alone: counts, a
/// message's state and delivery count.
pub(crate) trait MessageTable {
    type Extra: Default;

    fn messages(&self) -> &Messages<Self::Extra>;

    fn counts(&self) -> Counts {
        self.messages().counts()
    }

    /// Where message `seq` is (`Deleted` once forgotten); `None` if it was never published.
    #[cfg(test)]
    fn state(&self, seq: Seq) -> Option<MessageState> {
        self.messages().state(seq)
    }

    /// Deliveries of message `seq` so far (since its last redrive), while it is kept.
    fn receive_count(&self, seq: Seq) -> Option<u32> {
        self.messages().get(seq).map(|m| m.deliveries)
    }

    /// Messages kept in memory.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.messages().held()
    }

    /// The room the message table takes, in messages.
    #[cfg(test)]
    fn table_room(&self) -> usize {
        self.messages().table_room()
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Messages<X = ()> {
    table: Table<Msg<X>>,
    counts: Counts,
}

impl<X: Default> Messages<X> {
    /// A table of every message ever published.
    #[cfg(test)]
    pub fn remembering() -> Messages<X> {
        Messages {
            table: Table::remembering(),
            counts: Counts::default(),
        }
    }

    /// A table that forgets a message once it is deleted.
    pub fn forgetting() -> Messages<X> {
        Messages {
            table: Table::forgetting(),
            counts: Counts::default(),
        }
    }

    /// Messages kept in memory.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.table.held_count()
    }

    /// The room the table takes, in messages.
    #[cfg(test)]
    pub fn table_room(&self) -> usize {
        self.table.room()
    }

    /// Appends a visible message; returns its seq.
    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        let seq = self.table.push(Msg {
            state: MessageState::Visible,
            deliveries: 0,
            nonce: 0,
            extra: X::default(),
        });
        self.counts.visible += 1;
        log.push(Event {
            at: now,
            kind: EventKind::Published { seq },
        });
        seq
    }

    /// A message still kept.
    #[inline]
    pub fn get(&self, seq: Seq) -> Option<&Msg<X>> {
        self.table.get(seq)
    }

    /// A message the model holds (every seq it queued, handed out or dead-lettered).
    #[inline]
    pub fn msg(&self, seq: Seq) -> &Msg<X> {
        self.table.get(seq).expect("a message the model holds")
    }

    #[inline]
    fn msg_mut(&mut self, seq: Seq) -> &mut Msg<X> {
        self.table.get_mut(seq).expect("a message the model holds")
    }

    /// What the kind keeps of message `seq` besides, while it holds it.
    #[inline]
    pub fn extra_mut(&mut self, seq: Seq) -> &mut X {
        &mut self.msg_mut(seq).extra
    }

    /// Where message `seq` is: `Deleted` once forgotten, `None` if it was never published.
    #[inline]
    pub fn state(&self, seq: Seq) -> Option<MessageState> {
        match self.table.get(seq) {
            Some(m) => Some(m.state),
            None if self.table.forgotten(seq) => Some(MessageState::Deleted),
            None => None,
        }
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Moves message `seq` to state `new`; once deleted, a forgetting table forgets it.
    #[inline]
    pub fn set_state(&mut self, seq: Seq, new: MessageState) {
        let m = self.table.get_mut(seq).expect("a message the model holds");
        *self.counts.slot(m.state) -= 1;
        *self.counts.slot(new) += 1;
        m.state = new;
        if new == MessageState::Deleted {
            self.table.forget(seq);
        }
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
        let m = self.msg_mut(seq);
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

    /// The leases of `index` ending at its earliest end, if that end is at or before `now`
    /// ([`LeaseIndex::pop_due`]; an entry is current while its message is leased until its end).
    pub fn pop_due_leases(&self, index: &mut LeaseIndex, now: Nanos) -> Option<(Nanos, Vec<Seq>)> {
        index.pop_due(now, |t, seq| self.leased_until(seq, t))
    }

    /// After a lease of `index` ending at `ended` stopped being current (settled, moved): drops
    /// stale entries from the index's top, so that its first end is exact. A stale entry further
    /// down is dropped when it reaches the top.
    pub fn lease_moved(&self, index: &mut LeaseIndex, ended: Nanos) {
        if index.first_end() == Some(ended) {
            index.trim(|t, seq| self.leased_until(seq, t));
        }
    }

    /// The delivery count of the delivery a receipt belongs to (of a message published).
    pub fn delivery_of(&self, r: Receipt) -> u32 {
        self.table.delivery_of(r)
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
        self.msg_mut(seq).deliveries = 0;
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
