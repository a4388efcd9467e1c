//! Dramatiq on RabbitMQ: the body is Dramatiq's JSON message (queue, actor, args, kwargs, id,
//! timestamp). Dramatiq declares its queue with dead-letter arguments naming its own `.XQ`
//! queue, and a delay queue `.DQ` beside it: the run declares the queue with the same
//! arguments (see `broker.arguments`) and removes the two others it did not find before.

use super::{args, blank, kwargs, refuse, task, unsupported, PresetError, PresetInput};
use crate::profile::message::{Carrier, Format, Leftover, MessageSpec, Node};

pub fn spec(input: PresetInput, carrier: Carrier, kind: &str) -> Result<MessageSpec, PresetError> {
    refuse(
        &input,
        "dramatiq",
        &[("task", true), ("args", true), ("kwargs", true)],
    )?;
    let actor = task(&input, "dramatiq", "send_email")?;
    if carrier != Carrier::Amqp {
        return Err(unsupported(
            "dramatiq",
            kind,
            crate::profile::kinds::rabbitmq::KIND.name,
        ));
    }
    let mut s = blank(
        Format::Dramatiq,
        Node::map([
            ("queue_name", Node::text("{queue}")),
            ("actor_name", Node::literal(&actor)),
            ("args", args(&input)),
            ("kwargs", kwargs(&input)),
            ("options", Node::Map(Vec::new())),
            ("message_id", Node::text("{id}")),
            ("message_timestamp", Node::text("{now_ms}")),
        ]),
    );
    s.content_type = Some("application/json".into());
    s.declares = Some(
        ARGUMENTS
            .iter()
            .map(|(k, v)| (k.to_string(), Node::text(v)))
            .collect(),
    );
    s.leaves = vec![
        Leftover::Queue(Node::template("{queue}.DQ")),
        Leftover::Queue(Node::template("{queue}.XQ")),
    ];
    // Its Retries middleware publishes a failed message to `.DQ` with its ETA; the worker
    // takes it from there, holds it until then and publishes it to the queue again. A message
    // out of retries (or rejected) is dead-lettered to `.XQ` by the queue's arguments.
    s.delay_queues = vec![Node::template("{queue}.DQ")];
    s.dead_letter_queues = vec![Node::template("{queue}.XQ")];
    Ok(s)
}

/// The queue arguments Dramatiq declares its queue `{queue}` with.
const ARGUMENTS: [(&str, &str); 2] = [
    ("x-dead-letter-exchange", ""),
    ("x-dead-letter-routing-key", "{queue}.XQ"),
];
