//! Celery's task protocol 2: headers name the task and its id, the body is the JSON triple
//! `[args, kwargs, embed]`. On RabbitMQ it travels as an AMQP message (headers, correlation id,
//! content type and encoding); on SQS kombu wraps it: the body is base64 of kombu's JSON
//! envelope, whose own `body` is base64 of the triple (kombu's defaults).

use super::{args, blank, kwargs, refuse, task, unsupported, PresetError, PresetInput};
use crate::profile::message::{Carrier, Format, Leftover, MessageSpec, Node};

pub fn spec(input: PresetInput, carrier: Carrier, kind: &str) -> Result<MessageSpec, PresetError> {
    refuse(
        &input,
        "celery",
        &[("task", true), ("args", true), ("kwargs", true)],
    )?;
    let name = task(&input, "celery", "tasks.send_email")?;
    let triple = Node::List(vec![
        args(&input),
        kwargs(&input),
        Node::map([
            ("callbacks", null()),
            ("errbacks", null()),
            ("chain", null()),
            ("chord", null()),
        ]),
    ]);
    let headers = headers(&name, &input);
    match carrier {
        Carrier::Amqp => {
            let mut s = blank(Format::Celery, triple);
            s.headers = headers;
            s.content_type = Some("application/json".into());
            s.content_encoding = Some("utf-8".into());
            s.correlation_id = Some(Node::text("{id}"));
            // A durable classic queue without arguments, as `task_default_queue` is declared.
            s.declares = Some(Vec::new());
            // The worker declares an exchange named after its queue; remote control adds the
            // pidbox exchanges, events `celeryev`.
            s.leaves = [
                "{queue}",
                "celery.pidbox",
                "reply.celery.pidbox",
                "celeryev",
            ]
            .iter()
            .map(|n| Leftover::Exchange(Node::template(n)))
            .collect();
            Ok(s)
        }
        Carrier::Sqs => {
            let envelope = Node::map([
                ("body", Node::Base64(Box::new(triple))),
                ("content-encoding", Node::text("utf-8")),
                ("content-type", Node::text("application/json")),
                ("headers", Node::Map(headers)),
                (
                    "properties",
                    Node::map([
                        ("correlation_id", Node::text("{id}")),
                        ("reply_to", Node::text("")),
                        ("delivery_mode", number(2)),
                        (
                            "delivery_info",
                            Node::map([
                                ("exchange", Node::text("")),
                                ("routing_key", Node::text("{queue}")),
                            ]),
                        ),
                        ("priority", number(0)),
                        ("body_encoding", Node::text("base64")),
                        ("delivery_tag", Node::text("{id}")),
                    ]),
                ),
            ]);
            Ok(blank(Format::Celery, Node::Base64(Box::new(envelope))))
        }
        Carrier::Nats | Carrier::StreamEntry | Carrier::Record => {
            Err(unsupported("celery", kind, "rabbitmq and sqs"))
        }
    }
}

fn null() -> Node {
    Node::Scalar(serde_json::Value::Null)
}

fn number(n: u64) -> Node {
    Node::Scalar(n.into())
}

/// The protocol-2 headers of task `name` with id `{id}`.
fn headers(name: &str, input: &PresetInput) -> Vec<(String, Node)> {
    vec![
        ("lang".into(), Node::text("py")),
        ("task".into(), Node::literal(name)),
        ("id".into(), Node::text("{id}")),
        ("shadow".into(), null()),
        ("eta".into(), null()),
        ("expires".into(), null()),
        ("group".into(), null()),
        ("group_index".into(), null()),
        ("retries".into(), number(0)),
        ("timelimit".into(), Node::List(vec![null(), null()])),
        ("root_id".into(), Node::text("{id}")),
        ("parent_id".into(), null()),
        ("argsrepr".into(), Node::Json(Box::new(args(input)))),
        ("kwargsrepr".into(), Node::Json(Box::new(kwargs(input)))),
        ("origin".into(), Node::text("ackbench")),
        ("ignore_result".into(), Node::Scalar(false.into())),
        ("replaced_task_nesting".into(), number(0)),
        ("stamped_headers".into(), null()),
        ("stamps".into(), Node::Map(Vec::new())),
    ]
}
