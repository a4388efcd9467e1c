//! `workload.message`: a framework preset or a shape of the profile's own, read into a
//! [`MessageSpec`] for the broker kind's [`Carrier`]. Every part is checked here: its
//! placeholders, its encoding steps, that the kind carries it, and that the key is placed
//! somewhere a consumer can read it.

use crate::profile::message::{Carrier, Format, MessageSpec, Node, MESSAGE_SLOTS};
use crate::profile::path::FieldPath;
use crate::profile::presets::{self, PresetInput};
use crate::profile::problem::Problem;
use crate::profile::raw::{FormatName, RawMessage};
use crate::profile::scenario::BrokerKind;
use crate::profile::template::Slot;

use super::ingress::template;
use super::node::{node, scalar_text};

/// The message of `raw` on a broker of `kind`; `poison` is whether the workload has poison
/// messages (`poison_path` names that key).
pub fn resolve(
    raw: RawMessage,
    kind: &BrokerKind,
    poison: bool,
    path: &FieldPath,
    poison_path: &FieldPath,
) -> Result<MessageSpec, Problem> {
    let format = match raw.format {
        None | Some(FormatName::Custom) => Format::Custom,
        Some(FormatName::Celery) => Format::Celery,
        Some(FormatName::Dramatiq) => Format::Dramatiq,
        Some(FormatName::FastStream) => Format::FastStream,
    };
    let spec = if format == Format::Custom {
        custom(raw, kind, path)?
    } else {
        preset(raw, format, kind, path)?
    };
    if !spec.places_key() {
        return Err(Problem::new(
            path.clone(),
            "the message places its key nowhere: put {key} (or {body}, the order's JSON, which \
             holds it) in body, headers, fields or attributes, where the consumer reads the key \
             that effects are counted by",
        ));
    }
    if poison && !spec.uses(Slot::Body) {
        return Err(Problem::at_key(
            poison_path.clone(),
            "a poison message is the order's old-schema JSON, placed by {body}: this message \
             does not place {body}, so no poison message could be told apart; place {body} or \
             leave workload.poison out",
        ));
    }
    Ok(spec)
}

/// A framework preset: only the keys it reads.
fn preset(
    raw: RawMessage,
    format: Format,
    kind: &BrokerKind,
    path: &FieldPath,
) -> Result<MessageSpec, Problem> {
    let own = parts_set(&raw);
    if let Some((key, _)) = own.iter().find(|(_, set)| *set) {
        return Err(Problem::at_key(
            path.key(key),
            format!(
                "format {} writes the whole message itself; to write {key} yourself, use \
                 format: custom",
                format.name()
            ),
        ));
    }
    let input = PresetInput {
        task: raw.task.map(|t| t.0),
        args: match raw.args {
            Some(v) => Some(list(v, &path.key("args"))?),
            None => None,
        },
        kwargs: match raw.kwargs {
            Some(v) => Some(mapping(v, &path.key("kwargs"))?),
            None => None,
        },
        body: match raw.body {
            Some(v) => Some(node(v, &path.key("body"))?),
            None => None,
        },
    };
    presets::expand(format, input, kind.carrier(), kind.name()).map_err(|e| {
        let at = path.key(e.field);
        if e.field == "format" {
            Problem::new(at, e.message)
        } else {
            Problem::at_key(at, e.message)
        }
    })
}

/// A shape of the profile's own; each part only on the kinds that carry it.
fn custom(raw: RawMessage, kind: &BrokerKind, path: &FieldPath) -> Result<MessageSpec, Problem> {
    let carrier = kind.carrier();
    for (key, set) in [
        ("task", raw.task.is_some()),
        ("args", raw.args.is_some()),
        ("kwargs", raw.kwargs.is_some()),
    ] {
        if set {
            return Err(Problem::at_key(
                path.key(key),
                "belongs to a task framework's format (celery, dramatiq): a custom message \
                 writes its body itself",
            ));
        }
    }
    for (key, set) in parts_set(&raw) {
        let on = PARTS
            .iter()
            .find(|(keys, _)| keys.contains(&key))
            .map(|p| p.1);
        if set && !on.is_some_and(|on| on.contains(&carrier)) {
            return Err(Problem::at_key(
                path.key(key),
                format!(
                    "broker.kind {} carries no {key}: {}",
                    kind.name(),
                    carried()
                ),
            ));
        }
    }
    let body = match raw.body {
        Some(v) => node(v, &path.key("body"))?,
        None => Node::text("{body}"),
    };
    let text_only = carrier != Carrier::Amqp;
    let headers = pairs(raw.headers, &path.key("headers"), text_only)?;
    let fields = pairs(raw.fields, &path.key("fields"), true)?;
    let attributes = pairs(raw.attributes, &path.key("attributes"), true)?;
    let correlation_id = match raw.correlation_id {
        Some(t) => Some(Node::Text(template(
            &t.0,
            MESSAGE_SLOTS,
            &path.key("correlation_id"),
        )?)),
        None => None,
    };
    Ok(MessageSpec {
        format: Format::Custom,
        body,
        headers,
        content_type: raw.content_type.map(|t| t.0),
        content_encoding: raw.content_encoding.map(|t| t.0),
        correlation_id,
        fields,
        attributes,
        declares: None,
        leaves: Vec::new(),
        delay_queues: Vec::new(),
        dead_letter_queues: Vec::new(),
    })
}

/// Each part of a message besides its body and its task (the keys of [`PARTS`]), and whether the
/// profile writes it.
fn parts_set(raw: &RawMessage) -> [(&'static str, bool); 6] {
    [
        ("headers", raw.headers.is_some()),
        ("content_type", raw.content_type.is_some()),
        ("content_encoding", raw.content_encoding.is_some()),
        ("correlation_id", raw.correlation_id.is_some()),
        ("fields", raw.fields.is_some()),
        ("attributes", raw.attributes.is_some()),
    ]
}

/// The parts of a custom message besides its body, and the carriers that take them.
const PARTS: &[(&[&str], &[Carrier])] = &[
    (
        &["headers"],
        &[Carrier::Amqp, Carrier::Nats, Carrier::Record],
    ),
    (
        &["content_type", "content_encoding", "correlation_id"],
        &[Carrier::Amqp],
    ),
    (&["fields"], &[Carrier::StreamEntry]),
    (&["attributes"], &[Carrier::Sqs]),
];

/// Which kinds carry each part, from their descriptors: "headers go with rabbitmq, nats, ...;
/// fields with redis-streams; ...".
fn carried() -> String {
    let parts: Vec<String> = PARTS
        .iter()
        .enumerate()
        .map(|(i, (keys, on))| {
            let keys = crate::profile::kinds::sentence(keys);
            let kinds = crate::profile::kinds::names_where(|k| on.contains(&k.carrier));
            let go = if i == 0 { "go " } else { "" };
            format!("{keys} {go}with {kinds}")
        })
        .collect();
    parts.join("; ")
}

/// A mapping of names to nodes; `text_only`: each value must render as text (a string or a
/// scalar, or an encoding step, not a list or mapping).
fn pairs(
    raw: Option<yaml_serde::Mapping>,
    path: &FieldPath,
    text_only: bool,
) -> Result<Vec<(String, Node)>, Problem> {
    let Some(map) = raw else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let name = scalar_text(&k)
            .ok_or_else(|| Problem::at_key(path.clone(), "names must be text, e.g. x-order-key"))?;
        let at = path.key(&name);
        let n = node(v, &at)?;
        if text_only && matches!(n, Node::List(_) | Node::Map(_)) {
            return Err(Problem::new(
                at,
                "this kind carries text here: write a string, or wrap a structure in \
                 { $json: ... }",
            ));
        }
        out.push((name, n));
    }
    Ok(out)
}

fn list(v: yaml_serde::Value, path: &FieldPath) -> Result<Node, Problem> {
    match node(v, path)? {
        n @ Node::List(_) => Ok(n),
        _ => Err(Problem::new(
            path.clone(),
            "the task's positional arguments: a list, e.g. [\"{key}\", \"{email}\"]",
        )),
    }
}

fn mapping(v: yaml_serde::Value, path: &FieldPath) -> Result<Node, Problem> {
    match node(v, path)? {
        n @ Node::Map(_) => Ok(n),
        _ => Err(Problem::new(
            path.clone(),
            "the task's keyword arguments: a mapping, e.g. { order_id: \"{key}\" }",
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::profile::testutil::error;

    #[test]
    fn a_part_the_kind_does_not_carry_names_the_kinds_that_do() {
        // Each part's kinds come from the descriptors' carriers: headers with AMQP (rabbitmq),
        // NATS (nats) and Kafka records (kafka, kafka-share); the AMQP properties with rabbitmq;
        // stream fields with redis-streams; message attributes with sqs.
        let e = error(
            "name: t\nrun: { duration: 10m }\nbroker: { kind: sqs }\nworkload:\n  \
             arrival: { every: 50s }\n  message: { headers: { k: v } }\n\
             consumer: { target: ack-after-work }\n",
        );
        assert!(
            e.ends_with(
                "broker.kind sqs carries no headers: headers go with rabbitmq, nats, kafka and \
                 kafka-share; content_type, content_encoding and correlation_id with rabbitmq; \
                 fields with redis-streams; attributes with sqs"
            ),
            "{e}"
        );
    }
}
