//! Queue attributes: the settings `CreateQueue` / `SetQueueAttributes` take and
//! `GetQueueAttributes` reports, with SQS's ranges.

use serde_json::Value;

use super::error::{ErrorCode, SqsError};
use crate::broker::BrokerConfig;

/// Default and largest `MaximumMessageSize` (1 MiB, SQS's limit; it was 256 KiB until 2025).
pub const MAX_MESSAGE_BYTES: usize = 1_048_576;

/// Every attribute name `GetQueueAttributes` accepts, in the order `All` reports them.
pub const NAMES: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "DelaySeconds",
    "LastModifiedTimestamp",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "QueueArn",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "Policy",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// The dead-letter settings: after `max_receive_count` deliveries a message moves to the queue
/// whose ARN is `dead_letter_target_arn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedrivePolicy {
    pub dead_letter_target_arn: String,
    pub max_receive_count: u32,
}

impl RedrivePolicy {
    /// Parses SQS's JSON form: `{"deadLetterTargetArn": "...", "maxReceiveCount": 3}` (the
    /// count as a number or a string).
    pub fn parse(text: &str) -> Result<RedrivePolicy, SqsError> {
        let bad = |why: &str| {
            SqsError::new(
                ErrorCode::InvalidAttributeValue,
                format!("Invalid value for the parameter RedrivePolicy. Reason: {why}"),
            )
        };
        let v: Value = serde_json::from_str(text)
            .map_err(|_| bad("Redrive policy is not a valid JSON map."))?;
        let arn = v
            .get("deadLetterTargetArn")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                bad("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
            })?;
        let count = match v.get("maxReceiveCount") {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
            _ => {
                return Err(bad(
                    "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
                ))
            }
        };
        match count {
            Some(c @ 1..=1000) => Ok(RedrivePolicy {
                dead_letter_target_arn: arn.to_string(),
                max_receive_count: c as u32,
            }),
            _ => Err(bad(
                "Value for maxReceiveCount must be an integer between 1 and 1000.",
            )),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::json!({
            "deadLetterTargetArn": self.dead_letter_target_arn,
            "maxReceiveCount": self.max_receive_count,
        })
        .to_string()
    }
}

/// A queue's settings beside its broker's [`BrokerConfig`] (visibility timeout, delivery limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSettings {
    pub delay_s: u32,
    pub max_message_size: usize,
    pub retention_s: u32,
    pub receive_wait_s: u32,
    pub redrive: Option<RedrivePolicy>,
    pub redrive_allow_policy: Option<String>,
    pub policy: Option<String>,
    /// `FifoQueue`: set at creation only, with a name ending in `.fifo`.
    pub fifo: bool,
    /// `ContentBasedDeduplication` (FIFO only): a send without `MessageDeduplicationId` is
    /// deduplicated by the SHA-256 of its body.
    pub content_based_deduplication: bool,
}

impl Default for QueueSettings {
    fn default() -> QueueSettings {
        QueueSettings {
            delay_s: 0,
            max_message_size: MAX_MESSAGE_BYTES,
            retention_s: 345_600,
            receive_wait_s: 0,
            redrive: None,
            redrive_allow_policy: None,
            policy: None,
            fifo: false,
            content_based_deduplication: false,
        }
    }
}

fn boolean(name: &str, value: &str) -> Result<bool, SqsError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!("Invalid value for the parameter {name}: must be true or false."),
        )),
    }
}

fn int(name: &str, value: &str, lo: u64, hi: u64) -> Result<u64, SqsError> {
    match value.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!(
                "Invalid value for the parameter {name}: must be an integer from {lo} to {hi}."
            ),
        )),
    }
}

/// Applies one settable attribute. A name that does not exist, or cannot be set, is
/// `InvalidAttributeName`; a value out of range is `InvalidAttributeValue`. `RedrivePolicy` also
/// sets the broker's delivery limit (the empty string removes both).
pub fn set(
    settings: &mut QueueSettings,
    broker: &mut BrokerConfig,
    name: &str,
    value: &str,
    wire_time: super::WireTime,
) -> Result<(), SqsError> {
    match name {
        "VisibilityTimeout" => {
            broker.visibility_timeout = wire_time.nanos(int(name, value, 0, 43_200)?)
        }
        "DelaySeconds" => settings.delay_s = int(name, value, 0, 900)? as u32,
        "MaximumMessageSize" => {
            settings.max_message_size = int(name, value, 1024, MAX_MESSAGE_BYTES as u64)? as usize
        }
        "MessageRetentionPeriod" => settings.retention_s = int(name, value, 60, 1_209_600)? as u32,
        "ReceiveMessageWaitTimeSeconds" => {
            settings.receive_wait_s = int(name, value, 0, 20)? as u32
        }
        "RedrivePolicy" if value.trim().is_empty() => {
            settings.redrive = None;
            broker.max_receives = 0;
        }
        "RedrivePolicy" => {
            let p = RedrivePolicy::parse(value)?;
            broker.max_receives = p.max_receive_count;
            settings.redrive = Some(p);
        }
        "RedriveAllowPolicy" => {
            settings.redrive_allow_policy = Some(value.to_string()).filter(|v| !v.is_empty())
        }
        "Policy" => settings.policy = Some(value.to_string()).filter(|v| !v.is_empty()),
        // Encryption settings are accepted and have no effect.
        "SqsManagedSseEnabled" | "KmsMasterKeyId" | "KmsDataKeyReusePeriodSeconds" => {}
        "FifoQueue" => settings.fifo = boolean(name, value)?,
        "ContentBasedDeduplication" => settings.content_based_deduplication = boolean(name, value)?,
        // The defaults (deduplication per queue, throughput per queue) are what the model does.
        "DeduplicationScope" if value == "queue" => {}
        "FifoThroughputLimit" if value == "perQueue" => {}
        "DeduplicationScope" | "FifoThroughputLimit" => {
            return Err(SqsError::new(
                ErrorCode::UnsupportedOperation,
                format!("{name}={value} is not supported (only the defaults: queue, perQueue)"),
            ))
        }
        _ => {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                format!("Unknown Attribute {name}."),
            ))
        }
    }
    Ok(())
}

/// True when `name` is an attribute `GetQueueAttributes` knows (or `All`).
pub fn is_known(name: &str) -> bool {
    name == "All" || NAMES.contains(&name)
}
