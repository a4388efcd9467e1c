//! The embedded broker served over the SQS API, for live runs: any SQS client (an AWS SDK in any
//! language, the AWS CLI) can be the consumer under test.
//!
//! # Protocols
//! - **AWS JSON 1.0** (`POST /`, `X-Amz-Target: AmazonSQS.<Action>`, `Content-Type:
//!   application/x-amz-json-1.0`): what current SDKs speak (aws-sdk-* for Rust, Go v2, Java v2,
//!   JS v3, boto3 >= 1.34).
//! - **Query** (form-encoded `Action=...`, XML answers; `POST` or `GET`): what older SDKs speak.
//!   Every operation below is served in both.
//!
//! # Operations
//! `CreateQueue`, `GetQueueUrl`, `ListQueues`, `DeleteQueue`, `PurgeQueue`,
//! `GetQueueAttributes`, `SetQueueAttributes`, `SendMessage`, `SendMessageBatch`,
//! `ReceiveMessage` (long polling that wakes on a send, a lease expiry or a delay's end),
//! `DeleteMessage`, `DeleteMessageBatch`, `ChangeMessageVisibility`,
//! `ChangeMessageVisibilityBatch`, `TagQueue`, `UntagQueue`, `ListQueueTags` (and `CreateQueue`
//! `tags`), `ListDeadLetterSourceQueues`. Permissions, message-move tasks and FIFO queues answer
//! `UnsupportedOperation`. A second `PurgeQueue` of a queue within 60 s answers
//! `PurgeQueueInProgress`, as SQS does.
//!
//! # Semantics
//! Each queue is one [`crate::broker::Broker`] (the same state machine as sim mode) driven by the
//! wall clock (nanoseconds since the server started), plus the bodies and attributes kept beside
//! it. A lease that expires puts the message back at the *front* of the queue; the lease of
//! delivery number `maxReceiveCount` moves it to the dead-letter queue at its end (SQS moves it
//! on the next receive instead: the count of deliveries is the same). A queue's `RedrivePolicy`
//! sets the broker's delivery limit, and dead-lettered messages become receivable from the queue
//! with the policy's `deadLetterTargetArn`, keeping their `MessageId` and `SentTimestamp`.
//!
//! **Stale receipts** (a `DeleteMessage` whose receipt is no longer the current one: its lease
//! expired and the message was received again, or it was already deleted) follow the queue's
//! `stale_ack` policy:
//! - `reject`: the delete fails with `ReceiptHandleIsInvalid` and the message is untouched
//!   (what a consumer sees from a broker that refuses late acks);
//! - `sqs` (what SQS does; the default for queues created with `CreateQueue`): the latest
//!   handle of a message whose lease ended, nobody having received it since, deletes it; an
//!   older handle succeeds and deletes nothing;
//! - `ignore`: the delete succeeds and deletes nothing;
//! - `delete`: the delete succeeds and deletes the message although another worker holds it.
//!
//! A `ChangeMessageVisibility` with a receipt that is not current fails with
//! `InvalidParameterValue` ("Message does not exist or is not available for visibility timeout
//! change"), as SQS does, except under `sqs` with the latest handle of a message nobody
//! received since its lease ended: that succeeds (the message is hidden again). Every stale
//! delete is recorded as such in the event log, whatever the policy.
//!
//! **Workers** are told apart by the access key id of their SigV4 credentials (signatures are not
//! verified): `3` or `worker-3` is worker 3; other ids get worker numbers from 10001 upward (see
//! [`workers`]). **Receipt handles** are opaque and authenticated ([`receipt`]): a forged,
//! corrupted or foreign one is refused with `ReceiptHandleIsInvalid`.
//!
//! **Errors** come in AWS's shapes: JSON `{"__type": "com.amazonaws.sqs#QueueDoesNotExist",
//! "message": ...}` with the `x-amzn-query-error: AWS.SimpleQueueService.NonExistentQueue;Sender`
//! header that SDKs use to name the error, or an XML `ErrorResponse` with the query code.
//! Malformed requests (not JSON, wrong member types, missing members, bodies over the size limit,
//! unknown actions, wrong content types) are answered 400; nothing a client sends panics the
//! server. A message over `MaximumMessageSize` (default and largest 1 MiB) is `InvalidParameterValue`, as in SQS;
//! a batch whose messages together exceed it is `BatchRequestTooLong`.
//!
//! Not modelled: message retention (`MessageRetentionPeriod` is reported, never enforced),
//! FIFO queues, encryption, `PurgeQueue`'s 60 s rate limit, purges in the event log (purged
//! messages simply receive no further event).
//!
//! # API for the rest of ackbench
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! use ackbench::internals::serve::{QueueSpec, SqsConfig, SqsServer};
//! # let broker_config: ackbench::internals::serve::BrokerConfig = todo!();
//! let server = SqsServer::bind("127.0.0.1:0".parse().unwrap(), SqsConfig::default()).await?;
//! let url = server
//!     .create_queue("orders", QueueSpec { broker: broker_config, dead_letter_queue: Some("orders-dlq".into()), fifo: None })
//!     .expect("valid queue name");
//! // ... point the workers' SDKs at server.endpoint_url() and `url` ...
//! let events = server.take_events("orders").unwrap_or_default();
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//! [`run_standalone`] serves until Ctrl-C or SIGTERM: it is what `ackbench broker --listen ADDR`
//! runs (default [`DEFAULT_LISTEN`], loopback only). A broker whose events nobody takes should
//! set [`SqsConfig::record_events`] to false, and a long-running one
//! [`SqsConfig::forget_settled`] to true (both are what `ackbench broker` does): its memory then
//! holds what its queues hold, not what they carried. Connections are served within
//! [`SqsConfig::limits`] (header-read and idle timeouts, a connection limit; see
//! [`crate::serving`]); a long poll in progress is never cut.
//!
//! # Tests and tools
//! `tests/e2e/sqs_*.rs` (aws-sdk-sqs conformance, malformed-request corpus, query protocol,
//! boto3 via `tests/sqs/boto3_conformance.py`), `harness/benches/sqs_throughput.rs` (throughput
//! beside Redis Streams), `fuzz/` (the request parser, with cargo-fuzz on nightly).

mod clock;
mod config;
mod error;
mod hooks;
mod http;
pub mod message_attributes;
mod parse;
mod parse_query;
mod queue;
mod queue_attributes;
pub mod receipt;
mod registry;
mod render_json;
mod render_xml;
mod request;
mod response;
mod server;
mod service;
mod tags;
mod timer;
mod validate;
mod wire;
mod wire_time;
pub mod workers;

pub use config::{QueueSpec, SqsConfig};
pub use hooks::Hooks;
#[cfg(feature = "live")]
pub use hooks::{Delete, SqsHooks};
pub use parse::parse_request;
pub use request::NewMessage;
#[cfg(feature = "live")]
pub use request::{Action, Protocol};
pub use server::{run_standalone, SqsServer};
pub use validate::is_queue_name;
pub use wire_time::WireTime;

/// The default address of `ackbench broker`: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9324";

#[cfg(test)]
mod tests;
