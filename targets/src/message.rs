//! The message body every consumer sees.
//!
//! `{"key": "msg-17", "seq": 17, "email": "msg-17@example.test"}`. A poison message is an
//! old-schema body without `email`: [`Order::parse`] fails on it, as naive code does.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    pub key: String,
    pub seq: u64,
    pub email: String,
}

/// Every order's email is its key at this domain.
const DOMAIN: &str = "@example.test";

/// The old schema a poison message still has.
#[derive(Serialize)]
struct OldOrder<'a> {
    key: &'a str,
    seq: u64,
}

impl Order {
    pub fn parse(body: &str) -> Result<Order, serde_json::Error> {
        serde_json::from_str(body)
    }

    /// The key of any body that has one, poison or not (for logging and dead-lettering).
    pub fn key_of(body: &str) -> Option<String> {
        #[derive(Deserialize)]
        struct KeyOnly {
            key: String,
        }
        serde_json::from_str::<KeyOnly>(body).ok().map(|k| k.key)
    }
}

/// A delivery's body: the text the broker carried or, where the harness knows the message it
/// encodes (sim mode), the order itself, so that it is not written as JSON only to be parsed
/// back. Both read the same: [`Body::order`] of `Order(o)` is `o`, of `Text(t)` is
/// [`Order::parse`] of `t`; [`Body::text`] of `Order(o)` is [`body`] of `o`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Text(String),
    Order(Order),
}

impl Body {
    /// The order the body carries (borrowed when typed); an error for a body that is not one
    /// (a poison message).
    pub fn order(&self) -> Result<Cow<'_, Order>, serde_json::Error> {
        match self {
            Body::Text(t) => Order::parse(t).map(Cow::Owned),
            Body::Order(o) => Ok(Cow::Borrowed(o)),
        }
    }

    /// The body as the broker carries it.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Body::Text(t) => Cow::Borrowed(t),
            Body::Order(o) => Cow::Owned(body(&o.key, o.seq, false)),
        }
    }
}

impl From<String> for Body {
    fn from(t: String) -> Body {
        Body::Text(t)
    }
}

impl Order {
    /// The order of message `seq` with key `key`, as [`body`] writes it (not poison).
    pub fn of(key: String, seq: u64) -> Order {
        let mut email = String::with_capacity(key.len() + DOMAIN.len());
        email.push_str(&key);
        email.push_str(DOMAIN);
        Order { key, seq, email }
    }
}

/// The body of message `seq` with key `key`; a poison body lacks `email`.
pub fn body(key: &str, seq: u64, poison: bool) -> String {
    if poison {
        serde_json::to_string(&OldOrder { key, seq }).expect("serialising a struct of strings")
    } else {
        serde_json::to_string(&Order::of(key.to_string(), seq))
            .expect("serialising a struct of strings")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_round_trips_and_poison_fails() {
        let b = body("msg-17", 17, false);
        assert_eq!(
            b,
            r#"{"key":"msg-17","seq":17,"email":"msg-17@example.test"}"#
        );
        assert_eq!(Order::parse(&b).unwrap().email, "msg-17@example.test");
        let p = body("msg-3", 3, true);
        assert_eq!(p, r#"{"key":"msg-3","seq":3}"#);
        assert!(Order::parse(&p).is_err());
        assert_eq!(Order::key_of(&p).as_deref(), Some("msg-3"));
    }

    #[test]
    fn an_order_body_reads_as_its_text_does() {
        // Key with characters JSON escapes: the text round trip and the typed body agree.
        let key = "k\"1/é";
        let typed = Body::Order(Order::of(key.to_string(), 9));
        let text = Body::Text(body(key, 9, false));
        assert_eq!(typed.order().unwrap(), text.order().unwrap());
        assert_eq!(typed.text(), text.text());
        assert_eq!(typed.order().unwrap().email, "k\"1/é@example.test");
    }
}
