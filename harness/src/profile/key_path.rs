//! Where a key sits inside text that is encoded once or more: steps separated by `|`, each read
//! from what the step before gave. A profile type, read by the ingress (`workload.ingress.
//! message_key`: a key inside the published message's body) and the HTTP provider
//! (`provider.key`, after its source: a key inside a request's field).
//!
//! The steps:
//! - a JSON pointer (`/key`, `/body/0`; `""` is the whole text): the text is parsed as JSON and
//!   the value there taken: a string as it is, a number as written, a list or mapping as JSON
//!   text for the next step (as the last step, a list, mapping, boolean or null is no key);
//! - `base64`: the text is decoded from base64 (standard alphabet, padding optional) as UTF-8;
//! - `form:NAME`: the text is read as `application/x-www-form-urlencoded` and field `NAME` taken.
//!
//! kombu's SQS message (Celery on SQS) carries the task's arguments base64 inside a JSON envelope
//! that is itself base64: its first argument is `base64|/body|base64|/0/0`.

use base64::Engine as _;

/// One step of a [`KeyPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Pointer(String),
    Base64,
    Form(String),
}

/// Steps from a text to a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Step>);

/// What a key path's steps may be, for messages.
pub const STEPS: &str = "a JSON pointer such as /key (\"\" for the whole text), base64, or \
                         form:NAME, separated by |, e.g. base64|/body|base64|/0/0";

impl KeyPath {
    /// Reads `text`: steps separated by `|`.
    pub fn parse(text: &str) -> Result<KeyPath, String> {
        let steps = text
            .split('|')
            .map(|s| match s {
                "" => Ok(Step::Pointer(String::new())),
                "base64" => Ok(Step::Base64),
                p if p.starts_with('/') => Ok(Step::Pointer(p.to_string())),
                f => match f.strip_prefix("form:") {
                    Some(name) if !name.is_empty() => Ok(Step::Form(name.to_string())),
                    _ => Err(format!("`{f}` is not a step: {STEPS}")),
                },
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(KeyPath(steps))
    }

    /// The key in `text`, or `None` when a step finds nothing (or an empty key).
    pub fn read(&self, text: &str) -> Option<String> {
        let mut current = text.to_string();
        let mut scalar = true;
        for step in &self.0 {
            scalar = true;
            current = match step {
                Step::Pointer(p) if p.is_empty() => current,
                Step::Pointer(p) => {
                    let v: serde_json::Value = serde_json::from_str(&current).ok()?;
                    match v.pointer(p)? {
                        serde_json::Value::String(s) => s.clone(),
                        serde_json::Value::Number(n) => n.to_string(),
                        other => {
                            scalar = false;
                            other.to_string()
                        }
                    }
                }
                Step::Base64 => {
                    let engine = base64::engine::general_purpose::GeneralPurpose::new(
                        &base64::alphabet::STANDARD,
                        base64::engine::general_purpose::GeneralPurposeConfig::new()
                            .with_decode_padding_mode(
                                base64::engine::DecodePaddingMode::Indifferent,
                            ),
                    );
                    String::from_utf8(engine.decode(current.trim()).ok()?).ok()?
                }
                Step::Form(name) => form_urlencoded::parse(current.as_bytes())
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())?,
            };
        }
        (scalar && !current.is_empty()).then_some(current)
    }

    /// A single JSON pointer, as a key path that is only one.
    pub fn is_pointer_only(&self) -> bool {
        matches!(self.0.as_slice(), [Step::Pointer(_)])
    }
}

impl std::fmt::Display for KeyPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|s| match s {
                Step::Pointer(p) => p.clone(),
                Step::Base64 => "base64".to_string(),
                Step::Form(n) => format!("form:{n}"),
            })
            .collect();
        f.write_str(&parts.join("|"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_reads_as_before() {
        let k = KeyPath::parse("/key").unwrap();
        assert_eq!(k.read(r#"{"key":"msg-1"}"#).as_deref(), Some("msg-1"));
        assert_eq!(
            KeyPath::parse("/o/id")
                .unwrap()
                .read(r#"{"o":{"id":17}}"#)
                .as_deref(),
            Some("17")
        );
        assert_eq!(k.read(r#"{"key":""}"#), None);
        assert_eq!(k.read("not json"), None);
        assert_eq!(
            KeyPath::parse("").unwrap().read("plain-key").as_deref(),
            Some("plain-key")
        );
    }

    #[test]
    fn kombus_base64_envelope_is_read_through() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        // The task's arguments, base64 in the envelope's `body`, the envelope base64 again.
        let triple = r#"[["msg-3","msg-3@example.test"],{},{}]"#;
        let envelope = format!(r#"{{"body":"{}","headers":{{"task":"t"}}}}"#, b64(triple));
        let sqs_body = b64(&envelope);
        let k = KeyPath::parse("base64|/body|base64|/0/0").unwrap();
        assert_eq!(k.read(&sqs_body).as_deref(), Some("msg-3"));
        // A step that finds nothing: no key, not a wrong one.
        assert_eq!(k.read("not base64!"), None);
        assert_eq!(k.to_string(), "base64|/body|base64|/0/0");
    }

    #[test]
    fn form_fields_and_bad_steps() {
        let k = KeyPath::parse("form:order").unwrap();
        assert_eq!(k.read("to=a%40b&order=msg-9").as_deref(), Some("msg-9"));
        assert_eq!(k.read("to=a"), None);
        for bad in ["key", "form:", "base32"] {
            assert!(
                KeyPath::parse(bad).unwrap_err().contains("is not a step"),
                "{bad}"
            );
        }
    }
}
