//! The message body every consumer sees.
//!
//! `{"key": "msg-17", "seq": 17, "email": "msg-17@example.test"}`. A poison message is an
//! old-schema body without `email`: [`Order::parse`] fails on it, as naive code does.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// One order: its key, its number and the address its email goes to. The key and the address
/// share one buffer, so an order made per delivery (sim mode hands orders over typed) costs one
/// allocation.
#[derive(Clone, PartialEq, Eq)]
pub struct Order {
    /// The key then the address.
    text: String,
    key_len: usize,
    pub seq: u64,
}

/// An order as its JSON body writes it.
#[derive(Serialize)]
struct Wire<'a> {
    key: &'a str,
    seq: u64,
    email: &'a str,
}

#[derive(Deserialize)]
#[serde(rename = "Order")]
struct WireOwned {
    key: String,
    seq: u64,
    email: String,
}

impl Serialize for Order {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            key: self.key(),
            seq: self.seq,
            email: self.email(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Order {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Order, D::Error> {
        let w = WireOwned::deserialize(d)?;
        Ok(Order::with_email(&w.key, w.seq, &w.email))
    }
}

impl std::fmt::Debug for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Order")
            .field("key", &self.key())
            .field("seq", &self.seq)
            .field("email", &self.email())
            .finish()
    }
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
    /// The order's key (the provider's idempotency key, the effect's name).
    pub fn key(&self) -> &str {
        &self.text[..self.key_len]
    }

    /// The address the order's email goes to.
    pub fn email(&self) -> &str {
        &self.text[self.key_len..]
    }

    fn with_email(key: &str, seq: u64, email: &str) -> Order {
        Order::joined(key, &[email], seq)
    }

    /// The order whose address is the concatenation of `email`'s parts, in one buffer.
    fn joined(key: &str, email: &[&str], seq: u64) -> Order {
        let len = key.len() + email.iter().map(|p| p.len()).sum::<usize>();
        let mut text = String::with_capacity(len);
        text.push_str(key);
        for part in email {
            text.push_str(part);
        }
        Order {
            text,
            key_len: key.len(),
            seq,
        }
    }

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
            Body::Order(o) => Cow::Owned(body(o.key(), o.seq, false)),
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
    pub fn of(key: &str, seq: u64) -> Order {
        Order::joined(key, &[key, DOMAIN], seq)
    }
}

/// The body of message `seq` with key `key`; a poison body lacks `email`.
pub fn body(key: &str, seq: u64, poison: bool) -> String {
    if poison {
        serde_json::to_string(&OldOrder { key, seq }).expect("serialising a struct of strings")
    } else {
        serde_json::to_string(&Order::of(key, seq)).expect("serialising a struct of strings")
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
        let order = Order::parse(&b).unwrap();
        assert_eq!(
            (order.key(), order.seq, order.email()),
            ("msg-17", 17, "msg-17@example.test")
        );
        assert_eq!(order, Order::of("msg-17", 17));
        // An address that is not the key's own is kept as written.
        let other = Order::parse(r#"{"key":"a","seq":1,"email":"b@c"}"#).unwrap();
        assert_eq!((other.key(), other.email()), ("a", "b@c"));
        let p = body("msg-3", 3, true);
        assert_eq!(p, r#"{"key":"msg-3","seq":3}"#);
        assert!(Order::parse(&p).is_err());
        assert_eq!(Order::key_of(&p).as_deref(), Some("msg-3"));
    }

    #[test]
    fn an_order_body_reads_as_its_text_does() {
        // Key with characters JSON escapes: the text round trip and the typed body agree.
        let key = "k\"1/é";
        let typed = Body::Order(Order::of(key, 9));
        let text = Body::Text(body(key, 9, false));
        assert_eq!(typed.order().unwrap(), text.order().unwrap());
        assert_eq!(typed.text(), text.text());
        assert_eq!(typed.order().unwrap().email(), "k\"1/é@example.test");
    }
}
