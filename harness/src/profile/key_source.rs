//! `provider.key` (and `ackbench provider --key`): where the effect key of a provider call comes
//! from. A profile type; the HTTP provider reads the key from each request
//! (`provider::http::key`).

use super::key_path::KeyPath;

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
    /// A field of a form body (`application/x-www-form-urlencoded`).
    Form(String),
    /// What a source gives, read further through steps ([`KeyPath`]): `header:X-Order|base64`.
    Then(Box<KeySource>, KeyPath),
}

impl Default for KeySource {
    fn default() -> Self {
        KeySource::JsonPointer("/key".to_string())
    }
}

/// Reads `pointer:/json/pointer`, `header:Header-Name`, `segment:N` or `form:field`, then
/// optionally `|` and steps through encodings ([`KeyPath`]), e.g. `header:X-Order|base64|/id`.
pub fn parse_key_source(s: &str) -> Result<KeySource, String> {
    if let Some((source, steps)) = s.split_once('|') {
        let first = parse_key_source(source)?;
        let steps = KeyPath::parse(steps).map_err(|e| format!("--key {s}: {e}"))?;
        return Ok(KeySource::Then(Box::new(first), steps));
    }
    match s.split_once(':') {
        Some(("pointer", p)) if p.starts_with('/') => Ok(KeySource::JsonPointer(p.to_string())),
        Some(("header", h)) if !h.is_empty() => Ok(KeySource::Header(h.to_string())),
        Some(("segment", n)) => n
            .parse()
            .map(KeySource::PathSegment)
            .map_err(|_| format!("--key {s}: segment takes a number, e.g. segment:1")),
        Some(("form", f)) if !f.is_empty() => Ok(KeySource::Form(f.to_string())),
        _ => Err(format!(
            "--key {s}: expected pointer:/json/pointer, header:Header-Name, segment:N or \
             form:field, optionally followed by |steps ({})",
            super::key_path::STEPS
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
        assert_eq!(
            parse_key_source("form:order"),
            Ok(KeySource::Form("order".into()))
        );
        assert_eq!(
            parse_key_source("header:X-Order|base64|/id"),
            Ok(KeySource::Then(
                Box::new(KeySource::Header("X-Order".into())),
                KeyPath::parse("base64|/id").unwrap()
            ))
        );
        for bad in [
            "key",
            "pointer:key",
            "segment:x",
            "header:",
            "body:/x",
            "form:",
            "header:X|zip",
        ] {
            assert!(parse_key_source(bad).is_err(), "{bad}");
        }
    }
}
