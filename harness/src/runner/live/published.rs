//! Messages the system under test published itself, through its ingress service, as the SQS
//! endpoint stored them.
//!
//! With `workload.ingress` ackbench publishes nothing: each `SendMessage` the ingress service
//! makes becomes message `seq` of the run. Its key is read from its body (`message_key`, a JSON
//! pointer) and registered with the provider at once, under the endpoint's lock, so an effect can
//! never arrive before its key is known. A key seen twice is a duplicate publish: the second
//! message is a message of its own, and the key keeps counting effects against the first.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::profile::key_path::KeyPath;
use crate::provider::http::{HttpProvider, LiveClock};
use crate::record::{MessageRecord, Seq};

/// What the ingress published, in the endpoint's order.
pub struct Published {
    /// Where the key is in a body (`workload.ingress.message_key`).
    pointer: KeyPath,
    /// Poison flag of each planned key.
    poison: HashMap<String, bool>,
    clock: LiveClock,
    inner: Mutex<Inner>,
    provider: OnceLock<Arc<HttpProvider>>,
}

#[derive(Default)]
struct Inner {
    records: Vec<MessageRecord>,
    seen: HashSet<String>,
    duplicate_publishes: u64,
    unkeyed: u64,
}

/// What [`Published`] counted besides the messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublishCounts {
    /// Messages whose key had been published before.
    pub duplicate_publishes: u64,
    /// Messages whose body had no key at the pointer.
    pub unkeyed: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The key at `path` in `body` (a pointer given as text here, for the tests).
#[cfg(test)]
fn key_at(body: &str, path: &str) -> Option<String> {
    KeyPath::parse(path).ok()?.read(body)
}

impl Published {
    /// `planned` are the plan's keys with their poison flags.
    pub fn new(
        pointer: &KeyPath,
        planned: impl IntoIterator<Item = (String, bool)>,
        clock: LiveClock,
    ) -> Published {
        Published {
            pointer: pointer.clone(),
            poison: planned.into_iter().collect(),
            clock,
            inner: Mutex::new(Inner::default()),
            provider: OnceLock::new(),
        }
    }

    /// The provider that counts effects by key (set once it is serving).
    pub fn set_provider(&self, provider: Arc<HttpProvider>) {
        let _ = self.provider.set(provider);
    }

    /// Message `seq` was stored with `body`; returns its key.
    pub fn sent(&self, seq: Seq, body: &str) -> String {
        let found = self.pointer.read(body);
        let mut inner = lock(&self.inner);
        let key = match found {
            Some(k) => k,
            None => {
                inner.unkeyed += 1;
                format!("(no key at {} in message {seq})", self.pointer)
            }
        };
        if inner.seen.insert(key.clone()) {
            if let Some(p) = self.provider.get() {
                p.publish_key(&key, seq);
            }
        } else {
            inner.duplicate_publishes += 1;
        }
        let poison = self.poison.get(&key).copied().unwrap_or(false);
        // Message numbers follow the endpoint's; a gap would only come from a send to the queue
        // before the hooks were set, which a live run does not make.
        while inner.records.len() + 1 < seq as usize {
            inner.records.push(MessageRecord {
                key: String::new().into(),
                published_at: 0,
                poison: false,
            });
        }
        inner.records.push(MessageRecord {
            key: key.as_str().into(),
            published_at: self.clock.now(),
            poison,
        });
        key
    }

    /// How many messages were published so far.
    pub fn len(&self) -> usize {
        lock(&self.inner).records.len()
    }

    /// The messages (index `seq - 1`) and the counts, at the end of the run.
    pub fn take(&self) -> (Vec<MessageRecord>, PublishCounts) {
        let mut inner = lock(&self.inner);
        let counts = PublishCounts {
            duplicate_publishes: inner.duplicate_publishes,
            unkeyed: inner.unkeyed,
        };
        (std::mem::take(&mut inner.records), counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_pointer_or_the_whole_body() {
        assert_eq!(
            key_at(r#"{"key":"msg-1"}"#, "/key").as_deref(),
            Some("msg-1")
        );
        assert_eq!(key_at(r#"{"o":{"id":17}}"#, "/o/id").as_deref(), Some("17"));
        assert_eq!(key_at(r#"{"key":""}"#, "/key"), None);
        assert_eq!(key_at(r#"{"key":[1]}"#, "/key"), None);
        assert_eq!(key_at("not json", "/key"), None);
        assert_eq!(key_at("plain-key", "").as_deref(), Some("plain-key"));
    }

    #[test]
    fn records_follow_the_endpoint_and_count_duplicates_and_unkeyed() {
        let p = Published::new(
            &KeyPath::parse("/key").unwrap(),
            [("a".to_string(), false), ("b".to_string(), true)],
            LiveClock::new(1.0),
        );
        assert_eq!(p.sent(1, r#"{"key":"a"}"#), "a");
        assert_eq!(p.sent(2, r#"{"key":"b"}"#), "b");
        p.sent(3, r#"{"key":"a"}"#);
        p.sent(4, "{}");
        let (records, counts) = p.take();
        assert_eq!(
            records.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
            vec!["a", "b", "a", "(no key at /key in message 4)"]
        );
        assert_eq!(
            records.iter().map(|r| r.poison).collect::<Vec<_>>(),
            vec![false, true, false, false]
        );
        assert_eq!(
            counts,
            PublishCounts {
                duplicate_publishes: 1,
                unkeyed: 1
            }
        );
    }
}
