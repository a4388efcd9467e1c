//! What an operation answers, independent of the protocol it is rendered in.

use std::collections::BTreeMap;

use super::error::SqsError;
use super::message_attributes::MessageAttributes;

#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `CreateQueue`, `GetQueueUrl`.
    QueueUrl(String),
    ListQueues {
        queue_urls: Vec<String>,
        next_token: Option<String>,
    },
    GetQueueAttributes(BTreeMap<String, String>),
    SendMessage(Sent),
    SendMessageBatch {
        successful: Vec<(String, Sent)>,
        failed: Vec<BatchFailure>,
    },
    ReceiveMessage(Vec<Received>),
    /// `DeleteMessageBatch`, `ChangeMessageVisibilityBatch`: ids that succeeded, and failures.
    Batch {
        successful: Vec<String>,
        failed: Vec<BatchFailure>,
    },
    /// `ListQueueTags`.
    ListQueueTags(BTreeMap<String, String>),
    /// `ListDeadLetterSourceQueues`.
    ListDeadLetterSourceQueues {
        queue_urls: Vec<String>,
        next_token: Option<String>,
    },
    /// Operations that answer nothing but success.
    Empty,
}

/// A message accepted by `SendMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub message_id: String,
    pub md5_of_body: String,
    pub md5_of_attributes: Option<String>,
    /// A FIFO queue's sequence number of the message.
    pub sequence_number: Option<String>,
}

/// One message handed out by `ReceiveMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub message_id: String,
    pub receipt_handle: String,
    pub md5_of_body: String,
    pub body: String,
    /// System attributes asked for (`ApproximateReceiveCount`, `SentTimestamp`, ...).
    pub attributes: BTreeMap<String, String>,
    pub md5_of_message_attributes: Option<String>,
    pub message_attributes: MessageAttributes,
    /// The message's number in its queue and this delivery's receive count (not on the wire:
    /// for the live runner's hooks).
    pub seq: crate::record::Seq,
    pub receive_count: u32,
}

/// One failed entry of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchFailure {
    pub id: String,
    pub error: SqsError,
}
