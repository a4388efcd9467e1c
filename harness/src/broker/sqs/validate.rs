//! Checks of request members that need no queue state: ranges, names, message contents,
//! attribute shapes and batch entry ids. Each failure is the error SQS gives for it.

use std::collections::{BTreeMap, HashSet};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::error::{ErrorCode, SqsError};
use super::message_attributes::{AttributeData, AttributeValue, MessageAttributes};
use super::request::NewMessage;
use super::wire::{WireAttribute, WireMessage};

/// Most entries a batch may have.
pub const MAX_BATCH: usize = 10;
/// Longest visibility timeout SQS allows (12 h), in seconds.
pub const MAX_VISIBILITY_S: i64 = 43_200;
/// Longest message delay (15 min), in seconds.
pub const MAX_DELAY_S: i64 = 900;
/// Longest long-poll wait, in seconds.
pub const MAX_WAIT_S: i64 = 20;
/// Most message attributes one message may carry.
pub const MAX_MESSAGE_ATTRIBUTES: usize = 10;

/// The system attribute names a receive may ask for.
pub const SYSTEM_ATTRIBUTES: &[&str] = &[
    "All",
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
];

pub fn required<T>(v: Option<T>, name: &str) -> Result<T, SqsError> {
    v.ok_or_else(|| SqsError::missing(name))
}

/// An integer member within `lo..=hi`.
pub fn in_range(v: i64, lo: i64, hi: i64, name: &str) -> Result<u32, SqsError> {
    if (lo..=hi).contains(&v) {
        Ok(v as u32)
    } else {
        Err(SqsError::invalid(
            name,
            format!("must be between {lo} and {hi}, got {v}"),
        ))
    }
}

pub fn opt_in_range(v: Option<i64>, lo: i64, hi: i64, name: &str) -> Result<Option<u32>, SqsError> {
    v.map(|v| in_range(v, lo, hi, name)).transpose()
}

/// The queue name a `QueueUrl` names: its last path segment.
pub fn queue_of_url(url: Option<String>) -> Result<String, SqsError> {
    let url = required(url, "QueueUrl")?;
    let name = url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    if name.is_empty() {
        return Err(SqsError::invalid("QueueUrl", "it names no queue"));
    }
    Ok(name.to_string())
}

/// A queue name: 1 to 80 characters of `[A-Za-z0-9_-]`; a FIFO queue's ends in `.fifo` (the
/// suffix counted in the 80).
pub fn queue_name(name: Option<String>) -> Result<String, SqsError> {
    let name = required(name, "QueueName")?;
    if is_queue_name(&name) || is_fifo_queue_name(&name) {
        Ok(name)
    } else {
        Err(SqsError::invalid(
            "QueueName",
            "can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ))
    }
}

/// True for a FIFO queue's name: a standard name of at most 75 characters, then `.fifo`.
pub fn is_fifo_queue_name(name: &str) -> bool {
    name.strip_suffix(".fifo")
        .is_some_and(|stem| stem.len() <= 75 && is_queue_name(stem))
}

/// A `MessageDeduplicationId` or `MessageGroupId`: 1 to 128 characters, letters, digits and
/// ASCII punctuation.
pub fn fifo_id(id: Option<String>, name: &str) -> Result<Option<String>, SqsError> {
    match id {
        None => Ok(None),
        Some(id)
            if !id.is_empty()
                && id.len() <= 128
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b.is_ascii_punctuation()) =>
        {
            Ok(Some(id))
        }
        Some(id) => Err(SqsError::invalid(
            name,
            format!(
                "Value {id} for parameter {name} is invalid. Reason: it must be 1 to 128 \
                 alphanumeric or punctuation characters."
            ),
        )),
    }
}

/// True for a standard queue's name: 1 to 80 ASCII letters, digits, hyphens or underscores.
pub fn is_queue_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 80
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A message body: at least one character, only the characters SQS allows
/// (`#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF`).
pub fn body(body: Option<String>) -> Result<String, SqsError> {
    let body = required(body, "MessageBody")?;
    if body.is_empty() {
        return Err(SqsError::missing("MessageBody"));
    }
    // Rust strings hold no surrogates; what is left to refuse is control characters other than
    // tab, LF and CR, and the non-characters U+FFFE and U+FFFF.
    let bad = body.chars().find(|&c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    });
    match bad {
        None => Ok(body),
        Some(c) => Err(SqsError::new(
            ErrorCode::InvalidMessageContents,
            format!(
                "Invalid characters found. Invalid character: U+{:04X}",
                c as u32
            ),
        )),
    }
}

/// A message's members, checked.
pub fn message(m: WireMessage) -> Result<NewMessage, SqsError> {
    let body = body(m.message_body)?;
    let delay_s = opt_in_range(m.delay_seconds, 0, MAX_DELAY_S, "DelaySeconds")?;
    let attributes = message_attributes(m.message_attributes.unwrap_or_default())?;
    Ok(NewMessage {
        body,
        delay_s,
        attributes,
        group_id: fifo_id(m.message_group_id, "MessageGroupId")?,
        dedup_id: fifo_id(m.message_deduplication_id, "MessageDeduplicationId")?,
    })
}

/// Message attributes: at most 10, valid names, a known data type and the matching value.
pub fn message_attributes(
    raw: BTreeMap<String, WireAttribute>,
) -> Result<MessageAttributes, SqsError> {
    if raw.len() > MAX_MESSAGE_ATTRIBUTES {
        return Err(SqsError::invalid(
            "MessageAttributes",
            format!(
                "Number of message attributes [{}] exceeds the allowed maximum [10].",
                raw.len()
            ),
        ));
    }
    let mut out = MessageAttributes::new();
    for (name, a) in raw {
        attribute_name(&name)?;
        let data_type = a
            .data_type
            .ok_or_else(|| SqsError::missing(&format!("MessageAttribute.{name}.DataType")))?;
        let base = data_type.split('.').next().unwrap_or_default();
        if data_type.len() > 256 || !["String", "Number", "Binary"].contains(&base) {
            return Err(SqsError::invalid(
                "MessageAttributes",
                format!("The type of message (user) attribute '{name}' is invalid: {data_type}"),
            ));
        }
        if a.string_list_values.is_some_and(|v| !v.is_empty())
            || a.binary_list_values.is_some_and(|v| !v.is_empty())
        {
            return Err(SqsError::invalid(
                "MessageAttributes",
                format!("Message attribute list values are not supported ('{name}')"),
            ));
        }
        let value = if base == "Binary" {
            let b64 = a.binary_value.ok_or_else(|| {
                SqsError::invalid("MessageAttributes", format!("Message (user) attribute '{name}' must contain a non-empty value of type 'Binary'"))
            })?;
            let bytes = STANDARD.decode(b64.as_bytes()).map_err(|_| {
                SqsError::invalid(
                    "MessageAttributes",
                    format!("Message (user) attribute '{name}' is not valid base64"),
                )
            })?;
            AttributeData::Binary(bytes)
        } else {
            let s = a.string_value.filter(|s| !s.is_empty()).ok_or_else(|| {
                SqsError::invalid("MessageAttributes", format!("Message (user) attribute '{name}' must contain a non-empty value of type '{base}'"))
            })?;
            if base == "Number" && s.parse::<f64>().map_or(true, |f| !f.is_finite()) {
                return Err(SqsError::invalid(
                    "MessageAttributes",
                    format!(
                        "Can't cast the value of message (user) attribute '{name}' to a number."
                    ),
                ));
            }
            AttributeData::String(s)
        };
        out.insert(name, AttributeValue { data_type, value });
    }
    Ok(out)
}

/// A message attribute name: 1..=256 of `[A-Za-z0-9_.-]`, no `AWS.`/`Amazon.` prefix, no
/// leading, trailing or doubled period.
fn attribute_name(name: &str) -> Result<(), SqsError> {
    let lower = name.to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(SqsError::invalid(
            "MessageAttributes",
            format!("Message (user) attribute name '{name}' is invalid"),
        ))
    }
}

/// System attribute names of a receive.
pub fn system_attribute_names(names: Vec<String>) -> Result<Vec<String>, SqsError> {
    match names
        .iter()
        .find(|n| !SYSTEM_ATTRIBUTES.contains(&n.as_str()))
    {
        Some(n) => Err(SqsError::new(
            ErrorCode::InvalidAttributeName,
            format!("Unknown Attribute {n}."),
        )),
        None => Ok(names),
    }
}

/// Checks a batch's entry count and ids: 1..=10 entries, ids of `[A-Za-z0-9_-]{1,80}`, distinct.
pub fn batch_ids<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> Result<(), SqsError> {
    let n = ids.len();
    if n == 0 {
        return Err(SqsError::new(
            ErrorCode::EmptyBatchRequest,
            "There should be at least one entry in the request.",
        ));
    }
    if n > MAX_BATCH {
        return Err(SqsError::new(
            ErrorCode::TooManyEntriesInBatchRequest,
            format!("Maximum number of entries per request are {MAX_BATCH}. You have sent {n}."),
        ));
    }
    let mut seen = HashSet::new();
    for id in ids {
        let ok = !id.is_empty()
            && id.len() <= 80
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(SqsError::new(
                ErrorCode::InvalidBatchEntryId,
                "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
            ));
        }
        if !seen.insert(id) {
            return Err(SqsError::new(
                ErrorCode::BatchEntryIdsNotDistinct,
                format!("Id {id} repeated."),
            ));
        }
    }
    Ok(())
}
