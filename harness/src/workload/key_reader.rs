//! Reads a message's key back out of a body a consumer sent to the broker itself: a framework's
//! retry (Dramatiq's delay queue, Celery's `retry`) publishes the task again, with the same
//! arguments, so the key sits where the run's own message put it. [`KeyReader`] is that place,
//! found once from `workload.message` (or the plain order body), and read from any body.
//!
//! The path is the one from the body's root to the first placeholder naming the key (`{key}`,
//! or `{body}`, the order's JSON, whose `key` field is the key): through mappings and lists (the
//! body is JSON there), `$json` (a string holding JSON) and `$base64` (a string holding base64 of
//! what follows). A body that does not follow the path reads as no key: its message is not
//! one of the run's.

use base64::Engine as _;
use serde_json::Value;

use crate::profile::message::{MessageSpec, Node};
use crate::profile::template::{Slot, Template};

/// Where a body holds its message's key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyReader {
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// The value here is a JSON object: its field.
    Field(String),
    /// The value here is a JSON array: its item.
    Index(usize),
    /// The value here is a string holding JSON.
    Json,
    /// The value here is a string holding base64 of the rest.
    Base64,
    /// The value here is text filled from this template: the key within it.
    Text(Template),
    /// The value here is the order's JSON (`{body}`): its `key` field.
    Order,
}

/// What a step reads: text not yet parsed, or a JSON value.
enum Here {
    Text(String),
    Value(Value),
}

impl Here {
    fn value(self) -> Option<Value> {
        match self {
            Here::Value(v) => Some(v),
            Here::Text(t) => serde_json::from_str(&t).ok(),
        }
    }

    fn text(self) -> Option<String> {
        match self {
            Here::Text(t) => Some(t),
            Here::Value(Value::String(s)) => Some(s),
            Here::Value(_) => None,
        }
    }
}

impl KeyReader {
    /// The reader of bodies shaped as `spec`, or of the plain order body without one. `None`
    /// when the body does not hold the key (a shape placing it only in headers or attributes).
    pub fn of(spec: Option<&MessageSpec>) -> Option<KeyReader> {
        let Some(spec) = spec else {
            return Some(KeyReader {
                steps: vec![Step::Order],
            });
        };
        // A stream entry's fields carry the message when there are any (FastStream's
        // `__data__`): the first that places the key is read.
        let places = |n: &&Node| n.uses(Slot::Key) || n.uses(Slot::Body);
        let node = (spec.fields.iter().map(|(_, n)| n))
            .find(places)
            .unwrap_or(&spec.body);
        let mut steps = Vec::new();
        path(node, &mut steps).then_some(KeyReader { steps })
    }

    /// The key `body` holds, if it follows the path; for a path to the order's JSON, else the
    /// first order's JSON found in the body (a framework's other envelope for the same message:
    /// FastStream 0.7 writes a binary one on Redis, its headers then the payload).
    pub fn read(&self, body: &[u8]) -> Option<String> {
        self.along(body).or_else(|| match self.steps.last() {
            Some(Step::Order) => order_anywhere(body),
            _ => None,
        })
    }

    fn along(&self, body: &[u8]) -> Option<String> {
        let mut here = Here::Text(String::from_utf8(body.to_vec()).ok()?);
        for step in &self.steps {
            here = match step {
                Step::Field(k) => match here.value()? {
                    Value::Object(mut m) => Here::Value(m.remove(k)?),
                    _ => return None,
                },
                Step::Index(i) => match here.value()? {
                    Value::Array(mut v) if *i < v.len() => Here::Value(v.swap_remove(*i)),
                    _ => return None,
                },
                Step::Json => Here::Text(here.text()?),
                Step::Base64 => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(here.text()?)
                        .ok()?;
                    Here::Text(String::from_utf8(bytes).ok()?)
                }
                Step::Text(t) => return t.read_key(&here.text()?).map(str::to_string),
                Step::Order => {
                    // The order's JSON, or a string holding it (FastStream's `data`).
                    let order = match here {
                        Here::Value(v @ Value::Object(_)) => v,
                        other => serde_json::from_str(&other.text()?).ok()?,
                    };
                    return match order.get("key")? {
                        Value::String(k) if !k.is_empty() => Some(k.clone()),
                        _ => None,
                    };
                }
            };
        }
        None
    }
}

/// How far into a body an order's JSON is looked for.
const LOOK_WITHIN: usize = 64 * 1024;

/// The key of the first JSON object in `body` with a non-empty string `key`.
fn order_anywhere(body: &[u8]) -> Option<String> {
    let body = &body[..body.len().min(LOOK_WITHIN)];
    (body.iter().enumerate())
        .filter(|(_, b)| **b == b'{')
        .find_map(|(i, _)| {
            let mut values = serde_json::Deserializer::from_slice(&body[i..]).into_iter::<Value>();
            match values.next()?.ok()?.get("key")? {
                Value::String(k) if !k.is_empty() => Some(k.clone()),
                _ => None,
            }
        })
}

/// Appends to `steps` the way from `node` to its first placeholder of the key (or of the order
/// body); false (and `steps` as it was) when `node` places neither.
fn path(node: &Node, steps: &mut Vec<Step>) -> bool {
    let places = |n: &Node| n.uses(Slot::Key) || n.uses(Slot::Body);
    if !places(node) {
        return false;
    }
    match node {
        Node::Text(t) if t.uses(Slot::Key) => steps.push(Step::Text(t.clone())),
        Node::Text(t) if t.whole() == Some(Slot::Body) => steps.push(Step::Order),
        // The order's JSON inside other text: its key is not read back.
        Node::Text(_) | Node::Scalar(_) => return false,
        Node::Map(pairs) => {
            // A field naming the key itself before one holding the whole order.
            let by_key = pairs.iter().find(|(_, n)| n.uses(Slot::Key));
            let Some((k, n)) = by_key.or_else(|| pairs.iter().find(|(_, n)| places(n))) else {
                return false;
            };
            steps.push(Step::Field(k.clone()));
            if !path(n, steps) {
                steps.pop();
                return false;
            }
        }
        Node::List(items) => {
            let by_key = items.iter().position(|n| n.uses(Slot::Key));
            let Some(i) = by_key.or_else(|| items.iter().position(places)) else {
                return false;
            };
            steps.push(Step::Index(i));
            if !path(&items[i], steps) {
                steps.pop();
                return false;
            }
        }
        Node::Json(inner) | Node::Base64(inner) => {
            steps.push(if matches!(node, Node::Json(_)) {
                Step::Json
            } else {
                Step::Base64
            });
            if !path(inner, steps) {
                steps.pop();
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
#[path = "tests_key_reader.rs"]
mod tests;
