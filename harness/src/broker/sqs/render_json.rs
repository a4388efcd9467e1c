//! Answers in the AWS JSON 1.0 protocol, serialized straight from the responses.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::error::SqsError;
use super::message_attributes::{AttributeData, MessageAttributes};
use super::response::{BatchFailure, Received, Response, Sent};

/// The body of a successful answer.
pub fn response(r: &Response) -> String {
    // Sized up front: one allocation for a ten-message receive instead of a chain of regrowths.
    let estimate = match r {
        Response::ReceiveMessage(ms) => ms.iter().map(|m| m.body.len() + 320).sum::<usize>(),
        Response::SendMessageBatch { successful, .. } => successful.len() * 160 + 64,
        _ => 256,
    };
    let mut buf = Vec::with_capacity(estimate);
    let out = match r {
        Response::QueueUrl(url) => serde_json::to_writer(&mut buf, &QueueUrl { queue_url: url }),
        Response::ListQueues {
            queue_urls,
            next_token,
        } => serde_json::to_writer(
            &mut buf,
            &ListQueues {
                queue_urls,
                next_token: next_token.as_deref(),
            },
        ),
        Response::GetQueueAttributes(attributes) => {
            serde_json::to_writer(&mut buf, &GetQueueAttributes { attributes })
        }
        Response::SendMessage(sent) => {
            serde_json::to_writer(&mut buf, &SentJson { id: None, sent })
        }
        Response::SendMessageBatch { successful, failed } => serde_json::to_writer(
            &mut buf,
            &SendBatch {
                successful: successful
                    .iter()
                    .map(|(id, sent)| SentJson { id: Some(id), sent })
                    .collect(),
                failed: failed.iter().map(FailureJson).collect(),
            },
        ),
        Response::ReceiveMessage(messages) => serde_json::to_writer(
            &mut buf,
            &ReceiveJson {
                messages: messages.iter().map(ReceivedJson).collect(),
            },
        ),
        Response::Batch { successful, failed } => serde_json::to_writer(
            &mut buf,
            &Batch {
                successful: successful.iter().map(|id| IdJson { id }).collect(),
                failed: failed.iter().map(FailureJson).collect(),
            },
        ),
        Response::ListQueueTags(tags) => serde_json::to_writer(&mut buf, &QueueTags { tags }),
        Response::ListDeadLetterSourceQueues {
            queue_urls,
            next_token,
        } => serde_json::to_writer(
            &mut buf,
            &DeadLetterSources {
                queue_urls,
                next_token: next_token.as_deref(),
            },
        ),
        Response::Empty => {
            buf.extend_from_slice(b"{}");
            Ok(())
        }
    };
    // Serializing strings and maps of strings cannot fail, and JSON is UTF-8.
    match out {
        Ok(()) => String::from_utf8(buf).unwrap_or_else(|_| "{}".to_string()),
        Err(_) => "{}".to_string(),
    }
}

/// The body of an error answer.
pub fn error(e: &SqsError) -> String {
    serde_json::json!({ "__type": e.code.json_type(), "message": e.message }).to_string()
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct QueueUrl<'a> {
    queue_url: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ListQueues<'a> {
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    queue_urls: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    next_token: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct QueueTags<'a> {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tags: &'a BTreeMap<String, String>,
}

/// SQS's model spells this list `queueUrls` (required, so present even when empty).
#[derive(Serialize)]
struct DeadLetterSources<'a> {
    #[serde(rename = "queueUrls")]
    queue_urls: &'a [String],
    #[serde(rename = "NextToken", skip_serializing_if = "Option::is_none")]
    next_token: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct GetQueueAttributes<'a> {
    attributes: &'a BTreeMap<String, String>,
}

struct SentJson<'a> {
    id: Option<&'a String>,
    sent: &'a Sent,
}

impl Serialize for SentJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(id) = self.id {
            m.serialize_entry("Id", id)?;
        }
        m.serialize_entry("MessageId", &self.sent.message_id)?;
        m.serialize_entry("MD5OfMessageBody", &self.sent.md5_of_body)?;
        if let Some(md5) = &self.sent.md5_of_attributes {
            m.serialize_entry("MD5OfMessageAttributes", md5)?;
        }
        if let Some(n) = &self.sent.sequence_number {
            m.serialize_entry("SequenceNumber", n)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SendBatch<'a> {
    successful: Vec<SentJson<'a>>,
    failed: Vec<FailureJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ReceiveJson<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    messages: Vec<ReceivedJson<'a>>,
}

struct ReceivedJson<'a>(&'a Received);

impl Serialize for ReceivedJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("MessageId", &r.message_id)?;
        m.serialize_entry("ReceiptHandle", &r.receipt_handle)?;
        m.serialize_entry("MD5OfBody", &r.md5_of_body)?;
        m.serialize_entry("Body", &r.body)?;
        if !r.attributes.is_empty() {
            m.serialize_entry("Attributes", &r.attributes)?;
        }
        if let Some(md5) = &r.md5_of_message_attributes {
            m.serialize_entry("MD5OfMessageAttributes", md5)?;
        }
        if !r.message_attributes.is_empty() {
            m.serialize_entry("MessageAttributes", &AttributesJson(&r.message_attributes))?;
        }
        m.end()
    }
}

struct AttributesJson<'a>(&'a MessageAttributes);

impl Serialize for AttributesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, v) in self.0 {
            let mut value = BTreeMap::new();
            value.insert("DataType", v.data_type.clone());
            match &v.value {
                AttributeData::String(s) => value.insert("StringValue", s.clone()),
                AttributeData::Binary(b) => value.insert("BinaryValue", STANDARD.encode(b)),
            };
            m.serialize_entry(name, &value)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Batch<'a> {
    successful: Vec<IdJson<'a>>,
    failed: Vec<FailureJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct IdJson<'a> {
    id: &'a str,
}

struct FailureJson<'a>(&'a BatchFailure);

impl Serialize for FailureJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("Id", &f.id)?;
        m.serialize_entry("SenderFault", &(f.error.code.fault() == "Sender"))?;
        m.serialize_entry("Code", f.error.code.name())?;
        m.serialize_entry("Message", &f.error.message)?;
        m.end()
    }
}
