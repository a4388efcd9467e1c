//! Settings of an SQS endpoint and of the queues ackbench creates on it.

use crate::broker::BrokerConfig;
use crate::record::Nanos;
use crate::serving::ServeLimits;

use super::queue::default_broker_config;

/// How an [`super::SqsServer`] serves.
#[derive(Debug, Clone)]
pub struct SqsConfig {
    /// Region named in queue ARNs (SDKs must be configured with some region; any works).
    pub region: String,
    /// Account id in queue URLs and ARNs.
    pub account_id: String,
    /// Broker settings of queues created over the API (`CreateQueue`): visibility timeout
    /// (`VisibilityTimeout` overrides it), delivery limit (set by a `RedrivePolicy`) and the
    /// stale-ack policy. Default: 30 s, no limit, `ignore` (what SQS documents).
    pub default_broker: BrokerConfig,
    /// Largest request body accepted; larger ones are refused with a 400 before parsing.
    pub max_request_bytes: usize,
    /// Queues to create when the server starts, by name.
    pub queues: Vec<(String, QueueSpec)>,
    /// Keep each queue's broker events until [`super::SqsServer::take_events`] takes them
    /// (default). A standalone broker whose events nobody takes should turn this off, or its
    /// memory grows with every delivery.
    pub record_events: bool,
    /// Forget a message once it is settled (deleted, purged, or moved to the dead-letter queue),
    /// keeping only the messages queues hold: what a long-running standalone broker needs, so
    /// that its memory does not grow with every message sent. A receipt of a forgotten message
    /// is still known stale (every message's seq is below the queue's count of messages sent,
    /// and receipts are authenticated), so stale deletes answer as before, and their events
    /// name the receipt's delivery exactly (see `Broker::forgetting_settled`). Off by default,
    /// as a live run's embedded broker runs: its queues keep every message.
    pub forget_settled: bool,
    /// What a second of a duration on the wire lasts here: [`super::WireTime::REAL`], or a
    /// live run's time scale when its consumer runs on the scaled clock.
    pub wire_time: super::WireTime,
    /// A live run's callbacks (worker activity, kills at `received`).
    pub hooks: super::Hooks,
    /// Header-read and idle timeouts and the connection limit (defaults: [`ServeLimits`]).
    /// A long poll in progress is never cut.
    pub limits: ServeLimits,
}

impl Default for SqsConfig {
    fn default() -> SqsConfig {
        SqsConfig {
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            default_broker: default_broker_config(),
            // A batch over 1 MiB in total is refused (`BatchRequestTooLong`); 1 MiB of bodies
            // JSON-escaped at worst 6 bytes a byte fits in 8 MiB.
            max_request_bytes: 8 * 1024 * 1024,
            queues: Vec::new(),
            record_events: true,
            forget_settled: false,
            wire_time: super::WireTime::REAL,
            hooks: super::Hooks::default(),
            limits: ServeLimits::default(),
        }
    }
}

/// A queue created by ackbench itself (a live run's queue, from its profile's `broker` section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSpec {
    /// Visibility timeout, delivery limit (`max_receives`) and stale-ack policy.
    pub broker: BrokerConfig,
    /// Name of the queue that receives dead-lettered messages (created if missing), so that
    /// they can be received from it. `None`: dead-lettered messages are only counted (they are
    /// in the broker's DLQ and the event log), as in sim mode.
    pub dead_letter_queue: Option<String>,
    /// A FIFO queue (its name, and its dead-letter queue's, end in `.fifo`) and its
    /// deduplication interval on the endpoint's clock (a live run's `broker.dedup_window` in
    /// wall time); `None`: a standard queue.
    pub fifo: Option<Nanos>,
}
