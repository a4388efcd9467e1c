//! `broker` as written: the keys of every kind (`kind`, `observe`, `queue`, `reuse`) read here,
//! the kind's own keys kept as YAML for the kind to read ([`KindDescriptor::resolve`]), once
//! [`super::resolve`] has checked that each is the kind's own. No key of any kind is named here:
//! a new kind's keys live in the kind's file only.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use yaml_serde::{Mapping, Value};

use super::kinds::{self, KindDescriptor};
use super::scalar::Text;

/// `broker`: the broker kind, the keys every kind has, and the kind's own keys.
#[derive(Debug, Default)]
pub struct RawBroker {
    pub kind: Option<BrokerKindName>,
    /// Live mode on a real broker: how the run sees its workers.
    pub observe: Option<ObserveName>,
    /// The run's queue (stream) by a fixed name, as the consumer's framework names it.
    pub queue: Option<Text>,
    /// Use `queue` when it already exists (empty), rather than refuse the run.
    pub reuse: Option<bool>,
    /// Every other key, in the file's order, its value as written: the kind's own keys once
    /// checked (a key no kind has, or another kind's, is refused when resolving, naming the
    /// kind's keys).
    pub own: Mapping,
}

/// The keys every kind reads (`reuse` only where the kind takes an existing queue).
const EVERY_KIND: [&str; 4] = ["kind", "observe", "queue", "reuse"];

impl RawBroker {
    /// The kind's keys the profile sets, in the file's order (a key set to nothing, `~`, is
    /// not set).
    pub fn keys_set(&self) -> Vec<String> {
        self.own
            .iter()
            .filter(|(_, v)| !v.is_null())
            .filter_map(|(k, _)| k.as_str().map(str::to_string))
            .collect()
    }
}

/// What a `broker` that is not a mapping is told: the keys every kind has, then each kind's
/// own, from the kinds' descriptors.
fn expecting() -> String {
    let per_kind: Vec<String> = kinds::KINDS
        .iter()
        .map(|k| format!("{}: {}", k.name, k.keys.join(", ")))
        .collect();
    format!(
        "a mapping with keys {} and the keys of its kind ({})",
        EVERY_KIND.join(", "),
        per_kind.join("; ")
    )
}

impl<'de> Deserialize<'de> for RawBroker {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Broker;
        impl<'de> Visitor<'de> for Broker {
            type Value = RawBroker;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(&expecting())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawBroker, A::Error> {
                let mut raw = RawBroker::default();
                // A key that is not text is kept, for the kind's keys to refuse with a message.
                while let Some(key) = map.next_key::<Value>()? {
                    match key.as_str().unwrap_or_default() {
                        "kind" => raw.kind = map.next_value()?,
                        "observe" => raw.observe = map.next_value()?,
                        "queue" => raw.queue = map.next_value()?,
                        "reuse" => raw.reuse = map.next_value()?,
                        _ => {
                            let value: Value = map.next_value()?;
                            raw.own.insert(key, value);
                        }
                    }
                }
                Ok(raw)
            }
        }
        deserializer.deserialize_map(Broker)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObserveName {
    Proxy,
    None,
}

/// `broker.kind`: the kind's descriptor, read by its name or an alias ([`super::kinds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokerKindName(pub &'static KindDescriptor);

impl<'de> Deserialize<'de> for BrokerKindName {
    /// As serde derives it for an enum of unit variants, one per kind (its aliases before its
    /// name), so that what a profile is told is the same.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl<'de> Visitor<'de> for Name {
            type Value = &'static KindDescriptor;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                usize::try_from(v)
                    .ok()
                    .and_then(|i| kinds::KINDS.get(i).copied())
                    .ok_or_else(|| {
                        let index = format!("variant index 0 <= i < {}", kinds::KINDS.len());
                        E::invalid_value(de::Unexpected::Unsigned(v), &index.as_str())
                    })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                kinds::named(v).ok_or_else(|| E::unknown_variant(v, kinds::names()))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                self.visit_str(&String::from_utf8_lossy(v))
            }
        }
        struct Variant(&'static KindDescriptor);
        impl<'de> Deserialize<'de> for Variant {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_identifier(Name).map(Variant)
            }
        }
        struct Kind;
        impl<'de> Visitor<'de> for Kind {
            type Value = BrokerKindName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("enum BrokerKindName")
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
                let (Variant(kind), variant) = data.variant()?;
                de::VariantAccess::unit_variant(variant)?;
                Ok(BrokerKindName(kind))
            }
        }
        deserializer.deserialize_enum("BrokerKindName", kinds::names(), Kind)
    }
}
