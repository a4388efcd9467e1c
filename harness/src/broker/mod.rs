//! The brokers: pure state machines driven by explicit time, one per broker kind, behind one
//! seam ([`BrokerModel`]) through which a sim run drives whichever kind its profile names.
//!
//! - [`Broker`]: the embedded SQS broker, also what live runs serve over the SQS API. A
//!   published message is *visible* (or *delayed* until its delay ends). A receive hands the
//!   front visible message to a worker with a *lease* that ends `visibility_timeout` later; the
//!   [`Receipt`] proves that lease. An ack with the current receipt deletes the message. When a
//!   lease ends without an ack the message returns to the FRONT of the visible queue; when the
//!   lease of delivery number `max_receives` ends (`max_receives` > 0), it moves to the DLQ. A
//!   late ack (a receipt that is no longer current) is handled by [`crate::profile::StaleAck`].
//!   The same state machine serves sim mode (virtual time) and live mode (wall time behind a
//!   lock).
//! - [`rabbitmq::RabbitMq`], [`nats::Nats`], [`redis_streams::RedisStreams`],
//!   [`kafka_share::KafkaShare`]: the other kinds'
//!   semantics, sim only for now; each file says what it models.
//! - [`setup`]: the one place a profile's `broker` section becomes a broker configuration, for
//!   sim and live runs alike.
//!
//! No model reads a clock: every method takes `now`, and `next_due` tells the caller when to
//! call `advance`.

pub(crate) mod dedup;
pub(crate) mod groups;
pub(crate) mod kafka;
pub(crate) mod kafka_share;
mod leases;
mod messages;
#[cfg(test)]
use messages::MessageTable;
mod model;
pub(crate) mod nats;
mod queue;
pub(crate) mod rabbitmq;
pub(crate) mod redis_streams;
pub(crate) mod setup;
pub mod sqs;
mod state;
mod table;

pub use model::BrokerModel;
pub use queue::{Broker, BrokerConfig, Handout, Receipt};
pub use state::{Counts, MessageState};

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod proptests_forgetting;
#[cfg(test)]
mod proptests_groups;
#[cfg(test)]
mod proptests_kafka_share;
#[cfg(test)]
mod proptests_kinds;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kafka_share;
#[cfg(test)]
mod tests_nats;
#[cfg(test)]
mod tests_rabbitmq;
#[cfg(test)]
mod tests_redis_streams;
#[cfg(test)]
mod tests_sqs_policy;
