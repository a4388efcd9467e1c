//! The broker seam: the one interface through which a sim run drives whichever broker kind the
//! profile names.
//!
//! An enum of models rather than a trait object: the kinds are a closed set the profile names,
//! every run uses exactly one, and the sim calls the broker on every publish, hand-out and ack
//! (about a million times a second), so one predictable `match` per call, inlined, costs less
//! than a virtual call and keeps each model a plain struct with no boxing. Adding a kind is one
//! variant and one arm per operation, which the compiler checks exhaustively.
//!
//! Every operation takes `now` and appends what happened to the run's event log; no model reads
//! a clock. [`BrokerModel::next_due`] tells the executor when to call [`BrokerModel::advance`].

use super::kafka::Kafka;
use super::kafka_share::KafkaShare;
use super::messages::MessageTable;
use super::nats::Nats;
use super::queue::{AckRefused, Broker, Handout, Receipt, VisibilityError};
use super::rabbitmq::RabbitMq;
use super::redis_streams::RedisStreams;
use super::state::Counts;
#[cfg(test)]
use super::state::MessageState;
use crate::record::{AckOutcome, Batched, Event, Nanos, Seq, WorkerId};

/// One broker of the kind a profile names, driven on explicit time.
#[derive(Debug, Clone)]
pub enum BrokerModel {
    /// SQS: a visibility-timeout lease per receive (the embedded broker).
    Sqs(Broker),
    /// RabbitMQ: the channel holds a delivery; a consumer timeout on a periodic tick.
    RabbitMq(RabbitMq),
    /// NATS JetStream: a pull consumer with explicit acks and an AckWait per delivery.
    Nats(Nats),
    /// Redis Streams: one consumer group; idle pending entries are taken by XAUTOCLAIM.
    RedisStreams(RedisStreams),
    /// Kafka: one consumer group on a partitioned topic; commits of offsets, rebalances.
    Kafka(Kafka),
    /// Kafka: a share group (KIP-932), a lock per acquired record and a delivery count limit.
    KafkaShare(KafkaShare),
}

macro_rules! each {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            BrokerModel::Sqs($b) => $e,
            BrokerModel::RabbitMq($b) => $e,
            BrokerModel::Nats($b) => $e,
            BrokerModel::RedisStreams($b) => $e,
            BrokerModel::Kafka($b) => $e,
            BrokerModel::KafkaShare($b) => $e,
        }
    };
}

impl BrokerModel {
    /// Publishes a message, visible at once. Returns its seq (messages are numbered from 1).
    #[inline]
    pub fn publish(&mut self, now: Nanos, log: &mut Vec<Event>) -> Seq {
        match self {
            BrokerModel::Sqs(b) => b.publish(now, 0, log),
            BrokerModel::RabbitMq(b) => b.publish(now, log),
            BrokerModel::Nats(b) => b.publish(now, log),
            BrokerModel::RedisStreams(b) => b.publish(now, log),
            BrokerModel::Kafka(b) => b.publish(now, log),
            BrokerModel::KafkaShare(b) => b.publish(now, log),
        }
    }

    /// A send with deduplication id `id` (the message key) in message group `group`: an SQS
    /// FIFO queue drops it when it accepted `id` within its deduplication window (`None`), and
    /// keeps one message of a group in flight at a time; every other queue publishes it.
    #[inline]
    pub fn publish_send(
        &mut self,
        now: Nanos,
        id: &str,
        group: u32,
        log: &mut Vec<Event>,
    ) -> Option<Seq> {
        match self {
            BrokerModel::Sqs(b) => b.publish_send(now, 0, id, group, log),
            other => Some(other.publish(now, log)),
        }
    }

    /// The next instant at which a timer of the broker ends (a lease, a delay, a timeout tick,
    /// an entry becoming claimable), if any.
    #[inline]
    pub fn next_due(&self) -> Option<Nanos> {
        each!(self, b => b.next_due())
    }

    /// Ends every timer due at or before `now`.
    #[inline]
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        each!(self, b => b.advance(now, log))
    }

    /// True when a receive now could hand a message to some consumer.
    #[inline]
    pub fn can_hand_out(&self) -> bool {
        match self {
            BrokerModel::Sqs(b) => b.has_visible(),
            BrokerModel::RabbitMq(b) => b.can_hand_out(),
            BrokerModel::Nats(b) => b.can_hand_out(),
            BrokerModel::RedisStreams(b) => b.can_hand_out(),
            BrokerModel::Kafka(b) => b.can_hand_out(),
            BrokerModel::KafkaShare(b) => b.can_hand_out(),
        }
    }

    /// Hands a message to `worker` by the kind's rule, if it has one for it.
    #[inline]
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        each!(self, b => b.receive(now, worker, log))
    }

    /// Acks by receipt; what a late ack does is the kind's rule.
    #[inline]
    pub fn ack(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<AckOutcome, AckRefused> {
        each!(self, b => b.ack(now, receipt, worker, log))
    }

    /// Hands the message back, to be delivered again after `delay` (0: at once). SQS: change
    /// visibility; RabbitMQ: nack with requeue, or with a delay the retry-queue idiom (RabbitMQ
    /// has no delayed redelivery); NATS: nak with a delay; Redis: the owner makes the entry
    /// claimable (XCLAIM ... IDLE, JUSTID); Kafka share group: RELEASE, at once whatever the
    /// delay (it has none).
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        delay: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        match self {
            BrokerModel::Sqs(b) => b
                .change_visibility(now, receipt, worker, delay, log)
                .map(|_| ()),
            BrokerModel::RabbitMq(b) => b.release(now, receipt, worker, delay, log),
            BrokerModel::Nats(b) => b.nak(now, receipt, worker, delay, log),
            BrokerModel::RedisStreams(b) => b.release(now, receipt, worker, delay, log),
            // A seek back to the record: no delay of its own.
            BrokerModel::Kafka(b) => b.release(now, receipt, worker, log),
            BrokerModel::KafkaShare(b) => b.release(now, receipt, worker, log),
        }
    }

    /// A heartbeat: the holder keeps the message `lease` longer. SQS: change visibility to
    /// `lease`; RabbitMQ: nothing to extend; NATS: in-progress (`+WPI`, a full AckWait); Redis:
    /// the owner resets the entry's idle time (XCLAIM to itself, JUSTID); Kafka share group:
    /// RENEW (Kafka 4.2 and later), a full lock duration again.
    pub fn extend(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        lease: Nanos,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        match self {
            BrokerModel::Sqs(b) => b
                .change_visibility(now, receipt, worker, lease, log)
                .map(|_| ()),
            BrokerModel::RabbitMq(b) => b.extend(receipt, worker),
            BrokerModel::Nats(b) => b.in_progress(now, receipt, worker, log),
            BrokerModel::RedisStreams(b) => b.touch(now, receipt, worker, log),
            BrokerModel::Kafka(b) => b.extend(receipt, worker),
            BrokerModel::KafkaShare(b) => b.renew(now, receipt, worker, log),
        }
    }

    /// A consumer died (its process, and so its connection, is gone). RabbitMQ requeues its
    /// unacked deliveries at this instant, a Kafka share group releases the records it
    /// acquired, and a Kafka group member stops heartbeating (removed after its session
    /// timeout); the other kinds do nothing (SQS and NATS wait for their timers, Redis for a
    /// claim).
    #[inline]
    pub fn consumer_died(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        match self {
            BrokerModel::RabbitMq(b) => b.connection_closed(now, worker, log),
            BrokerModel::Kafka(b) => b.consumer_died(now, worker),
            BrokerModel::KafkaShare(b) => b.member_gone(now, worker, log),
            BrokerModel::Sqs(_) | BrokerModel::Nats(_) | BrokerModel::RedisStreams(_) => {}
        }
    }

    /// A consumer stopped on its own (a worker that exited within its deploy grace, closing
    /// its client on the way out). A Kafka group member sends LeaveGroup: it leaves the group
    /// at once and the group rebalances (a static member sends none and is left to its
    /// session, as a dead one). Every other kind does what [`BrokerModel::consumer_died`] does:
    /// what a stopped consumer holds is what its connection held.
    #[inline]
    pub fn consumer_stopped(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        match self {
            BrokerModel::Kafka(b) => b.consumer_left(now, worker, log),
            BrokerModel::RabbitMq(b) => b.connection_closed(now, worker, log),
            BrokerModel::KafkaShare(b) => b.member_gone(now, worker, log),
            BrokerModel::Sqs(_) | BrokerModel::Nats(_) | BrokerModel::RedisStreams(_) => {}
        }
    }

    /// The broker closed `worker`'s connection, or it was cut (the worker lives on and
    /// reconnects). What the kind ties to a connection goes: RabbitMQ requeues its unacked
    /// deliveries at this instant (their later acks belong to a closed channel), a Kafka share
    /// group releases the records it acquired. SQS, NATS and Redis hold nothing on a
    /// connection; a Kafka group member reconnects and keeps its membership.
    #[inline]
    pub fn connection_closed(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) {
        match self {
            BrokerModel::RabbitMq(b) => b.connection_closed(now, worker, log),
            BrokerModel::KafkaShare(b) => b.member_gone(now, worker, log),
            BrokerModel::Sqs(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::Kafka(_) => {}
        }
    }

    /// The waiting consumers a round of hand-outs passes over, a bit per worker slot (the
    /// worker id minus 1): their receive would change nothing now (a Kafka member blocked in a
    /// poll that found nothing). Empty on the kinds whose `can_hand_out` already says it of
    /// every consumer.
    #[inline]
    pub fn idle_receivers(&self) -> &[u64] {
        match self {
            BrokerModel::Kafka(b) => b.idle_receivers(),
            BrokerModel::Sqs(_)
            | BrokerModel::RabbitMq(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::KafkaShare(_) => &[],
        }
    }

    /// In test builds: `worker` was passed over as idle; checks that its receive would have
    /// changed nothing.
    #[inline]
    #[cfg(test)]
    pub fn check_passed_over(&self, now: Nanos, worker: WorkerId) {
        match self {
            BrokerModel::Kafka(b) => b.check_passed_over(now, worker),
            BrokerModel::Sqs(_)
            | BrokerModel::RabbitMq(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::KafkaShare(_) => {}
        }
    }

    /// Messages `worker`'s last poll returned that it has not received yet (Kafka's batch); 0
    /// on the kinds that hand out one message at a time.
    #[inline]
    pub fn held_from_poll(&self, worker: WorkerId) -> u32 {
        match self {
            BrokerModel::Kafka(b) => b.held_from_poll(worker),
            BrokerModel::Sqs(_)
            | BrokerModel::RabbitMq(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::KafkaShare(_) => 0,
        }
    }

    /// True once after a round of hand-outs in which the broker changed so that a consumer
    /// already told "nothing" may get a message now (a Kafka rebalance completed inside a
    /// receive): the executor offers the waiting consumers another round.
    #[inline]
    pub fn take_repoll(&mut self) -> bool {
        match self {
            BrokerModel::Kafka(b) => b.take_repoll(),
            BrokerModel::Sqs(_)
            | BrokerModel::RabbitMq(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::KafkaShare(_) => false,
        }
    }

    /// The run folds its history as it goes: from now on the broker says when a record it
    /// settled is still held by fetched batches (Kafka), so the folds keep it open.
    pub fn tell_batched(&mut self) {
        if let BrokerModel::Kafka(b) = self {
            b.tell_batched();
        }
    }

    /// Moves what the broker said of batched settled records since the last call to `out`
    /// (only Kafka has such records, and only once [`BrokerModel::tell_batched`]).
    #[inline]
    pub fn take_batched(&mut self, out: &mut Vec<Batched>) {
        match self {
            BrokerModel::Kafka(b) => b.take_batched(out),
            BrokerModel::Sqs(_)
            | BrokerModel::RabbitMq(_)
            | BrokerModel::Nats(_)
            | BrokerModel::RedisStreams(_)
            | BrokerModel::KafkaShare(_) => {}
        }
    }

    /// An operator moves every dead-lettered message back with a fresh delivery budget.
    pub fn redrive(&mut self, now: Nanos, log: &mut Vec<Event>) -> usize {
        each!(self, b => b.redrive(now, log))
    }

    #[inline]
    pub fn counts(&self) -> Counts {
        each!(self, b => b.counts())
    }

    /// True when the broker holds nothing left to deliver or settle.
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.counts().in_queue() == 0
    }

    /// Where message `seq` is, in the states every kind shares (`Deleted` for a message a
    /// forgetting model forgot: through the seam a model forgets only deleted messages, since
    /// nothing here takes an SQS DLQ or purges); `None` for a seq never published.
    #[cfg(test)]
    pub fn state(&self, seq: Seq) -> Option<MessageState> {
        match self {
            BrokerModel::Sqs(b) => b
                .state(seq)
                .or_else(|| b.forgotten(seq).then_some(MessageState::Deleted)),
            BrokerModel::RabbitMq(b) => b.state(seq),
            BrokerModel::Nats(b) => b.state(seq),
            BrokerModel::RedisStreams(b) => b.state(seq),
            BrokerModel::Kafka(b) => b.state(seq),
            BrokerModel::KafkaShare(b) => b.state(seq),
        }
    }

    /// Deliveries of message `seq` so far (since its last redrive), while the model keeps it.
    pub fn receive_count(&self, seq: Seq) -> Option<u32> {
        each!(self, b => b.receive_count(seq))
    }

    /// Messages the model keeps in memory: every message published, or, in a model that
    /// forgets settled messages (what a sim run drives), those it still holds: in the queue,
    /// handed out and not settled, or dead-lettered (a redrive may still take them back).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        each!(self, b => b.held())
    }

    /// The room the model's message table takes, in messages.
    #[cfg(test)]
    pub fn table_room(&self) -> usize {
        each!(self, b => b.table_room())
    }

    /// Entries of every per-message structure of the model.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        each!(self, b => b.entries())
    }
}
