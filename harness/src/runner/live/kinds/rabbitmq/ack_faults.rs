//! `message` faults on acks in the AMQP proxy: a `basic.ack` the rules select is kept from the
//! broker (`drop_ack`) or passed on `delay` later (`delay_ack`); the worker, told nothing
//! (AMQP's `basic.ack` has no reply), goes on as if the broker had it.
//!
//! The broker still counts a kept delivery as the consumer's (against its `prefetch`) until its
//! ack arrives or its channel closes, when the broker requeues it as any unacked delivery. An
//! ack with `multiple` is judged delivery by delivery: when a rule keeps any of the deliveries
//! it covers (or it covers one whose ack is already kept), the others' acks go on as single
//! acks (`multiple` unset), in tag order, so the kept one stays the consumer's at the broker. A
//! delayed ack passes on as a single ack of its tag. An ack that comes due after its channel
//! closed (the connection cut, `consumer_timeout`) or after the delivery was settled otherwise
//! (a `basic.nack` with `multiple`) is not sent: the broker would refuse it (an unknown
//! delivery tag closes the channel), and it is recorded as a stale ack, judged as the broker
//! judges the ack of a closed channel's tag.

use std::time::Instant;

use super::{AmqpConnection, Tags};
use crate::record::{AckOutcome, Seq};
use crate::runner::live::state::HeldAck;

/// An ack the proxy keeps: whose, and when it goes on (`None`: never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kept {
    channel: u16,
    tag: u64,
    seq: Seq,
    delivery: u32,
    due: Option<Instant>,
    /// Its channel closed since: it is judged stale when due, not sent.
    stale: bool,
}

/// The acks one connection keeps.
#[derive(Debug, Default)]
pub(super) struct KeptAcks(Vec<Kept>);

impl KeptAcks {
    fn holds(&self, channel: u16, tag: u64) -> bool {
        self.0.iter().any(|k| k.channel == channel && k.tag == tag)
    }

    /// Channel `channel` closed: its dropped acks are gone with it (the broker requeued their
    /// deliveries), its delayed ones become stale.
    pub(super) fn channel_closed(&mut self, channel: u16) {
        self.0.retain(|k| k.channel != channel || k.due.is_some());
        for k in self.0.iter_mut().filter(|k| k.channel == channel) {
            k.stale = true;
        }
    }

    /// When the next delayed ack is due.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.0.iter().filter_map(|k| k.due).min()
    }

    /// The delayed acks due at `now`, in the order they came due, taken out.
    fn take_due(&mut self, now: Instant) -> Vec<Kept> {
        let mut due: Vec<Kept> = Vec::new();
        self.0.retain(|k| match k.due {
            Some(at) if at <= now => {
                due.push(*k);
                false
            }
            _ => true,
        });
        due.sort_by_key(|k| k.due);
        due
    }

    /// Every delayed ack, taken out (the connection ended).
    fn take_delayed(&mut self) -> Vec<Kept> {
        let mut delayed: Vec<Kept> = self.0.iter().filter(|k| k.due.is_some()).copied().collect();
        self.0.clear();
        delayed.sort_by_key(|k| k.due);
        delayed
    }
}

/// A `basic.ack` (60, 80) of `tag` alone on channel `ch`, as the wire lays it out.
pub(super) fn single_ack(ch: u16, tag: u64) -> Vec<u8> {
    let mut f = vec![1];
    f.extend_from_slice(&ch.to_be_bytes());
    f.extend_from_slice(&13u32.to_be_bytes());
    f.extend_from_slice(&[0, 60, 0, 80]);
    f.extend_from_slice(&tag.to_be_bytes());
    f.push(0);
    f.push(0xCE);
    f
}

impl AmqpConnection {
    /// The worker acked the deliveries `taken` of channel `ch` (`closed`: the broker closed it):
    /// `None` when the ack frame goes on as it is, else the frames that go on in its place.
    pub(super) fn ack_under_rules(
        &mut self,
        ch: u16,
        closed: bool,
        taken: Tags,
    ) -> Option<Vec<u8>> {
        let mut passed = Vec::new();
        let mut kept_any = false;
        for (tag, (seq, delivery)) in taken {
            // Covered by a `multiple` ack after a rule already kept its own ack: kept still.
            let already = self.kept.holds(ch, tag);
            let fault = match already {
                true => None,
                false => self.state.ack_fault(self.worker, seq, delivery),
            };
            if !already && fault.is_none() {
                self.acked(closed, seq, delivery);
                passed.push(tag);
                continue;
            }
            kept_any = true;
            // The broker still has it (or, closed, has requeued it).
            let view = self.channel(ch);
            match closed {
                false => view.held.insert(tag, (seq, delivery)),
                true => view.stale.insert(tag, (seq, delivery)),
            };
            if let Some(fault) = fault {
                self.state.observed_held_ack(self.worker, seq, delivery);
                self.kept.0.push(Kept {
                    channel: ch,
                    tag,
                    seq,
                    delivery,
                    due: match fault {
                        HeldAck::Dropped => None,
                        HeldAck::Later(d) => Some(Instant::now() + d),
                    },
                    stale: closed,
                });
            }
        }
        kept_any.then(|| passed.into_iter().flat_map(|t| single_ack(ch, t)).collect())
    }

    /// The delayed acks due at `now` reach the broker: each still held goes on as a single
    /// ack; one whose channel closed, or which was settled otherwise, is judged stale.
    pub(super) fn acks_due(&mut self, now: Instant, forward: &mut Vec<u8>) {
        for k in self.kept.take_due(now) {
            let view = self.channel(k.channel);
            let held = !k.stale && view.held.get(&k.tag) == Some(&(k.seq, k.delivery));
            if held {
                view.held.remove(&k.tag);
                forward.extend(single_ack(k.channel, k.tag));
                self.acked(false, k.seq, k.delivery);
            } else {
                view.stale.remove(&k.tag);
                let outcome = self.ledger.stale_outcome(k.seq);
                self.state
                    .observed_ack(self.worker, k.seq, k.delivery, outcome);
            }
        }
    }

    /// The connection ended with delayed acks kept: each is judged stale when it comes due (as
    /// the broker would judge an ack that outlived its channel), on the run's clock.
    pub(super) fn acks_outlive_connection(&mut self) {
        let delayed = self.kept.take_delayed();
        if delayed.is_empty() {
            return;
        }
        let (state, ledger, worker) = (self.state.clone(), self.ledger.clone(), self.worker);
        let judge = move |k: &Kept| {
            let outcome: AckOutcome = ledger.stale_outcome(k.seq);
            state.observed_ack(worker, k.seq, k.delivery, outcome);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    for k in delayed {
                        if let Some(at) = k.due {
                            tokio::time::sleep_until(at.into()).await;
                        }
                        judge(&k);
                    }
                });
            }
            Err(_) => delayed.iter().for_each(judge),
        }
    }
}
