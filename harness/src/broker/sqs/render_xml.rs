//! Answers in the query protocol: SQS's XML documents.

use std::fmt::Write;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::error::SqsError;
use super::message_attributes::{AttributeData, MessageAttributes};
use super::response::{BatchFailure, Response};

const XMLNS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// Escapes text for an XML element (carriage returns too, so they survive parsing).
fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::escape(s)
}

/// Appends `<tag>text</tag>`.
fn el(out: &mut String, tag: &str, text: &str) {
    let _ = write!(out, "<{tag}>{}</{tag}>", esc(text));
}

/// The document answering `action` with `r`.
pub fn response(action: &str, r: &Response, request_id: &str) -> String {
    let mut x = String::new();
    match r {
        Response::QueueUrl(url) => el(&mut x, "QueueUrl", url),
        Response::ListQueues {
            queue_urls,
            next_token,
        }
        | Response::ListDeadLetterSourceQueues {
            queue_urls,
            next_token,
        } => {
            for u in queue_urls {
                el(&mut x, "QueueUrl", u);
            }
            if let Some(t) = next_token {
                el(&mut x, "NextToken", t);
            }
        }
        Response::GetQueueAttributes(attrs) => {
            for (k, v) in attrs {
                x.push_str("<Attribute>");
                el(&mut x, "Name", k);
                el(&mut x, "Value", v);
                x.push_str("</Attribute>");
            }
        }
        Response::SendMessage(s) => {
            el(&mut x, "MessageId", &s.message_id);
            el(&mut x, "MD5OfMessageBody", &s.md5_of_body);
            if let Some(m) = &s.md5_of_attributes {
                el(&mut x, "MD5OfMessageAttributes", m);
            }
            if let Some(n) = &s.sequence_number {
                el(&mut x, "SequenceNumber", n);
            }
        }
        Response::SendMessageBatch { successful, failed } => {
            for (id, s) in successful {
                x.push_str("<SendMessageBatchResultEntry>");
                el(&mut x, "Id", id);
                el(&mut x, "MessageId", &s.message_id);
                el(&mut x, "MD5OfMessageBody", &s.md5_of_body);
                if let Some(m) = &s.md5_of_attributes {
                    el(&mut x, "MD5OfMessageAttributes", m);
                }
                if let Some(n) = &s.sequence_number {
                    el(&mut x, "SequenceNumber", n);
                }
                x.push_str("</SendMessageBatchResultEntry>");
            }
            failures(&mut x, failed);
        }
        Response::ReceiveMessage(messages) => {
            for m in messages {
                x.push_str("<Message>");
                el(&mut x, "MessageId", &m.message_id);
                el(&mut x, "ReceiptHandle", &m.receipt_handle);
                el(&mut x, "MD5OfBody", &m.md5_of_body);
                el(&mut x, "Body", &m.body);
                for (k, v) in &m.attributes {
                    x.push_str("<Attribute>");
                    el(&mut x, "Name", k);
                    el(&mut x, "Value", v);
                    x.push_str("</Attribute>");
                }
                if let Some(md5) = &m.md5_of_message_attributes {
                    el(&mut x, "MD5OfMessageAttributes", md5);
                }
                message_attributes(&mut x, &m.message_attributes);
                x.push_str("</Message>");
            }
        }
        Response::Batch { successful, failed } => {
            for id in successful {
                let _ = write!(x, "<{action}ResultEntry>");
                el(&mut x, "Id", id);
                let _ = write!(x, "</{action}ResultEntry>");
            }
            failures(&mut x, failed);
        }
        Response::ListQueueTags(tags) => {
            for (k, v) in tags {
                x.push_str("<Tag>");
                el(&mut x, "Key", k);
                el(&mut x, "Value", v);
                x.push_str("</Tag>");
            }
        }
        Response::Empty => {}
    }
    let result = if matches!(r, Response::Empty) {
        String::new()
    } else {
        format!("<{action}Result>{x}</{action}Result>")
    };
    format!(
        "<?xml version=\"1.0\"?><{action}Response xmlns=\"{XMLNS}\">{result}<ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata></{action}Response>",
        esc(request_id)
    )
}

/// The `ErrorResponse` document.
pub fn error(e: &SqsError, request_id: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>{}</Type><Code>{}</Code><Message>{}</Message><Detail/></Error><RequestId>{}</RequestId></ErrorResponse>",
        e.code.fault(),
        esc(e.code.query_code()),
        esc(&e.message),
        esc(request_id)
    )
}

fn message_attributes(x: &mut String, a: &MessageAttributes) {
    for (name, v) in a {
        x.push_str("<MessageAttribute>");
        el(x, "Name", name);
        x.push_str("<Value>");
        match &v.value {
            AttributeData::String(s) => el(x, "StringValue", s),
            AttributeData::Binary(b) => el(x, "BinaryValue", &STANDARD.encode(b)),
        }
        el(x, "DataType", &v.data_type);
        x.push_str("</Value></MessageAttribute>");
    }
}

fn failures(x: &mut String, failed: &[BatchFailure]) {
    for f in failed {
        x.push_str("<BatchResultErrorEntry>");
        el(x, "Id", &f.id);
        el(
            x,
            "SenderFault",
            if f.error.code.fault() == "Sender" {
                "true"
            } else {
                "false"
            },
        );
        el(x, "Code", f.error.code.name());
        el(x, "Message", &f.error.message);
        x.push_str("</BatchResultErrorEntry>");
    }
}
