//! Deliveries the AMQP proxy knows by their body: a copy a consumer published itself (a retry)
//! carries no `message_id` of the run's, and a delivery from a framework's delay queue is no
//! delivery of the run's queue. Which queue a delivery comes from is read from the worker's
//! `basic.consume` (its consumer tag, confirmed by `consume-ok`) or `basic.get`; such a delivery
//! is held whole, its method, content header and body frames, until the body names its message
//! ([`super::republish::RunQueues::message_of`]): then it goes on as a delivery of that message
//! (the `received` kill rules and `message` faults as for any), or as the framework's hold of a
//! delayed copy, or unread when it is none of the run's.

use std::collections::{HashMap, VecDeque};

use super::republish::QueueRole;
use super::AmqpConnection;
use crate::runner::live::proxy::Flow;

/// Which queue each consumer tag of the connection reads, and the `basic.consume` and
/// `basic.get` calls waiting for their answer, by channel.
#[derive(Debug, Default)]
pub(super) struct Consumers {
    by_tag: HashMap<(u16, String), String>,
    asked: HashMap<u16, VecDeque<String>>,
    getting: HashMap<u16, String>,
}

impl Consumers {
    /// The worker asked to consume `queue` on `channel` (with `tag`, empty for the server's).
    pub(super) fn consume(&mut self, channel: u16, queue: &str, tag: &str, nowait: bool) {
        if nowait {
            self.by_tag
                .insert((channel, tag.to_string()), queue.to_string());
        } else {
            self.asked
                .entry(channel)
                .or_default()
                .push_back(queue.to_string());
        }
    }

    /// The server answered the oldest `basic.consume` on `channel` with consumer tag `tag`.
    pub(super) fn consume_ok(&mut self, channel: u16, tag: &str) {
        if let Some(q) = self.asked.get_mut(&channel).and_then(VecDeque::pop_front) {
            self.by_tag.insert((channel, tag.to_string()), q);
        }
    }

    pub(super) fn get(&mut self, channel: u16, queue: &str) {
        self.getting.insert(channel, queue.to_string());
    }

    /// The queue a `basic.deliver` with `tag` on `channel` comes from, if the worker said.
    pub(super) fn delivering(&self, channel: u16, tag: &str) -> Option<&str> {
        self.by_tag
            .get(&(channel, tag.to_string()))
            .map(String::as_str)
    }

    /// The queue of the `basic.get` a `get-ok` on `channel` answers, if the worker said.
    pub(super) fn got(&mut self, channel: u16) -> Option<String> {
        self.getting.remove(&channel)
    }

    pub(super) fn channel_closed(&mut self, channel: u16) {
        self.by_tag.retain(|(c, _), _| *c != channel);
        self.asked.remove(&channel);
        self.getting.remove(&channel);
    }
}

/// A delivery held until its body is in.
#[derive(Debug)]
pub(super) struct Unnamed {
    pub channel: u16,
    pub tag: u64,
    pub get: bool,
    pub role: QueueRole,
    /// Its frames so far, as they go on.
    pub bytes: Vec<u8>,
    pub body: Vec<u8>,
    pub left: u64,
}

impl AmqpConnection {
    /// A delivery's content header on `channel` began a delivery that needs its body read
    /// (`unnamed`); with no body it is judged now. `Flow::Cut` when a `received` kill is
    /// decided for it.
    pub(super) fn read_whole(&mut self, unnamed: Unnamed, forward: &mut Vec<u8>) -> Flow {
        if unnamed.left == 0 {
            return self.named(unnamed, forward);
        }
        self.unnamed.insert(unnamed.channel, unnamed);
        Flow::Go
    }

    /// A body frame (its `data`, its frame `bytes`) on `channel`: `None` when no held delivery
    /// takes it, else what becomes of the connection.
    pub(super) fn unnamed_body(
        &mut self,
        channel: u16,
        data: &[u8],
        bytes: &[u8],
        forward: &mut Vec<u8>,
    ) -> Option<Flow> {
        let u = self.unnamed.get_mut(&channel)?;
        u.bytes.extend_from_slice(bytes);
        u.body.extend_from_slice(data);
        u.left = u.left.saturating_sub(data.len() as u64);
        if u.left > 0 {
            return Some(Flow::Go);
        }
        let u = self.unnamed.remove(&channel).expect("a held delivery");
        Some(self.named(u, forward))
    }

    /// A held delivery whose body is all in: which message it is, and where it goes.
    fn named(&mut self, u: Unnamed, forward: &mut Vec<u8>) -> Flow {
        let state = &self.state;
        let seq = self.places.message_of(&u.body, |k| state.seq_of_key(k));
        match (u.role, seq) {
            (QueueRole::Main, Some(seq)) => {
                self.ledger.copy_taken(seq);
                let delivery = self.ledger.delivered(seq);
                self.channel(u.channel).held.insert(u.tag, (seq, delivery));
                let lease_end = self.state.clock.now().saturating_add(self.consumer_timeout);
                // Its body is in its bytes: nothing more of its content is to come.
                let content = (u.channel, 0, u.get);
                if self.delivery_kept(
                    content,
                    (seq, delivery, lease_end),
                    u.bytes.clone(),
                    forward,
                ) {
                    return self.pass_waiting(forward);
                }
                if self
                    .state
                    .observed_delivery(self.worker, seq, delivery, lease_end)
                {
                    return Flow::Cut;
                }
            }
            (QueueRole::Delay, Some(seq)) => {
                self.channel(u.channel).holds.insert(u.tag, seq);
            }
            _ => {}
        }
        forward.extend(u.bytes);
        Flow::Go
    }
}
