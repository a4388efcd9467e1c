//! Reading a call's effect key from its request, where the profile's [`KeySource`] says.

use axum::http::HeaderMap;

pub use crate::profile::KeySource;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    #[error("the body has no string or number at JSON pointer {0}")]
    NoPointer(String),
    #[error("the request has no header {0}")]
    NoHeader(String),
    #[error("the path has no segment {0} below the worker's base URL")]
    NoSegment(usize),
    #[error("the form body has no field {0}")]
    NoField(String),
    #[error("{0} leads to no key")]
    NoStep(String),
}

impl KeySource {
    /// The effect key of a call.
    pub fn key(&self, headers: &HeaderMap, rest: &str, body: &[u8]) -> Result<String, KeyError> {
        match self {
            KeySource::JsonPointer(p) => {
                let v: serde_json::Value =
                    serde_json::from_slice(body).map_err(|e| KeyError::NotJson(e.to_string()))?;
                match v.pointer(p) {
                    Some(serde_json::Value::String(s)) => Ok(s.clone()),
                    Some(serde_json::Value::Number(n)) => Ok(n.to_string()),
                    _ => Err(KeyError::NoPointer(p.clone())),
                }
            }
            KeySource::Header(h) => headers
                .get(h.as_str())
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
                .ok_or_else(|| KeyError::NoHeader(h.clone())),
            KeySource::PathSegment(i) => rest
                .split('/')
                .filter(|s| !s.is_empty())
                .nth(*i)
                .map(str::to_string)
                .ok_or(KeyError::NoSegment(*i)),
            KeySource::Form(f) => form_urlencoded::parse(body)
                .find(|(k, _)| k == f)
                .map(|(_, v)| v.into_owned())
                .ok_or_else(|| KeyError::NoField(f.clone())),
            KeySource::Then(source, steps) => {
                let first = source.key(headers, rest, body)?;
                steps
                    .read(&first)
                    .ok_or_else(|| KeyError::NoStep(format!("|{steps} after the source")))
            }
        }
    }
}
