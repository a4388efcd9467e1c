//! A problem with one field, before it is given a place: the field's path, what is wrong, and
//! whether the key or the value is at fault. [`super::document::Document`] turns it into a
//! [`super::ProfileError`] with `file:line:column` or the `--set` argument it came from.

use serde::de::DeserializeOwned;

use super::enum_words;
use super::locate::Anchor;
use super::path::FieldPath;

#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: FieldPath,
    pub message: String,
    pub anchor: Anchor,
}

impl Problem {
    /// A value that is not allowed.
    pub fn new(path: FieldPath, message: impl Into<String>) -> Problem {
        Problem {
            path,
            message: message.into(),
            anchor: Anchor::Value,
        }
    }

    /// A key that is not allowed where it stands.
    pub fn at_key(path: FieldPath, message: impl Into<String>) -> Problem {
        Problem {
            path,
            message: message.into(),
            anchor: Anchor::Key,
        }
    }

    /// A type error, unknown key or bad scalar found while reading `prefix`.
    pub fn from_serde(
        err: serde_path_to_error::Error<yaml_serde::Error>,
        prefix: &FieldPath,
    ) -> Problem {
        let mut path = prefix.clone();
        path.0.extend(FieldPath::from(err.path()).0);
        let message = plain_types(&err.into_inner().to_string());
        if message.starts_with("unknown field") {
            Problem::at_key(path, message)
        } else {
            Problem::new(path, message)
        }
    }
}

/// serde names the number types it expected (`expected u32`); say what they take instead.
pub fn plain_types(message: &str) -> String {
    const WORDS: [(&str, &str); 8] = [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number from 0 to 18446744073709551615"),
        ("usize", "a whole number from 0 to 18446744073709551615"),
        (
            "i64",
            "a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        ("f64", "a number"),
        ("f32", "a number"),
    ];
    let mut out = message.to_string();
    for (ty, words) in WORDS {
        let needle = format!("expected {ty}");
        let mut from = 0;
        while let Some(found) = out[from..].find(&needle) {
            let at = from + found;
            let end = at + needle.len();
            let whole_word = out[end..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if whole_word {
                let replacement = format!("expected {words}");
                out.replace_range(at..end, &replacement);
                from = at + replacement.len();
            } else {
                from = end;
            }
        }
    }
    out
}

/// Reads `value`, found at `at`, as a `T`; a problem names the exact field inside it.
pub fn read_value<T: DeserializeOwned>(
    value: &yaml_serde::Value,
    at: &FieldPath,
) -> Result<T, Problem> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().clone();
        let mut problem = Problem::from_serde(e, at);
        problem.message = enum_words::in_words::<T>(problem.message, value, &inner);
        problem
    })
}

#[cfg(test)]
mod tests {
    use super::plain_types;

    #[test]
    fn number_types_are_said_in_words() {
        assert_eq!(
            plain_types("invalid type: string \"three\", expected u32"),
            "invalid type: string \"three\", expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            plain_types("invalid value: integer `70000`, expected u16"),
            "invalid value: integer `70000`, expected a whole number from 0 to 65535"
        );
        assert_eq!(
            plain_types("invalid type: string \"x\", expected f64"),
            "invalid type: string \"x\", expected a number"
        );
        // Only the type's whole name is replaced.
        assert_eq!(plain_types("expected u325 things"), "expected u325 things");
        assert_eq!(
            plain_types("unknown field `x`, expected one of `a`"),
            "unknown field `x`, expected one of `a`"
        );
    }
}
