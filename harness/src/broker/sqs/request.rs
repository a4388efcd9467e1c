//! A parsed, validated SQS request: what the client asked for, independent of the protocol
//! (JSON 1.0 or query) it spoke.

use std::collections::BTreeMap;

use super::error::SqsError;
use super::message_attributes::MessageAttributes;

/// The wire protocol a request came in (and its answer goes out) in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Action>`, JSON body and answers.
    Json,
    /// The query protocol: form-encoded `Action=...`, XML answers.
    Query,
}

/// One request: its protocol, the access key id that identifies the worker, and the action.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub protocol: Protocol,
    /// The access key id of the request's credentials (`Credential=<AKID>/...`), if any.
    pub access_key: Option<String>,
    pub action: Action,
}

/// The operations the embedded broker serves. `queue` is always a queue *name* (taken from the
/// last path segment of `QueueUrl`).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    CreateQueue {
        name: String,
        attributes: BTreeMap<String, String>,
        /// Tags of a queue it creates (an existing queue keeps its own).
        tags: BTreeMap<String, String>,
    },
    GetQueueUrl {
        name: String,
    },
    ListQueues {
        prefix: Option<String>,
        max_results: Option<u32>,
        next_token: Option<String>,
    },
    DeleteQueue {
        queue: String,
    },
    GetQueueAttributes {
        queue: String,
        names: Vec<String>,
    },
    SetQueueAttributes {
        queue: String,
        attributes: BTreeMap<String, String>,
    },
    SendMessage {
        queue: String,
        message: NewMessage,
    },
    /// Entries whose own fields are invalid carry their error: it becomes a `Failed` entry.
    SendMessageBatch {
        queue: String,
        entries: Vec<(String, Result<NewMessage, SqsError>)>,
    },
    ReceiveMessage(Receive),
    DeleteMessage {
        queue: String,
        receipt: String,
    },
    DeleteMessageBatch {
        queue: String,
        entries: Vec<(String, String)>,
    },
    ChangeMessageVisibility {
        queue: String,
        receipt: String,
        timeout_s: u32,
    },
    ChangeMessageVisibilityBatch {
        queue: String,
        entries: Vec<VisibilityEntry>,
    },
    PurgeQueue {
        queue: String,
    },
    TagQueue {
        queue: String,
        tags: BTreeMap<String, String>,
    },
    UntagQueue {
        queue: String,
        keys: Vec<String>,
    },
    ListQueueTags {
        queue: String,
    },
    /// The queues whose redrive policy names `queue` as their dead-letter queue.
    ListDeadLetterSourceQueues {
        queue: String,
        max_results: Option<u32>,
        next_token: Option<String>,
    },
}

impl Action {
    /// The operation's name, as in `X-Amz-Target` and `Action=`.
    pub fn name(&self) -> &'static str {
        match self {
            Action::CreateQueue { .. } => "CreateQueue",
            Action::GetQueueUrl { .. } => "GetQueueUrl",
            Action::ListQueues { .. } => "ListQueues",
            Action::DeleteQueue { .. } => "DeleteQueue",
            Action::GetQueueAttributes { .. } => "GetQueueAttributes",
            Action::SetQueueAttributes { .. } => "SetQueueAttributes",
            Action::SendMessage { .. } => "SendMessage",
            Action::SendMessageBatch { .. } => "SendMessageBatch",
            Action::ReceiveMessage(_) => "ReceiveMessage",
            Action::DeleteMessage { .. } => "DeleteMessage",
            Action::DeleteMessageBatch { .. } => "DeleteMessageBatch",
            Action::ChangeMessageVisibility { .. } => "ChangeMessageVisibility",
            Action::ChangeMessageVisibilityBatch { .. } => "ChangeMessageVisibilityBatch",
            Action::PurgeQueue { .. } => "PurgeQueue",
            Action::TagQueue { .. } => "TagQueue",
            Action::UntagQueue { .. } => "UntagQueue",
            Action::ListQueueTags { .. } => "ListQueueTags",
            Action::ListDeadLetterSourceQueues { .. } => "ListDeadLetterSourceQueues",
        }
    }
}

/// A message to publish.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub body: String,
    /// `DelaySeconds` (0..=900); `None` = the queue's default.
    pub delay_s: Option<u32>,
    pub attributes: MessageAttributes,
    /// `MessageGroupId`: required on a FIFO queue (one message of a group in flight, order
    /// within a group); on a standard queue (fair queues) kept and returned, with no effect on
    /// delivery.
    pub group_id: Option<String>,
    /// `MessageDeduplicationId`: FIFO queues only (without it, a FIFO queue needs
    /// `ContentBasedDeduplication`).
    pub dedup_id: Option<String>,
}

/// A `ReceiveMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct Receive {
    pub queue: String,
    /// `MaxNumberOfMessages`, 1..=10.
    pub max_messages: u32,
    /// `WaitTimeSeconds` (0..=20); `None` = the queue's `ReceiveMessageWaitTimeSeconds`.
    pub wait_s: Option<u32>,
    /// `VisibilityTimeout` of this receive's leases; `None` = the queue's.
    pub visibility_timeout_s: Option<u32>,
    /// System attributes to return (`AttributeNames` and `MessageSystemAttributeNames` merged).
    pub system_attributes: Vec<String>,
    /// Message attributes to return: names, `All`, `.*` or prefixes `foo.*`.
    pub message_attributes: Vec<String>,
}

/// One entry of a `ChangeMessageVisibilityBatch`.
#[derive(Debug, Clone, PartialEq)]
pub struct VisibilityEntry {
    pub id: String,
    pub receipt: String,
    pub timeout_s: u32,
}
