//! Request templates of the HTTP ingress load: text with placeholders filled per message. A
//! profile type (`workload.ingress` holds them); the live ingress load renders them.
//!
//! A placeholder is `{name}` where `name` is letters and `_` only, so JSON braces stay literal
//! (`{"key": "{key}"}` has one placeholder). `{{` and `}}` write a literal brace. The names:
//!
//! - `{key}`: the message key (`msg-17`);
//! - `{seq}`: its number in publish order (`17`);
//! - `{body}`: the message body a directly published message would carry (the JSON order, or the
//!   old-schema body of a poison message);
//! - `{port}` (in `url` only): the port ackbench gives the ingress service.
//!
//! A published message's template (`workload.message`, [`crate::profile::message`]) also takes
//! `{email}` (the order's address, empty for a poison message), `{id}` (a UUID made from the
//! seed and the message's number: the same for every delivery and every run of the seed),
//! `{queue}` (the queue or stream the run publishes to) and `{now_ms}` (the publish instant as
//! Unix milliseconds).

use std::fmt;

/// One placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Key,
    Seq,
    Body,
    Port,
    Email,
    Id,
    Queue,
    NowMs,
}

impl Slot {
    fn name(self) -> &'static str {
        match self {
            Slot::Key => "key",
            Slot::Seq => "seq",
            Slot::Body => "body",
            Slot::Port => "port",
            Slot::Email => "email",
            Slot::Id => "id",
            Slot::Queue => "queue",
            Slot::NowMs => "now_ms",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Slot(Slot),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unknown placeholder {{{name}}}: the placeholders are {allowed} (write {{{{ for a literal brace)")]
    Unknown { name: String, allowed: String },
}

/// What one message fills a template with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill<'a> {
    pub key: &'a str,
    /// The message's number in publish order (1-based).
    pub seq: u32,
    pub body: &'a str,
    pub port: u16,
    pub email: &'a str,
    pub id: &'a str,
    pub queue: &'a str,
    pub now_ms: u64,
}

impl Template {
    /// Parses `text`, allowing the placeholders in `allowed`.
    pub fn parse(text: &str, allowed: &[Slot]) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if let Some(r) = rest.strip_prefix("{{") {
                lit.push('{');
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix("}}") {
                lit.push('}');
                rest = r;
                continue;
            }
            if c == '{' {
                let name_len = rest[1..]
                    .find(|ch: char| !(ch.is_ascii_alphabetic() || ch == '_'))
                    .unwrap_or(rest.len() - 1);
                let name = &rest[1..1 + name_len];
                if name_len > 0 && rest[1 + name_len..].starts_with('}') {
                    let slot = allowed.iter().copied().find(|s| s.name() == name);
                    let Some(slot) = slot else {
                        return Err(TemplateError::Unknown {
                            name: name.to_string(),
                            allowed: allowed
                                .iter()
                                .map(|s| format!("{{{}}}", s.name()))
                                .collect::<Vec<_>>()
                                .join(", "),
                        });
                    };
                    if !lit.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut lit)));
                    }
                    parts.push(Part::Slot(slot));
                    rest = &rest[name_len + 2..];
                    continue;
                }
            }
            lit.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !lit.is_empty() {
            parts.push(Part::Text(lit));
        }
        Ok(Template { parts })
    }

    /// The text for one message.
    pub fn render(&self, fill: &Fill<'_>) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Slot(Slot::Key) => out.push_str(fill.key),
                Part::Slot(Slot::Seq) => out.push_str(&fill.seq.to_string()),
                Part::Slot(Slot::Body) => out.push_str(fill.body),
                Part::Slot(Slot::Port) => out.push_str(&fill.port.to_string()),
                Part::Slot(Slot::Email) => out.push_str(fill.email),
                Part::Slot(Slot::Id) => out.push_str(fill.id),
                Part::Slot(Slot::Queue) => out.push_str(fill.queue),
                Part::Slot(Slot::NowMs) => out.push_str(&fill.now_ms.to_string()),
            }
        }
        out
    }

    /// The slot this template is, when it is exactly one placeholder and nothing else.
    pub fn whole(&self) -> Option<Slot> {
        match self.parts.as_slice() {
            [Part::Slot(s)] => Some(*s),
            _ => None,
        }
    }

    /// Whether the template uses `slot`.
    pub fn uses(&self, slot: Slot) -> bool {
        self.parts.contains(&Part::Slot(slot))
    }

    /// The `{key}` that filled this template to give `text`, read back: the text between the
    /// literal text before the key's placeholder and the literal text after it (up to the first
    /// occurrence of that text, or the end). `None` when the template places no key, when `text`
    /// does not start as the template does, or when the key is empty.
    ///
    /// Only the literal text around the key is matched, so a template whose key stands beside
    /// another placeholder (`{seq}{key}`) cannot be read back: `None` there too.
    pub fn read_key<'t>(&self, text: &'t str) -> Option<&'t str> {
        let at = self
            .parts
            .iter()
            .position(|p| *p == Part::Slot(Slot::Key))?;
        let mut rest = text;
        for p in &self.parts[..at] {
            match p {
                Part::Text(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Part::Slot(_) => return None,
            }
        }
        let key = match self.parts.get(at + 1) {
            None => rest,
            Some(Part::Text(lit)) => &rest[..rest.find(lit.as_str())?],
            Some(Part::Slot(_)) => return None,
        };
        (!key.is_empty()).then_some(key)
    }
}

impl fmt::Display for Template {
    /// The template as written (braces of literal text doubled).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.parts {
            match p {
                Part::Text(t) => f.write_str(&t.replace('{', "{{").replace('}', "}}"))?,
                Part::Slot(s) => write!(f, "{{{}}}", s.name())?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[Slot] = &[Slot::Key, Slot::Seq, Slot::Body, Slot::Port];

    fn fill() -> Fill<'static> {
        Fill {
            key: "msg-7",
            seq: 7,
            body: r#"{"key":"msg-7"}"#,
            port: 8080,
            ..Fill::default()
        }
    }

    #[test]
    fn json_braces_stay_literal_and_placeholders_fill() {
        let t = Template::parse(r#"{"id": "{key}", "n": {seq}}"#, ALL).unwrap();
        assert_eq!(t.render(&fill()), r#"{"id": "msg-7", "n": 7}"#);
        let t = Template::parse("http://127.0.0.1:{port}/orders/{key}", ALL).unwrap();
        assert_eq!(t.render(&fill()), "http://127.0.0.1:8080/orders/msg-7");
        let t = Template::parse("{body}", ALL).unwrap();
        assert_eq!(t.render(&fill()), r#"{"key":"msg-7"}"#);
        assert!(t.uses(Slot::Body) && !t.uses(Slot::Key));
    }

    #[test]
    fn doubled_braces_are_literal_and_odd_braces_pass_through() {
        let t = Template::parse("{{key}} {key} {} { x } {", ALL).unwrap();
        assert_eq!(t.render(&fill()), "{key} msg-7 {} { x } {");
        assert_eq!(t.to_string(), "{{key}} {key} {{}} {{ x }} {{");
        assert_eq!(Template::parse(&t.to_string(), ALL).unwrap(), t);
    }

    #[test]
    fn unknown_or_disallowed_placeholders_are_refused() {
        let e = Template::parse("{kee}", ALL).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown placeholder {kee}: the placeholders are {key}, {seq}, {body}, {port} \
             (write {{ for a literal brace)"
        );
        assert!(Template::parse("{port}", &[Slot::Key]).is_err());
    }

    #[test]
    fn multibyte_text_survives() {
        let t = Template::parse("é{key}ü", ALL).unwrap();
        assert_eq!(t.render(&fill()), "émsg-7ü");
    }

    #[test]
    fn a_key_is_read_back_between_the_literal_text_around_it() {
        let read = |t: &str, text: &str| {
            Template::parse(t, ALL)
                .unwrap()
                .read_key(text)
                .map(str::to_string)
        };
        // The whole text; a prefix; text after the key up to its first occurrence.
        assert_eq!(read("{key}", "msg-7").as_deref(), Some("msg-7"));
        assert_eq!(read("order-{key}", "order-msg-7").as_deref(), Some("msg-7"));
        assert_eq!(read("<{key}>{seq}>", "<msg-7>7>").as_deref(), Some("msg-7"));
        // A text that does not start as the template does, an empty key, no key at all, a key
        // beside another placeholder: nothing read.
        assert_eq!(read("order-{key}", "ord-msg-7"), None);
        assert_eq!(read("order-{key}", "order-"), None);
        assert_eq!(read("{seq}", "7"), None);
        assert_eq!(read("{seq}{key}", "7msg-7"), None);
    }

    proptest::proptest! {
        /// A key rendered into a template with literal text around it reads back as itself.
        #[test]
        fn a_rendered_key_reads_back(pre in "[a-z:]{0,5}", post in "[!-]{0,3}", key in "[a-z0-9]{1,8}") {
            let t = Template::parse(&format!("{pre}{{key}}{post}"), ALL).unwrap();
            let f = Fill { key: &key, ..fill() };
            let text = t.render(&f);
            proptest::prop_assert_eq!(t.read_key(&text), Some(key.as_str()));
        }
        /// Whatever the text, a template that parses prints back to text that parses to the
        /// same template, and text without braces renders as itself.
        #[test]
        fn templates_round_trip(text in "[a-z{}\"é: ]{0,40}") {
            if let Ok(t) = Template::parse(&text, ALL) {
                proptest::prop_assert_eq!(Template::parse(&t.to_string(), ALL).unwrap(), t);
            }
            let plain = text.replace(['{', '}'], "");
            let t = Template::parse(&plain, ALL).unwrap();
            proptest::prop_assert_eq!(t.render(&fill()), plain);
        }
    }
}
