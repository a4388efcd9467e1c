//! Finds where a field sits in the profile text, so that a problem found after parsing can still
//! say `file:line:column`.
//!
//! The locator walks the text with yaml_serde's own parser (so positions always agree with the
//! parser that read the profile): it follows the field path through mappings and lists, skipping
//! everything else, and stops at the wanted node by failing there on purpose. yaml_serde stamps
//! every error with the position of the node being read, and that position is the answer.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

use super::path::{FieldPath, Segment};

/// The scalar visits of a visitor that only walks the document's structure: a scalar has no
/// key to find and no duplicate to report.
macro_rules! scalars_say_nothing {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_none<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

/// Which part of a mapping entry a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The key itself (an unknown key).
    Key,
    /// The value (a value out of range). A mapping or list value is pointed at by its key.
    Value,
}

/// A 1-based line and column in the profile text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The position of `path`, or of its nearest ancestor present in the text, or 1:1.
pub fn locate_nearest(text: &str, path: &FieldPath, anchor: Anchor) -> Position {
    let mut at = path.clone();
    let mut anchor = anchor;
    loop {
        if let Some(pos) = locate(text, &at, anchor) {
            return pos;
        }
        if at.is_root() {
            return Position { line: 1, column: 1 };
        }
        at = at.parent();
        anchor = Anchor::Value;
    }
}

/// The position of `path` in `text`, if the text has that field.
pub fn locate(text: &str, path: &FieldPath, anchor: Anchor) -> Option<Position> {
    match anchor {
        Anchor::Key => probe(text, path, Want::Key).or_else(|| probe(text, path, Want::Value)),
        Anchor::Value => match probe_kind(text, path)? {
            (pos, NodeKind::Scalar) => Some(pos),
            (pos, NodeKind::Collection) => probe(text, path, Want::Key).or(Some(pos)),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Key,
    Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeKind {
    Scalar,
    Collection,
}

const FOUND_KEY: &str = "\u{1}locate:key\u{1}";
const FOUND_SCALAR: &str = "\u{1}locate:scalar\u{1}";
const FOUND_COLLECTION: &str = "\u{1}locate:collection\u{1}";

fn probe(text: &str, path: &FieldPath, want: Want) -> Option<Position> {
    probe_raw(text, path, want).map(|(pos, _)| pos)
}

fn probe_kind(text: &str, path: &FieldPath) -> Option<(Position, NodeKind)> {
    probe_raw(text, path, Want::Value)
}

fn probe_raw(text: &str, path: &FieldPath, want: Want) -> Option<(Position, NodeKind)> {
    let de = yaml_serde::Deserializer::from_str(text);
    let err = Step {
        rest: &path.0,
        want,
    }
    .deserialize(de)
    .err()?;
    let message = err.to_string();
    let kind = if message.contains(FOUND_COLLECTION) {
        NodeKind::Collection
    } else if message.contains(FOUND_SCALAR) || message.contains(FOUND_KEY) {
        NodeKind::Scalar
    } else {
        return None;
    };
    let loc = err.location()?;
    Some((
        Position {
            line: loc.line(),
            column: loc.column(),
        },
        kind,
    ))
}

/// Walks one step along the path.
struct Step<'p> {
    rest: &'p [Segment],
    want: Want,
}

impl<'de> DeserializeSeed<'de> for Step<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match (self.rest.is_empty(), self.want) {
            (true, Want::Value) => d.deserialize_any(Found),
            // The root or a list element has no key.
            (true, Want::Key) => d.deserialize_any(IgnoredAny).map(|_| ()),
            (false, _) => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Step<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("anything")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let want_key = self.rest.first().map(|s| s.to_string()).unwrap_or_default();
        let stop_at_key = self.rest.len() == 1 && self.want == Want::Key;
        while let Some(matched) = map.next_key_seed(KeySeed {
            want: &want_key,
            stop_here: stop_at_key,
        })? {
            if matched {
                map.next_value_seed(Step {
                    rest: &self.rest[1..],
                    want: self.want,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let wanted = self
            .rest
            .first()
            .and_then(|s| s.to_string().parse::<usize>().ok());
        let mut i = 0;
        loop {
            let more = if Some(i) == wanted {
                seq.next_element_seed(Step {
                    rest: &self.rest[1..],
                    want: self.want,
                })?
                .is_some()
            } else {
                seq.next_element::<IgnoredAny>()?.is_some()
            };
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }

    // A scalar where the path goes deeper: the field is not there.
    scalars_say_nothing!();
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        let (IgnoredAny, variant) = data.variant::<IgnoredAny>()?;
        de::VariantAccess::newtype_variant::<IgnoredAny>(variant).map(|_| ())
    }
}

/// Reads one mapping key and tells whether it is the wanted one; stops there if asked.
struct KeySeed<'w> {
    want: &'w str,
    stop_here: bool,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl KeySeed<'_> {
    fn check<E: de::Error>(self, key: &str) -> Result<bool, E> {
        let matched = key == self.want;
        if matched && self.stop_here {
            return Err(E::custom(FOUND_KEY));
        }
        Ok(matched)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        self.check(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.check(&v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.check(&v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.check(&v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        self.check(&v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// Fails on purpose at the wanted node, saying what kind of node it is.
struct Found;

impl Found {
    fn scalar<E: de::Error>() -> Result<(), E> {
        Err(E::custom(FOUND_SCALAR))
    }
}

impl<'de> Visitor<'de> for Found {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("anything")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Self::scalar()
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Self::scalar()
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(FOUND_COLLECTION))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(FOUND_COLLECTION))
    }
}

/// The position of the first key that repeats a key of its own mapping (which the YAML parser
/// reports without a place), if the text has one.
pub fn locate_duplicate_key(text: &str) -> Option<Position> {
    let de = yaml_serde::Deserializer::from_str(text);
    let err = Duplicates.deserialize(de).err()?;
    if !err.to_string().contains(FOUND_DUPLICATE) {
        return None;
    }
    let loc = err.location()?;
    Some(Position {
        line: loc.line(),
        column: loc.column(),
    })
}

const FOUND_DUPLICATE: &str = "\u{1}locate:duplicate\u{1}";

/// Walks every node, failing at the first mapping key already seen in its mapping.
#[derive(Clone, Copy)]
struct Duplicates;

impl<'de> DeserializeSeed<'de> for Duplicates {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Duplicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("anything")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while map.next_key_seed(NewKey(&mut seen))?.is_some() {
            map.next_value_seed(Duplicates)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Duplicates)?.is_some() {}
        Ok(())
    }

    scalars_say_nothing!();
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        let (IgnoredAny, variant) = data.variant::<IgnoredAny>()?;
        de::VariantAccess::newtype_variant_seed(variant, Duplicates)
    }
}

/// Reads one mapping key; fails at it if its mapping already had it.
struct NewKey<'s>(&'s mut std::collections::HashSet<String>);

impl<'de> DeserializeSeed<'de> for NewKey<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl NewKey<'_> {
    fn check<E: de::Error>(self, key: String) -> Result<(), E> {
        if self.0.insert(key) {
            Ok(())
        } else {
            Err(E::custom(FOUND_DUPLICATE))
        }
    }
}

impl<'de> Visitor<'de> for NewKey<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.check(v.to_string())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.check(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.check(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.check(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.check(v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.check("~".to_string())
    }
    // A collection as a key (rare): not compared.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        Duplicates.visit_map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Duplicates.visit_seq(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
name: x
broker:
  visibility_timeout: 13h
  max_receives: 3
provider:
  phases:
    - { from: 0s, to: 90m }
    - from: 1h
      to: 30m
budgets: { dlq: 0 }
";

    fn at(line: usize, column: usize) -> Option<Position> {
        Some(Position { line, column })
    }

    fn p(s: &str) -> FieldPath {
        FieldPath::parse_dotted(s)
    }

    #[test]
    fn finds_a_repeated_key_where_it_repeats() {
        assert_eq!(
            locate_duplicate_key("a: 1\nb:\n  c: 1\n  d: [1, {e: 1, e: 2}]\n"),
            at(4, 17)
        );
        assert_eq!(
            locate_duplicate_key("run: {}\nbroker: {}\nrun: {}\n"),
            at(3, 1)
        );
        // The same key in two mappings is no repeat.
        assert_eq!(locate_duplicate_key("a: {x: 1}\nb: {x: 1}\n"), None);
        assert_eq!(locate_duplicate_key(TEXT), None);
    }

    #[test]
    fn finds_scalar_values_and_keys() {
        assert_eq!(
            locate(TEXT, &p("broker.visibility_timeout"), Anchor::Value),
            at(3, 23)
        );
        assert_eq!(
            locate(TEXT, &p("broker.visibility_timeout"), Anchor::Key),
            at(3, 3)
        );
        assert_eq!(locate(TEXT, &p("budgets.dlq"), Anchor::Value), at(10, 17));
        assert_eq!(locate(TEXT, &p("name"), Anchor::Value), at(1, 7));
    }

    #[test]
    fn finds_list_elements_by_index() {
        assert_eq!(
            locate(TEXT, &p("provider.phases.0.to"), Anchor::Value),
            at(7, 23)
        );
        assert_eq!(
            locate(TEXT, &p("provider.phases.1.to"), Anchor::Value),
            at(9, 11)
        );
        assert_eq!(
            locate(TEXT, &p("provider.phases.1.from"), Anchor::Key),
            at(8, 7)
        );
    }

    #[test]
    fn a_collection_is_pointed_at_by_its_key() {
        assert_eq!(locate(TEXT, &p("broker"), Anchor::Value), at(2, 1));
        assert_eq!(locate(TEXT, &p("provider.phases"), Anchor::Value), at(6, 3));
    }

    #[test]
    fn a_missing_field_falls_back_to_its_nearest_ancestor() {
        assert_eq!(locate(TEXT, &p("broker.kind"), Anchor::Value), None);
        assert_eq!(
            locate_nearest(TEXT, &p("broker.kind"), Anchor::Value),
            Position { line: 2, column: 1 }
        );
        assert_eq!(
            locate(TEXT, &p("provider.phases.5.to"), Anchor::Value),
            None
        );
        assert_eq!(
            locate_nearest(TEXT, &p("run.duration"), Anchor::Value),
            Position { line: 1, column: 1 }
        );
        assert_eq!(
            locate_nearest("", &p("run.duration"), Anchor::Value),
            Position { line: 1, column: 1 }
        );
    }
}
