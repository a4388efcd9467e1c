//! A message's key, as the record keeps it: a default key (`msg-<n>`) is its number, written
//! out only when a report shows it; any other key is kept as written.

use std::borrow::Cow;
use std::fmt;

/// A message key. Two keys are equal when they read the same: `Key::from("msg-7")` is the
/// numbered key 7 (only the canonical spelling: `msg-07` is a named key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(Repr);

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Repr {
    Numbered(u32),
    Named(Box<str>),
}

impl Key {
    /// The default key of plan message `n`: `msg-<n>`.
    pub fn numbered(n: u32) -> Key {
        Key(Repr::Numbered(n))
    }

    /// The key as text.
    pub fn as_str(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Numbered(n) => Cow::Owned(numbered_text(*n)),
            Repr::Named(s) => Cow::Borrowed(s),
        }
    }

    /// True when the key reads `text`, without writing it out.
    pub fn is(&self, text: &str) -> bool {
        match &self.0 {
            Repr::Numbered(n) => numbered(text) == Some(*n),
            Repr::Named(s) => &**s == text,
        }
    }

    /// `n` when `text` is the default key `msg-<n>` (canonical spelling only).
    #[inline]
    pub fn number_of(text: &str) -> Option<u32> {
        numbered(text)
    }

    pub fn is_empty(&self) -> bool {
        matches!(&self.0, Repr::Named(s) if s.is_empty())
    }
}

/// The default key of plan message `n` written out, `msg-<n>`.
pub fn numbered_text(n: u32) -> String {
    NumberedText::new(n).as_str().to_string()
}

/// `msg-<n>` written on the stack, without the formatting machinery (a sim run writes one per
/// delivery).
pub struct NumberedText {
    buf: [u8; 14],
    len: usize,
}

impl NumberedText {
    pub fn new(n: u32) -> NumberedText {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(n).as_bytes();
        let mut buf = [0; 14];
        buf[..4].copy_from_slice(b"msg-");
        buf[4..4 + digits.len()].copy_from_slice(digits);
        NumberedText {
            buf,
            len: 4 + digits.len(),
        }
    }

    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes are `msg-` and the decimal digits itoa wrote, all ASCII.
        unsafe { std::str::from_utf8_unchecked(&self.buf[..self.len]) }
    }
}

/// `n` when `text` is the canonical `msg-<n>`.
#[inline]
fn numbered(text: &str) -> Option<u32> {
    let digits = text.strip_prefix("msg-")?;
    let n: u32 = digits.parse().ok()?;
    (digits.len() == n.checked_ilog10().unwrap_or(0) as usize + 1).then_some(n)
}

impl From<&str> for Key {
    fn from(text: &str) -> Key {
        match numbered(text) {
            Some(n) => Key::numbered(n),
            None => Key(Repr::Named(text.into())),
        }
    }
}

impl From<String> for Key {
    fn from(text: String) -> Key {
        match numbered(&text) {
            Some(n) => Key::numbered(n),
            None => Key(Repr::Named(text.into_boxed_str())),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Numbered(n) => write!(f, "msg-{n}"),
            Repr::Named(s) => f.write_str(s),
        }
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for Key {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_keys_are_numbers_and_read_as_written() {
        assert_eq!(Key::from("msg-17"), Key::numbered(17));
        assert_eq!(Key::numbered(17).to_string(), "msg-17");
        assert_eq!(Key::numbered(17).as_str(), "msg-17");
        assert!(Key::numbered(17).is("msg-17"));
        assert!(!Key::numbered(17).is("msg-017"));
        assert!(!Key::numbered(1).is("msg-10"));
        assert_eq!(Key::from(String::from("msg-0")), Key::numbered(0));
        assert_eq!(Key::from("msg-10"), Key::numbered(10));
        assert_eq!(Key::number_of("msg-10"), Some(10));
        assert_eq!(Key::number_of("msg-010"), None);
        for n in [0, 7, 10, 99, 4_294_967_295] {
            assert_eq!(numbered_text(n), format!("msg-{n}"));
        }
    }

    #[test]
    fn other_keys_are_kept_as_written() {
        // Not canonical (leading zero, sign, overflow, other prefix): kept as text.
        for text in ["msg-017", "msg-+1", "msg-4294967296", "order-1", "", "msg-"] {
            let k = Key::from(text);
            assert_eq!(k.to_string(), text);
            assert!(k.is(text));
            assert_ne!(k, Key::numbered(17));
        }
        assert!(Key::from("").is_empty());
        assert!(!Key::numbered(1).is_empty());
    }
}
