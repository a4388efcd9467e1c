//! Errors the SQS endpoint answers with, in AWS's shapes.
//!
//! Each [`ErrorCode`] has the name an SDK knows it by (the JSON protocol's `__type`, the modeled
//! exception's shape name) and the legacy query-protocol code that SQS still sends in the
//! `x-amzn-query-error` header and in XML `ErrorResponse`s. Every error is a client fault
//! answered with HTTP 400, except [`ErrorCode::InternalFailure`] (500).

use std::fmt;

/// The error codes this endpoint can answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The queue named by `QueueUrl` / `QueueName` does not exist.
    QueueDoesNotExist,
    /// `CreateQueue` of an existing name with different attributes.
    QueueNameExists,
    /// A receipt handle that this broker never issued (forged, corrupted, another queue's), or a
    /// stale one under `stale_ack: reject`.
    ReceiptHandleIsInvalid,
    /// A parameter has a value outside its range or of the wrong form (also: message too long).
    InvalidParameterValue,
    /// A required parameter is absent.
    MissingParameter,
    /// Query protocol: `Action` names no operation.
    InvalidAction,
    /// JSON protocol: `X-Amz-Target` names no operation.
    UnknownOperation,
    /// An operation SQS has that this broker does not implement (permissions, message moves, FIFO).
    UnsupportedOperation,
    /// A queue attribute name that does not exist (or that cannot be set).
    InvalidAttributeName,
    /// A queue attribute value out of range or malformed.
    InvalidAttributeValue,
    /// A message body with characters SQS does not allow.
    InvalidMessageContents,
    /// A batch request with no entries.
    EmptyBatchRequest,
    /// A batch request with more than 10 entries.
    TooManyEntriesInBatchRequest,
    /// Two entries of one batch share an `Id`.
    BatchEntryIdsNotDistinct,
    /// A batch entry `Id` that is empty, too long or has characters outside `[A-Za-z0-9_-]`.
    InvalidBatchEntryId,
    /// The messages of one batch add up to more than the maximum message size.
    BatchRequestTooLong,
    /// A `PurgeQueue` within 60 s of the queue's last purge.
    PurgeQueueInProgress,
    /// JSON protocol: the body is not JSON, or a member has the wrong type.
    SerializationException,
    /// The request is not an SQS request at all: wrong content type, unreadable form, body over
    /// the request size limit.
    MalformedRequest,
    /// The broker itself failed.
    InternalFailure,
}

impl ErrorCode {
    /// The name SDKs know the error by (JSON `__type` after the `#`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::QueueDoesNotExist => "QueueDoesNotExist",
            ErrorCode::QueueNameExists => "QueueNameExists",
            ErrorCode::ReceiptHandleIsInvalid => "ReceiptHandleIsInvalid",
            ErrorCode::InvalidParameterValue => "InvalidParameterValue",
            ErrorCode::MissingParameter => "MissingParameter",
            ErrorCode::InvalidAction => "InvalidAction",
            ErrorCode::UnknownOperation => "UnknownOperationException",
            ErrorCode::UnsupportedOperation => "UnsupportedOperation",
            ErrorCode::InvalidAttributeName => "InvalidAttributeName",
            ErrorCode::InvalidAttributeValue => "InvalidAttributeValue",
            ErrorCode::InvalidMessageContents => "InvalidMessageContents",
            ErrorCode::EmptyBatchRequest => "EmptyBatchRequest",
            ErrorCode::TooManyEntriesInBatchRequest => "TooManyEntriesInBatchRequest",
            ErrorCode::BatchEntryIdsNotDistinct => "BatchEntryIdsNotDistinct",
            ErrorCode::InvalidBatchEntryId => "InvalidBatchEntryId",
            ErrorCode::BatchRequestTooLong => "BatchRequestTooLong",
            ErrorCode::PurgeQueueInProgress => "PurgeQueueInProgress",
            ErrorCode::SerializationException => "SerializationException",
            ErrorCode::MalformedRequest => "MalformedRequest",
            ErrorCode::InternalFailure => "InternalFailure",
        }
    }

    /// The JSON protocol's `__type`: SQS's namespace for its own errors, Coral's for the
    /// framework errors every AWS JSON service shares.
    pub fn json_type(self) -> String {
        match self {
            ErrorCode::UnknownOperation | ErrorCode::SerializationException => {
                format!("com.amazon.coral.service#{}", self.name())
            }
            _ => format!("com.amazonaws.sqs#{}", self.name()),
        }
    }

    /// The query protocol's code (also the first half of the `x-amzn-query-error` header).
    pub fn query_code(self) -> &'static str {
        match self {
            ErrorCode::QueueDoesNotExist => "AWS.SimpleQueueService.NonExistentQueue",
            ErrorCode::QueueNameExists => "QueueAlreadyExists",
            ErrorCode::UnsupportedOperation => "AWS.SimpleQueueService.UnsupportedOperation",
            ErrorCode::EmptyBatchRequest => "AWS.SimpleQueueService.EmptyBatchRequest",
            ErrorCode::TooManyEntriesInBatchRequest => {
                "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"
            }
            ErrorCode::BatchEntryIdsNotDistinct => {
                "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
            }
            ErrorCode::InvalidBatchEntryId => "AWS.SimpleQueueService.InvalidBatchEntryId",
            ErrorCode::BatchRequestTooLong => "AWS.SimpleQueueService.BatchRequestTooLong",
            ErrorCode::PurgeQueueInProgress => "AWS.SimpleQueueService.PurgeQueueInProgress",
            ErrorCode::UnknownOperation => "InvalidAction",
            ErrorCode::SerializationException => "MalformedInput",
            other => other.name(),
        }
    }

    /// `Sender` for client faults, `Receiver` for the broker's own.
    pub fn fault(self) -> &'static str {
        match self {
            ErrorCode::InternalFailure => "Receiver",
            _ => "Sender",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            ErrorCode::InternalFailure => 500,
            _ => 400,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error answered to an SQS client: a code and a message for the person reading the logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct SqsError {
    pub code: ErrorCode,
    pub message: String,
}

impl SqsError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> SqsError {
        SqsError {
            code,
            message: message.into(),
        }
    }

    pub fn queue_does_not_exist() -> SqsError {
        SqsError::new(
            ErrorCode::QueueDoesNotExist,
            "The specified queue does not exist.",
        )
    }

    pub fn missing(parameter: &str) -> SqsError {
        SqsError::new(
            ErrorCode::MissingParameter,
            format!("The request must contain the parameter {parameter}."),
        )
    }

    pub fn invalid(parameter: &str, reason: impl fmt::Display) -> SqsError {
        SqsError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value for parameter {parameter} is invalid. Reason: {reason}"),
        )
    }

    pub fn invalid_receipt(reason: &str) -> SqsError {
        SqsError::new(
            ErrorCode::ReceiptHandleIsInvalid,
            format!("The input receipt handle is invalid: {reason}"),
        )
    }

    /// A message over the queue's `MaximumMessageSize`. SQS reports it as
    /// `InvalidParameterValue`, and so does this broker (there is no `MessageTooLong` shape).
    pub fn message_too_long(limit: usize) -> SqsError {
        SqsError::new(
            ErrorCode::InvalidParameterValue,
            format!(
                "One or more parameters are invalid. Reason: Message must be shorter than {limit} bytes."
            ),
        )
    }
}
