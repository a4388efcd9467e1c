//! Where the effect key of a provider call comes from.

use axum::http::HeaderMap;

/// How the provider finds a call's effect key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A JSON pointer into the request body (RFC 6901), e.g. `/key`.
    JsonPointer(String),
    /// A request header, e.g. `Idempotency-Key`.
    Header(String),
    /// The n-th path segment below the worker's base URL (0-based): `/w/3/orders/msg-7` with
    /// `PathSegment(1)` is `msg-7`.
    PathSegment(usize),
}

impl Default for KeySource {
    fn default() -> Self {
        KeySource::JsonPointer("/key".to_string())
    }
}

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
        }
    }
}
