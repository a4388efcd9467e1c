//! `workload.message`: a framework preset or a shape of the profile's own, read into a
//! [`MessageSpec`] for the broker kind's [`Carrier`]. Every part is checked here: its
//! placeholders, its encoding steps, that the kind carries it, and that the key is placed
//! somewhere a consumer can read it.

use crate::profile::message::{Carrier, Format, MessageSpec, Node, MESSAGE_SLOTS};
use crate::profile::path::FieldPath;
use crate::profile::presets::{self, PresetInput};
use crate::profile::problem::Problem;
use crate::profile::raw::{FormatName, RawMessage};
use crate::profile::scenario::{BrokerKind, BrokerSpec, RabbitQueueType};
use crate::profile::template::Slot;

use super::ingress::template;

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
    let own = [
        ("headers", raw.headers.is_some()),
        ("content_type", raw.content_type.is_some()),
        ("content_encoding", raw.content_encoding.is_some()),
        ("correlation_id", raw.correlation_id.is_some()),
        ("fields", raw.fields.is_some()),
        ("attributes", raw.attributes.is_some()),
    ];
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
    let carries = |key: &str, set: bool, on: &[Carrier]| -> Result<(), Problem> {
        if set && !on.contains(&carrier) {
            return Err(Problem::at_key(
                path.key(key),
                format!("broker.kind {} carries no {key}: {}", kind.name(), CARRIED),
            ));
        }
        Ok(())
    };
    carries(
        "headers",
        raw.headers.is_some(),
        &[Carrier::Amqp, Carrier::Nats, Carrier::Record],
    )?;
    carries("content_type", raw.content_type.is_some(), &[Carrier::Amqp])?;
    carries(
        "content_encoding",
        raw.content_encoding.is_some(),
        &[Carrier::Amqp],
    )?;
    carries(
        "correlation_id",
        raw.correlation_id.is_some(),
        &[Carrier::Amqp],
    )?;
    carries("fields", raw.fields.is_some(), &[Carrier::StreamEntry])?;
    carries("attributes", raw.attributes.is_some(), &[Carrier::Sqs])?;
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

const CARRIED: &str = "headers go with rabbitmq, nats, kafka and kafka-share; content_type, content_encoding and \
                       correlation_id with rabbitmq; fields with redis-streams; attributes with sqs";

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

/// A YAML value as a node: strings are templates, `{ $json: X }` and `{ $base64: X }` encoding
/// steps, other mappings and lists structure.
pub fn node(v: yaml_serde::Value, path: &FieldPath) -> Result<Node, Problem> {
    use yaml_serde::Value;
    Ok(match v {
        Value::String(s) => Node::Text(template(&s, MESSAGE_SLOTS, path)?),
        Value::Null => Node::Scalar(serde_json::Value::Null),
        Value::Bool(b) => Node::Scalar(b.into()),
        Value::Number(n) => Node::Scalar(
            serde_json::to_value(&n).map_err(|e| Problem::new(path.clone(), e.to_string()))?,
        ),
        Value::Sequence(items) => Node::List(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| node(v, &path.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        Value::Mapping(map) => {
            let step = map.len() == 1
                && map
                    .keys()
                    .next()
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.starts_with('$'));
            if step {
                let (k, inner) = map.into_iter().next().expect("one entry");
                let name = k.as_str().unwrap_or_default().to_string();
                let at = path.key(&name);
                let inner = Box::new(node(inner, &at)?);
                return match name.as_str() {
                    "$json" => Ok(Node::Json(inner)),
                    "$base64" => Ok(Node::Base64(inner)),
                    _ => Err(Problem::at_key(
                        at,
                        "unknown encoding step: the steps are $json (as JSON text) and $base64",
                    )),
                };
            }
            let mut out = Vec::new();
            for (k, v) in map {
                let name = scalar_text(&k)
                    .ok_or_else(|| Problem::at_key(path.clone(), "keys must be text"))?;
                let n = node(v, &path.key(&name))?;
                out.push((name, n));
            }
            Node::Map(out)
        }
        Value::Tagged(_) => {
            return Err(Problem::new(
                path.clone(),
                "a YAML tag is not a message part: write text, a number, a list or a mapping",
            ))
        }
    })
}

/// A mapping key as text (a string, number or boolean).
fn scalar_text(k: &yaml_serde::Value) -> Option<String> {
    match k {
        yaml_serde::Value::String(s) => Some(s.clone()),
        yaml_serde::Value::Number(n) => Some(n.to_string()),
        yaml_serde::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A framework that declares its RabbitMQ queue itself: the run declares it the same way (a
/// classic queue, the framework's arguments, no dead-letter exchange of the run's, so no
/// delivery limit).
pub fn declare_as_framework(spec: &MessageSpec, broker: &mut BrokerSpec) {
    let (Some(arguments), BrokerKind::RabbitMq(r)) = (&spec.declares, &mut broker.kind) else {
        return;
    };
    r.queue_type = RabbitQueueType::Classic;
    r.dead_letter = false;
    r.arguments = arguments.clone();
    broker.max_deliveries = 0;
}
