//! A broker kind as a record, run.json and summary.json name it: its name as written, with its
//! descriptor looked up once, when the name is made or read back. Reports ask it for the kind's
//! words; a name no kind has (a folder written by a later ackbench) reads in plain words.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::words::{self, KindWords};
use super::{named, KindDescriptor, LeaseRole, Settle, DEFAULT};

/// A broker kind's name (`sqs`, `rabbitmq`, ...) and the kind it names.
#[derive(Clone)]
pub struct KindName {
    name: String,
    kind: Option<&'static KindDescriptor>,
}

impl KindName {
    /// The kind named `name`; an empty name reads as the default kind (`sqs`), as a record
    /// written before kinds had names does.
    pub fn new(name: impl Into<String>) -> KindName {
        let name = name.into();
        let kind = match name.as_str() {
            "" => Some(DEFAULT),
            n => named(n),
        };
        KindName { name, kind }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The name reports write: the default kind's for an empty one (a record written before
    /// kinds had names).
    pub fn named_or_default(&self) -> KindName {
        match self.name.as_str() {
            "" => KindName::default(),
            _ => self.clone(),
        }
    }

    /// The kind's word for the lease (`visibility timeout`, `AckWait`, `consumer timeout`,
    /// `min idle`); "lease" for a name no kind has.
    pub fn lease_words(&self) -> &'static str {
        self.kind.map_or("lease", |k| k.lease.words)
    }

    /// What the kind's lease is for; a lease for a name no kind has.
    pub fn lease_role(&self) -> LeaseRole {
        self.kind.map_or(LeaseRole::Lease, |k| k.lease.role)
    }

    /// What happened to a message the kind gave up on, after "had its message".
    pub fn dlq_words(&self) -> &'static str {
        self.kind
            .map_or("given up on by the broker", |k| k.dlq.gave_up)
    }

    /// The DLQ row's note: what the kind calls it; "" for a name no kind has.
    pub fn dlq_row_words(&self) -> &'static str {
        self.kind.map_or("", |k| k.dlq.row)
    }

    /// What the kind calls its messages, its settling, its lease's end and a stale ack; a
    /// queue's words for a name no kind has.
    pub fn words(&self) -> &'static KindWords {
        self.kind.map_or(&words::QUEUE, |k| &k.words)
    }

    /// Whether the kind settles by committed offsets (Kafka), not by an ack per message.
    pub fn settles_by_offsets(&self) -> bool {
        self.kind.is_some_and(|k| k.can.settle == Settle::Offsets)
    }

    /// Whether it names the default kind (summary.json leaves it out then).
    pub fn is_default(&self) -> bool {
        self.name == DEFAULT.name
    }
}

impl Default for KindName {
    /// The default kind, by name.
    fn default() -> KindName {
        KindName::new(DEFAULT.name)
    }
}

impl From<&str> for KindName {
    fn from(name: &str) -> KindName {
        KindName::new(name)
    }
}

impl PartialEq for KindName {
    fn eq(&self, other: &KindName) -> bool {
        self.name == other.name
    }
}

impl Eq for KindName {}

impl PartialEq<str> for KindName {
    fn eq(&self, other: &str) -> bool {
        self.name == other
    }
}

impl PartialEq<&str> for KindName {
    fn eq(&self, other: &&str) -> bool {
        self.name == *other
    }
}

impl fmt::Debug for KindName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.name, f)
    }
}

impl fmt::Display for KindName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl Serialize for KindName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for KindName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KindName, D::Error> {
        String::deserialize(deserializer).map(KindName::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_its_kind_once_and_an_unknown_one_plain_words() {
        let nats = KindName::new("nats");
        assert_eq!(nats.lease_words(), "AckWait");
        assert!(!nats.settles_by_offsets());
        assert!(KindName::new("kafka").settles_by_offsets());
        // An empty name is the default kind, but still written as it was.
        let empty = KindName::new("");
        assert_eq!(empty.lease_words(), "visibility timeout");
        assert_eq!(empty.as_str(), "");
        assert!(!empty.is_default());
        // Reports name it: the default kind's name; a named kind keeps its own.
        assert_eq!(empty.named_or_default().as_str(), "sqs");
        assert_eq!(nats.named_or_default(), "nats");
        // A later ackbench's kind: plain words, its name kept.
        let later = KindName::new("pubsub-next");
        assert_eq!(
            (
                later.lease_words(),
                later.dlq_words(),
                later.dlq_row_words()
            ),
            ("lease", "given up on by the broker", "")
        );
        assert_eq!(serde_json::to_string(&later).unwrap(), "\"pubsub-next\"");
        let back: KindName = serde_json::from_str("\"rabbitmq\"").unwrap();
        assert_eq!(back.lease_words(), "consumer timeout");
        assert_eq!(back, "rabbitmq");
    }
}
