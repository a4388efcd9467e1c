//! What a worker publishes itself, read in the AMQP proxy: a framework's retry publishes the
//! failed task again (Dramatiq to its delay queue `.DQ`, Celery's `retry` to the queue with an
//! ETA), and a framework moves a message between its own queues (Dramatiq's worker publishes a
//! delayed message to the queue when it is due). A `basic.publish` whose body holds a published
//! message's key ([`KeyReader`]) is that message's next life: it is recorded as republished to
//! the queue, a delay queue or the framework's dead-letter queue, by the queue its routing key
//! names ([`RunQueues`]), and the run counts it as unsettled until a worker takes it.
//!
//! The delivery a handler was working on when it published is the one the retry replaces: its
//! ack removes the old copy (`AckOutcome::Superseded`) and settles nothing. A delivery taken from
//! a delay queue is the framework's hold, not a delivery of the message: its ack or reject only
//! says the copy moved on.

use std::collections::HashMap;

use super::AmqpConnection;
use crate::record::{Republish, Seq};
use crate::workload::key_reader::KeyReader;

/// Bodies larger than this are passed on without being read for a key.
const READ_AT_MOST: u64 = 1 << 20;

/// The run's queue and the framework's own queues beside it, by name.
#[derive(Debug, Default)]
pub struct RunQueues {
    /// The run's queue; empty: every queue counts as the run's.
    pub queue: String,
    /// Where the framework keeps a message waiting for its retry (Dramatiq's `.DQ`).
    pub delay: Vec<String>,
    /// Where the framework puts a message it gave up on (Dramatiq's `.XQ`).
    pub dead_letter: Vec<String>,
    /// How a body gives its key back; `None`: the message's shape does not hold it in the body.
    pub reader: Option<KeyReader>,
    /// The run's queue dead-letters a rejected delivery (a reject or nack without requeue) to
    /// the framework's dead-letter queue, by the queue's own arguments (Dramatiq's).
    pub rejects_dead_letter: bool,
}

/// Which of the run's places a queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRole {
    /// The run's queue (or a queue nobody named: read as the run's).
    Main,
    Delay,
    DeadLetter,
    /// Another queue of the worker's, none of the run's.
    Other,
}

impl RunQueues {
    pub fn role(&self, queue: Option<&str>) -> QueueRole {
        match queue {
            None => QueueRole::Main,
            Some(q) if self.queue.is_empty() || q == self.queue => QueueRole::Main,
            Some(q) if self.delay.iter().any(|d| d == q) => QueueRole::Delay,
            Some(q) if self.dead_letter.iter().any(|d| d == q) => QueueRole::DeadLetter,
            Some(_) => QueueRole::Other,
        }
    }

    /// Where a publish with `routing_key` (to `exchange`) puts its message: the queue the
    /// routing key names (the default exchange's rule, and Celery's direct exchange named after
    /// its queue); `None` for none of the run's.
    pub fn destination(&self, exchange: &str, routing_key: &str) -> Option<Republish> {
        let named = if routing_key.is_empty() {
            exchange
        } else {
            routing_key
        };
        match self.role(Some(named)) {
            QueueRole::Main => Some(Republish::Queue),
            QueueRole::Delay => Some(Republish::Delayed),
            QueueRole::DeadLetter => Some(Republish::DeadLetter),
            QueueRole::Other => None,
        }
    }

    /// The published message whose key `body` holds, by `seq_of_key`.
    pub fn message_of(&self, body: &[u8], seq_of_key: impl Fn(&str) -> Option<Seq>) -> Option<Seq> {
        seq_of_key(&self.reader.as_ref()?.read(body)?)
    }
}

/// A `basic.publish` from the worker whose content is still coming.
#[derive(Debug)]
pub(super) struct Outbound {
    exchange: String,
    routing_key: String,
    /// Body bytes still to come; `None` until its content header.
    left: Option<u64>,
    body: Vec<u8>,
    /// Too large to read: passed on unread.
    unread: bool,
}

/// The worker's publishes in progress, by channel.
#[derive(Debug, Default)]
pub(super) struct Publishing {
    channels: HashMap<u16, Outbound>,
}

impl Publishing {
    pub(super) fn started(&mut self, channel: u16, exchange: &str, routing_key: &str) {
        self.channels.insert(
            channel,
            Outbound {
                exchange: exchange.to_string(),
                routing_key: routing_key.to_string(),
                left: None,
                body: Vec::new(),
                unread: false,
            },
        );
    }

    /// The content header of `channel`'s publish: `size` body bytes follow. The publish, when
    /// it has no body.
    pub(super) fn header(&mut self, channel: u16, size: u64) -> Option<Outbound> {
        let o = self.channels.get_mut(&channel)?;
        o.left = Some(size);
        o.unread = size > READ_AT_MOST;
        (size == 0)
            .then(|| self.channels.remove(&channel))
            .flatten()
    }

    /// A body frame of `channel`'s publish: the publish, once its body is all in.
    pub(super) fn body(&mut self, channel: u16, data: &[u8]) -> Option<Outbound> {
        let o = self.channels.get_mut(&channel)?;
        let left = o.left.as_mut()?;
        *left = left.saturating_sub(data.len() as u64);
        if !o.unread {
            o.body.extend_from_slice(data);
        }
        (*left == 0)
            .then(|| self.channels.remove(&channel))
            .flatten()
    }

    pub(super) fn channel_closed(&mut self, channel: u16) {
        self.channels.remove(&channel);
    }
}

impl AmqpConnection {
    /// The worker published `out` (its body all in): if it is a published message's next
    /// life, it is recorded and counted.
    pub(super) fn published(&mut self, out: Outbound) {
        if out.unread {
            return;
        }
        let Some(to) = self.places.destination(&out.exchange, &out.routing_key) else {
            return;
        };
        let state = &self.state;
        let Some(seq) = self.places.message_of(&out.body, |k| state.seq_of_key(k)) else {
            return;
        };
        // The delivery of the message the worker holds, on whichever of its connections: the
        // retry replaces it. Without one (a delay queue's copy coming due) it is the
        // framework's move.
        let delivery = self.state.retiring(self.worker, seq, to);
        match to {
            Republish::DeadLetter => {
                self.ledger.dead_lettered(seq);
            }
            Republish::Queue | Republish::Delayed => self.ledger.republished(seq),
        }
        self.state
            .observed_republish(self.worker, seq, delivery, to);
    }
}
