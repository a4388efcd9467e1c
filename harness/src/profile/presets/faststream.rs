//! FastStream: on a Redis stream the payload travels in the entry's field `__data__`, as
//! FastStream's JSON envelope (`{"data": <payload as text>, "headers": {...}}`); on RabbitMQ,
//! NATS and Kafka the payload is the message body (a Kafka record's value), with its content
//! type: an AMQP property on RabbitMQ, a header on NATS and Kafka, as FastStream's own
//! publishers write them (its Kafka producer sends the headers `content-type` and
//! `correlation_id`, which its subscriber reads to decode the value as JSON).

use super::{blank, refuse, unsupported, PresetError, PresetInput};
use crate::profile::message::{Carrier, Format, MessageSpec, Node};

pub fn spec(input: PresetInput, carrier: Carrier, kind: &str) -> Result<MessageSpec, PresetError> {
    refuse(&input, "faststream", &[("body", true)])?;
    let payload = input.body.clone().unwrap_or_else(|| Node::text("{body}"));
    match carrier {
        Carrier::StreamEntry => {
            let envelope = Node::map([
                ("data", as_text(payload)),
                (
                    "headers",
                    Node::map([
                        ("content-type", Node::text("application/json")),
                        ("correlation_id", Node::text("{id}")),
                    ]),
                ),
            ]);
            let mut s = blank(Format::FastStream, Node::text("{body}"));
            s.fields = vec![("__data__".into(), Node::Json(Box::new(envelope)))];
            Ok(s)
        }
        Carrier::Amqp => {
            let mut s = blank(Format::FastStream, payload);
            s.content_type = Some("application/json".into());
            s.correlation_id = Some(Node::text("{id}"));
            Ok(s)
        }
        Carrier::Nats | Carrier::Record => {
            let mut s = blank(Format::FastStream, payload);
            s.headers = vec![
                ("content-type".into(), Node::text("application/json")),
                ("correlation_id".into(), Node::text("{id}")),
            ];
            Ok(s)
        }
        Carrier::Sqs => Err(unsupported(
            "faststream",
            kind,
            "rabbitmq, nats, redis-streams and kafka",
        )),
    }
}

/// The payload as text: a text node as it is (the default body is JSON text already), a
/// structure as its JSON.
fn as_text(payload: Node) -> Node {
    match payload {
        Node::Text(_) => payload,
        other => Node::Json(Box::new(other)),
    }
}
