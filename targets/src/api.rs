//! The traits a target is written against.
//!
//! In sim mode the harness implements them on virtual time; in live mode over the SQS API and
//! HTTP. A target gets one client of each per worker, so everything it does is attributed to
//! that worker.

use std::future::Future;
use std::time::Duration;

/// One hand-out of a message to this worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery<R> {
    /// Proof of this delivery's lease, used to ack or change visibility.
    pub receipt: R,
    /// The message body (JSON, see [`crate::message`]), as text or already typed.
    pub body: crate::message::Body,
    /// How many times the broker has handed this message out, this delivery included.
    pub receive_count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// The receipt is not the message's current one (its lease ran out, or the message is gone).
    #[error("receipt is no longer valid (lease expired or message gone)")]
    StaleReceipt,
    /// The queue could not be reached or answered with an error.
    #[error("queue unavailable: {0}")]
    Unavailable(String),
}

/// A queue client bound to one worker.
pub trait QueueClient {
    type Receipt: Clone;
    /// Waits (long polling) until a message is handed to this worker.
    fn receive(&self) -> impl Future<Output = Result<Delivery<Self::Receipt>, QueueError>>;
    /// Deletes the message by receipt.
    fn ack(&self, receipt: &Self::Receipt) -> impl Future<Output = Result<(), QueueError>>;
    /// Sets the lease to end `timeout` from now (0 hands the message back at once).
    fn change_visibility(
        &self,
        receipt: &Self::Receipt,
        timeout: Duration,
    ) -> impl Future<Output = Result<(), QueueError>>;
    /// Hands the message back, to be delivered again `delay` from now (zero: at once). SQS: a
    /// visibility change; RabbitMQ: nack with requeue, at once whatever the delay (it has no
    /// delayed redelivery); NATS: `nak` with the delay; Redis Streams: the owner makes the
    /// entry claimable after the delay (at most `min_idle`).
    fn release(
        &self,
        receipt: &Self::Receipt,
        delay: Duration,
    ) -> impl Future<Output = Result<(), QueueError>> {
        self.change_visibility(receipt, delay)
    }
    /// A heartbeat: keeps the message this worker's for `lease` more. SQS: a visibility change
    /// to `lease`; RabbitMQ: nothing to extend (no lease timer), only a check the delivery is
    /// still held; NATS: in-progress (`+WPI`, a full AckWait); Redis Streams: the owner resets
    /// the entry's idle time (XCLAIM to itself, JUSTID).
    fn extend(
        &self,
        receipt: &Self::Receipt,
        lease: Duration,
    ) -> impl Future<Output = Result<(), QueueError>> {
        self.change_visibility(receipt, lease)
    }
    /// A framework's retry (Dramatiq's Retries middleware, Celery's `retry`): publishes the
    /// message of `receipt` again, to be handed out `delay` from now as the same message's next
    /// life, and lets this delivery go. Only the sim's client does it (live, the consumer's
    /// own framework does).
    fn republish(
        &self,
        receipt: &Self::Receipt,
        delay: Duration,
    ) -> impl Future<Output = Result<(), QueueError>> {
        let _ = (receipt, delay);
        async { Err(QueueError::Unavailable(NO_REPUBLISH.to_string())) }
    }
    /// A framework giving up on a message: moves the message of `receipt` to its own
    /// dead-letter queue and lets this delivery go. Only the sim's client does it.
    fn dead_letter(&self, receipt: &Self::Receipt) -> impl Future<Output = Result<(), QueueError>> {
        let _ = receipt;
        async { Err(QueueError::Unavailable(NO_REPUBLISH.to_string())) }
    }
    /// How many times the message of `receipt` was published again by [`QueueClient::republish`].
    fn retries(&self, receipt: &Self::Receipt) -> u32 {
        let _ = receipt;
        0
    }
    /// Records the last poll returned that this worker has not received yet (Kafka: the rest
    /// of the batch); 0 on a broker that hands out one message at a time.
    fn held_from_poll(&self) -> u32 {
        0
    }
}

/// What a queue client that cannot publish a message again answers.
const NO_REPUBLISH: &str =
    "this queue client does not publish messages again (a framework's retry runs in sim only)";

/// The provider call a reference target makes: `POST /send {"key", "to"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendRequest<'a> {
    pub key: &'a str,
    pub to: &'a str,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an error status.
    #[error("provider answered HTTP {0}")]
    Status(u16),
    /// The client's own timeout expired first.
    #[error("provider call timed out")]
    Timeout,
    /// The provider could not be reached.
    #[error("provider unavailable: {0}")]
    Unavailable(String),
}

impl ProviderError {
    /// Transient errors (5xx, 429, timeouts, connection failures) may succeed on retry.
    pub fn is_transient(&self) -> bool {
        match self {
            ProviderError::Status(s) => *s >= 500 || *s == 429,
            ProviderError::Timeout | ProviderError::Unavailable(_) => true,
        }
    }
}

/// The provider's id of an accepted call: `em-<n>` on the wire, `n` here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReplyId(pub u64);

impl std::fmt::Display for ReplyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "em-{}", self.0)
    }
}

impl ReplyId {
    /// The id the provider wrote (`em-<n>`); `None` for any other text.
    pub fn parse(text: &str) -> Option<ReplyId> {
        text.strip_prefix("em-")?.parse().ok().map(ReplyId)
    }
}

/// A provider client bound to one worker.
pub trait ProviderClient {
    /// Sends one email; `Ok` carries the provider's id for it.
    fn send(&self, req: SendRequest<'_>) -> impl Future<Output = Result<ReplyId, ProviderError>>;
}

/// Clock, checkpoints and randomness of the mode the target runs in.
pub trait Runtime {
    /// Time since the start of the run (virtual in sim mode).
    fn now(&self) -> Duration;
    fn sleep(&self, d: Duration) -> impl Future<Output = ()>;
    /// Announces a point of the handler a chaos rule can kill at (e.g. `claimed`).
    fn checkpoint(&self, name: &'static str) -> impl Future<Output = ()>;
    /// A uniform number in [0, 1) from the run's seed.
    fn random(&self) -> f64;
    /// Records that the target refused a message it acked (`on_poison: dead_letter`), so the
    /// harness counts it as rejected rather than lost. `body` is the message body.
    fn record_rejected(&self, body: &str);
}

/// The target died the way a process dies: the harness restarts the worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("worker crashed: {reason}")]
pub struct Crash {
    pub reason: String,
}

/// Everything a built-in target needs, implemented once per mode.
pub trait Env: QueueClient + ProviderClient + Runtime + crate::store::Store {}

impl<T: QueueClient + ProviderClient + Runtime + crate::store::Store> Env for T {}
