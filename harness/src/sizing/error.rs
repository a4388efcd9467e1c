//! What can go wrong in a sweep or a sizing, said so that the user can fix it, and the exit code
//! each deserves (README.md, "Exit codes": 2 bad usage, 3 a run could not complete).

use std::path::{Path, PathBuf};

use crate::profile::{Origin, ProfileError};
use crate::runner::RunError;
use crate::verdict::exit;

/// A sweep or a sizing that cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum SizingError {
    /// A `--vary` that is not `PATH=V1,V2,...`.
    #[error("--vary {arg}: {message}")]
    BadVary { arg: String, message: String },

    /// A `--vary` value the profile refuses (an unknown path, a value out of range).
    #[error("--vary {arg}: value `{value}`: {reason}")]
    BadValue {
        arg: String,
        value: String,
        reason: String,
    },

    /// A combination of varied values the profile refuses (each value alone is fine).
    #[error("sweep point {point}: {reason}")]
    BadPoint { point: String, reason: String },

    /// More points than a sweep runs.
    #[error(
        "the grid has {points} points ({shape}), more than the {max} a sweep runs: \
         vary fewer values or split the sweep"
    )]
    GridTooLarge {
        points: String,
        shape: String,
        max: usize,
    },

    /// A `--metric` the summary does not have.
    #[error("--metric {name}: not a metric of the summary; choose from: {choices}")]
    UnknownMetric { name: String, choices: String },

    /// A flag with a value out of range.
    #[error("--{flag} {value}: {message}")]
    BadFlag {
        flag: &'static str,
        value: String,
        message: String,
    },

    /// The profile (or a `--set`) is invalid.
    #[error("{0}")]
    Profile(#[from] ProfileError),

    /// `--latency-from` cannot be read.
    #[error("--latency-from {}: cannot read it: {source}", path.display())]
    LatencyUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },

    /// `--latency-from` is not an HDR histogram interval log, or holds no latency.
    #[error("--latency-from {}: {message}", path.display())]
    NotHdrLog { path: PathBuf, message: String },

    /// No handler finished in the run, so there is no latency to size from.
    #[error("{0}")]
    NoLatency(String),

    /// A sim run could not complete.
    #[error("a run could not complete: {0}")]
    Run(#[from] RunError),

    /// The profile cannot run in sim mode (its consumer or ingress is a program of the user's).
    #[error(
        "{file}: {command} runs the profile in sim mode, and this profile {why}, which only a \
         live run can run: {command} needs a sim profile (a built-in consumer.target, no \
         workload.ingress)"
    )]
    NeedsSim {
        command: &'static str,
        file: String,
        why: &'static str,
    },

    /// The output folder is not ackbench's, or cannot be created or written (checked before
    /// the runs).
    #[error("{0}")]
    Folder(#[from] crate::report::folder::FolderError),

    /// A file of the output folder cannot be written.
    #[error("cannot write {}: {message}", path.display())]
    Write { path: PathBuf, message: String },
}

impl SizingError {
    /// File `path` of the output folder could not be written; a symbolic link planted there
    /// ([`crate::report::no_follow`]) is bad input, like any folder ackbench will not write.
    pub fn cannot_write(path: &Path, e: std::io::Error) -> SizingError {
        if crate::report::no_follow::is_link(&e) {
            SizingError::Folder(crate::report::folder::FolderError::Link {
                path: path.to_path_buf(),
            })
        } else {
            SizingError::Write {
                path: path.to_path_buf(),
                message: e.to_string(),
            }
        }
    }

    /// Refuses a symbolic link where chart `stem` (its .png and .svg) goes in folder `out`.
    pub fn refuse_chart_links(out: &Path, stem: &str) -> Result<(), SizingError> {
        for ext in ["png", "svg"] {
            let path = out.join(format!("{stem}.{ext}"));
            crate::report::no_follow::refuse_link(&path)
                .map_err(|e| SizingError::cannot_write(&path, e))?;
        }
        Ok(())
    }

    /// The process exit code (README.md, "Exit codes").
    pub fn exit_code(&self) -> i32 {
        match self {
            SizingError::Run(_) | SizingError::Write { .. } => exit::RUN_FAILED,
            _ => exit::BAD_INPUT,
        }
    }
}

/// What a profile error says, without the `--set ...:` prefix when the override is ours (a
/// `--vary` value or a recommendation), so that the message can name its own origin.
pub fn reason(e: &ProfileError) -> String {
    match e {
        ProfileError::Invalid {
            origin: Origin::Override(_),
            field,
            message,
        } => format!("{field}: {message}"),
        ProfileError::Override { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// Refuses a profile that sweeps and sizings cannot simulate: one whose consumer is the
/// user's own program (`consumer.command`) or that publishes through an ingress service.
pub fn needs_sim(
    command: &'static str,
    file: &std::path::Path,
    scenario: &crate::profile::Scenario,
) -> Result<(), SizingError> {
    let why = if scenario.consumer.command.is_some() {
        "runs your own consumer program (consumer.command)"
    } else if scenario.workload.ingress.is_some() {
        "publishes through your ingress service (workload.ingress)"
    } else {
        return Ok(());
    };
    Err(SizingError::NeedsSim {
        command,
        file: file.display().to_string(),
        why,
    })
}
