//! `workload.message`: the message a live run publishes, shaped as the consumer under test
//! expects it. A profile type; the workload's message module renders it for each message.
//!
//! A message is a body and, per broker kind, what travels beside it: AMQP headers and
//! properties (RabbitMQ), NATS headers, the fields of a Redis stream entry, SQS message
//! attributes. Each part is a [`Node`]: text with placeholders (`{key}`, `{seq}`, `{email}`,
//! `{body}`, `{id}`, `{queue}`, `{now_ms}`, see [`crate::profile::template`]), or a structure
//! of them written as YAML that renders as JSON, or an encoding step over another node
//! (`$json`, `$base64`). A framework preset (`format: celery`, `dramatiq`, `faststream`) is
//! such a shape written once in code ([`crate::profile::presets`]).

use super::template::{Slot, Template};

/// One part of a message, before a message fills it.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Text with placeholders; a text that is exactly `{seq}` or `{now_ms}` renders as a number.
    Text(Template),
    /// A number, boolean or null, as written.
    Scalar(serde_json::Value),
    List(Vec<Node>),
    /// A mapping, its keys in the order written.
    Map(Vec<(String, Node)>),
    /// `{ $json: X }`: X rendered, then written as JSON text (a string).
    Json(Box<Node>),
    /// `{ $base64: X }`: X rendered (a string as is, anything else as JSON text), then base64
    /// (standard alphabet, padded).
    Base64(Box<Node>),
}

impl Node {
    /// A text node of `text`, which must parse (presets write only known placeholders).
    pub fn text(text: &str) -> Node {
        Node::Text(Node::template(text))
    }

    /// The template of `text`, which must parse (presets write only known placeholders).
    pub fn template(text: &str) -> Template {
        Template::parse(text, MESSAGE_SLOTS).expect("a preset's template parses")
    }

    /// A text node that is `text` as is, braces included (a name from the profile).
    pub fn literal(text: &str) -> Node {
        Node::text(&text.replace('{', "{{").replace('}', "}}"))
    }

    /// A mapping of `(key, node)` pairs.
    pub fn map<const N: usize>(pairs: [(&str, Node); N]) -> Node {
        Node::Map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// Whether the node places `slot` anywhere.
    pub fn uses(&self, slot: Slot) -> bool {
        match self {
            Node::Text(t) => t.uses(slot),
            Node::Scalar(_) => false,
            Node::List(v) => v.iter().any(|n| n.uses(slot)),
            Node::Map(m) => m.iter().any(|(_, n)| n.uses(slot)),
            Node::Json(n) | Node::Base64(n) => n.uses(slot),
        }
    }
}

/// The placeholders a message may use.
pub const MESSAGE_SLOTS: &[Slot] = &[
    Slot::Key,
    Slot::Seq,
    Slot::Email,
    Slot::Body,
    Slot::Id,
    Slot::Queue,
    Slot::NowMs,
];

/// How a broker kind carries a message besides its body: what a shape may fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// AMQP 0-9-1: headers, content type and encoding, correlation id.
    Amqp,
    /// SQS: message attributes (strings).
    Sqs,
    /// NATS: headers (strings).
    Nats,
    /// A Kafka record: headers (byte strings by name, written as text); the body is its value.
    Record,
    /// A Redis stream entry: field-value pairs; the body is one field's value.
    StreamEntry,
}

/// The framework a message imitates, as the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A shape the profile writes itself.
    Custom,
    /// Celery's task protocol 2 (on SQS inside kombu's envelope, base64 as kombu sends it).
    Celery,
    Dramatiq,
    FastStream,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Custom => "custom",
            Format::Celery => "celery",
            Format::Dramatiq => "dramatiq",
            Format::FastStream => "faststream",
        }
    }
}

/// A resolved `workload.message`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSpec {
    pub format: Format,
    pub body: Node,
    /// AMQP headers (any JSON value: tables, arrays, numbers, null) or NATS headers (text).
    pub headers: Vec<(String, Node)>,
    /// AMQP `content_type` / `content_encoding`.
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    /// AMQP `correlation_id`.
    pub correlation_id: Option<Node>,
    /// A Redis stream entry's fields; empty: one field `body` holding the body.
    pub fields: Vec<(String, Node)>,
    /// SQS message attributes (String).
    pub attributes: Vec<(String, Node)>,
    /// RabbitMQ: the framework declares the queue itself, as a classic queue with these
    /// arguments and no dead-letter exchange of ackbench's; the run declares it the same way
    /// unless the profile sets `broker.queue_type`, `dead_letter` or `arguments` itself.
    pub declares: Option<Vec<(String, Node)>>,
    /// Resources the consumer's framework declares on the broker beside the run's queue
    /// (`{queue}` filled with its name); the run removes each one it did not find before.
    pub leaves: Vec<Leftover>,
    /// Where the consumer's framework keeps a message it publishes again for a later try
    /// (`{queue}` filled with the queue's name): Dramatiq's delay queue `.DQ`.
    pub delay_queues: Vec<Template>,
    /// Where the consumer's framework puts a message it gave up on: Dramatiq's `.XQ`.
    pub dead_letter_queues: Vec<Template>,
}

/// Something a framework declares on a RabbitMQ server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    Queue(Template),
    Exchange(Template),
}

impl MessageSpec {
    /// Whether the message places its key somewhere a consumer can read it: `{key}`, or the
    /// default body (`{body}`), which holds it.
    pub fn places_key(&self) -> bool {
        let places = |n: &Node| n.uses(Slot::Key) || n.uses(Slot::Body);
        places(&self.body)
            || self.headers.iter().any(|(_, n)| places(n))
            || self.fields.iter().any(|(_, n)| places(n))
            || self.attributes.iter().any(|(_, n)| places(n))
            || self.correlation_id.as_ref().is_some_and(places)
    }

    /// Whether any part uses `slot`.
    pub fn uses(&self, slot: Slot) -> bool {
        self.body.uses(slot)
            || self.headers.iter().any(|(_, n)| n.uses(slot))
            || self.fields.iter().any(|(_, n)| n.uses(slot))
            || self.attributes.iter().any(|(_, n)| n.uses(slot))
            || self.correlation_id.as_ref().is_some_and(|n| n.uses(slot))
    }
}
