//! Renders `workload.message` ([`MessageSpec`]) for one message: the body and what travels
//! beside it, as each broker kind's publish reads them ([`Outgoing`]).

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::profile::message::{MessageSpec, Node};
use crate::profile::template::{Fill, Slot};

/// One message as a broker kind publishes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outgoing {
    pub body: String,
    /// The plan's key of the message (a Kafka record's key); empty when not set.
    pub key: String,
    /// AMQP headers (any JSON value), NATS and Kafka record headers (text).
    pub headers: Vec<(String, Value)>,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub correlation_id: Option<String>,
    /// A Redis stream entry's fields; empty: the field `body` holds the body.
    pub fields: Vec<(String, String)>,
    /// SQS message attributes (String).
    pub attributes: Vec<(String, String)>,
}

impl Outgoing {
    /// A message that is its body and nothing else (the order's JSON, as the built-in targets
    /// read it).
    pub fn plain(body: String) -> Outgoing {
        Outgoing {
            body,
            ..Outgoing::default()
        }
    }

    /// The fields of a Redis stream entry: the profile's, or `body` holding the body.
    pub fn entry_fields(&self) -> Vec<(&str, &str)> {
        if self.fields.is_empty() {
            vec![("body", self.body.as_str())]
        } else {
            self.fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        }
    }
}

/// The `{id}` of message `seq` in a run of `seed`: a version-4 UUID whose random bits are the
/// SHA-256 of the two, so every delivery and every run of the seed carries the same id.
pub fn message_id(seed: u64, seq: u32) -> String {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(seq.to_le_bytes());
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// `spec` filled with one message's values.
pub fn render(spec: &MessageSpec, fill: &Fill<'_>) -> Outgoing {
    let texts = |pairs: &[(String, Node)]| {
        pairs
            .iter()
            .map(|(k, n)| (k.clone(), text_of(value(n, fill))))
            .collect()
    };
    Outgoing {
        body: text_of(value(&spec.body, fill)),
        headers: spec
            .headers
            .iter()
            .map(|(k, n)| (k.clone(), value(n, fill)))
            .collect(),
        content_type: spec.content_type.clone(),
        content_encoding: spec.content_encoding.clone(),
        correlation_id: spec
            .correlation_id
            .as_ref()
            .map(|n| text_of(value(n, fill))),
        fields: texts(&spec.fields),
        attributes: texts(&spec.attributes),
        key: fill.key.to_string(),
    }
}

/// A node as a JSON value: text, or a number where the text is exactly `{seq}` or `{now_ms}`.
pub fn value(node: &Node, fill: &Fill<'_>) -> Value {
    match node {
        Node::Text(t) => match t.whole() {
            Some(Slot::Seq) => Value::from(fill.seq),
            Some(Slot::NowMs) => Value::from(fill.now_ms),
            _ => Value::String(t.render(fill)),
        },
        Node::Scalar(v) => v.clone(),
        Node::List(items) => Value::Array(items.iter().map(|n| value(n, fill)).collect()),
        Node::Map(pairs) => Value::Object(
            pairs
                .iter()
                .map(|(k, n)| (k.clone(), value(n, fill)))
                .collect(),
        ),
        Node::Json(inner) => Value::String(value(inner, fill).to_string()),
        Node::Base64(inner) => Value::String(
            base64::engine::general_purpose::STANDARD.encode(text_of(value(inner, fill))),
        ),
    }
}

/// A value as text: a string as it is, anything else as JSON.
pub fn text_of(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}
