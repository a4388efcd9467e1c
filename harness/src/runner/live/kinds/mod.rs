//! The seam between a live run and the broker it runs against: one module per broker kind,
//! each behind [`LiveBroker`] (what the run does with the broker) and [`LiveQueue`] (what a
//! built-in target's worker does with it).
//!
//! A kind's module opens the broker for one run: it creates the run's own uniquely named
//! resources (or serves the embedded broker), tells each worker how to reach it, publishes the
//! plan's messages, answers the counts the run's loop needs to know when it is drained, and at
//! the end says what the broker recorded (in profile time) and removes everything it created.
//! The run's loop ([`super::run`]) knows no kind.
//!
//! What a kind sees of its workers (deliveries, acks, a kill at `received` before a delivery
//! reaches the worker) it reports to the run's state ([`super::state::LiveState`]): the
//! embedded SQS endpoint through its hooks, the real brokers through a protocol proxy between
//! each worker and the server.

mod embedded_sqs;
mod external_sqs;
pub(crate) mod kafka;
pub(crate) mod nats;
pub(crate) mod rabbitmq;
pub(crate) mod redis_streams;
mod sqs_queue;

pub use embedded_sqs::{queue_name, QUEUE};
pub use sqs_queue::client_env;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};

use super::state::LiveState;
use crate::profile::{BrokerKind, Scenario};
use crate::record::{BrokerSample, Event, Seq, Unavailable, WorkerId};
use crate::workload::message::Outgoing;

/// A boxed future, as the seam's methods return (a live run calls them a few times per message).
pub use crate::chaos::autoscale::QueueLength;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The broker's answer to a publish already handed to it: resolves when the broker has the
/// message (its confirm, its ack, its reply), or with why not, in the words the run fails with.
/// `'static`, so the run keeps a window of them while it hands over the next messages.
pub type Confirmation = BoxFuture<'static, Result<(), String>>;

/// The confirmation of a publish whose hand-over was already the broker's answer.
pub fn confirmed() -> Confirmation {
    Box::pin(std::future::ready(Ok(())))
}

/// What the run's loop asks the broker while it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages the broker still holds for the consumer: ready, delayed or delivered and not
    /// yet acked. Zero (with every message published and no handler running) is a drained run.
    pub unsettled: u64,
    /// Messages the broker gave up on (its DLQ, MaxDeliver, a dead stream).
    pub dead_lettered: u64,
}

/// What a kind hands back when the run ends.
#[derive(Debug, Default)]
pub struct Finished {
    /// Events only the broker saw (leases, dead-lettering), in profile time. Events the run's
    /// state recorded itself (worker life, and what a proxy observed) are not repeated here.
    pub events: Vec<Event>,
    /// What the broker could not give, or anything else the report should say about it.
    pub notes: Vec<String>,
    /// What could not be removed from the broker, named (the run still reports its counts).
    pub left_behind: Vec<String>,
    /// Kafka: the handlers as the commits time them ([`crate::record::CommitHandlers`]).
    pub commit_handlers: Option<crate::record::CommitHandlers>,
    /// The queues removed that still held messages, with how many.
    pub removed: Vec<crate::record::RemovedQueue>,
}

/// What a send to a FIFO queue carries besides its body: its `MessageGroupId` and its
/// `MessageDeduplicationId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FifoSend {
    pub group_id: String,
    pub dedup_id: String,
}

/// Why a broker could not be opened for a run.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The broker could not be reached (exit 3).
    #[error("cannot reach the {kind} broker at {url}: {reason}")]
    Unreachable {
        kind: &'static str,
        url: String,
        reason: String,
    },
    /// The server runs with a setting the profile contradicts, and that ackbench cannot set per
    /// queue (exit 2): the message names the server's value and how to change it.
    #[error("{0}")]
    Settings(String),
    /// Anything else that stopped the broker's set-up (exit 3).
    #[error("{0}")]
    Failed(String),
}

/// The broker of one live run.
pub trait LiveBroker: Send + Sync {
    /// Hands message `seq` (1-based, in plan order) to the broker as `message`: done when it is
    /// on its way, behind every earlier one (the broker gets them in seq order, which a kind's
    /// bookkeeping may count on); the [`Confirmation`] it gives resolves when the broker has
    /// it. The run hands over the next messages before that ([`super::publisher`]). A kind
    /// carries what of `message` it can carry (`workload.message` was checked against the
    /// kind): its body always.
    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>>;
    /// The run's queue (stream) as the broker names it: `{queue}` of `workload.message`.
    fn queue_name(&self) -> &str;
    /// Publishes message `seq` (the next the broker would number) to the run's FIFO queue, in
    /// `send`'s message group with its deduplication id; done when the broker has answered.
    /// `Ok(false)`: the broker dropped it as a repeat within its deduplication interval (no
    /// message `seq`). Only the kinds whose profile can set `broker.fifo` live answer it.
    fn publish_fifo<'a>(
        &'a self,
        seq: Seq,
        message: Outgoing,
        send: &'a FifoSend,
    ) -> BoxFuture<'a, Result<bool, String>> {
        let _ = (seq, message, send);
        Box::pin(async { Err("this broker kind has no FIFO queue".to_string()) })
    }
    /// The broker's counts now.
    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>>;
    /// The queue as KEDA's scaler reads it now (messages ready, and delivered but not yet
    /// settled), for an `autoscale` rule's looks; `None` for a kind whose live path cannot read
    /// it (the rule's check refuses such a profile: `KedaScaler::not_live`).
    fn queue_length(&self) -> BoxFuture<'_, Option<Result<QueueLength, String>>> {
        Box::pin(async { None })
    }
    /// The environment of worker process `worker`: how it reaches the broker (its own proxy
    /// port, for the kinds observed through one) and the run's resource names.
    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)>;
    /// How built-in target workers connect: each gets a queue client the way a worker process
    /// of that number would (through its own proxy port, for the kinds observed through one).
    fn queues(&self) -> Arc<dyn QueueFactory>;
    /// True when the broker records its own events (the embedded one: publishes included);
    /// otherwise the run records each publish itself.
    fn records_its_events(&self) -> bool {
        false
    }
    /// Where an HTTP ingress service publishes, if this kind takes one (SQS only).
    fn ingress(&self) -> Option<IngressTarget> {
        None
    }
    /// The run's sampler of the broker's own counts, on a connection of its own; `None` for a
    /// kind whose events already say everything (the embedded broker).
    fn sampler(&self) -> BoxFuture<'_, Option<Result<Box<dyn BrokerSampler>, String>>> {
        Box::pin(async { None })
    }
    /// Ends the run's use of the broker: stops its proxies, reads what only the broker knows,
    /// and removes everything the run created, whatever happened before.
    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished>;
}

/// Reads the broker's own DLQ depth, backlog and in-flight count ([`super::sampling`]).
pub trait BrokerSampler: Send {
    /// The figures now (`at` is set by the caller); `None` for a figure the kind cannot give.
    fn sample(&mut self) -> BoxFuture<'_, Result<BrokerSample, String>>;
    /// The figures the kind cannot give, with the reason (the same for every sample).
    fn unavailable(&self) -> Vec<Unavailable>;
}

/// A figure the kind cannot give, and why.
pub fn unavailable(figure: &str, reason: &str) -> Unavailable {
    Unavailable {
        figure: figure.to_string(),
        reason: reason.to_string(),
    }
}

/// Where an ingress service sends its messages.
#[derive(Debug, Clone)]
pub struct IngressTarget {
    pub endpoint: String,
    pub queue_url: String,
}

/// Makes the queue client of a built-in target's worker (a new one for each incarnation).
pub trait QueueFactory: Send + Sync {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>>;
}

/// A built-in target's queue client, one per worker, for any kind. Receipts are the kind's own
/// proof of a delivery, as text; durations are in profile time (the client scales them).
pub trait LiveQueue: Send + Sync {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>>;
    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>>;
    /// SQS's ChangeMessageVisibility; the other kinds answer it as [`LiveQueue::release`] or
    /// [`LiveQueue::extend`] do, as their target trait documents.
    fn change_visibility<'a>(
        &'a self,
        receipt: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>>;
    fn release<'a>(
        &'a self,
        receipt: &'a str,
        delay: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        self.change_visibility(receipt, delay)
    }
    fn extend<'a>(
        &'a self,
        receipt: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        self.change_visibility(receipt, lease)
    }
    /// Records the last poll returned that the worker has not received yet (Kafka: the rest of
    /// the batch); 0 for a kind that hands out one message at a time.
    fn held_from_poll(&self) -> u32 {
        0
    }
}

/// What every kind's set-up gets from the run.
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    /// The run's state: its clock, its workers, its kill rules; where observations go.
    pub state: Arc<LiveState>,
    /// A name unique to this run, for the resources it creates on a shared broker.
    pub run_id: String,
    /// The run's queue (stream): `broker.queue`, or [`Context::run_id`].
    pub queue: String,
    /// The consumer runs on the scaled clock: the durations it sends are in profile time.
    pub wire_scaled: bool,
    /// With [`Context::wire_scaled`]: where the consumer's faked timeline starts, as Unix
    /// milliseconds of the wall clock (it reads `start + (now - start) / time_scale`), for the
    /// kinds whose consumers send or read absolute times.
    pub clock_start_ms: Option<f64>,
}

/// Opens the scenario's broker for one run.
pub async fn open(cx: Context<'_>) -> Result<Box<dyn LiveBroker>, OpenError> {
    match &cx.scenario.broker.kind {
        BrokerKind::Sqs if cx.scenario.broker.url.is_some() => {
            Ok(Box::new(external_sqs::ExternalSqs::open(cx).await?))
        }
        BrokerKind::Sqs => Ok(Box::new(embedded_sqs::EmbeddedSqs::open(cx).await?)),
        BrokerKind::RabbitMq(_) => Ok(Box::new(rabbitmq::RabbitMq::open(cx).await?)),
        BrokerKind::Nats(_) => Ok(Box::new(nats::NatsBroker::open(cx).await?)),
        BrokerKind::RedisStreams(_) => Ok(Box::new(redis_streams::RedisStreams::open(cx).await?)),
        BrokerKind::Kafka(_) => Ok(Box::new(kafka::KafkaBroker::open(cx).await?)),
        // Refused when the profile was read (`kinds::Live::Refused`); never reached.
        kind @ BrokerKind::KafkaShare(_) => Err(OpenError::Settings(format!(
            "live mode cannot run broker.kind: {}",
            kind.name()
        ))),
    }
}

/// A name for this run's resources on a shared broker: `ackbench-<pid>-<millis>`.
pub fn run_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("ackbench-{}-{millis}", std::process::id())
}
