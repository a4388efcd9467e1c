//! A wrong-type value for a field that takes one of a list of words (`mode`, `broker.kind`,
//! `provider.effect_at`, `latency.dist`, every enum of the profile): said with the words the
//! field takes, never serde's internal "expected a Value::Tagged enum".
//!
//! The YAML reader says only that a list or a mapping is not an enum; it does not know the
//! enum's words. The words are learnt by reading the value again with a placeholder word at the
//! faulty field: serde then answers "unknown variant, expected `sim` or `live`".

use serde::de::DeserializeOwned;
use serde_path_to_error::{Path, Segment};
use yaml_serde::Value;

/// serde's words for a list or mapping given where an enum goes.
const INTERNAL: &str = "expected a Value::Tagged enum";

/// A word no enum of the profile has.
const PLACEHOLDER: &str = "\u{0}";

/// `message` (about the field at `path` inside `value`, read as a `T`) with serde's internal
/// enum words replaced by the words the field takes; other messages as they are.
pub fn in_words<T: DeserializeOwned>(message: String, value: &Value, path: &Path) -> String {
    let Some(at) = message.find(INTERNAL) else {
        return message;
    };
    let expected = words_of::<T>(value, path)
        .unwrap_or_else(|| "a single word, not a list or a mapping".to_string());
    format!(
        "{}expected {expected}{}",
        &message[..at],
        &message[at + INTERNAL.len()..]
    )
}

/// The words the enum field at `path` takes, as serde lists them (`` `sim` or `live` ``,
/// `` one of `a`, `b`, `c` ``).
fn words_of<T: DeserializeOwned>(value: &Value, path: &Path) -> Option<String> {
    let mut probe = value.clone();
    *field(&mut probe, path)? = Value::String(PLACEHOLDER.to_string());
    let err = serde_path_to_error::deserialize::<_, T>(&probe).err()?;
    let message = err.into_inner().to_string();
    let rest = message.strip_prefix(&format!("unknown variant `{PLACEHOLDER}`, expected "))?;
    Some(rest.to_string())
}

/// The value at `path` inside `value`.
fn field<'a>(value: &'a mut Value, path: &Path) -> Option<&'a mut Value> {
    let mut at = value;
    for segment in path.iter() {
        at = match (segment, at) {
            (Segment::Map { key }, Value::Mapping(m)) => m.get_mut(key.as_str())?,
            (Segment::Seq { index }, Value::Sequence(s)) => s.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Dist {
        Fixed,
        Uniform,
        LogNormal,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Latency {
        dist: Dist,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Phases {
        phases: Vec<Latency>,
    }

    fn error<T: DeserializeOwned + std::fmt::Debug>(yaml: &str) -> String {
        let value: Value = yaml_serde::from_str(yaml).unwrap();
        let err = serde_path_to_error::deserialize::<_, T>(&value).unwrap_err();
        let path = err.path().clone();
        in_words::<T>(err.into_inner().to_string(), &value, &path)
    }

    #[test]
    fn a_list_or_a_mapping_for_an_enum_names_its_words() {
        assert_eq!(
            error::<Latency>("dist: [1, 2]"),
            "invalid type: sequence, expected one of `fixed`, `uniform`, `log-normal`"
        );
        assert_eq!(
            error::<Phases>("phases: [{ dist: fixed }, { dist: { a: 1 } }]"),
            "invalid type: map, expected one of `fixed`, `uniform`, `log-normal`"
        );
    }

    #[test]
    fn other_messages_stay_as_they_are() {
        assert_eq!(
            error::<Latency>("dist: normal"),
            "unknown variant `normal`, expected one of `fixed`, `uniform`, `log-normal`"
        );
        // A path that leads nowhere in the value: the words are general, never serde's.
        let value: Value = yaml_serde::from_str("dist: [1]").unwrap();
        let err = serde_path_to_error::deserialize::<_, Latency>(&value).unwrap_err();
        let path = err.path().clone();
        let message = format!("invalid type: sequence, {INTERNAL}");
        assert_eq!(
            in_words::<Latency>(message, &Value::Null, &path),
            "invalid type: sequence, expected a single word, not a list or a mapping"
        );
    }
}
