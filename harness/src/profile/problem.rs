//! A problem with one field, before it is given a place: the field's path, what is wrong, and
//! whether the key or the value is at fault. [`super::document::Document`] turns it into a
//! [`super::ProfileError`] with `file:line:column` or the `--set` argument it came from.

use serde::de::DeserializeOwned;

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
        let message = err.into_inner().to_string();
        if message.starts_with("unknown field") {
            Problem::at_key(path, message)
        } else {
            Problem::new(path, message)
        }
    }
}

/// Reads `value`, found at `at`, as a `T`; a problem names the exact field inside it.
pub fn read_value<T: DeserializeOwned>(
    value: &yaml_serde::Value,
    at: &FieldPath,
) -> Result<T, Problem> {
    serde_path_to_error::deserialize(value).map_err(|e| Problem::from_serde(e, at))
}
