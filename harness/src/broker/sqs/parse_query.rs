//! The query protocol's request form (`Action=SendMessage&QueueUrl=...&MessageAttribute.1.Name=...`)
//! translated to the JSON protocol's member shape ([`Wire`]), so both share one decoder.
//!
//! Flattened lists and maps become JSON ones: `AttributeName.N` -> `AttributeNames`,
//! `Attribute.N.{Name,Value}` -> `Attributes`, `Tag.N.{Key,Value}` -> `Tags`, `TagKey.N` ->
//! `TagKeys`, `MessageAttribute.N.{Name,Value.*}` ->
//! `MessageAttributes`, `<Action>RequestEntry.N.*` -> `Entries`. Integer members become JSON
//! numbers when they parse as one (and fail decoding, as a wrong type, when they do not).

use std::collections::BTreeMap;

use http::HeaderMap;
use serde_json::{Map, Value};

use super::error::{ErrorCode, SqsError};
use super::wire::Wire;

/// Members whose values are integers.
const INTEGERS: &[&str] = &[
    "DelaySeconds",
    "MaxNumberOfMessages",
    "MaxResults",
    "VisibilityTimeout",
    "WaitTimeSeconds",
];

/// Deepest key (`SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue` has 6 parts).
const MAX_KEY_PARTS: usize = 8;

/// Parses a form body into the action name and its members. `path` names the queue when the
/// form has no `QueueUrl` (`POST /<account>/<queue>`).
pub fn parse(path: &str, headers: &HeaderMap, body: &[u8]) -> Result<(String, Wire), SqsError> {
    if let Some(ct) = headers.get(http::header::CONTENT_TYPE) {
        let ct = ct.to_str().unwrap_or_default();
        let media = ct.split(';').next().unwrap_or_default().trim();
        if !media.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
            return Err(SqsError::new(
                ErrorCode::MalformedRequest,
                format!(
                    "Content-Type must be application/x-www-form-urlencoded (query protocol) or \
                     application/x-amz-json-1.0 with X-Amz-Target (JSON protocol), got '{ct}'"
                ),
            ));
        }
    }
    if let Some(key) = not_utf8(body) {
        return Err(SqsError::new(
            ErrorCode::SerializationException,
            format!("The request body is not valid UTF-8: the parameter '{key}' is not"),
        ));
    }
    let mut root = Node::Branch(BTreeMap::new());
    let mut action = None;
    for (k, val) in form_urlencoded::parse(body) {
        if k == "Action" {
            action = Some(val.into_owned());
            continue;
        }
        let parts: Vec<&str> = k.split('.').collect();
        if parts.len() > MAX_KEY_PARTS || parts.iter().any(|p| p.is_empty()) {
            return Err(malformed(&k));
        }
        root.insert(&parts, val.into_owned())
            .map_err(|_| malformed(&k))?;
    }
    let action = action.ok_or_else(|| SqsError::missing("Action"))?;
    let mut members = match root {
        Node::Branch(root) => object(root)?,
        Node::Leaf(_) => Map::new(),
    };
    if !members.contains_key("QueueUrl") {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if segments.len() >= 2 {
            members.insert("QueueUrl".into(), Value::String(path.to_string()));
        }
    }
    let wire: Wire = serde_json::from_value(Value::Object(members)).map_err(|e| {
        SqsError::new(
            ErrorCode::InvalidParameterValue,
            format!("Invalid {action} request: {e}"),
        )
    })?;
    Ok((action, wire))
}

/// The legacy signature version 2 access key (`AWSAccessKeyId=`), for query requests without an
/// `Authorization` header.
pub fn access_key(body: &[u8]) -> Option<String> {
    form_urlencoded::parse(body)
        .find(|(k, _)| k == "AWSAccessKeyId")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
}

/// The first parameter of form `body` whose name or value, once decoded (`+` a space, `%XX` a
/// byte), is not UTF-8; its name, lossily decoded and cut to 80 characters. The form decoder
/// itself would turn such bytes into U+FFFD, and the request would carry text its client never
/// sent; the JSON protocol refuses the same bytes as a `SerializationException`, and so does this.
fn not_utf8(body: &[u8]) -> Option<String> {
    body.split(|&b| b == b'&').find_map(|pair| {
        let mut halves = pair.splitn(2, |&b| b == b'=');
        let key = decode(halves.next().unwrap_or_default());
        let value = decode(halves.next().unwrap_or_default());
        (std::str::from_utf8(&key).is_err() || std::str::from_utf8(&value).is_err())
            .then(|| String::from_utf8_lossy(&key).chars().take(80).collect())
    })
}

/// A form component's bytes: `+` is a space and `%XX` the byte XX (a `%` not followed by two hex
/// digits stays as it is, as the form decoder keeps it).
fn decode(raw: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let pair = raw
            .get(i + 1)
            .copied()
            .and_then(hex)
            .zip(raw.get(i + 2).copied().and_then(hex));
        match (raw[i], pair) {
            (b'%', Some((hi, lo))) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn malformed(key: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidParameterValue,
        format!("Malformed query parameter '{key}'"),
    )
}

/// A form key's path: leaves are values, branches are `.`-separated prefixes.
enum Node {
    Leaf(String),
    Branch(BTreeMap<String, Node>),
}

impl Node {
    /// Inserts a value; a key that is both a value and a prefix of another is an error.
    fn insert(&mut self, parts: &[&str], val: String) -> Result<(), ()> {
        let Node::Branch(map) = self else {
            return Err(());
        };
        match parts {
            [] => Err(()),
            [last] => match map.insert(last.to_string(), Node::Leaf(val)) {
                Some(Node::Branch(_)) => Err(()),
                _ => Ok(()),
            },
            [first, rest @ ..] => map
                .entry(first.to_string())
                .or_insert_with(|| Node::Branch(BTreeMap::new()))
                .insert(rest, val),
        }
    }
}

/// A branch as the JSON members it stands for.
fn object(map: BTreeMap<String, Node>) -> Result<Map<String, Value>, SqsError> {
    let mut out = Map::new();
    for (k, node) in map {
        match (k.as_str(), node) {
            ("Attribute", Node::Branch(items)) => {
                let mut attrs = Map::new();
                for item in indexed(&k, items)? {
                    let Node::Branch(mut item) = item else {
                        return Err(malformed(&k));
                    };
                    let name = leaf(item.remove("Name"))
                        .ok_or_else(|| SqsError::missing("Attribute.N.Name"))?;
                    let value = leaf(item.remove("Value")).unwrap_or_default();
                    attrs.insert(name, Value::String(value));
                }
                out.insert("Attributes".into(), Value::Object(attrs));
            }
            ("Tag", Node::Branch(items)) => {
                let mut tags = Map::new();
                for item in indexed(&k, items)? {
                    let Node::Branch(mut item) = item else {
                        return Err(malformed(&k));
                    };
                    let key =
                        leaf(item.remove("Key")).ok_or_else(|| SqsError::missing("Tag.N.Key"))?;
                    let value = leaf(item.remove("Value")).unwrap_or_default();
                    tags.insert(key, Value::String(value));
                }
                out.insert("Tags".into(), Value::Object(tags));
            }
            (
                "AttributeName" | "MessageAttributeName" | "MessageSystemAttributeName" | "TagKey",
                Node::Branch(items),
            ) => {
                let list = indexed(&k, items)?
                    .into_iter()
                    .map(|n| {
                        leaf(Some(n))
                            .map(Value::String)
                            .ok_or_else(|| malformed(&k))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert(format!("{k}s"), Value::Array(list));
            }
            ("MessageAttribute", Node::Branch(items)) => {
                let mut attrs = Map::new();
                for item in indexed(&k, items)? {
                    let Node::Branch(mut item) = item else {
                        return Err(malformed(&k));
                    };
                    let name = leaf(item.remove("Name"))
                        .ok_or_else(|| SqsError::missing("MessageAttribute.N.Name"))?;
                    let value = match item.remove("Value") {
                        Some(Node::Branch(v)) => object(v)?,
                        _ => Map::new(),
                    };
                    attrs.insert(name, Value::Object(value));
                }
                out.insert("MessageAttributes".into(), Value::Object(attrs));
            }
            (entry, Node::Branch(items)) if entry.ends_with("RequestEntry") => {
                let list = indexed(&k, items)?
                    .into_iter()
                    .map(|n| match n {
                        Node::Branch(b) => object(b).map(Value::Object),
                        Node::Leaf(_) => Err(malformed(&k)),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert("Entries".into(), Value::Array(list));
            }
            (_, Node::Branch(b)) => {
                out.insert(k, Value::Object(object(b)?));
            }
            (name, Node::Leaf(s)) => {
                let v = match s.parse::<i64>() {
                    Ok(n) if INTEGERS.contains(&name) => Value::from(n),
                    _ => Value::String(s),
                };
                out.insert(k, v);
            }
        }
    }
    Ok(out)
}

/// A flattened list's items in index order (`.1`, `.2`, ...).
fn indexed(key: &str, items: BTreeMap<String, Node>) -> Result<Vec<Node>, SqsError> {
    let mut numbered = items
        .into_iter()
        .map(|(i, n)| i.parse::<u32>().map(|i| (i, n)).map_err(|_| malformed(key)))
        .collect::<Result<Vec<_>, _>>()?;
    numbered.sort_by_key(|(i, _)| *i);
    Ok(numbered.into_iter().map(|(_, n)| n).collect())
}

fn leaf(n: Option<Node>) -> Option<String> {
    match n {
        Some(Node::Leaf(s)) => Some(s),
        _ => None,
    }
}
