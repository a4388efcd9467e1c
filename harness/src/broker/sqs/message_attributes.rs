//! Message attributes: typed name/value pairs sent with a message, and their MD5 digest as SQS
//! computes it (so that SDKs which verify `MD5OfMessageAttributes` accept ours).

use std::collections::BTreeMap;

use md5::{Digest, Md5};

/// A message's attributes by name (sorted, as the digest needs).
pub type MessageAttributes = BTreeMap<String, AttributeValue>;

/// One attribute: its data type (`String`, `Number`, `Binary`, optionally `.custom`) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeValue {
    pub data_type: String,
    pub value: AttributeData,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeData {
    /// `StringValue` (for `String` and `Number` types).
    String(String),
    /// `BinaryValue`, decoded from base64.
    Binary(Vec<u8>),
}

impl AttributeValue {
    /// Bytes this attribute adds to the message size: name, type and value.
    pub fn size(&self, name: &str) -> usize {
        let value = match &self.value {
            AttributeData::String(s) => s.len(),
            AttributeData::Binary(b) => b.len(),
        };
        name.len() + self.data_type.len() + value
    }
}

/// Lower-case hex of the MD5 of `bytes` (`MD5OfMessageBody`).
pub fn md5_hex(bytes: &[u8]) -> String {
    hex(&Md5::digest(bytes))
}

/// `MD5OfMessageAttributes`: for each attribute in name order, the length-prefixed (4-byte big
/// endian) name, data type and value, with a transport byte (1 string, 2 binary) before the value.
/// `None` when there are no attributes.
pub fn md5_of_attributes(attributes: &MessageAttributes) -> Option<String> {
    if attributes.is_empty() {
        return None;
    }
    fn field(md5: &mut Md5, bytes: &[u8]) {
        md5.update((bytes.len() as u32).to_be_bytes());
        md5.update(bytes);
    }
    let mut md5 = Md5::new();
    for (name, v) in attributes {
        field(&mut md5, name.as_bytes());
        field(&mut md5, v.data_type.as_bytes());
        match &v.value {
            AttributeData::String(s) => {
                md5.update([1u8]);
                field(&mut md5, s.as_bytes());
            }
            AttributeData::Binary(b) => {
                md5.update([2u8]);
                field(&mut md5, b);
            }
        }
    }
    Some(hex(&md5.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Keeps the attributes a receive asked for: `All`, `.*`, exact names, or prefixes `foo.*`.
pub fn select(attributes: &MessageAttributes, wanted: &[String]) -> MessageAttributes {
    if wanted.is_empty() {
        return MessageAttributes::new();
    }
    attributes
        .iter()
        .filter(|(name, _)| {
            wanted.iter().any(|w| {
                w == "All"
                    || w == ".*"
                    || w == *name
                    || w.strip_suffix(".*")
                        .is_some_and(|p| name.starts_with(p) && name[p.len()..].starts_with('.'))
            })
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_of_body_is_the_plain_md5() {
        assert_eq!(md5_hex(b"hello"), "5d41402abc4b2a76b9719d911017c592");
    }

    #[test]
    fn attribute_digest_follows_the_sqs_layout() {
        let mut a = MessageAttributes::new();
        a.insert(
            "k".into(),
            AttributeValue {
                data_type: "String".into(),
                value: AttributeData::String("v".into()),
            },
        );
        let mut expect = Vec::new();
        for f in [&b"k"[..], b"String"] {
            expect.extend_from_slice(&(f.len() as u32).to_be_bytes());
            expect.extend_from_slice(f);
        }
        expect.push(1);
        expect.extend_from_slice(&1u32.to_be_bytes());
        expect.extend_from_slice(b"v");
        assert_eq!(md5_of_attributes(&a), Some(md5_hex(&expect)));
        assert_eq!(md5_of_attributes(&MessageAttributes::new()), None);
    }

    #[test]
    fn selection_by_name_all_and_prefix() {
        let mut a = MessageAttributes::new();
        for n in ["a", "trace.id", "trace.span", "tracex"] {
            a.insert(
                n.into(),
                AttributeValue {
                    data_type: "String".into(),
                    value: AttributeData::String(n.into()),
                },
            );
        }
        let names = |w: &[&str]| -> Vec<String> {
            let w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            select(&a, &w).into_keys().collect()
        };
        assert_eq!(names(&[]), Vec::<String>::new());
        assert_eq!(names(&["All"]).len(), 4);
        assert_eq!(names(&[".*"]).len(), 4);
        assert_eq!(names(&["a"]), vec!["a"]);
        assert_eq!(names(&["trace.*"]), vec!["trace.id", "trace.span"]);
    }
}
