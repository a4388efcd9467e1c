//! What a live run learns from the endpoint, and how it kills a worker before its answer leaves.
//!
//! A live run's supervisor watches each worker's `ReceiveMessage` calls: a worker asking for
//! messages has finished its previous handler, and a message leased to it starts a new one. A
//! kill at the `received` point happens before the answer is written: the worker never sees the
//! message, so no ack can race the kill.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::record::{Seq, WorkerId};

/// Callbacks from the endpoint to a live run. Called with the endpoint's state locked: they must
/// be quick and must not call the endpoint.
pub trait SqsHooks: Send + Sync + 'static {
    /// `worker` asks queue `queue` for messages.
    fn receive_requested(&self, _queue: &str, _worker: WorkerId) {}
    /// A client's `SendMessage` (or one entry of a batch) stored message `seq` with `body`;
    /// `worker` is the client's worker id (0 for a client that is no worker).
    fn sent(&self, _queue: &str, _worker: WorkerId, _seq: Seq, _body: &str) {}
    /// Message `seq` of `queue` was leased to `worker` as its delivery number `delivery`.
    /// Returns true if the worker is being killed: the endpoint then never answers it.
    fn delivered(&self, _queue: &str, _worker: WorkerId, _seq: Seq, _delivery: u32) -> bool {
        false
    }
    /// Message `seq` of `queue`, just leased to `worker` as delivery `delivery`, is about to be
    /// answered: true if a fault drops it from the answer (its lease runs on).
    fn delivery_dropped(&self, _queue: &str, _worker: WorkerId, _seq: Seq, _delivery: u32) -> bool {
        false
    }
    /// `worker` deletes message `seq` of `queue` by the receipt of delivery `delivery`: what a
    /// fault does with the delete.
    fn delete(&self, _queue: &str, _worker: WorkerId, _seq: Seq, _delivery: u32) -> Delete {
        Delete::Now
    }
}

/// What becomes of a `DeleteMessage` (each entry of a batch): the worker is answered success at
/// once whenever a fault holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delete {
    /// Applied now, answered as the queue judges it.
    Now,
    /// Never applied.
    Dropped,
    /// Applied this much wall time later.
    Later(Duration),
}

/// The hooks of an endpoint, if any.
#[derive(Clone, Default)]
pub struct Hooks(pub Option<Arc<dyn SqsHooks>>);

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Hooks(set)"
        } else {
            "Hooks(none)"
        })
    }
}

impl Hooks {
    pub fn receive_requested(&self, queue: &str, worker: WorkerId) {
        if let Some(h) = &self.0 {
            h.receive_requested(queue, worker);
        }
    }

    pub fn sent(&self, queue: &str, worker: WorkerId, seq: Seq, body: &str) {
        if let Some(h) = &self.0 {
            h.sent(queue, worker, seq, body);
        }
    }

    /// What a fault does with `worker`'s delete of delivery `delivery` of `seq`.
    pub fn delete(&self, queue: &str, worker: WorkerId, seq: Seq, delivery: u32) -> Delete {
        match &self.0 {
            Some(h) => h.delete(queue, worker, seq, delivery),
            None => Delete::Now,
        }
    }

    /// Whether a fault drops delivery `delivery` of `seq` from `worker`'s answer.
    pub fn delivery_dropped(&self, queue: &str, worker: WorkerId, seq: Seq, delivery: u32) -> bool {
        self.0
            .as_ref()
            .is_some_and(|h| h.delivery_dropped(queue, worker, seq, delivery))
    }

    /// Whether any of the messages handed to `worker` kills it.
    pub fn delivered(&self, queue: &str, worker: WorkerId, got: &[(Seq, u32)]) -> bool {
        match &self.0 {
            Some(h) => got.iter().fold(false, |dead, &(seq, d)| {
                h.delivered(queue, worker, seq, d) || dead
            }),
            None => false,
        }
    }
}
