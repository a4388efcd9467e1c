//! Dotted field paths such as `provider.phases.0.to`: how errors name a field and how `--set`
//! addresses one. A list element is addressed by its 0-based index.

use std::fmt;

/// One step of a [`FieldPath`]: a mapping key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Where a field sits in a profile, from the top.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The top of the profile.
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// Parses `a.b.0.c` as written after `--set`: every segment is a key; the override code
    /// reads a numeric segment as an index where it meets a list.
    pub fn parse_dotted(text: &str) -> FieldPath {
        FieldPath(
            text.split('.')
                .map(|s| Segment::Key(s.to_string()))
                .collect(),
        )
    }

    /// This path with `key` appended.
    pub fn key(&self, key: &str) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Segment::Key(key.to_string()));
        p
    }

    /// This path with list index `i` appended.
    pub fn index(&self, i: usize) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Segment::Index(i));
        p
    }

    /// This path without its last segment (the root stays the root).
    pub fn parent(&self) -> FieldPath {
        let mut p = self.clone();
        p.0.pop();
        p
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// True when `self` is `other` or lies inside it. Keys and indices compare by their text,
    /// so `phases.0` as written after `--set` matches the first phase.
    pub fn starts_with(&self, other: &FieldPath) -> bool {
        other.0.len() <= self.0.len()
            && other
                .0
                .iter()
                .zip(&self.0)
                .all(|(a, b)| a.to_string() == b.to_string())
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(k) => f.write_str(k),
            Segment::Index(i) => write!(f, "{i}"),
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

impl From<&serde_path_to_error::Path> for FieldPath {
    fn from(path: &serde_path_to_error::Path) -> FieldPath {
        use serde_path_to_error::Segment as S;
        FieldPath(
            path.iter()
                .filter_map(|s| match s {
                    S::Seq { index } => Some(Segment::Index(*index)),
                    S::Map { key } => Some(Segment::Key(key.clone())),
                    S::Enum { variant } => Some(Segment::Key(variant.clone())),
                    S::Unknown => None,
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_dotted_with_indices() {
        let p = FieldPath::root()
            .key("provider")
            .key("phases")
            .index(0)
            .key("to");
        assert_eq!(p.to_string(), "provider.phases.0.to");
        assert_eq!(FieldPath::root().to_string(), "(top level)");
        assert_eq!(p.parent().to_string(), "provider.phases.0");
    }

    #[test]
    fn a_dotted_override_path_matches_indices_by_text() {
        let set = FieldPath::parse_dotted("provider.phases.0");
        let field = FieldPath::root()
            .key("provider")
            .key("phases")
            .index(0)
            .key("to");
        assert!(field.starts_with(&set));
        assert!(!set.starts_with(&field));
        assert!(!field.starts_with(&FieldPath::parse_dotted("provider.phases.1")));
    }
}
