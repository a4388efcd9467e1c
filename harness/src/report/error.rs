//! Why a report file could not be written or read back: every error names the file.

use std::io;
use std::path::PathBuf;

/// A report file that could not be written, read or drawn; the message names the file and, for
/// a file ackbench reads back, what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The report folder could not be created.
    #[error("cannot create the report folder {path}: {source}")]
    Folder { path: PathBuf, source: io::Error },
    /// A file of the report could not be written.
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    /// A symbolic link stands where a report file or sub-folder goes; it is not followed.
    #[error(
        "{path} is a symbolic link: ackbench writes its report only inside the report folder and \
         does not follow links out of it; remove the link or choose another folder with --out"
    )]
    Link { path: PathBuf },
    /// A recorded file that re-rendering needs is not in the folder.
    #[error(
        "{path} is missing: re-rendering reads the files `ackbench run` recorded \
         (run.json, summary.json, timeseries.csv, the .hlog latency logs, deliveries.csv)"
    )]
    Missing { path: PathBuf },
    /// A recorded file could not be read.
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    /// A recorded file was read but is not what ackbench writes.
    #[error("{path} is not a valid {what}: {message}")]
    Invalid {
        path: PathBuf,
        what: &'static str,
        message: String,
    },
    /// A chart could not be drawn.
    #[error("cannot draw {path}: {message}")]
    Chart { path: PathBuf, message: String },
}

impl ReportError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            ReportError::Folder { path, .. }
            | ReportError::Write { path, .. }
            | ReportError::Link { path }
            | ReportError::Missing { path }
            | ReportError::Read { path, .. }
            | ReportError::Invalid { path, .. }
            | ReportError::Chart { path, .. } => path,
        }
    }

    /// A write error on `path`; a symbolic link found there ([`super::no_follow`]) is told apart.
    pub(crate) fn write(path: PathBuf, source: io::Error) -> Self {
        if super::no_follow::is_link(&source) {
            ReportError::Link { path }
        } else {
            ReportError::Write { path, source }
        }
    }

    /// A sub-folder that could not be created; a symbolic link there is told apart.
    pub(crate) fn folder(path: PathBuf, source: io::Error) -> Self {
        if super::no_follow::is_link(&source) {
            ReportError::Link { path }
        } else {
            ReportError::Folder { path, source }
        }
    }

    /// Whether the error is bad input (a link planted in the folder) rather than a failed write.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, ReportError::Link { .. })
    }

    /// A read error, told apart from a file that is not there.
    pub(crate) fn read(path: PathBuf, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            ReportError::Missing { path }
        } else {
            ReportError::Read { path, source }
        }
    }

    pub(crate) fn invalid(path: PathBuf, what: &'static str, message: impl ToString) -> Self {
        ReportError::Invalid {
            path,
            what,
            message: message.to_string(),
        }
    }
}
