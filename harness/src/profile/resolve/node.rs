//! A message part as the profile writes it (YAML) read into a [`Node`]: what `workload.message`
//! and RabbitMQ's queue `arguments` are made of.

use crate::profile::message::{Node, MESSAGE_SLOTS};
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::template::Template;

/// A YAML value as a node: strings are templates, `{ $json: X }` and `{ $base64: X }` encoding
/// steps, other mappings and lists structure.
pub(in crate::profile) fn node(v: yaml_serde::Value, path: &FieldPath) -> Result<Node, Problem> {
    use yaml_serde::Value;
    Ok(match v {
        Value::String(s) => Node::Text(
            Template::parse(&s, MESSAGE_SLOTS)
                .map_err(|e| Problem::new(path.clone(), e.to_string()))?,
        ),
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
pub(in crate::profile) fn scalar_text(k: &yaml_serde::Value) -> Option<String> {
    match k {
        yaml_serde::Value::String(s) => Some(s.clone()),
        yaml_serde::Value::Number(n) => Some(n.to_string()),
        yaml_serde::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
