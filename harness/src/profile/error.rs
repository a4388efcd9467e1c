//! What can be wrong with a profile, said so that the user can fix it.
//!
//! Every message starts with where the problem is: `file:line:column` (1-based) for the profile
//! text, or `--set PATH=VALUE` for an override; then the dotted field path, then what is allowed.

use std::fmt;
use std::path::PathBuf;

use super::path::FieldPath;

/// Where a problem comes from: a place in the profile file, or one `--set` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A position in the profile text, 1-based.
    File {
        file: String,
        line: usize,
        column: usize,
    },
    /// A `--set PATH=VALUE` argument, as given.
    Override(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { file, line, column } => write!(f, "{file}:{line}:{column}"),
            Origin::Override(arg) => write!(f, "--set {arg}"),
        }
    }
}

/// A profile that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The profile file cannot be read (missing, unreadable, not UTF-8).
    #[error("{}: cannot read the profile: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    /// The text is not valid YAML.
    #[error("{origin}: not valid YAML: {message}")]
    Syntax { origin: Origin, message: String },

    /// A `--set` argument that is not `PATH=VALUE`, or whose PATH cannot be set.
    #[error("--set {arg}: {message}")]
    Override { arg: String, message: String },

    /// A field whose value is not allowed: wrong type, unknown key, out of range, missing.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        origin: Origin,
        field: FieldPath,
        message: String,
    },
}

impl ProfileError {
    /// Where the problem is, when it has a place (for editors and tests).
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            ProfileError::Syntax { origin, .. } | ProfileError::Invalid { origin, .. } => {
                Some(origin)
            }
            ProfileError::Read { .. } | ProfileError::Override { .. } => None,
        }
    }
}
