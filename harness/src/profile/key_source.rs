//! `provider.key` (and `ackbench provider --key`): where the effect key of a provider call comes
//! from. A profile type; the HTTP provider reads the key from each request
//! (`provider::http::key`).

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

/// Reads `pointer:/json/pointer`, `header:Header-Name` or `segment:N`.
pub fn parse_key_source(s: &str) -> Result<KeySource, String> {
    match s.split_once(':') {
        Some(("pointer", p)) if p.starts_with('/') => Ok(KeySource::JsonPointer(p.to_string())),
        Some(("header", h)) if !h.is_empty() => Ok(KeySource::Header(h.to_string())),
        Some(("segment", n)) => n
            .parse()
            .map(KeySource::PathSegment)
            .map_err(|_| format!("--key {s}: segment takes a number, e.g. segment:1")),
        _ => Err(format!(
            "--key {s}: expected pointer:/json/pointer, header:Header-Name or segment:N"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_sources_parse() {
        assert_eq!(
            parse_key_source("pointer:/key"),
            Ok(KeySource::JsonPointer("/key".into()))
        );
        assert_eq!(
            parse_key_source("header:Idempotency-Key"),
            Ok(KeySource::Header("Idempotency-Key".into()))
        );
        assert_eq!(parse_key_source("segment:2"), Ok(KeySource::PathSegment(2)));
        for bad in ["key", "pointer:key", "segment:x", "header:", "body:/x"] {
            assert!(parse_key_source(bad).is_err(), "{bad}");
        }
    }
}
