//! The embedded broker: SQS-like lease semantics as a pure state machine driven by explicit time.
//!
//! A published message is *visible* (or *delayed* until its delay ends). A receive hands the
//! front visible message to a worker with a *lease* that ends `visibility_timeout` later; the
//! [`Receipt`] proves that lease. An ack with the current receipt deletes the message. When a
//! lease ends without an ack the message returns to the FRONT of the visible queue; when the
//! lease of delivery number `max_receives` ends (`max_receives` > 0), it moves to the DLQ.
//! A late ack (a receipt that is no longer current) is handled by [`crate::profile::StaleAck`].
//!
//! The same state machine serves sim mode (virtual time) and live mode (wall time behind a lock):
//! it never reads a clock, every method takes `now`, and [`Broker::next_due`] tells the caller
//! when to call [`Broker::advance`].

mod queue;
pub mod sqs;
mod state;
mod table;

pub use queue::{AckRefused, Broker, BrokerConfig, Handout, Receipt, VisibilityError};
pub use state::{Counts, MessageState};

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
