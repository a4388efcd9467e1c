//! Reference consumers that ackbench drives, written once against small traits so the same code
//! runs on virtual time (sim mode) and over real sockets (live mode).
//!
//! # Layout
//! - [`api`]: the traits a target is written against: [`QueueClient`] (receive, ack, change
//!   visibility), [`ProviderClient`] (the downstream call) and [`Runtime`] (clock, checkpoints,
//!   seeded randomness).
//! - [`message`]: the message body every consumer sees and how a poison body fails to parse.
//! - [`options`]: target options (`consumer.options` in a profile) and which target takes which.
//! - [`worker`]: the consumer loop shared by the built-in targets (receive, handle, repeat).
//! - [`store`]: the target's own transactional tables (dedupe, seats, claims).
//! - one file per target, each saying which kind of effect of docs/domain.md it handles and what it guarantees:
//!   [`ack_after_work`], [`ack_before_work`], [`dedupe_table`], [`status_fence`],
//!   [`claim_then_send`], [`heartbeat`].
//!
//! A target never panics on bad input; a poison message makes it fail the way naive code does
//! (`on_poison: crash`) unless its options say otherwise.

pub mod ack_after_work;
pub mod ack_before_work;
pub mod api;
pub mod auto_commit;
pub mod claim_then_send;
pub mod commit_after_batch;
pub mod dedupe_table;
pub mod heartbeat;
pub mod message;
pub mod options;
pub mod status_fence;
pub mod store;
pub mod worker;

pub use api::{
    Crash, Delivery, Env, ProviderClient, ProviderError, QueueClient, QueueError, ReplyId, Runtime,
    SendRequest,
};
pub use options::{Exhausted, OnPoison, RepublishSpec, RetrySpec, TargetOptions, TARGETS};
pub use store::{Store, Tables};
pub use worker::{BuiltinTarget, TargetInfo};
