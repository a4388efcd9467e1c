//! The message body every consumer sees.
//!
//! `{"key": "msg-17", "seq": 17, "email": "msg-17@example.test"}`. A poison message is an
//! old-schema body without `email`: [`Order::parse`] fails on it, as naive code does.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    pub key: String,
    pub seq: u64,
    pub email: String,
}

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

/// The body of message `seq` with key `key`; a poison body lacks `email`.
pub fn body(key: &str, seq: u64, poison: bool) -> String {
    if poison {
        serde_json::to_string(&OldOrder { key, seq }).expect("serialising a struct of strings")
    } else {
        let email = format!("{key}@example.test");
        serde_json::to_string(&Order {
            key: key.to_string(),
            seq,
            email,
        })
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
}
