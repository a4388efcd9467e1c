//! The broker proper: publish, receive, ack, change visibility, lease expiry, DLQ, redrive.

use std::collections::{BTreeSet, VecDeque};

use super::leases::LeaseIndex;

use super::dedup::Deduplicator;
use super::groups::Groups;
use super::state::{Counts, MessageState};
use super::table::{Message, Table};
use crate::profile::StaleAck;
use crate::record::{earliest, AckOutcome, Event, EventKind, Nanos, Seq, WorkerId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokerConfig {
    pub visibility_timeout: Nanos,
    /// 0 = no delivery limit.
    pub max_receives: u32,
    pub stale_ack: StaleAck,
}

/// Proof of one delivery's lease. `nonce` numbers the message's deliveries from 1 and never
/// repeats (not even after a redrive), so an old receipt is never mistaken for the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Receipt {
    pub seq: Seq,
    pub nonce: u32,
}

/// One hand-out of a message to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handout {
    pub receipt: Receipt,
    /// Receive count, this delivery included.
    pub receive_count: u32,
    pub lease_end: Nanos,
}

/// An ack the broker refused (`stale_ack: reject` and a receipt that is not current).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("receipt of delivery {} of message {} is not current: ack refused", .0.nonce, .0.seq)]
pub struct AckRefused(pub Receipt);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VisibilityError {
    #[error("receipt is not the message's current one")]
    StaleReceipt,
}

/// The embedded broker. Messages are numbered from 1 in publish order.
#[derive(Debug, Clone)]
pub struct Broker {
    config: BrokerConfig,
    messages: Table<Message>,
    /// Visible messages, front first. May hold messages deleted while visible (`stale_ack:
    /// delete`); those are skipped on receive.
    visible: VecDeque<Seq>,
    /// (visible at, seq) of delayed messages.
    delayed: BTreeSet<(Nanos, Seq)>,
    /// (lease end, seq) of leased messages, stale entries left in place ([`LeaseIndex`]).
    leases: LeaseIndex,
    /// DLQ entries in the order they arrived.
    dlq: Vec<Seq>,
    counts: Counts,
    /// A FIFO queue's deduplication; `None` for a standard queue.
    dedup: Option<Deduplicator>,
    /// A FIFO queue's message groups; `None` for a standard queue.
    groups: Option<Groups>,
}

impl Broker {
    /// A broker that remembers every message it was ever given, settled or not: what a live
    /// run's embedded broker uses, and tests that look at every message.
    pub fn new(config: BrokerConfig) -> Broker {
        Broker::with_table(config, Table::remembering())
    }

    /// A broker that forgets a message once it is settled: deleted (acked, purged, or by a
    /// stale ack's policy) or taken from the DLQ with [`Broker::take_dlq`]. It holds only the
    /// messages still in the queue and the DLQ entries not yet taken (a redrive may still take
    /// those back), so its memory does not grow with every message it ever carried: what sim
    /// runs and a long-running broker use. It answers every operation as a broker that
    /// remembers does, with the same events: every receipt of a forgotten message is stale
    /// (`StaleGone`), and its stale ack's event names the receipt's delivery number exactly
    /// (the table keeps the redrive offset of a redriven message it forgets). Only
    /// [`Broker::state`] and [`Broker::receive_count`] of a forgotten message are `None`
    /// ([`Broker::forgotten`] tells it from a seq never published).
    pub fn forgetting_settled(config: BrokerConfig) -> Broker {
        Broker::with_table(config, Table::forgetting())
    }

    fn with_table(config: BrokerConfig, messages: Table<Message>) -> Broker {
        Broker {
            config,
            messages,
            visible: VecDeque::new(),
            delayed: BTreeSet::new(),
            leases: LeaseIndex::default(),
            dlq: Vec::new(),
            counts: Counts::default(),
            dedup: None,
            groups: None,
        }
    }

    /// This broker as a FIFO queue with message groups ([`Groups`]): within a group one message
    /// is in flight at a time and order holds. Messages name their group when published
    /// ([`Broker::publish_send`]); [`Broker::publish`] puts them in group 0.
    pub fn with_groups(mut self) -> Broker {
        self.groups = Some(Groups::new());
        self
    }

    /// The queue's message groups, if it has them.
    #[cfg(test)]
    pub fn groups(&self) -> Option<&Groups> {
        self.groups.as_ref()
    }

    /// This broker as a FIFO queue that drops a send whose deduplication id it accepted less
    /// than `window` ago ([`Deduplicator`]).
    pub fn with_deduplication(mut self, window: Nanos) -> Broker {
        self.dedup = Some(Deduplicator::new(window));
        self
    }

    /// [`Broker::with_deduplication`] on a broker already made, before its first send (a
    /// FIFO queue's interval, set once at its creation).
    pub fn set_deduplication(&mut self, window: Nanos) {
        self.dedup = Some(Deduplicator::new(window));
    }

    /// A send with deduplication id `id` into message group `group` (0 on a queue without
    /// groups): published as [`Broker::publish`] does, or, on a FIFO queue that accepted `id`
    /// within its window, dropped (`None`; nothing is logged, the sender is told it succeeded).
    /// A standard queue publishes every send.
    pub fn publish_send(
        &mut self,
        now: Nanos,
        delay: Nanos,
        id: &str,
        group: u32,
        log: &mut Vec<Event>,
    ) -> Option<Seq> {
        self.send(now, delay, id, group, log).ok()
    }

    /// [`Broker::publish_send`], saying which message a dropped duplicate repeats: `Ok` with the
    /// new message's seq, or `Err` with the seq of the message that holds `id` (0 if unknown).
    pub fn send(
        &mut self,
        now: Nanos,
        delay: Nanos,
        id: &str,
        group: u32,
        log: &mut Vec<Event>,
    ) -> Result<Seq, Seq> {
        if let Some(d) = &mut self.dedup {
            if !d.admit(now, id) {
                return Err(d.message_of(id).unwrap_or(0));
            }
        }
        let seq = self.publish_in(now, delay, group, log);
        if let Some(d) = &mut self.dedup {
            d.accepted(id, seq);
        }
        Ok(seq)
    }

    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Messages published so far.
    pub fn len(&self) -> usize {
        self.messages.published()
    }

    /// Messages the broker keeps in memory: all of them ([`Broker::new`]), or those it still
    /// holds ([`Broker::forgetting_settled`]).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.messages.held_count()
    }

    /// The room its message table takes, in messages (what [`Broker::held`] keeps, the table's
    /// spare slots, and the redrive offsets of forgotten messages).
    #[cfg(test)]
    pub fn table_room(&self) -> usize {
        self.messages.room()
    }

    /// Entries of every per-message structure (the table's messages, the queues, timers and
    /// DLQ; not a FIFO queue's deduplication ids, which its window bounds).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.messages.held_count()
            + self.visible.len()
            + self.delayed.len()
            + self.leases.len()
            + self.dlq.len()
    }

    /// True when message `seq` was published and then forgotten (settled, in a broker that
    /// forgets settled messages).
    #[cfg(test)]
    pub fn forgotten(&self, seq: Seq) -> bool {
        self.messages.forgotten(seq)
    }

    pub fn state(&self, seq: Seq) -> Option<MessageState> {
        self.msg(seq).map(|m| m.state)
    }

    pub fn receive_count(&self, seq: Seq) -> Option<u32> {
        self.msg(seq).map(|m| m.receive_count)
    }

    /// DLQ entries in arrival order.
    pub fn dlq(&self) -> &[Seq] {
        &self.dlq
    }

    /// True when the main queue holds nothing (no visible, leased or delayed message).
    #[cfg(test)]
    pub fn is_settled(&self) -> bool {
        self.counts.in_queue() == 0
    }

    /// True when a receive now would hand out a message (with groups: a visible message whose
    /// group has nothing in flight).
    pub fn has_visible(&self) -> bool {
        match &self.groups {
            Some(g) => g.receivable() > 0,
            None => self.counts.visible > 0,
        }
    }

    /// Publishes a message, visible at once or after `delay`. Returns its seq.
    pub fn publish(&mut self, now: Nanos, delay: Nanos, log: &mut Vec<Event>) -> Seq {
        self.publish_in(now, delay, 0, log)
    }

    /// Publishes a message into message group `group` with no deduplication (a move into a FIFO
    /// dead-letter queue keeps the message's group).
    pub fn publish_in(
        &mut self,
        now: Nanos,
        delay: Nanos,
        group: u32,
        log: &mut Vec<Event>,
    ) -> Seq {
        let state = if delay == 0 {
            MessageState::Visible
        } else {
            MessageState::Delayed { until: now + delay }
        };
        let seq = self.messages.push(Message {
            state,
            receive_count: 0,
            nonce: 0,
            group,
        });
        if let Some(g) = &mut self.groups {
            g.moved(group, None, state);
        }
        if delay == 0 {
            self.visible.push_back(seq);
        } else {
            self.delayed.insert((now + delay, seq));
        }
        *self.counts.slot(state) += 1;
        log.push(Event {
            at: now,
            kind: EventKind::Published { seq },
        });
        seq
    }

    /// The next instant at which a delay or a lease ends, if any.
    pub fn next_due(&self) -> Option<Nanos> {
        let d = self.delayed.first().map(|&(t, _)| t);
        earliest(d, self.leases.first_end())
    }

    /// Ends every delay and lease due at or before `now`. Expired leases go back to the front of
    /// the visible queue (leases ending at the same instant together, earliest published first),
    /// or to the DLQ when the delivery limit is reached.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        while let Some(&(t, seq)) = self.delayed.first() {
            if t > now {
                break;
            }
            self.delayed.pop_first();
            self.set_state(seq, MessageState::Visible);
            self.visible.push_back(seq);
        }
        // One instant's expiries go back together: take them all, earliest published first.
        loop {
            let (messages, leases) = (&self.messages, &mut self.leases);
            let Some((t, group)) = leases.pop_due(now, |t, seq| is_lease(messages, t, seq)) else {
                break;
            };
            // Within one instant the seqs come ascending, i.e. earliest published first:
            // DLQ moves in that order, then the rest pushed to the front in reverse, so the
            // earliest published ends up first.
            let (to_dlq, back): (Vec<Seq>, Vec<Seq>) = group
                .into_iter()
                .partition(|&seq| self.at_delivery_limit(seq));
            for seq in to_dlq.into_iter().chain(back.into_iter().rev()) {
                self.end_lease(t, seq, log);
            }
        }
    }

    /// A lease ended (expired or released) at `at`: back to the front, or to the DLQ.
    fn end_lease(&mut self, at: Nanos, seq: Seq, log: &mut Vec<Event>) {
        let delivery = self.message(seq).receive_count;
        if self.at_delivery_limit(seq) {
            self.set_state(seq, MessageState::DeadLettered);
            self.dlq.push(seq);
            log.push(Event {
                at,
                kind: EventKind::DeadLettered { seq, delivery },
            });
        } else {
            self.set_state(seq, MessageState::Visible);
            self.visible.push_front(seq);
            log.push(Event {
                at,
                kind: EventKind::LeaseExpired { seq, delivery },
            });
        }
    }

    /// Hands the front visible message to `worker`, if any.
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        self.receive_for(now, worker, self.config.visibility_timeout, log)
    }

    /// Hands the front visible message to `worker` with a lease of `visibility_timeout` instead of
    /// the configured one (an SQS receive that names its own `VisibilityTimeout`).
    pub fn receive_for(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        visibility_timeout: Nanos,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        if self.groups.is_some() {
            return self.receive_in_groups(now, worker, visibility_timeout, log);
        }
        while let Some(seq) = self.visible.pop_front() {
            let Some(m) = self.messages.get_mut(seq) else {
                continue; // deleted while visible, and forgotten
            };
            if m.state != MessageState::Visible {
                continue; // deleted while visible
            }
            return Some(self.lease_to(now, seq, worker, visibility_timeout, log));
        }
        None
    }

    /// A receive on a queue with groups: the first visible message whose group has nothing in
    /// flight (entries of messages deleted while visible are dropped on the way).
    fn receive_in_groups(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        visibility_timeout: Nanos,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let groups = self.groups.as_ref()?;
        if groups.receivable() == 0 {
            return None;
        }
        let mut i = 0;
        while let Some(&seq) = self.visible.get(i) {
            match self.messages.get(seq) {
                Some(m) if m.state == MessageState::Visible => {
                    if groups.is_free(m.group) {
                        self.visible.remove(i);
                        return Some(self.lease_to(now, seq, worker, visibility_timeout, log));
                    }
                    i += 1;
                }
                _ => {
                    self.visible.remove(i);
                }
            }
        }
        None
    }

    /// Hands visible message `seq` to `worker` with a lease of `visibility_timeout`.
    fn lease_to(
        &mut self,
        now: Nanos,
        seq: Seq,
        worker: WorkerId,
        visibility_timeout: Nanos,
        log: &mut Vec<Event>,
    ) -> Handout {
        let m = self.message_mut(seq);
        m.receive_count += 1;
        m.nonce += 1;
        let (receive_count, nonce) = (m.receive_count, m.nonce);
        let lease_end = now.saturating_add(visibility_timeout);
        self.set_state(
            seq,
            MessageState::Leased {
                worker,
                nonce,
                lease_end,
            },
        );
        self.leases.insert(lease_end, seq);
        log.push(Event {
            at: now,
            kind: EventKind::Delivered {
                seq,
                worker,
                delivery: receive_count,
                lease_end,
            },
        });
        Handout {
            receipt: Receipt { seq, nonce },
            receive_count,
            lease_end,
        }
    }

    /// Acks (deletes) by receipt. A stale receipt is handled by the `stale_ack` policy; every
    /// stale ack is recorded as such, whatever the policy.
    pub fn ack(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<AckOutcome, AckRefused> {
        let state = match self.msg(receipt.seq) {
            Some(m) => m.state,
            // Deleted, or taken from the DLQ, then forgotten.
            None if self.messages.forgotten(receipt.seq) => MessageState::Deleted,
            None => return Err(AckRefused(receipt)),
        };
        let delivery = self.messages.delivery_of(receipt);
        let outcome = match state {
            MessageState::Leased {
                nonce, lease_end, ..
            } if nonce == receipt.nonce => {
                self.set_state(receipt.seq, MessageState::Deleted);
                self.trim_leases(lease_end);
                AckOutcome::Deleted
            }
            MessageState::Deleted | MessageState::DeadLettered => AckOutcome::StaleGone,
            MessageState::Visible
                if self.config.stale_ack == StaleAck::Sqs && self.is_latest(receipt) =>
            {
                // The lease ended and nobody received the message since: SQS accepts the
                // latest receipt. Its entry in `visible` is skipped lazily on receive.
                self.set_state(receipt.seq, MessageState::Deleted);
                AckOutcome::LateDeleted
            }
            _ => match self.config.stale_ack {
                StaleAck::Reject => AckOutcome::StaleRejected,
                StaleAck::Ignore | StaleAck::Sqs => AckOutcome::StaleIgnored,
                StaleAck::Delete => {
                    // Leased: its index entry is stale once deleted (trimmed below); visible:
                    // skipped lazily on receive.
                    if let MessageState::Delayed { until } = state {
                        self.delayed.remove(&(until, receipt.seq));
                    }
                    self.set_state(receipt.seq, MessageState::Deleted);
                    if let MessageState::Leased { lease_end, .. } = state {
                        self.trim_leases(lease_end);
                    }
                    AckOutcome::StaleDeleted
                }
            },
        };
        if matches!(
            outcome,
            AckOutcome::Deleted | AckOutcome::StaleDeleted | AckOutcome::LateDeleted
        ) {
            self.messages.forget(receipt.seq);
        }
        log.push(Event {
            at: now,
            kind: EventKind::Acked {
                seq: receipt.seq,
                worker,
                delivery,
                outcome,
            },
        });
        let refused = match outcome {
            AckOutcome::StaleRejected => true,
            AckOutcome::StaleGone => self.config.stale_ack == StaleAck::Reject,
            _ => false,
        };
        if refused {
            Err(AckRefused(receipt))
        } else {
            Ok(outcome)
        }
    }

    /// True when `receipt` is the message's latest delivery and the message has been received
    /// since its last redrive (a redrive makes it a new message: every earlier receipt is old).
    fn is_latest(&self, receipt: Receipt) -> bool {
        self.msg(receipt.seq)
            .is_some_and(|m| m.nonce == receipt.nonce && m.receive_count > 0)
    }

    /// Sets the current lease to end `timeout` from now; 0 ends it at once (the message goes
    /// back to the front of the queue, or to the DLQ if this was its last allowed delivery).
    /// Under `stale_ack: sqs` the latest receipt of a message whose lease ended, nobody having
    /// received it since, is accepted too, as SQS does: the message is hidden again for
    /// `timeout` (held by `worker`); with 0 it stays visible.
    pub fn change_visibility(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        timeout: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<Nanos, VisibilityError> {
        let Some(m) = self.msg(receipt.seq) else {
            return Err(VisibilityError::StaleReceipt);
        };
        if m.state == MessageState::Visible
            && self.config.stale_ack == StaleAck::Sqs
            && self.is_latest(receipt)
        {
            return Ok(self.lease_again(now, receipt, worker, timeout, log));
        }
        let MessageState::Leased {
            nonce,
            lease_end,
            worker: holder,
        } = m.state
        else {
            return Err(VisibilityError::StaleReceipt);
        };
        if nonce != receipt.nonce {
            return Err(VisibilityError::StaleReceipt);
        }
        let delivery = m.receive_count;
        let new_end = now + timeout;
        log.push(Event {
            at: now,
            kind: EventKind::VisibilityChanged {
                seq: receipt.seq,
                worker,
                delivery,
                lease_end: new_end,
            },
        });
        if timeout == 0 {
            self.end_lease(now, receipt.seq, log);
        } else {
            self.set_state(
                receipt.seq,
                MessageState::Leased {
                    worker: holder,
                    nonce,
                    lease_end: new_end,
                },
            );
            self.leases.insert(new_end, receipt.seq);
        }
        self.trim_leases(lease_end);
        Ok(new_end)
    }

    /// A visibility change with the latest receipt of a visible message (`stale_ack: sqs`): the
    /// message leaves the visible queue for `timeout` (0: it stays visible).
    fn lease_again(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        timeout: Nanos,
        log: &mut Vec<Event>,
    ) -> Nanos {
        let new_end = now.saturating_add(timeout);
        if timeout == 0 {
            return new_end; // visible already: nothing changes, nothing to record
        }
        let delivery = self.message(receipt.seq).receive_count;
        log.push(Event {
            at: now,
            kind: EventKind::VisibilityChanged {
                seq: receipt.seq,
                worker,
                delivery,
                lease_end: new_end,
            },
        });
        if let Some(i) = self.visible.iter().position(|&s| s == receipt.seq) {
            self.visible.remove(i);
        }
        self.set_state(
            receipt.seq,
            MessageState::Leased {
                worker,
                nonce: receipt.nonce,
                lease_end: new_end,
            },
        );
        self.leases.insert(new_end, receipt.seq);
        new_end
    }

    /// Replaces the configuration. A new visibility timeout applies to the leases handed out from
    /// now on; a new delivery limit applies to every lease that ends from now on.
    pub fn set_config(&mut self, config: BrokerConfig) {
        self.config = config;
    }

    /// Deletes every message the main queue holds (visible, delayed or leased), as an operator's
    /// purge does; receipts of purged deliveries become stale. Returns how many were deleted.
    /// The event log has no purge event: purged messages simply receive no further events.
    pub fn purge(&mut self) -> usize {
        let purged = self.messages.seqs_where(|m| {
            matches!(
                m.state,
                MessageState::Visible | MessageState::Delayed { .. } | MessageState::Leased { .. }
            )
        });
        for &seq in &purged {
            self.set_state(seq, MessageState::Deleted);
            self.messages.forget(seq);
        }
        // Emptied queues give their room back: a purge is where a queue's backlog ends.
        self.visible = VecDeque::new();
        self.delayed.clear();
        self.leases.clear();
        purged.len()
    }

    /// Hands the DLQ entries that arrived since the last call to the caller, in arrival order,
    /// as a move to a dead-letter queue does: they are no longer redriven from here, and a
    /// [`Broker::forgetting_settled`] broker forgets them.
    pub fn take_dlq(&mut self) -> Vec<Seq> {
        let taken = std::mem::take(&mut self.dlq);
        for &seq in &taken {
            self.messages.forget(seq);
        }
        taken
    }

    /// Moves every DLQ entry back to the end of the main queue with a fresh delivery budget, as an
    /// operator's redrive does. Returns how many moved.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        let entries = std::mem::take(&mut self.dlq);
        for &seq in &entries {
            self.message_mut(seq).receive_count = 0;
            self.set_state(seq, MessageState::Visible);
            self.visible.push_back(seq);
            log.push(Event {
                at: now,
                kind: EventKind::Redriven { seq },
            });
        }
        entries.len()
    }

    /// After a lease ending at `ended` stopped being current: drops the index's stale entries
    /// from its top, so that [`Broker::next_due`] is exact. Only the top matters: a stale entry
    /// further down is dropped when it reaches the top.
    fn trim_leases(&mut self, ended: Nanos) {
        if self.leases.first_end() == Some(ended) {
            let (messages, leases) = (&self.messages, &mut self.leases);
            leases.trim(|t, seq| is_lease(messages, t, seq));
        }
    }

    /// True when the message's current delivery is the last one the limit allows.
    fn at_delivery_limit(&self, seq: Seq) -> bool {
        let limit = self.config.max_receives;
        limit > 0 && self.message(seq).receive_count >= limit
    }

    fn msg(&self, seq: Seq) -> Option<&Message> {
        self.messages.get(seq)
    }

    /// A message the broker holds (every seq the broker itself queued, leased or dead-lettered).
    fn message(&self, seq: Seq) -> &Message {
        self.messages.get(seq).expect("a message the broker holds")
    }

    fn message_mut(&mut self, seq: Seq) -> &mut Message {
        self.messages
            .get_mut(seq)
            .expect("a message the broker holds")
    }

    fn set_state(&mut self, seq: Seq, new: MessageState) {
        let m = self
            .messages
            .get_mut(seq)
            .expect("a message the broker holds");
        *self.counts.slot(m.state) -= 1;
        *self.counts.slot(new) += 1;
        if let Some(g) = &mut self.groups {
            g.moved(m.group, Some(m.state), new);
        }
        m.state = new;
    }
}

/// True when message `seq` is leased with its lease ending at `end` (a current entry of the
/// lease index).
fn is_lease(messages: &Table<Message>, end: Nanos, seq: Seq) -> bool {
    messages.get(seq).is_some_and(
        |m| matches!(m.state, MessageState::Leased { lease_end, .. } if lease_end == end),
    )
}
