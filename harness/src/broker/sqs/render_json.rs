//! Answers in the AWS JSON 1.0 protocol.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};

use super::error::SqsError;
use super::message_attributes::{AttributeData, MessageAttributes};
use super::response::{BatchFailure, Received, Response, Sent};

/// The body of a successful answer.
pub fn response(r: &Response) -> Value {
    match r {
        Response::QueueUrl(url) => json!({ "QueueUrl": url }),
        Response::ListQueues {
            queue_urls,
            next_token,
        } => {
            let mut o = Map::new();
            if !queue_urls.is_empty() {
                o.insert("QueueUrls".into(), json!(queue_urls));
            }
            if let Some(t) = next_token {
                o.insert("NextToken".into(), json!(t));
            }
            Value::Object(o)
        }
        Response::GetQueueAttributes(attrs) => json!({ "Attributes": attrs }),
        Response::SendMessage(sent) => sent_json(sent, None),
        Response::SendMessageBatch { successful, failed } => json!({
            "Successful": successful.iter().map(|(id, s)| sent_json(s, Some(id))).collect::<Vec<_>>(),
            "Failed": failures(failed),
        }),
        Response::ReceiveMessage(messages) => {
            if messages.is_empty() {
                json!({})
            } else {
                json!({ "Messages": messages.iter().map(received).collect::<Vec<_>>() })
            }
        }
        Response::Batch { successful, failed } => json!({
            "Successful": successful.iter().map(|id| json!({ "Id": id })).collect::<Vec<_>>(),
            "Failed": failures(failed),
        }),
        Response::Empty => json!({}),
    }
}

/// The body of an error answer.
pub fn error(e: &SqsError) -> Value {
    json!({ "__type": e.code.json_type(), "message": e.message })
}

fn sent_json(s: &Sent, id: Option<&String>) -> Value {
    let mut o = Map::new();
    if let Some(id) = id {
        o.insert("Id".into(), json!(id));
    }
    o.insert("MessageId".into(), json!(s.message_id));
    o.insert("MD5OfMessageBody".into(), json!(s.md5_of_body));
    if let Some(m) = &s.md5_of_attributes {
        o.insert("MD5OfMessageAttributes".into(), json!(m));
    }
    Value::Object(o)
}

fn received(m: &Received) -> Value {
    let mut o = Map::new();
    o.insert("MessageId".into(), json!(m.message_id));
    o.insert("ReceiptHandle".into(), json!(m.receipt_handle));
    o.insert("MD5OfBody".into(), json!(m.md5_of_body));
    o.insert("Body".into(), json!(m.body));
    if !m.attributes.is_empty() {
        o.insert("Attributes".into(), json!(m.attributes));
    }
    if let Some(md5) = &m.md5_of_message_attributes {
        o.insert("MD5OfMessageAttributes".into(), json!(md5));
    }
    if !m.message_attributes.is_empty() {
        o.insert(
            "MessageAttributes".into(),
            attributes(&m.message_attributes),
        );
    }
    Value::Object(o)
}

fn attributes(a: &MessageAttributes) -> Value {
    let mut o = Map::new();
    for (name, v) in a {
        let value = match &v.value {
            AttributeData::String(s) => json!({ "DataType": v.data_type, "StringValue": s }),
            AttributeData::Binary(b) => {
                json!({ "DataType": v.data_type, "BinaryValue": STANDARD.encode(b) })
            }
        };
        o.insert(name.clone(), value);
    }
    Value::Object(o)
}

fn failures(failed: &[BatchFailure]) -> Vec<Value> {
    failed
        .iter()
        .map(|f| {
            json!({
                "Id": f.id,
                "SenderFault": f.error.code.fault() == "Sender",
                "Code": f.error.code.name(),
                "Message": f.error.message,
            })
        })
        .collect()
}
